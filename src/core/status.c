/* Status codes: messages, exit codes and the detail message of the last
 * failure; the stop request and the allocation counter hook that lower layers
 * read and upper layers set. */
#include <stdarg.h>
#include <stdio.h>
#include "tstep/status.h"

static const struct {
    const char *msg;
    int exit;
} status_table[] = {
#define TS_STATUS_ROW(code, exit, msg) {msg, exit},
    TS_STATUS_LIST(TS_STATUS_ROW)
#undef TS_STATUS_ROW
};

static _Thread_local char detail[1024];

const char *ts_status_message(int status)
{
    if (status < 0 || status >= TS_STATUS_COUNT)
        return "unknown status";
    return status_table[status].msg;
}

int ts_status_exit_code(int status)
{
    if (status < 0 || status >= TS_STATUS_COUNT)
        return 1;
    return status_table[status].exit;
}

int ts_error(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return status;
}

const char *ts_error_detail(void) { return detail; }

void ts_error_clear(void) { detail[0] = '\0'; }

volatile sig_atomic_t ts_stop_signal = 0;

static int stop_held;

int ts_stop_check(const char *where)
{
    if (!ts_stop_signal || stop_held)
        return TS_OK;
    return ts_error(TS_ERR_INTERRUPTED, "%s: stopped by signal %d", where, (int)ts_stop_signal);
}

void ts_stop_hold(int on) { stop_held = on; }

static ts_alloc_counter alloc_counter;

void ts_alloc_counter_install(const ts_alloc_counter *counter)
{
    alloc_counter = counter ? *counter : (ts_alloc_counter){0};
}

const ts_alloc_counter *ts_alloc_counter_installed(void)
{
    return alloc_counter.arm && alloc_counter.count ? &alloc_counter : NULL;
}

static void (*alloc_failed_hook)(size_t size);

void ts_alloc_failed_hook_set(void (*hook)(size_t size)) { alloc_failed_hook = hook; }

void ts_alloc_failed(size_t size)
{
    if (alloc_failed_hook)
        alloc_failed_hook(size);
}

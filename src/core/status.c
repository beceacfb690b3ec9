/* Status codes: messages, exit codes and the detail message of the last
 * failure; the stop request and the allocation counter hook that lower layers
 * read and upper layers set. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "tstep/status.h"

static const struct {
    const char *msg;
    int exit;
} status_table[] = {
#define TS_STATUS_ROW(code, exit, msg) {msg, exit},
    TS_STATUS_LIST(TS_STATUS_ROW)
#undef TS_STATUS_ROW
};

/* The detail message, one a thread: the thread that loaded the library
 * (the program's main thread) has a static one, any other thread a buffer
 * of its own from its first ts_error, freed when it ends.  Not _Thread_local:
 * a thread-local object in a shared library is reached through
 * __tls_get_addr, which would make the dynamic loader a NEEDED of
 * libtstep.so besides libc and libm. */
#define DETAIL_SIZE 1024
static char main_detail[DETAIL_SIZE];
static pthread_t main_thread;
static pthread_key_t detail_key;
static pthread_once_t detail_once = PTHREAD_ONCE_INIT;

__attribute__((constructor)) static void detail_init(void) { main_thread = pthread_self(); }

static void detail_key_make(void) { pthread_key_create(&detail_key, free); }

/* this thread's buffer; NULL when it has none and make is 0 (or no memory) */
static char *detail_buffer(int make)
{
    if (pthread_equal(pthread_self(), main_thread))
        return main_detail;
    pthread_once(&detail_once, detail_key_make);
    char *d = pthread_getspecific(detail_key);
    if (!d && make && (d = calloc(1, DETAIL_SIZE)) && pthread_setspecific(detail_key, d)) {
        free(d);
        d = NULL;
    }
    return d;
}

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
    char *d = detail_buffer(1);
    if (d) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d, DETAIL_SIZE, fmt, ap);
        va_end(ap);
    }
    return status;
}

const char *ts_error_detail(void)
{
    const char *d = detail_buffer(0);
    return d ? d : "";
}

void ts_error_clear(void)
{
    char *d = detail_buffer(0);
    if (d)
        d[0] = '\0';
}

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

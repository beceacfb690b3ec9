/* Status codes: messages, exit codes and the detail message of the last failure. */
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

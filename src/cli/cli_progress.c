/* Progress line on standard error (see cli_progress.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli_progress.h"

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_init(cli_progress *p, const char *label)
{
    const char *env = getenv("TSTEP_PROGRESS");
    int always = env && strcmp(env, "always") == 0;
    p->enabled = always || (isatty(STDERR_FILENO) && !(env && strcmp(env, "0") == 0));
    p->shown = 0;
    p->start = p->enabled ? cli_now() : 0.0;
    p->delay = always ? 0.0 : 0.5;
    p->last = p->start - 1.0;
    p->label = label;
}

void cli_progress_update(cli_progress *p, double frac, const char *fmt, ...)
{
    if (!p->enabled)
        return;
    double now = cli_now();
    if (now - p->start < p->delay || now - p->last < 0.1)
        return;
    p->last = now;
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (frac >= 0.0)
        fprintf(stderr, "\r%s: %3.0f%% %s\033[K", p->label, 100.0 * frac, msg);
    else
        fprintf(stderr, "\r%s: %s\033[K", p->label, msg);
    fflush(stderr);
    p->shown = 1;
}

void cli_progress_done(cli_progress *p)
{
    if (p->shown)
        fputs("\r\033[K", stderr);
    p->shown = 0;
}

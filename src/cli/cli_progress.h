/* A one-line progress display on standard error for long commands.
 *
 * Shown only when standard error is a terminal (and TSTEP_PROGRESS is not
 * "0"), and only once the work has taken longer than half a second, so short
 * commands and redirected output stay clean.  TSTEP_PROGRESS=always shows
 * it anyway, from the start (for tests and logs that want it).  Redrawn at most ten times a
 * second with a carriage return; cli_progress_done erases it. */
#ifndef TSTEP_CLI_PROGRESS_H
#define TSTEP_CLI_PROGRESS_H

typedef struct {
    int enabled;   /* standard error is a terminal */
    int shown;     /* something is on the line now */
    double start;  /* monotonic seconds at init */
    double delay;  /* seconds of work before the line first shows */
    double last;   /* when the line was last drawn */
    const char *label;
} cli_progress;

/* Monotonic wall-clock seconds. */
double cli_now(void);

void cli_progress_init(cli_progress *p, const char *label);
/* frac in [0, 1] (or negative for unknown); the message follows the label. */
void cli_progress_update(cli_progress *p, double frac, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void cli_progress_done(cli_progress *p);

#endif

/* run --error FILE: the error of a run against time, against the system's
 * exact solution or a computed reference (tstep/reference.h). */
#ifndef TSTEP_CLI_ERROR_H
#define TSTEP_CLI_ERROR_H

#include "tstep/run.h"

typedef struct cli_error_log cli_error_log;

/* Open `path` (CSV with a header row when it ends in .csv, else dat) for a
 * run (cli_error_run: `sys`, made from stype and p, with steps of dt).  The reference is
 * the exact solution where the system has one, else rk4 at steps h, h/2,
 * h/4 with h = dt / K, K = ceil(dt |lambda| / CLI_ERROR_REF_HL) (|lambda|
 * the stiffest mode's rate at the initial state), so every output time is
 * on its grid.  Returns 0 or an exit code after printing why. */
#define CLI_ERROR_REF_HL 0.05
typedef struct {
    const ts_system_type *stype; /* the system's type and parameters, */
    const ts_params *p;          /* for a reference made the same way */
    const ts_system *sys;        /* the system the run steps */
    double dt;                   /* its step */
} cli_error_run;
int cli_error_open(const char *cmd, const char *path, const cli_error_run *run,
                   cli_error_log **out);
/* One row at step `step`, time t (a run observer's arguments).  Status. */
int cli_error_row(cli_error_log *e, ts_system *sys, long step, double t);
/* Write out what is buffered (a plugin's run flushes every row). */
void cli_error_flush(cli_error_log *e);
/* Close (accepts NULL); 0 or an exit code. */
int cli_error_close(const char *cmd, cli_error_log *e);

#endif

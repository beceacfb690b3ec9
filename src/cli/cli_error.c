/* run --error FILE: one row per output step of
 *     t, step, error_x, [error_v,] error, reference_error
 * error_x = |x - x_ref|_inf, error_v = |v - v_ref|_inf (second-order
 * systems), error = the larger (the max norm over Y = [x; v]); all absolute.
 * reference_error: 0 against the exact solution, else the Richardson
 * estimate of the reference's own error in the same norm as `error`
 * (tstep/reference.h).  See src/cli/cli_error.h for the reference's step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_error.h"
#include "tstep/linalg.h"
#include "tstep/stability.h"

struct cli_error_log {
    FILE *f;
    const char *path;
    int csv;
    ts_reference *ref; /* NULL: the exact solution */
    long per_step;     /* reference steps per run step */
    double *y, *yref;  /* the run's and the reference's Y */
    size_t n, m;
};

void cli_error_flush(cli_error_log *e)
{
    fflush(e->f);
}

int cli_error_close(const char *cmd, cli_error_log *e)
{
    if (!e)
        return 0;
    int rc = e->f ? cli_close_output(cmd, e->path, e->f) : 0;
    ts_reference_free(e->ref);
    free(e->y);
    free(e->yref);
    free(e);
    return rc;
}

int cli_error_open(const char *cmd, const char *path, const cli_error_run *run,
                   cli_error_log **out)
{
    const ts_system *sys = run->sys;
    double dt = run->dt;
    cli_error_log *e = calloc(1, sizeof *e);
    *out = NULL;
    if (!e)
        return cli_fail(cmd, ts_error(TS_ERR_NOMEM, "--error"));
    e->path = path;
    e->n = sys->n;
    e->m = ts_system_ydim(sys);
    size_t len = strlen(path);
    e->csv = len >= 4 && strcmp(path + len - 4, ".csv") == 0;
    int s = TS_OK;
    if (!(e->y = malloc(e->m * sizeof *e->y)) || !(e->yref = malloc(e->m * sizeof *e->yref)))
        s = ts_error(TS_ERR_NOMEM, "--error");
    double rate = 0.0;
    if (!s && !sys->ops->exact) {
        ts_system *probe;
        ts_stiff_mode mode;
        if (!(s = ts_system_new(run->stype, run->p, &probe))) {
            if (!ts_stiffest_mode(probe, &mode))
                rate = hypot(mode.re, mode.im);
            ts_system_free(probe);
        }
        double k = ceil(dt * rate / CLI_ERROR_REF_HL);
        e->per_step = k < 1.0 ? 1 : k > 1e6 ? 1000000 : (long)k;
        ts_solver_options tight = ts_default_solver_options();
        tight.newton_tol = 1e-13, tight.cg_tol = 1e-14;
        if (!s)
            s = ts_reference_new(run->stype, run->p, NULL, &tight, dt / (double)e->per_step,
                                 &e->ref);
    }
    if (s) {
        int rc = cli_fail(cmd, s);
        cli_error_close(cmd, e);
        return rc;
    }
    int rc = cli_open_output(cmd, path, &e->f);
    if (rc) {
        cli_error_close(cmd, e);
        return rc;
    }
    const char *sep = e->csv ? "," : " ";
    if (!e->csv) {
        if (e->ref)
            fprintf(e->f, "# reference: %s at dt = %.6g, %.6g and %.6g (%ld, %ld and %ld steps per "
                          "step of the run; |lambda| = %.6g), reference_error its Richardson "
                          "estimate\n",
                    ts_reference_method(e->ref)->name, dt / (double)e->per_step,
                    dt / (double)e->per_step / 2, dt / (double)e->per_step / 4, e->per_step,
                    2 * e->per_step, 4 * e->per_step, rate);
        else
            fputs("# reference: the exact solution\n", e->f);
    }
    fprintf(e->f, "%st%sstep%serror_x%s%serror%sreference_error\n", e->csv ? "" : "# ", sep, sep,
            sep, sys->order == 2 ? (e->csv ? "error_v," : "error_v ") : "", sep);
    *out = e;
    return 0;
}

int cli_error_row(cli_error_log *e, ts_system *sys, long step, double t)
{
    double ref_err = 0.0;
    int s;
    if (e->ref) {
        if ((s = ts_reference_advance(e->ref, step * e->per_step)))
            return s;
        ts_vec_copy(e->m, ts_reference_state(e->ref), e->yref);
        ts_reference_estimate est;
        ts_reference_estimate_error(e->ref, 1.0, &est); /* the state, unweighted */
        ref_err = est.error;
    } else if ((s = ts_system_exact_y(sys, t, e->yref))) {
        return s;
    }
    ts_system_get_y(sys, e->y);
    double ex = ts_vec_dist_inf(e->n, e->y, e->yref);
    double ev = e->m > e->n ? ts_vec_dist_inf(e->m - e->n, e->y + e->n, e->yref + e->n) : 0.0;
    const char *sep = e->csv ? "," : " ";
    fprintf(e->f, "%.15g%s%ld%s%.6e", t, sep, step, sep, ex);
    if (e->m > e->n)
        fprintf(e->f, "%s%.6e", sep, ev);
    fprintf(e->f, "%s%.6e%s%.3e\n", sep, fmax(ex, ev), sep, ref_err);
    return ferror(e->f) ? ts_error(TS_ERR_IO, "writing --error") : TS_OK;
}

/* Convergence sweep and observed order.
 *
 * Each run ends exactly at t_end (dt adjusted to t_end / steps); the error
 * is the max norm of Y(t_end) - Y_exact(t_end).  A point is left out of the
 * order fit when the run failed or its relative error exceeds 1 ("unstable":
 * nothing of the solution is left), or when the error is within
 * 100 * steps * eps of the solution scale ("round-off": rounding accumulated
 * over the steps swamps the truncation error).
 *
 * Cost: each point records the stepper's statistics and the wall-clock time
 * of the stepping alone.  A run shorter than TS_SWEEP_MIN_SECONDS is
 * repeated from the same initial state (up to TS_SWEEP_MAX_REPEATS times)
 * and the mean taken, so fast runs are timed above the clock's noise. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include "tstep/linalg.h"
#include "tstep/run.h"

#define TS_SWEEP_MIN_SECONDS 2e-3
#define TS_SWEEP_MAX_REPEATS 200

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int sweep_one(const ts_system_type *stype, const ts_params *params,
                     const ts_stepper_type *type, const ts_solver_options *opt, double t_end,
                     ts_sweep_point *pt)
{
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    double *exact = NULL;
    int s = ts_system_new(stype, params, &sys);
    if (s)
        return s;
    size_t m = ts_system_ydim(sys);
    double scale = fmax(1.0, fmax(ts_vec_norm_inf(sys->n, sys->x),
                                  sys->v ? ts_vec_norm_inf(sys->n, sys->v) : 0.0));
    exact = malloc(2 * m * sizeof *exact);
    if (!exact) {
        s = ts_error(TS_ERR_NOMEM, "sweep");
        goto done;
    }
    if ((s = ts_system_exact_y(sys, t_end, exact)))
        goto done;
    if ((s = ts_stepper_new(type, sys, opt, &st)))
        goto done;
    ts_run_options ro = ts_default_run_options();
    ro.dt = pt->dt;
    ro.steps = pt->steps;
    ts_system_get_y(sys, exact + m); /* the initial state, for repeats */
    double t0 = wall_seconds();
    int runs = 1;
    pt->status = ts_run(sys, st, &ro, NULL, NULL, NULL);
    pt->stats = st->total;
    while (!pt->status && wall_seconds() - t0 < TS_SWEEP_MIN_SECONDS &&
           runs < TS_SWEEP_MAX_REPEATS) {
        ts_system_set_y(sys, exact + m); /* deterministic: the same run again */
        runs++;
        if (ts_run(sys, st, &ro, NULL, NULL, NULL) != TS_OK)
            break;
    }
    pt->seconds = (wall_seconds() - t0) / runs;
    ts_system_get_y(sys, exact + m);
    pt->error = pt->status ? INFINITY : ts_vec_dist_inf(m, exact, exact + m);
    scale = fmax(scale, ts_vec_norm_inf(m, exact));
    if (pt->status || !(pt->error <= scale))
        pt->excluded = 2;
    else if (pt->error <= 100.0 * (double)pt->steps * DBL_EPSILON * scale)
        pt->excluded = 1;
    else
        pt->excluded = 0;
done:
    free(exact);
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

int ts_sweep(const ts_system_type *stype, const ts_params *params, const ts_stepper_type *type,
             const ts_solver_options *opt, double dt_min, double dt_max, int levels,
             double t_end, ts_sweep_point *points)
{
    for (int i = 0; i < levels; i++) {
        double frac = levels > 1 ? (double)i / (levels - 1) : 0.0;
        double dt = dt_max * pow(dt_min / dt_max, frac);
        ts_sweep_point *pt = &points[i];
        pt->steps = ts_steps_for(t_end, dt);
        pt->dt = t_end / (double)pt->steps;
        int s = sweep_one(stype, params, type, opt, t_end, pt);
        if (!s && pt->status == TS_ERR_INTERRUPTED)
            s = pt->status; /* ts_stop_signal: the sweep is abandoned */
        if (s)
            return s;
    }
    return TS_OK;
}

double ts_observed_order(const ts_sweep_point *points, int n, int *used)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (points[i].excluded || !(points[i].error > 0.0))
            continue;
        double x = log(points[i].dt), y = log(points[i].error);
        sx += x, sy += y, sxx += x * x, sxy += x * y;
        k++;
    }
    if (used)
        *used = k;
    if (k < 2)
        return NAN;
    double d = k * sxx - sx * sx;
    return d > 0.0 ? (k * sxy - sx * sy) / d : NAN;
}

/* Convergence sweep and observed order.
 *
 * Each run ends exactly at t_end (dt adjusted to t_end / steps).  The error
 * is the weighted max norm, absolute, of Y - Y_ref over Y = [x; v]:
 * max(|x - x_ref|, w |v - v_ref|) (tstep/reference.h), w = 1/|lambda| by
 * default (TS_NORM_SCALED: the whole state, velocities times the stiffest
 * mode's time scale, so both parts are lengths), 1 (TS_NORM_STATE) or 0
 * (TS_NORM_POSITIONS), where the reference is the system's exact solution
 * or a computed one.  The order of a method is that of the whole state; a
 * single component can pass near a zero of its leading error term at t_end
 * (bdf2's x on the damped oscillator at t = 1), and with w = 1 the stiff
 * modes' velocities carry rounding amplified by their frequency
 * (docs/sweep.md).  The solution's size, scale = max(|Y(0)|, |Y_ref(t_end)|)
 * in the same norm, sets the two relative rules.  A point is left out of the order fit when:
 *   unstable:  the run failed, or error > scale (relative error above 1:
 *              nothing of the solution is left);
 *   round-off: error <= TS_ROUNDOFF_FACTOR * steps * eps * scale (rounding
 *              accumulated over the steps swamps the truncation error;
 *              relative to the solution's size, so a tiny solution, x0 =
 *              1e-12, is measured like any other);
 *   reference: error <= TS_SWEEP_REFERENCE_FACTOR * the reference's
 *              estimated error (the yardstick is not fine enough there).
 *
 * Cost: each point records the stepper's statistics and the wall-clock time
 * of the stepping alone.  A run shorter than TS_SWEEP_MIN_SECONDS is
 * repeated from the same initial state (up to TS_SWEEP_MAX_REPEATS times)
 * and the mean taken, so fast runs are timed above the clock's noise. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tstep/linalg.h"
#include "tstep/run.h"
#include "tstep/stability.h"

#define TS_SWEEP_MIN_SECONDS 2e-3
#define TS_SWEEP_MAX_REPEATS 200

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

ts_sweep_reference_options ts_default_sweep_reference_options(void)
{
    return (ts_sweep_reference_options){.computed = 0, .norm = TS_NORM_SCALED,
                                        .method = NULL, .dt = 0.0,
                                        .target = INFINITY, .max_halvings = 10};
}

void ts_sweep_reference_release(ts_sweep_reference *ref)
{
    if (ref) {
        free(ref->y);
        ref->y = NULL;
    }
}

static int exact_reference(ts_system *sys, double t_end, ts_sweep_reference *ref)
{
    size_t m = ts_system_ydim(sys);
    if (!(ref->y = malloc(2 * m * sizeof *ref->y)))
        return ts_error(TS_ERR_NOMEM, "sweep reference");
    ts_system_get_y(sys, ref->y + m); /* Y(0), for the scale */
    double y0 = ts_error_dist(ref->n, m, ref->weight, ref->y + m, NULL);
    int s = ts_system_exact_y(sys, t_end, ref->y);
    ref->scale = fmax(y0, ts_error_dist(ref->n, m, ref->weight, ref->y, NULL));
    return s;
}

/* rk4 (or opt->method) at h, h/2, h/4 with h = t_end / round(t_end / dt),
 * halving h while a run fails, the Richardson estimate is unresolved, or it
 * is above opt->target; the coarsest step that passes is kept, since a finer
 * one only adds rounding. */
static int computed_reference(const ts_system_type *stype, const ts_params *params,
                              double t_end, const ts_sweep_reference_options *opt,
                              ts_sweep_reference *ref)
{
    ts_solver_options tight = ts_default_solver_options();
    tight.newton_tol = 1e-13, tight.cg_tol = 1e-14; /* an implicit method's own error */
    double dt = opt->dt > 0.0 ? opt->dt : t_end / 1000.0;
    int s = TS_OK;
    char why[160] = "";
    for (int k = 0; k <= opt->max_halvings; k++, dt *= 0.5) {
        long n = ts_steps_for(t_end, dt);
        ts_reference *r;
        if ((s = ts_reference_new(stype, params, opt->method, &tight, t_end / (double)n, &r)))
            return s;
        s = ts_reference_advance(r, n);
        if (s == TS_ERR_NOMEM || s == TS_ERR_INPUT || s == TS_ERR_UNSUPPORTED ||
            s == TS_ERR_INTERRUPTED) {
            ts_reference_free(r);
            return s;
        }
        ts_reference_estimate e;
        int ok = 0;
        if (s) {
            snprintf(why, sizeof why, "%s at dt = %g", ts_status_message(s), t_end / (double)n);
        } else {
            ts_reference_estimate_error(r, ref->weight, &e);
            ok = e.verdict == TS_REF_ROUNDOFF ||
                 (e.verdict == TS_REF_ASYMPTOTIC && !(e.error > opt->target * e.scale));
            if (e.verdict == TS_REF_UNRESOLVED)
                snprintf(why, sizeof why, "Richardson ratio %.3g at dt = %g", e.ratio,
                         t_end / (double)n);
            else if (!ok)
                snprintf(why, sizeof why, "estimated error %.3g above %.3g at dt = %g",
                         e.error, opt->target * e.scale, t_end / (double)n);
        }
        if (ok) {
            if (!(ref->y = malloc(ref->m * sizeof *ref->y))) {
                ts_reference_free(r);
                return ts_error(TS_ERR_NOMEM, "sweep reference");
            }
            ts_vec_copy(ref->m, ts_reference_state(r), ref->y);
            ref->method = ts_reference_method(r);
            ref->dt = 0.25 * ts_reference_step(r);
            ref->steps = 4 * n;
            ref->halvings = k;
            ref->ratio = e.ratio;
            ref->verdict = (int)e.verdict;
            ref->error = e.error;
            ref->scale = e.scale;
            ts_reference_free(r);
            return TS_OK;
        }
        ts_reference_free(r);
    }
    return ts_error(TS_ERR_REJECTED,
                    "no reference solution for '%s' to t = %g: %s after %d halvings of the "
                    "step (the solution may not be smooth: collisions, strain limiting)",
                    stype->name, t_end, why, opt->max_halvings);
}

ts_sweep_reference_options ts_sweep_reference_options_for(double dt_min, double t_end)
{
    ts_sweep_reference_options o = ts_default_sweep_reference_options();
    o.dt = dt_min;
    o.target = TS_ROUNDOFF_FACTOR / TS_SWEEP_REFERENCE_FACTOR * (t_end / dt_min) * DBL_EPSILON;
    return o;
}

int ts_sweep_reference_compute(const ts_system_type *stype, const ts_params *params,
                               double t_end, const ts_sweep_reference_options *opt,
                               ts_sweep_reference *ref)
{
    ts_sweep_reference_options defaults = ts_default_sweep_reference_options();
    if (!opt)
        opt = &defaults;
    *ref = (ts_sweep_reference){.t_end = t_end, .norm = opt->norm};
    if (!(t_end > 0.0))
        return ts_error(TS_ERR_INPUT, "sweep reference: t_end %g must be > 0", t_end);
    ts_system *sys;
    int s = ts_system_new(stype, params, &sys);
    if (s)
        return s;
    ref->m = ts_system_ydim(sys);
    ref->n = sys->n;
    if (opt->norm == TS_NORM_SCALED && ref->m > ref->n &&
        (s = ts_sweep_stiffness(stype, params, &ref->rate))) {
        ts_system_free(sys);
        return s;
    }
    ref->weight = ts_error_norm_weight(opt->norm, ref->rate);
    int exact = sys->ops->exact && !opt->computed;
    if (exact)
        s = exact_reference(sys, t_end, ref);
    ts_system_free(sys);
    if (!exact) {
        ref->computed = 1;
        s = computed_reference(stype, params, t_end, opt, ref);
    }
    if (s)
        ts_sweep_reference_release(ref);
    return s;
}

/* One run of the sweep at pt->dt, pt->steps (pt->tol > 0: under error
 * control), measured against ref into pt. */
static int sweep_one(const ts_sweep_request *rq, const ts_sweep_reference *ref, ts_sweep_point *pt)
{
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    double *y = NULL;
    int s = ts_system_new(rq->stype, rq->params, &sys);
    if (s)
        return s;
    size_t m = ts_system_ydim(sys);
    if (m != ref->m) {
        s = ts_error(TS_ERR_INPUT, "sweep: the reference has %zu components, the system %zu",
                     ref->m, m);
        goto done;
    }
    y = malloc(2 * m * sizeof *y);
    if (!y) {
        s = ts_error(TS_ERR_NOMEM, "sweep");
        goto done;
    }
    if ((s = ts_stepper_new(rq->type, sys, rq->opt, &st)))
        goto done;
    ts_run_options ro = ts_default_run_options();
    ro.dt = pt->dt;
    ro.steps = pt->steps;
    if (pt->tol > 0.0) { /* error control: one output interval, steps chosen inside */
        ro.rtol = ro.atol = pt->tol;
        ro.dt = ref->t_end;
        ro.steps = 1;
    }
    ts_system_get_y(sys, y + m); /* the initial state, for repeats */
    double t0 = wall_seconds();
    int runs = 1;
    pt->status = ts_run(sys, st, &ro, NULL, NULL, NULL);
    pt->stats = st->total;
    ts_system_get_y(sys, y);
    while (!pt->status && wall_seconds() - t0 < TS_SWEEP_MIN_SECONDS &&
           runs < TS_SWEEP_MAX_REPEATS) {
        ts_system_set_y(sys, y + m); /* deterministic: the same run again */
        runs++;
        if (ts_run(sys, st, &ro, NULL, NULL, NULL) != TS_OK)
            break;
    }
    pt->seconds = (wall_seconds() - t0) / runs;
    if (pt->tol > 0.0) { /* the steps error control took; no mean step short of T */
        pt->steps = pt->stats.accepted;
        pt->dt = pt->status || pt->steps == 0 ? NAN : ref->t_end / (double)pt->steps;
    }
    pt->error = pt->status ? INFINITY : ts_error_dist(ref->n, m, ref->weight, y, ref->y);
    double scale = ref->scale > 0.0 ? ref->scale : DBL_MIN;
    if (pt->status || !(pt->error <= scale))
        pt->excluded = TS_SWEEP_UNSTABLE;
    else if (pt->error <= TS_ROUNDOFF_FACTOR * (double)pt->steps * DBL_EPSILON * scale)
        pt->excluded = TS_SWEEP_ROUNDOFF;
    else if (pt->error <= TS_SWEEP_REFERENCE_FACTOR * ref->error)
        pt->excluded = TS_SWEEP_REFERENCE;
    else
        pt->excluded = TS_SWEEP_USED;
done:
    free(y);
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

int ts_sweep_tolerances(const ts_sweep_request *rq, const ts_sweep_reference *ref,
                        ts_sweep_point *points)
{
    if (!(rq->type->flags & TS_ADAPTIVE))
        return ts_error(TS_ERR_UNSUPPORTED, "stepper '%s' has no error estimate: no tolerance "
                                            "mode", rq->type->name);
    int levels = rq->levels;
    for (int i = 0; i < levels; i++) {
        double frac = levels > 1 ? (double)i / (levels - 1) : 0.0;
        ts_sweep_point *pt = &points[i];
        *pt = (ts_sweep_point){0};
        pt->tol = rq->tol_max * pow(rq->tol_min / rq->tol_max, frac);
        pt->steps = 1;
        pt->dt = ref->t_end;
        int s = sweep_one(rq, ref, pt);
        if (s)
            return s;
    }
    return TS_OK;
}

double ts_tolerance_slope(const ts_sweep_point *points, int n, int *used)
{
    ts_sweep_point q[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) {
        q[i] = points[i];
        q[i].dt = points[i].tol; /* the same fit, against the tolerance */
    }
    return ts_observed_order(q, n, used);
}

int ts_sweep_against(const ts_sweep_request *rq, const ts_sweep_reference *ref,
                     ts_sweep_point *points)
{
    int levels = rq->levels;
    for (int i = 0; i < levels; i++) {
        double frac = levels > 1 ? (double)i / (levels - 1) : 0.0;
        double dt = rq->dt_max * pow(rq->dt_min / rq->dt_max, frac);
        ts_sweep_point *pt = &points[i];
        long steps = ts_steps_for(ref->t_end, dt);
        if (i > 0 && steps == points[i - 1].steps) {
            *pt = points[i - 1]; /* the same run: counted once */
            pt->excluded = TS_SWEEP_REPEAT;
            continue;
        }
        *pt = (ts_sweep_point){0};
        pt->steps = steps;
        pt->dt = ref->t_end / (double)pt->steps;
        int s = sweep_one(rq, ref, pt);
        if (!s && pt->status == TS_ERR_INTERRUPTED)
            s = pt->status; /* ts_stop_signal: the sweep is abandoned */
        if (s)
            return s;
    }
    return TS_OK;
}

int ts_sweep(const ts_sweep_request *rq, double t_end, ts_sweep_point *points)
{
    ts_sweep_reference ref;
    ts_sweep_reference_options ro = ts_sweep_reference_options_for(rq->dt_min, t_end);
    int s = ts_sweep_reference_compute(rq->stype, rq->params, t_end, &ro, &ref);
    if (!s)
        s = ts_sweep_against(rq, &ref, points);
    ts_sweep_reference_release(&ref);
    return s;
}

int ts_sweep_stiffness(const ts_system_type *stype, const ts_params *params, double *rate)
{
    ts_system *sys;
    int s = ts_system_new(stype, params, &sys);
    if (s)
        return s;
    ts_stiff_mode mode;
    s = ts_stiffest_mode(sys, &mode);
    ts_system_free(sys);
    *rate = s ? 0.0 : hypot(mode.re, mode.im);
    return s;
}

double ts_sweep_default_t_end(double rate)
{
    return rate > 0.0 ? fmin(1.0, TS_SWEEP_RATE_TIMES / rate) : 1.0;
}

void ts_sweep_default_dt(double rate, double t_end, int order, double *dt_min, double *dt_max)
{
    static const double c[] = {0.1, 0.2, 0.35, 0.5, 1.0};
    int k = order < 1 ? 0 : order > 5 ? 4 : order - 1;
    *dt_max = rate > 0.0 ? fmin(0.1 * t_end, c[k] / rate) : 0.1 * t_end;
    *dt_min = *dt_max / (order >= 5 ? TS_SWEEP_RANGE_RATIO_5 : TS_SWEEP_RANGE_RATIO);
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

/* The reliability of an embedded error estimate: at a step size h, one step
 * of an adaptive stepper (TS_ADAPTIVE) from the system's initial state, its
 * estimate against the true local error of that step.
 *
 *   estimated  the stepper's estimate in the RMS norm with atol = 1,
 *              rtol = 0: sqrt(1/m sum_i e_i^2) over Y = [x; v]
 *   true       the same norm of Y_1 - Y(h), Y(h) the exact solution, or,
 *              for a system without one, rk4 over [0, h] in 2^j substeps,
 *              j raised until two successive references differ by less
 *              than 10^-3 of the true error (or 2^20 substeps)
 *
 * A method with local extrapolation (dopri5 keeps the fifth-order solution
 * and estimates the error of the embedded fourth-order one) has an estimate
 * of order p (error ~ h^p) against a true local error of order p + 1, so
 * estimated / true grows like 1/h: the estimate is safe (an overestimate)
 * and grows safer as h shrinks.  Hairer, Norsett & Wanner, Solving ODEs I,
 * II.4 and II.5. */
#include <math.h>
#include <stdlib.h>
#include "tstep/linalg.h"
#include "tstep/run.h"

/* sqrt(1/m sum (a_i - b_i)^2) */
static double rms_diff(size_t m, const double *a, const double *b)
{
    double s = 0.0;
    for (size_t i = 0; i < m; i++)
        s += (a[i] - b[i]) * (a[i] - b[i]);
    return m ? sqrt(s / (double)m) : 0.0;
}

/* The vectors of one point, m doubles each: the initial state y0, the
 * stepper's result y1, the reference Y(h), and scratch. */
typedef struct {
    double *y0, *y1, *ref, *work;
} point_vectors;

/* pv->ref = Y(h) by rk4 in 2^j substeps from pv->y0 on the system of rq,
 * refined until it settles against pv->y1 (the stepper's result) */
static int rk4_reference(const ts_sweep_request *rq, double h, const point_vectors *pv)
{
    ts_system *sys;
    const double *y0 = pv->y0, *y1 = pv->y1;
    double *ref = pv->ref, *work = pv->work;
    int s = ts_system_new(rq->stype, rq->params, &sys);
    if (s)
        return s;
    size_t m = ts_system_ydim(sys);
    ts_stepper *st = NULL;
    const ts_stepper_type *rk4 = ts_stepper_find("rk4"); /* by name: see reference.c */
    s = rk4 ? ts_stepper_new(rk4, sys, NULL, &st)
            : ts_error(TS_ERR_UNSUPPORTED, "sweep: no stepper rk4 here");
    for (long n = 16; !s && n <= (1L << 20); n *= 2) {
        ts_system_set_y(sys, y0);
        ts_stepper_reset(st);
        for (long k = 0; k < n && !s; k++)
            s = ts_stepper_step(st, sys, h * (double)k / (double)n, h / (double)n);
        if (s)
            break;
        ts_system_get_y(sys, work);
        double change = n > 16 ? rms_diff(m, work, ref) : INFINITY;
        ts_vec_copy(m, work, ref);
        if (change <= 1e-3 * rms_diff(m, y1, ref))
            break;
    }
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

/* one point: the step from the initial state at h; y holds 4m doubles */
static int estimator_point(const ts_sweep_request *rq, double h, double *y, ts_estimator_point *pt)
{
    ts_system *sys;
    int s = ts_system_new(rq->stype, rq->params, &sys);
    if (s)
        return s;
    size_t m = ts_system_ydim(sys);
    point_vectors pv = {y, y + m, y + 2 * m, y + 3 * m};
    ts_stepper *st = NULL;
    *pt = (ts_estimator_point){.dt = h, .estimated = NAN, .truth = NAN};
    if (!(s = ts_stepper_new(rq->type, sys, rq->opt, &st))) {
        ts_system_get_y(sys, pv.y0);
        pt->status = ts_stepper_step(st, sys, 0.0, h);
    }
    if (!s && !pt->status) {
        pt->estimated = ts_stepper_error(st, sys, 0.0, 1.0);
        ts_system_get_y(sys, pv.y1);
        if (ts_system_exact_y(sys, h, pv.ref) == TS_OK)
            pt->truth = rms_diff(m, pv.y1, pv.ref);
        else if (!(s = rk4_reference(rq, h, &pv)))
            pt->truth = rms_diff(m, pv.y1, pv.ref);
    }
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

int ts_estimator_sweep(const ts_sweep_request *rq, ts_estimator_point *points)
{
    double lo = rq->dt_min, hi = rq->dt_max;
    int n = rq->levels;
    if (!(rq->type->flags & TS_ADAPTIVE) || !rq->type->error)
        return ts_error(TS_ERR_UNSUPPORTED, "'%s' has no error estimate", rq->type->name);
    if (!(lo > 0.0) || !(lo <= hi) || n < 1)
        return ts_error(TS_ERR_INPUT, "estimator: need 0 < dt_min <= dt_max and levels >= 1");
    ts_system *probe;
    int s = ts_system_new(rq->stype, rq->params, &probe);
    if (s)
        return s;
    size_t m = ts_system_ydim(probe);
    ts_system_free(probe);
    double *y = malloc(4 * m * sizeof *y);
    if (!y)
        return ts_error(TS_ERR_NOMEM, "estimator");
    for (int k = 0; k < n && !s; k++) {
        double h = n == 1 ? hi : hi * pow(lo / hi, (double)k / (double)(n - 1));
        s = estimator_point(rq, h, y, &points[k]);
    }
    free(y);
    return s;
}

double ts_estimator_slope(const ts_estimator_point *points, int n, int truth)
{
    double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
    int used = 0;
    for (int k = 0; k < n; k++) {
        double e = truth ? points[k].truth : points[k].estimated;
        if (points[k].status || !(e > 0.0) || !isfinite(e))
            continue;
        double x = log(points[k].dt), yv = log(e);
        sx += x, sy += yv, sxx += x * x, sxy += x * yv, used++;
    }
    double d = used * sxx - sx * sx;
    return used >= 2 && d > 0.0 ? (used * sxy - sx * sy) / d : NAN;
}

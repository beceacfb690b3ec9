/* Phase and amplitude of a stepper on the undamped oscillator, from its
 * one-step matrix; see tstep/phase.h. */
#include <math.h>
#include <stdio.h>
#include "tstep/phase.h"

/* One step of size h from (x, v) on a fresh oscillator (k = m = 1). */
static int one_step(const ts_stepper_type *type, const ts_solver_options *opt, double h,
                    double x, double v, double *x1, double *v1)
{
    ts_params p;
    ts_params_init(&p, ts_oscillator.params);
    char buf[40];
    int s;
    snprintf(buf, sizeof buf, "%.17g", x);
    if ((s = ts_params_set(&p, "x0", buf)))
        return s;
    snprintf(buf, sizeof buf, "%.17g", v);
    if ((s = ts_params_set(&p, "v0", buf)))
        return s;
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    if (!(s = ts_system_new(&ts_oscillator, &p, &sys)) &&
        !(s = ts_stepper_new(type, sys, opt, &st)) && !(s = ts_stepper_step(st, sys, 0.0, h))) {
        *x1 = sys->x[0];
        *v1 = sys->v[0];
    }
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

int ts_phase_response(const ts_stepper_type *type, const ts_solver_options *opt, double wh,
                      double *abs_mu, double *arg_mu)
{
    ts_solver_options tight = ts_default_solver_options();
    tight.newton_tol = 1e-13, tight.cg_tol = 1e-14;
    double a, b, c, d; /* S = [a b; c d], columns the images of (1, 0) and (0, 1) */
    *abs_mu = *arg_mu = NAN;
    if (!(wh > 0.0))
        return ts_error(TS_ERR_INPUT, "phase: w h = %g must be > 0", wh);
    int s = one_step(type, opt ? opt : &tight, wh, 1.0, 0.0, &a, &c);
    if (!s)
        s = one_step(type, opt ? opt : &tight, wh, 0.0, 1.0, &b, &d);
    if (s)
        return s;
    double tr = a + d, det = a * d - b * c, disc = 0.25 * tr * tr - det;
    if (disc < 0.0) { /* a complex pair tr/2 +- i sqrt(-disc) */
        *abs_mu = sqrt(det);
        *arg_mu = atan2(sqrt(-disc), 0.5 * tr);
    } else { /* real: the one of larger modulus */
        double r = sqrt(disc), m1 = 0.5 * tr + r, m2 = 0.5 * tr - r;
        double mu = fabs(m1) >= fabs(m2) ? m1 : m2;
        *abs_mu = fabs(mu);
        *arg_mu = mu >= 0.0 ? 0.0 : acos(-1.0);
    }
    return TS_OK;
}

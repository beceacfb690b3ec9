/* A damped mass on a spring, order 2, one degree of freedom:
 *   m x'' = -k x - c v
 *   energy E = m v^2 / 2 + k x^2 / 2;  df/dx = -k, df/dv = -c.
 * Exact solution with w0^2 = k/m, g = c/(2m):
 *   underdamped (g < w0), wd = sqrt(w0^2 - g^2):
 *     x = e^{-g t} (x0 cos wd t + (v0 + g x0)/wd sin wd t)
 *   critical (g = w0):  x = e^{-g t} (x0 + (v0 + g x0) t)
 *   overdamped: x = C1 e^{r1 t} + C2 e^{r2 t}, r = -g +- sqrt(g^2 - w0^2).
 * Undamped forward Euler multiplies E by exactly 1 + (h w0)^2 per step. */
#include <math.h>
#include <stdlib.h>
#include "tstep/stepper.h"

typedef struct {
    ts_system base;
    double k, m, c, x0, v0;
} oscillator;

static void osc_destroy(ts_system *sys)
{
    ts_system_release(sys);
    free(sys);
}

static int osc_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    const oscillator *s = (const oscillator *)sys;
    (void)t;
    f[0] = -s->k * x[0] - s->c * v[0];
    return TS_OK;
}

static int osc_dfdx(ts_system *sys, double t, const double *x, const double *v,
                    const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    out[0] = -((const oscillator *)sys)->k * u[0];
    return TS_OK;
}

static int osc_dfdv(ts_system *sys, double t, const double *x, const double *v,
                    const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    out[0] = -((const oscillator *)sys)->c * u[0];
    return TS_OK;
}

static int osc_energy(ts_system *sys, double t, const double *x, const double *v,
                      double *kinetic, double *potential)
{
    const oscillator *s = (const oscillator *)sys;
    (void)t;
    *kinetic = 0.5 * s->m * v[0] * v[0];
    *potential = 0.5 * s->k * x[0] * x[0];
    return TS_OK;
}

static int osc_exact(ts_system *sys, double t, double *x, double *v)
{
    const oscillator *s = (const oscillator *)sys;
    double w0sq = s->k / s->m, g = s->c / (2.0 * s->m), disc = g * g - w0sq;
    double e = exp(-g * t);
    if (fabs(disc) <= 1e-12 * fmax(g * g, w0sq)) { /* critical */
        double b = s->v0 + g * s->x0;
        x[0] = e * (s->x0 + b * t);
        v[0] = e * (b - g * (s->x0 + b * t));
    } else if (disc < 0.0) { /* underdamped */
        double wd = sqrt(-disc), a = s->x0, b = (s->v0 + g * s->x0) / wd;
        double co = cos(wd * t), si = sin(wd * t);
        x[0] = e * (a * co + b * si);
        v[0] = e * ((b * wd - g * a) * co - (a * wd + g * b) * si);
    } else { /* overdamped */
        double r1 = -g + sqrt(disc), r2 = -g - sqrt(disc);
        double c1 = (s->v0 - r2 * s->x0) / (r1 - r2), c2 = s->x0 - c1;
        x[0] = c1 * exp(r1 * t) + c2 * exp(r2 * t);
        v[0] = r1 * c1 * exp(r1 * t) + r2 * c2 * exp(r2 * t);
    }
    return TS_OK;
}

static const ts_system_ops osc_ops = {
    .destroy = osc_destroy,
    .forces = osc_forces,
    .dfdx_mul = osc_dfdx,
    .dfdv_mul = osc_dfdv,
    .energy = osc_energy,
    .exact = osc_exact,
};

static const ts_param_def osc_params[] = {
    {"k", TS_PARAM_REAL, "1", "spring stiffness (>= 0)"},
    {"m", TS_PARAM_REAL, "1", "mass (> 0)"},
    {"c", TS_PARAM_REAL, "0", "damping coefficient (>= 0)"},
    {"x0", TS_PARAM_REAL, "1", "initial position"},
    {"v0", TS_PARAM_REAL, "0", "initial velocity"},
    {NULL, 0, NULL, NULL},
};

static int osc_create(const ts_params *p, ts_system **out)
{
    double k = ts_params_real(p, "k"), m = ts_params_real(p, "m"), c = ts_params_real(p, "c");
    if (k < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'k': %g must be >= 0", k);
    if (!(m > 0.0))
        return ts_error(TS_ERR_INPUT, "parameter 'm': %g must be > 0", m);
    if (c < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'c': %g must be >= 0", c);
    oscillator *s = calloc(1, sizeof *s);
    if (!s)
        return ts_error(TS_ERR_NOMEM, "oscillator");
    int st = ts_system_init(&s->base, &osc_ops, &ts_oscillator, 2, 1);
    if (st) {
        free(s);
        return st;
    }
    s->k = k, s->m = m, s->c = c;
    s->x0 = ts_params_real(p, "x0");
    s->v0 = ts_params_real(p, "v0");
    s->base.mass[0] = m;
    s->base.x[0] = s->x0;
    s->base.v[0] = s->v0;
    *out = &s->base;
    return TS_OK;
}

const ts_system_type ts_oscillator = {
    .name = "oscillator",
    .summary = "a damped mass on a spring, m x'' = -k x - c v, exact solution and energy",
    .params = osc_params,
    .create = osc_create,
};

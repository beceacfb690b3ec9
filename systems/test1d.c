/* The test equation (Dahlquist 1963), order 1, M = 1:
 *   x' = -k x,                exact x0 e^{-k t}
 * With omega != 0 the complex test equation x' = (-k + i omega) x, carried
 * as the real pair x = (Re, Im):
 *   x' = [-k  -omega; omega  -k] x,   exact x0 e^{-k t} (cos omega t, sin omega t)
 * Jacobian df/dx is the constant matrix above (not symmetric when omega != 0,
 * so implicit steppers use a non-symmetric Krylov solver).
 * With omega = 0 the equation is a gradient flow, x' = -grad E with
 * E = k x^2 / 2, and the system offers that energy (kinetic 0), so
 * energy-minimizing steppers apply; the rotation (omega != 0) is not a
 * gradient, and that system has no energy. */
#include <math.h>
#include <stdlib.h>
#include "tstep/stepper.h"

typedef struct {
    ts_system base;
    double k, omega, x0;
} test1d;

static void test1d_destroy(ts_system *sys)
{
    ts_system_release(sys);
    free(sys);
}

/* out = A u with A the system matrix */
static void apply(const test1d *s, const double *u, double *out)
{
    if (s->base.n == 1) {
        out[0] = -s->k * u[0];
    } else {
        double a = u[0], b = u[1];
        out[0] = -s->k * a - s->omega * b;
        out[1] = s->omega * a - s->k * b;
    }
}

static int test1d_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    (void)t, (void)v;
    apply((test1d *)sys, x, f);
    return TS_OK;
}

static int test1d_dfdx(ts_system *sys, double t, const double *x, const double *v,
                       const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    apply((test1d *)sys, u, out);
    return TS_OK;
}

static int test1d_exact(ts_system *sys, double t, double *x, double *v)
{
    const test1d *s = (const test1d *)sys;
    double r = s->x0 * exp(-s->k * t);
    (void)v;
    if (sys->n == 1) {
        x[0] = r;
    } else {
        x[0] = r * cos(s->omega * t);
        x[1] = r * sin(s->omega * t);
    }
    return TS_OK;
}

/* omega = 0 only: E = k x^2 / 2 */
static int test1d_energy(ts_system *sys, double t, const double *x, const double *v,
                         double *kinetic, double *potential)
{
    (void)t, (void)v;
    *kinetic = 0.0;
    *potential = 0.5 * ((const test1d *)sys)->k * x[0] * x[0];
    return TS_OK;
}

static const ts_system_ops test1d_ops = {
    .destroy = test1d_destroy,
    .forces = test1d_forces,
    .dfdx_mul = test1d_dfdx,
    .energy = test1d_energy,
    .exact = test1d_exact,
};

static const ts_system_ops test1d_rotating_ops = {
    .destroy = test1d_destroy,
    .forces = test1d_forces,
    .dfdx_mul = test1d_dfdx,
    .exact = test1d_exact,
};

static const ts_param_def test1d_params[] = {
    {"k", TS_PARAM_REAL, "1", "decay rate: x' = -k x"},
    {"omega", TS_PARAM_REAL, "0", "imaginary part: x' = (-k + i omega) x, carried as (Re, Im)"},
    {"x0", TS_PARAM_REAL, "1", "initial value"},
    {NULL, 0, NULL, NULL},
};

static int test1d_create(const ts_params *p, ts_system **out)
{
    test1d *s = calloc(1, sizeof *s);
    if (!s)
        return ts_error(TS_ERR_NOMEM, "test1d");
    s->k = ts_params_real(p, "k");
    s->omega = ts_params_real(p, "omega");
    s->x0 = ts_params_real(p, "x0");
    int st = ts_system_init(&s->base, s->omega != 0.0 ? &test1d_rotating_ops : &test1d_ops,
                            &ts_test1d, 1, s->omega != 0.0 ? 2 : 1);
    if (st) {
        free(s);
        return st;
    }
    s->base.jacobian_symmetric = s->omega == 0.0;
    s->base.x[0] = s->x0;
    *out = &s->base;
    return TS_OK;
}

const ts_system_type ts_test1d = {
    .name = "test1d",
    .summary = "the test equation x' = -k x (complex with omega != 0), exact solution known",
    .params = test1d_params,
    .create = test1d_create,
};

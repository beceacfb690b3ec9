/* A planar pendulum as a tstep plugin (docs/students.md walks through it):
 * a mass m on a massless rod of length L, angle theta from the downward
 * vertical, order 2, one degree of freedom x = theta:
 *   m L^2 theta'' = -m g L sin(theta) - c theta'
 *   mass (moment of inertia) M = m L^2
 *   energy E = m L^2 theta'^2 / 2 + m g L (1 - cos theta)
 *   df/dx = -m g L cos(theta),  df/dv = -c
 * Undamped (c = 0) the energy is conserved; for small angles the motion is
 * the oscillator's with omega^2 = g / L.  There is no elementary exact
 * solution (it needs elliptic functions), so the system offers none.
 * Landau & Lifshitz, Mechanics, sec. 11; Goldstein, Classical Mechanics, 1.3.
 *
 * Build and use (PKG_CONFIG_PATH pointing at an installed tstep):
 *   cc -shared -fPIC $(pkg-config --cflags tstep) pendulum.c -o pendulum.so
 *   tstep --plugin ./pendulum.so check-system --system pendulum */
#include <math.h>
#include <stdlib.h>
#include <tstep/tstep.h>

typedef struct {
    ts_system base; /* first: a pendulum is a ts_system */
    double m, L, g, c;
} pendulum;

static void pendulum_destroy(ts_system *sys)
{
    ts_system_release(sys);
    free(sys);
}

/* Forces at the state handed in (x, v), never the stored one. */
static int pendulum_forces(ts_system *sys, double t, const double *x, const double *v,
                           double *f)
{
    const pendulum *p = (const pendulum *)sys;
    (void)t;
    f[0] = -p->m * p->g * p->L * sin(x[0]) - p->c * v[0];
    return TS_OK;
}

static int pendulum_dfdx(ts_system *sys, double t, const double *x, const double *v,
                         const double *u, double *out)
{
    const pendulum *p = (const pendulum *)sys;
    (void)t, (void)v;
    out[0] = -p->m * p->g * p->L * cos(x[0]) * u[0];
    return TS_OK;
}

static int pendulum_dfdv(ts_system *sys, double t, const double *x, const double *v,
                         const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    out[0] = -((const pendulum *)sys)->c * u[0];
    return TS_OK;
}

static int pendulum_energy(ts_system *sys, double t, const double *x, const double *v,
                           double *kinetic, double *potential)
{
    const pendulum *p = (const pendulum *)sys;
    (void)t;
    *kinetic = 0.5 * p->m * p->L * p->L * v[0] * v[0];
    *potential = p->m * p->g * p->L * (1.0 - cos(x[0]));
    return TS_OK;
}

static const ts_system_ops pendulum_ops = {
    .destroy = pendulum_destroy,
    .forces = pendulum_forces,
    .dfdx_mul = pendulum_dfdx,
    .dfdv_mul = pendulum_dfdv,
    .energy = pendulum_energy,
};

static const ts_param_def pendulum_params[] = {
    {"m", TS_PARAM_REAL, "1", "bob mass (> 0)"},
    {"L", TS_PARAM_REAL, "1", "rod length (> 0)"},
    {"g", TS_PARAM_REAL, "9.81", "gravity (>= 0)"},
    {"c", TS_PARAM_REAL, "0", "damping at the pivot (>= 0)"},
    {"theta0", TS_PARAM_REAL, "1", "initial angle from the downward vertical (rad)"},
    {"omega0", TS_PARAM_REAL, "0", "initial angular velocity (rad/s)"},
    {NULL, 0, NULL, NULL},
};

static const ts_system_type pendulum_type;

static int pendulum_create(const ts_params *prm, ts_system **out)
{
    double m = ts_params_real(prm, "m"), L = ts_params_real(prm, "L");
    double g = ts_params_real(prm, "g"), c = ts_params_real(prm, "c");
    if (!(m > 0.0))
        return ts_error(TS_ERR_INPUT, "parameter 'm': %g must be > 0", m);
    if (!(L > 0.0))
        return ts_error(TS_ERR_INPUT, "parameter 'L': %g must be > 0", L);
    if (!(g >= 0.0))
        return ts_error(TS_ERR_INPUT, "parameter 'g': %g must be >= 0", g);
    if (!(c >= 0.0))
        return ts_error(TS_ERR_INPUT, "parameter 'c': %g must be >= 0", c);
    pendulum *p = calloc(1, sizeof *p);
    if (!p)
        return ts_error(TS_ERR_NOMEM, "pendulum");
    int s = ts_system_init(&p->base, &pendulum_ops, &pendulum_type, 2, 1);
    if (s) {
        free(p);
        return s;
    }
    p->m = m, p->L = L, p->g = g, p->c = c;
    p->base.mass[0] = m * L * L;
    p->base.x[0] = ts_params_real(prm, "theta0");
    p->base.v[0] = ts_params_real(prm, "omega0");
    *out = &p->base;
    return TS_OK;
}

static const ts_system_type pendulum_type = {
    .name = "pendulum",
    .summary = "a planar pendulum, m L^2 theta'' = -m g L sin(theta) - c theta', energy",
    .params = pendulum_params,
    .create = pendulum_create,
};

const ts_system_type *const tstep_plugin_systems[] = {&pendulum_type, NULL};
TSTEP_PLUGIN();

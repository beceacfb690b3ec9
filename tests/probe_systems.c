/* Test-only systems; see probe_systems.h. */
#include <math.h>
#include <stdlib.h>
#include "probe_systems.h"

static void probe_destroy(ts_system *sys)
{
    ts_system_release(sys);
    free(sys);
}

static int pend_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    probe_pendulum *p = (probe_pendulum *)sys;
    (void)t;
    if (p->fail_at && ++p->calls == p->fail_at)
        return ts_error(TS_ERR_INPUT, "injected force failure");
    for (size_t i = 0; i < sys->n; i++)
        f[i] = -p->k * sin(x[i]) - p->c * v[i];
    return TS_OK;
}

static int pend_dfdx(ts_system *sys, double t, const double *x, const double *v,
                     const double *u, double *out)
{
    probe_pendulum *p = (probe_pendulum *)sys;
    (void)t, (void)v;
    for (size_t i = 0; i < sys->n; i++)
        out[i] = -p->k * cos(x[i]) * u[i];
    return TS_OK;
}

static int pend_dfdv(ts_system *sys, double t, const double *x, const double *v,
                     const double *u, double *out)
{
    probe_pendulum *p = (probe_pendulum *)sys;
    (void)t, (void)x, (void)v;
    for (size_t i = 0; i < sys->n; i++)
        out[i] = -p->c * u[i];
    return TS_OK;
}

static int pend_energy(ts_system *sys, double t, const double *x, const double *v,
                       double *kinetic, double *potential)
{
    probe_pendulum *p = (probe_pendulum *)sys;
    (void)t;
    *kinetic = *potential = 0.0;
    for (size_t i = 0; i < sys->n; i++) {
        *kinetic += 0.5 * sys->mass[i] * v[i] * v[i];
        *potential += p->k * (1.0 - cos(x[i]));
    }
    *kinetic *= p->kinetic_scale;
    *potential *= p->potential_scale;
    return TS_OK;
}

static const ts_system_ops pend_ops = {
    .destroy = probe_destroy, .forces = pend_forces, .dfdx_mul = pend_dfdx,
    .dfdv_mul = pend_dfdv,    .energy = pend_energy,
};

probe_pendulum *probe_pendulum_new(size_t n, double k, double c, double m, double x0)
{
    probe_pendulum *p = calloc(1, sizeof *p);
    if (!p || ts_system_init(&p->base, &pend_ops, NULL, 2, n)) {
        free(p);
        return NULL;
    }
    p->k = k, p->c = c;
    p->potential_scale = p->kinetic_scale = 1.0;
    for (size_t i = 0; i < n; i++) {
        p->base.mass[i] = m;
        p->base.x[i] = x0 + 0.1 * (double)i;
        p->base.v[i] = 0.2;
    }
    return p;
}

static const ts_param_def pend_params[] = {
    {"n", TS_PARAM_INT, "3", "pendulums"},
    {"k", TS_PARAM_REAL, "4", "f = -k sin x - c v"},
    {"c", TS_PARAM_REAL, "0.1", "damping"},
    {"m", TS_PARAM_REAL, "1", "mass"},
    {"x0", TS_PARAM_REAL, "1", "pendulum i starts at x0 + 0.1 i, v = 0.2"},
    {"potential_scale", TS_PARAM_REAL, "1", "the energy reports this times the potential"},
    {"kinetic_scale", TS_PARAM_REAL, "1", "the energy reports this times the kinetic energy"},
    {NULL, 0, NULL, NULL},
};

static int pend_create(const ts_params *prm, ts_system **out)
{
    probe_pendulum *p = probe_pendulum_new((size_t)ts_params_int(prm, "n"),
                                           ts_params_real(prm, "k"), ts_params_real(prm, "c"),
                                           ts_params_real(prm, "m"), ts_params_real(prm, "x0"));
    if (!p)
        return ts_error(TS_ERR_NOMEM, "probe pendulum");
    p->base.type = &probe_pendulum_type;
    p->potential_scale = ts_params_real(prm, "potential_scale");
    p->kinetic_scale = ts_params_real(prm, "kinetic_scale");
    *out = &p->base;
    return TS_OK;
}

const ts_system_type probe_pendulum_type = {
    .name = "probe-pendulum",
    .summary = "n nonlinear pendulums (tests only)",
    .params = pend_params,
    .create = pend_create,
};

static int cubic_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    (void)sys, (void)t, (void)v;
    f[0] = -x[0] * x[0] * x[0];
    return TS_OK;
}

static int cubic_dfdx(ts_system *sys, double t, const double *x, const double *v,
                      const double *u, double *out)
{
    (void)sys, (void)t, (void)v;
    out[0] = -3.0 * x[0] * x[0] * u[0];
    return TS_OK;
}

static const ts_system_ops cubic_ops = {
    .destroy = probe_destroy, .forces = cubic_forces, .dfdx_mul = cubic_dfdx};

ts_system *probe_cubic_new(double x0)
{
    ts_system *s = calloc(1, sizeof *s);
    if (!s || ts_system_init(s, &cubic_ops, NULL, 1, 1)) {
        free(s);
        return NULL;
    }
    s->x[0] = x0;
    return s;
}

static int nojac_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    (void)sys, (void)t, (void)v;
    f[0] = -x[0];
    return TS_OK;
}

static const ts_system_ops nojac_ops = {.destroy = probe_destroy, .forces = nojac_forces};

ts_system *probe_nojacobian_new(void)
{
    ts_system *s = calloc(1, sizeof *s);
    if (!s || ts_system_init(s, &nojac_ops, NULL, 2, 1)) {
        free(s);
        return NULL;
    }
    s->x[0] = 1.0;
    return s;
}

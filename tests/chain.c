/* A 2-D spring chain for the tests.  Spring (i, i+1), d = x_{i+1} - x_i,
 * l = |d|, n = d / l, rest length L, stiffness k:
 *   f_i += k (l - L) n,   f_{i+1} -= k (l - L) n
 *   E = k/2 (l - L)^2 per spring + m g y per particle,   f -= c v (drag)
 *   df_i/dx_{i+1} = K = k [n n^T + (1 - L/l)(I - n n^T)],  df_i/dx_i = -K
 *   df/dv = -c I
 * (Macklin, "Implicit Springs"; Baraff & Witkin 1998, sec. 4.)  The defects
 * of chain_bug change the df/dx rows of one particle only, so a checker that
 * localizes errors must name that particle. */
#include <math.h>
#include <stdlib.h>
#include "chain.h"
#include "tstep/linalg.h"

typedef struct {
    ts_system base;
    ts_system_ops ops;
    chain_options o;
    int np;
    double *block;         /* fast path: 3 entries (xx, xy, yy) of alpha K per spring */
    double alpha, beta;
} chain;

static const ts_system_type chain_type = {.name = "chain", .summary = "test spring chain"};

chain_options chain_default_options(void)
{
    return (chain_options){.particles = 3, .k = 50, .rest = 1, .mass = 0.5, .drag = 0,
                           .gravity = 9.81, .stretch = 1.3, .pin_first = 1,
                           .bug = CHAIN_EXACT, .fast_path = 0, .clamp = 0, .energy = 1,
                           .jacobian = 1};
}

static void chain_destroy(ts_system *sys)
{
    chain *c = (chain *)sys;
    free(c->block);
    ts_system_release(sys);
    free(c);
}

/* K = k [n n^T + s (I - n n^T)], s = 1 - L/l (clamped at 0 if asked),
 * the transverse term's sign and the factor as given */
static void spring_block(const chain *c, const double *x, int s, int clamp, double sign,
                         double factor, double K[3])
{
    double dx = x[2 * s + 2] - x[2 * s], dy = x[2 * s + 3] - x[2 * s + 1];
    double l = sqrt(dx * dx + dy * dy), nx = dx / l, ny = dy / l;
    double t = 1.0 - c->o.rest / l;
    if (clamp && t < 0.0)
        t = 0.0;
    t *= sign;
    K[0] = factor * c->o.k * (nx * nx + t * (1.0 - nx * nx));
    K[1] = factor * c->o.k * (nx * ny - t * nx * ny);
    K[2] = factor * c->o.k * (ny * ny + t * (1.0 - ny * ny));
}

static int chain_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    chain *c = (chain *)sys;
    (void)t;
    for (int i = 0; i < c->np; i++) {
        f[2 * i] = -c->o.drag * v[2 * i];
        f[2 * i + 1] = -c->o.drag * v[2 * i + 1] - c->o.mass * c->o.gravity;
    }
    for (int s = 0; s + 1 < c->np; s++) {
        double dx = x[2 * s + 2] - x[2 * s], dy = x[2 * s + 3] - x[2 * s + 1];
        double l = sqrt(dx * dx + dy * dy), a = c->o.k * (l - c->o.rest) / l;
        f[2 * s] += a * dx, f[2 * s + 1] += a * dy;
        f[2 * s + 2] -= a * dx, f[2 * s + 3] -= a * dy;
    }
    return TS_OK;
}

static int chain_dfdx(ts_system *sys, double t, const double *x, const double *v,
                      const double *u, double *out)
{
    chain *c = (chain *)sys;
    (void)t, (void)v;
    ts_vec_zero(sys->n, out);
    for (int s = 0; s + 1 < c->np; s++) {
        double du[2] = {u[2 * s + 2] - u[2 * s], u[2 * s + 3] - u[2 * s + 1]};
        for (int end = 0; end < 2; end++) { /* end 0: particle s, 1: particle s+1 */
            int p = s + end;
            int wrong = c->o.bug != CHAIN_EXACT && p == c->o.bug_particle;
            double K[3];
            spring_block(c, x, s, 0, wrong && c->o.bug == CHAIN_BUG_SIGN ? -1.0 : 1.0,
                         wrong && c->o.bug == CHAIN_BUG_FACTOR ? 2.0 : 1.0, K);
            double sg = end == 0 ? 1.0 : -1.0;
            out[2 * p] += sg * (K[0] * du[0] + K[1] * du[1]);
            out[2 * p + 1] += sg * (K[1] * du[0] + K[2] * du[1]);
        }
    }
    if (c->o.bug == CHAIN_BUG_NAN)
        out[2 * c->o.bug_particle] = NAN;
    return TS_OK;
}

static int chain_dfdv(ts_system *sys, double t, const double *x, const double *v,
                      const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    for (size_t i = 0; i < sys->n; i++)
        out[i] = -((chain *)sys)->o.drag * u[i];
    return TS_OK;
}

static int chain_linearize(ts_system *sys, double t, const double *x, const double *v,
                           double alpha, double beta)
{
    chain *c = (chain *)sys;
    (void)t, (void)v;
    for (int s = 0; s + 1 < c->np; s++) {
        spring_block(c, x, s, c->o.clamp, 1.0, 1.0, &c->block[3 * s]);
        for (int e = 0; e < 3; e++)
            c->block[3 * s + e] *= alpha;
    }
    c->alpha = alpha, c->beta = beta;
    return TS_OK;
}

static int chain_jacobian_mul(ts_system *sys, const double *u, double *out)
{
    chain *c = (chain *)sys;
    for (size_t i = 0; i < sys->n; i++)
        out[i] = -c->beta * c->o.drag * u[i];
    for (int s = 0; s + 1 < c->np; s++) {
        const double *K = &c->block[3 * s];
        double du0 = u[2 * s + 2] - u[2 * s], du1 = u[2 * s + 3] - u[2 * s + 1];
        double a = K[0] * du0 + K[1] * du1, b = K[1] * du0 + K[2] * du1;
        out[2 * s] += a, out[2 * s + 1] += b;
        out[2 * s + 2] -= a, out[2 * s + 3] -= b;
    }
    return TS_OK;
}

static int chain_jacobian_diag(ts_system *sys, double *diag)
{
    chain *c = (chain *)sys;
    for (size_t i = 0; i < sys->n; i++)
        diag[i] = -c->beta * c->o.drag;
    for (int s = 0; s + 1 < c->np; s++) {
        const double *K = &c->block[3 * s];
        diag[2 * s] -= K[0], diag[2 * s + 1] -= K[2];
        diag[2 * s + 2] -= K[0], diag[2 * s + 3] -= K[2];
    }
    return TS_OK;
}

double chain_potential(const ts_system *sys, const double *x)
{
    const chain *c = (const chain *)sys;
    double e = 0.0;
    for (int i = 0; i < c->np; i++)
        e += c->o.mass * c->o.gravity * x[2 * i + 1];
    for (int s = 0; s + 1 < c->np; s++) {
        double dx = x[2 * s + 2] - x[2 * s], dy = x[2 * s + 3] - x[2 * s + 1];
        double stretch = sqrt(dx * dx + dy * dy) - c->o.rest;
        e += 0.5 * c->o.k * stretch * stretch;
    }
    return e;
}

static int chain_energy(ts_system *sys, double t, const double *x, const double *v,
                        double *kinetic, double *potential)
{
    (void)t;
    *kinetic = 0.0;
    for (size_t i = 0; i < sys->n; i++)
        *kinetic += 0.5 * sys->mass[i] * v[i] * v[i];
    *potential = chain_potential(sys, x);
    return TS_OK;
}

int chain_new(const chain_options *o, ts_system **out)
{
    *out = NULL;
    chain *c = calloc(1, sizeof *c);
    if (!c)
        return TS_ERR_NOMEM;
    c->o = *o;
    c->np = o->particles;
    c->ops = (ts_system_ops){.destroy = chain_destroy, .forces = chain_forces};
    if (o->jacobian) {
        c->ops.dfdx_mul = chain_dfdx;
        c->ops.dfdv_mul = chain_dfdv;
    }
    if (o->fast_path) {
        c->ops.linearize = chain_linearize;
        c->ops.jacobian_mul = chain_jacobian_mul;
        c->ops.jacobian_diag = chain_jacobian_diag;
    }
    if (o->energy)
        c->ops.energy = chain_energy;
    int s = ts_system_init(&c->base, &c->ops, &chain_type, 2, 2 * (size_t)c->np);
    if (s) {
        free(c);
        return s;
    }
    c->block = calloc(3 * (size_t)c->np, sizeof *c->block);
    if (!c->block || (o->pin_first && ts_system_alloc_pins(&c->base))) {
        chain_destroy(&c->base);
        return TS_ERR_NOMEM;
    }
    c->base.dim = 2;
    /* a bent line: spacing stretch * L, turning by 0.4 rad per link */
    double px = 0.0, py = 0.0, angle = -0.3;
    for (int i = 0; i < c->np; i++) {
        c->base.x[2 * i] = px, c->base.x[2 * i + 1] = py;
        c->base.mass[2 * i] = c->base.mass[2 * i + 1] = o->mass;
        px += o->stretch * o->rest * cos(angle);
        py += o->stretch * o->rest * sin(angle);
        angle -= 0.4;
    }
    if (o->pin_first)
        c->base.pinned[0] = c->base.pinned[1] = 1;
    *out = &c->base;
    return TS_OK;
}

/* The ParticleSystem base: allocation, the counted force call, Jacobian
 * products (with the generic linearize fallback) and the first-order view
 * Y' = F(t, Y), Y = [x; v], F = [v; M^-1 f] (order 2) or F = M^-1 f (order 1). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/linalg.h"
#include "tstep/system.h"
#include "core/parallel.h"

static void unit_mass_range(void *mass, size_t i0, size_t i1)
{
    for (size_t i = i0; i < i1; i++)
        ((double *)mass)[i] = 1.0;
}

int ts_system_init(ts_system *sys, const ts_system_ops *ops, const ts_system_type *type,
                   int order, size_t n)
{
    assert(order == 1 || order == 2);
    assert(ops && ops->forces && ops->destroy);
    sys->ops = ops;
    sys->type = type;
    sys->order = order;
    sys->n = n;
    sys->jacobian_symmetric = 1;
    sys->x = calloc(n, sizeof *sys->x);
    sys->v = order == 2 ? calloc(n, sizeof *sys->v) : NULL;
    sys->mass = malloc(n * sizeof *sys->mass);
    /* scratch of the generic product (dfdx_mul + dfdv_mul); a fast path needs none */
    int generic = !(ops->linearize && ops->jacobian_mul);
    sys->work_ = generic ? calloc(2 * n, sizeof *sys->work_) : NULL;
    if (!sys->x || (order == 2 && !sys->v) || !sys->mass || (generic && !sys->work_)) {
        ts_system_release(sys);
        return ts_error(TS_ERR_NOMEM, "system of %zu degrees of freedom", n);
    }
    ts_parallel_touch(sys->x, n * sizeof *sys->x);
    if (sys->v)
        ts_parallel_touch(sys->v, n * sizeof *sys->v);
    TS_PARALLEL(n >= ts_threads_min(), n, unit_mass_range, sys->mass);
    return TS_OK;
}

int ts_system_alloc_pins(ts_system *sys)
{
    if (!sys->pinned)
        sys->pinned = calloc(sys->n, 1);
    return sys->pinned ? TS_OK : TS_ERR_NOMEM;
}

void ts_system_release(ts_system *sys)
{
    free(sys->x);
    free(sys->v);
    free(sys->mass);
    free(sys->pinned);
    free(sys->work_);
    sys->x = sys->v = sys->mass = sys->work_ = NULL;
    sys->pinned = NULL;
}

int ts_system_new(const ts_system_type *type, const ts_params *p, ts_system **out)
{
    ts_params defaults;
    *out = NULL;
    if (!p) {
        ts_params_init(&defaults, type->params);
        p = &defaults;
    }
    ts_error_clear();
    return type->create(p, out);
}

void ts_system_free(ts_system *sys)
{
    if (sys)
        sys->ops->destroy(sys);
}

int ts_system_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    sys->force_evals++;
    return sys->ops->forces(sys, t, x, v, f);
}

int ts_system_has_jacobian(const ts_system *sys)
{
    const ts_system_ops *o = sys->ops;
    if (o->linearize && o->jacobian_mul)
        return 1;
    return o->dfdx_mul && (sys->order == 1 || o->dfdv_mul);
}

int ts_system_dfdx_mul(ts_system *sys, double t, const double *x, const double *v,
                       const double *u, double *out)
{
    if (!sys->ops->dfdx_mul)
        return ts_error(TS_ERR_UNSUPPORTED, "system '%s' has no df/dx product",
                        sys->type ? sys->type->name : "?");
    return sys->ops->dfdx_mul(sys, t, x, v, u, out);
}

int ts_system_dfdv_mul(ts_system *sys, double t, const double *x, const double *v,
                       const double *u, double *out)
{
    if (sys->order == 1) {
        ts_vec_zero(sys->n, out);
        return TS_OK;
    }
    if (!sys->ops->dfdv_mul)
        return ts_error(TS_ERR_UNSUPPORTED, "system '%s' has no df/dv product",
                        sys->type ? sys->type->name : "?");
    return sys->ops->dfdv_mul(sys, t, x, v, u, out);
}

int ts_system_linearize(ts_system *sys, double t, const double *x, const double *v,
                        double alpha, double beta)
{
    sys->lin_t_ = t;
    sys->lin_x_ = x;
    sys->lin_v_ = v;
    sys->lin_alpha_ = alpha;
    sys->lin_beta_ = beta;
    if (sys->ops->linearize && sys->ops->jacobian_mul)
        return sys->ops->linearize(sys, t, x, v, alpha, beta);
    return ts_system_has_jacobian(sys)
               ? TS_OK
               : ts_error(TS_ERR_UNSUPPORTED, "system '%s' has no Jacobian products",
                          sys->type ? sys->type->name : "?");
}

int ts_system_jacobian_mul(ts_system *sys, const double *u, double *out)
{
    sys->jacobian_products++;
    if (sys->ops->linearize && sys->ops->jacobian_mul)
        return sys->ops->jacobian_mul(sys, u, out);
    /* out = alpha dfdx u + beta dfdv u, built from the two products */
    int s = ts_system_dfdx_mul(sys, sys->lin_t_, sys->lin_x_, sys->lin_v_, u, out);
    if (s)
        return s;
    ts_vec_scale(sys->n, sys->lin_alpha_, out);
    if (sys->order == 2 && sys->lin_beta_ != 0.0) {
        double *tmp = sys->work_;
        s = ts_system_dfdv_mul(sys, sys->lin_t_, sys->lin_x_, sys->lin_v_, u, tmp);
        if (s)
            return s;
        ts_vec_axpy(sys->n, sys->lin_beta_, tmp, out);
    }
    return TS_OK;
}

void ts_system_filter(const ts_system *sys, double *u)
{
    ts_vec_mask(sys->n, sys->pinned, u);
}

int ts_system_energy(ts_system *sys, double t, double *kinetic, double *potential)
{
    if (!sys->ops->energy)
        return TS_ERR_UNSUPPORTED;
    return sys->ops->energy(sys, t, sys->x, sys->v, kinetic, potential);
}

size_t ts_system_ydim(const ts_system *sys) { return (size_t)sys->order * sys->n; }

void ts_system_get_y(const ts_system *sys, double *y)
{
    memcpy(y, sys->x, sys->n * sizeof *y);
    if (sys->order == 2)
        memcpy(y + sys->n, sys->v, sys->n * sizeof *y);
}

void ts_system_set_y(ts_system *sys, const double *y)
{
    memcpy(sys->x, y, sys->n * sizeof *y);
    if (sys->order == 2)
        memcpy(sys->v, y + sys->n, sys->n * sizeof *y);
}

int ts_system_deriv(ts_system *sys, double t, const double *y, double *dy)
{
    assert(dy != y);
    return ts_system_deriv_xv(sys, t, y, sys->order == 2 ? y + sys->n : NULL, dy);
}

typedef struct {
    const double *m;
    const unsigned char *pin;
    const double *v;
    double *a, *dx;
} deriv_args;

static void deriv_range(void *c, size_t i0, size_t i1)
{
    const deriv_args *g = c;
    for (size_t i = i0; i < i1; i++) {
        int fixed = g->pin && g->pin[i];
        g->a[i] = fixed ? 0.0 : g->a[i] / g->m[i];
        if (g->v)
            g->dx[i] = fixed ? 0.0 : g->v[i];
    }
}

int ts_system_deriv_xv(ts_system *sys, double t, const double *x, const double *v, double *dy)
{
    size_t n = sys->n;
    const double *m = sys->mass;
    const unsigned char *pin = sys->pinned;
    double *a = sys->order == 2 ? dy + n : dy;
    if (sys->order != 2)
        v = NULL;
    int s = ts_system_forces(sys, t, x, v, a);
    if (s)
        return s;
    /* one pass: a = M^-1 f, dx = v, both zero where pinned */
    deriv_args g = {.m = m, .pin = pin, .v = v, .a = a, .dx = dy};
    TS_PARALLEL(n >= ts_threads_min(), n, deriv_range, &g);
    return TS_OK;
}

int ts_system_exact_y(ts_system *sys, double t, double *y)
{
    if (!sys->ops->exact)
        return ts_error(TS_ERR_UNSUPPORTED, "system '%s' has no exact solution",
                        sys->type ? sys->type->name : "?");
    return sys->ops->exact(sys, t, y, sys->order == 2 ? y + sys->n : NULL);
}

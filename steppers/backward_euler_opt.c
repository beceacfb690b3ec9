/* Backward Euler as energy minimization (order 1).
 *
 * Second-order systems, x_pred = x0 + h v0:
 *   x1 = argmin F(x),  F(x) = 1/(2h^2) |x - x_pred|_M^2 + E(x),  v1 = (x1 - x0)/h
 * Its stationarity condition M (x1 - x_pred)/h^2 = f(x1) is the backward Euler
 * step M (v1 - v0) = h f(x1).  First-order systems (M x' = f = -grad E):
 *   x1 = argmin F(x),  F(x) = 1/(2h) |x - x0|_M^2 + E(x),
 * whose stationarity condition is M (x1 - x0) = h f(x1).
 *
 * Newton on the scaled gradient G = a grad F (a = h^2, or h for order 1):
 *   G(x) = M (x - x_pred) - a f(x, v(x)),   v(x) = (x - x0)/h
 *   (M - h^2 df/dx - h df/dv) d = -G        (order 1: M - h df/dx)
 * solved by the chosen linear solver (the shared solve of tstep/implicit.h,
 * by default preconditioned CG or, for a banded system, a sparse Cholesky;
 * pinned degrees of freedom filtered), then a backtracking
 * (Armijo) line search x += alpha d, alpha = 1, 1/2, 1/4, ... until
 *   F(x + alpha d) <= F(x) + c1 alpha grad F . d        (c1 = 1e-4)
 * so F decreases at every iteration.  If CG stops early (iteration cap, or
 * a direction of negative curvature) its last iterate is used when it is a
 * descent direction, else the scaled steepest descent d = -M^-1 G.
 *
 * Velocity-dependent forces (damping, drag) are not the gradient of E: they
 * enter G exactly, with v = (x - x0)/h, and the Hessian through df/dv / h, so
 * the step still solves backward Euler; but F is then not a merit function
 * for it.  The line search then uses the residual merit
 *   psi(x) = 1/2 G^T M^-1 G,   for which grad psi . d = -2 psi < 0,
 * requiring psi(x + alpha d) <= (1 - 2 c1 alpha) psi(x).  A step is treated
 * as velocity-dependent when df/dv is nonzero along a fixed probe direction
 * at (x0, v0); other forces that are not -grad E (a uniform wind left out of
 * E) show up as a failed F line search, and the step switches to psi.
 *
 * Newton stops when G, in the units of the unknown, is within newton_tol
 * of the state's size: |M^-1 G|_inf / h <= newton_tol max(1, |v|_inf)
 * (order 1: |M^-1 G|_inf <= newton_tol max(1, |x|_inf)); M^-1 G / h is
 * M^-1 r of backward-euler's residual r, so both stop on the same test
 * (tstep/implicit.h), or when G is at its round-off level.
 *
 * The minimization form needs the potential energy (ops->energy) and a
 * symmetric Jacobian (a Hessian).  A system without them (the complex test
 * equation x' = (-k + i omega) x, a rotation, is no gradient flow) has no
 * objective to minimize; there the step is backward Euler's Newton
 * iteration of tstep/implicit.h, so the stepper is backward Euler on every
 * system, with one-step factor 1 / (1 - z) for every complex z.  For
 * conservative forces it converges to the same x1 as backward-euler. 
 *
 * References: Martin, Thomaszewski, Grinspun & Gross, "Example-Based Elastic
 * Materials", SIGGRAPH 2011 (implicit Euler as an optimization problem);
 * Gast, Schroeder, Stomakhin, Jiang & Teran, "Optimization Integrator for
 * Large Time Steps", IEEE TVCG 21 (2015); Nocedal & Wright, Numerical
 * Optimization (2nd ed., 2006), sec. 3.1 (backtracking, Armijo condition)
 * and 11.1 (merit functions for nonlinear equations). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "tstep/implicit.h"
#include "tstep/linalg.h"
#include "tstep/linsolve.h"
#include "tstep/status.h"

#define ARMIJO_C1 1e-4
#define MAX_HALVINGS 50

typedef struct {
    ts_solver_options opt;
    size_t n;
    void *newton; /* backward Euler's Newton scratch, for systems with no objective */
    double *x0, *v0, *xpred, *x, *v, *g, *d, *xt, *vt, *gt, *f, *probe;
    ts_linsolve *lin;
} opt_scratch;

static int opt_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    size_t n = sys->n;
    opt_scratch *s = calloc(1, sizeof *s);
    if (!s)
        return ts_error(TS_ERR_NOMEM, "backward-euler-opt scratch");
    if (!sys->ops->energy || !sys->jacobian_symmetric) { /* no objective */
        int st = ts_implicit_alloc(sys, opt, &s->newton);
        if (st)
            free(s);
        else
            *scratch = s;
        return st;
    }
    double **vecs[] = {&s->x0, &s->v0, &s->xpred, &s->x, &s->v, &s->g, &s->d,
                       &s->xt, &s->vt, &s->gt, &s->f, &s->probe};
    int st = ts_implicit_vectors_new(sys, opt, vecs, sizeof vecs / sizeof *vecs, &s->lin);
    if (st) {
        free(s);
        return st;
    }
    s->opt = *opt;
    s->n = n;
    /* a fixed direction with no symmetry, to probe df/dv */
    for (size_t i = 0; i < n; i++)
        s->probe[i] = sin(1.3 * (double)i + 0.7);
    *scratch = s;
    return TS_OK;
}

/* the reset hook: only the Newton fallback keeps anything (its warm start) */
static void opt_reset(void *scratch)
{
    opt_scratch *s = scratch;
    if (s->newton)
        ts_implicit_reset(s->newton);
}

static void opt_free(void *scratch)
{
    opt_scratch *s = scratch;
    if (!s)
        return;
    ts_implicit_free(s->newton);
    ts_linsolve_free(s->lin);
    free(s->x0); /* the block */
    free(s);
}

/* One step's Newton state (norms of G unless said). */
typedef struct {
    double t1, h, a, beta; /* t + h; a = h^2 (order 1: h); beta = h (order 1: 0) */
    double unit;           /* M^-1 G / unit is M^-1 r of tstep/implicit.h: h (order 1: 1) */
    double tol, mmin;      /* newton_tol; the least mass */
    int use_f;             /* the line search's merit: F (1) or psi (0) */
    int have_g;            /* s->g holds G at s->x already */
    double eta, gprev;     /* the last forcing (0: none yet) and |G|_2 it was for */
    double gnorm, scale;   /* |G|_2 and the stop's scale at the iterate */
    double measure;        /* the residual test's measure at the iterate */
    double upd, gsolved;   /* the last solve's |d|_inf and |G|_2 */
    double uprev;          /* the last step's |d|_inf if a whole Newton step, else 0 */
    double rate;           /* Newton's contraction rate (ts_newton_update_measure) */
    int done;              /* a stop test passed */
} opt_newton;

/* v(x) = (x - x0)/h, pinned velocities kept at v0 (order 2 only) */
static void velocity_of(const opt_scratch *s, const ts_system *sys, double h, const double *x,
                        double *v)
{
    for (size_t i = 0; i < s->n; i++)
        v[i] = sys->pinned && sys->pinned[i] ? s->v0[i] : (x[i] - s->x0[i]) / h;
}

/* G = M (x - x_pred) - a f(x, v(x)), filtered, at the step nw; v(x) into v */
static int scaled_gradient(opt_scratch *s, ts_system *sys, const opt_newton *nw,
                           const double *x, double *v, double *g)
{
    int order2 = sys->order == 2;
    if (order2)
        velocity_of(s, sys, nw->h, x, v);
    int st = ts_system_forces(sys, nw->t1, x, order2 ? v : NULL, s->f);
    if (st)
        return st;
    for (size_t i = 0; i < s->n; i++)
        g[i] = sys->mass[i] * (x[i] - s->xpred[i]) - nw->a * s->f[i];
    ts_system_filter(sys, g);
    return TS_OK;
}

/* A line search's merit at a point, and the size of its round-off. */
typedef struct {
    double phi, round;
} merit;

/* F(x) = 1/(2a) |x - x_pred|_M^2 + E(x) at the step nw (v(x) in s->vt) */
static int objective(opt_scratch *s, ts_system *sys, const opt_newton *nw, const double *x,
                     merit *F)
{
    double q = 0.0, ke, pe, *vt = s->vt;
    for (size_t i = 0; i < s->n; i++)
        q += sys->mass[i] * (x[i] - s->xpred[i]) * (x[i] - s->xpred[i]);
    q /= 2.0 * nw->a;
    if (sys->order == 2)
        velocity_of(s, sys, nw->h, x, vt);
    int st = sys->ops->energy(sys, nw->t1, x, sys->order == 2 ? vt : NULL, &ke, &pe);
    if (st)
        return st;
    F->phi = q + pe;
    F->round = 64.0 * DBL_EPSILON * (q + fabs(pe));
    return isfinite(F->phi) ? TS_OK
                            : ts_error(TS_ERR_DIVERGED, "non-finite energy in the line search");
}

static double residual_merit(const opt_scratch *s, const ts_system *sys, const double *g)
{
    double p = 0.0;
    for (size_t i = 0; i < s->n; i++)
        p += g[i] * g[i] / sys->mass[i];
    return 0.5 * p;
}

/* df/dv is nonzero along the probe at (x0, v0): damping or drag present */
static int velocity_dependent(opt_scratch *s, ts_system *sys, double t, int *dep)
{
    int st;
    *dep = 0;
    if (sys->order == 1)
        return TS_OK;
    if (sys->ops->dfdv_mul)
        st = ts_system_dfdv_mul(sys, t, s->x0, s->v0, s->probe, s->vt);
    else if (!(st = ts_system_linearize(sys, t, s->x0, s->v0, 0.0, 1.0)))
        st = ts_system_jacobian_mul(sys, s->probe, s->vt);
    if (st)
        return st;
    ts_system_filter(sys, s->vt);
    *dep = ts_vec_norm_inf(s->n, s->vt) != 0.0;
    return TS_OK;
}

/* Backtrack from x along d.  Merit F (nw->use_f) or psi; on success x, v,
 * g hold the accepted point (g only for psi: F's caller recomputes it). */
static int line_search(opt_scratch *s, ts_system *sys, const opt_newton *nw, double *alpha_out)
{
    size_t n = s->n;
    int use_f = nw->use_f, st;
    merit m0, m;
    double slope;
    if (use_f) {
        if ((st = objective(s, sys, nw, s->x, &m0)))
            return st;
        slope = ts_vec_dot(n, s->g, s->d) / nw->a; /* grad F . d */
        if (!(slope < 0.0))
            return TS_ERR_NEWTON; /* not a descent direction for F */
    } else {
        m0.phi = residual_merit(s, sys, s->g);
        m0.round = 64.0 * DBL_EPSILON * m0.phi;
        slope = -2.0 * m0.phi;
    }
    double alpha = 1.0;
    for (int k = 0; k <= MAX_HALVINGS; k++, alpha *= 0.5) {
        for (size_t i = 0; i < n; i++)
            s->xt[i] = s->x[i] + alpha * s->d[i];
        if (use_f) {
            if ((st = objective(s, sys, nw, s->xt, &m)))
                return st;
        } else {
            if ((st = scaled_gradient(s, sys, nw, s->xt, s->vt, s->gt)))
                return st;
            m.phi = residual_merit(s, sys, s->gt);
        }
        if (m.phi <= m0.phi + ARMIJO_C1 * alpha * slope + m0.round) {
            ts_vec_copy(n, s->xt, s->x);
            if (!use_f)
                ts_vec_copy(n, s->gt, s->g);
            *alpha_out = alpha;
            return TS_OK;
        }
    }
    return TS_ERR_NEWTON;
}

/* The start: x0, v0 from the system, x = x_pred. */
static void opt_start(opt_scratch *s, const ts_system *sys, double h)
{
    size_t n = s->n;
    int order2 = sys->order == 2;
    ts_vec_copy(n, sys->x, s->x0);
    if (order2)
        ts_vec_copy(n, sys->v, s->v0);
    for (size_t i = 0; i < n; i++)
        s->xpred[i] = s->x0[i] + (order2 && !(sys->pinned && sys->pinned[i]) ? h * s->v0[i] : 0.0);
    ts_vec_copy(n, s->xpred, s->x);
}

/* G at the iterate and the residual test: nw->done when Newton's stop
 * holds or G is at its round-off level. */
static int opt_residual_test(opt_scratch *s, ts_system *sys, opt_newton *nw)
{
    size_t n = s->n;
    int st;
    if (!nw->have_g && (st = scaled_gradient(s, sys, nw, s->x, s->v, s->g)))
        return st;
    nw->have_g = 0;
    double gnoise = 0.0;
    nw->gnorm = ts_vec_norm2(n, s->g);
    for (size_t i = 0; i < n; i++) { /* round-off level of G's entries */
        double r = sys->mass[i] * (fabs(s->x[i]) + fabs(s->xpred[i])) + nw->a * fabs(s->f[i]);
        gnoise += r * r;
    }
    gnoise = 8.0 * DBL_EPSILON * sqrt(gnoise);
    if (sys->order == 2)
        velocity_of(s, sys, nw->h, s->x, s->v);
    nw->scale = ts_newton_scale(sys, s->x, s->v);
    nw->measure = ts_newton_measure(sys, s->g, nw->scale) / nw->unit;
    if (!isfinite(nw->gnorm) || !isfinite(gnoise)) /* overflowed: no test can pass */
        return ts_error(TS_ERR_NEWTON, "Newton: the gradient's norm is %g (round-off "
                                       "level %g)", nw->gnorm, gnoise);
    nw->done = nw->measure <= nw->tol || nw->gnorm <= gnoise;
    return TS_OK;
}

/* The Newton direction (M - a df/dx - beta df/dv) d = -G to the forcing
 * tolerance; *whole = 0 when the solve stopped early (iteration cap,
 * negative curvature): its d if a descent direction, else the scaled
 * steepest descent -M^-1 G. */
static int opt_direction(opt_scratch *s, ts_system *sys, opt_newton *nw, ts_step_stats *stats,
                         int *whole)
{
    size_t n = s->n;
    double unit = nw->unit, rbound = nw->tol * nw->mmin * nw->scale * unit;
    double rstop = ts_newton_rstop(rbound, nw->tol * nw->scale * unit, nw->upd, nw->gsolved);
    nw->eta = nw->eta > 0.0 ? ts_newton_forcing(&s->opt, nw->eta, nw->gnorm, nw->gprev, rstop)
                            : ts_newton_forcing_first(&s->opt, s->lin);
    nw->gprev = nw->gnorm;
    for (size_t i = 0; i < n; i++)
        s->gt[i] = -s->g[i];
    ts_vec_zero(n, s->d);
    ts_linear_problem q = {{nw->t1, s->x, sys->order == 2 ? s->v : NULL, nw->a, nw->beta},
                           s->gt, nw->eta};
    int st = ts_implicit_solve(s->lin, sys, &q, s->d, stats);
    *whole = 1;
    if (st != TS_ERR_LINEAR && st != TS_ERR_INDEFINITE)
        return st;
    *whole = 0;
    if (!(ts_vec_dot(n, s->g, s->d) < 0.0))
        for (size_t i = 0; i < n; i++) /* scaled steepest descent */
            s->d[i] = -s->g[i] / sys->mass[i];
    ts_system_filter(sys, s->d);
    ts_error_clear();
    return TS_OK;
}

/* x += alpha d by the line search on F, or on psi where F is no merit for
 * these forces (it then stays on psi for the step). */
static int opt_search(opt_scratch *s, ts_system *sys, opt_newton *nw, int it, double *alpha)
{
    int st = line_search(s, sys, nw, alpha);
    if (st == TS_ERR_NEWTON && nw->use_f) {
        nw->use_f = 0;
        st = line_search(s, sys, nw, alpha);
    }
    if (st == TS_ERR_NEWTON)
        return ts_error(TS_ERR_NEWTON,
                        "backward-euler-opt: line search found no decrease at Newton "
                        "iteration %d",
                        it);
    nw->have_g = !nw->use_f; /* the psi line search left G at the new x */
    return st;
}

/* Converged (nw->done) when the Newton step passes the update test
 * (ts_newton_update_measure: the step, or the error estimated to be left
 * after a whole step), |d|/h in velocity (order 2) or |d| (order 1) within
 * newton_tol of the state's size: the residual test alone would stall at
 * round-off.  The measure reported is then the update test's. */
static int opt_update_test(opt_scratch *s, ts_system *sys, opt_newton *nw, int whole,
                           const ts_step_stats *stats)
{
    size_t n = s->n;
    double unit = nw->unit;
    nw->upd = ts_vec_norm_inf(n, s->d), nw->gsolved = nw->gnorm;
    if (sys->order == 2)
        velocity_of(s, sys, nw->h, s->x, s->v);
    double dscale = ts_newton_scale(sys, s->x, s->v);
    double dn = (whole ? ts_newton_update_measure(nw->upd, nw->uprev, stats->linear_residual,
                                                  dscale * unit, &nw->rate)
                       : nw->upd) / unit;
    nw->uprev = whole ? nw->upd : 0.0;
    if (!(dn <= nw->tol * dscale))
        return TS_OK;
    nw->measure = dn / dscale; /* no gradient at the new x: nothing would use it */
    nw->done = 1;
    return TS_OK;
}

static int opt_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    opt_scratch *s = scratch;
    if (s->newton)
        return ts_implicit_euler_step(s->newton, sys, t, h, 0, stats);
    int order2 = sys->order == 2, st, damped;
    opt_newton nw = {.t1 = t + h, .h = h, .a = order2 ? h * h : h, .beta = order2 ? h : 0.0,
                     .unit = order2 ? h : 1.0, .tol = s->opt.newton_tol, .mmin = sys->mass[0]};
    for (size_t i = 1; i < s->n; i++)
        nw.mmin = fmin(nw.mmin, sys->mass[i]);
    opt_start(s, sys, h);
    if ((st = velocity_dependent(s, sys, t, &damped)))
        return st;
    nw.use_f = !damped;
    for (int it = 1; !nw.done; it++) {
        if ((st = opt_residual_test(s, sys, &nw)) || nw.done || it > s->opt.newton_max)
            break;
        if ((st = ts_stop_check("Newton")))
            return st;
        stats->newton_iters = it;
        int whole;
        double alpha = 0.0;
        if ((st = opt_direction(s, sys, &nw, stats, &whole)) ||
            (st = opt_search(s, sys, &nw, it, &alpha)) ||
            (st = opt_update_test(s, sys, &nw, whole && alpha == 1.0, stats)))
            return st;
        if (!ts_vec_all_finite(s->n, s->x))
            break;
    }
    if (st)
        return st;
    if (!nw.done)
        return ts_error(TS_ERR_NEWTON,
                        "backward-euler-opt: Newton did not converge in %d iterations "
                        "(residual %.3g, newton-tol %g)",
                        s->opt.newton_max, nw.measure, nw.tol);
    stats->residual = nw.measure;
    ts_vec_copy(s->n, s->x, sys->x);
    if (order2) {
        velocity_of(s, sys, h, s->x, s->v);
        ts_vec_copy(s->n, s->v, sys->v);
    }
    return TS_OK;
}

const ts_stepper_type ts_backward_euler_opt = {
    .name = "backward-euler-opt",
    .summary = "implicit Euler as energy minimization: Newton-CG with a line search",
    .order = 1,
    .flags = TS_IMPLICIT | TS_NEEDS_JACOBIAN,
    .alloc = opt_alloc,
    .step = opt_step,
    .free = opt_free,
    .reset = opt_reset,
};

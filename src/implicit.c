/* The Newton driver for backward Euler; see tstep/implicit.h for the
 * equations.  References: Baraff & Witkin, "Large Steps in Cloth
 * Simulation", SIGGRAPH 1998, sec. 4-5; Kauppila, "Implementing the implicit
 * Euler method for mass-spring systems", sec. 2-3. */
#include <math.h>
#include <stdlib.h>
#include "tstep/implicit.h"
#include "tstep/linalg.h"

typedef struct {
    ts_solver_options opt;
    size_t n;
    double *x0, *v0, *xk, *vk, *w, *wprev, *dw, *rhs, *f, *diag, *tmp, *kwork;
    int have_warm; /* w holds the previous step's solution */
} implicit_scratch;

int ts_implicit_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    size_t n = sys->n;
    implicit_scratch *s = calloc(1, sizeof *s);
    double *block = calloc(20 * n + 1, sizeof *block);
    if (!s || !block) {
        free(s);
        free(block);
        return ts_error(TS_ERR_NOMEM, "implicit solver scratch");
    }
    s->opt = *opt;
    s->n = n;
    double **vecs[] = {&s->x0, &s->v0, &s->xk, &s->vk, &s->w, &s->wprev, &s->dw,
                       &s->rhs, &s->f, &s->diag, &s->tmp};
    for (size_t i = 0; i < sizeof vecs / sizeof *vecs; i++)
        *vecs[i] = block + i * n;
    s->kwork = block + 11 * n; /* 9n: BiCGSTAB's 8n and a saved start */
    *scratch = s;
    return TS_OK;
}

void ts_implicit_free(void *scratch)
{
    implicit_scratch *s = scratch;
    if (!s)
        return;
    free(s->x0); /* the block */
    free(s);
}

const ts_solver_options *ts_implicit_options(const void *scratch)
{
    return &((const implicit_scratch *)scratch)->opt;
}

typedef struct {
    ts_system *sys;
} matvec_ctx;

/* out = (M - J) u with J = alpha df/dx + beta df/dv at the linearization */
static int system_matvec(void *ctx, const double *u, double *out)
{
    ts_system *sys = ((matvec_ctx *)ctx)->sys;
    int s = ts_system_jacobian_mul(sys, u, out);
    if (s)
        return s;
    for (size_t i = 0; i < sys->n; i++)
        out[i] = sys->mass[i] * u[i] - out[i];
    return TS_OK;
}

static int linearize_for_solve(ts_system *sys, double t, const double *x, const double *v,
                               double alpha, double beta, double *diag);

int ts_implicit_solve(ts_system *sys, const ts_solver_options *opt, double t, const double *x,
                      const double *v, double alpha, double beta, const double *rhs, double *sol,
                      double *diag, double *work, long *iters)
{
    size_t n = sys->n;
    double *start = work + 8 * n;
    sys->definite_fix = 0; /* the exact Jacobian first: Newton converges fastest with it */
    int st = linearize_for_solve(sys, t, x, v, alpha, beta, diag);
    if (st)
        return st;
    ts_krylov k = {.tol = opt->cg_tol, .max_iter = opt->cg_max, .diag = diag,
                   .mask = sys->pinned, .work = work};
    matvec_ctx ctx = {sys};
    int it = 0;
    if (sys->jacobian_symmetric) {
        /* save the start: a failed attempt below restarts from it */
        ts_vec_copy(n, sol, start);
        st = ts_cg_solve(n, system_matvec, &ctx, rhs, sol, &k, &it);
        *iters += it;
        if (st != TS_ERR_INDEFINITE)
            return st;
        ts_vec_copy(n, start, sol);
    }
    /* Not symmetric, or symmetric but not positive definite (compressed
     * springs; M - h df/dx on a growing mode x' = a x with h a > 1): CG does
     * not apply.  The exact Newton step by a non-symmetric solver first. */
    it = 0;
    if (n <= TS_DENSE_MAX) /* small: BiCGSTAB can break down */
        st = ts_dense_solve(n, system_matvec, &ctx, rhs, sol, &k, &it);
    else
        st = ts_bicgstab_solve(n, system_matvec, &ctx, rhs, sol, &k, &it);
    *iters += it;
    if (st != TS_ERR_LINEAR || !sys->has_definite_fix)
        return st;
    /* Last, the system's definiteness fix (Choi & Ko 2002, sec. 5: clamped
     * compressed springs): positive definite, so CG applies; a quasi-Newton
     * step, so Newton then converges only linearly. */
    sys->definite_fix = 1;
    st = linearize_for_solve(sys, t, x, v, alpha, beta, diag);
    sys->definite_fix = 0;
    if (st)
        return st;
    ts_vec_copy(n, start, sol);
    it = 0;
    st = ts_cg_solve(n, system_matvec, &ctx, rhs, sol, &k, &it);
    *iters += it;
    return st;
}

/* Linearize at (x, v) and fill the Jacobi diagonal of M - J. */
static int linearize_for_solve(ts_system *sys, double t, const double *x, const double *v,
                               double alpha, double beta, double *diag)
{
    size_t n = sys->n;
    int st = ts_system_linearize(sys, t, x, v, alpha, beta);
    if (st)
        return st;
    if (sys->ops->jacobian_diag) {
        if ((st = sys->ops->jacobian_diag(sys, diag)))
            return st;
        for (size_t i = 0; i < n; i++) {
            diag[i] = sys->mass[i] - diag[i];
            if (!(diag[i] > 0.0)) /* not usable for Jacobi: fall back to M */
                diag[i] = sys->mass[i];
        }
    } else {
        ts_vec_copy(n, sys->mass, diag);
    }
    return TS_OK;
}

/* Linearize at (x, v) and solve (M - J) sol = rhs, sol holding the start. */
static int linear_solve(implicit_scratch *s, ts_system *sys, double t, const double *x,
                        const double *v, double alpha, double beta, double *sol,
                        ts_step_stats *stats)
{
    return ts_implicit_solve(sys, &s->opt, t, x, v, alpha, beta, s->rhs, sol, s->diag, s->kwork,
                             &stats->linear_iters);
}

/* The iterate from the unknown w: order 2 (xk, vk) = (x0 + h (v0 + w), v0 + w),
 * order 1 xk = x0 + w.  Pinned positions stay at x0. */
static void iterate_state(implicit_scratch *s, const ts_system *sys, double h)
{
    size_t n = s->n;
    if (sys->order == 2) {
        for (size_t i = 0; i < n; i++) {
            s->vk[i] = s->v0[i] + s->w[i];
            s->xk[i] = s->x0[i] + h * s->vk[i];
        }
    } else {
        for (size_t i = 0; i < n; i++)
            s->xk[i] = s->x0[i] + s->w[i];
    }
    if (sys->pinned)
        for (size_t i = 0; i < n; i++)
            if (sys->pinned[i])
                s->xk[i] = s->x0[i];
}

/* The iterate from w, and rhs = h f(xk, vk) - M w, the residual of the
 * implicit equation (filtered); *norm its 2-norm. */
static int residual(implicit_scratch *s, ts_system *sys, double t, double h, double *norm)
{
    size_t n = s->n;
    iterate_state(s, sys, h);
    int st = ts_system_forces(sys, t + h, s->xk, sys->order == 2 ? s->vk : NULL, s->f);
    if (st)
        return st;
    for (size_t i = 0; i < n; i++)
        s->rhs[i] = h * s->f[i] - sys->mass[i] * s->w[i];
    ts_system_filter(sys, s->rhs);
    *norm = ts_vec_norm2(n, s->rhs);
    return TS_OK;
}

/* Halvings of a Newton update before it is taken as it is. */
#define TS_NEWTON_BACKTRACKS 10

int ts_implicit_euler_step(void *scratch, ts_system *sys, double t, double h, int linear_only,
                           ts_step_stats *stats)
{
    implicit_scratch *s = scratch;
    size_t n = s->n;
    int order2 = sys->order == 2;
    double alpha = order2 ? h * h : h, beta = order2 ? h : 0.0;
    double *vk = order2 ? s->vk : NULL, *v0 = order2 ? s->v0 : NULL;
    int st;

    ts_vec_copy(n, sys->x, s->x0);
    if (order2)
        ts_vec_copy(n, sys->v, s->v0);
    if (!s->have_warm)
        ts_vec_zero(n, s->w);

    /* First iterate.  Order 2: rhs = h f0 + h^2 df/dx v0 at (x0, v0, t);
     * order 1: rhs = h f(x0, t + h). */
    if ((st = ts_system_forces(sys, order2 ? t : t + h, s->x0, v0, s->f)))
        return st;
    ts_vec_copy(n, s->f, s->rhs);
    ts_vec_scale(n, h, s->rhs);
    if (order2) {
        if ((st = ts_system_dfdx_mul(sys, t, s->x0, s->v0, s->v0, s->tmp)))
            return st;
        ts_vec_axpy(n, h * h, s->tmp, s->rhs);
    }
    ts_system_filter(sys, s->rhs);
    double rhs1 = ts_vec_norm2(n, s->rhs);
    st = linear_solve(s, sys, t, s->x0, v0, alpha, beta, s->w, stats);
    stats->newton_iters = 1;
    if (st) {
        s->have_warm = 0;
        return st;
    }

    /* Newton: stop when the residual of the implicit equation is at the
     * first solve's linear accuracy, or a full update is below newton_tol.
     * Each update is damped by backtracking until the residual norm
     * decreases (Armijo on 1/2 |r|^2; Nocedal & Wright, Numerical
     * Optimization, 2nd ed., 11.5): without it Newton can wander on
     * non-convex problems such as cloth buckling against a collider. */
    int converged = linear_only;
    double rnorm = 0.0;
    if (!converged && (st = residual(s, sys, t, h, &rnorm)))
        return st;
    for (int it = 1; !converged;) {
        if (rnorm <= s->opt.cg_tol * rhs1) {
            converged = 1;
            break;
        }
        if (it >= s->opt.newton_max || !ts_vec_all_finite(n, s->w))
            break;
        stats->newton_iters = ++it;
        ts_vec_zero(n, s->dw);
        st = linear_solve(s, sys, t + h, s->xk, vk, alpha, beta, s->dw, stats);
        if (st) {
            s->have_warm = 0;
            return st;
        }
        double scale = fmax(1.0, ts_vec_norm_inf(n, order2 ? s->vk : s->xk));
        if (ts_vec_norm_inf(n, s->dw) <= s->opt.newton_tol * scale) {
            ts_vec_axpy(n, 1.0, s->dw, s->w); /* a full step this small: converged */
            converged = 1;
            break;
        }
        ts_vec_copy(n, s->w, s->wprev);
        double lambda = 1.0, rtrial = 0.0;
        for (int ls = 0;; ls++) {
            ts_vec_copy(n, s->wprev, s->w);
            ts_vec_axpy(n, lambda, s->dw, s->w);
            if ((st = residual(s, sys, t, h, &rtrial)))
                return st;
            if (rtrial <= (1.0 - 1e-4 * lambda) * rnorm || ls == TS_NEWTON_BACKTRACKS)
                break;
            lambda *= 0.5;
        }
        rnorm = rtrial;
    }
    if (!converged) {
        s->have_warm = 0;
        return ts_error(TS_ERR_NEWTON, "Newton did not converge in %d iterations (tol %g)",
                        s->opt.newton_max, s->opt.newton_tol);
    }
    iterate_state(s, sys, h);
    ts_vec_copy(n, s->xk, sys->x);
    if (order2)
        ts_vec_copy(n, s->vk, sys->v);
    s->have_warm = 1; /* the next step starts its first solve from this w */
    return TS_OK;
}

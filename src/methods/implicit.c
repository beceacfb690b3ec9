/* The Newton driver of the implicit steppers (backward Euler and its
 * variants, implicit midpoint, Crank-Nicolson, BDF2: one loop, the method a
 * table of coefficients, ts_implicit_method); see tstep/implicit.h for the
 * equations.  References: Hairer & Wanner, Solving ODEs II, IV.8 (Newton for
 * implicit Runge-Kutta methods); Baraff & Witkin, "Large Steps in Cloth
 * Simulation", SIGGRAPH 1998, sec. 4-5; Kauppila, "Implementing the implicit
 * Euler method for mass-spring systems", sec. 2-3. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "tstep/implicit.h"
#include "tstep/linalg.h"
#include "tstep/linsolve.h"
#include "tstep/status.h"
#include "core/parallel.h"

/* The scratch holds only what a step needs besides the system's state:
 * the iterate (xk, vk), the unknown w (kept between steps: the next first
 * solve starts from it), the Newton update dw and the residual rhs, 5 n
 * doubles, and f0 = f(ts, x0, v0) only for methods that reuse it in every
 * residual (c0 != 0: Crank-Nicolson).  The start state (x0, v0) is the
 * system's stored state, unchanged until the step ends; the base state is
 * the method's (xhat, vhat) or that stored state; forces are evaluated
 * straight into rhs; a Newton trial w + lambda dw is formed on the fly; the
 * first step's df/dx v0 goes into dw, unused until the first Newton update. */
typedef struct {
    ts_kept_start start; /* first (TS_KEEPS_START): x = dw, v = rhs */
    ts_solver_options opt;
    size_t n;
    double *xk, *vk, *w, *dw, *rhs, *f0; /* f0: NULL unless allocated with keep_f0 */
    const double *x0, *v0, *xhat, *vhat; /* this step's start and base states */
    ts_linsolve *lin; /* the linear solver (tstep/linsolve.h) */
    int have_warm; /* w holds the previous step's solution */
    ts_implicit_method last; /* the method of that step (Newton's predictor) */
} implicit_scratch;

int ts_implicit_vectors_new(const ts_system *sys, const ts_solver_options *opt,
                            double **const *vecs, size_t nvec, ts_linsolve **lin)
{
    size_t n = sys->n;
    double *block = calloc(nvec * n + 1, sizeof *block);
    if (!block)
        return ts_error(TS_ERR_NOMEM, "implicit solver scratch");
    int st = ts_linsolve_new(sys, opt, lin);
    if (st) {
        free(block);
        return st;
    }
    for (size_t i = 0; i < nvec; i++)
        *vecs[i] = block + i * n;
    return TS_OK;
}

int ts_implicit_alloc_with(const ts_system *sys, const ts_solver_options *opt, int keep_f0,
                           void **scratch)
{
    size_t n = sys->n;
    implicit_scratch *s = calloc(1, sizeof *s);
    if (!s)
        return ts_error(TS_ERR_NOMEM, "implicit solver scratch");
    double **vecs[] = {&s->xk, &s->vk, &s->w, &s->dw, &s->rhs, &s->f0};
    int st = ts_implicit_vectors_new(sys, opt, vecs, keep_f0 ? 6 : 5, &s->lin);
    if (st) {
        free(s);
        return st;
    }
    s->opt = *opt;
    s->n = n;
    s->start = (ts_kept_start){.n = n, .x = s->dw, .v = s->rhs};
    *scratch = s;
    return TS_OK;
}

int ts_implicit_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    return ts_implicit_alloc_with(sys, opt, 0, scratch);
}

void ts_implicit_free(void *scratch)
{
    implicit_scratch *s = scratch;
    if (!s)
        return;
    free(s->xk); /* the block */
    ts_linsolve_free(s->lin);
    free(s);
}

void ts_implicit_reset(void *scratch)
{
    ((implicit_scratch *)scratch)->have_warm = 0;
}

const ts_solver_options *ts_implicit_options(const void *scratch)
{
    return &((const implicit_scratch *)scratch)->opt;
}

int ts_implicit_solve(ts_linsolve *ls, ts_system *sys, const ts_linear_problem *q, double *sol,
                      ts_step_stats *stats)
{
    int st = ts_linsolve_setup(ls, sys, &q->at, stats);
    if (st)
        return st;
    return ts_linsolve_solve(ls, sys, q->rhs, sol, q->tol > 0.0 ? q->tol : TS_LINEAR_TOL_DEFAULT,
                             stats);
}

double ts_newton_scale(const ts_system *sys, const double *x, const double *v)
{
    return fmax(1.0, ts_vec_norm_inf(sys->n, sys->order == 2 ? v : x));
}

/* max |r_i| / m_i over chunks of MEASURE_CHUNK entries, one result a chunk
 * (fmax is exact: the same maximum for any split, so for any thread count) */
#define MEASURE_CHUNK 8192
#define MEASURE_PARTS 512
typedef struct {
    size_t n, c;
    const double *r, *m;
    double part[MEASURE_PARTS];
} measure_args;

static void measure_range(void *ctx, size_t k0, size_t k1)
{
    measure_args *g = ctx;
    for (size_t k = k0; k < k1; k++) {
        size_t i1 = (k + 1) * g->c < g->n ? (k + 1) * g->c : g->n;
        double m = 0.0;
        for (size_t i = k * g->c; i < i1; i++)
            m = fmax(m, fabs(g->r[i]) / g->m[i]);
        g->part[k] = m;
    }
}

double ts_newton_measure(const ts_system *sys, const double *r, double scale)
{
    measure_args g = {.n = sys->n, .c = MEASURE_CHUNK, .r = r, .m = sys->mass};
    while (g.c * MEASURE_PARTS < g.n)
        g.c *= 2;
    size_t nc = (g.n + g.c - 1) / g.c;
    TS_PARALLEL(g.n >= ts_threads_min(), nc, measure_range, &g);
    double m = 0.0;
    for (size_t k = 0; k < nc; k++)
        m = fmax(m, g.part[k]);
    return m / scale;
}

/* Eisenstat & Walker, "Choosing the forcing terms in an inexact Newton
 * method", SIAM J. Sci. Comput. 17 (1996), choice 2 with gamma = 0.9,
 * alpha = 2 and its safeguard; capped at TS_FORCING_MAX, and kept above
 * half the stop tolerance relative to |r| (Kelley, Iterative Methods for
 * Linear and Nonlinear Equations, 1995, 6.3), so the last solve is no more
 * accurate than the Newton stop needs.  That floor may exceed the cap, up
 * to TS_FORCING_FLOOR_MAX: near the end the update is measured, not made
 * accurate, and the update test counts the solve's residual (the 100x100
 * falling cloth: 757 CG iterations in 60 steps against 908 with the floor
 * capped at 0.01; docs/solvers.md). */
#define TS_FORCING_FIRST 0.01
#define TS_FORCING_MAX 0.01
#define TS_FORCING_FLOOR_MAX 0.3
double ts_newton_forcing(const ts_solver_options *opt, double eta_prev, double rnorm,
                         double rprev, double rstop)
{
    if (opt->cg_tol > 0.0)
        return opt->cg_tol; /* fixed by the user */
    if (!(eta_prev > 0.0) || !(rprev > 0.0))
        return TS_FORCING_FIRST;
    double ratio = rnorm / rprev;
    double eta = 0.9 * ratio * ratio, safe = 0.9 * eta_prev * eta_prev;
    if (safe > 0.1)
        eta = fmax(eta, safe);
    eta = fmin(eta, TS_FORCING_MAX);
    if (rnorm > 0.0)
        eta = fmax(eta, fmin(TS_FORCING_FLOOR_MAX, 0.5 * rstop / rnorm));
    return fmax(eta, 1e-14);
}

double ts_newton_forcing_first(const ts_solver_options *opt, const ts_linsolve *ls)
{
    if (opt->cg_tol > 0.0)
        return opt->cg_tol;
    if (ls && ls->ptype && ls->ptype->first_forcing > 0.0)
        return ls->ptype->first_forcing;
    return TS_FORCING_FIRST;
}

/* The update test passes on the next update dw = A^-1 r when |dw|_inf <=
 * ubound; |dw|_inf is estimated as |r|_2 times the last solve's ratio
 * upd / rsolved (A changes little between Newton iterations), and the
 * residual aimed at is TS_RSTOP_MARGIN times the one that estimate lets
 * pass: with the floor eta >= rstop / (2 |r|_2) a solve then stops once
 * its own error is about 5 % of ubound, which the update test's error
 * estimate (ts_newton_update_measure) counts.  rbound, the residual test's
 * sufficient norm, is far smaller on stiff systems (the least mass times
 * the tolerance), and alone it drove the last solves far past what
 * measures the update.  The margin 0.1 (against 0.01) took fewer CG
 * iterations on every cloth, stepper and preconditioner measured
 * (docs/solvers.md, The last solve). */
#define TS_RSTOP_MARGIN 0.1
double ts_newton_rstop(double rbound, double ubound, double upd, double rsolved)
{
    if (upd > 0.0 && rsolved > 0.0)
        return fmax(rbound, TS_RSTOP_MARGIN * ubound * rsolved / upd);
    return rbound;
}

/* The update test's measure of a full Newton update of |.|_inf upd,
 * solved to the relative residual linres, the previous full update's being
 * uprev (0: none, or a damped one), the test's scale being scale, *rate
 * the contraction rate remembered from the updates before (0 at a step's
 * start): the smaller of upd itself (the error of the iterate the update
 * corrects) and the error estimated to be left after the update, over the
 * safety factor TS_UPDATE_KAPPA:
 *   ( rho / (1 - rho) upd + linres upd ) / kappa,
 * rho = max(upd / uprev, TS_UPDATE_RATE_MEMORY * the rate before): while
 * Newton contracts the errors left form a geometric series of ratio rho
 * (Hairer & Wanner, Solving ODEs II, IV.8, eq. 8.10-8.11, kappa 0.01 to
 * 0.1); the remembered rate, which one lucky ratio cannot lower at once, is
 * SUNDIALS CVODE's crate = max(0.3 crate, ratio); linres upd is the linear
 * solve's own part, carried to the update in the ratio the solve shows (as
 * ts_newton_rstop does).  With kappa 0.1 and the memory, every step
 * measured ended within 0.45 newton_tol of a tight solve (without them the
 * string and the hair reached 3 times it: docs/solvers.md).  upd alone
 * without a previous update, when rho >= 1, or when upd is within
 * TS_UPDATE_NOISE of the unit roundoff times the scale: there the updates
 * are round-off, whose ratio says nothing of the error left. */
#define TS_UPDATE_KAPPA 0.1
#define TS_UPDATE_RATE_MEMORY 0.3
#define TS_UPDATE_NOISE 1024.0
double ts_newton_update_measure(double upd, double uprev, double linres, double scale,
                                double *rate)
{
    if (uprev > 0.0 && isfinite(upd))
        *rate = fmax(upd / uprev, TS_UPDATE_RATE_MEMORY * *rate);
    double rho = *rate;
    if (!(uprev > 0.0 && rho < 1.0 && linres >= 0.0 &&
          upd > TS_UPDATE_NOISE * DBL_EPSILON * scale))
        return upd;
    return fmin(upd, (rho / (1.0 - rho) * upd + linres * upd) / TS_UPDATE_KAPPA);
}

/* The unknown of a trial: w, or w + lambda dw when dw is given (a Newton
 * trial, formed on the fly as the axpy w += lambda dw would). */
static double trial(const double *w, const double *dw, double lambda, size_t i)
{
    return dw ? w[i] + lambda * dw[i] : w[i];
}

/* iterate_state's and residual's loops over a range of entries, on the team */
typedef struct {
    implicit_scratch *s;
    const ts_system *sys;
    const ts_implicit_method *m;
    const double *w, *dw;
    double lambda;
} iterate_args;

static void iterate_range(void *ctx, size_t i0, size_t i1)
{
    const iterate_args *g = ctx;
    implicit_scratch *s = g->s;
    const ts_implicit_method *m = g->m;
    const double *xhat = s->xhat, *vhat = s->vhat;
    if (g->sys->order == 2) {
        for (size_t i = i0; i < i1; i++) {
            double wi = trial(g->w, g->dw, g->lambda, i);
            s->vk[i] = vhat[i] + m->cv * wi;
            s->xk[i] = xhat[i] + m->px * vhat[i] + m->cx * wi;
        }
    } else {
        for (size_t i = i0; i < i1; i++)
            s->xk[i] = xhat[i] + m->cx * trial(g->w, g->dw, g->lambda, i);
    }
}

/* rhs = gamma f - M w at the trial (f in rhs) */
static void residual_range(void *ctx, size_t i0, size_t i1)
{
    const iterate_args *g = ctx;
    double *rhs = g->s->rhs, gamma = g->m->gamma;
    const double *mass = g->sys->mass;
    for (size_t i = i0; i < i1; i++)
        rhs[i] = gamma * rhs[i] - mass[i] * trial(g->w, g->dw, g->lambda, i);
}

/* The evaluation point from the unknown w + lambda s->dw (lambda 0: w
 * itself, see trial):
 *   order 2: vk = vhat + cv w,  xk = xhat + px vhat + cx w
 *   order 1: xk = xhat + cx w
 * Pinned positions stay at x0. */
static void iterate_state(implicit_scratch *s, const ts_system *sys, const ts_implicit_method *m,
                          const double *w, double lambda)
{
    size_t n = s->n;
    iterate_args g = {s, sys, m, w, lambda != 0.0 ? s->dw : NULL, lambda};
    TS_PARALLEL(n >= ts_threads_min(), n, iterate_range, &g);
    if (sys->pinned)
        for (size_t i = ts_mask_next(sys->pinned, 0, n); i < n;
             i = ts_mask_next(sys->pinned, i + 1, n))
            s->xk[i] = s->x0[i];
}

/* Newton's running quantities (norms are of the residual r unless said). */
typedef struct {
    double alpha, beta; /* d r / d w = -(M - alpha df/dx - beta df/dv) */
    double tol;         /* newton_tol */
    double rbound;      /* |r|_2 <= rbound implies the residual test (the forcing rule's) */
    double eta;         /* the last solve's forcing (0: none yet) */
    double rprev, rnorm;/* |r|_2 before the last update, and now */
    double measure;     /* the residual test's measure at the iterate */
    double upd, rsolved;/* the last solve's |update|_inf, and |r|_2 it solved for */
    double uprev;       /* the last update's |.|_inf if taken whole, else 0 */
    double rate;        /* Newton's contraction rate so far (ts_newton_update_measure) */
    int it;             /* solves in this attempt; stats->newton_iters counts all */
    int first;          /* how the attempt starts (newton_first) */
    int done;           /* the update test passed */
} newton_state;

/* The iterate from the unknown (w, or the trial w + lambda dw when lambda
 * is not 0), and rhs = c0 f0 + gamma f(tf, xk, vk) - M w, the residual of
 * the implicit equation (filtered); ns->rnorm its 2-norm, ns->measure
 * Newton's stop measure |M^-1 r|_inf / max(1, |vk|_inf) (order 1:
 * |xk|_inf). */
static int residual(implicit_scratch *s, ts_system *sys, const ts_implicit_method *m,
                    double lambda, newton_state *ns)
{
    size_t n = s->n;
    iterate_state(s, sys, m, s->w, lambda);
    int st = ts_system_forces(sys, m->tf, s->xk, sys->order == 2 ? s->vk : NULL, s->rhs);
    if (st)
        return st;
    iterate_args g = {s, sys, m, s->w, lambda != 0.0 ? s->dw : NULL, lambda};
    TS_PARALLEL(n >= ts_threads_min(), n, residual_range, &g);
    if (m->c0 != 0.0)
        ts_vec_axpy(n, m->c0, s->f0, s->rhs);
    ts_system_filter(sys, s->rhs);
    ns->rnorm = ts_vec_norm2(n, s->rhs);
    ns->measure = ts_newton_measure(sys, s->rhs, ts_newton_scale(sys, s->xk, s->vk));
    return TS_OK;
}

/* Halvings of a Newton update before it is taken as it is. */
#define TS_NEWTON_BACKTRACKS 10

/* The first iterate's right-hand side and linearization point.
 * m->at_start (one-step methods, the base is the stored state): the
 * Baraff-Witkin first step, everything at the start (x0, v0, ts):
 *   r(0) ~ (c0 + gamma) f0 + gamma px df/dx v0      (order 1: (c0 + gamma) f0)
 * (f at the base point xhat + px vhat replaced by its Taylor expansion about
 * x0, exact for linear forces).  Otherwise Newton from w = 0 at the base
 * point (xb, vb) = (xhat + px vhat, vhat):  r(0) = c0 f0 + gamma f(tf, xb, vb).
 * at->t, x, v: where the first solve linearizes.  dw is free here (the
 * first Newton update zeroes it): it holds df/dx v0, or the w = 0 of the
 * base point. */
static int first_rhs(implicit_scratch *s, ts_system *sys, const ts_implicit_method *m,
                     ts_linear_point *at)
{
    size_t n = s->n;
    int order2 = sys->order == 2, st;
    const double *v0 = order2 ? s->v0 : NULL;
    /* f0 into its own vector when residuals reuse it, else straight into rhs */
    double *f0 = m->c0 != 0.0 ? s->f0 : s->rhs;
    if (m->at_start || m->c0 != 0.0)
        if ((st = ts_system_forces(sys, m->ts, s->x0, v0, f0)))
            return st;
    if (m->at_start) {
        ts_vec_copy(n, f0, s->rhs);
        ts_vec_scale(n, m->c0 + m->gamma, s->rhs);
        if (order2 && m->px != 0.0) {
            if ((st = ts_system_dfdx_mul(sys, m->ts, s->x0, s->v0, s->v0, s->dw)))
                return st;
            ts_vec_axpy(n, m->gamma * m->px, s->dw, s->rhs);
        }
        at->x = s->x0, at->v = v0, at->t = m->ts;
    } else {
        ts_vec_zero(n, s->dw); /* w = 0: the base point */
        iterate_state(s, sys, m, s->dw, 0.0);
        if ((st = ts_system_forces(sys, m->tf, s->xk, order2 ? s->vk : NULL, s->rhs)))
            return st;
        ts_vec_scale(n, m->gamma, s->rhs);
        if (m->c0 != 0.0)
            ts_vec_axpy(n, m->c0, s->f0, s->rhs);
        at->x = s->xk, at->v = order2 ? s->vk : NULL, at->t = m->tf;
    }
    ts_system_filter(sys, s->rhs);
    return TS_OK;
}

/* The previous step's solution w is the predictor when the method's
 * coefficients are the same as that step's (the same method, the same h). */
static int same_method(const ts_implicit_method *a, const ts_implicit_method *b)
{
    return a->gamma == b->gamma && a->c0 == b->c0 && a->cv == b->cv && a->px == b->px &&
           a->cx == b->cx;
}

/* How an attempt starts (newton_first). */
enum {
    FIRST_SOLVE,   /* the solve of first_rhs */
    FIRST_LINEAR,  /* that solve alone, the step (linear_only) */
    FIRST_PREDICT, /* the predictor in s->w */
};

static newton_state newton_begin(const implicit_scratch *s, const ts_system *sys,
                                 const ts_implicit_method *m, int first)
{
    newton_state ns = {.alpha = m->gamma * m->cx,
                       .beta = sys->order == 2 ? m->gamma * m->cv : 0.0,
                       .tol = s->opt.newton_tol, .first = first};
    double mmin = sys->mass[0];
    for (size_t i = 1; i < s->n; i++)
        mmin = fmin(mmin, sys->mass[i]);
    ns.rbound = ns.tol * mmin * ts_newton_scale(sys, s->x0, s->v0);
    return ns;
}

/* The first iterate: from the predictor in s->w (FIRST_PREDICT: its
 * residual only; at least one solve follows, the predictor alone is never
 * the step), else the solve of first_rhs (Baraff-Witkin's step, or w = 0
 * at the base point), which starts from s->w; with FIRST_LINEAR that solve
 * is the step. */
static int newton_first(implicit_scratch *s, ts_system *sys, const ts_implicit_method *m,
                        newton_state *ns, ts_step_stats *stats)
{
    int order2 = sys->order == 2, linear_only = ns->first == FIRST_LINEAR, st;
    if (ns->first == FIRST_PREDICT) {
        if (m->c0 != 0.0 &&
            (st = ts_system_forces(sys, m->ts, s->x0, order2 ? s->v0 : NULL, s->f0)))
            return st;
        if ((st = residual(s, sys, m, 0.0, ns)))
            return st;
        ns->measure = INFINITY;
        return TS_OK;
    }
    ts_linear_point at = {.alpha = ns->alpha, .beta = ns->beta};
    if ((st = first_rhs(s, sys, m, &at)))
        return st;
    ns->rprev = ts_vec_norm2(s->n, s->rhs);
    ns->eta = linear_only ? (s->opt.cg_tol > 0.0 ? s->opt.cg_tol : TS_LINEAR_TOL_DEFAULT)
                          : ts_newton_forcing_first(&s->opt, s->lin);
    ns->it++, stats->newton_iters++;
    ts_linear_problem q = {at, s->rhs, ns->eta};
    if ((st = ts_implicit_solve(s->lin, sys, &q, s->w, stats)))
        return st;
    if (linear_only)
        return TS_OK;
    ns->upd = ns->uprev = ts_vec_norm_inf(s->n, s->w), ns->rsolved = ns->rprev;
    return residual(s, sys, m, 0.0, ns);
}

/* The update dw taken as w + lambda dw, lambda halved until the residual
 * norm decreases enough (Armijo on 1/2 |r|^2; Nocedal & Wright, Numerical
 * Optimization, 2nd ed., 11.5): without it Newton can wander on non-convex
 * problems such as cloth buckling against a collider. */
static int newton_backtrack(implicit_scratch *s, ts_system *sys, const ts_implicit_method *m,
                            newton_state *ns)
{
    double lambda = 1.0, rnorm = ns->rnorm;
    for (int ls = 0;; ls++) { /* trials w + lambda dw, w itself kept until one is taken */
        int st = residual(s, sys, m, lambda, ns);
        if (st)
            return st;
        if (ns->rnorm <= (1.0 - 1e-4 * lambda) * rnorm || ls == TS_NEWTON_BACKTRACKS)
            break;
        lambda *= 0.5;
    }
    ts_vec_axpy(s->n, lambda, s->dw, s->w);
    ns->uprev = lambda == 1.0 ? ns->upd : 0.0;
    ns->rprev = rnorm;
    return TS_OK;
}

/* One Newton iteration from the iterate w: solve for dw to the forcing
 * tolerance; ns->done when the update passes the update test (then taken
 * whole), else take it damped (newton_backtrack). */
static int newton_iterate(implicit_scratch *s, ts_system *sys, const ts_implicit_method *m,
                          newton_state *ns, ts_step_stats *stats)
{
    size_t n = s->n;
    int st;
    ns->it++, stats->newton_iters++;
    double scale = ts_newton_scale(sys, s->xk, s->vk);
    double rstop = ts_newton_rstop(ns->rbound, ns->tol * scale, ns->upd, ns->rsolved);
    ns->eta = ns->eta > 0.0 ? ts_newton_forcing(&s->opt, ns->eta, ns->rnorm, ns->rprev, rstop)
                            : ts_newton_forcing_first(&s->opt, s->lin);
    ts_vec_zero(n, s->dw);
    ts_linear_point at = {m->tf, s->xk, sys->order == 2 ? s->vk : NULL, ns->alpha, ns->beta};
    ts_linear_problem q = {at, s->rhs, ns->eta};
    if ((st = ts_implicit_solve(s->lin, sys, &q, s->dw, stats)))
        return st;
    ns->upd = ts_vec_norm_inf(n, s->dw), ns->rsolved = ns->rnorm;
    double umeasure = ts_newton_update_measure(ns->upd, ns->uprev, stats->linear_residual,
                                               scale, &ns->rate);
    if (umeasure > ns->tol * scale)
        return newton_backtrack(s, sys, m, ns);
    /* The update test passed: converged.  The measure reported is that
     * test's; the residual at the new iterate would cost a force evaluation
     * that nothing uses (the next step starts from its own residual). */
    ts_vec_axpy(n, 1.0, s->dw, s->w);
    ns->measure = umeasure / scale;
    ns->done = 1;
    return TS_OK;
}

/* Newton's iteration for w on the residual
 *   r(w) = c0 f0 + gamma f(tf, xk, vk) - M w,
 * from its first iterate (newton_first), at most newton_max solves, each
 * added to stats->newton_iters.  Converged when
 *   |M^-1 r|_inf <= newton_tol max(1, |vk|_inf)          (order 1: |xk|_inf)
 * at the current iterate, or when a full Newton update dw, solved to its
 * forcing tolerance, passes the update test: its measure
 * (ts_newton_update_measure: |dw|_inf, or ten times the error estimated to
 * be left after it from Newton's contraction and the solve's residual) below
 * the same bound (the residual can stall at round-off above it); never on
 * the linear tolerance.  The linear tolerances follow the Eisenstat-Walker
 * forcing rule unless cg_tol fixes them. */
static int newton_solve(implicit_scratch *s, ts_system *sys, const ts_implicit_method *m,
                        int first, ts_step_stats *stats)
{
    newton_state ns = newton_begin(s, sys, m, first);
    int st = newton_first(s, sys, m, &ns, stats);
    if (st || first == FIRST_LINEAR)
        return st;
    while (!ns.done && !(ns.measure <= ns.tol)) {
        if ((st = ts_stop_check("Newton")))
            return st;
        if (ns.it >= s->opt.newton_max || !ts_vec_all_finite(s->n, s->w))
            return ts_error(TS_ERR_NEWTON,
                            "Newton did not converge in %d iterations (residual %.3g, "
                            "newton-tol %g)",
                            s->opt.newton_max, ns.measure, ns.tol);
        if ((st = newton_iterate(s, sys, m, &ns, stats)))
            return st;
    }
    stats->residual = ns.measure;
    return TS_OK;
}

/* The step's end state over a range (ts_implicit_newton), the start kept in
 * dw and rhs */
typedef struct {
    implicit_scratch *s;
    ts_system *sys;
    const ts_implicit_method *m;
} end_args;

static void end_state_range(void *ctx, size_t i0, size_t i1)
{
    const end_args *g = ctx;
    implicit_scratch *s = g->s;
    ts_system *sys = g->sys;
    const ts_implicit_method *m = g->m;
    int order2 = sys->order == 2;
    for (size_t i = i0; i < i1; i++) {
        /* read before writing: the base may be the stored state itself */
        double xh = s->xhat[i], wi = s->w[i];
        s->dw[i] = sys->x[i];
        if (order2)
            s->rhs[i] = sys->v[i];
        if (sys->pinned && sys->pinned[i])
            continue;
        if (order2) {
            double vh = s->vhat[i];
            sys->v[i] = vh + wi;
            sys->x[i] = xh + m->qx * vh + m->ex * wi;
        } else {
            sys->x[i] = xh + m->ex * wi;
        }
    }
}

int ts_implicit_newton(void *scratch, ts_system *sys, const ts_implicit_method *m,
                       int linear_only, ts_step_stats *stats)
{
    implicit_scratch *s = scratch;
    size_t n = s->n;
    int order2 = sys->order == 2;

    if (m->c0 != 0.0 && !s->f0)
        return ts_error(TS_ERR_UNSUPPORTED,
                        "implicit method with c0 != 0: allocate with ts_implicit_alloc_with(keep_f0)");
    /* the stored state stays as it is until the end state is written */
    s->start.kept = 0;
    s->x0 = sys->x;
    s->v0 = order2 ? sys->v : NULL;
    s->xhat = m->xhat ? m->xhat : s->x0;
    s->vhat = order2 ? (m->vhat ? m->vhat : s->v0) : NULL;
    /* The first iterate (tstep/implicit.h): the previous step's w for a
     * method that asks for it (m->predict) when h and the method are those
     * of that step; else Baraff-Witkin's step or w = 0, whose first solve
     * starts from the previous w if any.  If Newton fails from the
     * predictor, the step is solved again from that first iterate. */
    int predict = m->predict && !linear_only && s->have_warm && same_method(m, &s->last);
    if (!s->have_warm)
        ts_vec_zero(n, s->w);
    s->last = *m;
    s->have_warm = 0; /* until a step is accepted */
    stats->newton_iters = 0;
    int st = newton_solve(s, sys, m,
                          linear_only ? FIRST_LINEAR : predict ? FIRST_PREDICT : FIRST_SOLVE,
                          stats);
    if (predict && (st == TS_ERR_NEWTON || st == TS_ERR_LINEAR || st == TS_ERR_INDEFINITE ||
                    st == TS_ERR_DIVERGED)) {
        ts_vec_zero(n, s->w);
        st = newton_solve(s, sys, m, FIRST_SOLVE, stats);
    }
    if (st)
        return st;
    /* the end state: v1 = vhat + w, x1 = xhat + qx vhat + ex w (order 1:
     * x1 = xhat + ex w); pinned positions stay.  The start state goes into
     * dw (and rhs), which every step has used and no longer needs (xk and
     * vk are left alone: a linearized step never touches them):
     * ts_implicit_restore puts it back if the step is refused after this
     * (TS_KEEPS_START). */
    end_args g = {s, sys, m};
    TS_PARALLEL(n >= ts_threads_min(), n, end_state_range, &g);
    s->start.kept = 1;
    s->have_warm = 1; /* the next step starts from this w */
    return TS_OK;
}

const double *ts_implicit_start_x(const void *scratch)
{
    const implicit_scratch *s = scratch;
    return s->start.kept ? s->start.x : NULL;
}

int ts_implicit_restore(void *scratch, ts_system *sys)
{
    implicit_scratch *s = scratch;
    return ts_kept_start_restore(&s->start, sys);
}

ts_implicit_method ts_implicit_euler_method(const ts_system *sys, double t, double h)
{
    /* x1 = x0 + h v1, v1 = v0 + w, M w = h f(x1, v1); order 1: M w = h f(x0 + w) */
    return (ts_implicit_method){.gamma = h, .ts = sys->order == 2 ? t : t + h, .tf = t + h,
                                .cv = 1.0, .px = h, .cx = sys->order == 2 ? h : 1.0,
                                .qx = h, .ex = sys->order == 2 ? h : 1.0, .at_start = 1,
                                .predict = 1};
}

int ts_implicit_euler_step(void *scratch, ts_system *sys, double t, double h, int linear_only,
                           ts_step_stats *stats)
{
    ts_implicit_method m = ts_implicit_euler_method(sys, t, h);
    return ts_implicit_newton(scratch, sys, &m, linear_only, stats);
}

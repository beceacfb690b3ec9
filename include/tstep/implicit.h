/* tstep/implicit.h - the Newton driver shared by the implicit steppers
 * (backward Euler and its variants, implicit midpoint, Crank-Nicolson, BDF2).
 *
 * Backward Euler, x1 = x0 + h v1, M v1 = M v0 + h f(x1, v1) (order 2), or
 * M x1 = M x0 + h f(x1) (order 1), solved by Newton's method with each linear
 * solve by the chosen solver (tstep/linsolve.h; by default matrix-free
 * preconditioned CG when the Jacobian is symmetric, BiCGSTAB otherwise; a
 * dense solve for a non-symmetric system of at most TS_DENSE_MAX unknowns,
 * where BiCGSTAB can break down), pinned
 * degrees of freedom filtered.  When CG finds the symmetric matrix
 * indefinite (compressed springs), the exact Newton step is taken by
 * BiCGSTAB; only if that fails does the solve fall back to the system's
 * definiteness fix (sys->has_definite_fix: clamped springs, Choi & Ko 2002),
 * whose quasi-Newton steps converge linearly.
 *
 * Order 2, unknown w = v1 - v0 (Baraff & Witkin 1998, eq. 16-18):
 *   first iterate, linearized at (x0, v0):
 *     (M - h df/dv - h^2 df/dx) w = h (f0 + h df/dx v0)
 *   then at the iterate (xk, vk) = (x0 + h (v0 + w), v0 + w):
 *     (M - h df/dv - h^2 df/dx) dw = h f(xk, vk) - M w,   w += dw
 * Order 1, unknown w = x1 - x0:
 *     (M - h df/dx) dw = h f(x0 + w) - M w,   w += dw
 * Newton's stop (never the linear tolerance): with r = h f(xk, vk) - M w
 * (order 1: h f(xk) - M w) the residual of the implicit equation,
 *     |M^-1 r|_inf <= newton_tol * max(1, |vk|_inf)      (order 1: |xk|_inf)
 * at the iterate, or the update test: a full Newton update dw with |dw|_inf
 * below the same bound (the residual can stall at round-off), or whose
 * error estimate is, over a safety factor of 0.1 (the error left after dw:
 * Newton's part rho / (1 - rho) |dw|_inf, rho the contraction Newton shows,
 * |dw|_inf / |previous full update|_inf or 0.3 times the rate before if
 * larger, plus the linear solve's part, its relative residual times
 * |dw|_inf: ts_newton_update_measure).  M^-1 r is in the units of
 * the unknown (a velocity change, or a displacement), so the test reads
 * "the equation is satisfied to newton_tol of the state's size".
 * newton_max caps the number of linear solves.
 * Newton's predictor (methods with m->predict: backward Euler): from the
 * second step on, with h unchanged, Newton starts from the previous step's
 * w (its residual at that w, then a Newton solve linearized there) instead
 * of the first iterate above.  w = v1 - v0 changes by O(h^2) from step to
 * step, while the first iterate linearizes f at the start: on the falling
 * 100 x 100 cloth at h = 1/60 a particle moves h |v| = 0.017 per step, more
 * than a spring's rest length (0.0101), and the first iterate leaves a
 * stop measure of 7 to 20 whatever its linear tolerance, where Newton from
 * the predictor leaves 0.02 to 2 after its first solve: one solve fewer in
 * most steps.  A step always takes at least one solve (the predictor is
 * never the step by itself), and if Newton fails from the predictor the
 * step is solved again from the first iterate.  Not for the implicit
 * midpoint rule and Crank-Nicolson: they keep stiff modes at full
 * amplitude, w flips sign from step to step in them, and Newton from the
 * previous w can reach another root of the implicit equation.
 * Linear tolerances: cg_tol
 * when the user sets it, else the Eisenstat-Walker forcing rule (loose
 * first solves, tighter as Newton converges), never tighter than Newton's
 * stop needs (ts_newton_rstop: the solve whose update ends Newton is only
 * solved well enough to measure that update).  The achieved Newton
 * measure (the residual's, or the update test's when that test stopped
 * Newton and is smaller: ts_step_stats) and the last linear relative
 * residual go to stats->residual and stats->linear_residual.  With
 * linear_only only the first iterate is taken: the linearly implicit
 * ("one-step") Euler of Baraff & Witkin, solved to cg_tol
 * (TS_LINEAR_TOL_DEFAULT when automatic). */
#ifndef TSTEP_IMPLICIT_H
#define TSTEP_IMPLICIT_H

#include "tstep/stepper.h"

/* One implicit step, parameterised by the method (ts_implicit_newton).
 * With the base state (xhat, vhat) (the stored state for one-step methods,
 * a combination of past states for BDF2), f0 = f(ts, x0, v0) at the step's
 * start and the unknown w, the equation solved is
 *     M w = c0 f0 + gamma f(tf, xk, vk)
 *   order 2: vk = vhat + cv w,  xk = xhat + px vhat + cx w;
 *            end state v1 = vhat + w,  x1 = xhat + qx vhat + ex w
 *   order 1: xk = xhat + cx w;  end state x1 = xhat + ex w
 * Newton's matrix is M - alpha df/dx - beta df/dv with alpha = gamma cx,
 * beta = gamma cv (order 1: alpha = gamma cx, beta = 0):
 *   backward Euler  gamma h,   c0 0,   cv 1,   px h,   cx h,     qx h, ex h
 *   implicit mid.   gamma h,   c0 0,   cv 1/2, px h/2, cx h/4,   qx h, ex h/2
 *   Crank-Nicolson  gamma h/2, c0 h/2, cv 1,   px h,   cx h/2,   qx h, ex h/2
 *   BDF2            gamma b h, c0 0,   cv 1,   px bh,  cx bh,    qx bh, ex bh
 * (order 1: cx = 1/2 for the implicit midpoint, 1 otherwise; ex = 1).
 * at_start: the first iterate is linearized at the start (x0, v0, ts), its
 * right-hand side (c0 + gamma) f0 + gamma px df/dx v0 (Baraff & Witkin's
 * step; only for methods whose base is the stored state); otherwise Newton
 * starts from w = 0 at the base point. */
typedef struct {
    double gamma, c0;  /* weights of f(tf, xk, vk) and of f0 */
    double ts, tf;     /* times of f0 and of the implicit evaluation */
    double cv, px, cx; /* the evaluation point */
    double qx, ex;     /* the end state */
    const double *xhat, *vhat; /* the base state (n doubles each), NULL: the stored state */
    int at_start;      /* first iterate linearized at the start (Baraff-Witkin) */
    int predict;       /* Newton from the previous step's w (the predictor, above) */
} ts_implicit_method;

int ts_implicit_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch);
/* The same, with keep_f0 set for methods whose residual reuses f0 (c0 != 0:
 * one more vector); ts_implicit_alloc is this with keep_f0 = 0, and
 * ts_implicit_newton refuses a method with c0 != 0 then.  Scratch: 5 n
 * doubles (6 n with f0) and the linear solver's (tstep/linsolve.h). */
int ts_implicit_alloc_with(const ts_system *sys, const ts_solver_options *opt, int keep_f0,
                           void **scratch);
void ts_implicit_free(void *scratch);
/* The memory of a Newton stepper's scratch (this driver's, and a stepper's
 * own such as backward-euler-opt's): nvec vectors of sys->n doubles,
 * zeroed, in one block, *vecs[i] = block + i n (free(*vecs[0]) frees them
 * all), and the linear solver for sys under opt (tstep/linsolve.h) in
 * *lin.  On failure nothing is left allocated. */
struct ts_linsolve;
int ts_implicit_vectors_new(const ts_system *sys, const ts_solver_options *opt,
                            double **const *vecs, size_t nvec, struct ts_linsolve **lin);
/* The reset hook: forget the last step's solution (the first linear
 * solve's starting guess), so that a run repeats bit for bit. */
void ts_implicit_reset(void *scratch);

/* One step of the method of the system's stored state: Newton as described
 * at the top of this file (stop, forcing, line search), with the method's
 * residual; TS_ERR_NEWTON if it does not converge within newton_max linear
 * solves.  With linear_only only the first iterate is taken. */
int ts_implicit_newton(void *scratch, ts_system *sys, const ts_implicit_method *m,
                       int linear_only, ts_step_stats *stats);

/* After ts_implicit_newton wrote the end state: put the start state back
 * (kept in the scratch's update and residual vectors) and return 1; else
 * (no end state written since the last call) return 0, the stored state
 * being the start.
 * ts_stepper_step calls it for TS_KEEPS_START steppers when the non-finite
 * check or the system's post-step projection fails. */
int ts_implicit_restore(void *scratch, ts_system *sys);
/* The start positions kept after the end state was written, else NULL. */
const double *ts_implicit_start_x(const void *scratch);

/* Backward Euler's method description for a step from t to t + h. */
ts_implicit_method ts_implicit_euler_method(const ts_system *sys, double t, double h);

/* One backward Euler step of the system's stored state; TS_ERR_NEWTON if
 * Newton does not converge within newton_max linear solves. */
int ts_implicit_euler_step(void *scratch, ts_system *sys, double t, double h, int linear_only,
                           ts_step_stats *stats);

/* A linear system of the implicit family: (M - alpha df/dx - beta df/dv)
 * sol = rhs at the point `at`, to the relative residual tol
 * (TS_LINEAR_TOL_DEFAULT if 0). */
typedef struct {
    ts_linear_point at;
    const double *rhs;
    double tol;
} ts_linear_problem;

/* The linear solve every implicit Euler variant shares: linearize at q->at
 * and solve q by the solver object ls (tstep/linsolve.h: ts_linsolve_setup
 * then ts_linsolve_solve, with its fallbacks), pinned degrees of freedom
 * filtered (held at 0 in sol).  sol holds the starting guess;
 * stats->linear_iters is increased by the iterations taken,
 * stats->linear_residual set to the relative residual reached, setup and
 * solve times added. */
int ts_implicit_solve(struct ts_linsolve *ls, ts_system *sys, const ts_linear_problem *q,
                      double *sol, ts_step_stats *stats);

/* Newton's stop measure of a residual r (n entries, in the units of M times
 * the unknown): |M^-1 r|_inf / scale. */
double ts_newton_measure(const ts_system *sys, const double *r, double scale);
/* The scale of the stop test: max(1, |v|_inf) (order 1: max(1, |x|_inf)). */
double ts_newton_scale(const ts_system *sys, const double *x, const double *v);
/* The linear tolerance for the next Newton solve: opt->cg_tol if the user
 * fixed it, else the Eisenstat-Walker forcing term from the previous one
 * (eta_prev, 0 for the first solve) and the residual 2-norms now (rnorm)
 * and before (rprev); rstop is Newton's stop expressed as a 2-norm of r. */
double ts_newton_forcing(const ts_solver_options *opt, double eta_prev, double rnorm,
                         double rprev, double rstop);
/* The linear tolerance of a step's first Newton solve with the solver ls:
 * opt->cg_tol if the user fixed it, else its preconditioner's
 * first_forcing if it has one, else ts_newton_forcing's first (0.01). */
double ts_newton_forcing_first(const ts_solver_options *opt, const struct ts_linsolve *ls);
/* The update test's measure of a full Newton update (in the unknown's
 * units): upd = |dw|_inf, or, when smaller, the error estimated to be left
 * after it over a safety factor kappa = 0.1: (rho / (1 - rho) upd +
 * linres upd) / kappa, rho the contraction, max(upd / uprev, 0.3 *rate),
 * uprev the previous full update (0 when there was none or it was damped),
 * *rate the rate remembered from the updates before (0 at a step's start;
 * updated here), linres the solve's relative residual (Hairer & Wanner II,
 * IV.8; SUNDIALS CVODE's rate test); upd alone when upd is at round-off
 * (at most 1024 times the unit roundoff times scale, the stop test's
 * scale).  Newton stops when it is at most newton_tol * scale. */
double ts_newton_update_measure(double upd, double uprev, double linres, double scale,
                                double *rate);
/* Newton's stop as a 2-norm of r for ts_newton_forcing: rbound, a norm
 * below which the residual test passes, or, when larger, a margin (0.1)
 * below the norm at which the next full update is expected to pass the
 * update test (|update|_inf <= ubound), scaled from the last solve: an
 * update of |.|_inf upd for a residual of 2-norm rsolved (either 0: none
 * yet).  So the solve whose update ends Newton is not solved much tighter
 * than that test needs. */
double ts_newton_rstop(double rbound, double ubound, double upd, double rsolved);

/* The options the scratch was allocated with (newton_max, tolerances). */
const ts_solver_options *ts_implicit_options(const void *scratch);

#endif

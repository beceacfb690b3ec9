/* tstep/implicit.h - the Newton driver shared by the implicit Euler steppers.
 *
 * Backward Euler, x1 = x0 + h v1, M v1 = M v0 + h f(x1, v1) (order 2), or
 * M x1 = M x0 + h f(x1) (order 1), solved by Newton's method with each linear
 * solve matrix-free (Jacobi-preconditioned CG when the Jacobian is
 * symmetric, BiCGSTAB otherwise; a dense solve for a non-symmetric system
 * of at most TS_DENSE_MAX unknowns, where BiCGSTAB can break down), pinned
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
 * Newton stops when the residual h f - M w is within cg_tol of the first
 * right-hand side, or the update is below newton_tol (solver options);
 * newton_max caps the number of linear solves.  With linear_only only the
 * first iterate is taken: the linearly implicit ("one-step") Euler of
 * Baraff & Witkin. */
#ifndef TSTEP_IMPLICIT_H
#define TSTEP_IMPLICIT_H

#include "tstep/stepper.h"

int ts_implicit_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch);
void ts_implicit_free(void *scratch);

/* One backward Euler step of the system's stored state; TS_ERR_NEWTON if
 * Newton does not converge within newton_max linear solves. */
int ts_implicit_euler_step(void *scratch, ts_system *sys, double t, double h, int linear_only,
                           ts_step_stats *stats);

/* The linear solve every implicit Euler variant shares: linearize at
 * (x, v, t) and solve (M - alpha df/dx - beta df/dv) sol = rhs matrix-free,
 * Jacobi-preconditioned (diagonal from jacobian_diag where the system has
 * it, else M), by CG when sys->jacobian_symmetric and BiCGSTAB otherwise,
 * pinned degrees of freedom filtered (held at 0 in sol).  sol holds the
 * starting guess; diag is n doubles and work 9n doubles of scratch;
 * *iters is increased by the iterations taken. */
int ts_implicit_solve(ts_system *sys, const ts_solver_options *opt, double t, const double *x,
                      const double *v, double alpha, double beta, const double *rhs, double *sol,
                      double *diag, double *work, long *iters);

/* The options the scratch was allocated with (newton_max, tolerances). */
const ts_solver_options *ts_implicit_options(const void *scratch);

#endif

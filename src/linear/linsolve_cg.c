/* cg: the preconditioned conjugate gradient method, matrix-free.
 *
 *   r = b - A x, z = P^-1 r, p = z
 *   repeat: alpha = r.z / p.Ap, x += alpha p, r -= alpha Ap,
 *           z = P^-1 r, beta = r.z(new) / r.z(old), p = z + beta p
 *
 * until |r|_2 <= tol |b|_2, with the filter S of Baraff & Witkin (1998,
 * sec. 5.3) on every residual and search direction so pinned entries stay
 * at 0.  A is only ever applied as the system's cached product (Kauppila,
 * "Implementing the implicit Euler method for mass-spring systems", 4.1);
 * P is the chosen preconditioner (--precond).  CG needs A symmetric
 * positive definite: a non-positive curvature p.Ap <= 0 returns
 * TS_ERR_INDEFINITE and the driver falls back (tstep/linsolve.h).
 * Hestenes & Stiefel, J. Res. NBS 49 (1952); Saad, Iterative Methods for
 * Sparse Linear Systems, 2nd ed., 2003, Algorithm 9.1.  The iteration
 * itself is ts_cg_solve (src/core/linalg.c). */
#include "tstep/linsolve.h"

static int cg_solve(void *state, const ts_linsolve *ls, ts_system *sys, ts_linsolve_request *req)
{
    (void)state;
    ts_krylov k;
    ts_linsolve_krylov(ls, sys, req, &k);
    ts_linear_op A = ts_linsolve_op(ls, sys);
    int it = 0;
    int st = ts_cg_solve(&A, req->rhs, req->sol, &k, &it);
    req->iters += it;
    return st;
}

const ts_linsolve_type ts_linsolve_cg = {
    .name = "cg",
    .summary = "preconditioned conjugate gradient, matrix-free (--precond chooses P)",
    .uses_precond = 1,
    .solve = cg_solve,
};

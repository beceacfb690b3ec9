/* direct: sparse Cholesky A = L L^T (with a fill-reducing permutation)
 * through SuiteSparse CHOLMOD.
 *
 *   once per system:     symbolic analysis of A's pattern (AMD / METIS
 *                        ordering, elimination tree, supernodes)
 *   once per setup:      numeric factorization of A at the linearization
 *   once per solve:      L y = P b, L^T z = y, x = P^T z, then up to two
 *                        steps of iterative refinement if |b - A x| > tol |b|
 *
 * A = M - alpha df/dx - beta df/dv is assembled from the system's triplets
 * (tstep/linsolve.h), pinned rows and columns the identity's, so pinned
 * entries of x are exactly 0 (Baraff & Witkin's filter).  If A is not
 * positive definite (compressed springs) the factorization stops at the
 * failing pivot, the solve returns TS_ERR_INDEFINITE and the driver falls
 * back as it does for CG: BiCGSTAB on the exact A, preconditioned by the
 * Cholesky factor of the definiteness fix's matrix (clamped springs) where
 * the system has one (close to A, so a few iterations; Jacobi otherwise),
 * then the definiteness fix itself.
 * One solve counts as one linear iteration.  Its cost grows faster than
 * n (fill-in: nnz(L) is about 9 nnz(A) on a 100 x 100 cloth), so it is for
 * small systems, for exact solves reused across many right-hand sides, and
 * for checking the iterative solvers.  Chen, Davis, Hager & Rajamanickam,
 * "Algorithm 887: CHOLMOD, supernodal sparse Cholesky factorization and
 * update/downdate", ACM TOMS 35(3), 2008; Davis, Direct Methods for Sparse
 * Linear Systems, SIAM 2006. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cholmod.h>
#include "tstep/linsolve.h"
#include "ext/ext.h"

#define TS_DIRECT_REFINE 2

typedef struct {
    cholmod_common c;
    int started;
    cholmod_sparse *A;
    cholmod_factor *L;
    cholmod_dense *B, *X, *Y, *E;
    int factored; /* the last setup's factorization of A succeeded */
    int definite; /* else: F is the factor of the definiteness fix's matrix */
    size_t n;
    const double *diag; /* Jacobi, when there is no factor at all */
    size_t minor; /* the failing column when it did not */
} direct_state;

static void direct_free(void *state)
{
    direct_state *s = state;
    if (!s)
        return;
    if (s->started) {
        cholmod_free_sparse(&s->A, &s->c);
        cholmod_free_factor(&s->L, &s->c);
        cholmod_free_dense(&s->B, &s->c);
        cholmod_free_dense(&s->X, &s->c);
        cholmod_free_dense(&s->Y, &s->c);
        cholmod_free_dense(&s->E, &s->c);
        cholmod_finish(&s->c);
    }
    free(s);
}

static int direct_alloc(const ts_linsolve *ls, const ts_system *sys, void **state)
{
    const ts_sparse *a = ls->A;
    (void)sys;
    if (a->nnz >= (size_t)INT_MAX || a->n >= (size_t)INT_MAX)
        return ts_error(TS_ERR_UNSUPPORTED, "direct: %zu entries is too many", a->nnz);
    direct_state *s = calloc(1, sizeof *s);
    if (!s)
        return ts_error(TS_ERR_NOMEM, "direct solver");
    cholmod_start(&s->c);
    s->started = 1;
    s->n = a->n;
    s->diag = ls->diag;
    s->c.print = 0; /* failures are reported through tstep's status codes */
    s->A = cholmod_allocate_sparse(a->n, a->n, a->nnz, 1, 1, -1, CHOLMOD_REAL, &s->c);
    s->B = cholmod_zeros(a->n, 1, CHOLMOD_REAL, &s->c);
    if (!s->A || !s->B)
        goto fail;
    int *p = s->A->p, *i = s->A->i;
    for (size_t j = 0; j <= a->n; j++)
        p[j] = (int)a->colp[j];
    for (size_t k = 0; k < a->nnz; k++)
        i[k] = (int)a->row[k];
    /* the pattern is fixed: symbolic analyses once */
    s->L = cholmod_analyze(s->A, &s->c);
    if (!s->L)
        goto fail;
    *state = s;
    return TS_OK;
fail:;
    int status = s->c.status;
    direct_free(s);
    return ts_error(TS_ERR_NOMEM, "direct: CHOLMOD could not set up (status %d)", status);
}

static int direct_setup(void *state, const ts_linsolve *ls, ts_system *sys)
{
    direct_state *s = state;
    (void)sys;
    memcpy(s->A->x, ls->A->val, ls->A->nnz * sizeof(double));
    s->c.status = CHOLMOD_OK;
    int ok = cholmod_factorize(s->A, s->L, &s->c);
    s->factored = ok && s->c.status == CHOLMOD_OK && s->L->minor == s->L->n;
    s->minor = s->L->minor;
    if (!ok && s->c.status != CHOLMOD_NOT_POSDEF)
        return ts_error(TS_ERR_NOMEM, "direct: CHOLMOD factorization failed (status %d)",
                        s->c.status);
    s->definite = 0;
    if (s->factored || !sys->has_definite_fix || sys->definite_fix)
        return TS_OK;
    /* A is not positive definite: factor the definiteness fix's matrix
     * (clamped springs), the preconditioner of the exact Newton step by
     * BiCGSTAB in the driver's fallback; the products stay exact. */
    ts_linsolve *w = (ts_linsolve *)ls; /* its A, assembled again */
    sys->definite_fix = 1;
    int st = ts_system_linearize(sys, w->t, w->x, w->v, w->alpha, w->beta);
    sys->definite_fix = 0;
    if (!st)
        st = ts_sparse_assemble(w->A, sys);
    int st2 = ts_system_linearize(sys, w->t, w->x, w->v, w->alpha, w->beta);
    if (st || st2)
        return st ? st : st2;
    memcpy(s->A->x, w->A->val, w->A->nnz * sizeof(double));
    s->c.status = CHOLMOD_OK;
    ok = cholmod_factorize(s->A, s->L, &s->c);
    s->definite = ok && s->c.status == CHOLMOD_OK && s->L->minor == s->L->n;
    return TS_OK;
}

/* x = A^-1 b by the factor */
static int factor_solve(direct_state *s, const double *b, double *x, size_t n)
{
    memcpy(s->B->x, b, n * sizeof *b);
    if (!cholmod_solve2(CHOLMOD_A, s->L, s->B, NULL, &s->X, NULL, &s->Y, &s->E, &s->c))
        return ts_error(TS_ERR_LINEAR, "direct: CHOLMOD solve failed (status %d)", s->c.status);
    memcpy(x, s->X->x, n * sizeof *x);
    return TS_OK;
}

/* the driver's fallback preconditioner: the definite factor, else Jacobi */
static void direct_fallback_apply(void *state, const double *r, double *z)
{
    direct_state *s = state;
    if (!s->definite || factor_solve(s, r, z, s->n))
        for (size_t i = 0; i < s->n; i++)
            z[i] = r[i] / s->diag[i];
}

static int direct_solve(void *state, const ts_linsolve *ls, ts_system *sys,
                        ts_linsolve_request *req)
{
    direct_state *s = state;
    size_t n = ls->n;
    double *sol = req->sol;
    double *b = ls->work, *r = b + n, *d = r + n;
    if (!s->factored)
        return ts_error(TS_ERR_INDEFINITE, "direct: matrix not positive definite (column %zu)",
                        s->minor);
    ts_vec_copy(n, req->rhs, b);
    ts_system_filter(sys, b);
    double bnorm = ts_vec_norm2(n, b);
    int st = factor_solve(s, b, sol, n);
    for (int k = 0; !st; k++) {
        ts_system_filter(sys, sol);
        if ((st = ts_linsolve_matvec(sys, sol, r)))
            break;
        ts_vec_axpby(n, 1.0, b, -1.0, r);
        ts_system_filter(sys, r);
        double rnorm = ts_vec_norm2(n, r);
        req->achieved = bnorm > 0.0 ? rnorm / bnorm : 0.0;
        if (rnorm <= req->tol * bnorm || k == TS_DIRECT_REFINE)
            break;
        if ((st = factor_solve(s, r, d, n))) /* refine: A d = r, x += d */
            break;
        ts_vec_axpy(n, 1.0, d, sol);
    }
    req->iters += 1;
    return st;
}

/* the core's ts_linsolve_direct forwards to this (src/linear/linsolve_direct.c) */
const ts_linsolve_type ts_ext_cholmod = {
    .name = "direct",
    .summary = "sparse Cholesky of the assembled A (SuiteSparse CHOLMOD)",
    .needs_matrix = TS_MATRIX_LOWER,
    .alloc = direct_alloc,
    .setup = direct_setup,
    .solve = direct_solve,
    .fallback_apply = direct_fallback_apply,
    .free = direct_free,
};

/* tstep/linalg.h - dense vector helpers and the matrix-free Krylov solvers.
 *
 * The solvers see the matrix only through a product callback, a diagonal
 * for Jacobi preconditioning, and an optional filter mask: entries with
 * mask[i] != 0 are held at zero in the solution (Baraff & Witkin 1998, sec.
 * 5.3, the modified PCG with S = 0 for constrained degrees of freedom). */
#ifndef TSTEP_LINALG_H
#define TSTEP_LINALG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Threads (OpenMP, from the extension libtstep-ext): the vector helpers
 * below and the spring networks' forces and products run on
 * ts_threads_get() threads, with results bit-identical for any count and
 * without the extension (reductions in fixed chunks whose size depends only
 * on n, combined in order).  ts_threads_set(n) sets the count (n >= 1;
 * TS_ERR_INPUT otherwise; n > 1 loads the extension, TS_ERR_UNSUPPORTED
 * without it); with the extension linked OMP_NUM_THREADS sets the default,
 * without it a program runs on one thread.
 * Loops shorter than ts_threads_min() (default TS_PAR_MIN) stay on one
 * thread, where threads cost more than they save; the tests lower it to run
 * small systems on several threads. */
#define TS_PAR_MIN 16384
int ts_threads_set(int n);
int ts_threads_get(void);
/* With on, a loop takes no more threads than other running tasks leave of
 * the machine's processors, nor than the processors the process may run on
 * (at least one, at most ts_threads_get()), looked at every 20 ms (a change
 * once two looks agree); the same bits either way.  The state is the
 * team's: call the loops from one thread at a time.  Off by default; the
 * tstep program turns it on.
 * ts_threads_usage: the loops that asked for more than one thread since the
 * last ts_threads_set, and how many of them took fewer. */
void ts_threads_follow_load(int on);
void ts_threads_usage(long *loops, long *fewer);
void ts_threads_set_min(size_t n);
size_t ts_threads_min(void);

/* This machine's physical memory in bytes (0 when unknown). */
double ts_memory_physical(void);

/* Vector operations over [0, n).  Arrays may be the same array but must
 * not overlap in part (the loops run in parallel and vectorized); only
 * ts_vec_copy accepts any overlap. */
void ts_vec_zero(size_t n, double *x);
void ts_vec_copy(size_t n, const double *x, double *y);          /* y = x */
void ts_vec_scale(size_t n, double a, double *x);                /* x = a x */
void ts_vec_axpy(size_t n, double a, const double *x, double *y); /* y += a x */
void ts_vec_axpby(size_t n, double a, const double *x, double b, double *y); /* y = a x + b y */
double ts_vec_dot(size_t n, const double *x, const double *y);
double ts_vec_norm2(size_t n, const double *x);
double ts_vec_norm_inf(size_t n, const double *x);
double ts_vec_dist_inf(size_t n, const double *x, const double *y); /* |x - y|_inf */
int ts_vec_all_finite(size_t n, const double *x);

/* The filter: x_i = 0 wherever mask[i] != 0 (mask NULL: nothing). */
void ts_vec_mask(size_t n, const unsigned char *mask, double *x);
/* The first i' in [i, end) with mask[i'] != 0, or end; the mask is read
 * eight entries a load where it is zero (a cloth pins a handful of its
 * particles: a byte-by-byte scan took 2.8% of a backward-Euler run). */
static inline size_t ts_mask_next(const unsigned char *mask, size_t i, size_t end)
{
    for (; i + 8 <= end; i += 8) {
        uint64_t w;
        memcpy(&w, mask + i, sizeof w);
        if (w)
            break;
    }
    for (; i < end && !mask[i]; i++)
        ;
    return i;
}

/* out = A u; returns a status (nonzero aborts the solve with that status). */
typedef int (*ts_matvec_fn)(void *ctx, const double *u, double *out);
/* z = P^-1 r, a preconditioner's apply (tstep/linsolve.h); z is filtered after. */
typedef void (*ts_precond_fn)(void *ctx, const double *r, double *z);

/* The matrix a solver below sees: n unknowns, out = A u by mul(ctx, u, out),
 *   ts_linear_op A = {n, my_mul, &my_data};
 * the matrix is never stored. */
typedef struct {
    size_t n;
    ts_matvec_fn mul;
    void *ctx;
} ts_linear_op;

/* How to solve: fields left 0 mean none (no preconditioner, no filter, no
 * stall test), so a designated initializer names only what it uses,
 *   ts_krylov k = {.tol = 1e-10, .max_iter = 200, .work = work};
 * tol, max_iter and work are required. */
typedef struct {
    double tol;   /* relative: stop when |r|_2 <= tol * |b|_2 (filtered b) */
    int max_iter;
    const double *diag;         /* Jacobi preconditioner diagonal, or NULL */
    ts_precond_fn precond;      /* if not NULL, the preconditioner (diag is then unused) */
    void *precond_ctx;
    const unsigned char *mask;  /* filter: mask[i] != 0 keeps x[i] = 0; or NULL */
    double *work;               /* 3n doubles for CG, 6n for BiCGSTAB */
    double *achieved;           /* if not NULL, receives |r|_2 / |b|_2 at a successful return */
    int stall;                  /* BiCGSTAB: > 0, give up (TS_ERR_LINEAR) when the least
                                   residual so far has not halved in that many iterations;
                                   for a caller with another way to the answer */
} ts_krylov;

/* Preconditioned conjugate gradient for symmetric positive definite A.
 * x holds the initial guess (warm start) and receives the solution.
 * Returns TS_OK, TS_ERR_LINEAR (no convergence within max_iter),
 * TS_ERR_INDEFINITE (p.Ap <= 0: A, or the preconditioned A, is not positive
 * definite), or the matvec's status; *iters the iterations. */
int ts_cg_solve(const ts_linear_op *A, const double *b, double *x, const ts_krylov *k,
                int *iters);

/* Preconditioned BiCGSTAB (van der Vorst 1992) for non-symmetric A; with
 * k->stall, TS_ERR_LINEAR also when it stagnates (see ts_krylov). */
int ts_bicgstab_solve(const ts_linear_op *A, const double *b, double *x, const ts_krylov *k,
                      int *iters);

/* Dense solve for small non-symmetric A: A assembled from n products, then
 * Gaussian elimination with partial pivoting (Golub & Van Loan, 3.4).  Used
 * where BiCGSTAB breaks down, e.g. skew-symmetric A (r.A r = 0), which
 * backward Euler meets on x' = (1 + i omega) x.  Needs n <= TS_DENSE_MAX
 * (k->work holds n^2 + n doubles, within 8n for n <= 7); honours
 * k->mask; ignores tol, max_iter and diag.  TS_ERR_LINEAR if A is singular
 * to working precision; *iters = n products. */
#define TS_DENSE_MAX 7
int ts_dense_solve(const ts_linear_op *A, const double *b, double *x, const ts_krylov *k,
                   int *iters);

#endif

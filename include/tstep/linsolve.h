/* tstep/linsolve.h - the linear solve below Newton: solver and
 * preconditioner objects, chosen by name.
 *
 * Every implicit step solves, at a linearization (x, v, t) with
 * coefficients (alpha, beta),
 *
 *     A sol = rhs,   A = M - alpha df/dx - beta df/dv,
 *
 * with pinned degrees of freedom filtered (Baraff & Witkin 1998, sec. 5.3:
 * A's pinned rows and columns act as the identity, rhs and sol are 0 there).
 * The pattern is SUNDIALS' SUNLinearSolver and GSL's step types: a solver
 * type is a constant table (setup at a linearization, solve, free), a
 * preconditioner type likewise (setup, apply, free); each lives in its own
 * file opening with its algorithm and reference:
 *
 *   solvers          src/linear/linsolve_cg.c        cg: preconditioned CG, matrix-free
 *                    src/ext/linsolve_cholmod.c      direct: sparse Cholesky (CHOLMOD, in
 *                                                    libtstep-ext; src/linear/linsolve_direct.c)
 *   preconditioners  src/linear/precond_jacobi.c     jacobi: the diagonal of A
 *                    src/linear/precond_block_jacobi.c  block-jacobi: A's 3x3 diagonal blocks
 *                    src/linear/precond_ichol.c      ic0: incomplete Cholesky IC(0) of A
 *                    src/linear/precond_amg.c        amg: smoothed-aggregation multigrid
 *
 * and src/linear/linsolve.c holds the registries and the driver every solver
 * shares.  The driver's fallbacks are the same for every choice:
 *   1. symmetric A (sys->jacobian_symmetric): the solver's own solve (CG, or
 *      the Cholesky factor);
 *   2. not symmetric, or the solver found A not positive definite
 *      (TS_ERR_INDEFINITE; compressed springs): the exact Newton step by
 *      BiCGSTAB with the same preconditioner (direct: the factor of the
 *      definiteness fix's matrix where it has one, else Jacobi), or a dense
 *      solve when n <= TS_DENSE_MAX;
 *   3. if that fails and the system has a definiteness fix (clamped
 *      compressed springs, Choi & Ko 2002), relinearize with it, set up
 *      again and repeat 1.
 * Times spent in setups (linearization, preconditioner, factorization) and
 * in solves go to ts_step_stats.setup_seconds and solve_seconds. */
#ifndef TSTEP_LINSOLVE_H
#define TSTEP_LINSOLVE_H

#include <stddef.h>
#include <stdint.h>
#include "tstep/linalg.h"
#include "tstep/stepper.h"

typedef struct ts_linsolve ts_linsolve;

/* what a solver or preconditioner reads of the assembled matrix */
#define TS_MATRIX_LOWER 1
#define TS_MATRIX_FULL 2

/* A preconditioner type.  setup runs at each linearization, after the
 * driver has filled ls->diag (and assembled ls->A when needs_matrix);
 * apply computes z = P^-1 r (the driver filters z after) and must not
 * allocate.  A preconditioner is symmetric positive definite whatever A
 * is (setups fall back, never fail for an indefinite A), so CG and
 * BiCGSTAB can both use it. */
typedef struct ts_precond_type {
    const char *name;
    const char *summary;
    int needs_matrix; /* TS_MATRIX_LOWER: setup reads the assembled lower triangle ls->A;
                         TS_MATRIX_FULL: it takes both triangles where the system's
                         structure gives them (ls->A->full), else the lower one */
    int reads_blocks; /* 1: setup reads the system's blocks (ts_system_ops.blocks) where it
                         has them, and no assembled matrix then (ls->A NULL) */
    int definite;     /* 1: set up from the system's definiteness fix (clamped compressed
                         springs) where it has one, so P is positive definite even where A
                         is not; the solve still uses the exact A */
    int (*alloc)(const ts_linsolve *ls, const ts_system *sys, void **state);
    int (*setup)(void *state, const ts_linsolve *ls, ts_system *sys);
    void (*apply)(void *state, const double *r, double *z);
    void (*free)(void *state); /* accepts NULL */
    /* Optional: 1 to keep the last setup at a new linearization (the driver
     * then skips the assembly and setup), 0 to set up again.  It may read
     * ls->last_iters and ls->last_achieved, the last solve's outcome. */
    int (*reuse)(void *state, const ts_linsolve *ls, ts_system *sys);
    /* Optional: the relative residual of a step's first Newton solve under
     * the automatic linear tolerances (0: TS_FORCING_FIRST, 0.01).  A
     * preconditioner whose iterations are costly and cut the residual
     * several times each may ask less of that solve, which only starts
     * Newton (ts_newton_forcing_first, tstep/implicit.h). */
    double first_forcing;
    /* Optional: the bytes its state holds, as allocated: part[0] its
     * operators (a multigrid's levels), part[1] its transfer operators
     * (prolongators), part[2] its work (vectors, set-up scratch). */
    void (*bytes)(const void *state, size_t part[3]);
} ts_precond_type;

/* One solve of A sol = rhs at the last setup: what the driver asks of a
 * solver and what the solver reports back. */
typedef struct {
    const double *rhs;
    double *sol;     /* the start on entry, the solution on return */
    double tol;      /* the relative residual to reach */
    int iters;       /* increased by the iterations taken */
    double achieved; /* set to |rhs - A sol|_2 / |rhs|_2 where the solver measured it */
} ts_linsolve_request;

/* A linear solver type.  solve is called only for symmetric A, at the last
 * setup: it solves req (A req->sol = req->rhs to req->tol), adds its
 * iterations to req->iters, sets req->achieved, and returns
 * TS_ERR_INDEFINITE when A is not positive definite (the driver then falls
 * back), TS_ERR_LINEAR when it does not converge. */
typedef struct ts_linsolve_type {
    const char *name;
    const char *summary;
    int needs_matrix;  /* 1: setup reads ls->A */
    int uses_precond;  /* 1: the preconditioner option applies */
    int (*alloc)(const ts_linsolve *ls, const ts_system *sys, void **state);
    int (*setup)(void *state, const ts_linsolve *ls, ts_system *sys);
    int (*solve)(void *state, const ts_linsolve *ls, ts_system *sys, ts_linsolve_request *req);
    /* Optional, for a solver without a preconditioner: z ~ A^-1 r from the
     * last setup, the preconditioner of the driver's BiCGSTAB fallback
     * (NULL: Jacobi). */
    void (*fallback_apply)(void *state, const double *r, double *z);
    void (*free)(void *state); /* accepts NULL */
} ts_linsolve_type;

/* The lower triangle (diagonal included) of a symmetric sparse matrix in
 * compressed columns: column j's rows are row[colp[j]] .. row[colp[j+1]-1],
 * ascending, the diagonal first.  With full set, each column holds all its
 * rows, ascending (so also A's rows, compressed): a spring network's
 * matrix for a preconditioner that reads rows (TS_MATRIX_FULL). */
typedef struct {
    size_t n, nnz;   /* n and nnz below 2^32 - 1 */
    int full;
    size_t *colp;
    uint32_t *row;
    double *val;
    /* assembly from the system's triplets (see ts_system_ops.jacobian_triplets) */
    size_t ntrip;
    uint32_t *slot; /* triplet k is subtracted from val[slot[k]]; UINT32_MAX: dropped (pinned) */
    double *tval;  /* the triplets' values */
    double *col_;  /* 2n doubles: products column by column when the system has no triplets */
    /* a system with blocks (ts_system_ops.blocks): pattern and values from
     * its edges, the same matrix bit for bit, with no triplets (slot, tval
     * and col_ NULL) */
    int from_blocks;
} ts_sparse;

/* Largest system assembled from n products (no jacobian_triplets op). */
#define TS_SPARSE_PRODUCTS_MAX 512

/* The pattern of A for `sys`: from its blocks (ts_system_ops.blocks), else
 * from ops->jacobian_triplets, else the full lower triangle when
 * n <= TS_SPARSE_PRODUCTS_MAX; TS_ERR_UNSUPPORTED otherwise. */
int ts_sparse_new(const ts_system *sys, ts_sparse **out);
/* The same, both triangles (a->full) when full and sys has blocks. */
int ts_sparse_new_as(const ts_system *sys, int full, ts_sparse **out);
void ts_sparse_free(ts_sparse *a);
/* A's values at the system's last linearization; pinned rows and columns
 * are the identity's. */
int ts_sparse_assemble(ts_sparse *a, ts_system *sys);
/* out = A u (both triangles). */
void ts_sparse_mul(const ts_sparse *a, const double *u, double *out);

/* The solver object.  Fields are for solver and preconditioner files. */
struct ts_linsolve {
    const ts_linsolve_type *type;
    const ts_precond_type *ptype; /* NULL when the solver takes none */
    void *state, *pstate;
    size_t n;
    int max_iter;  /* linear iteration cap */
    double *diag;  /* n: the diagonal of A at the last setup (entries <= 0 replaced by M) */
    double *work;  /* 9n: Krylov work (8n) and a saved start; a preconditioner's
                      setup may use the first 8n as scratch (no solve is under way) */
    ts_sparse *A;  /* assembled at each setup when the solver or preconditioner needs it */
    /* the last setup's linearization */
    double t, alpha, beta;
    const double *x, *v;
    /* the last solve: iterations and relative residual reached */
    int last_iters;
    double last_achieved;
};

/* Registries (NULL-terminated) and look-up by name (NULL if unknown). */
extern const ts_linsolve_type *const ts_linsolve_registry[];
extern const ts_precond_type *const ts_precond_registry[];
const ts_linsolve_type *ts_linsolve_find(const char *name);
const ts_precond_type *ts_precond_find(const char *name);
#define TS_LINSOLVE(type) extern const ts_linsolve_type type;
#define TS_PRECOND(type) extern const ts_precond_type type;
#include "tstep/linsolvers.h"
#undef TS_LINSOLVE
#undef TS_PRECOND
/* The solver and preconditioner for `sys` under `opt` (opt may be NULL).
 * What opt names is taken as it is (a preconditioner alone means cg); what
 * it leaves NULL is chosen from the system's structure (docs/solvers.md,
 * "The default solver"):
 *  - a spring network (tstep/springs.h) with a banded Jacobian, half-
 *    bandwidth at most TS_BANDED_MAX unknowns (strings, hair): `direct`,
 *    unless a preconditioner or a CG option (cg_tol, cg_max) is given;
 *  - otherwise cg, whose preconditioner, unless given, is `amg` for a spring
 *    network of at least TS_AMG_MIN unknowns that is not banded (cloth)
 *    while amg's memory, about TS_AMG_BYTES_PER_UNKNOWN, fits in half of
 *    the machine's physical memory, else `jacobi`.
 * ptype is NULL for a solver that takes no preconditioner.  why: a short
 * phrase saying which rule chose them (a static string). */
#define TS_BANDED_MAX 32
#define TS_AMG_MIN 1000
#define TS_AMG_BYTES_PER_UNKNOWN 420.0 /* measured: 111 MB for the 300 x 300 cloth */
void ts_linsolve_choose(const ts_system *sys, const ts_solver_options *opt,
                        const ts_linsolve_type **type, const ts_precond_type **ptype,
                        const char **why);

/* A solver for `sys` as ts_linsolve_choose picks it; TS_ERR_UNSUPPORTED if
 * the system cannot provide what it needs (an assembled matrix of a large
 * system without triplets). */
int ts_linsolve_new(const ts_system *sys, const ts_solver_options *opt, ts_linsolve **out);
void ts_linsolve_free(ts_linsolve *ls);

/* Linearize at (x, v, t) for (alpha, beta) and set up the solver and its
 * preconditioner; x and v must stay valid until the last solve. */
int ts_linsolve_setup(ts_linsolve *ls, ts_system *sys, const ts_linear_point *at,
                      ts_step_stats *stats);
/* Solve A sol = rhs at the last setup to relative residual tol, with the
 * fallbacks above; sol holds the start and is 0 at pinned entries after.
 * stats: linear_iters increased, linear_residual set, solve time added. */
int ts_linsolve_solve(ts_linsolve *ls, ts_system *sys, const double *rhs, double *sol,
                      double tol, ts_step_stats *stats);

/* The bytes ls holds, as allocated: part[0] the driver's vectors and the
 * assembled matrix, part[1 .. 3] the preconditioner's (ts_precond_type.bytes;
 * 0 for one without it).  The solver's own state (a CHOLMOD factor) is not
 * counted. */
void ts_linsolve_bytes(const ts_linsolve *ls, size_t part[4]);

/* out = A u at the last setup (the driver's matrix-free product). */
int ts_linsolve_matvec(void *sys, const double *u, double *out);

/* For solver files: the matrix-free A of the last setup, and a Krylov
 * description of req with this solver's preconditioner, the filter and the
 * work (k->achieved points at req->achieved). */
ts_linear_op ts_linsolve_op(const ts_linsolve *ls, ts_system *sys);
void ts_linsolve_krylov(const ts_linsolve *ls, const ts_system *sys, ts_linsolve_request *req,
                        ts_krylov *k);

#endif

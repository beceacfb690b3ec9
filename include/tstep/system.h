/* tstep/system.h - the ParticleSystem interface.
 *
 * A system is what moves.  It is a struct whose first member is a ts_system
 * (the base), whose `ops` points to a constant table of operations:
 *
 *     order 2 (mechanics):     M x'' = f(x, v, t)
 *     order 1 (first order):   M x'  = f(x, t)        (v is unused, NULL)
 *
 * with M the diagonal mass matrix (`mass`, one entry per degree of freedom).
 * The framework derives the first-order view Y' = F(t, Y), with Y = [x; v]
 * and F = [v; M^-1 f] (order 2) or Y = x and F = M^-1 f (order 1), so an
 * explicit Runge-Kutta stepper is written once against Y.
 *
 * Pinned degrees of freedom (`pinned[i]` != 0) never move: the first-order
 * view gives them zero derivative and the implicit solvers filter them out
 * of every linear solve (Baraff & Witkin's modified PCG), so every stepper
 * honours them identically.
 *
 * Forces are always evaluated at the state handed in, never the stored one.
 * Jacobian products are optional; implicit steppers refuse a system without
 * them.  A system may also offer a fast path: linearize once at (x, v) for
 * coefficients (alpha, beta), then answer many products
 * (alpha df/dx + beta df/dv) u from cached blocks.  Without it the framework
 * builds the combined product from dfdx_mul and dfdv_mul. */
#ifndef TSTEP_SYSTEM_H
#define TSTEP_SYSTEM_H

#include <stddef.h>
#include <stdint.h>
#include "tstep/params.h"
#include "tstep/status.h"

typedef struct ts_system ts_system;

/* A capability of a particle system (dim 3) whose Jacobian couples particles
 * pairwise, as a spring network's does: J = alpha df/dx + beta df/dv at the
 * last linearization as 3x3 blocks on a graph.  Edge e couples particles
 * i[e] < j[e] with the symmetric block J_ij = J_ji = B_e; particle p's own
 * block is J_pp = self m_p I - (the sum of B_e over the edges at p).  The
 * assembled solvers and the multigrid preconditioner (tstep/linsolve.h) build
 * their matrices from it without knowing what the system is. */
typedef struct {
    size_t np, ne;           /* particles, edges */
    const uint32_t *i, *j;   /* the edges, sorted by (i, j); a pair may repeat */
    size_t bandwidth;        /* largest |row - col| of a nonzero of J, in unknowns */
    double self;             /* see above (0 for a network without drag) */
    /* B_e as xx xy xz yy yz zz */
    void (*block)(const ts_system *sys, size_t e, double b[6]);
} ts_system_blocks;

typedef struct {
    void (*destroy)(ts_system *sys); /* frees the derived struct; required */

    /* f(x, v, t) into f[n]; required.  Nonzero status on failure. */
    int (*forces)(ts_system *sys, double t, const double *x, const double *v, double *f);

    /* Optional Jacobian products: out = (df/dx) u, out = (df/dv) u at (x, v, t). */
    int (*dfdx_mul)(ts_system *sys, double t, const double *x, const double *v,
                    const double *u, double *out);
    int (*dfdv_mul)(ts_system *sys, double t, const double *x, const double *v,
                    const double *u, double *out);

    /* Optional fast path: cache the Jacobians at (x, v, t), then
     * out = (alpha df/dx + beta df/dv) u from the cache. */
    int (*linearize)(ts_system *sys, double t, const double *x, const double *v,
                     double alpha, double beta);
    int (*jacobian_mul)(ts_system *sys, const double *u, double *out);
    /* Optional: the diagonal of (alpha df/dx + beta df/dv) at the last
     * linearization, for the Jacobi preconditioner (mass alone without it). */
    int (*jacobian_diag)(ts_system *sys, double *diag);
    /* Optional: the diagonal 3x3 blocks of (alpha df/dx + beta df/dv) at the
     * last linearization, 9 per particle, row-major (dim 3 systems), for the
     * block-Jacobi preconditioner. */
    int (*jacobian_block_diag)(ts_system *sys, double *blocks);
    /* Optional: (alpha df/dx + beta df/dv) at the last linearization as
     * triplets (row[k], col[k], val[k]) with row >= col, the lower triangle
     * of the fast path's symmetric matrix, duplicates to be summed.  The
     * pattern (count and positions) is the same at every linearization, so
     * it may be asked before any (val NULL).  Any of row, col, val may be
     * NULL; *count receives the number of triplets.  For the assembled
     * solvers (tstep/linsolve.h). */
    int (*jacobian_triplets)(ts_system *sys, size_t *count, size_t *row, size_t *col,
                             double *val);

    /* Optional: kinetic and potential energy at (x, v). */
    int (*energy)(ts_system *sys, double t, const double *x, const double *v,
                  double *kinetic, double *potential);

    /* Optional: the exact solution at time t (v ignored for order 1). */
    int (*exact)(ts_system *sys, double t, double *x, double *v);

    /* Optional: total linear momentum (3 components) of a particle system. */
    int (*momentum)(ts_system *sys, const double *x, const double *v, double p[3]);

    /* Optional: after an accepted step, project the state (collisions,
     * strain limiting).  Called by the framework, never by steppers. */
    int (*post_step)(ts_system *sys, double t, double *x, double *v);

    /* Optional: the largest relative change of any spring's length between
     * two position vectors, for the adaptive strain rule. */
    double (*max_strain_change)(ts_system *sys, const double *x_old, const double *x_new);

    /* Optional: J as blocks on a graph (ts_system_blocks above), valid at
     * the last linearization (the pattern at any time). */
    int (*blocks)(ts_system *sys, ts_system_blocks *out);
    /* Optional: out = M u - (alpha df/dx + beta df/dv) u at the last
     * linearization in one pass, counted as a Jacobian product; without it
     * the implicit solver forms it from jacobian_mul. */
    int (*shifted_mul)(ts_system *sys, const double *u, double *out);
} ts_system_ops;

typedef struct ts_system_type ts_system_type;

struct ts_system {
    const ts_system_ops *ops;
    const ts_system_type *type;
    int order;           /* 1 or 2 */
    size_t n;            /* degrees of freedom */
    size_t dim;          /* spatial dimension of a particle (3), or 0 if not a particle system */
    size_t frame_row;    /* particles per grid row for frame output (0: one polyline) */
    double *x, *v;       /* the stored state; v is NULL for order 1 */
    double *mass;        /* diagonal of M, n entries, all > 0 */
    unsigned char *pinned; /* n flags, or NULL when nothing is pinned */
    int jacobian_symmetric; /* 1 if the fast path's matrix is symmetric (CG applies); the
                               exact products may add non-symmetric terms that vanish at
                               v = 0, e.g. the position derivative of spring damping */
    int fast_path_approximate; /* 1 if the fast path approximates the Jacobian on purpose
                                  (e.g. clamped compressed springs, Choi & Ko 2002) */
    int has_definite_fix; /* 1 if, with definite_fix set, the fast path modifies the
                             Jacobian so that M - alpha df/dx - beta df/dv is positive
                             definite (springs: clamp compressed springs) */
    int definite_fix;     /* set by the implicit solver before linearize: apply that fix */
    long force_evals;    /* incremented by ts_system_forces */
    long jacobian_products; /* incremented by ts_system_jacobian_mul */
    /* framework-owned scratch */
    double *work_;       /* 2n doubles, only for systems without a fast path */
    const double *lin_x_, *lin_v_;
    double lin_t_, lin_alpha_, lin_beta_;
};

/* A system type: how to make one from parameters. */
struct ts_system_type {
    const char *name;
    const char *summary;
    const ts_param_def *params; /* NULL-terminated table */
    int (*create)(const ts_params *p, ts_system **out);
};

/* --- for system implementers ------------------------------------------ */

/* Allocate the base arrays (x, v for order 2, mass = 1, no pins, scratch)
 * of a system whose derived struct `sys` was already allocated. */
int ts_system_init(ts_system *sys, const ts_system_ops *ops, const ts_system_type *type,
                   int order, size_t n);
/* Allocate the pin flags (all zero). */
int ts_system_alloc_pins(ts_system *sys);
/* Free what ts_system_init allocated (not `sys` itself). */
void ts_system_release(ts_system *sys);

/* --- for everyone -------------------------------------------------------- */

/* Create by type and parameters; ts_system_free accepts NULL. */
int ts_system_new(const ts_system_type *type, const ts_params *p, ts_system **out);
void ts_system_free(ts_system *sys);

int ts_system_forces(ts_system *sys, double t, const double *x, const double *v, double *f);
int ts_system_has_jacobian(const ts_system *sys);
int ts_system_dfdx_mul(ts_system *sys, double t, const double *x, const double *v,
                       const double *u, double *out);
int ts_system_dfdv_mul(ts_system *sys, double t, const double *x, const double *v,
                       const double *u, double *out);
/* Where the implicit family linearizes a system and by how much it shifts:
 * the matrix M - alpha df/dx - beta df/dv at (t, x, v) (v NULL for a
 * first-order system). */
typedef struct {
    double t;
    const double *x, *v;
    double alpha, beta;
} ts_linear_point;

/* Linearize at (x, v, t); x and v must stay valid while products are taken. */
int ts_system_linearize(ts_system *sys, double t, const double *x, const double *v,
                        double alpha, double beta);
int ts_system_jacobian_mul(ts_system *sys, const double *u, double *out);

/* Zero the pinned entries of u (the filter S of Baraff & Witkin). */
void ts_system_filter(const ts_system *sys, double *u);

/* Energy at the stored state; TS_ERR_UNSUPPORTED if the system has none. */
int ts_system_energy(ts_system *sys, double t, double *kinetic, double *potential);

/* --- the first-order view Y' = F(t, Y) ----------------------------------- */

/* Length of Y: n for order 1, 2n for order 2. */
size_t ts_system_ydim(const ts_system *sys);
void ts_system_get_y(const ts_system *sys, double *y);
void ts_system_set_y(ts_system *sys, const double *y);
/* dy = F(t, y); dy must not alias y. */
int ts_system_deriv(ts_system *sys, double t, const double *y, double *dy);
/* The same at Y = [x; v] held in two arrays (order 1: v ignored). */
int ts_system_deriv_xv(ts_system *sys, double t, const double *x, const double *v, double *dy);
/* The exact solution in Y layout; TS_ERR_UNSUPPORTED if unknown. */
int ts_system_exact_y(ts_system *sys, double t, double *y);

#endif

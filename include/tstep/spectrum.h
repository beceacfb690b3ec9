/* tstep/spectrum.h - the spectrum of a system's linearization.
 *
 * At a state (x, v, t) the linearized motion of the free (unpinned) degrees
 * of freedom is the first-order system Y' = A Y with
 *     order 2:  Y = [x; v],  A = [0  I; M^-1 df/dx  M^-1 df/dv]   (2m x 2m)
 *     order 1:  Y = x,       A = M^-1 df/dx                        (m x m)
 * m the number of free degrees of freedom.  A is built column by column from
 * the system's Jacobian products (central differences of forces when it has
 * none).  Its eigenvalues lambda are the modes the stability prediction of
 * tstep/stability.h takes its minimum over.
 *
 * Two methods:
 *   dense    all eigenvalues, LAPACK's dgeev (Hessenberg QR; Anderson et al.,
 *            LAPACK Users' Guide), for m <= TS_SPECTRUM_DENSE_MAX;
 *   arnoldi  the TS_ARNOLDI_NEV eigenvalues of largest modulus by implicitly
 *            restarted Arnoldi (ARPACK's dnaupd/dneupd; Lehoucq, Sorensen &
 *            Yang, ARPACK Users' Guide, 1998) on the products alone, for
 *            larger systems.  Modes below the smallest modulus found
 *            (lambda_floor) are not seen: tstep/stability.h says how sure the
 *            prediction then is.
 * Mode vectors: dense, by inverse iteration on the m x m quadratic pencil
 * lambda^2 I - lambda M^-1 df/dv - M^-1 df/dx (order 2; order 1:
 * M^-1 df/dx - lambda I), LAPACK's zgetrf/zgetrs; arnoldi, ARPACK's Ritz vectors.
 * LAPACK and ARPACK come from the extension, libtstep-ext: without it these
 * functions return TS_ERR_UNSUPPORTED with a message naming it. */
#ifndef TSTEP_SPECTRUM_H
#define TSTEP_SPECTRUM_H

#include <stddef.h>
#include "tstep/system.h"

typedef enum { TS_EIG_AUTO, TS_EIG_DENSE, TS_EIG_ARNOLDI } ts_eig_method;

/* auto: dense up to this many free degrees of freedom (a first-order matrix
 * of 3000 x 3000; dgeev takes about 7 s there on one core), arnoldi above */
#define TS_SPECTRUM_DENSE_MAX 1500
/* arnoldi: eigenvalues wanted (largest modulus), tolerance */
#define TS_ARNOLDI_NEV 64
#define TS_ARNOLDI_TOL 1e-10

typedef struct {
    ts_eig_method method; /* the method used: TS_EIG_DENSE or TS_EIG_ARNOLDI */
    int order;            /* the system's order */
    size_t n, m, dim;     /* dofs, free dofs, first-order dimension (m or 2m) */
    size_t count;         /* eigenvalues in re/im (dense: dim; arnoldi: converged ones) */
    double *re, *im;      /* eigenvalues, complex pairs adjacent (im > 0 first) */
    double lambda_max;    /* largest |lambda| */
    double lambda_floor;  /* arnoldi: smallest |lambda| found (modes below unseen); dense 0 */
    int finite_differences; /* A from differences of forces */
    int iterations;       /* arnoldi: restarts (iparam[2]); dense 0 */
    /* private */
    size_t *free_;        /* the m free indices */
    double *kx_, *kv_;    /* dense: M^-1 df/dx, M^-1 df/dv on free dofs, m x m column-major */
    double *ritz_;        /* arnoldi: Ritz vectors, dim x count */
    double *x_, *v_;      /* the linearization state (copies) */
    double t_;
} ts_spectrum;

/* The spectrum at the system's stored state, time t.  auto picks dense for
 * m <= TS_SPECTRUM_DENSE_MAX.  Free with ts_spectrum_free (accepts a zeroed
 * struct). */
int ts_spectrum_compute(ts_system *sys, double t, ts_eig_method method, ts_spectrum *sp);
void ts_spectrum_free(ts_spectrum *sp);

/* The real mode of eigenvalue k: x and v (n entries each; v ignored and may
 * be NULL for order 1), the real part of the complex eigenvector (phase
 * chosen so its largest x entry is real), pinned entries 0, |x|_inf = 1. */
int ts_spectrum_mode(ts_system *sys, const ts_spectrum *sp, size_t k, double *x, double *v);

/* Where a system is linearized and how its products are taken there: the
 * state (x, v, t) (v NULL for order 1), and the system's own products, or
 * (fd) central differences of forces with eps = cbrt(machine eps)
 * max(1, |z|_inf) / |u|_inf, z = x or v, in work (3n doubles). */
typedef struct {
    ts_system *sys;
    double t;
    const double *x, *v;
    int fd;
    double *work;
} ts_linearization;

/* out = (df/dx) u (which 0) or (df/dv) u (which 1) at the linearization. */
int ts_linearization_mul(const ts_linearization *at, int which, const double *u, double *out);

/* u[0..n) in [-1, 1] from a linear congruential sequence started at seed:
 * deterministic start and seed vectors. */
void ts_fill_pseudo_random(size_t n, unsigned long seed, double *u);

/* Name of a method: "dense (LAPACK dgeev)", "arnoldi (ARPACK)". */
const char *ts_eig_method_name(ts_eig_method m);

#endif

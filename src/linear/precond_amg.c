/* amg: smoothed-aggregation algebraic multigrid, one cycle per apply (a V on
 * the finest two levels, a W below).
 *
 * A smoother (a Chebyshev polynomial in D^-1 A) damps the oscillatory part
 * of the error in a few products; the smooth rest is corrected on a coarser
 * level, recursively, down to a level small enough for a dense Cholesky
 * solve (LAPACK dpotrf).  The levels come from A alone: Vanek, Mandel &
 * Brezina, "Algebraic multigrid by smoothed aggregation for second and
 * fourth order elliptic problems", Computing 56 (1996); for cloth,
 * Tamstorf, Jones & McCormick, "Smoothed aggregation multigrid for cloth
 * simulation", ACM TOG 34(6), 2015; the cycles: Briggs, Henson & McCormick,
 * A Multigrid Tutorial, 2nd ed., SIAM 2000, ch. 3 and 8.
 *
 *  1. Strength: unknowns i and j of the same axis are strongly coupled when
 *     |a_ij| >= theta sqrt(|a_ii a_jj|), theta = 0.08 on the finest level,
 *     halved on each coarser one.  Per axis, because a cloth's A is
 *     anisotropic axis by axis (24 CG iterations against 39 aggregating
 *     whole particles).
 *  2. Aggregation (Vanek et al., sec. 3): greedily, an unknown whose strong
 *     neighbours are all free forms an aggregate with them; leftovers join
 *     a neighbouring aggregate; the rest form their own.  Unknowns with no
 *     strong neighbour (pinned ones) belong to none: the smoother solves them.
 *  3. Tentative prolongator Pt: Pt = 1 on an aggregate's members.
 *  4. Smoothed prolongator P = (I - omega D_F^-1 A_F) Pt with A_F the
 *     filtered matrix (Vanek et al., sec. 4: weak couplings lumped onto the
 *     diagonal), omega = 4 / (3 lmax), lmax Gershgorin's bound; the coarse
 *     operator A_c = P^T A P (Galerkin), so every level is symmetric
 *     positive definite when A is; A_c is summed one fine row of A P at a
 *     time on a pattern found row by row of P^T, never storing A P.
 *
 * The set-up's sweeps over a level's rows (level 0's row lengths, the
 * diagonals, the strength test, Gershgorin's bound, D_F and P's rows in
 * step 4, the patterns of A_F, P and A_c, the Galerkin sums, the
 * single-precision copies, csr_single) run on the thread team in
 * contiguous chunks of rows, one a thread, each chunk with its own buffers
 * for level 0's rows.  A sweep that makes a list a row (the strong
 * neighbours, a pattern) appends its chunks' lists to arrays of their own,
 * joined in chunk order after (lists_join), so every row's list is the one
 * a serial pass makes; the strong bits in the bytes two chunks share are
 * merged after the strength sweep.  The coarse rows whose fine rows of P^T
 * fall in more than one chunk are summed after the others, over those fine
 * rows in order, so every entry adds its terms in one order and the
 * hierarchy is the same bits for any number of threads (300 x 300 cloth,
 * one step: set-up 0.63 s on 2 threads against 0.98 s on one).  The
 * aggregation (sequential by nature) and the Lanczos estimates' vector
 * loops (each about as long as starting a parallel region; their products
 * are the levels' own, on the team) stay on one thread.  The first setup
 * forms level 0's rows in three sweeps with values (the strength test,
 * which also gives D_F^-1 and the bounds the first rebuild reads; P; the
 * Galerkin sums) and two without (the row lengths, A_c's pattern), after
 * one over its diagonal alone (particle_diag); A_F's pattern comes from
 * the strength lists.
 *
 * A spring network's finest A is never assembled: its rows are read from
 * the system's blocks (ts_system_blocks: 3x3 blocks on edges), one
 * particle's three rows at a time, summed as the driver's assembly sums
 * them, so the hierarchy is the one an assembled A gives, bit for bit
 * (blocks_row; 300 x 300 cloth, one step: 111 MB peak resident against
 * 156 MB with the coarse levels' double copies kept and 288 MB with the
 * assembled matrix).  A system without blocks hands its assembled lower
 * triangle, copied into both.
 *
 * The cycle: Chebyshev smoothing (Adams, Brezina, Hu & Tuminaro, J. Comput.
 * Phys. 188, 2003) of degree 1 on every level (a damped Jacobi step) on
 * [lmax/4, lmax] of D^-1 A on the finest level and [lmax/7, lmax] below,
 * the lower end raised to the Lanczos estimate's smallest Ritz value where
 * that is larger; from the second coarse level down (AMG_W_FROM) each
 * level is solved by two cycles (a W below a V).  Every smoother takes D
 * from the matrix the levels were built from (a kept hierarchy's finest:
 * the larger of that and the current A's), since compressed springs can
 * nearly cancel the mass on A's diagonal.  Pre- and post-smoother are the
 * same symmetric polynomial, so the cycle is a symmetric positive definite
 * operator, as CG needs.  The finest level's products are the system's own
 * matrix-free ones; the coarse levels, P and P^T read single-precision
 * copies of the values, kept exactly symmetric, without the Galerkin sums'
 * round-off entries (csr_single); the restriction P^T r runs on the thread
 * team by a plan that keeps each entry's sum in row order (restrict_plan).
 * A coarse level keeps only that copy (its double values and pattern are
 * gone after the set-up; a rebuild sums them again); P keeps both, its
 * values being rebuilt in place.
 *
 * The hierarchy (tens of products' worth to build) is kept across Newton
 * iterations and steps while it works: rebuilt when alpha or beta change,
 * after AMG_REUSE_MAX setups, or when a solve needs more than twice the
 * iterations per digit of the first solve after the last rebuild.  The
 * finest level always uses the current A, so a kept hierarchy makes the
 * preconditioner weaker, never the answer wrong.  Set up from the
 * definiteness fix's matrix (clamped compressed springs, Choi & Ko 2002)
 * where the system has one.  docs/solvers.md (Multigrid) gives the figures
 * behind each choice and what was tried instead. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "precond_amg.h"
#include "core/ext.h"
#include "core/lapack.h"
#include "tstep/linsolve.h"
#include "core/parallel.h"
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TS_NO_AVX2)
#include <immintrin.h>
#define AMG_AVX2 1
#endif

#define AMG_MAX_LEVELS 12
#define AMG_COARSE_MIN 60    /* coarsen while a level has more unknowns */
#define AMG_DENSE_MAX 1500   /* the coarsest level is solved by dense Cholesky up to this size */
#define AMG_THETA 0.08       /* strength threshold on the finest level */
#define AMG_DEGREE 1         /* Chebyshev smoother degree (a damped Jacobi step) */
#define AMG_W_FROM 2         /* levels solved by two cycles (a W-cycle from there down) */
#define AMG_DEGREE_LAST 12   /* on the coarsest when it is not positive definite (no Cholesky) */
#define AMG_CHEB_RATIO 7.0   /* the smoothed range of D^-1 A: [lmax / 7, lmax] */
#define AMG_CHEB_RATIO_FINE 4.0 /* on the finest level: [lmax / 4, lmax] */
#define AMG_LANCZOS 12     /* Lanczos steps estimating the largest eigenvalue of D^-1 A */
#define AMG_REUSE_MAX 200    /* setups a hierarchy serves at most */
#define AMG_CHUNKS 64        /* a set-up sweep's chunks of rows at most (one a thread) */
#define AMG_RESTRICT_CHUNKS 8 /* the restriction's chunks of P's rows (restrict_plan) */
/* A step's first Newton solve to 5e-2 rather than 1e-2 (a cycle cuts the
 * residual about 4 times; that solve only starts Newton): on the falling
 * cloth, 60 steps at dt 1/60, 757 CG iterations and 163 Newton solves
 * against 867 and 144 at 100x100 (a run 7% shorter); 623 and 145 against
 * 681 and 138 at 32x32; 10 steps at 300x300: 220 and 36 against 239 and
 * 33; fewer CG iterations with backward-euler-opt, bdf2, implicit-midpoint
 * and crank-nicolson too.  With jacobi the same change cost 35% more
 * Newton solves and 4% more CG iterations; its default stays. */
#define AMG_FIRST_FORCING 0.05

/* compressed sparse rows: n rows, m columns */
typedef struct {
    size_t n, m;
    size_t *p;
    uint32_t *j;
    double *v;
    float *f;          /* v in single precision, read by the cycle's products, or NULL */
    size_t *fp;        /* f's rows: f holds only the nonzero entries, */
    uint32_t *fj;      /* whose columns are fj (csr_single) */
} csr;

/* How P^T u runs on the thread team (restrict_plan_new): P's rows cut into
 * AMG_RESTRICT_CHUNKS contiguous chunks; owner[j] the chunk whose rows alone
 * have entries in column j, -1 when rows of several do; the entries of those
 * shared columns, in row order: entry shared[q] of row srow[q]. */
typedef struct {
    int8_t *owner;     /* P's m columns, or NULL: the serial pass */
    size_t *shared;
    uint32_t *srow;
    size_t nshared;
} restrict_plan;

typedef struct {
    size_t n;          /* unknowns on this level */
    csr A;             /* the level's matrix: below level 0 its single-precision copy
                          alone after a setup (csr_single) */
    csr P;             /* prolongation from the next level (restriction: P^T) */
    restrict_plan rp;  /* P^T on the thread team */
    int32_t *agg;      /* unknown -> its coarse unknown, -1: none */
    uint8_t *strong;   /* a bit per entry of A: 1 when a strong coupling (off the diagonal) */
    uint8_t *comp;     /* unknown -> its axis (0 without particles) */
    double *dinv;      /* 1 / A_ii */
    size_t pattern;    /* entries of A's pattern (the single copy leaves its zeros out) */
    double lmax;       /* largest eigenvalue of D^-1 A, for the smoother */
    double lmin;       /* the smoothed range's lower end */
    double *r, *d, *t, *x, *b; /* work, n each (x and b on coarse levels) */
    double *wb, *wx;   /* n each on levels >= AMG_W_FROM (the second cycle), else NULL */
} level;

/* Level 0's rows from the system's blocks (ts_system_blocks), one particle's
 * three rows at a time, never stored whole: the neighbours of particle p
 * (itself included, ascending) with their 3x3 blocks of A. */
typedef struct {
    ts_system_blocks g;
    size_t *rstart;    /* np + 1: the edges with j = p are rev[rstart[p] .. rstart[p+1]) */
    uint32_t *rev;     /* ne, by i (a counting sort of the edges by j) */
    size_t *efirst;    /* np + 1: the edges with i = p are efirst[p] .. efirst[p+1] - 1 */
    size_t cap;        /* the most neighbours of a particle, itself included */
    size_t cur;        /* the particle in the buffers, SIZE_MAX: none */
    int cur_values;    /* 1: with its blocks */
    size_t nq, self;   /* its neighbours, and its own position among them */
    uint32_t *q;       /* cap: the neighbours */
    double *blk;       /* 9 cap: their blocks, row-major */
    uint32_t *rj;      /* 3 cap: one row's columns */
    double *rv;        /* 3 cap: its values */
} blocks_rows;

/* one row of a level's matrix: entries k0 .. k0 + len - 1 of its pattern */
typedef struct {
    size_t len, k0;
    const uint32_t *j;
    const double *v;   /* NULL when only the pattern was asked */
} row_view;

typedef struct {
    size_t n;
    int bs;            /* unknowns per node: 3 for particles, else 1 */
    int nlev;          /* levels built (0: not yet) */
    level lev[AMG_MAX_LEVELS];
    double *dense;     /* the coarsest level's Cholesky factor, or NULL */
    double *diag0;     /* level 0's diagonal at the last rebuild, for reuse */
    double gersh0;     /* level 0's Gershgorin bound, from the first setup's strength sweep */
    int diag0_swept;   /* 1: that sweep formed gersh0 and diag0 (not when level 0 is the last) */
    double lam_f;      /* the last strength sweep's largest row sum of |D_F^-1 A_F| */
    size_t *pos;       /* n + 1 entries, SIZE_MAX between uses: sparse products' scatter */
    double *acc;       /* n + 1: a row of A P */
    uint32_t *list;    /* n + 1: its columns */
    int dense_ok;
    const ts_lapack *la; /* the coarse solve and the Ritz values (the extension's LAPACK) */
    int from_blocks;   /* level 0's rows come from the system's blocks (rows); its
                          A holds the row pointers only */
    blocks_rows rows;
    struct row_part *part; /* nparts: a sweep's chunks' row buffers (none: one chunk) */
    int nparts;
    ts_system *sys;    /* the finest level's matrix-free products */
    const double *diag; /* the current A's diagonal (the driver's) */
    double *scratch;   /* 3n: the driver's Krylov work (ts_linsolve.work), for setups */
    /* reuse */
    int ready, uses;
    double alpha, beta, base_per_digit;
} amg_state;

/* --- sparse helpers ---------------------------------------------------------------- */

/* the first of rows [0, n) in chunk c of nc contiguous chunks */
static size_t chunk_start(size_t n, int nc, size_t c)
{
    return n * c / (size_t)nc;
}

/* rows[i] += by for the rows i of chunk c of nc over [0, n): a chunk's
 * list starts moved where its lists were joined */
static void chunk_rows_shift(size_t *rows, size_t n, int nc, int c, ptrdiff_t by)
{
    for (size_t i = chunk_start(n, nc, (size_t)c); i < chunk_start(n, nc, (size_t)c + 1); i++)
        rows[i] = (size_t)((ptrdiff_t)rows[i] + by);
}

static void csr_free(csr *a)
{
    free(a->p);
    free(a->j);
    free(a->v);
    free(a->f);
    free(a->fp);
    free(a->fj);
    memset(a, 0, sizeof *a);
}

static int csr_alloc(csr *a, size_t n, size_t m, size_t nnz)
{
    a->n = n, a->m = m;
    a->p = ts_calloc_team(n + 1, sizeof *a->p);
    a->j = malloc((nnz + 1) * sizeof *a->j);
    a->v = calloc(nnz + 1, sizeof *a->v);
    return a->p && a->j && a->v ? TS_OK : TS_ERR_NOMEM;
}

/* The terms a product adds: its matrix's entries, of the copy it reads. */
static size_t csr_work(const csr *a)
{
    return a->f ? a->fp[a->n] : a->p[a->n];
}

/* out = a u, or out += a u when add; with a's single-precision values
 * where it has them.  Four partial sums a row: one sum's chain of
 * additions bounded the product where the level fits in cache (100x100
 * cloth: this product's share of a run 24% -> 22%, with the single
 * precision values 26% -> 22%; 300x300: 25% -> 21%). */
typedef struct {
    const csr *a;
    const double *u;
    double *out;
    int add;
} mul_args;

/* The coarse products' loop (ts_amg_csr_simd): 0 the plain loop, 1 the
 * gathers where the processor has AVX2, -1 (the default) the gathers on
 * Intel's processors only.  The same bits either way; the gathers shorten
 * the solves on Intel's processors and lengthen them on AMD's, whose
 * gathers are slower than scalar loads (docs/performance.md, The coarse
 * products with gathers). */
static int csr_simd = -1;

void ts_amg_csr_simd(int mode) { csr_simd = mode; }

#ifdef AMG_AVX2
static int csr_gathers(void)
{
    return (csr_simd > 0 || (csr_simd < 0 && __builtin_cpu_is("intel"))) &&
           __builtin_cpu_supports("avx2");
}

/* csr_mul_range's rows [i0, i1) of a single-precision copy with AVX2's
 * gathers, four entries at once: lane l sums the entries k0 + l, k0 + l + 4,
 * ... of a row as s_l does there, each product rounded before it is added
 * (no FMA), and the rest goes into s0: the same operations in the same
 * order, the same bits.  Column indices below 2^31 (the gather's are
 * signed). */
__attribute__((target("avx2"))) static void csr_single_rows_avx2(const mul_args *g, size_t i0,
                                                                 size_t i1)
{
    const csr *a = g->a;
    const float *f = a->f;
    const size_t *rows = a->fp;
    const uint32_t *col = a->fj;
    const double *u = g->u;
    for (size_t i = i0; i < i1; i++) {
        size_t k = rows[i], e = rows[i + 1];
        __m256d acc = _mm256_setzero_pd();
        for (; k + 4 <= e; k += 4) {
            __m128i idx = _mm_loadu_si128((const __m128i *)(const void *)(col + k));
            __m256d x = _mm256_i32gather_pd(u, idx, 8);
            __m256d w = _mm256_cvtps_pd(_mm_loadu_ps(f + k));
            acc = _mm256_add_pd(acc, _mm256_mul_pd(w, x));
        }
        double sum[4];
        _mm256_storeu_pd(sum, acc);
        for (; k < e; k++)
            sum[0] += (double)f[k] * u[col[k]];
        double t = (sum[0] + sum[1]) + (sum[2] + sum[3]);
        g->out[i] = g->add ? g->out[i] + t : t;
    }
}
#endif

static void csr_mul_range(void *c, size_t i0, size_t i1)
{
    const mul_args *g = c;
    const csr *a = g->a;
    const double *u = g->u;
    double *out = g->out;
    int add = g->add;
#ifdef AMG_AVX2
    if (a->f && a->m < ((size_t)1 << 31) && csr_gathers()) {
        csr_single_rows_avx2(g, i0, i1);
        return;
    }
#endif
    const float *f = a->f;
    const double *v = a->v;
    /* the single-precision copy has its own rows and columns (no zeros) */
    const size_t *rows = f ? a->fp : a->p;
    const uint32_t *col = f ? a->fj : a->j;
    for (size_t i = i0; i < i1; i++) {
        size_t k = rows[i], e = rows[i + 1];
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        if (f) {
            for (; k + 4 <= e; k += 4) {
                s0 += (double)f[k] * u[col[k]];
                s1 += (double)f[k + 1] * u[col[k + 1]];
                s2 += (double)f[k + 2] * u[col[k + 2]];
                s3 += (double)f[k + 3] * u[col[k + 3]];
            }
            for (; k < e; k++)
                s0 += (double)f[k] * u[col[k]];
        } else {
            for (; k + 4 <= e; k += 4) {
                s0 += v[k] * u[col[k]];
                s1 += v[k + 1] * u[col[k + 1]];
                s2 += v[k + 2] * u[col[k + 2]];
                s3 += v[k + 3] * u[col[k + 3]];
            }
            for (; k < e; k++)
                s0 += v[k] * u[col[k]];
        }
        double s = (s0 + s1) + (s2 + s3);
        out[i] = add ? out[i] + s : s;
    }
}

static void csr_mul_to(const csr *a, const double *u, double *out, int add)
{
    mul_args g = {a, u, out, add};
    TS_PARALLEL(csr_work(a) >= ts_threads_min(), a->n, csr_mul_range, &g);
}

static void csr_mul(const csr *a, const double *u, double *out)
{
    csr_mul_to(a, u, out, 0);
}

/* P's restriction plan (restrict_plan), for a restriction worth a
 * parallel region: each column's owner over the chunks in order, then the
 * shared columns' entries. */
static int restrict_plan_new(const csr *P, restrict_plan *rp)
{
    *rp = (restrict_plan){0};
    if (!P->f || csr_work(P) < ts_threads_min())
        return TS_OK;
    const int8_t none = AMG_RESTRICT_CHUNKS; /* not reached yet */
    int8_t *o = malloc((P->m + 1) * sizeof *o);
    if (!o)
        return TS_ERR_NOMEM;
    memset(o, none, P->m + 1);
    for (int8_t c = 0; c < AMG_RESTRICT_CHUNKS; c++)
        for (size_t i = chunk_start(P->n, AMG_RESTRICT_CHUNKS, (size_t)c);
             i < chunk_start(P->n, AMG_RESTRICT_CHUNKS, (size_t)c + 1); i++)
            for (size_t k = P->fp[i]; k < P->fp[i + 1]; k++) {
                int8_t *oj = &o[P->fj[k]];
                *oj = *oj == none || *oj == c ? c : -1;
            }
    size_t ns = 0;
    for (size_t k = 0; k < P->fp[P->n]; k++)
        ns += o[P->fj[k]] < 0;
    size_t *sh = malloc((ns + 1) * sizeof *sh);
    uint32_t *sr = malloc((ns + 1) * sizeof *sr);
    if (!sh || !sr) {
        free(o), free(sh), free(sr);
        return TS_ERR_NOMEM;
    }
    ns = 0;
    for (size_t i = 0; i < P->n; i++)
        for (size_t k = P->fp[i]; k < P->fp[i + 1]; k++)
            if (o[P->fj[k]] < 0)
                sh[ns] = k, sr[ns++] = (uint32_t)i;
    *rp = (restrict_plan){o, sh, sr, ns};
    return TS_OK;
}

static void restrict_plan_free(restrict_plan *rp)
{
    free(rp->owner), free(rp->shared), free(rp->srow);
    *rp = (restrict_plan){0};
}

typedef struct {
    const csr *a;
    const int8_t *owner;
    const double *u;
    double *out;
} restrict_args;

/* chunks [c0, c1) of the restriction: each adds its rows' terms to the
 * columns it alone reaches, in row order */
static void restrict_range(void *ctx, size_t c0, size_t c1)
{
    const restrict_args *g = ctx;
    const csr *a = g->a;
    for (size_t c = c0; c < c1; c++)
        for (size_t i = chunk_start(a->n, AMG_RESTRICT_CHUNKS, c);
             i < chunk_start(a->n, AMG_RESTRICT_CHUNKS, c + 1); i++)
            for (size_t k = a->fp[i]; k < a->fp[i + 1]; k++)
                if (g->owner[a->fj[k]] == (int8_t)c)
                    g->out[a->fj[k]] += (double)a->f[k] * g->u[i];
}

/* out = a^T u, every entry summed over a's rows in ascending order as the
 * serial pass does, so the same bits for any number of threads; with a
 * plan and more than one thread, the columns one chunk alone reaches on
 * the team, then the shared ones (on one thread the plan's test of each
 * entry's owner costs more than it saves). */
static void csr_mul_transpose(const csr *a, const restrict_plan *rp, const double *u,
                              double *out)
{
    memset(out, 0, a->m * sizeof *out);
    if (rp->owner && ts_threads_get() > 1) {
        restrict_args g = {a, rp->owner, u, out};
        TS_PARALLEL(1, AMG_RESTRICT_CHUNKS, restrict_range, &g);
        for (size_t q = 0; q < rp->nshared; q++) {
            size_t k = rp->shared[q];
            out[a->fj[k]] += (double)a->f[k] * u[rp->srow[q]];
        }
        return;
    }
    if (a->f) {
        for (size_t i = 0; i < a->n; i++)
            for (size_t k = a->fp[i]; k < a->fp[i + 1]; k++)
                out[a->fj[k]] += (double)a->f[k] * u[i];
        return;
    }
    for (size_t i = 0; i < a->n; i++)
        for (size_t k = a->p[i]; k < a->p[i + 1]; k++)
            out[a->j[k]] += a->v[k] * u[i];
}

/* --- a level's rows ------------------------------------------------------------- */

static int strong_at(const level *L, size_t k)
{
    return L->strong[k >> 3] >> (k & 7) & 1;
}

static int pinned_at(const ts_system *sys, size_t i)
{
    return sys->pinned && sys->pinned[i];
}

/* Particle p's neighbours, itself included, ascending, into the buffers and
 * with values their blocks of A, summed as the driver's assembly
 * (ts_sparse_assemble) sums them, so that the hierarchy is the one an
 * assembled A gives, bit for bit: a neighbour's block is 0 minus the blocks
 * of the edges between the two in their order; p's own block is M minus
 * (self M minus the blocks of p's edges in their order). */
static void particle_rows(blocks_rows *b, const ts_system *sys, size_t p, int values)
{
    static const int full9[9] = {0, 1, 2, 1, 3, 4, 2, 4, 5}; /* (r, c) in xx xy xz yy yz zz */
    const ts_system_blocks *g = &b->g;
    double own[9], e6[6];
    size_t nq = 0;
    for (int k = 0; k < 9; k++)
        own[k] = k % 4 == 0 ? g->self * sys->mass[3 * p + (size_t)k / 3] : 0.0;
    for (int upper = 0; upper < 2; upper++) {
        size_t f0 = upper ? b->efirst[p] : b->rstart[p];
        size_t f1 = upper ? b->efirst[p + 1] : b->rstart[p + 1];
        if (upper)
            b->self = nq, b->q[nq++] = (uint32_t)p;
        for (size_t f = f0; f < f1; f++) {
            size_t e = upper ? f : b->rev[f], q = upper ? g->j[e] : g->i[e];
            if (nq == 0 || b->q[nq - 1] != q) {
                b->q[nq++] = (uint32_t)q;
                if (values)
                    memset(b->blk + 9 * (nq - 1), 0, 9 * sizeof *b->blk);
            }
            if (!values)
                continue;
            g->block(sys, e, e6);
            for (int k = 0; k < 9; k++)
                own[k] -= e6[full9[k]], b->blk[9 * (nq - 1) + k] -= e6[full9[k]];
        }
    }
    for (int k = 0; values && k < 9; k++) /* row a, column c: (a == c ? m : 0) - own_ca */
        b->blk[9 * b->self + k] =
            (k % 4 == 0 ? sys->mass[3 * p + (size_t)k / 3] : 0.0) - own[3 * (k % 3) + k / 3];
    b->nq = nq, b->cur = p, b->cur_values = values;
}

/* Particle p's three diagonal entries of A from its edges' blocks: those
 * of particle_rows' own block (the same subtractions in the same order),
 * without the neighbours' blocks; 1 on a pinned unknown (blocks_row). */
static void particle_diag(const blocks_rows *b, const ts_system *sys, size_t p, double d[3])
{
    const ts_system_blocks *g = &b->g;
    double own[3], e6[6];
    for (int a = 0; a < 3; a++)
        own[a] = g->self * sys->mass[3 * p + (size_t)a];
    for (int upper = 0; upper < 2; upper++) {
        size_t f0 = upper ? b->efirst[p] : b->rstart[p];
        size_t f1 = upper ? b->efirst[p + 1] : b->rstart[p + 1];
        for (size_t f = f0; f < f1; f++) {
            g->block(sys, upper ? f : b->rev[f], e6);
            own[0] -= e6[0], own[1] -= e6[3], own[2] -= e6[5];
        }
    }
    for (int a = 0; a < 3; a++)
        d[a] = pinned_at(sys, 3 * p + (size_t)a) ? 1.0 : sys->mass[3 * p + (size_t)a] - own[a];
}

/* Row i of level 0 from the blocks: a pinned unknown's is the identity's;
 * an unpinned one's has every unpinned unknown of its neighbours. */
static void blocks_row(amg_state *s, blocks_rows *b, size_t i, int values, row_view *r)
{
    const ts_system *sys = s->sys;
    size_t p = i / 3, a = i % 3, len = 0;
    if (b->cur != p || (values && !b->cur_values))
        particle_rows(b, sys, p, values);
    if (pinned_at(sys, i))
        b->rj[len] = (uint32_t)i, b->rv[len++] = 1.0;
    else
        for (size_t t = 0; t < b->nq; t++)
            for (size_t c = 0; c < 3; c++) {
                size_t col = 3 * (size_t)b->q[t] + c;
                if (col != i && pinned_at(sys, col))
                    continue;
                b->rj[len] = (uint32_t)col;
                if (values)
                    b->rv[len] = b->blk[9 * t + 3 * a + c];
                len++;
            }
    const size_t *rp = s->lev[0].A.p;
    *r = (row_view){.len = len, .k0 = rp ? rp[i] : 0, .j = b->rj, .v = values ? b->rv : NULL};
}

/* Row i of level l's matrix (values: with its values, else perhaps without)
 * through the row buffers b (level 0 from the blocks); valid until the
 * next call with b. */
static void row_get_in(amg_state *s, blocks_rows *b, int l, size_t i, int values, row_view *r)
{
    if (l == 0 && s->from_blocks) {
        blocks_row(s, b, i, values, r);
        return;
    }
    const csr *A = &s->lev[l].A;
    size_t k0 = A->p[i];
    *r = (row_view){.len = A->p[i + 1] - k0, .k0 = k0, .j = A->j + k0, .v = A->v + k0};
}

static void row_get(amg_state *s, int l, size_t i, int values, row_view *r)
{
    row_get_in(s, &s->rows, l, i, values, r);
}

static void blocks_rows_free(blocks_rows *b)
{
    free(b->rstart);
    free(b->rev);
    free(b->efirst);
    free(b->q);
    free(b->blk);
    free(b->rj);
    free(b->rv);
    memset(b, 0, sizeof *b);
}

/* The edges by particle (rstart, rev, efirst), the buffers, and the array
 * of level 0's row pointers (blocks_row_starts forms them). */
static int blocks_rows_new(amg_state *s)
{
    blocks_rows *b = &s->rows;
    const ts_system_blocks *g = &b->g;
    size_t np = g->np;
    b->rstart = calloc(np + 2, sizeof *b->rstart);
    b->efirst = calloc(np + 2, sizeof *b->efirst);
    b->rev = malloc((g->ne + 1) * sizeof *b->rev);
    csr *A = &s->lev[0].A;
    A->n = A->m = s->n;
    A->p = calloc(s->n + 1, sizeof *A->p);
    if (!b->rstart || !b->efirst || !b->rev || !A->p)
        return TS_ERR_NOMEM;
    for (size_t e = 0; e < g->ne; e++)
        b->rstart[g->j[e] + 1]++, b->efirst[g->i[e] + 1]++;
    for (size_t p = 0; p < np; p++)
        b->rstart[p + 1] += b->rstart[p], b->efirst[p + 1] += b->efirst[p];
    /* rev and A's row pointers are filled serially below and in
     * blocks_row_starts: their pages first touched on the team */
    ts_parallel_touch(b->rev, g->ne * sizeof *b->rev);
    ts_parallel_touch(A->p, (s->n + 1) * sizeof *A->p);
    size_t *fill = A->p; /* scratch until the row pointers */
    memcpy(fill, b->rstart, np * sizeof *fill);
    for (size_t e = 0; e < g->ne; e++)
        b->rev[fill[g->j[e]]++] = (uint32_t)e;
    b->cap = 1;
    for (size_t p = 0; p < np; p++) {
        size_t deg = b->rstart[p + 1] - b->rstart[p] + b->efirst[p + 1] - b->efirst[p] + 1;
        b->cap = deg > b->cap ? deg : b->cap;
    }
    b->q = malloc(b->cap * sizeof *b->q);
    b->blk = malloc(9 * b->cap * sizeof *b->blk);
    b->rj = malloc(3 * b->cap * sizeof *b->rj);
    b->rv = malloc(3 * b->cap * sizeof *b->rv);
    if (!b->q || !b->blk || !b->rj || !b->rv)
        return TS_ERR_NOMEM;
    b->cur = SIZE_MAX;
    return TS_OK;
}

/* --- set-up sweeps on the thread team ------------------------------------------- */

/* A sweep chunk's copy of the row buffers (the edge index shared), on
 * cache lines of its own: its thread writes them at every particle, and
 * a line shared with another thread's buffers or with the state would
 * pass between the cores at each write.  Chunk 0 has one too, so that no
 * sweep writes the state. */
#define AMG_LINE 64
struct row_part {
    _Alignas(AMG_LINE) blocks_rows b;
};

static blocks_rows *chunk_rows(amg_state *s, int nc, int c)
{
    return nc > 1 ? &s->part[c].b : &s->rows;
}

static void *line_alloc(size_t bytes)
{
    return aligned_alloc(AMG_LINE, (bytes + AMG_LINE - 1) / AMG_LINE * AMG_LINE);
}

static void parts_free(amg_state *s)
{
    for (int c = 0; c < s->nparts; c++) {
        free(s->part[c].b.q);
        free(s->part[c].b.blk);
        free(s->part[c].b.rj);
        free(s->part[c].b.rv);
    }
    free(s->part);
    s->part = NULL, s->nparts = 0;
}

/* Row buffers for a chunk a thread, refreshed from s->rows at every setup
 * (the blocks change); one chunk when out of memory, which changes no
 * result. */
static void parts_sync(amg_state *s)
{
    int want = ts_threads_get();
    want = want < 2 ? 0 : want > AMG_CHUNKS ? AMG_CHUNKS : want;
    if (want != s->nparts) {
        parts_free(s);
        size_t cap = s->rows.cap ? s->rows.cap : 1;
        if (want && (s->part = line_alloc((size_t)want * sizeof *s->part))) {
            memset(s->part, 0, (size_t)want * sizeof *s->part);
            s->nparts = want;
        }
        for (int c = 0; c < s->nparts; c++) {
            blocks_rows *b = &s->part[c].b;
            b->q = line_alloc(cap * sizeof *b->q);
            b->blk = line_alloc(9 * cap * sizeof *b->blk);
            b->rj = line_alloc(3 * cap * sizeof *b->rj);
            b->rv = line_alloc(3 * cap * sizeof *b->rv);
            if (!b->q || !b->blk || !b->rj || !b->rv) {
                parts_free(s);
                break;
            }
        }
    }
    for (int c = 0; c < s->nparts; c++) {
        blocks_rows *b = &s->part[c].b, own = *b;
        *b = s->rows;
        b->q = own.q, b->blk = own.blk, b->rj = own.rj, b->rv = own.rv;
        b->cur = SIZE_MAX;
    }
}

/* fn over rows [i0, i1) of chunk c with that chunk's row buffers b */
typedef void (*sweep_fn)(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0, size_t i1);

typedef struct {
    amg_state *s;
    size_t n;
    int nc;
    sweep_fn fn;
    void *ctx;
} sweep_args;

static void sweep_range(void *ctx, size_t c0, size_t c1)
{
    const sweep_args *g = ctx;
    for (size_t c = c0; c < c1; c++)
        g->fn(g->s, chunk_rows(g->s, g->nc, (int)c), g->ctx, (int)c, chunk_start(g->n, g->nc, c),
              chunk_start(g->n, g->nc, c + 1));
}

/* The chunks a sweep of so much work (its rows, or the entries it reads
 * where a row's work varies) cuts its rows into. */
static int sweep_chunks(const amg_state *s, size_t work)
{
    return work >= ts_threads_min() && s->nparts > 1 ? s->nparts : 1;
}

/* fn over rows [0, n) in sweep_chunks(s, work) contiguous chunks, one a
 * thread: each row is computed the same way whichever chunk holds it.
 * Returns the number of chunks. */
static int sweep_work(amg_state *s, size_t n, size_t work, sweep_fn fn, void *ctx)
{
    sweep_args g = {s, n, sweep_chunks(s, work), fn, ctx};
    TS_PARALLEL(g.nc > 1, (size_t)g.nc, sweep_range, &g);
    return g.nc;
}

static int sweep(amg_state *s, size_t n, sweep_fn fn, void *ctx)
{
    return sweep_work(s, n, n, fn, ctx);
}

/* One chunk's part of a sweep's lists: its rows' entries in row order, on
 * cache lines of its own (its thread writes len at every entry). */
struct list_part {
    _Alignas(AMG_LINE) uint32_t *j;
    size_t len, cap;
    int nomem;
};

/* Lists by row built in a sweep (a row's pattern, its strong neighbours):
 * the chunk of row i appends its entries to its part and their end within
 * the part to p[i + 1]; lists_join makes one array of them, row i's being
 * j[p[i] .. p[i + 1]), as a serial pass over the rows appends them. */
typedef struct {
    size_t n;  /* rows */
    int nc;    /* the sweep's chunks (sweep_work's) */
    size_t *p; /* n + 1, p[0] = 0 */
    struct list_part part[AMG_CHUNKS];
} lists;

/* Lists of n rows into p, about hint entries in all. */
static void lists_init(lists *ls, const amg_state *s, size_t n, size_t *p, size_t hint)
{
    memset(ls, 0, sizeof *ls);
    ls->n = n, ls->p = p;
    for (int c = 0; c < AMG_CHUNKS; c++)
        ls->part[c].cap = hint / (size_t)(s->nparts > 1 ? s->nparts : 1) + 16;
}

/* Append q to the part (its first entry allocates the part's initial cap);
 * out of memory, the part is marked and q dropped. */
static void list_push(struct list_part *lp, uint32_t q)
{
    if (!lp->j || lp->len == lp->cap) {
        size_t cap = lp->j ? 2 * lp->cap : lp->cap;
        uint32_t *nj = lp->nomem ? NULL : realloc(lp->j, cap * sizeof *nj);
        if (!nj) {
            lp->nomem = 1;
            return;
        }
        lp->j = nj, lp->cap = cap;
    }
    lp->j[lp->len++] = q;
}

/* Append q to row i's list unless mark[q] == i (there already). */
static void list_add(struct list_part *lp, size_t *mark, size_t i, uint32_t q)
{
    if (mark[q] == i)
        return;
    mark[q] = i;
    list_push(lp, q);
}

typedef struct {
    const lists *ls;
    uint32_t *all;
    const size_t *off; /* each part's first entry in all */
} join_args;

/* entries [e0, e1) of those after part 0 copied to all from their parts */
static void join_range(void *ctx, size_t e0, size_t e1)
{
    const join_args *g = ctx;
    size_t base = g->ls->part[0].len;
    for (int c = 1; c < g->ls->nc; c++) {
        size_t a = g->off[c] - base, b = a + g->ls->part[c].len;
        size_t lo = a > e0 ? a : e0, hi = b < e1 ? b : e1;
        if (lo < hi)
            memcpy(g->all + base + lo, g->ls->part[c].j + (lo - a), (hi - lo) * sizeof *g->all);
    }
}

/* The parts as one array *j (part 0's, grown to size; the others' entries
 * copied after it on the team), each row's end in p offset by the parts
 * before its chunk; out of memory in any part, every part freed and
 * TS_ERR_NOMEM. */
static int lists_join(lists *ls, uint32_t **j)
{
    size_t total = 0, off[AMG_CHUNKS];
    int nomem = 0;
    for (int c = 0; c < ls->nc; c++)
        off[c] = total, total += ls->part[c].len, nomem |= ls->part[c].nomem;
    uint32_t *all = nomem ? NULL : realloc(ls->part[0].j, (total + 1) * sizeof *all);
    if (all) {
        size_t rest = total - ls->part[0].len;
        join_args g = {ls, all, off};
        ls->part[0].j = NULL;
        TS_PARALLEL(rest >= ts_threads_min(), rest, join_range, &g);
        for (int c = 1; c < ls->nc; c++)
            chunk_rows_shift(ls->p + 1, ls->n, ls->nc, c, (ptrdiff_t)off[c]);
    }
    for (int c = 0; c < ls->nc; c++)
        free(ls->part[c].j);
    if (!all)
        return TS_ERR_NOMEM;
    *j = all;
    return TS_OK;
}

/* positions [0, m] of mark unused (SIZE_MAX), as the scatters expect them */
static void marks_clear(size_t *mark, size_t m)
{
    for (size_t q = 0; q <= m; q++)
        mark[q] = SIZE_MAX;
}

/* A sweep chunk's scratch of m + 1 positions, all SIZE_MAX: the state's
 * pos (SIZE_MAX between uses) for chunk 0, its own for the others; NULL
 * when out of memory. */
static size_t *marks_get(amg_state *s, int c, size_t m)
{
    size_t *mark = c ? malloc((m + 1) * sizeof *mark) : s->pos;
    if (mark && c)
        marks_clear(mark, m);
    return mark;
}

/* marks_get's scratch given back (the state's all SIZE_MAX again) */
static void marks_put(amg_state *s, int c, size_t *mark, size_t m)
{
    if (c) {
        free(mark);
        return;
    }
    marks_clear(s->pos, m);
}

/* rows [i0, i1) of level 0: the lengths blocks_row gives them into A->p[i
 * + 1] (an unpinned row holds its particle's neighbours' unpinned
 * unknowns and itself) */
static void row_lengths(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0, size_t i1)
{
    size_t *len = s->lev[0].A.p + 1, p = SIZE_MAX, pinned = 0;
    (void)ctx, (void)c;
    for (size_t i = i0; i < i1; i++) {
        if (i / 3 != p) {
            particle_rows(b, s->sys, p = i / 3, 0);
            pinned = 0;
            for (size_t t = 0; t < b->nq; t++)
                for (size_t a = 0; a < 3; a++)
                    pinned += (size_t)pinned_at(s->sys, 3 * (size_t)b->q[t] + a);
        }
        len[i] = pinned_at(s->sys, i) ? 1 : 3 * b->nq - pinned;
    }
}

/* Level 0's row pointers from the blocks: the rows' lengths on the team,
 * then their sums */
static void blocks_row_starts(amg_state *s)
{
    size_t *rp = s->lev[0].A.p;
    sweep(s, s->n, row_lengths, NULL);
    rp[0] = 0;
    for (size_t i = 0; i < s->n; i++)
        rp[i + 1] += rp[i];
}

/* a's values in single precision, which the cycle's products read (8
 * bytes an entry with its column instead of 12, for products bound by
 * memory beyond the caches; a preconditioner needs no more digits, and on the
 * 100x100 and 300x300 cloths the CG iterations are the same).  With sym
 * (a square matrix of symmetric pattern, a coarse level's P^T A P) entry
 * (j, i) takes the rounded value of (i, j), i < j, so that the cycle
 * stays exactly symmetric, as CG needs, though the Galerkin sums of the
 * two differ in their last bits; and the entries that single precision
 * cannot tell from zero beside their diagonals, |a_ij| <= 2^-24
 * sqrt(a_ii a_jj), are left out, their magnitudes added to both
 * diagonals (a positive semidefinite change: the level stays positive
 * definite).  Those are the Galerkin sums' cancellations: on the 100x100
 * falling cloth 41,000 of the first coarse level's 193,000 nonzero
 * entries, all below 10^-15 of their diagonals; without them a run's
 * solves took 6% less time, in as many CG iterations.  diag: a->n
 * doubles of scratch (sym only).  With sym the single copy takes the
 * place of the double values and their pattern, which are gone after
 * (a coarse level keeps 8 bytes an entry, 12 while converting); without,
 * a copy beside them (P, whose values a rebuild sums again).  On the
 * thread team: the diagonals, the symmetric copy and the compaction in
 * chunks of rows, each chunk compacting its rows within its own entries,
 * which then move down after the chunks before it (single_join); the
 * in-place conversion in rounds (single_inplace).  Every entry is what
 * the serial passes make of it. */
#define AMG_NOISE 0x1p-24

/* a conversion to single precision (csr_single): its matrix and copy, the
 * diagonals' magnitudes; each chunk's first entry of a (and the end of
 * the rows) before the compaction, and its end after it; the in-place
 * conversion's round */
typedef struct {
    csr *a;
    int sym;
    float *f;
    uint32_t *fj;
    size_t *fp;
    double *diag;
    size_t from[AMG_CHUNKS + 1], to[AMG_CHUNKS];
    size_t lo;
} single_args;

/* rows [i0, i1): |a_ii| into diag */
static void single_diag_rows(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0, size_t i1)
{
    const single_args *g = ctx;
    const csr *a = g->a;
    (void)s, (void)b, (void)c;
    for (size_t i = i0; i < i1; i++) {
        g->diag[i] = 0.0;
        for (size_t k = a->p[i]; k < a->p[i + 1]; k++)
            if (a->j[k] == i)
                g->diag[i] = fabs(a->v[k]);
    }
}

/* entries lo + [k0, k1) of v as floats in place: float k in the bytes of v[k / 2] */
static void single_inplace_range(void *ctx, size_t k0, size_t k1)
{
    const single_args *g = ctx;
    double *v = g->a->v;
    for (size_t k = g->lo + k0; k < g->lo + k1; k++) {
        float x = (float)v[k];
        memcpy((char *)v + k * sizeof x, &x, sizeof x);
    }
}

/* v's nnz entries as floats in place: entry 0, then the entries [lo, 2 lo)
 * for lo = 1, 2, 4, ..., each round on the team: it reads doubles that no
 * round has written and writes floats over doubles [lo / 2, lo), which
 * the rounds before it have read. */
static void single_inplace(single_args *g, size_t nnz)
{
    g->lo = 0;
    single_inplace_range(g, 0, nnz ? 1 : 0);
    for (g->lo = 1; g->lo < nnz; g->lo *= 2) {
        size_t len = (2 * g->lo < nnz ? 2 * g->lo : nnz) - g->lo;
        TS_PARALLEL(len >= ts_threads_min(), len, single_inplace_range, g);
    }
}

/* rows [j0, j1) of the symmetric copy: entry (j, i) below the diagonal
 * takes the float of (i, j) (a Galerkin product's rows hold each column
 * once, rap_pattern); entries below the diagonal alone are written and
 * entries above it alone read, so the chunks never meet */
static void single_sym_rows(amg_state *s, blocks_rows *b, void *ctx, int c, size_t j0, size_t j1)
{
    const single_args *g = ctx;
    const csr *a = g->a;
    (void)s, (void)b, (void)c;
    for (size_t j = j0; j < j1; j++)
        for (size_t q = a->p[j]; q < a->p[j + 1]; q++) {
            size_t i = a->j[q];
            for (size_t k = a->p[i]; i < j && k < a->p[i + 1]; k++)
                if (a->j[k] == j) {
                    g->f[q] = g->f[k];
                    break;
                }
        }
}

/* rows [i0, i1) of chunk ch without their exact zeros (nor, with sym, the
 * noise, lumped onto the diagonal), moved up within the chunk's own
 * entries: row i's from fp[i], the chunk's end into to[ch]; without sym
 * its floats converted first.  Row i's entries are read before fp[i] is
 * written (fp is a's row pointers with sym) and those after the write
 * position; the chunk's last row ends at from[ch + 1], which the next
 * chunk may have overwritten. */
static void single_compact_rows(amg_state *s, blocks_rows *b, void *ctx, int ch, size_t i0,
                                size_t i1)
{
    single_args *g = ctx;
    const csr *a = g->a;
    float *f = g->f;
    size_t c = g->from[ch];
    (void)s, (void)b;
    for (size_t k = c; !g->sym && k < g->from[ch + 1]; k++)
        f[k] = (float)a->v[k];
    for (size_t i = i0; i < i1; i++) {
        size_t k0 = a->p[i], k1 = i + 1 < i1 ? a->p[i + 1] : g->from[ch + 1], kd = SIZE_MAX;
        double lumped = 0.0;
        g->fp[i] = c;
        for (size_t k = k0; k < k1; k++) {
            size_t j = a->j[k];
            if (f[k] == 0.0f)
                continue;
            if (g->sym && j != i && fabs(f[k]) <= AMG_NOISE * sqrt(g->diag[i] * g->diag[j])) {
                lumped += fabs(f[k]);
                continue;
            }
            if (j == i)
                kd = c;
            g->fj[c] = a->j[k], f[c++] = f[k];
        }
        if (kd != SIZE_MAX)
            f[kd] = (float)(f[kd] + lumped);
    }
    g->to[ch] = c;
}

/* the nc chunks' compacted entries moved down after one another, with
 * their rows' starts */
static void single_join(single_args *g, int nc, size_t n)
{
    size_t d = 0;
    for (int c = 0; c < nc; c++) {
        size_t len = g->to[c] - g->from[c], sh = g->from[c] - d;
        if (sh) {
            memmove(g->fj + d, g->fj + g->from[c], len * sizeof *g->fj);
            memmove(g->f + d, g->f + g->from[c], len * sizeof *g->f);
            chunk_rows_shift(g->fp, n, nc, c, -(ptrdiff_t)sh);
        }
        d += len;
    }
    g->fp[n] = d;
}

static int csr_single(amg_state *s, csr *a, int sym, double *diag)
{
    size_t n = a->n, nnz = a->p[n];
    single_args g = {.a = a, .sym = sym, .f = a->f, .fj = a->fj, .fp = a->fp, .diag = diag};
    if (sym) { /* the diagonals' magnitudes, before the values go */
        sweep_work(s, n, nnz, single_diag_rows, &g);
        single_inplace(&g, nnz);
        g.f = (float *)(void *)a->v, g.fj = a->j, g.fp = a->p;
        sweep_work(s, n, nnz, single_sym_rows, &g);
    } else if ((!g.f && !(g.f = a->f = malloc((nnz + 1) * sizeof *g.f))) ||
               (!g.fp && !(g.fp = a->fp = malloc((n + 1) * sizeof *g.fp))) ||
               (!g.fj && !(g.fj = a->fj = malloc((nnz + 1) * sizeof *g.fj)))) {
        return TS_ERR_NOMEM;
    }
    /* the exact zeros out, f and fj compressed in place: P's pinned rows,
     * and a cloth lying in a plane has no couplings across it (on the
     * 100x100 cloth hanging in its plane, a quarter of the first coarse
     * level's entries) */
    int nc = sweep_chunks(s, nnz);
    for (int c = 0; c <= nc; c++)
        g.from[c] = a->p[chunk_start(n, nc, (size_t)c)];
    sweep_work(s, n, nnz, single_compact_rows, &g);
    single_join(&g, nc, n);
    if (sym) { /* the double values and their pattern are gone: to size */
        float *sf = realloc(g.f, (g.fp[n] + 1) * sizeof *sf);
        uint32_t *sj = realloc(g.fj, (g.fp[n] + 1) * sizeof *sj);
        a->f = sf ? sf : g.f, a->fj = sj ? sj : g.fj, a->fp = g.fp;
        a->p = NULL, a->j = NULL, a->v = NULL;
    }
    return TS_OK;
}

/* a sweep over a level's rows: its level, its vectors, its chunks' maxima */
typedef struct {
    int l;
    const double *dinv;
    double *diag;          /* A_ii (diag_inverse: or NULL) or |A_ii| into it */
    double *sdiag;         /* abs_diag_rows: A_ii too, or NULL */
    double mx[AMG_CHUNKS]; /* gershgorin: each chunk's maximum */
} rows_args;

/* The largest of the chunks' maxima (each from 0): the serial loop's
 * maximum, fmax being exact. */
static double chunks_max(const double *mx)
{
    double m = 0.0;
    for (int c = 0; c < AMG_CHUNKS; c++)
        m = fmax(m, mx[c]);
    return m;
}

/* a pattern sweep (spgemm_rows, rap_pattern_rows, filtered_rows): its
 * level, its matrices and its lists */
typedef struct {
    int l;
    const csr *a, *b; /* C = a b; rap_pattern: a = P^T */
    lists out;
} pattern_args;

/* rows [i0, i1) of a b's pattern */
static void spgemm_rows(amg_state *s, blocks_rows *rows, void *ctx, int c, size_t i0, size_t i1)
{
    pattern_args *g = ctx;
    const csr *a = g->a, *b = g->b;
    struct list_part *lp = &g->out.part[c];
    size_t *mark = marks_get(s, c, b->m);
    (void)rows;
    if (!mark) {
        lp->nomem = 1;
        return;
    }
    for (size_t i = i0; i < i1; i++) {
        for (size_t k = a->p[i]; k < a->p[i + 1]; k++)
            for (size_t e = b->p[a->j[k]]; e < b->p[a->j[k] + 1]; e++)
                list_add(lp, mark, i, b->j[e]);
        g->out.p[i + 1] = lp->len;
    }
    marks_put(s, c, mark, b->m);
}

/* The pattern of C = A B (Gustavson), columns of each row in first-seen
 * order, with zero values; its rows on the thread team (spgemm_rows). */
static int spgemm_pattern(amg_state *s, const csr *a, const csr *b, csr *c)
{
    size_t n = a->n;
    pattern_args g = {.a = a, .b = b};
    c->n = n, c->m = b->m;
    if (!(c->p = ts_calloc_team(n + 1, sizeof *c->p)))
        return TS_ERR_NOMEM;
    lists_init(&g.out, s, n, c->p, a->p[n] + n + 16);
    g.out.nc = sweep_work(s, n, a->p[n], spgemm_rows, &g);
    if (lists_join(&g.out, &c->j))
        return TS_ERR_NOMEM;
    c->v = ts_calloc_team(c->p[n] + 1, sizeof *c->v);
    return c->v ? TS_OK : TS_ERR_NOMEM;
}

/* t = a^T (pattern); map (or NULL)[k]: t.v[k] = a.v[map[k]] */
static int csr_transpose(const csr *a, csr *t, uint32_t **map)
{
    size_t nnz = a->p[a->n];
    if (csr_alloc(t, a->m, a->n, nnz))
        return TS_ERR_NOMEM;
    if (map && !(*map = malloc((nnz + 1) * sizeof **map)))
        return TS_ERR_NOMEM;
    for (size_t k = 0; k < nnz; k++)
        t->p[a->j[k] + 1]++;
    for (size_t q = 0; q < a->m; q++)
        t->p[q + 1] += t->p[q];
    size_t *fill = malloc((a->m + 1) * sizeof *fill);
    if (!fill)
        return TS_ERR_NOMEM;
    memcpy(fill, t->p, a->m * sizeof *fill);
    for (size_t i = 0; i < a->n; i++)
        for (size_t k = a->p[i]; k < a->p[i + 1]; k++) {
            size_t d = fill[a->j[k]]++;
            t->j[d] = (uint32_t)i;
            if (map)
                (*map)[d] = (uint32_t)k;
        }
    free(fill);
    return TS_OK;
}

/* rows [i0, i1) of the Galerkin product's pattern (rap_pattern) */
static void rap_pattern_rows(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0, size_t i1)
{
    pattern_args *g = ctx;
    const csr *P = &s->lev[g->l].P, *r = g->a;
    struct list_part *lp = &g->out.part[c];
    size_t *mark = marks_get(s, c, P->m);
    if (!mark) {
        lp->nomem = 1;
        return;
    }
    for (size_t i = i0; i < i1; i++) {
        for (size_t f = r->p[i]; f < r->p[i + 1]; f++) {
            row_view a;
            row_get_in(s, b, g->l, r->j[f], 0, &a);
            for (size_t t = 0; t < a.len; t++)
                for (size_t e = P->p[a.j[t]]; e < P->p[a.j[t] + 1]; e++)
                    list_add(lp, mark, i, P->j[e]);
        }
        g->out.p[i + 1] = lp->len;
    }
    marks_put(s, c, mark, P->m);
}

/* The pattern of the Galerkin product C = P^T A P of level l, row by row
 * of P^T: row i holds, in the order first seen, the columns of P's rows j
 * over A's rows k in P's column i, its columns j ascending; nothing of
 * size nnz(A P) is stored.  Its rows on the thread team. */
static int rap_pattern(amg_state *s, int l, csr *c)
{
    const csr *P = &s->lev[l].P;
    size_t nc = P->m;
    csr r = {0};
    int st = csr_transpose(P, &r, NULL);
    c->n = c->m = nc;
    c->p = ts_calloc_team(nc + 1, sizeof *c->p);
    if (st || !c->p) {
        csr_free(&r);
        return TS_ERR_NOMEM;
    }
    pattern_args g = {.l = l, .a = &r};
    lists_init(&g.out, s, nc, c->p, 2 * P->p[P->n] + nc + 16);
    g.out.nc = sweep_work(s, nc, P->p[P->n], rap_pattern_rows, &g);
    csr_free(&r);
    if (lists_join(&g.out, &c->j))
        return TS_ERR_NOMEM;
    c->v = ts_calloc_team(c->p[nc] + 1, sizeof *c->v);
    return c->v ? TS_OK : TS_ERR_NOMEM;
}

/* owner[] of a coarse row: the chunk of its fine rows, or RAP_SHARED */
#define RAP_UNSEEN 0xff
#define RAP_SHARED 0xfe

typedef struct {
    int l;
    csr *c;
    const uint8_t *owner; /* NULL: one chunk, every row's sums at once */
    int fixup;            /* 0: the coarse rows of one chunk, 1: the shared ones */
    size_t *pos[AMG_CHUNKS];
    double *acc[AMG_CHUNKS];
    uint32_t *list[AMG_CHUNKS];
} rap_args;

/* Fine rows [k0, k1): the row k of A P in a dense accumulator (by coarse
 * column), then C(i,:) += P(k,i) (A P)(k,:) for each i in P's row k,
 * walking C's row i (which holds every column of (A P)(k,:)); with
 * owner, only the coarse rows of one chunk (!fixup) or the shared ones. */
static void rap_rows(amg_state *s, blocks_rows *b, void *ctx, int ch, size_t k0, size_t k1)
{
    const rap_args *g = ctx;
    const csr *P = &s->lev[g->l].P;
    csr *c = g->c;
    size_t *pos = g->pos[ch];
    double *acc = g->acc[ch];
    uint32_t *list = g->list[ch];
    for (size_t k = k0; k < k1; k++) {
        int any = !g->fixup;
        for (size_t f = P->p[k]; f < P->p[k + 1] && !any; f++)
            any = g->owner[P->j[f]] == RAP_SHARED;
        if (P->p[k + 1] == P->p[k] || !any)
            continue;
        size_t nl = 0;
        row_view r;
        row_get_in(s, b, g->l, k, 1, &r);
        for (size_t e = 0; e < r.len; e++) {
            double a = r.v[e];
            for (size_t f = P->p[r.j[e]]; f < P->p[r.j[e] + 1]; f++) {
                uint32_t q = P->j[f];
                if (pos[q] == SIZE_MAX) {
                    pos[q] = nl;
                    list[nl++] = q;
                    acc[q] = 0.0;
                }
                acc[q] += a * P->v[f];
            }
        }
        for (size_t f = P->p[k]; f < P->p[k + 1]; f++) {
            size_t ci = P->j[f];
            if (g->owner && (g->owner[ci] == RAP_SHARED) != g->fixup)
                continue;
            for (size_t e = c->p[ci]; e < c->p[ci + 1]; e++)
                if (pos[c->j[e]] != SIZE_MAX)
                    c->v[e] += P->v[f] * acc[c->j[e]];
        }
        for (size_t t = 0; t < nl; t++)
            pos[list[t]] = SIZE_MAX;
    }
}

/* Each coarse row's owner: the one chunk of nc over n fine rows that its
 * column of P touches, or RAP_SHARED; and chunks 1 .. nc-1's scatter
 * arrays.  0, or -1 when out of memory. */
static int rap_chunks(const csr *P, int nc, uint8_t *owner, rap_args *g)
{
    size_t m = P->m;
    memset(owner, RAP_UNSEEN, m);
    for (int c = 0; c < nc; c++)
        for (size_t k = chunk_start(P->n, nc, (size_t)c); k < chunk_start(P->n, nc, (size_t)c + 1);
             k++)
            for (size_t f = P->p[k]; f < P->p[k + 1]; f++) {
                uint8_t *o = &owner[P->j[f]];
                *o = *o == RAP_UNSEEN ? (uint8_t)c : *o == c ? *o : RAP_SHARED;
            }
    for (int c = 1; c < nc; c++) {
        g->pos[c] = malloc((m + 1) * sizeof *g->pos[c]);
        g->acc[c] = malloc((m + 1) * sizeof *g->acc[c]);
        g->list[c] = malloc((m + 1) * sizeof *g->list[c]);
        if (!g->pos[c] || !g->acc[c] || !g->list[c])
            return -1;
        marks_clear(g->pos[c], m);
    }
    return 0;
}

/* C = P^T A P on C's pattern, one fine row at a time (rap_rows), nothing
 * of size nnz(A P) stored.  On the team, in chunks of fine rows, one a
 * thread: a coarse row that P gives fine rows of one chunk only is summed
 * by that chunk; the few whose fine rows lie in more than one chunk are
 * summed after, on one thread, over all their fine rows, so every entry
 * adds its terms in the order of the fine rows whatever the number of
 * chunks. */
static void rap_values(amg_state *s, int l, csr *c)
{
    const csr *P = &s->lev[l].P;
    rap_args g = {.l = l, .c = c};
    g.pos[0] = s->pos, g.acc[0] = s->acc, g.list[0] = s->list;
    ts_vec_zero(c->p[c->n], c->v); /* on the team: the first touch of its pages */
    int nc = sweep_chunks(s, P->n);
    uint8_t *owner = nc > 1 ? malloc(P->m + 1) : NULL;
    if (owner && rap_chunks(P, nc, owner, &g) == 0) {
        g.owner = owner;
        sweep(s, P->n, rap_rows, &g);
        g.fixup = 1;
    }
    rap_rows(s, &s->rows, &g, 0, 0, P->n); /* all (one chunk) or the shared rows */
    for (int ch = 1; ch < nc; ch++) {
        free(g.pos[ch]);
        free(g.acc[ch]);
        free(g.list[ch]);
    }
    free(owner);
}

/* --- the hierarchy's structure (first setup) -------------------------------------- */

/* Everything the first setup allocated; the state is as after amg_alloc. */
static void hierarchy_free(amg_state *s)
{
    for (int l = 0; l < AMG_MAX_LEVELS; l++) {
        level *L = &s->lev[l];
        csr_free(&L->A);
        csr_free(&L->P);
        restrict_plan_free(&L->rp);
        free(L->agg);
        free(L->strong);
        free(L->comp);
        free(L->dinv);
        free(L->r);
    }
    free(s->dense);
    free(s->diag0);
    free(s->pos);
    free(s->acc);
    free(s->list);
    blocks_rows_free(&s->rows);
    parts_free(s);
    size_t n = s->n;
    int bs = s->bs;
    ts_system *sys = s->sys;
    const double *diag = s->diag;
    memset(s, 0, sizeof *s);
    s->n = n, s->bs = bs, s->sys = sys, s->diag = diag, s->base_per_digit = -1.0;
}

static void amg_free(void *state)
{
    amg_state *s = state;
    if (!s)
        return;
    hierarchy_free(s);
    free(s);
}

/* Level 0's full matrix from the assembled lower triangle (columns): its
 * pattern, or (values) its values, both by the same walk over the columns.
 * Only for a system without blocks (a spring network's rows come from its
 * blocks, blocks_row). */
static void full_walk(amg_state *s, const ts_sparse *lo, int values)
{
    csr *A = &s->lev[0].A;
    size_t *fill = s->pos;
    memcpy(fill, A->p, lo->n * sizeof *fill);
    for (size_t j = 0; j < lo->n; j++)
        for (size_t p = lo->colp[j]; p < lo->colp[j + 1]; p++) {
            size_t i = lo->row[p], d = fill[i]++;
            if (values)
                A->v[d] = lo->val[p];
            else
                A->j[d] = (uint32_t)j;
            if (i != j) {
                d = fill[j]++;
                if (values)
                    A->v[d] = lo->val[p];
                else
                    A->j[d] = (uint32_t)i;
            }
        }
    marks_clear(fill, lo->n);
}

static int full_pattern(amg_state *s, const ts_sparse *lo)
{
    size_t n = lo->n;
    csr *A = &s->lev[0].A;
    if (csr_alloc(A, n, n, 2 * lo->nnz - n))
        return TS_ERR_NOMEM;
    for (size_t j = 0; j < n; j++)
        for (size_t p = lo->colp[j]; p < lo->colp[j + 1]; p++) {
            size_t i = lo->row[p];
            A->p[i + 1]++;
            if (i != j)
                A->p[j + 1]++;
        }
    for (size_t i = 0; i < n; i++)
        A->p[i + 1] += A->p[i];
    full_walk(s, lo, 0);
    return TS_OK;
}

/* |A_ii| of rows [i0, i1) into diag (the last diagonal entry of a row, as
 * the strength test reads it), and A_ii into sdiag when not NULL (the
 * first, as diag_at reads it) */
static void abs_diag_rows(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0, size_t i1)
{
    const rows_args *g = ctx;
    row_view r;
    double d3[3];
    (void)c;
    for (size_t i = i0; i < i1 && g->l == 0 && s->from_blocks; i++) {
        if (i == i0 || i % 3 == 0)
            particle_diag(b, s->sys, i / 3, d3);
        g->diag[i] = fabs(d3[i % 3]);
        if (g->sdiag)
            g->sdiag[i] = d3[i % 3];
    }
    for (size_t i = i0; i < i1 && !(g->l == 0 && s->from_blocks); i++) {
        row_get_in(s, b, g->l, i, 1, &r);
        int first = 1;
        if (g->sdiag)
            g->sdiag[i] = 0.0;
        for (size_t t = 0; t < r.len; t++)
            if (r.j[t] == i) {
                g->diag[i] = fabs(r.v[t]);
                if (g->sdiag && first)
                    g->sdiag[i] = r.v[t];
                first = 0;
            }
    }
}

/* 1 / d (1 where d <= 0), as diag_inverse_rows forms it */
static double inverse_or_one(double d)
{
    return d > 0.0 ? 1.0 / d : 1.0;
}

/* D_F^-1 of row i (r, with its values) into L->dinv, and the row's sum of
 * |D_F^-1 A_F| (see smooth_prolongator); its strong couplings are those
 * of the strong bits, or with mark the columns j with mark[j] < 0 (the
 * strength sweep's, before it sets the bits) */
static double filtered_diag_row(level *L, size_t i, const row_view *r, const double *mark)
{
    const uint8_t *comp = L->comp;
    double d = 0.0, off = 0.0;
    for (size_t t = 0; t < r->len; t++) {
        size_t j = r->j[t];
        if (j == i)
            d += r->v[t];
        else if (mark ? mark[j] < 0.0 : strong_at(L, r->k0 + t))
            off += fabs(r->v[t]);
        else if (comp[j] == comp[i])
            d -= r->v[t]; /* lumped */
    }
    L->dinv[i] = d > 0.0 ? 1.0 / d : 0.0;
    return (fabs(d) + off) * L->dinv[i];
}

/* a strength sweep (strong_rows): its level, threshold, |A_ii| and lists;
 * each chunk's strong bits in the bytes it may share with the chunks
 * beside it (its first and last entries'), its Gershgorin bound (level 0)
 * and its largest row sum of |D_F^-1 A_F| */
typedef struct {
    int l;
    double theta;
    const double *dn;
    lists out;
    uint8_t edge[AMG_CHUNKS][2];
    double gersh[AMG_CHUNKS], lam[AMG_CHUNKS];
} strong_args;

/* one chunk of a strength sweep: its sums by column (zeros between rows),
 * the columns a row reaches, its entries [k0, k1) of A, its maxima */
typedef struct {
    strong_args *g;
    level *L;
    struct list_part *lp;
    uint8_t *edge;
    double *acc;
    uint32_t *touched;
    size_t k0, k1;
    double gersh, lam;
} strong_chunk;

/* entry k's strong bit, in the chunk's edge bytes where its byte may hold
 * entries of the chunks beside it (strong_neighbours merges them) */
static void strong_set(strong_chunk *w, size_t k)
{
    uint8_t bit = (uint8_t)(1u << (k & 7));
    if (k >> 3 == w->k0 >> 3)
        w->edge[0] |= bit;
    else if (k >> 3 == (w->k1 - 1) >> 3)
        w->edge[1] |= bit;
    else
        w->L->strong[k >> 3] |= bit;
}

/* Row ia's strong neighbours (r: its values) onto the chunk's list, their
 * entries' bits, D_F^-1 and the row's bounds; its sum of |a_ij| returned. */
static double strong_row(strong_chunk *w, size_t ia, const row_view *r)
{
    const strong_args *g = w->g;
    const uint8_t *comp = w->L->comp;
    double *acc = w->acc, row = 0.0;
    size_t nt = 0;
    for (size_t t = 0; t < r->len; t++) {
        size_t ja = r->j[t];
        row += fabs(r->v[t]);
        if (ja == ia || comp[ia] != comp[ja])
            continue;
        if (acc[ja] == 0.0)
            w->touched[nt++] = (uint32_t)ja;
        acc[ja] += r->v[t] * r->v[t] + 1e-300;
    }
    for (size_t t = 0; t < nt; t++) {
        size_t ja = w->touched[t];
        if (!(acc[ja] >= g->theta * g->theta * g->dn[ia] * g->dn[ja] && g->dn[ia] > 0.0 &&
              g->dn[ja] > 0.0))
            continue;
        list_push(w->lp, (uint32_t)ja);
        acc[ja] = -1.0;
    }
    for (size_t t = 0; t < r->len; t++)
        if (r->j[t] != ia && comp[ia] == comp[r->j[t]] && acc[r->j[t]] < 0.0)
            strong_set(w, r->k0 + t);
    w->lam = fmax(w->lam, filtered_diag_row(w->L, ia, r, acc));
    for (size_t t = 0; t < nt; t++)
        acc[w->touched[t]] = 0.0;
    return row;
}

/* rows [i0, i1) of a strength sweep (strong_neighbours) */
static void strong_rows(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0, size_t i1)
{
    strong_args *g = ctx;
    level *L = &s->lev[g->l];
    const unsigned char *pinned = g->l == 0 && s->sys ? s->sys->pinned : NULL;
    strong_chunk w = {.g = g, .L = L, .lp = &g->out.part[c], .edge = g->edge[c]};
    w.k0 = L->A.p[i0], w.k1 = L->A.p[i1];
    /* the sums on pages of their own, returned before the peak of the
     * set-up (the Galerkin sums); chunk 0's columns in the state's scratch */
    w.acc = calloc(L->n + 1, sizeof *w.acc);
    w.touched = c ? malloc((L->n + 1) * sizeof *w.touched) : s->list;
    for (size_t ia = i0; ia < i1 && w.acc && w.touched; ia++) {
        row_view r;
        row_get_in(s, b, g->l, ia, 1, &r);
        double row = strong_row(&w, ia, &r);
        g->out.p[ia + 1] = w.lp->len;
        if (g->l == 0 && !(pinned && pinned[ia]))
            w.gersh = fmax(w.gersh, row * fabs(inverse_or_one(s->diag0[ia])));
    }
    w.lp->nomem |= !w.acc || !w.touched;
    g->gersh[c] = w.gersh, g->lam[c] = w.lam;
    free(w.acc);
    if (c)
        free(w.touched);
}

/* The strong neighbours of each unknown of level l: unknowns of the same
 * axis with |a_ij| >= theta sqrt(|a_ii a_jj|), as lists sj[sp[i] .. sp[i+1])
 * (sp: n + 1 zeros) and as bits on A's entries (L->strong: zeros), in a
 * sweep on the thread team.  On level 0 the same sweeps give what the
 * first rebuild reads of it: its diagonal (s->diag0) and Gershgorin's
 * bound (s->gersh0, as gershgorin sums and compares its rows).  0, or -1
 * when out of memory. */
static int strong_neighbours(amg_state *s, int l, double theta, size_t *sp, uint32_t **sj)
{
    level *L = &s->lev[l];
    size_t nn = L->n;
    double *dn = ts_calloc_team(nn + 1, sizeof *dn); /* |A_ii| */
    if (!dn)
        return -1;
    rows_args d = {.l = l, .diag = dn, .sdiag = l == 0 ? s->diag0 : NULL};
    sweep(s, nn, abs_diag_rows, &d);
    strong_args g = {.l = l, .theta = theta, .dn = dn};
    lists_init(&g.out, s, nn, sp, 8 * nn + 16);
    g.out.nc = sweep(s, nn, strong_rows, &g);
    free(dn);
    if (lists_join(&g.out, sj))
        return -1;
    for (int c = 0; c < g.out.nc; c++) { /* the bytes chunks may share */
        size_t k0 = L->A.p[chunk_start(nn, g.out.nc, (size_t)c)];
        size_t k1 = L->A.p[chunk_start(nn, g.out.nc, (size_t)c + 1)];
        L->strong[k0 >> 3] |= g.edge[c][0];
        L->strong[(k1 ? k1 - 1 : 0) >> 3] |= g.edge[c][1];
    }
    if (l == 0)
        s->gersh0 = chunks_max(g.gersh), s->diag0_swept = 1;
    s->lam_f = chunks_max(g.lam);
    return 0;
}

/* The greedy aggregation of Vanek et al. (sec. 3) over the strength graph
 * (sp, sj) of nn unknowns into agg[]; returns the number of aggregates. */
static long aggregate_passes(size_t nn, const size_t *sp, const uint32_t *sj, int32_t *agg)
{
    long na = 0;
    for (size_t ia = 0; ia < nn; ia++)
        agg[ia] = -1;
    /* 1: a node whose strong neighbours are all free, with them */
    for (size_t ia = 0; ia < nn; ia++) {
        if (agg[ia] >= 0 || sp[ia] == sp[ia + 1])
            continue;
        int free_all = 1;
        for (size_t k = sp[ia]; k < sp[ia + 1] && free_all; k++)
            free_all = agg[sj[k]] < 0;
        if (!free_all)
            continue;
        agg[ia] = (int32_t)na;
        for (size_t k = sp[ia]; k < sp[ia + 1]; k++)
            agg[sj[k]] = (int32_t)na;
        na++;
    }
    /* 2: leftovers join a neighbouring aggregate of step 1 */
    for (size_t ia = 0; ia < nn; ia++) {
        if (agg[ia] >= 0)
            continue;
        for (size_t k = sp[ia]; k < sp[ia + 1]; k++)
            if (agg[sj[k]] >= 0 && agg[sj[k]] < na) {
                agg[ia] = -2 - agg[sj[k]]; /* marked: not a seed for others in this pass */
                break;
            }
    }
    for (size_t ia = 0; ia < nn; ia++)
        if (agg[ia] <= -2)
            agg[ia] = -2 - agg[ia];
    /* 3: the rest, with their free strong neighbours */
    for (size_t ia = 0; ia < nn; ia++) {
        if (agg[ia] >= 0 || sp[ia] == sp[ia + 1])
            continue;
        agg[ia] = (int32_t)na;
        for (size_t k = sp[ia]; k < sp[ia + 1]; k++)
            if (agg[sj[k]] < 0)
                agg[sj[k]] = (int32_t)na;
        na++;
    }
    return na;
}

/* the strength graph: unknown i's strong neighbours are j[p[i] .. p[i+1]) */
typedef struct {
    size_t *p;
    uint32_t *j;
} strength;

static void strength_free(strength *g)
{
    free(g->p);
    free(g->j);
    g->p = NULL, g->j = NULL;
}

/* Aggregates of level l's unknowns from A's strong couplings, kept in it
 * (agg, strong), and the coarse unknowns' axes in level l + 1; returns their number
 * (0: nothing to coarsen) or -1 when out of memory.  The strength graph
 * into *gs (the caller frees it). */
static long aggregate(amg_state *s, int l, double theta, strength *gs)
{
    level *L = &s->lev[l], *C = &s->lev[l + 1];
    size_t nn = L->n, *sp = gs->p = ts_calloc_team(nn + 1, sizeof *sp);
    int32_t *agg = malloc((nn + 1) * sizeof *agg);
    long na = -1;
    L->strong = ts_calloc_team(L->A.p[L->A.n] / 8 + 1, 1);
    if (!sp || !agg || !L->strong || strong_neighbours(s, l, theta, sp, &gs->j))
        goto out;
    const uint32_t *sj = gs->j;
    na = aggregate_passes(nn, sp, sj, agg);
    if (!(C->comp = malloc((size_t)na + 1))) {
        na = -1;
        goto out;
    }
    for (size_t i = 0; i < nn; i++)
        if (agg[i] >= 0)
            C->comp[agg[i]] = L->comp[i];
    L->agg = agg;
    agg = NULL;
out:
    free(agg);
    return na;
}

/* The tentative prolongator's pattern of level l (pinned unknowns of level
 * 0 excluded): its values, all 1, are never read (filtered_pattern reads
 * its pattern; smoothed_rows adds Pt's entries itself), so never written
 * and their pages never touched. */
static int tentative(const amg_state *s, const level *L, const unsigned char *pinned, size_t nc,
                     csr *pt)
{
    (void)s;
    if (csr_alloc(pt, L->n, nc, L->n))
        return TS_ERR_NOMEM;
    ts_parallel_touch(pt->j, L->n * sizeof *pt->j); /* filled serially below */
    size_t nnz = 0;
    for (size_t i = 0; i < L->n; i++) {
        int32_t a = L->agg[i];
        if (a >= 0 && !(pinned && pinned[i]))
            pt->j[nnz++] = (uint32_t)a;
        pt->p[i + 1] = nnz;
    }
    return TS_OK;
}

/* Level l's work vectors: r, d, t, on coarse levels x and b (level 0's
 * are the caller's), and on the levels the W-cycle solves twice, wb and
 * wx. */
static int work_alloc(level *L, int l)
{
    size_t k = l >= AMG_W_FROM ? 7 : l > 0 ? 5 : 3;
    L->dinv = malloc((L->n + 1) * sizeof *L->dinv);
    L->r = malloc((k * L->n + 1) * sizeof *L->r);
    if (!L->dinv || !L->r)
        return TS_ERR_NOMEM;
    L->d = L->r + L->n, L->t = L->d + L->n;
    L->x = k > 3 ? L->t + L->n : NULL, L->b = k > 3 ? L->x + L->n : NULL;
    L->wb = k == 7 ? L->b + L->n : NULL, L->wx = k == 7 ? L->wb + L->n : NULL;
    return TS_OK;
}

static void galerkin(amg_state *s, int l);

/* A_F's pattern (the diagonal and the strong couplings) in the place of
 * the strength graph gs of level 0 from the blocks, without reading A
 * again: its rows are ascending and hold their diagonal (blocks_row), so
 * A_F's row i is i's strong list with i put in its place.  From the last
 * row back, each entry moves up by its row's index or one more, past
 * the entries still to be read. */
static int filtered_from_strength(size_t n, strength *gs, csr *af)
{
    size_t *sp = gs->p;
    uint32_t *j = realloc(gs->j, (sp[n] + n + 1) * sizeof *j);
    if (!j)
        return TS_ERR_NOMEM;
    gs->j = j;
    for (size_t i = n; i-- > 0;) {
        size_t k = sp[i + 1], d = k + i + 1;
        int placed = 0;
        while (k > sp[i])
            if (!placed && j[k - 1] < i)
                j[--d] = (uint32_t)i, placed = 1;
            else
                j[--d] = j[--k];
        if (!placed)
            j[--d] = (uint32_t)i;
        sp[i + 1] += i + 1;
    }
    *af = (csr){.n = n, .m = n, .p = sp, .j = j};
    gs->p = NULL, gs->j = NULL;
    return TS_OK;
}

/* rows [i0, i1) of A_F's pattern: the diagonal and the strong couplings */
static void filtered_rows(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0, size_t i1)
{
    pattern_args *g = ctx;
    const level *L = &s->lev[g->l];
    struct list_part *lp = &g->out.part[c];
    row_view r;
    for (size_t i = i0; i < i1; i++) {
        row_get_in(s, b, g->l, i, 0, &r);
        for (size_t t = 0; t < r.len; t++)
            if (r.j[t] == i || strong_at(L, r.k0 + t))
                list_push(lp, r.j[t]);
        g->out.p[i + 1] = lp->len;
    }
}

/* The pattern of A_F Pt, A_F the diagonal and the strong couplings of
 * level l's A; gs, level l's strength graph, is freed. */
static int filtered_pattern(amg_state *s, int l, const csr *pt, csr *p, strength *gs)
{
    level *L = &s->lev[l];
    csr af = {.n = L->n, .m = L->n};
    int st;
    if (l == 0 && s->from_blocks) {
        st = filtered_from_strength(L->n, gs, &af);
    } else {
        strength_free(gs);
        pattern_args g = {.l = l};
        if (!(af.p = calloc(L->n + 1, sizeof *af.p)))
            return TS_ERR_NOMEM;
        lists_init(&g.out, s, L->n, af.p, 4 * L->n);
        g.out.nc = sweep(s, L->n, filtered_rows, &g);
        st = lists_join(&g.out, &af.j);
    }
    st = st ? st : spgemm_pattern(s, &af, pt, p);
    csr_free(&af);
    return st;
}

/* Levels, patterns and work arrays from the first matrix: the system's
 * blocks, or the assembled ls->A of a system without them. */
static int build(amg_state *s, const ts_linsolve *ls, const ts_system *sys)
{
    int st;
    s->diag0_swept = 0;
    s->pos = malloc((s->n + 1) * sizeof *s->pos);
    s->acc = malloc((s->n + 1) * sizeof *s->acc);
    s->list = malloc((s->n + 1) * sizeof *s->list);
    s->diag0 = malloc((s->n + 1) * sizeof *s->diag0);
    if (!s->pos || !s->acc || !s->list || !s->diag0)
        return ts_error(TS_ERR_NOMEM, "amg preconditioner");
    ts_parallel_touch(s->pos, (s->n + 1) * sizeof *s->pos);
    marks_clear(s->pos, s->n);
    if (s->from_blocks ? blocks_rows_new(s) : full_pattern(s, ls->A))
        return ts_error(TS_ERR_NOMEM, "amg preconditioner");
    if (!s->from_blocks)
        full_walk(s, ls->A, 1);
    parts_sync(s);
    if (s->from_blocks)
        blocks_row_starts(s);
    s->lev[0].n = s->n;
    s->lev[0].comp = malloc(s->n + 1);
    if (!s->lev[0].comp)
        return ts_error(TS_ERR_NOMEM, "amg preconditioner");
    for (size_t i = 0; i < s->n; i++)
        s->lev[0].comp[i] = (uint8_t)(i % (size_t)s->bs);
    if ((st = work_alloc(&s->lev[0], 0)))
        return st;
    csr pt = {0};
    strength gs = {0};
    int l = 0;
    double theta = AMG_THETA;
    for (; l + 1 < AMG_MAX_LEVELS && s->lev[l].n > AMG_COARSE_MIN; l++, theta *= 0.5) {
        level *L = &s->lev[l], *C = &s->lev[l + 1];
        long na = aggregate(s, l, theta, &gs);
        if (na < 0)
            goto nomem;
        size_t nc = (size_t)na;
        if (na == 0 || nc > (L->n * 17) / 20) /* nothing to gain */
            break;
        if (tentative(s, L, l == 0 ? sys->pinned : NULL, nc, &pt))
            goto nomem;
        /* P has the pattern of A_F Pt (which holds Pt's) */
        if (filtered_pattern(s, l, &pt, &L->P, &gs))
            goto nomem;
        csr_free(&pt);
        if (rap_pattern(s, l, &C->A))
            goto nomem;
        C->n = nc;
        if (work_alloc(C, l + 1))
            goto nomem;
        galerkin(s, l);
    }
    strength_free(&gs);
    s->nlev = l + 1;
    size_t nL = s->lev[l].n;
    if (nL <= AMG_DENSE_MAX) {
        s->dense = malloc((nL * nL + 1) * sizeof *s->dense);
        if (!s->dense)
            goto nomem;
    }
    return TS_OK;
nomem:
    csr_free(&pt);
    strength_free(&gs);
    return ts_error(TS_ERR_NOMEM, "amg preconditioner: hierarchy of %zu unknowns", s->n);
}

/* --- the numbers (every rebuild) --------------------------------------------------- */

static void level_mul(amg_state *s, int l, const double *u, double *out)
{
    if (l == 0 && s->sys) {
        ts_linsolve_matvec(s->sys, u, out);
        ts_system_filter(s->sys, out);
    } else {
        csr_mul(&s->lev[l].A, u, out);
    }
}

/* the smoother's vector loops: their vectors and coefficients */
typedef struct {
    const double *b, *dinv, *t;
    double *x, *r, *d;
    double theta, c1, c2;
} vec_args;

/* r = b - r */
static void residual_range(void *c, size_t i0, size_t i1)
{
    const vec_args *g = c;
    for (size_t i = i0; i < i1; i++)
        g->r[i] = g->b[i] - g->r[i];
}

/* out = b - A_l x (out not x) */
static void level_residual(amg_state *s, int l, const double *b, const double *x, double *out)
{
    size_t n = s->lev[l].n;
    level_mul(s, l, x, out);
    vec_args g = {.b = b, .r = out};
    TS_PARALLEL(n >= ts_threads_min(), n, residual_range, &g);
}

/* Largest eigenvalue of D^-1 A: the largest Ritz value of AMG_LANCZOS
 * Lanczos steps on D^-1/2 A D^-1/2 (which approaches it from below, far
 * faster than power iteration on a clustered spectrum), times 1.1, at most
 * Gershgorin's bound max_i sum_j |a_ij| / d_i over the unpinned rows.
 * The smoother's lower end, L->lmin: lmax / AMG_CHEB_RATIO (on the finest
 * level lmax / AMG_CHEB_RATIO_FINE), or the
 * smallest Ritz value when larger (a well-conditioned A, whose whole
 * spectrum the smoother then damps; Ritz values lie inside the spectrum,
 * and eigenvalues below the range are damped less, never amplified),
 * at most lmax / 2. */

static void gershgorin_rows(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0, size_t i1)
{
    rows_args *g = ctx;
    const unsigned char *pinned = g->l == 0 && s->sys ? s->sys->pinned : NULL;
    double gersh = 0.0;
    for (size_t i = i0; i < i1; i++) {
        if (pinned && pinned[i])
            continue;
        double row = 0.0;
        row_view r;
        row_get_in(s, b, g->l, i, 1, &r);
        for (size_t t = 0; t < r.len; t++)
            row += fabs(r.v[t]);
        gersh = fmax(gersh, row * fabs(g->dinv[i]));
    }
    g->mx[c] = gersh;
}

/* Gershgorin's bound max_i sum_j |a_ij| / d_i over the unpinned rows */
static double gershgorin(amg_state *s, int l, const double *dinv)
{
    rows_args g = {.l = l, .dinv = dinv};
    sweep(s, s->lev[l].n, gershgorin_rows, &g);
    return chunks_max(g.mx);
}

/* Lanczos' vector loops (eig_max): each phase's elementwise part over a
 * range, on the team; its sums stay serial, in index order, so the Ritz
 * values are the same bits for any number of threads */
enum { LZ_SCALE, LZ_SQRT, LZ_START, LZ_BACK, LZ_ORTH, LZ_NEXT };
typedef struct {
    int phase;
    double *q, *qprev, *w, *sd;
    const double *u, *dinv;
    double a, b, qn;
} lanczos_args;

static void lanczos_range(void *ctx, size_t i0, size_t i1)
{
    const lanczos_args *g = ctx;
    double *q = g->q, *qprev = g->qprev, *w = g->w, *sd = g->sd;
    const double *u = g->u, *dinv = g->dinv;
    double a = g->a, b = g->b, qn = g->qn;
    switch (g->phase) {
    case LZ_SCALE:
        for (size_t i = i0; i < i1; i++)
            q[i] /= qn;
        break;
    case LZ_SQRT:
        for (size_t i = i0; i < i1; i++)
            sd[i] = sqrt(dinv[i]);
        break;
    case LZ_START:
        for (size_t i = i0; i < i1; i++)
            qprev[i] = -b * qprev[i], w[i] = q[i] * sd[i];
        break;
    case LZ_BACK: /* w = D^-1/2 A D^-1/2 q - b q_prev */
        for (size_t i = i0; i < i1; i++)
            w[i] = u[i] * sd[i] + qprev[i];
        break;
    case LZ_ORTH:
        for (size_t i = i0; i < i1; i++)
            w[i] -= a * q[i];
        break;
    default: /* LZ_NEXT */
        for (size_t i = i0; i < i1; i++)
            qprev[i] = q[i], q[i] = w[i] / b;
        break;
    }
}

static void lanczos_pass(lanczos_args *g, int phase, size_t n)
{
    g->phase = phase;
    TS_PARALLEL(n >= ts_threads_min(), n, lanczos_range, g);
}

/* sum_i x_i y_i in index order */
static double dot_serial(size_t n, const double *x, const double *y)
{
    double d = 0.0;
    for (size_t i = 0; i < n; i++)
        d += x[i] * y[i];
    return d;
}

static double eig_max(amg_state *s, int l, const double *dinv, int matrix_free, double gersh)
{
    level *L = &s->lev[l];
    size_t n = L->n;
    const unsigned char *pinned = l == 0 && s->sys ? s->sys->pinned : NULL;
    /* on level 0 the driver's Krylov work, idle while setting up, holds
     * three of the five vectors (level 0 keeps only the cycle's); sd =
     * D^-1/2, once (b is idle while setting up); u = A D^-1/2 q */
    lanczos_args g = {.q = l ? L->x : s->scratch, .qprev = l ? L->d : s->scratch + n,
                      .w = L->t, .sd = l ? L->b : s->scratch + 2 * n, .u = L->r, .dinv = dinv};
    double alpha[AMG_LANCZOS], beta[AMG_LANCZOS], qn = 0.0;
    uint64_t seed = 88172645463325252u;
    for (size_t i = 0; i < n; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17; /* xorshift */
        g.q[i] = pinned && pinned[i] ? 0.0 : (double)(seed >> 11) * 0x1p-53 - 0.5;
        qn += g.q[i] * g.q[i];
        g.qprev[i] = 0.0;
    }
    g.qn = sqrt(qn);
    if (!(g.qn > 0.0)) /* every unknown pinned */
        return gersh > 0.0 ? gersh : 1.0;
    lanczos_pass(&g, LZ_SCALE, n);
    ts_system *keep = s->sys;
    if (!matrix_free)
        s->sys = NULL;
    lanczos_pass(&g, LZ_SQRT, n);
    int m = 0;
    for (; m < AMG_LANCZOS; m++) {
        lanczos_pass(&g, LZ_START, n);
        level_mul(s, l, g.w, L->r);
        lanczos_pass(&g, LZ_BACK, n);
        alpha[m] = g.a = dot_serial(n, g.w, g.q);
        lanczos_pass(&g, LZ_ORTH, n);
        beta[m] = g.b = sqrt(dot_serial(n, g.w, g.w));
        if (!(g.b > 1e-12 * fabs(g.a)))
            break;
        lanczos_pass(&g, LZ_NEXT, n);
    }
    s->sys = keep;
    int k = m < AMG_LANCZOS ? m + 1 : m;
    double lam = 0.0;
    double ritz_min = 0.0;
    if (s->la->dstev(TS_LAPACK_COL_MAJOR, 'N', k, alpha, beta, NULL, 1) == 0)
        lam = 1.1 * alpha[k - 1], ritz_min = alpha[0];
    lam = gersh > 0.0 && (gersh < lam || !(lam > 0.0)) ? gersh : lam;
    double ratio = l == 0 ? AMG_CHEB_RATIO_FINE : AMG_CHEB_RATIO;
    L->lmin = fmin(fmax(ritz_min, lam / ratio), 0.5 * lam);
    return lam;
}

/* A_ii: level l's diagonal */
static double diag_at(amg_state *s, blocks_rows *b, int l, size_t i)
{
    row_view r;
    row_get_in(s, b, l, i, 1, &r);
    for (size_t t = 0; t < r.len; t++)
        if (r.j[t] == i)
            return r.v[t];
    return 0.0;
}

static void diag_inverse_rows(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0,
                              size_t i1)
{
    const rows_args *g = ctx;
    level *L = &s->lev[g->l];
    (void)c;
    for (size_t i = i0; i < i1; i++) {
        double d = diag_at(s, b, g->l, i);
        L->dinv[i] = inverse_or_one(d);
        if (g->diag)
            g->diag[i] = d;
    }
}

/* 1 / A_ii (1 where A_ii <= 0); A_ii itself into diag when not NULL */
static void diag_inverse(amg_state *s, int l, double *diag)
{
    rows_args g = {.l = l, .diag = diag};
    sweep(s, s->lev[l].n, diag_inverse_rows, &g);
}

/* The coarsest level's dense Cholesky factor; 0 when it is not positive definite. */
static int factor_dense(amg_state *s)
{
    level *L = &s->lev[s->nlev - 1];
    size_t n = L->n;
    double *a = s->dense;
    for (size_t i = 0; i < n * n; i++)
        a[i] = 0.0;
    for (size_t i = 0; i < n; i++) {
        row_view r;
        row_get(s, s->nlev - 1, i, 1, &r);
        for (size_t t = 0; t < r.len; t++)
            a[i * n + r.j[t]] += r.v[t];
    }
    return s->la->dpotrf(TS_LAPACK_ROW_MAJOR, 'L', (int)n, a, (int)n) == 0;
}

/* P = (I - omega D_F^-1 A_F) Pt, A_F the filtered matrix (Vanek et al.
 * 1996, sec. 4): A's strong couplings (the aggregation's, fixed at the
 * first setup; all between unknowns of one axis, so P keeps each axis's
 * aggregates apart) and its diagonal, to which the weak couplings of the
 * same axis are added with their sign reversed (lumped: A_F's row sums
 * over an axis are A's, so a translation along that axis is smoothed as
 * with A), D_F A_F's diagonal, omega = 4 / (3 lambda), lambda
 * Gershgorin's bound of D_F^-1 A_F.  On the 100x100 cloth this keeps 1.1
 * entries per row of P where the same-axis part of A kept 5.0, and
 * A_1 = P^T A P has 39 entries per row instead of 87. */
typedef struct {
    int l;
    double omega;
    double mx[AMG_CHUNKS]; /* each chunk's largest (|D_F| + off) / D_F */
} smooth_args;

/* D_F^-1 of rows [i0, i1) and the largest row sum of |D_F^-1 A_F| */
static void filtered_diag_rows(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0,
                               size_t i1)
{
    smooth_args *g = ctx;
    level *L = &s->lev[g->l];
    double lam = 0.0;
    row_view r;
    for (size_t i = i0; i < i1; i++) {
        row_get_in(s, b, g->l, i, 1, &r);
        lam = fmax(lam, filtered_diag_row(L, i, &r, NULL));
    }
    g->mx[c] = lam;
}

/* P's entry of row i in column a (which its pattern holds) */
static size_t p_entry(const csr *P, size_t i, size_t a)
{
    size_t k = P->p[i];
    while (P->j[k] != a)
        k++;
    return k;
}

/* rows [i0, i1) of P: row i of A_F Pt sums A_F's row over each aggregate */
static void smoothed_rows(amg_state *s, blocks_rows *b, void *ctx, int c, size_t i0, size_t i1)
{
    const smooth_args *g = ctx;
    int l = g->l;
    level *L = &s->lev[l];
    row_view r;
    (void)c;
    for (size_t i = i0; i < i1; i++) {
        for (size_t k = L->P.p[i]; k < L->P.p[i + 1]; k++)
            L->P.v[k] = 0.0;
        row_get_in(s, b, l, i, 1, &r);
        for (size_t t = 0; t < r.len; t++) {
            size_t j = r.j[t];
            int32_t a = L->agg[j];
            if (a < 0 || (j != i && !strong_at(L, r.k0 + t)) || (l == 0 && pinned_at(s->sys, j)))
                continue;
            double v = j == i && L->dinv[i] > 0.0 ? 1.0 / L->dinv[i] : r.v[t];
            L->P.v[p_entry(&L->P, i, (size_t)a)] -= g->omega * L->dinv[i] * v;
        }
        if (L->agg[i] >= 0 && !(l == 0 && pinned_at(s->sys, i))) /* Pt's entry */
            L->P.v[p_entry(&L->P, i, (size_t)L->agg[i])] += 1.0;
    }
}

/* D_F^-1 of level l into its dinv; returns the largest row sum of
 * |D_F^-1 A_F| (the first setup has them from its strength sweep:
 * strong_neighbours, s->lam_f) */
static double filtered_bound(amg_state *s, int l)
{
    smooth_args g = {.l = l};
    sweep(s, s->lev[l].n, filtered_diag_rows, &g);
    return chunks_max(g.mx);
}

/* P from D_F^-1 (in L->dinv) and lam, filtered_bound's */
static void smooth_prolongator(amg_state *s, int l, double lam)
{
    level *L = &s->lev[l];
    smooth_args g = {.l = l};
    g.omega = lam > 0.0 ? 4.0 / (3.0 * lam) : 0.0;
    sweep(s, L->n, smoothed_rows, &g);
    if (l == 0 && s->sys->pinned) /* pinned unknowns receive no correction */
        for (size_t i = 0; i < L->n; i++)
            if (s->sys->pinned[i])
                for (size_t k = L->P.p[i]; k < L->P.p[i + 1]; k++)
                    L->P.v[k] = 0.0;
}

/* Level l's smoothed prolongator from its current matrix, then A_{l+1} =
 * P^T A P; D_F^-1 and its bound from the strength sweep just done. */
static void galerkin(amg_state *s, int l)
{
    smooth_prolongator(s, l, s->lam_f);
    rap_values(s, l, &s->lev[l + 1].A);
}

/* The numbers of every level from ls->A; fresh: the hierarchy was just
 * built from it, Galerkin products included (build needs each level's
 * values to aggregate the next), so only what follows them is done. */
static int rebuild(amg_state *s, const ts_linsolve *ls, int fresh)
{
    if (!fresh) { /* the coarse levels' patterns again, from the finest down */
        if (!s->from_blocks)
            full_walk(s, ls->A, 1);
        for (int l = 0; l + 1 < s->nlev; l++) {
            csr_free(&s->lev[l + 1].A);
            smooth_prolongator(s, l, filtered_bound(s, l));
            if (rap_pattern(s, l, &s->lev[l + 1].A))
                return ts_error(TS_ERR_NOMEM, "amg preconditioner");
            rap_values(s, l, &s->lev[l + 1].A);
        }
    }
    /* every level's diagonal and bound from its double values, then its
     * single copy; the Lanczos estimates after the last conversion, so
     * that their vectors are not touched while any double level lives */
    double gersh[AMG_MAX_LEVELS];
    for (int l = 0; l < s->nlev; l++) {
        level *L = &s->lev[l];
        /* the smoother's diagonal, on level 0 too: the matrix the levels
         * come from (the definiteness fix's), not the current exact A,
         * whose diagonal is near 0 where compressed springs' negative
         * transverse stiffness cancels the mass (a cloth in its plane:
         * the out-of-plane unknowns) and would make D^-1 A's largest
         * eigenvalue, and so the smoother's range, 10^5 times too large */
        if (l == 0 && fresh && s->diag0_swept) { /* from the strength sweeps */
            for (size_t i = 0; i < L->n; i++)
                L->dinv[i] = inverse_or_one(s->diag0[i]);
            gersh[l] = s->gersh0;
        } else {
            diag_inverse(s, l, l == 0 ? s->diag0 : NULL);
            gersh[l] = gershgorin(s, l, L->dinv);
        }
        if (l == s->nlev - 1)
            s->dense_ok = s->dense && factor_dense(s);
        if (l > 0)
            L->pattern = L->A.p[L->n];
        if (l + 1 < s->nlev)
            restrict_plan_free(&L->rp);
        if ((l > 0 && csr_single(s, &L->A, 1, s->acc)) ||
            (l + 1 < s->nlev &&
             (csr_single(s, &L->P, 0, NULL) || restrict_plan_new(&L->P, &L->rp))))
            return ts_error(TS_ERR_NOMEM, "amg preconditioner");
    }
    if (fresh) { /* level 0's Lanczos vectors (eig_max), first written serially */
        size_t n = s->lev[0].n;
        ts_parallel_touch(s->scratch, 3 * n * sizeof *s->scratch);
        ts_parallel_touch(s->lev[0].r, n * sizeof *s->lev[0].r);
        ts_parallel_touch(s->lev[0].t, n * sizeof *s->lev[0].t);
    }
    for (int l = 0; l < s->nlev; l++)
        s->lev[l].lmax = eig_max(s, l, s->lev[l].dinv, l == 0, gersh[l]);
    return TS_OK;
}

static int amg_alloc(const ts_linsolve *ls, const ts_system *sys, void **state)
{
    const ts_lapack *la = ts_ext_need("lapack", "preconditioner 'amg'", "LAPACK");
    if (!la)
        return TS_ERR_UNSUPPORTED;
    amg_state *s = calloc(1, sizeof *s);
    if (!s)
        return ts_error(TS_ERR_NOMEM, "amg preconditioner");
    s->la = la;
    s->n = ls->n;
    s->bs = sys->dim == 3 && ls->n % 3 == 0 ? 3 : 1;
    s->base_per_digit = -1.0;
    s->diag = ls->diag;
    *state = s;
    return TS_OK;
}

static int amg_setup(void *state, const ts_linsolve *ls, ts_system *sys)
{
    amg_state *s = state;
    int st;
    s->sys = sys;
    s->scratch = ls->work;
    /* a spring network's rows from its blocks; the driver assembles A
     * only for a system without them (ts_precond_type.reads_blocks) */
    s->from_blocks = !ls->A;
    if (s->from_blocks && (st = sys->ops->blocks(sys, &s->rows.g)))
        return st;
    s->rows.cur = SIZE_MAX;
    int fresh = !s->nlev;
    if (fresh && (st = build(s, ls, sys))) {
        hierarchy_free(s); /* out of memory: the next setup starts afresh */
        return st;
    }
    if (!fresh)
        parts_sync(s);
    if ((st = rebuild(s, ls, fresh)))
        return st;
    s->ready = 1, s->uses = 0;
    s->alpha = ls->alpha, s->beta = ls->beta;
    s->base_per_digit = -1.0;
    return TS_OK;
}

/* the kept hierarchy's finest smoother diagonal over a range (amg_reuse) */
static void reuse_dinv_range(void *state, size_t i0, size_t i1)
{
    const amg_state *s = state;
    double *dinv = s->lev[0].dinv;
    for (size_t i = i0; i < i1; i++)
        if (s->diag0[i] > 0.0)
            dinv[i] = 1.0 / fmax(s->diag0[i], s->diag[i]);
}

static int amg_reuse(void *state, const ts_linsolve *ls, ts_system *sys)
{
    amg_state *s = state;
    if (!s->ready || ls->alpha != s->alpha || ls->beta != s->beta || ++s->uses > AMG_REUSE_MAX)
        return 0;
    s->sys = sys;
    if (ls->last_iters > 0 && ls->last_achieved > 0.0 && ls->last_achieved < 1.0) {
        double per = ls->last_iters / -log10(ls->last_achieved);
        if (s->base_per_digit < 0.0)
            s->base_per_digit = per;
        else if (per > 2.0 * s->base_per_digit + 1.0)
            return 0;
    }
    /* the finest smoother's diagonal: the larger of the hierarchy's and the
     * current A's (A's grows with the tension; where it shrinks towards 0,
     * see the header, the hierarchy's holds) */
    TS_PARALLEL(s->n >= ts_threads_min(), s->n, reuse_dinv_range, s);
    return 1;
}

/* --- the cycle ----------------------------------------------------------------------- */

/* x = 0 + D^-1 b / theta */
static void jacobi0_range(void *c, size_t i0, size_t i1)
{
    const vec_args *g = c;
    for (size_t i = i0; i < i1; i++)
        g->x[i] = 0.0 + g->dinv[i] * g->b[i] / g->theta;
}

/* x += D^-1 (b - r) / theta (r = A x) */
static void jacobi_range(void *c, size_t i0, size_t i1)
{
    const vec_args *g = c;
    for (size_t i = i0; i < i1; i++)
        g->x[i] += g->dinv[i] * (g->b[i] - g->r[i]) / g->theta;
}

/* d = D^-1 r / theta */
static void cheb_first_range(void *c, size_t i0, size_t i1)
{
    const vec_args *g = c;
    for (size_t i = i0; i < i1; i++)
        g->d[i] = g->dinv[i] * g->r[i] / g->theta;
}

/* x += d, r -= t, d = c1 d + c2 D^-1 r */
static void cheb_step_range(void *c, size_t i0, size_t i1)
{
    const vec_args *g = c;
    for (size_t i = i0; i < i1; i++) {
        g->x[i] += g->d[i];
        g->r[i] -= g->t[i];
        g->d[i] = g->c1 * g->d[i] + g->c2 * g->dinv[i] * g->r[i];
    }
}

/* x += d */
static void cheb_last_range(void *c, size_t i0, size_t i1)
{
    const vec_args *g = c;
    for (size_t i = i0; i < i1; i++)
        g->x[i] += g->d[i];
}

/* Chebyshev smoothing of A x = b on level l, degree k; x = 0 on entry when zero. */
static void chebyshev(amg_state *s, int l, const double *b, double *x, int zero, int k)
{
    level *L = &s->lev[l];
    size_t n = L->n;
    double lmax = L->lmax, lmin = L->lmin;
    double theta = 0.5 * (lmax + lmin), delta = 0.5 * (lmax - lmin);
    double sigma = theta / delta, rho = 1.0 / sigma;
    double *r = L->r, *d = L->d, *t = L->t;
    vec_args g = {.b = b, .dinv = L->dinv, .t = t, .x = x, .r = r, .d = d, .theta = theta};
    if (zero && k == 1) {
        /* one damped Jacobi step from x = 0, in one pass: the operations
         * of the general path below (d = D^-1 b / theta, then 0 + d) */
        TS_PARALLEL(n >= ts_threads_min(), n, jacobi0_range, &g);
        return;
    }
    if (k == 1) {
        /* one damped Jacobi step from x, in one pass after the product:
         * the operations of the general path (r = b - A x, d = D^-1 r /
         * theta, x + d) */
        level_mul(s, l, x, r);
        TS_PARALLEL(n >= ts_threads_min(), n, jacobi_range, &g);
        return;
    }
    if (zero) {
        memcpy(r, b, n * sizeof *r);
        memset(x, 0, n * sizeof *x);
    } else {
        level_residual(s, l, b, x, r);
    }
    TS_PARALLEL(n >= ts_threads_min(), n, cheb_first_range, &g);
    for (int it = 1; it < k; it++) {
        level_mul(s, l, d, t);
        double rho1 = 1.0 / (2.0 * sigma - rho);
        g.c1 = rho1 * rho, g.c2 = 2.0 * rho1 / delta;
        TS_PARALLEL(n >= ts_threads_min(), n, cheb_step_range, &g);
        rho = rho1;
    }
    TS_PARALLEL(n >= ts_threads_min(), n, cheb_last_range, &g);
}

static void cycle(amg_state *s, int l, const double *b, double *x)
{
    level *L = &s->lev[l];
    size_t n = L->n;
    if (l == s->nlev - 1) {
        if (s->dense_ok) {
            memcpy(x, b, n * sizeof *x);
            s->la->dpotrs(TS_LAPACK_ROW_MAJOR, 'L', (int)n, 1, s->dense, (int)n, x, 1);
        } else {
            chebyshev(s, l, b, x, 1, AMG_DEGREE_LAST);
        }
        return;
    }
    level *C = &s->lev[l + 1];
    chebyshev(s, l, b, x, 1, AMG_DEGREE);
    level_residual(s, l, b, x, L->t);
    csr_mul_transpose(&L->P, &L->rp, L->t, C->b);
    cycle(s, l + 1, C->b, C->x);
    if (C->wb && !(l + 2 == s->nlev && s->dense_ok)) {
        /* the W-cycle: a second cycle on the coarse level's residual (not
         * when that level is the coarsest, solved exactly) */
        level_residual(s, l + 1, C->b, C->x, C->wb);
        cycle(s, l + 1, C->wb, C->wx);
        ts_vec_axpy(C->n, 1.0, C->wx, C->x);
    }
    csr_mul_to(&L->P, C->x, x, 1);
    chebyshev(s, l, b, x, 0, AMG_DEGREE);
}

size_t ts_amg_level_nonzeros(const void *state, int l, size_t *pattern)
{
    const amg_state *s = state;
    if (l < 0 || l >= s->nlev) {
        *pattern = 0;
        return 0;
    }
    const csr *A = &s->lev[l].A;
    *pattern = l > 0 ? s->lev[l].pattern : A->p[A->n];
    return A->f ? A->fp[A->n] : A->p[A->n];
}

/* bytes of a csr's arrays as allocated: the double copy (p, j, v) where it
 * is kept, and the single one (f, fj, fp) */
static size_t csr_bytes(const csr *a)
{
    size_t b = 0, nnz = a->p ? a->p[a->n] : 0, fnz = a->fp ? a->fp[a->n] : 0;
    if (a->p)
        b += (a->n + 1) * sizeof *a->p;
    if (a->j)
        b += (nnz + 1) * (sizeof *a->j + (a->v ? sizeof *a->v : 0));
    if (a->fp)
        b += (a->n + 1) * sizeof *a->fp + (fnz + 1) * (sizeof *a->f + sizeof *a->fj);
    return b;
}

void ts_amg_bytes(const void *state, size_t part[3])
{
    const amg_state *s = state;
    const blocks_rows *b = &s->rows;
    size_t n1 = s->n + 1, w = 0;
    part[0] = part[1] = 0;
    for (int l = 0; l < s->nlev; l++) {
        const level *L = &s->lev[l];
        size_t nn = L->n + 1, k = l >= AMG_W_FROM ? 7 : l > 0 ? 5 : 3;
        part[0] += csr_bytes(&L->A);
        if (l + 1 < s->nlev)
            part[1] += csr_bytes(&L->P);
        if (L->rp.owner)
            part[1] += (L->P.m + 1) * sizeof *L->rp.owner +
                       (L->rp.nshared + 1) * (sizeof *L->rp.shared + sizeof *L->rp.srow);
        w += nn * (sizeof *L->dinv + sizeof *L->comp) + (k * L->n + 1) * sizeof *L->r;
        if (L->agg)
            w += nn * sizeof *L->agg;
        if (L->strong)
            w += (l > 0 ? L->pattern : L->A.p[L->n]) / 8 + 1;
    }
    if (s->dense)
        w += (s->lev[s->nlev - 1].n * s->lev[s->nlev - 1].n + 1) * sizeof *s->dense;
    w += n1 * (sizeof *s->diag0 + sizeof *s->pos + sizeof *s->acc + sizeof *s->list);
    if (b->rstart)
        w += (b->g.np + 2) * (sizeof *b->rstart + sizeof *b->efirst) +
             (b->g.ne + 1) * sizeof *b->rev +
             b->cap * (sizeof *b->q + 9 * sizeof *b->blk + 3 * (sizeof *b->rj + sizeof *b->rv));
    if (b->rstart && s->nparts) /* the sweeps' row buffers */
        w += (size_t)s->nparts *
             (sizeof *s->part +
              b->cap * (sizeof *b->q + 9 * sizeof *b->blk + 3 * (sizeof *b->rj + sizeof *b->rv)));
    part[2] = w;
}

static void amg_apply(void *state, const double *r, double *z)
{
    amg_state *s = state;
    cycle(s, 0, r, z);
}

const ts_precond_type ts_precond_amg = {
    .name = "amg",
    .summary = "smoothed-aggregation multigrid cycle (Vanek et al. 1996)",
    .needs_matrix = TS_MATRIX_LOWER,
    .reads_blocks = 1,
    .definite = 1,
    .alloc = amg_alloc,
    .setup = amg_setup,
    .reuse = amg_reuse,
    .apply = amg_apply,
    .free = amg_free,
    .first_forcing = AMG_FIRST_FORCING,
    .bytes = ts_amg_bytes,
};

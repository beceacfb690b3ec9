/* Vector helpers and the matrix-free Krylov solvers.
 *
 * CG: Hestenes & Stiefel 1952, preconditioned as in Shewchuk, "An
 * Introduction to the Conjugate Gradient Method Without the Agonizing Pain"
 * (1994), B3, with Baraff & Witkin's filter (1998, sec. 5.3): the residual,
 * search directions and solution are projected so filtered entries stay 0.
 * BiCGSTAB: van der Vorst, SIAM J. Sci. Stat. Comput. 13 (1992), right
 * preconditioned, same filter.  Dense: Gaussian elimination with partial
 * pivoting, Golub & Van Loan, Matrix Computations, 3.4. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tstep/linalg.h"
#include "tstep/status.h"
#include "v2d.h"
#include "core/ext.h"
#include "core/parallel.h"

/* --- threads and the vector helpers ---------------------------------------
 *
 * Elementwise helpers split their range over the threads (core/parallel.h;
 * each entry is computed the same way whoever computes it).
 * Reductions are deterministic: the vector is cut into chunks whose size
 * depends only on n (never on the thread count), each chunk is summed with
 * four interleaved accumulators, and the chunks' partial sums are added in
 * order by one thread.  So ts_vec_dot returns the same bits with 1 thread
 * or 64. */

double ts_memory_physical(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0.0;
}

/* The extension's thread team: the one linked or loaded at the first
 * loop, else the one ts_threads_set loads; NULL: every loop on the caller. */
static const ts_threads_ops *team;
static int follow_load; /* ts_threads_follow_load's, for a team loaded later */
static pthread_once_t team_once = PTHREAD_ONCE_INIT;

static void team_find(void) { team = ts_ext_find("threads", 0); }

static const ts_threads_ops *team_get(void)
{
    pthread_once(&team_once, team_find);
    return team;
}

int ts_threads_set(int n)
{
    if (n < 1)
        return ts_error(TS_ERR_INPUT, "threads: %d must be at least 1", n);
    const ts_threads_ops *t = team_get();
    if (!t && n > 1) {
        if (!(t = ts_ext_need("threads", "threads above 1", "OpenMP")))
            return TS_ERR_UNSUPPORTED;
        team = t;
        t->follow(follow_load);
    }
    if (t)
        t->set(n);
    return TS_OK;
}

void ts_parallel_for(size_t n, ts_range_fn fn, void *ctx)
{
    const ts_threads_ops *t = team_get();
    if (t)
        t->run_for(n, fn, ctx);
    else
        fn(ctx, 0, n);
}

void ts_parallel_passes(int npass, const size_t *count, ts_pass_fn fn, void *ctx)
{
    const ts_threads_ops *t = team_get();
    if (t) {
        t->run_passes(npass, count, fn, ctx);
        return;
    }
    for (int p = 0; p < npass; p++)
        fn(ctx, p, 0, count[p]);
}

static size_t par_min = TS_PAR_MIN;

void ts_threads_set_min(size_t n) { par_min = n; }

size_t ts_threads_min(void) { return par_min; }

int ts_threads_get(void)
{
    const ts_threads_ops *t = team_get();
    return t ? t->get() : 1;
}

void ts_threads_follow_load(int on)
{
    const ts_threads_ops *t = team_get();
    follow_load = on;
    if (t)
        t->follow(on);
}

void ts_threads_usage(long *loops, long *fewer)
{
    const ts_threads_ops *t = team_get();
    *loops = *fewer = 0;
    if (t)
        t->usage(loops, fewer);
}

void ts_threads_load_probe(ts_load_probe p)
{
    const ts_threads_ops *t = team_get();
    if (t)
        t->load_probe(p);
}

int ts_threads_for_load(int asked, long cpus, long others)
{
    if (others < 0 || cpus < 1)
        return asked;
    long free = cpus - others;
    return free < 1 ? 1 : free < asked ? (int)free : asked;
}

#define RED_PARTS 512

/* chunk length of the reductions: a power of two >= 8192, at most RED_PARTS chunks */
static size_t red_chunk(size_t n)
{
    size_t c = 8192;
    while (c * RED_PARTS < n)
        c *= 2;
    return c;
}

/* the elementwise helpers' arguments: y = a x + b y and its special cases */
typedef struct {
    double a, b;
    const double *x;
    double *y;
} vec_args;

static void zero_range(void *c, size_t i0, size_t i1)
{
    double *x = ((vec_args *)c)->y;
    for (size_t i = i0; i < i1; i++)
        x[i] = 0.0;
}

static void copy_range(void *c, size_t i0, size_t i1)
{
    const vec_args *g = c;
    memcpy(g->y + i0, g->x + i0, (i1 - i0) * sizeof *g->y);
}

static void scale_range(void *c, size_t i0, size_t i1)
{
    double a = ((vec_args *)c)->a, *x = ((vec_args *)c)->y;
#pragma omp simd
    for (size_t i = i0; i < i1; i++)
        x[i] *= a;
}

static void axpy_range(void *c, size_t i0, size_t i1)
{
    const vec_args *g = c;
    double a = g->a, *y = g->y;
    const double *x = g->x;
#pragma omp simd
    for (size_t i = i0; i < i1; i++)
        y[i] += a * x[i];
}

static void axpby_range(void *c, size_t i0, size_t i1)
{
    const vec_args *g = c;
    double a = g->a, b = g->b, *y = g->y;
    const double *x = g->x;
#pragma omp simd
    for (size_t i = i0; i < i1; i++)
        y[i] = a * x[i] + b * y[i];
}

#define TOUCH_BLOCK 65536 /* bytes a range of ts_parallel_touch */

static void touch_range(void *ctx, size_t b0, size_t b1)
{
    unsigned char *p = ctx;
    memset(p + b0 * TOUCH_BLOCK, 0, (b1 - b0) * TOUCH_BLOCK);
}

void ts_parallel_touch(void *p, size_t bytes)
{
    if (!p || ts_threads_get() < 2 || bytes < 8 * ts_threads_min())
        return;
    size_t nb = bytes / TOUCH_BLOCK;
    ts_parallel_for(nb, touch_range, p);
    memset((unsigned char *)p + nb * TOUCH_BLOCK, 0, bytes - nb * TOUCH_BLOCK);
}

void *ts_calloc_team(size_t count, size_t size)
{
    size_t bytes = count * size;
    if (ts_threads_get() < 2 || bytes < 8 * ts_threads_min() || (size && bytes / size != count))
        return calloc(count, size);
    void *p = malloc(bytes);
    ts_parallel_touch(p, bytes); /* zeroes all of it: the same conditions hold */
    return p;
}

void ts_vec_zero(size_t n, double *x)
{
    vec_args g = {.y = x};
    TS_PARALLEL(n >= ts_threads_min(), n, zero_range, &g);
}

void ts_vec_copy(size_t n, const double *x, double *y)
{
    if (x == y)
        return;
    if (n < ts_threads_min() || (x < y + n && y < x + n)) {
        memmove(y, x, n * sizeof *x);
        return;
    }
    vec_args g = {.x = x, .y = y};
    ts_parallel_for(n, copy_range, &g);
}

void ts_vec_scale(size_t n, double a, double *x)
{
    vec_args g = {.a = a, .y = x};
    TS_PARALLEL(n >= ts_threads_min(), n, scale_range, &g);
}

void ts_vec_axpy(size_t n, double a, const double *x, double *y)
{
    vec_args g = {.a = a, .x = x, .y = y};
    TS_PARALLEL(n >= ts_threads_min(), n, axpy_range, &g);
}

void ts_vec_axpby(size_t n, double a, const double *x, double b, double *y)
{
    vec_args g = {.a = a, .b = b, .x = x, .y = y};
    TS_PARALLEL(n >= ts_threads_min(), n, axpby_range, &g);
}

/* x . y over [0, n), four interleaved accumulators */
static double dot_chunk(size_t n, const double *x, const double *y)
{
    /* lanes 0, 1 of s01 and 2, 3 of s23 sum the x_i y_i with i = lane mod
     * 4, in order: four scalar accumulators, two to a register (SSE2 on
     * x86-64; scalar code elsewhere), the same bits */
    v2d s01 = {0.0, 0.0}, s23 = {0.0, 0.0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s01 += load2(x + i) * load2(y + i);
        s23 += load2(x + i + 2) * load2(y + i + 2);
    }
    double s0 = s01[0];
    for (; i < n; i++)
        s0 += x[i] * y[i];
    return (s0 + s01[1]) + (s23[0] + s23[1]);
}

/* a reduction's arguments: chunks of c entries of x (and y), part[k]
 * the k-th chunk's result */
typedef struct {
    size_t n, c;
    const double *x, *y;
    double *part;
} red_args;

static void dot_range(void *a, size_t k0, size_t k1)
{
    const red_args *g = a;
    for (size_t k = k0; k < k1; k++) {
        size_t i0 = k * g->c, len = i0 + g->c < g->n ? g->c : g->n - i0;
        g->part[k] = dot_chunk(len, g->x + i0, g->y + i0);
    }
}

double ts_vec_dot(size_t n, const double *x, const double *y)
{
    size_t c = red_chunk(n), nc = (n + c - 1) / c;
    if (nc <= 1)
        return dot_chunk(n, x, y);
    double part[RED_PARTS];
    red_args g = {.n = n, .c = c, .x = x, .y = y, .part = part};
    ts_parallel_for(nc, dot_range, &g);
    double s = 0.0;
    for (size_t k = 0; k < nc; k++)
        s += part[k];
    return s;
}

double ts_vec_norm2(size_t n, const double *x) { return sqrt(ts_vec_dot(n, x, x)); }

/* max |x_i - y_i| (y NULL: max |x_i|) over [0, n); NaN if any is NaN.
 * Four running maxima (the maximum is exact in any order), and sums of the
 * |x_i - y_i|, NaN exactly when one of them is (they are not negative: no
 * inf - inf), so that no branch is taken and no chain waits on another. */
#define DIST_D(i) fabs(y ? x[i] - y[i] : x[i])
#define DIST_MAX(m, d) ((d) > (m) ? (d) : (m))
static inline double dist_chunk_of(size_t n, const double *x, const double *y)
{
    double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0, s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        double d0 = DIST_D(i), d1 = DIST_D(i + 1), d2 = DIST_D(i + 2), d3 = DIST_D(i + 3);
        s0 += d0, s1 += d1, s2 += d2, s3 += d3;
        m0 = DIST_MAX(m0, d0), m1 = DIST_MAX(m1, d1);
        m2 = DIST_MAX(m2, d2), m3 = DIST_MAX(m3, d3);
    }
    for (; i < n; i++) {
        double d = DIST_D(i);
        s0 += d;
        m0 = DIST_MAX(m0, d);
    }
    double s = (s0 + s1) + (s2 + s3);
    return s != s ? NAN : DIST_MAX(DIST_MAX(m0, m1), DIST_MAX(m2, m3));
}
#undef DIST_D
#undef DIST_MAX

static double dist_chunk(size_t n, const double *x, const double *y)
{
    return y ? dist_chunk_of(n, x, y) : dist_chunk_of(n, x, NULL);
}

static void dist_range(void *a, size_t k0, size_t k1)
{
    const red_args *g = a;
    for (size_t k = k0; k < k1; k++) {
        size_t i0 = k * g->c, len = i0 + g->c < g->n ? g->c : g->n - i0;
        g->part[k] = dist_chunk(len, g->x + i0, g->y ? g->y + i0 : NULL);
    }
}

static double dist_inf(size_t n, const double *x, const double *y)
{
    size_t c = red_chunk(n), nc = (n + c - 1) / c;
    if (nc <= 1)
        return dist_chunk(n, x, y);
    double part[RED_PARTS];
    red_args g = {.n = n, .c = c, .x = x, .y = y, .part = part};
    ts_parallel_for(nc, dist_range, &g);
    double m = 0.0;
    for (size_t k = 0; k < nc; k++)
        if (part[k] > m || part[k] != part[k])
            m = part[k];
    return m;
}

double ts_vec_norm_inf(size_t n, const double *x) { return dist_inf(n, x, NULL); }

double ts_vec_dist_inf(size_t n, const double *x, const double *y) { return dist_inf(n, x, y); }

/* x_i - x_i is NaN exactly when x_i is infinite or NaN, else 0: the sum
 * over [i0, i1) is 0 or NaN in any order, so the loop may be vectorized */
static double nonfinite_sum(const double *x, size_t i0, size_t i1)
{
    double t = 0.0;
#pragma omp simd reduction(+ : t)
    for (size_t i = i0; i < i1; i++)
        t += x[i] - x[i];
    return t;
}

static void nonfinite_range(void *a, size_t k0, size_t k1)
{
    const red_args *g = a;
    for (size_t k = k0; k < k1; k++)
        g->part[k] = nonfinite_sum(g->x, k * g->c, k * g->c + g->c < g->n ? k * g->c + g->c : g->n);
}

int ts_vec_all_finite(size_t n, const double *x)
{
    size_t c = red_chunk(n), nc = (n + c - 1) / c;
    if (nc <= 1)
        return nonfinite_sum(x, 0, n) == 0.0;
    double part[RED_PARTS], s = 0.0;
    red_args g = {.n = n, .c = c, .x = x, .part = part};
    ts_parallel_for(nc, nonfinite_range, &g);
    for (size_t k = 0; k < nc; k++)
        s += part[k];
    return s == 0.0;
}

typedef struct {
    const unsigned char *mask;
    double *x;
} mask_args;

static void mask_range(void *c, size_t i0, size_t i1)
{
    const mask_args *g = c;
    for (size_t i = ts_mask_next(g->mask, i0, i1); i < i1; i = ts_mask_next(g->mask, i + 1, i1))
        g->x[i] = 0.0;
}

void ts_vec_mask(size_t n, const unsigned char *mask, double *x)
{
    mask_args g = {mask, x};
    if (mask)
        TS_PARALLEL(n >= ts_threads_min(), n, mask_range, &g);
}

/* z = P^-1 r, filtered */
static void precondition(size_t n, const ts_krylov *k, const double *r, double *z)
{
    if (k->precond)
        k->precond(k->precond_ctx, r, z);
    else
        for (size_t i = 0; i < n; i++)
            z[i] = k->diag ? r[i] / k->diag[i] : r[i];
    ts_vec_mask(n, k->mask, z);
}

/* One Krylov solve: A x = b under k; bnorm, the filtered |b|_2, is set by
 * krylov_start. */
typedef struct {
    const ts_linear_op *A;
    const double *b;
    double *x;
    const ts_krylov *k;
    double bnorm;
} krylov_solve;

/* r = S (b - A x); from x = 0 (every Newton update's start) r = S b
 * without the product, the same bits: A 0 is 0 for a finite A */
static int residual(const krylov_solve *ks, double *r)
{
    size_t n = ks->A->n, i = 0;
    const double *x = ks->x;
    while (i < n && x[i] == 0.0)
        i++;
    if (i == n) {
        ts_vec_copy(n, ks->b, r);
        ts_vec_mask(n, ks->k->mask, r);
        return TS_OK;
    }
    int s = ks->A->mul(ks->A->ctx, x, r);
    if (s)
        return s;
    ts_vec_axpby(n, 1.0, ks->b, -1.0, r);
    ts_vec_mask(n, ks->k->mask, r);
    return TS_OK;
}

static double filtered_norm(size_t n, const double *b, const unsigned char *mask)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        if (!mask || !mask[i])
            s += b[i] * b[i];
    return sqrt(s);
}

/* A successful return: record the relative residual reached. */
static int reached(const ts_krylov *k, double rnorm, double bnorm)
{
    if (k->achieved)
        *k->achieved = bnorm > 0.0 ? rnorm / bnorm : 0.0;
    return TS_OK;
}

/* The start CG and BiCGSTAB (`name`, in messages) share: x filtered,
 * ks->bnorm, and r = S (b - A x) of the start iterate.  *done when there
 * is nothing to iterate: b = 0 (x = 0), the start within tol, or a
 * failure; the return value is then the solve's. */
static int krylov_start(krylov_solve *ks, const char *name, double *r, int *done)
{
    size_t n = ks->A->n;
    const ts_krylov *k = ks->k;
    double bnorm = ks->bnorm = filtered_norm(n, ks->b, k->mask);
    *done = 1;
    ts_vec_mask(n, k->mask, ks->x);
    if (!isfinite(bnorm)) /* NaN, or entries near 1e154 whose squares overflow */
        return ts_error(TS_ERR_LINEAR, "%s: the right-hand side's norm is %g", name, bnorm);
    if (bnorm == 0.0) {
        ts_vec_zero(n, ks->x);
        return reached(k, 0.0, 0.0);
    }
    int s = residual(ks, r);
    if (s)
        return s;
    if (ts_vec_norm2(n, r) <= k->tol * bnorm)
        return reached(k, ts_vec_norm2(n, r), bnorm);
    *done = 0;
    return TS_OK;
}

/* A CG iteration (Shewchuk B3): the iterate x, the residual r, the search
 * direction p, q = A p, z = P^-1 r (in q's vector: q is read for the last
 * time when r is updated, before z is formed), the step alpha = r.z / p.q
 * and rz = r.z.  jacobi: P is k->diag, applied in the update pass. */
typedef struct {
    const ts_krylov *k;
    int jacobi;
    double *x, *r, *p, *q, *z;
    double alpha, rz;
} cg_state;

/* The two passes of a Jacobi-preconditioned CG iteration fused (the
 * diagonal preconditioner, k->precond NULL): each chunk of the reductions
 * is updated and then summed while it is in cache, with the same
 * operations in the same order as the separate passes, so the results are
 * the same bits. */

typedef struct {
    red_args r; /* x: p, y: q */
    const unsigned char *mask;
} filter_dot_args;

static void filter_dot_range(void *a, size_t k0, size_t k1)
{
    const filter_dot_args *g = a;
    size_t n = g->r.n, c = g->r.c;
    double *q = (double *)g->r.y;
    for (size_t k = k0; k < k1; k++) {
        size_t i0 = k * c, len = i0 + c < n ? c : n - i0;
        ts_vec_mask(len, g->mask ? g->mask + i0 : NULL, q + i0);
        g->r.part[k] = dot_chunk(len, g->r.x + i0, q + i0);
    }
}

/* q = S q (filtered), returns p . q */
static double cg_filter_dot(size_t n, const unsigned char *mask, const double *p, double *q)
{
    size_t c = red_chunk(n), nc = (n + c - 1) / c;
    double part[RED_PARTS];
    filter_dot_args g = {{.n = n, .c = c, .x = p, .y = q, .part = part}, mask};
    TS_PARALLEL(nc > 1, nc, filter_dot_range, &g);
    double s = 0.0;
    for (size_t k = 0; k < nc; k++)
        s += part[k];
    return s;
}

/* cg_update on the entries [i0, i1): x += alpha p, r -= alpha q and, with
 * jacobi, z = S D^-1 r (z may be q: q_i is read before z_i is written);
 * |r|^2 of the entries in *rr and, with jacobi, r . z in *rz */
static void cg_update_chunk(const cg_state *cg, size_t i0, size_t i1, double *rr, double *rz)
{
    const double *d = cg->k->diag, *p = cg->p, *q = cg->q;
    double alpha = cg->alpha, *x = cg->x, *r = cg->r, *z = cg->z;
    if (!cg->jacobi) {
#pragma omp simd
        for (size_t i = i0; i < i1; i++) {
            x[i] += alpha * p[i];
            r[i] += -alpha * q[i];
        }
        *rr = dot_chunk(i1 - i0, r + i0, r + i0);
        return;
    }
    if (d) {
#pragma omp simd
        for (size_t i = i0; i < i1; i++) {
            x[i] += alpha * p[i];
            r[i] += -alpha * q[i];
            z[i] = r[i] / d[i];
        }
    } else {
#pragma omp simd
        for (size_t i = i0; i < i1; i++) {
            x[i] += alpha * p[i];
            r[i] += -alpha * q[i];
            z[i] = r[i];
        }
    }
    ts_vec_mask(i1 - i0, cg->k->mask ? cg->k->mask + i0 : NULL, z + i0);
    *rr = dot_chunk(i1 - i0, r + i0, r + i0);
    *rz = dot_chunk(i1 - i0, r + i0, z + i0);
}

typedef struct {
    size_t n, c;
    const cg_state *cg;
    double *part_rr, *part_rz;
} update_args;

static void update_range(void *a, size_t j0, size_t j1)
{
    const update_args *g = a;
    for (size_t j = j0; j < j1; j++) {
        size_t i0 = j * g->c, i1 = i0 + g->c < g->n ? i0 + g->c : g->n;
        cg_update_chunk(g->cg, i0, i1, &g->part_rr[j], &g->part_rz[j]);
    }
}

/* The update pass of a CG iteration, in chunks (cg_update_chunk); returns
 * |r|^2 and, with jacobi, sets cg->rz to the new r . z. */
static double cg_update(size_t n, cg_state *cg)
{
    size_t c = red_chunk(n), nc = (n + c - 1) / c;
    double part_rr[RED_PARTS], part_rz[RED_PARTS];
    update_args g = {.n = n, .c = c, .cg = cg, .part_rr = part_rr, .part_rz = part_rz};
    TS_PARALLEL(nc > 1, nc, update_range, &g);
    double a = 0.0, b = 0.0;
    for (size_t j = 0; j < nc; j++)
        a += part_rr[j], b += cg->jacobi ? part_rz[j] : 0.0;
    if (cg->jacobi)
        cg->rz = b;
    return a;
}

int ts_cg_solve(const ts_linear_op *A, const double *b, double *x, const ts_krylov *k,
                int *iters)
{
    size_t n = A->n;
    double *r = k->work, *p = r + n, *q = p + n; /* 3 vectors, z in q's */
    cg_state cg = {.k = k, .jacobi = !k->precond, .x = x, .r = r, .p = p, .q = q, .z = q};
    krylov_solve ks = {.A = A, .b = b, .x = x, .k = k};
    int s, done;
    *iters = 0;
    if ((s = krylov_start(&ks, "CG", r, &done)) || done)
        return s;
    double bnorm = ks.bnorm;
    precondition(n, k, r, cg.z);
    ts_vec_copy(n, cg.z, p);
    double rz = ts_vec_dot(n, r, cg.z);
    for (int it = 1; it <= k->max_iter; it++) {
        *iters = it;
        if ((s = ts_stop_check("CG")))
            return s;
        if ((s = A->mul(A->ctx, p, q)))
            return s;
        double pq = cg_filter_dot(n, k->mask, p, q);
        if (!(pq > 0.0))
            return ts_error(TS_ERR_INDEFINITE,
                            "CG: matrix not positive definite (p.Ap = %g at iteration %d)", pq,
                            it);
        cg.alpha = rz / pq, cg.rz = 0.0;
        /* one fused pass: with Jacobi z too, else z after it */
        double rnorm = sqrt(cg_update(n, &cg));
        if (!isfinite(rnorm))
            return ts_error(TS_ERR_LINEAR, "CG: non-finite residual at iteration %d", it);
        if (rnorm <= k->tol * bnorm)
            return reached(k, rnorm, bnorm);
        if (k->precond) {
            precondition(n, k, r, cg.z);
            cg.rz = ts_vec_dot(n, r, cg.z);
        }
        ts_vec_axpby(n, 1.0, cg.z, cg.rz / rz, p); /* p = z + beta p */
        rz = cg.rz;
    }
    return ts_error(TS_ERR_LINEAR, "CG: relative residual above %g after %d iterations",
                    k->tol, k->max_iter);
}

/* BiCGSTAB's vectors (6: s = r - alpha v is formed in r, and P^-1 s in
 * phat once x has taken its alpha phat; x is not read in between, so the
 * sums are those of the textbook order) and scalars. */
typedef struct {
    double *r, *rhat, *p, *v, *t, *phat;
    double rho, alpha, omega;
} bicgstab_state;

/* BiCGSTAB's second half-step: shat = P^-1 s (in phat), t = A shat,
 * omega = t.s / t.t minimizing |s - omega t|, x += omega shat, r = s - omega t. */
static int bicgstab_smooth(const krylov_solve *ks, bicgstab_state *bs)
{
    size_t n = ks->A->n;
    precondition(n, ks->k, bs->r, bs->phat);
    int s = ks->A->mul(ks->A->ctx, bs->phat, bs->t);
    if (s)
        return s;
    ts_vec_mask(n, ks->k->mask, bs->t);
    double tt = ts_vec_dot(n, bs->t, bs->t);
    bs->omega = tt > 0.0 ? ts_vec_dot(n, bs->t, bs->r) / tt : 0.0;
    ts_vec_axpy(n, bs->omega, bs->phat, ks->x);
    ts_vec_axpy(n, -bs->omega, bs->t, bs->r);
    return TS_OK;
}

/* BiCGSTAB's first half-step at iteration it, rho_new = rhat . r:
 * p = r + beta (p - omega v) (p = r at the first), phat = P^-1 p,
 * v = A phat, alpha = rho_new / rhat.v, r = s = r - alpha v, x += alpha phat. */
static int bicgstab_half(const krylov_solve *ks, bicgstab_state *bs, double rho_new, int it)
{
    size_t n = ks->A->n;
    if (it == 1) {
        ts_vec_copy(n, bs->r, bs->p);
    } else {
        double beta = (rho_new / bs->rho) * (bs->alpha / bs->omega);
        ts_vec_axpy(n, -bs->omega, bs->v, bs->p);
        ts_vec_axpby(n, 1.0, bs->r, beta, bs->p);
    }
    precondition(n, ks->k, bs->p, bs->phat);
    int s = ks->A->mul(ks->A->ctx, bs->phat, bs->v);
    if (s)
        return s;
    ts_vec_mask(n, ks->k->mask, bs->v);
    double rv = ts_vec_dot(n, bs->rhat, bs->v);
    if (rv == 0.0)
        return ts_error(TS_ERR_LINEAR, "BiCGSTAB: breakdown (rhat.v = 0) at iteration %d", it);
    bs->alpha = rho_new / rv;
    ts_vec_axpy(n, -bs->alpha, bs->v, bs->r); /* s */
    ts_vec_axpy(n, bs->alpha, bs->phat, ks->x);
    return TS_OK;
}

int ts_bicgstab_solve(const ts_linear_op *A, const double *b, double *x, const ts_krylov *k,
                      int *iters)
{
    size_t n = A->n;
    double *r = k->work;
    bicgstab_state bs = {.r = r, .rhat = r + n, .p = r + 2 * n, .v = r + 3 * n, .t = r + 4 * n,
                         .phat = r + 5 * n, .rho = 1.0, .alpha = 1.0, .omega = 1.0};
    krylov_solve ks = {.A = A, .b = b, .x = x, .k = k};
    double mark = INFINITY;
    int s, done, mark_it = 0;
    *iters = 0;
    if ((s = krylov_start(&ks, "BiCGSTAB", r, &done)) || done)
        return s;
    double bnorm = ks.bnorm;
    ts_vec_copy(n, r, bs.rhat);
    ts_vec_zero(n, bs.p);
    ts_vec_zero(n, bs.v);
    for (int it = 1; it <= k->max_iter; it++) {
        *iters = it;
        if ((s = ts_stop_check("BiCGSTAB")))
            return s;
        double rho_new = ts_vec_dot(n, bs.rhat, r);
        if (rho_new == 0.0 || !isfinite(rho_new))
            return ts_error(TS_ERR_LINEAR, "BiCGSTAB: breakdown (rho = 0) at iteration %d", it);
        if ((s = bicgstab_half(&ks, &bs, rho_new, it)))
            return s;
        if (ts_vec_norm2(n, r) <= k->tol * bnorm)
            return reached(k, ts_vec_norm2(n, r), bnorm);
        if ((s = bicgstab_smooth(&ks, &bs)))
            return s;
        double rnorm = ts_vec_norm2(n, r);
        if (!isfinite(rnorm))
            return ts_error(TS_ERR_LINEAR, "BiCGSTAB: non-finite residual at iteration %d", it);
        if (rnorm <= k->tol * bnorm)
            return reached(k, rnorm, bnorm);
        if (rnorm <= 0.5 * mark)
            mark = rnorm, mark_it = it;
        else if (k->stall > 0 && it - mark_it >= k->stall)
            return ts_error(TS_ERR_LINEAR,
                            "BiCGSTAB: stagnated at relative residual %.3g (no halving in %d "
                            "iterations) at iteration %d",
                            mark / bnorm, k->stall, it);
        if (bs.omega == 0.0)
            return ts_error(TS_ERR_LINEAR, "BiCGSTAB: breakdown (omega = 0) at iteration %d",
                            it);
        bs.rho = rho_new;
    }
    return ts_error(TS_ERR_LINEAR, "BiCGSTAB: relative residual above %g after %d iterations",
                    k->tol, k->max_iter);
}

int ts_dense_solve(const ts_linear_op *A, const double *b, double *x, const ts_krylov *k,
                   int *iters)
{
    size_t n = A->n;
    double *a = k->work, *col = a + n * n; /* a row-major, augmented below by b in x */
    double amax = 0.0;
    int s;
    *iters = 0;
    if (n > TS_DENSE_MAX)
        return ts_error(TS_ERR_LINEAR, "dense solve: %zu unknowns, at most %d", n,
                        TS_DENSE_MAX);
    for (size_t j = 0; j < n; j++) { /* column j = A e_j, filtered */
        ts_vec_zero(n, x);
        x[j] = 1.0;
        if ((s = A->mul(A->ctx, x, col)))
            return s;
        ++*iters;
        ts_vec_mask(n, k->mask, col);
        for (size_t i = 0; i < n; i++) {
            a[i * n + j] = k->mask && k->mask[j] ? (double)(i == j) : col[i];
            amax = fmax(amax, fabs(a[i * n + j]));
        }
    }
    for (size_t i = 0; i < n; i++) { /* masked rows: x_i = 0 */
        x[i] = k->mask && k->mask[i] ? 0.0 : b[i];
        if (k->mask && k->mask[i])
            for (size_t j = 0; j < n; j++)
                a[i * n + j] = (double)(i == j);
    }
    for (size_t c = 0; c < n; c++) {
        size_t piv = c;
        for (size_t i = c + 1; i < n; i++)
            if (fabs(a[i * n + c]) > fabs(a[piv * n + c]))
                piv = i;
        if (!(fabs(a[piv * n + c]) > 1e-14 * amax))
            return ts_error(TS_ERR_LINEAR, "dense solve: matrix singular to working precision");
        if (piv != c) {
            for (size_t j = 0; j < n; j++) {
                double tmp = a[c * n + j];
                a[c * n + j] = a[piv * n + j], a[piv * n + j] = tmp;
            }
            double tmp = x[c];
            x[c] = x[piv], x[piv] = tmp;
        }
        for (size_t i = c + 1; i < n; i++) {
            double f = a[i * n + c] / a[c * n + c];
            for (size_t j = c; j < n; j++)
                a[i * n + j] -= f * a[c * n + j];
            x[i] -= f * x[c];
        }
    }
    for (size_t c = n; c-- > 0;) {
        for (size_t j = c + 1; j < n; j++)
            x[c] -= a[c * n + j] * x[j];
        x[c] /= a[c * n + c];
    }
    if (!ts_vec_all_finite(n, x))
        return ts_error(TS_ERR_LINEAR, "dense solve: non-finite solution");
    if (k->achieved) { /* the true residual, with the elimination's round-off */
        krylov_solve ks = {.A = A, .b = b, .x = x, .k = k};
        if ((s = residual(&ks, a)))
            return s;
        reached(k, ts_vec_norm2(n, a), filtered_norm(n, b, k->mask));
    }
    return TS_OK;
}

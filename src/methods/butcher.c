/* The explicit Runge-Kutta engine: one step of any Butcher tableau; see
 * tstep/butcher.h.  Hairer, Norsett & Wanner, Solving ODEs I, II.1 (the
 * method), II.4 (embedded error estimates), II.5 (FSAL, Dormand & Prince).
 *
 * Memory passes.  Y_n is read where it is stored (x and v, the two halves
 * of Y) and Y_{n+1} written there by the last combination, so a step makes
 * no copy of the state in or out.  A stage k_j = F(t_j, Y_j) = [dx; a] is
 * built in its own array: the force evaluation writes f into its second
 * half, and on an order-2 system the first half, dx = v_j, is where the
 * stage's velocity was formed (Y_j is held as [ys; dx_j], so no velocity is
 * copied; the first stage's dx is v itself, not stored, unless the tableau
 * is FSAL).  What is left of F (a = M^-1 f, and zero at pinned degrees of
 * freedom in both halves) is done by the pass that next reads k_j: the one
 * forming Y_{j+1} = Y_n + h sum a_{j+1,l} k_l, or the final combination
 * (which finishes the last stage in cache only, unless FSAL keeps it).
 * So each stage costs its force evaluation and one pass over the state,
 * done in blocks of BLOCK entries that stay in cache while k_j is finished
 * and every half of Y_{j+1} combined.  Each entry sees the operations of
 * the plain formulation in the same order (a copy of Y_n, then one product
 * and add per nonzero coefficient, in stage order), so the results are bit
 * for bit those of k_j = F(Y_j) followed by separate combinations
 * (tests/check_butcher.c).
 *
 * A chained tableau (a_ij = 0 unless j = i - 1, no bhat, no FSAL; see
 * ts_butcher_keeps_start) needs k_j only in the pass after its evaluation:
 * that pass adds h b_j k_j to a running sum S (S = Y_n + h b_1 k_1 at the
 * first stage, the final combination's operations in its order), so every
 * stage's k lives in the same buffers (the stage velocity, built in place
 * over the last one, and one force buffer, finished in cache only) and the
 * last pass writes Y_{n+1} = S + h b_s k_s into x and v and Y_n into S:
 * the start kept for ts_stepper_step (TS_KEEPS_START), which then takes no
 * backup copy.  The block loops are compiled for AVX-512, AVX2
 * and the baseline instruction set (GCC/Clang target_clones on x86-64;
 * -DTS_NO_CLONES builds the baseline only). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/butcher.h"
#include "tstep/linalg.h"
#include "core/parallel.h"

#define BLOCK 512

typedef struct {
    ts_kept_start start; /* first (TS_KEEPS_START): Y_n in sum once Y_{n+1} is written */
    const ts_butcher *tab;
    size_t m;      /* length of Y */
    int chained;   /* see ts_butcher_keeps_start: one buffer for every stage's k */
    double *sum;   /* chained: Y_n + h sum_{l<=j} b_l k_l (m entries) */
    double *ys;    /* the stages' positions (order 2) or states (order 1) */
    double *err;
    double *db;    /* b - bhat (with bhat) */
    double **k;    /* s stages, each [dx; a] (order 2) or a (order 1) */
    double **ka;   /* the stages' force halves: k[i] + n (order 2), k[i] (order 1) */
    /* FSAL: F at the start (k[0], valid_start) and at the end (k[s-1],
     * valid_end) of the last step, with the states and times they belong to */
    double *ystart, *yend;
    double tstart, tend;
    int valid_start, valid_end;
} butcher_scratch;

int ts_butcher_keeps_start(const ts_butcher *tab)
{
    int s = tab->stages;
    if (tab->bhat || tab->fsal)
        return 0;
    for (int i = 0; i < s; i++)
        for (int j = 0; j < i - 1; j++)
            if (tab->a[i * s + j] != 0.0)
                return 0;
    return 1;
}

/* A chained tableau's scratch: ys, the stage velocity (order 2), the force
 * buffer and the sum; every stage's k is in the same buffers (k_1's dx is
 * v, see stage_block). */
static double *chained_alloc(butcher_scratch *b, const ts_system *sys)
{
    size_t n = sys->n, order2 = sys->order == 2;
    double *block = calloc((2 + order2) * n + b->m, sizeof *block);
    if (!block)
        return NULL;
    b->ys = block;
    double *sv = block + n, *f = sv + order2 * n;
    b->sum = f + n;
    for (int i = 0; i < b->tab->stages; i++) {
        b->ka[i] = f;
        b->k[i] = order2 && i > 0 ? sv : f;
    }
    b->chained = 1;
    b->start = (ts_kept_start){.n = n, .x = b->sum, .v = order2 ? b->sum + n : NULL};
    return block;
}

/* Any other tableau's: ys (n: an order-2 stage's velocity lives in its k),
 * then err, ystart and yend only for the tableaus that use them, b - bhat,
 * and the stages; k_1 without its dx when that is v (order 2, no FSAL: see
 * stage_block). */
static double *stages_alloc(butcher_scratch *b, const ts_system *sys)
{
    const ts_butcher *tab = b->tab;
    size_t m = b->m, n = sys->n, s = (size_t)tab->stages;
    size_t extra = (tab->bhat ? 1 : 0) + (tab->fsal ? 2 : 0);
    size_t no_dx1 = sys->order == 2 && !tab->fsal ? n : 0;
    double *block = calloc(n + (extra + s) * m - no_dx1 + s + 1, sizeof *block);
    if (!block)
        return NULL;
    double *next = block;
    b->ys = next, next += n;
    if (tab->bhat)
        b->err = next, next += m;
    if (tab->fsal) {
        b->ystart = next, next += m;
        b->yend = next, next += m;
    }
    if (tab->bhat) {
        b->db = next, next += s;
        for (size_t i = 0; i < s; i++)
            b->db[i] = tab->b[i] - tab->bhat[i];
    }
    next -= no_dx1; /* k[0] + n is its first entry */
    for (size_t i = 0; i < s; i++) {
        b->k[i] = next + i * m;
        b->ka[i] = b->k[i] + (m - n);
    }
    if (no_dx1)
        b->k[0] = b->ka[0]; /* never read as dx */
    return block;
}

int ts_butcher_alloc(const ts_butcher *tab, const ts_system *sys, void **scratch)
{
    size_t s = (size_t)tab->stages;
    if (tab->stages < 1 || tab->stages > TS_BUTCHER_MAX_STAGES)
        return ts_error(TS_ERR_INPUT, "a Butcher tableau has 1 to %d stages, not %d",
                        TS_BUTCHER_MAX_STAGES, tab->stages);
    butcher_scratch *b = calloc(1, sizeof *b);
    double **k = calloc(2 * s, sizeof *k);
    if (b && k) {
        b->tab = tab, b->m = ts_system_ydim(sys), b->k = k, b->ka = k + s;
        if (ts_butcher_keeps_start(tab) ? chained_alloc(b, sys) : stages_alloc(b, sys)) {
            *scratch = b;
            return TS_OK;
        }
    }
    free(b);
    free(k);
    return ts_error(TS_ERR_NOMEM, "Runge-Kutta scratch");
}

void ts_butcher_free(void *scratch)
{
    butcher_scratch *b = scratch;
    if (!b)
        return;
    free(b->ys); /* the block */
    free(b->k);
    free(b);
}

void ts_butcher_reset(void *scratch)
{
    butcher_scratch *b = scratch;
    b->valid_start = b->valid_end = 0;
}

/* the stored Y_n equals y (m entries, [x; v]) bit for bit */
static int state_is(const ts_system *sys, const double *y)
{
    size_t bytes = sys->n * sizeof *y;
    return memcmp(sys->x, y, bytes) == 0 &&
           (sys->order != 2 || memcmp(sys->v, y + sys->n, bytes) == 0);
}

/* --- one pass over the state, in blocks --------------------------------- */

/* The vector loops are compiled for the wider instruction sets too, the
 * one this processor has chosen when the program loads; the arithmetic is
 * the same (IEEE operations element by element, no contraction), so are
 * the results. */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__has_attribute) && !defined(TS_NO_CLONES)
#if __has_attribute(target_clones)
#define WIDE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef WIDE_CLONES
#define WIDE_CLONES
#endif
/* the block kernels, inlined into each clone */
#if defined(__GNUC__)
#define BLOCK_KERNEL static inline __attribute__((always_inline))
#else
#define BLOCK_KERNEL static inline
#endif

/* a = M^-1 f over the block [i0, i0 + len), zero where pinned (a may be f) */
BLOCK_KERNEL void accel_block(const ts_system *sys, size_t i0, size_t len, const double *f, double *a)
{
    const double *m = sys->mass + i0;
    const unsigned char *pin = sys->pinned;
#pragma omp simd
    for (size_t i = 0; i < len; i++)
        a[i] = f[i] / m[i];
    if (pin)
        for (size_t p = ts_mask_next(pin, i0, i0 + len); p < i0 + len;
             p = ts_mask_next(pin, p + 1, i0 + len))
            a[p - i0] = 0.0;
}

/* A stage's dx over the block: its velocity sv, zero where pinned.  In
 * place (dx == sv), or into dx (buffer) only when the block has a pin;
 * returns where dx is to be read. */
BLOCK_KERNEL const double *dx_block(const ts_system *sys, size_t i0, size_t len, const double *sv,
                              double *dx)
{
    const unsigned char *pin = sys->pinned;
    size_t p = pin ? ts_mask_next(pin, i0, i0 + len) : i0 + len;
    if (p == i0 + len)
        return sv;
    if (dx != sv)
        memcpy(dx, sv, len * sizeof *dx);
    for (; p < i0 + len; p = ts_mask_next(pin, p + 1, i0 + len))
        dx[p - i0] = 0.0;
    return dx;
}

/* The weights of a combination: (h c_j) for j < count. */
typedef struct {
    double h;
    const double *c;
    int count;
} weights;

/* z = y + sum_{j < count, c_j != 0} (h c_j) v_j over [0, len) (z may be
 * y): the operations of a copy followed by one product and add per nonzero
 * c_j, in order (the copy and the first add in one loop) */
BLOCK_KERNEL void combine_block(size_t len, const double *y, const weights *w,
                                const double *const *v, double *z)
{
    double h = w->h;
    const double *c = w->c;
    int j = 0, count = w->count;
    if (z != y) {
        while (j < count && c[j] == 0.0)
            j++;
        if (j == count) {
            memcpy(z, y, len * sizeof *z);
            return;
        }
        double f = h * c[j];
        const double *vj = v[j];
#pragma omp simd
        for (size_t i = 0; i < len; i++)
            z[i] = y[i] + f * vj[i];
        j++;
    }
    for (; j < count; j++) {
        if (c[j] == 0.0)
            continue;
        double f = h * c[j];
        const double *vj = v[j];
#pragma omp simd
        for (size_t i = 0; i < len; i++)
            z[i] += f * vj[i];
    }
}

/* What one pass does (see stage_pass): finish stage j (finish; in place
 * when keep), the error estimate into err (NULL: none), and the
 * combination with the weights h c_l, l < count, into zx and zv. */
typedef struct {
    int j, finish, keep, count;
    double h;
    const double *c;
    double *zx, *zv, *err;
} pass_args;

/* A chained tableau's sum over the block: sum = Y_n + (h b_j) k_j at the
 * first stage, sum += (h b_j) k_j after it (the operations of the final
 * combination, in the same order); at the last stage Y_{n+1} = sum + (h b_j)
 * k_j goes into the state and Y_n into sum (the kept start).  dx and a: k_j's
 * halves (a only, on order 1). */
BLOCK_KERNEL void sum_block(const butcher_scratch *b, const ts_system *sys, const pass_args *g,
                            size_t i0, size_t len, const double *const *k)
{
    const weights w = {g->h, b->tab->b + g->j, 1};
    double *y[2] = {sys->x + i0, sys->order == 2 ? sys->v + i0 : NULL};
    for (int half = 0; half < 2 && y[half]; half++) {
        double *sum = b->sum + (size_t)half * sys->n + i0;
        const double *from = g->j == 0 ? y[half] : sum;
        if (g->j < b->tab->stages - 1) {
            combine_block(len, from, &w, &k[half], sum);
        } else if (w.c[0] != 0.0) { /* combine_block's product and add, and the swap */
            double f = w.h * w.c[0], *yh = y[half];
            const double *kj = k[half];
#pragma omp simd
            for (size_t i = 0; i < len; i++) {
                double z = from[i] + f * kj[i];
                sum[i] = yh[i];
                yh[i] = z;
            }
        } else {
            double z[BLOCK];
            combine_block(len, from, &w, &k[half], z);
            memcpy(sum, y[half], len * sizeof *z);
            memcpy(y[half], z, len * sizeof *z);
        }
    }
}

WIDE_CLONES
static void stage_block(const butcher_scratch *b, const ts_system *sys, const pass_args *g,
                        size_t i0, size_t len)
{
    int s = b->tab->stages, order2 = sys->order == 2, v_is_dx1 = order2 && !b->tab->fsal;
    int j = g->j, keep = g->keep;
    size_t n = sys->n;
    double la[BLOCK], ldx[BLOCK], lv[BLOCK];
    const double *pa[TS_BUTCHER_MAX_STAGES], *px[TS_BUTCHER_MAX_STAGES];
    for (int l = 0; l < s; l++) {
        pa[l] = b->ka[l] + i0;
        px[l] = order2 ? b->k[l] + i0 : pa[l];
    }
    if (v_is_dx1)
        px[0] = dx_block(sys, i0, len, sys->v + i0, lv);
    if (g->finish) {
        double *a = keep ? b->ka[j] + i0 : la;
        accel_block(sys, i0, len, b->ka[j] + i0, a);
        pa[j] = a;
        if (!order2) {
            px[j] = a;
        } else if (j > 0 || !v_is_dx1) { /* a stage's velocity, or v (fsal) */
            px[j] = dx_block(sys, i0, len, j == 0 ? sys->v + i0 : b->k[j] + i0,
                             keep ? b->k[j] + i0 : ldx);
            if (keep && px[j] != b->k[j] + i0)
                memcpy(b->k[j] + i0, px[j], len * sizeof *b->k[j]);
        }
    }
    if (b->chained) /* before the stage velocity overwrites dx_j */
        sum_block(b, sys, g, i0, len, (const double *[]){px[j], pa[j]});
    double *err = g->err;
    if (err) {
        const weights db = {g->h, b->db, s};
        memset(err + i0, 0, len * sizeof *err);
        combine_block(len, err + i0, &db, px, err + i0);
        if (order2) {
            memset(err + n + i0, 0, len * sizeof *err);
            combine_block(len, err + n + i0, &db, pa, err + n + i0);
        }
    }
    if (g->count > 0) {
        const weights w = {g->h, g->c, g->count};
        combine_block(len, sys->x + i0, &w, px, g->zx + i0);
        if (order2)
            combine_block(len, sys->v + i0, &w, pa, g->zv + i0);
    }
}

typedef struct {
    const butcher_scratch *b;
    const ts_system *sys;
    const pass_args *g;
} blocks_args;

/* the blocks [k0, k1) of a pass */
static void blocks_range(void *c, size_t k0, size_t k1)
{
    const blocks_args *a = c;
    size_t n = a->sys->n;
    for (size_t blk = k0; blk < k1; blk++) {
        size_t i0 = blk * BLOCK;
        stage_block(a->b, a->sys, a->g, i0, i0 + BLOCK < n ? BLOCK : n - i0);
    }
}

/* One pass over the state, block by block: finish stage g->j (if finish;
 * in place if keep, else in a block of its own, for this pass only), then,
 * with err, err = 0 + h sum (b_l - bhat_l) k_l over every stage, and
 * combine zx = x + h sum_{l<count} c_l dx_l and zv = v + h sum c_l a_l
 * (order 2; zx = x + h sum c_l a_l on order 1).  Without FSAL, dx_1 is not
 * stored: it is v, read where it is stored (each block reads it before it
 * overwrites it). */
static void stage_pass(const butcher_scratch *b, const ts_system *sys, const pass_args *g)
{
    size_t n = sys->n, nb = (n + BLOCK - 1) / BLOCK;
    blocks_args a = {b, sys, g};
    TS_PARALLEL(n >= ts_threads_min(), nb, blocks_range, &a);
}

/* k_1 = F(t, Y_n), reused from the last step where the tableau allows it;
 * *finish: k_1 still holds f (stage_pass finishes it) */
static int first_stage(butcher_scratch *b, ts_system *sys, double t, double h, int *finish)
{
    size_t m = b->m, s = (size_t)b->tab->stages;
    *finish = 0;
    if (b->tab->fsal) {
        if (b->valid_end && ts_time_continues(t, b->tend, h) && state_is(sys, b->yend)) {
            double *k1 = b->k[0], *a1 = b->ka[0]; /* the last stage becomes the first */
            b->k[0] = b->k[s - 1], b->ka[0] = b->ka[s - 1];
            b->k[s - 1] = k1, b->ka[s - 1] = a1;
            ts_vec_copy(m, b->yend, b->ystart);
            b->tstart = t;
            b->valid_start = 1;
            b->valid_end = 0;
            return TS_OK;
        }
        if (b->valid_start && ts_time_continues(t, b->tstart, h) && state_is(sys, b->ystart))
            return TS_OK; /* a retry from the same start */
        b->valid_start = b->valid_end = 0;
    }
    int st = ts_system_forces(sys, t, sys->x, sys->order == 2 ? sys->v : NULL, b->ka[0]);
    if (st)
        return st;
    if (!b->tab->fsal) {
        *finish = 1;
        return TS_OK;
    }
    /* kept for the next step or a retry: finished now */
    stage_pass(b, sys, &(pass_args){.j = 0, .finish = 1, .keep = 1, .h = h});
    ts_system_get_y(sys, b->ystart);
    b->tstart = t;
    b->valid_start = 1;
    return TS_OK;
}

int ts_butcher_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    butcher_scratch *b = scratch;
    const ts_butcher *tab = b->tab;
    size_t n = sys->n;
    int s = tab->stages, order2 = sys->order == 2, finish, st;
    (void)stats;
    b->start.kept = 0;
    if ((st = first_stage(b, sys, t, h, &finish)))
        return st;
    if (tab->fsal)
        b->valid_end = 0; /* k[s-1] is about to be overwritten */
    for (int i = 1; i < s; i++) {
        /* finish k_{i-1} (and add it to the sum, chained); Y_i = Y_n + h
         * sum_{j<i} a_ij k_j into [ys; dx_i] */
        double *zv = order2 ? b->k[i] : NULL;
        stage_pass(b, sys,
                   &(pass_args){.j = i - 1, .finish = finish, .keep = !b->chained, .count = i,
                                .h = h, .c = tab->a + i * s, .zx = b->ys, .zv = zv});
        if ((st = ts_system_forces(sys, t + tab->c[i] * h, b->ys, zv, b->ka[i])))
            return st;
        finish = 1;
    }
    if (tab->fsal) {
        /* the last stage was evaluated at Y_{n+1} itself: [ys; dx_s] */
        ts_vec_copy(n, b->ys, sys->x);
        if (order2)
            ts_vec_copy(n, b->k[s - 1], sys->v);
        ts_system_get_y(sys, b->yend);
        b->tend = t + h;
        b->valid_end = 1;
        /* finish k_s (the next step's k_1); Y_{n+1} - Yhat = h sum (b_i - bhat_i) k_i */
        stage_pass(b, sys,
                   &(pass_args){.j = s - 1, .finish = finish, .keep = 1, .h = h, .err = b->err});
    } else if (b->chained) { /* Y_{n+1} = the sum + h b_s k_s; Y_n kept in the sum */
        stage_pass(b, sys, &(pass_args){.j = s - 1, .finish = finish, .h = h});
        b->start.kept = 1;
    } else { /* Y_{n+1} = Y_n + h sum_i b_i k_i, in place (k_s not kept) */
        stage_pass(b, sys,
                   &(pass_args){.j = s - 1, .finish = finish, .count = s, .h = h, .c = tab->b,
                                .zx = sys->x, .zv = order2 ? sys->v : NULL, .err = b->err});
    }
    return TS_OK;
}

double ts_butcher_error(void *scratch, const ts_system *sys, const double *y0, double rtol,
                        double atol)
{
    const butcher_scratch *b = scratch;
    size_t n = sys->n;
    double sum = 0.0;
    for (size_t i = 0; i < b->m; i++) {
        double y1 = i < n ? sys->x[i] : sys->v[i - n];
        double sc = atol + rtol * fmax(fabs(y0[i]), fabs(y1));
        double e = b->err[i] / sc;
        sum += e * e;
    }
    return sqrt(sum / (double)b->m);
}

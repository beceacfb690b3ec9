/* The linear-solver layer below Newton (tstep/linsolve.h): the registries,
 * the driver every solver shares (setup at a linearization, the fallback
 * chain, timing) and the assembly of A = M - alpha df/dx - beta df/dv as a
 * sparse lower triangle for the solvers and preconditioners that need it.
 *
 * Filtering pinned degrees of freedom (Baraff & Witkin, "Large Steps in
 * Cloth Simulation", SIGGRAPH 1998, sec. 5.3): the matrix-free product is
 * filtered by the Krylov solvers; the assembled A has the identity's rows
 * and columns at pinned entries, which is the same operator on filtered
 * vectors, so every path solves the same system. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tstep/linalg.h"
#include "tstep/linsolve.h"
#include "core/ext.h"
#include "core/parallel.h"

const ts_linsolve_type *const ts_linsolve_registry[] = {
#define TS_LINSOLVE(type) &type,
#define TS_PRECOND(type)
#include "tstep/linsolvers.h"
#undef TS_LINSOLVE
#undef TS_PRECOND
    NULL};
const ts_precond_type *const ts_precond_registry[] = {
#define TS_LINSOLVE(type)
#define TS_PRECOND(type) &type,
#include "tstep/linsolvers.h"
#undef TS_LINSOLVE
#undef TS_PRECOND
    NULL};

const ts_linsolve_type *ts_linsolve_find(const char *name)
{
    for (size_t i = 0; ts_linsolve_registry[i]; i++)
        if (strcmp(ts_linsolve_registry[i]->name, name) == 0)
            return ts_linsolve_registry[i];
    return NULL;
}

const ts_precond_type *ts_precond_find(const char *name)
{
    for (size_t i = 0; ts_precond_registry[i]; i++)
        if (strcmp(ts_precond_registry[i]->name, name) == 0)
            return ts_precond_registry[i];
    return NULL;
}

/* Iterations in which BiCGSTAB's least residual must halve when the
 * definiteness fix can take over.  On an indefinite matrix (compressed
 * springs) BiCGSTAB either converges steadily (the residual halving about
 * every 15 iterations, with Jacobi or amg) or wanders for thousands of
 * iterations near 10^-3 (measured: a 20 x 20 cloth falling flat with the
 * Provot limit, backward-euler-linear at dt 1/30, 46 steps: 155,007
 * iterations, 48.8 s with amg). */
#define TS_BICGSTAB_STALL 100

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --- the assembled matrix ------------------------------------------------------ */

static int pinned(const ts_system *sys, size_t i)
{
    return sys->pinned && sys->pinned[i];
}

void ts_sparse_free(ts_sparse *a)
{
    if (!a)
        return;
    free(a->colp);
    free(a->row);
    free(a->val);
    free(a->slot);
    free(a->tval);
    free(a->col_);
    free(a);
}

static int u32_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* position of row r in column j, or UINT32_MAX */
static uint32_t find_slot(const ts_sparse *a, size_t j, size_t r)
{
    size_t lo = a->colp[j], hi = a->colp[j + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->row[mid] < r)
            lo = mid + 1;
        else if (a->row[mid] > r)
            hi = mid;
        else
            return (uint32_t)mid;
    }
    return UINT32_MAX;
}

/* --- the matrix straight from a system's blocks (ts_system_blocks) ---------------- *
 * The same pattern and the same numbers as from its triplets (below), without
 * them: the triplets cost 12 B each while the matrix lives (60 a cloth
 * particle: 720 B) and 16 B more each while the pattern is built.  Edges
 * are sorted by (i, j) with i < j, so column 3p + b of the lower triangle
 * holds the diagonal, the rest of particle p's block (rows 3p + a, a > b),
 * then rows 3 j .. 3 j + 2 of the edges with i = p in order; pinned rows and
 * columns drop out as for triplets.  Stored full (both triangles, a->full),
 * column 3p + b starts with the rows of the edges with j = p (by i) and
 * holds all of p's block: the matrix's rows, as a multigrid preconditioner
 * reads them, without a copy. */

static void put(ts_sparse *a, size_t *k, size_t r)
{
    if (a->row)
        a->row[*k] = (uint32_t)r;
    (*k)++;
}

/* rows 3q .. 3q + 2 where not pinned */
static void put_particle(ts_sparse *a, const ts_system *sys, size_t *k, size_t q)
{
    for (size_t r = 3 * q; r < 3 * q + 3; r++)
        if (!pinned(sys, r))
            put(a, k, r);
}

/* Walk the pattern: rows written when a->row is set, else a->colp filled;
 * rev[rstart[p] ..] the edges with j = p by i (full storage only).
 * Returns the number of entries. */
static size_t blocks_pattern(ts_sparse *a, const ts_system *sys, const ts_system_blocks *s,
                              const size_t *rstart, const uint32_t *rev)
{
    size_t k = 0, e = 0;
    for (size_t p = 0; p < s->np; p++) {
        size_t e0 = e;
        while (e < s->ne && s->i[e] == p)
            e++;
        for (size_t c = 3 * p; c < 3 * p + 3; c++) {
            if (pinned(sys, c)) {
                put(a, &k, c);
            } else {
                if (a->full) /* a second edge between two particles adds no entry */
                    for (size_t f = rstart[p]; f < rstart[p + 1]; f++)
                        if (f == rstart[p] || s->i[rev[f]] != s->i[rev[f - 1]])
                            put_particle(a, sys, &k, s->i[rev[f]]);
                for (size_t r = a->full ? 3 * p : c; r < 3 * p + 3; r++)
                    if (r == c || !pinned(sys, r))
                        put(a, &k, r);
                for (size_t f = e0; f < e; f++)
                    if (f == e0 || s->j[f] != s->j[f - 1])
                        put_particle(a, sys, &k, s->j[f]);
            }
            if (!a->row)
                a->colp[c + 1] = k;
        }
    }
    return k;
}

/* position of row r in column c (both unpinned: in the pattern), guess first */
static size_t blocks_slot(const ts_sparse *a, size_t c, size_t r, size_t guess)
{
    if (guess >= a->colp[c] && guess < a->colp[c + 1] && a->row[guess] == r)
        return guess;
    return find_slot(a, c, r);
}

/* A's values as ts_sparse_assemble forms them from the triplets, the same
 * operations in the same order: each particle's block summed over its
 * edges in their order from self m on its diagonal (in blk, 9 a particle)
 * and subtracted from M; each edge's block subtracted from 0. */
static void blocks_values(ts_sparse *a, ts_system *sys, const ts_system_blocks *s, double *blk)
{
    static const int full9[9] = {0, 1, 2, 1, 3, 4, 2, 4, 5}; /* (r, c) in xx xy xz yy yz zz */
    ts_vec_zero(a->nnz, a->val);
    for (size_t p = 0; p < s->np; p++)
        for (size_t q = 0; q < 9; q++)
            blk[9 * p + q] = q % 4 == 0 ? s->self * sys->mass[3 * p + q / 3] : 0.0;
    for (size_t e = 0; e < s->ne; e++) {
        double b[6];
        size_t i = s->i[e], j = s->j[e];
        s->block(sys, e, b);
        for (size_t q = 0; q < 9; q++)
            blk[9 * i + q] -= b[full9[q]], blk[9 * j + q] -= b[full9[q]];
        /* (3j + dr, 3i + dc), and (3i + dc, 3j + dr) when full */
        for (int upper = 0; upper <= a->full; upper++)
            for (size_t d0 = 0; d0 < 3; d0++) {
                size_t c = upper ? 3 * j + d0 : 3 * i + d0, at = SIZE_MAX - 1;
                if (pinned(sys, c))
                    continue;
                for (size_t d1 = 0; d1 < 3; d1++) {
                    size_t r = upper ? 3 * i + d1 : 3 * j + d1;
                    if (pinned(sys, r))
                        continue;
                    at = blocks_slot(a, c, r, at + 1);
                    a->val[at] -= b[full9[3 * d0 + d1]];
                }
            }
    }
    /* the particles' blocks: M (the identity at pinned entries) minus the sums */
    for (size_t c = 0; c < a->n; c++) {
        size_t p = c / 3;
        for (size_t q = a->colp[c]; q < a->colp[c + 1]; q++) {
            size_t r = a->row[q];
            if (r / 3 == p)
                a->val[q] = pinned(sys, c) ? 1.0
                                           : (r == c ? sys->mass[c] : 0.0) -
                                                 blk[9 * p + 3 * (r % 3) + c % 3];
        }
    }
}

/* The edges with j = p by i, for each p: a counting sort of the edges
 * (sorted by i) by j. */
static int blocks_reverse(const ts_system_blocks *s, size_t **rstart, uint32_t **rev)
{
    *rstart = calloc(s->np + 1, sizeof **rstart);
    *rev = malloc((s->ne + 1) * sizeof **rev);
    if (!*rstart || !*rev)
        return TS_ERR_NOMEM;
    for (size_t e = 0; e < s->ne; e++)
        (*rstart)[s->j[e] + 1]++;
    for (size_t p = 0; p < s->np; p++)
        (*rstart)[p + 1] += (*rstart)[p];
    for (size_t e = 0; e < s->ne; e++)
        (*rev)[(*rstart)[s->j[e]]++] = (uint32_t)e;
    for (size_t p = s->np; p > 0; p--)
        (*rstart)[p] = (*rstart)[p - 1];
    (*rstart)[0] = 0;
    return TS_OK;
}

static int blocks_sparse_new(ts_sparse *a, const ts_system *sys, const ts_system_blocks *s)
{
    size_t *rstart = NULL, total = 0;
    uint32_t *rev = NULL;
    int st = TS_ERR_NOMEM;
    a->colp = calloc(a->n + 1, sizeof *a->colp);
    if (!a->colp || (a->full && blocks_reverse(s, &rstart, &rev)))
        goto fail;
    total = blocks_pattern(a, sys, s, rstart, rev);
    if (total >= UINT32_MAX) {
        st = TS_ERR_UNSUPPORTED;
        goto fail;
    }
    a->row = malloc((total + 1) * sizeof *a->row);
    a->val = malloc((total + 1) * sizeof *a->val);
    if (!a->row || !a->val)
        goto fail;
    blocks_pattern(a, sys, s, rstart, rev);
    a->nnz = total;
    free(rstart);
    free(rev);
    return TS_OK;
fail:
    free(rstart);
    free(rev);
    return ts_error(st, "sparse matrix of %zu unknowns, %zu entries", a->n, total);
}

/* The columns from the triplets (tr, tc): every diagonal entry, and each
 * triplet (r, c) with neither end pinned; sorted and without duplicates;
 * then slot[] maps the triplets to them.  cnt: n + 1 zeros. */
static int triplets_pattern(ts_sparse *a, const ts_system *sys, const size_t *tr,
                            const size_t *tc, size_t *cnt)
{
    size_t n = a->n, nt = a->ntrip, total = 0, w = 0;
    for (size_t k = 0; k < nt; k++) /* column counts with duplicates */
        if (!pinned(sys, tr[k]) && !pinned(sys, tc[k]) && tr[k] != tc[k])
            cnt[tc[k]]++;
    for (size_t j = 0; j < n; j++) {
        a->colp[j] = total;
        total += cnt[j] + 1; /* + the diagonal */
    }
    a->colp[n] = total;
    if (n >= UINT32_MAX || total >= UINT32_MAX)
        return ts_error(TS_ERR_UNSUPPORTED, "sparse matrix of %zu unknowns, %zu entries", n,
                        total);
    if (!(a->row = malloc((total + 1) * sizeof *a->row)))
        return TS_ERR_NOMEM;
    for (size_t j = 0; j < n; j++) {
        a->row[a->colp[j]] = (uint32_t)j;
        cnt[j] = a->colp[j] + 1;
    }
    for (size_t k = 0; k < nt; k++)
        if (!pinned(sys, tr[k]) && !pinned(sys, tc[k]) && tr[k] != tc[k])
            a->row[cnt[tc[k]]++] = (uint32_t)tr[k];
    for (size_t j = 0; j < n; j++) { /* sort below the diagonal, drop duplicates, compact */
        size_t b = a->colp[j], e = a->colp[j + 1];
        qsort(a->row + b + 1, e - b - 1, sizeof *a->row, u32_cmp);
        a->colp[j] = w;
        for (size_t p = b; p < e; p++)
            if (p == b || a->row[p] != a->row[w - 1])
                a->row[w++] = a->row[p];
    }
    a->colp[n] = w;
    a->nnz = w;
    if (!(a->val = malloc((w + 1) * sizeof *a->val)))
        return TS_ERR_NOMEM;
    for (size_t k = 0; k < nt; k++)
        a->slot[k] = pinned(sys, tr[k]) || pinned(sys, tc[k]) ? UINT32_MAX
                                                                : find_slot(a, tc[k], tr[k]);
    return TS_OK;
}

/* The pattern from the system's triplets (or, for n <= TS_SPARSE_PRODUCTS_MAX
 * without them, the full lower triangle, assembled by products). */
static int triplets_sparse_new(ts_sparse *a, const ts_system *sys)
{
    size_t n = a->n, nt = 0;
    int have_trip = sys->ops->jacobian_triplets != NULL;
    if (have_trip)
        sys->ops->jacobian_triplets((ts_system *)sys, &nt, NULL, NULL, NULL);
    else if (n <= TS_SPARSE_PRODUCTS_MAX)
        nt = n * (n + 1) / 2;
    else
        return ts_error(TS_ERR_UNSUPPORTED,
                        "an assembled matrix of %s needs its Jacobian as triplets (n = %zu > %d)",
                        sys->type ? sys->type->name : "this system", n, TS_SPARSE_PRODUCTS_MAX);
    a->ntrip = nt;
    size_t *tr = malloc((nt + 1) * sizeof *tr), *tc = malloc((nt + 1) * sizeof *tc);
    size_t *cnt = calloc(n + 1, sizeof *cnt);
    a->slot = malloc((nt + 1) * sizeof *a->slot);
    a->tval = malloc((nt + 1) * sizeof *a->tval);
    a->colp = calloc(n + 1, sizeof *a->colp);
    a->col_ = malloc(2 * n * sizeof *a->col_);
    int st = TS_ERR_NOMEM;
    if (tr && tc && cnt && a->slot && a->tval && a->colp && a->col_) {
        if (have_trip) {
            sys->ops->jacobian_triplets((ts_system *)sys, &nt, tr, tc, NULL);
        } else {
            size_t k = 0;
            for (size_t j = 0; j < n; j++)
                for (size_t i = j; i < n; i++)
                    tr[k] = i, tc[k] = j, k++;
        }
        st = triplets_pattern(a, sys, tr, tc, cnt);
    }
    free(tr);
    free(tc);
    free(cnt);
    if (st == TS_ERR_NOMEM)
        return ts_error(TS_ERR_NOMEM, "sparse matrix of %zu unknowns, %zu triplets", n, nt);
    return st;
}

/* The pattern from the system's blocks (above) where it has them, else
 * from its triplets: the same pattern either way. */
int ts_sparse_new_as(const ts_system *sys, int full, ts_sparse **out)
{
    ts_sparse *a = calloc(1, sizeof *a);
    ts_system_blocks g;
    *out = NULL;
    if (!a)
        return ts_error(TS_ERR_NOMEM, "sparse matrix");
    a->n = sys->n;
    int st;
    if (sys->ops->blocks && sys->n < UINT32_MAX && !sys->ops->blocks((ts_system *)sys, &g)) {
        a->full = full;
        a->from_blocks = 1;
        st = blocks_sparse_new(a, sys, &g);
    } else {
        st = triplets_sparse_new(a, sys);
    }
    if (st) {
        ts_sparse_free(a);
        return st;
    }
    *out = a;
    return TS_OK;
}

int ts_sparse_new(const ts_system *sys, ts_sparse **out)
{
    return ts_sparse_new_as(sys, 0, out);
}

int ts_sparse_assemble(ts_sparse *a, ts_system *sys)
{
    size_t n = a->n;
    if (a->from_blocks) {
        ts_system_blocks g;
        int st = sys->ops->blocks(sys, &g);
        double *blk = st ? NULL : malloc(3 * n * sizeof *blk);
        if (st || !blk)
            return st ? st : ts_error(TS_ERR_NOMEM, "sparse matrix of %zu unknowns", n);
        blocks_values(a, sys, &g, blk);
        free(blk);
        return TS_OK;
    }
    if (sys->ops->jacobian_triplets) {
        size_t nt;
        int st = sys->ops->jacobian_triplets(sys, &nt, NULL, NULL, a->tval);
        if (st)
            return st;
    } else { /* column j of J from the product J e_j, lower part */
        double *e = a->col_, *out = a->col_ + n;
        size_t k = 0;
        ts_vec_zero(n, e);
        for (size_t j = 0; j < n; j++) {
            e[j] = 1.0;
            int st = ts_system_jacobian_mul(sys, e, out);
            e[j] = 0.0;
            if (st)
                return st;
            for (size_t i = j; i < n; i++)
                a->tval[k++] = out[i];
        }
    }
    ts_vec_zero(a->nnz, a->val);
    for (size_t j = 0; j < n; j++)
        a->val[a->colp[j]] = pinned(sys, j) ? 1.0 : sys->mass[j];
    for (size_t k = 0; k < a->ntrip; k++)
        if (a->slot[k] != UINT32_MAX)
            a->val[a->slot[k]] -= a->tval[k];
    return TS_OK;
}

void ts_sparse_mul(const ts_sparse *a, const double *u, double *out)
{
    ts_vec_zero(a->n, out);
    if (a->full) {
        for (size_t j = 0; j < a->n; j++)
            for (size_t p = a->colp[j]; p < a->colp[j + 1]; p++)
                out[a->row[p]] += a->val[p] * u[j];
        return;
    }
    for (size_t j = 0; j < a->n; j++) {
        size_t p = a->colp[j];
        double s = a->val[p] * u[j];
        for (p++; p < a->colp[j + 1]; p++) {
            size_t i = a->row[p];
            out[i] += a->val[p] * u[j];
            s += a->val[p] * u[i];
        }
        out[j] += s;
    }
}

/* --- the solver object ----------------------------------------------------------- */

/* The defaults by structure.  A banded matrix factors with fill only inside
 * its band: a sparse Cholesky of a string or a hair strand costs a few
 * products' worth, exact, where CG needs iterations growing with the
 * strand's length (measured, 1000 particles, 100 backward-euler steps:
 * string 0.17 s against 0.78 s with cg/jacobi, hair 0.42 s against 12.7 s).
 * A cloth's band is 6 rows of particles wide, so its factor fills in
 * (docs/solvers.md) and multigrid wins from 20 x 20 up (60 steps at
 * dt 1/60: 0.06 s against 0.09-0.17 s at 20 x 20, 0.45 against 1.36 s at
 * 50 x 50; at 10 x 10 Jacobi is as fast; 1000 x 1000 at dt 1/30: 37 s
 * against an estimated 45 minutes) for about 1.3 kB per particle against
 * Jacobi's 0.8 (a 300 x 300 cloth: 111 MB against 74 MB), so only while that
 * fits; on strands amg is slower than Jacobi (hair, 1000 particles: 38 s).
 * Both defaults need the extension (CHOLMOD, LAPACK): without it, cg with
 * jacobi. */
void ts_linsolve_choose(const ts_system *sys, const ts_solver_options *opt,
                        const ts_linsolve_type **type, const ts_precond_type **ptype,
                        const char **why)
{
    const ts_linsolve_type *t = opt ? opt->linear_solver : NULL;
    const ts_precond_type *p = opt ? opt->precond : NULL;
    ts_system_blocks g;
    int net = sys->ops->blocks && !sys->ops->blocks((ts_system *)sys, &g);
    int banded = net && g.bandwidth <= TS_BANDED_MAX;
    int cg_asked = opt && (opt->cg_tol > 0.0 || opt->cg_max > 0);
    double mem = ts_memory_physical();
    *why = "as given";
    if (!t && !p && !cg_asked && banded && ts_ext_find("direct", 1)) {
        t = &ts_linsolve_direct;
        *why = "the default for a banded spring network";
    }
    if (!t)
        t = &ts_linsolve_cg;
    int t_given = opt && opt->linear_solver;
    if (!t->uses_precond) {
        p = NULL;
    } else if (!p && net && !banded && sys->n >= TS_AMG_MIN &&
               !(mem > 0.0 && TS_AMG_BYTES_PER_UNKNOWN * (double)sys->n > 0.5 * mem) &&
               ts_ext_find("lapack", 1)) {
        p = &ts_precond_amg;
        *why = t_given ? "the solver as given, amg the default for a spring network of this size"
                       : "the default for a spring network of this size";
    } else if (!p) {
        p = &ts_precond_jacobi;
        *why = t_given ? "the solver as given, jacobi the default" : "the default";
    }
    *type = t, *ptype = p;
}

void ts_linsolve_free(ts_linsolve *ls)
{
    if (!ls)
        return;
    if (ls->type && ls->type->free)
        ls->type->free(ls->state);
    if (ls->ptype && ls->ptype->free)
        ls->ptype->free(ls->pstate);
    ts_sparse_free(ls->A);
    free(ls->diag);
    free(ls);
}

int ts_linsolve_new(const ts_system *sys, const ts_solver_options *opt, ts_linsolve **out)
{
    size_t n = sys->n;
    int st;
    *out = NULL;
    ts_linsolve *ls = calloc(1, sizeof *ls);
    if (!ls)
        return ts_error(TS_ERR_NOMEM, "linear solver");
    const char *why;
    ts_linsolve_choose(sys, opt, &ls->type, &ls->ptype, &why);
    ls->n = n;
    /* 0: 2 * dimension + 20, the dimension of the state (x and v) */
    ls->max_iter = opt && opt->cg_max > 0 ? opt->cg_max : (int)(2 * ts_system_ydim(sys) + 20);
    ls->diag = calloc(10 * n + 1, sizeof *ls->diag);
    if (!ls->diag) {
        st = ts_error(TS_ERR_NOMEM, "linear solver scratch");
        goto fail;
    }
    ls->work = ls->diag + n;
    /* both triangles when only the preconditioner reads the matrix and takes them */
    int full = !ls->type->needs_matrix && ls->ptype && ls->ptype->needs_matrix == TS_MATRIX_FULL;
    ts_system_blocks g;
    int pneeds = ls->ptype && ls->ptype->needs_matrix &&
                 !(ls->ptype->reads_blocks && sys->ops->blocks && sys->n < UINT32_MAX &&
                   !sys->ops->blocks((ts_system *)sys, &g));
    if (ls->type->needs_matrix || pneeds)
        if ((st = ts_sparse_new_as(sys, full, &ls->A)))
            goto fail;
    if (ls->type->alloc && (st = ls->type->alloc(ls, sys, &ls->state)))
        goto fail;
    if (ls->ptype && ls->ptype->alloc && (st = ls->ptype->alloc(ls, sys, &ls->pstate)))
        goto fail;
    *out = ls;
    return TS_OK;
fail:
    ts_linsolve_free(ls);
    return st;
}

void ts_linsolve_bytes(const ts_linsolve *ls, size_t part[4])
{
    const ts_sparse *a = ls->A;
    part[0] = (10 * ls->n + 1) * sizeof *ls->diag; /* diag and work */
    if (a)
        part[0] += (a->n + 1) * sizeof *a->colp +
                   (a->nnz + 1) * (sizeof *a->row + sizeof *a->val) +
                   (a->slot ? (a->ntrip + 1) * (sizeof *a->slot + sizeof *a->tval) : 0) +
                   (a->col_ ? 2 * a->n * sizeof *a->col_ : 0);
    part[1] = part[2] = part[3] = 0;
    if (ls->ptype && ls->ptype->bytes && ls->pstate)
        ls->ptype->bytes(ls->pstate, part + 1);
}

int ts_linsolve_matvec(void *ctx, const double *u, double *out)
{
    ts_system *sys = ctx;
    if (sys->ops->shifted_mul) /* M u - J u in the product's passes */
        return sys->ops->shifted_mul(sys, u, out);
    int s = ts_system_jacobian_mul(sys, u, out);
    if (s)
        return s;
    for (size_t i = 0; i < sys->n; i++)
        out[i] = sys->mass[i] * u[i] - out[i];
    return TS_OK;
}

ts_linear_op ts_linsolve_op(const ts_linsolve *ls, ts_system *sys)
{
    return (ts_linear_op){ls->n, ts_linsolve_matvec, sys};
}

void ts_linsolve_krylov(const ts_linsolve *ls, const ts_system *sys, ts_linsolve_request *req,
                        ts_krylov *k)
{
    *k = (ts_krylov){.tol = req->tol, .max_iter = ls->max_iter, .diag = ls->diag,
                     .mask = sys->pinned, .work = ls->work, .achieved = &req->achieved};
    if (ls->ptype == &ts_precond_jacobi) {
        /* the diagonal itself: CG fuses its application into its update pass */
    } else if (ls->ptype) {
        k->precond = ls->ptype->apply;
        k->precond_ctx = ls->pstate;
    } else if (ls->type->fallback_apply) {
        k->precond = ls->type->fallback_apply;
        k->precond_ctx = ls->state;
    }
}

typedef struct {
    double *diag;
    const double *mass;
} diag_args;

/* diag = M - diag (the Jacobian's) over a range; M where that is not
 * positive, not usable for Jacobi */
static void shifted_diag_range(void *ctx, size_t i0, size_t i1)
{
    const diag_args *g = ctx;
    const double *mass = g->mass;
    double *diag = g->diag;
    for (size_t i = i0; i < i1; i++) {
        diag[i] = mass[i] - diag[i];
        if (!(diag[i] > 0.0))
            diag[i] = mass[i];
    }
}

/* Linearize at the stored point, the diagonal, the assembly, then the
 * preconditioner's and the solver's setups. */
static int prepare(ts_linsolve *ls, ts_system *sys)
{
    size_t n = ls->n;
    double *diag = ls->diag;
    int st = ts_system_linearize(sys, ls->t, ls->x, ls->v, ls->alpha, ls->beta);
    if (st)
        return st;
    if (sys->ops->jacobian_diag) {
        if ((st = sys->ops->jacobian_diag(sys, diag)))
            return st;
        diag_args g = {diag, sys->mass};
        TS_PARALLEL(n >= ts_threads_min(), n, shifted_diag_range, &g);
    } else {
        ts_vec_copy(n, sys->mass, diag);
    }
    /* a preconditioner from the definite (clamped) matrix when A may not be
     * definite; the products then go back to the exact linearization */
    /* a preconditioner that keeps its last setup needs neither */
    int fresh = !(ls->ptype && ls->ptype->reuse && ls->ptype->reuse(ls->pstate, ls, sys));
    int definite = fresh && ls->ptype && ls->ptype->definite && sys->has_definite_fix &&
                   !sys->definite_fix;
    if (definite) {
        sys->definite_fix = 1;
        st = ts_system_linearize(sys, ls->t, ls->x, ls->v, ls->alpha, ls->beta);
        sys->definite_fix = 0;
        if (st)
            return st;
    }
    if (ls->A && (fresh || ls->type->needs_matrix) && (st = ts_sparse_assemble(ls->A, sys)))
        return st;
    if (fresh && ls->ptype && ls->ptype->setup && (st = ls->ptype->setup(ls->pstate, ls, sys)))
        return st;
    if (definite && (st = ts_system_linearize(sys, ls->t, ls->x, ls->v, ls->alpha, ls->beta)))
        return st;
    if (ls->type->setup && (st = ls->type->setup(ls->state, ls, sys)))
        return st;
    return TS_OK;
}

int ts_linsolve_setup(ts_linsolve *ls, ts_system *sys, const ts_linear_point *at,
                      ts_step_stats *stats)
{
    double t0 = now();
    ls->t = at->t, ls->x = at->x, ls->v = at->v, ls->alpha = at->alpha, ls->beta = at->beta;
    sys->definite_fix = 0; /* the exact Jacobian first: Newton converges fastest with it */
    int st = prepare(ls, sys);
    stats->setup_seconds += now() - t0;
    size_t part[4];
    ts_linsolve_bytes(ls, part);
    for (int k = 0; k < 4; k++)
        stats->linear_bytes[k] = fmax(stats->linear_bytes[k], (double)part[k]);
    return st;
}

/* The driver's solve of req with the fallbacks of tstep/linsolve.h;
 * req->iters and req->achieved collect what every attempt reports, the
 * definiteness fix's setup time goes to stats. */
static int solve(ts_linsolve *ls, ts_system *sys, ts_linsolve_request *req, ts_step_stats *stats)
{
    size_t n = ls->n;
    double *start = ls->work + 8 * n;
    int it = 0, st;
    if (sys->jacobian_symmetric) {
        /* save the start: a failed attempt below restarts from it */
        ts_vec_copy(n, req->sol, start);
        st = ls->type->solve(ls->state, ls, sys, req);
        ls->last_iters = req->iters, ls->last_achieved = req->achieved;
        if (st != TS_ERR_INDEFINITE)
            return st;
        ts_vec_copy(n, start, req->sol);
    }
    /* Not symmetric, or symmetric but not positive definite (compressed
     * springs; M - h df/dx on a growing mode x' = a x with h a > 1): the
     * exact Newton step by a non-symmetric solver first. */
    ts_krylov k;
    ts_linsolve_krylov(ls, sys, req, &k);
    ts_linear_op A = ts_linsolve_op(ls, sys);
    /* with the definiteness fix behind it, BiCGSTAB is cut short when it
     * stagnates rather than run to the cap (see TS_BICGSTAB_STALL) */
    if (sys->has_definite_fix && sys->jacobian_symmetric)
        k.stall = TS_BICGSTAB_STALL;
    if (n <= TS_DENSE_MAX) /* small: BiCGSTAB can break down */
        st = ts_dense_solve(&A, req->rhs, req->sol, &k, &it);
    else
        st = ts_bicgstab_solve(&A, req->rhs, req->sol, &k, &it);
    req->iters += it;
    if (st != TS_ERR_LINEAR || !sys->has_definite_fix || !sys->jacobian_symmetric)
        return st;
    /* Last, the system's definiteness fix (Choi & Ko 2002, sec. 5: clamped
     * compressed springs): positive definite, so the solver applies; a
     * quasi-Newton step, so Newton then converges only linearly. */
    double t0 = now();
    sys->definite_fix = 1;
    st = prepare(ls, sys);
    sys->definite_fix = 0;
    stats->setup_seconds += now() - t0;
    if (st)
        return st;
    ts_vec_copy(n, start, req->sol);
    return ls->type->solve(ls->state, ls, sys, req);
}

int ts_linsolve_solve(ts_linsolve *ls, ts_system *sys, const double *rhs, double *sol,
                      double tol, ts_step_stats *stats)
{
    double t0 = now();
    ts_linsolve_request req = {rhs, sol, tol, 0, stats->linear_residual};
    int st = solve(ls, sys, &req, stats);
    stats->linear_iters += req.iters;
    stats->linear_residual = req.achieved;
    stats->solve_seconds += now() - t0;
    return st;
}

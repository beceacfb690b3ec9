/* ic0: block incomplete Cholesky with zero fill, IC(0), of the assembled A.
 *
 * A particle system's A = M - alpha df/dx - beta df/dv is a matrix of b x b
 * blocks (b = 3: one block row per particle; b = 1 for other systems).
 * With the blocks of A's lower triangle as the only pattern allowed,
 *
 *   A ~ L L^T,  for each block row I, for each K < I in the pattern:
 *       L_IK = (A_IK - sum_{J < K} L_IJ L_KJ^T) L_KK^-T
 *       L_II = chol(A_II - sum_{K < I} L_IK L_IK^T)
 *
 * the sums over blocks present in both rows (fill-in is dropped), and
 * z = P^-1 r = L^-T (L^-1 r) by one forward and one backward block sweep.
 * Each diagonal block is kept as the inverse of its Cholesky factor, so the
 * sweeps only multiply.  The factor is computed in double precision and
 * read by the sweeps in single precision, which halves their memory
 * traffic; P^-1 = Lf^-T Lf^-1 with the rounded factor Lf is still an exact
 * symmetric positive definite operator, all CG needs of a preconditioner
 * (arithmetic stays in double).  Blocks rather than scalars: one index per 9
 * entries and a particle's three unknowns eliminated together, so a spring
 * along any direction is treated alike.
 *
 * A is assembled from the system's triplets with pinned rows and columns
 * the identity's (Baraff & Witkin's filter), from the definiteness fix's
 * matrix (clamped compressed springs, Choi & Ko 2002) where the system has
 * one, since IC needs a positive definite matrix.  IC(0) exists for
 * M-matrices (Meijerink & van der Vorst, Math. Comp. 31, 1977), which a
 * spring network's A is not: when a pivot block is not positive definite
 * the factorization restarts on A + shift diag(A), shift 1e-3, 1e-2, ...
 * (Manteuffel, Math. Comp. 34, 1980); after TS_IC_SHIFTS failures P is the
 * Jacobi diagonal.  Costs: one factorization per setup (Newton iteration),
 * two sweeps per CG iteration, each about a matrix-free product.  Saad,
 * Iterative Methods for Sparse Linear Systems, 2nd ed., 2003, 10.3-10.4
 * (IC(0), and its block form 10.5.2 sic: block ILU). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "tstep/linsolve.h"

#define TS_IC_SHIFTS 8

typedef struct {
    size_t n, nb;       /* unknowns, block rows */
    int b, bb;          /* block size, b * b */
    const ts_sparse *A;
    const double *diag;
    size_t *rowp;       /* block row I: blocks rowp[I] .. rowp[I+1]-1, the diagonal last */
    uint32_t *col;      /* their block columns, ascending */
    uint32_t *dest;     /* A's entry p goes to val[dest[p]] */
    double *val;        /* bb per block; the diagonal block holds W = chol(S_II)^-1 */
    float *fval;        /* the same in single precision, what the sweeps read */
    double *work;       /* bb */
    int jacobi;         /* the factorization failed: P = diag */
    double shift;
} ic_state;

static void ic_free(void *state)
{
    ic_state *s = state;
    if (!s)
        return;
    free(s->rowp);
    free(s->col);
    free(s->dest);
    free(s->val);
    free(s->fval);
    free(s->work);
    free(s);
}

static int pair_cmp(const void *x, const void *y)
{
    const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* position of block (I, J) in row I, or SIZE_MAX */
static size_t block_pos(const ic_state *s, size_t I, size_t J)
{
    size_t lo = s->rowp[I], hi = s->rowp[I + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->col[mid] < J)
            lo = mid + 1;
        else if (s->col[mid] > J)
            hi = mid;
        else
            return mid;
    }
    return SIZE_MAX;
}

static int ic_alloc(const ts_linsolve *ls, const ts_system *sys, void **state)
{
    const ts_sparse *a = ls->A;
    size_t n = a->n, nnz = a->nnz;
    ic_state *s = calloc(1, sizeof *s);
    uint64_t *pairs = NULL;
    if (!s)
        return ts_error(TS_ERR_NOMEM, "ic0 preconditioner");
    s->n = n, s->A = a, s->diag = ls->diag;
    s->b = sys->dim == 3 && n % 3 == 0 ? 3 : 1;
    s->bb = s->b * s->b;
    s->nb = n / (size_t)s->b;
    if (s->nb >= UINT32_MAX)
        goto nomem;
    /* the block pattern: every (I, J), I >= J, holding an entry of A */
    pairs = malloc((nnz + 1) * sizeof *pairs);
    s->rowp = calloc(s->nb + 1, sizeof *s->rowp);
    s->dest = malloc((nnz + 1) * sizeof *s->dest);
    s->work = malloc((size_t)s->bb * sizeof *s->work);
    if (!pairs || !s->rowp || !s->dest || !s->work)
        goto nomem;
    size_t b = (size_t)s->b, np = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t p = a->colp[j]; p < a->colp[j + 1]; p++)
            pairs[np++] = ((uint64_t)(a->row[p] / b) << 32) | (uint64_t)(j / b);
    qsort(pairs, np, sizeof *pairs, pair_cmp);
    size_t nblk = 0;
    for (size_t k = 0; k < np; k++)
        if (k == 0 || pairs[k] != pairs[k - 1])
            pairs[nblk++] = pairs[k];
    if (nblk * (size_t)s->bb >= UINT32_MAX)
        goto nomem;
    s->col = malloc((nblk + 1) * sizeof *s->col);
    s->val = malloc((nblk * (size_t)s->bb + 1) * sizeof *s->val);
    s->fval = malloc((nblk * (size_t)s->bb + 1) * sizeof *s->fval);
    if (!s->col || !s->val || !s->fval)
        goto nomem;
    for (size_t k = 0; k < nblk; k++) {
        s->rowp[(pairs[k] >> 32) + 1]++;
        s->col[k] = (uint32_t)(pairs[k] & 0xffffffffu);
    }
    for (size_t I = 0; I < s->nb; I++)
        s->rowp[I + 1] += s->rowp[I];
    for (size_t j = 0; j < n; j++)
        for (size_t p = a->colp[j]; p < a->colp[j + 1]; p++) {
            size_t i = a->row[p];
            size_t pos = block_pos(s, i / b, j / b);
            s->dest[p] = (uint32_t)(pos * (size_t)s->bb + (i % b) * b + j % b);
        }
    free(pairs);
    *state = s;
    return TS_OK;
nomem:
    free(pairs);
    ic_free(s);
    return ts_error(TS_ERR_NOMEM, "ic0 preconditioner of %zu entries", nnz);
}

/* S -= X Y^T (b x b, row-major) */
static void sub_mul_t(int b, double *S, const double *X, const double *Y)
{
    if (b == 3) { /* the particle blocks, unrolled */
        for (int r = 0; r < 3; r++) {
            double x0 = X[3 * r], x1 = X[3 * r + 1], x2 = X[3 * r + 2];
            S[3 * r] -= x0 * Y[0] + x1 * Y[1] + x2 * Y[2];
            S[3 * r + 1] -= x0 * Y[3] + x1 * Y[4] + x2 * Y[5];
            S[3 * r + 2] -= x0 * Y[6] + x1 * Y[7] + x2 * Y[8];
        }
        return;
    }
    for (int r = 0; r < b; r++)
        for (int c = 0; c < b; c++) {
            double t = 0.0;
            for (int k = 0; k < b; k++)
                t += X[r * b + k] * Y[c * b + k];
            S[r * b + c] -= t;
        }
}

/* W = chol(S)^-1 (lower triangular, full b x b storage); 0 if S is not
 * positive definite.  S is overwritten. */
static int chol_inverse(int b, double *S, double *W)
{
    for (int c = 0; c < b; c++) { /* S's lower triangle := L */
        double d = S[c * b + c];
        for (int k = 0; k < c; k++)
            d -= S[c * b + k] * S[c * b + k];
        if (!(d > 0.0))
            return 0;
        d = sqrt(d);
        S[c * b + c] = d;
        for (int r = c + 1; r < b; r++) {
            double v = S[r * b + c];
            for (int k = 0; k < c; k++)
                v -= S[r * b + k] * S[c * b + k];
            S[r * b + c] = v / d;
        }
    }
    for (int c = 0; c < b; c++) /* W = L^-1, column by column */
        for (int r = 0; r < b; r++) {
            double v = r == c ? 1.0 : 0.0;
            if (r > c) {
                v = 0.0;
                for (int k = c; k < r; k++)
                    v -= S[r * b + k] * W[k * b + c];
            }
            W[r * b + c] = r < c ? 0.0 : v / S[r * b + r];
        }
    return 1;
}

/* block IC(0) of A + shift diag(A) into s->val; 0 if a pivot block fails */
static int factor(ic_state *s, double shift)
{
    const ts_sparse *a = s->A;
    const size_t *rowp = s->rowp;
    const uint32_t *col = s->col;
    int b = s->b, bb = s->bb;
    double *v = s->val, *T = s->work;
    for (size_t k = 0; k < rowp[s->nb] * (size_t)bb; k++)
        v[k] = 0.0;
    for (size_t p = 0; p < a->nnz; p++)
        v[s->dest[p]] = a->val[p];
    for (size_t I = 0; I < s->nb; I++) {
        size_t beg = rowp[I], d = rowp[I + 1] - 1;
        double *D = v + d * (size_t)bb;
        for (int r = 0; r < b; r++) { /* the diagonal block: mirror, shift */
            D[r * b + r] *= 1.0 + shift;
            for (int c = r + 1; c < b; c++)
                D[r * b + c] = D[c * b + r];
        }
        for (size_t q = beg; q < d; q++) {
            size_t K = col[q], pk = rowp[K], dk = rowp[K + 1] - 1;
            double *S = v + q * (size_t)bb;
            /* S = A_IK - sum_{J < K} L_IJ L_KJ^T: merge rows I and K */
            for (size_t pi = beg; pi < q && pk < dk;) {
                if (col[pi] < col[pk])
                    pi++;
                else if (col[pi] > col[pk])
                    pk++;
                else
                    sub_mul_t(b, S, v + (pi++) * (size_t)bb, v + (pk++) * (size_t)bb);
            }
            /* L_IK = S L_KK^-T = S W_K^T */
            const double *W = v + dk * (size_t)bb;
            for (int k = 0; k < bb; k++)
                T[k] = S[k];
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++) {
                    double t = 0.0;
                    for (int k = 0; k <= c; k++)
                        t += T[r * b + k] * W[c * b + k];
                    S[r * b + c] = t;
                }
            sub_mul_t(b, D, S, S);
        }
        for (int k = 0; k < bb; k++)
            T[k] = D[k];
        if (!chol_inverse(b, T, D))
            return 0;
    }
    return 1;
}

static int ic_setup(void *state, const ts_linsolve *ls, ts_system *sys)
{
    ic_state *s = state;
    (void)ls, (void)sys;
    s->jacobi = 0;
    s->shift = 0.0;
    for (int k = 0; k <= TS_IC_SHIFTS; k++) {
        if (factor(s, s->shift)) {
            size_t m = s->rowp[s->nb] * (size_t)s->bb;
            for (size_t i = 0; i < m; i++)
                s->fval[i] = (float)s->val[i];
            return TS_OK;
        }
        s->shift = s->shift > 0.0 ? 10.0 * s->shift : 1e-3;
    }
    s->jacobi = 1;
    return TS_OK;
}

static void ic_apply(void *state, const double *r, double *z)
{
    const ic_state *s = state;
    const size_t *rowp = s->rowp;
    const uint32_t *col = s->col;
    const float *v = s->fval;
    size_t nb = s->nb;
    if (s->jacobi) {
        for (size_t i = 0; i < s->n; i++)
            z[i] = r[i] / s->diag[i];
        return;
    }
    if (s->b == 3) {
        /* L y = r: y_I = W_I (r_I - sum_K L_IK y_K) */
        for (size_t I = 0; I < nb; I++) {
            size_t d = rowp[I + 1] - 1;
            double t0 = r[3 * I], t1 = r[3 * I + 1], t2 = r[3 * I + 2];
            for (size_t q = rowp[I]; q < d; q++) {
                const float *L = v + 9 * q;
                const double *y = z + 3 * (size_t)col[q];
                t0 -= L[0] * y[0] + L[1] * y[1] + L[2] * y[2];
                t1 -= L[3] * y[0] + L[4] * y[1] + L[5] * y[2];
                t2 -= L[6] * y[0] + L[7] * y[1] + L[8] * y[2];
            }
            const float *W = v + 9 * d;
            z[3 * I] = W[0] * t0;
            z[3 * I + 1] = W[3] * t0 + W[4] * t1;
            z[3 * I + 2] = W[6] * t0 + W[7] * t1 + W[8] * t2;
        }
        /* L^T z = y, last block row first: z_I = W_I^T y_I, y_K -= L_IK^T z_I */
        for (size_t I = nb; I-- > 0;) {
            size_t d = rowp[I + 1] - 1;
            const float *W = v + 9 * d;
            double y0 = z[3 * I], y1 = z[3 * I + 1], y2 = z[3 * I + 2];
            double z0 = W[0] * y0 + W[3] * y1 + W[6] * y2;
            double z1 = W[4] * y1 + W[7] * y2;
            double z2 = W[8] * y2;
            z[3 * I] = z0, z[3 * I + 1] = z1, z[3 * I + 2] = z2;
            for (size_t q = rowp[I]; q < d; q++) {
                const float *L = v + 9 * q;
                double *y = z + 3 * (size_t)col[q];
                y[0] -= L[0] * z0 + L[3] * z1 + L[6] * z2;
                y[1] -= L[1] * z0 + L[4] * z1 + L[7] * z2;
                y[2] -= L[2] * z0 + L[5] * z1 + L[8] * z2;
            }
        }
        return;
    }
    /* scalar blocks */
    for (size_t I = 0; I < nb; I++) {
        size_t d = rowp[I + 1] - 1;
        double t = r[I];
        for (size_t q = rowp[I]; q < d; q++)
            t -= v[q] * z[col[q]];
        z[I] = v[d] * t;
    }
    for (size_t I = nb; I-- > 0;) {
        size_t d = rowp[I + 1] - 1;
        double zi = v[d] * z[I];
        z[I] = zi;
        for (size_t q = rowp[I]; q < d; q++)
            z[col[q]] -= v[q] * zi;
    }
}

const ts_precond_type ts_precond_ic0 = {
    .name = "ic0",
    .summary = "block incomplete Cholesky IC(0) of the assembled A, shifted if a pivot fails",
    .needs_matrix = TS_MATRIX_LOWER,
    .definite = 1,
    .alloc = ic_alloc,
    .setup = ic_setup,
    .apply = ic_apply,
    .free = ic_free,
};

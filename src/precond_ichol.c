/* ic0: incomplete Cholesky with zero fill, IC(0), of the assembled A.
 *
 *   A ~ L L^T,  L lower triangular with the pattern of A's lower triangle:
 *   for each row i, for each k < i in the pattern of row i,
 *       L_ik = (A_ik - sum_{j < k} L_ij L_kj) / L_kk
 *       L_ii = sqrt(A_ii - sum_{k < i} L_ik^2)
 *   (the sums over entries present in both rows: fill-in is dropped),
 *   then z = P^-1 r = L^-T (L^-1 r) by one forward and one backward sweep.
 *
 * A is the 3x3-block matrix M - alpha df/dx - beta df/dv assembled from the
 * system's triplets (pinned rows and columns the identity's: Baraff &
 * Witkin's filter), so a particle's three unknowns and its springs'
 * couplings all enter the factor; the ordering is the particles' (grid
 * rows for a cloth).  IC(0) exists for M-matrices (Meijerink & van der
 * Vorst, Math. Comp. 31, 1977) but a spring network's A is not one and may
 * be indefinite: when a pivot is not positive the factorization restarts on
 * A + shift diag(A) with shift 1e-3, 1e-2, ... (Manteuffel, Math. Comp. 34,
 * 1980); after TS_IC_SHIFTS failures P is the Jacobi diagonal.  Costs: one
 * factorization per setup (Newton iteration), two triangular sweeps per CG
 * iteration, about twice a matrix-free product; it pays where it cuts CG's
 * iterations by more than that.  Saad, Iterative Methods for Sparse Linear
 * Systems, 2nd ed., 2003, 10.3-10.4. */
#include <math.h>
#include <stdlib.h>
#include "tstep/linsolve.h"

#define TS_IC_SHIFTS 8

typedef struct {
    size_t n, nnz;
    const ts_sparse *A;
    const double *diag;
    size_t *rowp, *col; /* L by rows: row i's columns ascending, the diagonal last */
    size_t *from;       /* CSR position of A's CSC position p */
    double *val;
    int jacobi;         /* the factorization failed: P = diag */
    double shift;       /* the shift of the last factorization */
} ic_state;

static void ic_free(void *state)
{
    ic_state *s = state;
    if (!s)
        return;
    free(s->rowp);
    free(s->col);
    free(s->from);
    free(s->val);
    free(s);
}

static int ic_alloc(const ts_linsolve *ls, const ts_system *sys, void **state)
{
    const ts_sparse *a = ls->A;
    size_t n = a->n, nnz = a->nnz;
    (void)sys;
    ic_state *s = calloc(1, sizeof *s);
    if (!s)
        return ts_error(TS_ERR_NOMEM, "ic0 preconditioner");
    s->n = n, s->nnz = nnz, s->A = a, s->diag = ls->diag;
    s->rowp = calloc(n + 1, sizeof *s->rowp);
    s->col = malloc((nnz + 1) * sizeof *s->col);
    s->from = malloc((nnz + 1) * sizeof *s->from);
    s->val = malloc((nnz + 1) * sizeof *s->val);
    if (!s->rowp || !s->col || !s->from || !s->val) {
        ic_free(s);
        return ts_error(TS_ERR_NOMEM, "ic0 preconditioner of %zu entries", nnz);
    }
    /* transpose the lower triangle's columns into rows */
    for (size_t p = 0; p < nnz; p++)
        s->rowp[a->row[p] + 1]++;
    for (size_t i = 0; i < n; i++)
        s->rowp[i + 1] += s->rowp[i];
    size_t *next = s->from; /* borrowed as the fill pointer, then overwritten */
    for (size_t i = 0; i < n; i++)
        s->val[i] = (double)s->rowp[i];
    for (size_t j = 0; j < n; j++)
        for (size_t p = a->colp[j]; p < a->colp[j + 1]; p++) {
            size_t i = a->row[p], q = (size_t)s->val[i];
            s->val[i] += 1.0;
            s->col[q] = j;
            next[p] = q;
        }
    *state = s;
    return TS_OK;
}

/* IC(0) of A + shift diag(A) into s->val; 0 if a pivot is not positive */
static int factor(ic_state *s, double shift)
{
    const ts_sparse *a = s->A;
    const size_t *rowp = s->rowp, *col = s->col;
    double *l = s->val;
    for (size_t p = 0; p < s->nnz; p++)
        l[s->from[p]] = a->val[p];
    for (size_t i = 0; i < s->n; i++) {
        size_t b = rowp[i], d = rowp[i + 1] - 1; /* d: the diagonal */
        double aii = l[d] * (1.0 + shift), sum = 0.0;
        for (size_t q = b; q < d; q++) {
            size_t k = col[q], pk = rowp[k], dk = rowp[k + 1] - 1;
            double v = l[q];
            /* minus the sum over j < k of L_ij L_kj: merge rows i and k */
            for (size_t pi = b; pi < q && pk < dk;) {
                if (col[pi] < col[pk])
                    pi++;
                else if (col[pi] > col[pk])
                    pk++;
                else
                    v -= l[pi++] * l[pk++];
            }
            v /= l[dk];
            l[q] = v;
            sum += v * v;
        }
        double piv = aii - sum;
        if (!(piv > 1e-12 * aii))
            return 0;
        l[d] = sqrt(piv);
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
        if (factor(s, s->shift))
            return TS_OK;
        s->shift = s->shift > 0.0 ? 10.0 * s->shift : 1e-3;
    }
    s->jacobi = 1;
    return TS_OK;
}

static void ic_apply(void *state, const double *r, double *z)
{
    const ic_state *s = state;
    const size_t *rowp = s->rowp, *col = s->col;
    const double *l = s->val;
    size_t n = s->n;
    if (s->jacobi) {
        for (size_t i = 0; i < n; i++)
            z[i] = r[i] / s->diag[i];
        return;
    }
    /* L y = r */
    for (size_t i = 0; i < n; i++) {
        size_t d = rowp[i + 1] - 1;
        double v = r[i];
        for (size_t q = rowp[i]; q < d; q++)
            v -= l[q] * z[col[q]];
        z[i] = v / l[d];
    }
    /* L^T z = y, by columns of L^T = rows of L, last first */
    for (size_t i = n; i-- > 0;) {
        size_t d = rowp[i + 1] - 1;
        double zi = z[i] / l[d];
        z[i] = zi;
        for (size_t q = rowp[i]; q < d; q++)
            z[col[q]] -= l[q] * zi;
    }
}

const ts_precond_type ts_precond_ic0 = {
    .name = "ic0",
    .summary = "incomplete Cholesky IC(0) of the assembled A, shifted if a pivot fails",
    .needs_matrix = 1,
    .definite = 1,
    .alloc = ic_alloc,
    .setup = ic_setup,
    .apply = ic_apply,
    .free = ic_free,
};

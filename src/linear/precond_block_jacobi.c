/* block-jacobi: the 3x3 block-diagonal preconditioner of a particle system,
 *
 *   z_p = A_pp^-1 r_p,   A_pp = m_p I - J_pp   (one 3x3 block per particle),
 *
 * J_pp the particle's diagonal block of J = alpha df/dx + beta df/dv from the
 * system's jacobian_block_diag.  A spring's stiffness acts along its axis,
 * so the diagonal alone misses how the three directions couple; the block
 * keeps it, which is what Jacobi loses on a stretched, rotated cloth.  Pin
 * filter (Baraff & Witkin 1998, sec. 5.3): a pinned degree of freedom's row
 * and column of the block are the identity's.  Each block is inverted once
 * per setup by Cholesky; a block that is not positive definite (compressed
 * springs) is replaced by diag(A) there, so P stays positive definite.
 * Systems without 3x3 blocks (dim != 3 or no jacobian_block_diag) get the
 * Jacobi diagonal.  Saad, Iterative Methods for Sparse Linear Systems, 2nd
 * ed., 2003, 10.2 (block Jacobi); Golub & Van Loan, Matrix Computations,
 * 4.2 (Cholesky). */
#include <math.h>
#include <stdlib.h>
#include "tstep/linsolve.h"

typedef struct {
    size_t n, np;
    const double *diag;
    double *inv; /* per particle the symmetric inverse, xx xy xz yy yz zz (in 9 doubles) */
    int blocks;  /* 0: Jacobi */
} bj_state;

static void bj_free(void *state)
{
    bj_state *s = state;
    if (!s)
        return;
    free(s->inv);
    free(s);
}

static int bj_alloc(const ts_linsolve *ls, const ts_system *sys, void **state)
{
    bj_state *s = calloc(1, sizeof *s);
    if (!s)
        return ts_error(TS_ERR_NOMEM, "block-jacobi preconditioner");
    s->n = ls->n;
    s->diag = ls->diag;
    s->blocks = sys->dim == 3 && sys->ops->jacobian_block_diag && sys->n % 3 == 0;
    if (s->blocks) {
        s->np = sys->n / 3;
        s->inv = malloc(9 * s->np * sizeof *s->inv);
        if (!s->inv) {
            bj_free(s);
            return ts_error(TS_ERR_NOMEM, "block-jacobi preconditioner");
        }
    }
    *state = s;
    return TS_OK;
}

/* Invert the symmetric positive definite 3x3 a (row-major) into
 * inv = xx xy xz yy yz zz by Cholesky a = L L^T; 0 if a is not SPD. */
static int spd_inverse3(const double *a, double *inv)
{
    double l00 = a[0];
    if (!(l00 > 0.0))
        return 0;
    l00 = sqrt(l00);
    double l10 = a[3] / l00, l20 = a[6] / l00;
    double l11 = a[4] - l10 * l10;
    if (!(l11 > 0.0))
        return 0;
    l11 = sqrt(l11);
    double l21 = (a[7] - l20 * l10) / l11;
    double l22 = a[8] - l20 * l20 - l21 * l21;
    if (!(l22 > 1e-14 * a[8]))
        return 0;
    l22 = sqrt(l22);
    /* W = L^-1 (lower), then a^-1 = W^T W */
    double w00 = 1.0 / l00, w11 = 1.0 / l11, w22 = 1.0 / l22;
    double w10 = -l10 * w00 / l11;
    double w21 = -l21 * w11 / l22;
    double w20 = -(l20 * w00 + l21 * w10) / l22;
    inv[0] = w00 * w00 + w10 * w10 + w20 * w20;
    inv[1] = w10 * w11 + w20 * w21;
    inv[2] = w20 * w22;
    inv[3] = w11 * w11 + w21 * w21;
    inv[4] = w21 * w22;
    inv[5] = w22 * w22;
    return 1;
}

static int bj_setup(void *state, const ts_linsolve *ls, ts_system *sys)
{
    bj_state *s = state;
    (void)ls;
    if (!s->blocks)
        return TS_OK;
    int st = sys->ops->jacobian_block_diag(sys, s->inv);
    if (st)
        return st;
    for (size_t p = 0; p < s->np; p++) {
        double *b = s->inv + 9 * p, a[9];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                size_t qr = 3 * p + (size_t)r, qc = 3 * p + (size_t)c;
                int pin = sys->pinned && (sys->pinned[qr] || sys->pinned[qc]);
                a[3 * r + c] = pin ? (r == c ? 1.0 : 0.0)
                                   : (r == c ? sys->mass[qr] : 0.0) - b[3 * r + c];
            }
        if (!spd_inverse3(a, b)) { /* not positive definite: Jacobi here */
            const double *d = s->diag + 3 * p;
            b[0] = 1.0 / d[0], b[3] = 1.0 / d[1], b[5] = 1.0 / d[2];
            b[1] = b[2] = b[4] = 0.0;
        }
    }
    return TS_OK;
}

static void bj_apply(void *state, const double *r, double *z)
{
    const bj_state *s = state;
    if (!s->blocks) {
        for (size_t i = 0; i < s->n; i++)
            z[i] = r[i] / s->diag[i];
        return;
    }
    for (size_t p = 0; p < s->np; p++) {
        const double *b = s->inv + 9 * p, *rp = r + 3 * p;
        double *zp = z + 3 * p;
        zp[0] = b[0] * rp[0] + b[1] * rp[1] + b[2] * rp[2];
        zp[1] = b[1] * rp[0] + b[3] * rp[1] + b[4] * rp[2];
        zp[2] = b[2] * rp[0] + b[4] * rp[1] + b[5] * rp[2];
    }
}

const ts_precond_type ts_precond_block_jacobi = {
    .name = "block-jacobi",
    .summary = "3x3 diagonal blocks of A per particle, pin-filtered",
    .definite = 1,
    .alloc = bj_alloc,
    .setup = bj_setup,
    .apply = bj_apply,
    .free = bj_free,
};

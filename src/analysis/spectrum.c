/* The spectrum of a system's linearization (definitions in tstep/spectrum.h).
 *
 * Dense: LAPACK dgeev on the first-order matrix A (Anderson et al., LAPACK
 * Users' Guide, 3rd ed., 1999); mode vectors by one or two steps of inverse
 * iteration (Golub & Van Loan, Matrix Computations, 7.6.1) on the quadratic
 * pencil of the second-order system (Tisseur & Meerbergen, The quadratic
 * eigenvalue problem, SIAM Review 43, 2001: A is its companion
 * linearization).  Large systems: implicitly restarted Arnoldi, ARPACK's
 * dnaupd/dneupd (Lehoucq, Sorensen & Yang, ARPACK Users' Guide, 1998), on
 * Jacobian products only. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/linalg.h"
#include "tstep/run.h"
#include "tstep/spectrum.h"
#include "core/ext.h"
#include "core/lapack.h"

void ts_fill_pseudo_random(size_t n, unsigned long seed, double *u)
{
    for (size_t i = 0; i < n; i++) {
        seed = (seed * 1103515245u + 12345u) & 0x7fffffffu;
        u[i] = 2.0 * (double)seed / 2147483647.0 - 1.0;
    }
}

const char *ts_eig_method_name(ts_eig_method m)
{
    switch (m) {
    case TS_EIG_DENSE: return "dense (LAPACK dgeev)";
    case TS_EIG_ARNOLDI: return "arnoldi (ARPACK)";
    default: return "auto";
    }
}

void ts_spectrum_free(ts_spectrum *sp)
{
    free(sp->re);
    free(sp->im);
    free(sp->free_);
    free(sp->kx_);
    free(sp->kv_);
    free(sp->ritz_);
    free(sp->x_);
    free(sp->v_);
    memset(sp, 0, sizeof *sp);
}

int ts_linearization_mul(const ts_linearization *at, int which, const double *u, double *out)
{
    ts_system *sys = at->sys;
    double t = at->t, *work = at->work;
    const double *x = at->x, *v = at->v;
    if (!at->fd)
        return which ? ts_system_dfdv_mul(sys, t, x, v, u, out)
                     : ts_system_dfdx_mul(sys, t, x, v, u, out);
    /* central differences (f(z + eps u) - f(z - eps u)) / 2 eps, z = x or v */
    size_t n = sys->n;
    double un = ts_vec_norm_inf(n, u);
    if (un == 0.0) {
        ts_vec_zero(n, out);
        return TS_OK;
    }
    double *zp = work, *fp = work + n, *fm = work + 2 * n;
    const double *base = which ? v : x;
    double eps = cbrt(DBL_EPSILON) * fmax(1.0, ts_vec_norm_inf(n, base)) / un;
    ts_vec_copy(n, base, zp);
    ts_vec_axpy(n, eps, u, zp);
    int s = which ? ts_system_forces(sys, t, x, zp, fp) : ts_system_forces(sys, t, zp, v, fp);
    ts_vec_axpy(n, -2.0 * eps, u, zp);
    if (!s)
        s = which ? ts_system_forces(sys, t, x, zp, fm) : ts_system_forces(sys, t, zp, v, fm);
    for (size_t i = 0; !s && i < n; i++)
        out[i] = (fp[i] - fm[i]) / (2.0 * eps);
    return s;
}

/* out (m, free dofs) = M^-1 (df/dx) u (which 0) or M^-1 (df/dv) u (which 1),
 * u given on the free dofs; full and fo are n-vectors of scratch, f0 too. */
typedef struct {
    ts_system *sys;
    ts_spectrum *sp;
    double *full, *fo, *xp; /* n, n and 3n doubles */
} lin_op;

static int lin_apply(lin_op *op, int which, const double *u, double *out)
{
    ts_system *sys = op->sys;
    ts_spectrum *sp = op->sp;
    size_t n = sp->n, m = sp->m;
    ts_vec_zero(n, op->full);
    for (size_t i = 0; i < m; i++)
        op->full[sp->free_[i]] = u[i];
    ts_linearization at = {sys, sp->t_, sp->x_, sp->v_, sp->finite_differences, op->xp};
    int s = ts_linearization_mul(&at, which, op->full, op->fo);
    if (s)
        return s;
    for (size_t i = 0; i < m; i++)
        out[i] = op->fo[sp->free_[i]] / sys->mass[sp->free_[i]];
    return TS_OK;
}

/* y = A u in the first-order layout (order 2: [uv; Kx ux + Kv uv]) */
static int first_order_apply(lin_op *op, const double *u, double *y, double *tmp)
{
    size_t m = op->sp->m;
    if (op->sp->order == 1)
        return lin_apply(op, 0, u, y);
    int s = lin_apply(op, 0, u, y + m);
    if (!s)
        s = lin_apply(op, 1, u + m, tmp);
    if (s)
        return s;
    ts_vec_axpy(m, 1.0, tmp, y + m);
    ts_vec_copy(m, u + m, y);
    return TS_OK;
}

static int dense_spectrum(lin_op *op)
{
    ts_spectrum *sp = op->sp;
    size_t m = sp->m, dim = sp->dim;
    const ts_lapack *la = ts_ext_need("lapack", "the dense spectrum", "LAPACK");
    if (!la)
        return TS_ERR_UNSUPPORTED;
    int s = TS_OK;
    double *a = NULL, *e = calloc(m, sizeof *e);
    sp->kx_ = calloc(m * m, sizeof *sp->kx_);
    if (sp->order == 2)
        sp->kv_ = calloc(m * m, sizeof *sp->kv_);
    if (!e || !sp->kx_ || (sp->order == 2 && !sp->kv_)) {
        s = ts_error(TS_ERR_NOMEM, "spectrum: %zu x %zu matrices", m, m);
        goto done;
    }
    for (size_t j = 0; j < m && !s; j++) {
        if (ts_stop_signal) { /* see tstep/run.h */
            s = ts_error(TS_ERR_INTERRUPTED, "spectrum: stopped by signal %d",
                         (int)ts_stop_signal);
            break;
        }
        e[j] = 1.0;
        s = lin_apply(op, 0, e, sp->kx_ + j * m);
        if (!s && sp->order == 2)
            s = lin_apply(op, 1, e, sp->kv_ + j * m);
        e[j] = 0.0;
    }
    if (s)
        goto done;
    if (!(a = calloc(dim * dim, sizeof *a))) {
        s = ts_error(TS_ERR_NOMEM, "spectrum: %zu x %zu matrix", dim, dim);
        goto done;
    }
    if (sp->order == 1) {
        memcpy(a, sp->kx_, m * m * sizeof *a);
    } else {
        for (size_t j = 0; j < m; j++) {
            a[(m + j) * dim + j] = 1.0; /* the identity block: x' = v */
            for (size_t i = 0; i < m; i++) {
                a[j * dim + m + i] = sp->kx_[j * m + i];
                a[(m + j) * dim + m + i] = sp->kv_[j * m + i];
            }
        }
    }
    for (size_t i = 0; i < dim * dim; i++)
        if (!isfinite(a[i])) {
            s = ts_error(TS_ERR_DIVERGED, "spectrum: non-finite Jacobian entry");
            goto done;
        }
    int info = la->dgeev(TS_LAPACK_COL_MAJOR, 'N', 'N', (int)dim, a, (int)dim, sp->re, sp->im,
                         NULL, 1, NULL, 1);
    if (info != 0) {
        s = ts_error(TS_ERR_LINEAR, "spectrum: dgeev failed (info %d)", (int)info);
        goto done;
    }
    sp->count = dim;
done:
    free(a);
    free(e);
    return s;
}

static int arnoldi_spectrum(lin_op *op)
{
    ts_spectrum *sp = op->sp;
    int n = (int)sp->dim;
    int nev = TS_ARNOLDI_NEV < n - 2 ? TS_ARNOLDI_NEV : n - 2;
    if (nev < 1)
        return ts_error(TS_ERR_INPUT, "spectrum: %d unknowns are too few for arnoldi", n);
    int ncv = 2 * nev + 1 < n ? 2 * nev + 1 : n;
    int lworkl = 3 * ncv * ncv + 6 * ncv, ido = 0, info = 0, ldv = n;
    int iparam[11] = {0}, ipntr[14] = {0};
    const ts_lapack *la = ts_ext_need("lapack", "the arnoldi spectrum", "ARPACK");
    if (!la)
        return TS_ERR_UNSUPPORTED;
    iparam[0] = 1;    /* exact shifts */
    iparam[2] = 3000; /* max restarts */
    iparam[6] = 1;    /* mode 1: A x = lambda x */
    double tol = TS_ARNOLDI_TOL;
    size_t nn = (size_t)n, nc = (size_t)ncv;
    double *resid = calloc(nn, sizeof *resid), *v = calloc(nn * nc, sizeof *v),
           *workd = calloc(3 * nn, sizeof *workd), *workl = calloc((size_t)lworkl, sizeof *workl),
           *tmp = calloc(sp->m, sizeof *tmp), *dr = calloc((size_t)nev + 1, sizeof *dr),
           *di = calloc((size_t)nev + 1, sizeof *di),
           *z = calloc(nn * ((size_t)nev + 1), sizeof *z), *workev = calloc(3 * nc, sizeof *workev);
    int *select = calloc(nc, sizeof *select);
    int s = TS_OK;
    if (!resid || !v || !workd || !workl || !tmp || !dr || !di || !z || !workev || !select) {
        s = ts_error(TS_ERR_NOMEM, "arnoldi");
        goto done;
    }
    ts_fill_pseudo_random(nn, 12345u, resid); /* deterministic start vector */
    info = 1; /* use resid as the start */
    for (;;) {
        la->dnaupd(&ido, "I", &n, "LM", &nev, &tol, resid, &ncv, v, &ldv, iparam, ipntr, workd,
                   workl, &lworkl, &info, 1, 2);
        if (ido != 1 && ido != -1)
            break;
        if (ts_stop_signal) {
            s = ts_error(TS_ERR_INTERRUPTED, "arnoldi: stopped by signal %d", (int)ts_stop_signal);
            goto done;
        }
        if ((s = first_order_apply(op, workd + ipntr[0] - 1, workd + ipntr[1] - 1, tmp)))
            goto done;
    }
    if (info < 0 || (info != 0 && info != 1)) {
        s = ts_error(TS_ERR_LINEAR, "arnoldi: dnaupd failed (info %d)", info);
        goto done;
    }
    sp->iterations = iparam[2];
    int rvec = 1;
    double sigr = 0.0, sigi = 0.0;
    la->dneupd(&rvec, "A", select, dr, di, z, &ldv, &sigr, &sigi, workev, "I", &n, "LM", &nev,
               &tol, resid, &ncv, v, &ldv, iparam, ipntr, workd, workl, &lworkl, &info, 1, 1, 2);
    if (info != 0) {
        s = ts_error(TS_ERR_LINEAR, "arnoldi: dneupd failed (info %d)", info);
        goto done;
    }
    size_t count = (size_t)iparam[4]; /* converged Ritz values */
    if (count > (size_t)nev + 1)
        count = (size_t)nev + 1;
    sp->count = count;
    memcpy(sp->re, dr, count * sizeof *dr);
    memcpy(sp->im, di, count * sizeof *di);
    sp->ritz_ = z, z = NULL;
    sp->lambda_floor = INFINITY;
    for (size_t k = 0; k < count; k++)
        sp->lambda_floor = fmin(sp->lambda_floor, hypot(dr[k], di[k]));
    if (count == 0)
        sp->lambda_floor = 0.0;
done:
    free(resid), free(v), free(workd), free(workl), free(tmp), free(dr), free(di), free(z);
    free(workev), free(select);
    return s;
}

int ts_spectrum_compute(ts_system *sys, double t, ts_eig_method method, ts_spectrum *sp)
{
    memset(sp, 0, sizeof *sp);
    size_t n = sys->n, m = 0;
    sp->order = sys->order;
    sp->n = n;
    sp->t_ = t;
    sp->finite_differences = !ts_system_has_jacobian(sys);
    if (!(sp->free_ = malloc((n ? n : 1) * sizeof *sp->free_)))
        return ts_error(TS_ERR_NOMEM, "spectrum");
    for (size_t i = 0; i < n; i++)
        if (!sys->pinned || !sys->pinned[i])
            sp->free_[m++] = i;
    sp->m = m;
    sp->dim = sys->order == 2 ? 2 * m : m;
    if (method == TS_EIG_AUTO)
        method = m <= TS_SPECTRUM_DENSE_MAX ? TS_EIG_DENSE : TS_EIG_ARNOLDI;
    if (method == TS_EIG_ARNOLDI && sp->dim < 4)
        method = TS_EIG_DENSE; /* arnoldi needs a few unknowns; dense is exact here */
    sp->method = method;
    int s = TS_OK;
    double *block = calloc(5 * n + 1, sizeof *block);
    sp->re = calloc(sp->dim + 1, sizeof *sp->re);
    sp->im = calloc(sp->dim + 1, sizeof *sp->im);
    sp->x_ = malloc((n + 1) * sizeof *sp->x_);
    sp->v_ = sys->order == 2 ? malloc((n + 1) * sizeof *sp->v_) : NULL;
    if (!block || !sp->re || !sp->im || !sp->x_ || (sys->order == 2 && !sp->v_)) {
        s = ts_error(TS_ERR_NOMEM, "spectrum");
        goto done;
    }
    ts_vec_copy(n, sys->x, sp->x_);
    if (sp->v_)
        ts_vec_copy(n, sys->v, sp->v_);
    if (m == 0) /* everything pinned: nothing moves */
        goto done;
    lin_op op = {sys, sp, block, block + n, block + 2 * n};
    s = method == TS_EIG_DENSE ? dense_spectrum(&op) : arnoldi_spectrum(&op);
    for (size_t k = 0; !s && k < sp->count; k++)
        sp->lambda_max = fmax(sp->lambda_max, hypot(sp->re[k], sp->im[k]));
done:
    free(block);
    if (s)
        ts_spectrum_free(sp);
    return s;
}

/* The free-dof eigenvector of a dense spectrum's eigenvalue lam: two steps of
 * inverse iteration on P(sigma) x = b, sigma = lam shifted by 1e-10 |lam|,
 * P the quadratic pencil (order 2) or the matrix less sigma I (order 1). */
static int dense_vector(const ts_spectrum *sp, double complex lam, double complex *xv)
{
    size_t m = sp->m;
    const ts_lapack *la = ts_ext_need("lapack", "a mode vector", "LAPACK");
    if (!la)
        return TS_ERR_UNSUPPORTED;
    double complex *p = malloc(m * m * sizeof *p);
    int *piv = malloc(m * sizeof *piv);
    double *start = malloc(m * sizeof *start);
    int s = TS_OK;
    if (!p || !piv || !start) {
        s = ts_error(TS_ERR_NOMEM, "mode vector");
        goto done;
    }
    double mag = cabs(lam);
    double complex sigma = lam + 1e-10 * (mag > 0.0 ? mag : 1.0) * (1.0 + 0.5 * I);
    for (size_t j = 0; j < m; j++)
        for (size_t i = 0; i < m; i++) {
            double complex e;
            if (sp->order == 2) { /* sigma^2 I - sigma Kv - Kx */
                e = -sp->kx_[j * m + i] - sigma * sp->kv_[j * m + i];
                if (i == j)
                    e += sigma * sigma;
            } else { /* Kx - sigma I */
                e = sp->kx_[j * m + i];
                if (i == j)
                    e -= sigma;
            }
            p[j * m + i] = e;
        }
    int info = la->zgetrf(TS_LAPACK_COL_MAJOR, (int)m, (int)m, p, (int)m, piv);
    if (info < 0) {
        s = ts_error(TS_ERR_LINEAR, "mode vector: zgetrf failed (info %d)", (int)info);
        goto done;
    }
    if (info > 0) /* exactly singular: the pivot is the eigenvector's end; nudge it */
        p[(size_t)(info - 1) * m + (size_t)(info - 1)] = DBL_EPSILON * (mag > 0.0 ? mag : 1.0);
    ts_fill_pseudo_random(m, 4242u, start);
    for (size_t i = 0; i < m; i++)
        xv[i] = start[i];
    for (int it = 0; it < 2; it++) {
        info = la->zgetrs(TS_LAPACK_COL_MAJOR, 'N', (int)m, 1, p, (int)m, piv, xv, (int)m);
        if (info) {
            s = ts_error(TS_ERR_LINEAR, "mode vector: zgetrs failed (info %d)", (int)info);
            goto done;
        }
        double big = 0.0;
        for (size_t i = 0; i < m; i++)
            big = fmax(big, cabs(xv[i]));
        if (!(big > 0.0) || !isfinite(big)) {
            s = ts_error(TS_ERR_LINEAR, "mode vector: inverse iteration broke down");
            goto done;
        }
        for (size_t i = 0; i < m; i++)
            xv[i] /= big;
    }
done:
    free(p);
    free(piv);
    free(start);
    return s;
}

int ts_spectrum_mode(ts_system *sys, const ts_spectrum *sp, size_t k, double *x, double *v)
{
    size_t n = sp->n, m = sp->m;
    if (k >= sp->count)
        return ts_error(TS_ERR_INPUT, "mode %zu: only %zu eigenvalues", k, sp->count);
    (void)sys;
    double complex lam = sp->re[k] + I * sp->im[k];
    double complex *xv = malloc((m ? m : 1) * sizeof *xv);
    if (!xv)
        return ts_error(TS_ERR_NOMEM, "mode vector");
    int s = TS_OK;
    if (sp->method == TS_EIG_DENSE) {
        s = dense_vector(sp, lam, xv);
    } else {
        /* ARPACK: a real Ritz value's vector is one column; a complex pair's
         * are two columns, re and im, starting at the member with im > 0 */
        const double *z = sp->ritz_;
        size_t col = k;
        int pair = sp->im[k] != 0.0;
        if (pair && k > 0 && sp->im[k] < 0.0 && sp->im[k - 1] == -sp->im[k])
            col = k - 1;
        for (size_t i = 0; i < m; i++) {
            double re = z[col * sp->dim + i];
            double im = pair && col + 1 < sp->count ? z[(col + 1) * sp->dim + i] : 0.0;
            xv[i] = re + I * (sp->im[k] < 0.0 ? -im : im);
        }
    }
    if (!s) {
        /* phase: the largest entry real and positive */
        size_t big = 0;
        for (size_t i = 1; i < m; i++)
            if (cabs(xv[i]) > cabs(xv[big]))
                big = i;
        double complex ph = m && cabs(xv[big]) > 0.0 ? conj(xv[big]) / cabs(xv[big]) : 1.0;
        ts_vec_zero(n, x);
        if (v && sp->order == 2)
            ts_vec_zero(n, v);
        double scale = 0.0;
        for (size_t i = 0; i < m; i++)
            scale = fmax(scale, fabs(creal(xv[i] * ph)));
        if (!(scale > 0.0))
            scale = 1.0;
        for (size_t i = 0; i < m; i++) {
            x[sp->free_[i]] = creal(xv[i] * ph) / scale;
            if (v && sp->order == 2)
                v[sp->free_[i]] = creal(lam * xv[i] * ph) / scale;
        }
    }
    free(xv);
    return s;
}

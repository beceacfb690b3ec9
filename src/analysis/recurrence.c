/* Prony's method on a run's last states: the lowest-order linear recurrence
 * a few functionals of them follow, the largest modulus of its roots and
 * the growth of its powers (src/analysis/recurrence.h; Hildebrand,
 * Introduction to Numerical Analysis, 9.4).  The least-squares fit is by
 * Householder QR (Golub & Van Loan, Matrix Computations, 5.3); the roots'
 * largest modulus is the companion matrix's spectral radius, read from its
 * powers C^(2^j) by repeated squaring. */
#include <math.h>
#include <stdint.h>
#include "analysis/recurrence.h"

#define ROWS (TS_RECURRENCE_SAMPLES * TS_RECURRENCE_WIDTH)
#define SQUARINGS 48

double ts_recurrence_weight(int c, size_t i)
{
    /* splitmix64 of the pair (Steele, Lea & Flood, "Fast splittable
     * pseudorandom number generators", OOPSLA 2014) */
    uint64_t z = (uint64_t)i * TS_RECURRENCE_WIDTH + (uint64_t)c + 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}

/* Least squares min |A c - b| for the m x p matrix a (column j at a + j *
 * ROWS), overwritten by QR; c into coef.  Returns the relative residual
 * |A c - b| / |b|, or INFINITY when A's columns are dependent. */
static double least_squares(double *a, double *b, int m, int p, double *coef)
{
    double bn = 0.0;
    for (int r = 0; r < m; r++)
        bn += b[r] * b[r];
    for (int j = 0; j < p; j++) {
        double *col = a + (size_t)j * ROWS, norm = 0.0;
        for (int r = j; r < m; r++)
            norm += col[r] * col[r];
        norm = sqrt(norm);
        if (!(norm > 0.0))
            return INFINITY;
        double alpha = col[j] > 0.0 ? -norm : norm, v0 = col[j] - alpha;
        /* the reflector I - 2 v v^T / (v^T v), v = (v0, col[j+1..m)) */
        double vv = v0 * v0 + (norm * norm - col[j] * col[j]);
        col[j] = v0;
        for (int k = j + 1; k <= p; k++) {
            double *y = k < p ? a + (size_t)k * ROWS : b, dot = 0.0;
            for (int r = j; r < m; r++)
                dot += col[r] * y[r];
            double f = 2.0 * dot / vv;
            for (int r = j; r < m; r++)
                y[r] -= f * col[r];
        }
        col[j] = alpha; /* R's diagonal; the rest of the column is not read again */
    }
    for (int j = p - 1; j >= 0; j--) {
        double z = b[j];
        for (int k = j + 1; k < p; k++)
            z -= a[(size_t)k * ROWS + j] * coef[k];
        coef[j] = z / a[(size_t)j * ROWS + j];
    }
    double res = 0.0;
    for (int r = p; r < m; r++)
        res += b[r] * b[r];
    return bn > 0.0 ? sqrt(res / bn) : INFINITY;
}

/* The spectral radius of the companion matrix of s_{k+p} = sum_i c_i
 * s_{k+i}: lim |C^n|^(1/n), from C^(2^j) = m e^logscale with m scaled to
 * its largest entry at every squaring (a Jordan block's polynomial growth
 * is divided away by the 2^SQUARINGS-th root). */
double ts_recurrence_radius(const ts_recurrence *rc)
{
    const double *c = rc->coef;
    int p = rc->order;
    if (p < 1)
        return 0.0;
    double m[TS_RECURRENCE_MAX_ORDER][TS_RECURRENCE_MAX_ORDER] = {{0}};
    double t[TS_RECURRENCE_MAX_ORDER][TS_RECURRENCE_MAX_ORDER], logscale = 0.0;
    for (int i = 0; i + 1 < p; i++)
        m[i][i + 1] = 1.0;
    for (int j = 0; j < p; j++)
        m[p - 1][j] = c[j];
    double first = 1.0; /* C = m * first: entries at most 1, no overflow below */
    for (int j = 0; j < p; j++)
        first = fmax(first, fabs(c[j]));
    for (int i = 0; i < p; i++)
        for (int j = 0; j < p; j++)
            m[i][j] /= first;
    logscale = log(first);
    for (int q = 0; q < SQUARINGS; q++) {
        double big = 0.0;
        for (int i = 0; i < p; i++)
            for (int j = 0; j < p; j++) {
                double z = 0.0;
                for (int k = 0; k < p; k++)
                    z += m[i][k] * m[k][j];
                t[i][j] = z;
                big = fmax(big, fabs(z));
            }
        if (!(big > 0.0)) /* nilpotent: every root 0 */
            return 0.0;
        for (int i = 0; i < p; i++)
            for (int j = 0; j < p; j++)
                m[i][j] = t[i][j] / big;
        logscale = 2.0 * logscale + log(big); /* C^(2^(q+1)) = m * e^logscale */
    }
    return exp(logscale / ldexp(1.0, SQUARINGS));
}

int ts_recurrence_fit(const double *s, int len, int width, int max_order, double tol,
                      ts_recurrence *rc)
{
    static const int cap = TS_RECURRENCE_MAX_ORDER;
    double a[TS_RECURRENCE_MAX_ORDER * ROWS], b[ROWS];
    rc->order = 0;
    if (max_order > cap)
        max_order = cap;
    for (int p = 1; p <= max_order; p++) {
        int m = (len - p) * width;
        if (m < 2 * p || m > ROWS)
            return 0;
        for (int k = 0; k + p < len; k++)
            for (int w = 0; w < width; w++) {
                int r = k * width + w;
                for (int j = 0; j < p; j++)
                    a[(size_t)j * ROWS + r] = s[(size_t)(k + j) * width + w];
                b[r] = s[(size_t)(k + p) * width + w];
            }
        if (least_squares(a, b, m, p, rc->coef) <= tol)
            return rc->order = p;
    }
    return 0;
}

double ts_recurrence_peak(const ts_recurrence *rc, long n)
{
    enum { P = TS_RECURRENCE_MAX_ORDER };
    int p = rc->order;
    double m[P][P] = {{0}}, peak = sqrt((double)p); /* |C^0| = |I| */
    for (int i = 0; i < p; i++)
        m[i][i] = 1.0;
    for (long k = 1; k <= n && p > 0; k++) {
        /* C^k = C C^(k-1): the rows move up one, the last is coef . C^(k-1) */
        double last[P] = {0}, f = 0.0;
        for (int i = 0; i < p; i++)
            for (int j = 0; j < p; j++)
                last[j] += rc->coef[i] * m[i][j];
        for (int i = 0; i + 1 < p; i++)
            for (int j = 0; j < p; j++)
                m[i][j] = m[i + 1][j];
        for (int j = 0; j < p; j++)
            m[p - 1][j] = last[j];
        for (int i = 0; i < p; i++)
            for (int j = 0; j < p; j++)
                f += m[i][j] * m[i][j];
        if (!(f <= 1e300))
            return INFINITY;
        peak = fmax(peak, sqrt(f));
    }
    return peak;
}

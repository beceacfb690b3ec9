/* make bench: throughput of the cloth's cached Jacobian product
 * (jacobian_mul, the CG matvec) against a STREAM triad, a[i] = b[i] + s c[i]
 * (McCalpin, "Memory Bandwidth and Machine Balance", 1995), measured in the
 * same run on this machine.  Each figure is the median of REPS repetitions;
 * the machine may be shared and noisy, so the ratio is what to read.
 *
 * Bytes counted per product (compulsory traffic, no write-allocate): per
 * spring its two indices and six block entries (56 bytes), per degree of
 * freedom u, the mass, and out read and written (32 bytes).  Per triad
 * element: b, c read and a written (24 bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tstep/springs.h"
#include "tstep/stepper.h"

#define REPS 7

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t)
{
    qsort(t, REPS, sizeof *t, cmp);
    return t[REPS / 2];
}

int main(void)
{
    /* triad on arrays well beyond the caches */
    size_t m = (size_t)1 << 23;
    double *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b), *c = malloc(m * sizeof *c);
    if (!a || !b || !c)
        return 1;
    for (size_t i = 0; i < m; i++)
        a[i] = 0.0, b[i] = 1.0, c[i] = 2.0;
    double t[REPS], sink = 0.0;
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (size_t i = 0; i < m; i++)
            a[i] = b[i] + 3.0 * c[i];
        t[r] = now() - t0;
        sink += a[r];
    }
    double triad = 24.0 * (double)m / median(t) / 1e9;

    /* a 600 x 600 cloth: 360 000 particles, about 2.15 million springs: some
     * 155 MB of traffic per product, far beyond the last-level cache */
    ts_params p;
    ts_params_init(&p, ts_cloth.params);
    ts_params_set(&p, "nx", "600");
    ts_params_set(&p, "ny", "600");
    ts_system *sys;
    if (ts_system_new(&ts_cloth, &p, &sys)) {
        fprintf(stderr, "bench: %s\n", ts_error_detail());
        return 1;
    }
    ts_springs *s = ts_springs_of(sys);
    size_t n = sys->n;
    double *u = malloc(n * sizeof *u), *out = malloc(n * sizeof *out);
    if (!u || !out)
        return 1;
    for (size_t i = 0; i < n; i++)
        u[i] = (double)(i % 7) - 3.0;
    ts_system_linearize(sys, 0.0, sys->x, sys->v, 1e-3, 3e-2);
    int per = 20;
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (int k = 0; k < per; k++)
            ts_system_jacobian_mul(sys, u, out);
        t[r] = (now() - t0) / per;
        sink += out[r];
    }
    double bytes = 56.0 * (double)s->ns + 32.0 * (double)n;
    double mv = bytes / median(t) / 1e9;
    printf("STREAM triad           %7.2f GB/s  (%zu doubles, median of %d)\n", triad, m, REPS);
    printf("cloth jacobian_mul     %7.2f GB/s  (%zu springs, %zu dof, %.2f ms per product)\n",
           mv, s->ns, n, 1e3 * median(t));
    printf("ratio matvec / triad   %7.2f\n", mv / triad);
    if (sink == 42.0)
        printf(" \n");
    ts_system_free(sys);
    free(a), free(b), free(c), free(u), free(out);
    return 0;
}

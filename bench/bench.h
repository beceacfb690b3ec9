/* bench/bench.h - what every bench program shares: a monotonic clock and the
 * median of repeated timings (interleaved repeats, medians: docs/performance.md). */
#ifndef TSTEP_BENCH_H
#define TSTEP_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tstep/stepper.h"

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The calling thread's processor time: what a one-thread timing costs,
 * without the time other processes took the core (a shared machine). */
static inline double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A built-in stepper by name; exit 1 when the build lacks it (an assignment's
 * hand-out leaves out the built-ins with an assigned stepper's method). */
static inline const ts_stepper_type *bench_stepper(const char *name)
{
    const ts_stepper_type *t = ts_stepper_find(name);
    if (!t) {
        fprintf(stderr, "bench: stepper '%s' is not in this build\n", name);
        exit(1);
    }
    return t;
}

static inline int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of t[0..n) (sorts t). */
static inline double bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

#endif

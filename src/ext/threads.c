/* The thread team (core/parallel.h): OpenMP, the only file tstep compiles
 * with -fopenmp.  A loop's range [0, n) is cut as OpenMP's static schedule
 * cuts it, one contiguous piece a thread, the first n % threads pieces one
 * longer. */
#include "ext/ext.h"
#ifdef _OPENMP /* built with OPENMP= (make's variable): no team, the core's loops serial */
#include <omp.h>

/* this thread's piece of [0, n) */
static void piece(size_t n, size_t *i0, size_t *i1)
{
    size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
    size_t q = n / nt, r = n % nt;
    *i0 = t * q + (t < r ? t : r);
    *i1 = *i0 + q + (t < r);
}

static void run_for(size_t n, ts_range_fn fn, void *ctx)
{
#pragma omp parallel
    {
        size_t i0, i1;
        piece(n, &i0, &i1);
        if (i0 < i1)
            fn(ctx, i0, i1);
    }
}

static void run_passes(int npass, const size_t *count, ts_pass_fn fn, void *ctx)
{
#pragma omp parallel
    for (int p = 0; p < npass; p++) {
        size_t i0, i1;
        piece(count[p], &i0, &i1);
        if (i0 < i1)
            fn(ctx, p, i0, i1);
#pragma omp barrier
    }
}

static void set(int n) { omp_set_num_threads(n); }

static int get(void) { return omp_get_max_threads(); }

const ts_threads_ops ts_ext_threads = {
    .set = set, .get = get, .run_for = run_for, .run_passes = run_passes};
#endif

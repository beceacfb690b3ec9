/* Loops on the thread team, where there is one and where it pays
 * (src/core, private).
 *
 * The core compiles without OpenMP: a loop that may run on threads is a
 * function over a range of its indices, fn(ctx, i0, i1), and
 * TS_PARALLEL(cond, n, fn, ctx) calls it once over [0, n) unless cond holds
 * and a thread team is there, in which case ts_parallel_for splits [0, n)
 * into one contiguous range a thread (OpenMP's static schedule).  The team
 * is the extension's (src/ext/threads.c, libgomp; core/ext.h), there when
 * the program links libtstep-ext or once ts_threads_set asks for more than
 * one thread.  Every loop computes each index the same way whichever thread
 * runs it, and the reductions add fixed chunks in order, so the results are
 * the same bits with or without the team and for any number of threads.
 *
 * cond keeps small loops (the test equation, the oscillator) off the team:
 * a parallel region enters the OpenMP runtime, and a futex system call ends
 * it, which costs far more than such a loop (stability on the oscillator
 * with midpoint: 1.75 s with those calls, 0.05 s without).
 *
 * ts_parallel_passes runs npass such loops one after the other in one
 * parallel region, a barrier after each (the spring networks' chunked
 * passes). */
#ifndef TSTEP_CORE_PARALLEL_H
#define TSTEP_CORE_PARALLEL_H

#include <stddef.h>

typedef void (*ts_range_fn)(void *ctx, size_t i0, size_t i1);
typedef void (*ts_pass_fn)(void *ctx, int pass, size_t i0, size_t i1);

/* The tasks running besides the process's own threads (-1: unknown), as
 * a team that follows the load looks at them; cpus and asked let it stop
 * early once asked threads are sure to fit. */
typedef long (*ts_load_probe)(long cpus, int asked);

/* The extension's thread team (the entry "threads"). */
typedef struct {
    void (*set)(int n);  /* threads from now on */
    int (*get)(void);    /* threads asked for: a loop takes at most these */
    void (*run_for)(size_t n, ts_range_fn fn, void *ctx);
    void (*run_passes)(int npass, const size_t *count, ts_pass_fn fn, void *ctx);
    void (*follow)(int on);                  /* ts_threads_follow_load */
    void (*usage)(long *loops, long *fewer); /* ts_threads_usage */
    void (*load_probe)(ts_load_probe p);     /* ts_threads_load_probe */
} ts_threads_ops;

/* The tests' hook: the team's looks at the load call p (NULL: the
 * machine's own count again). */
void ts_threads_load_probe(ts_load_probe p);

/* The threads a loop takes when following the load: with `others` tasks
 * running besides the process's own threads on the machine's `cpus`
 * processors and `asked` threads asked for, the processors left over, at
 * least 1 and at most asked (others < 0, unknown: asked); the team caps it
 * at the processors of its affinity. */
int ts_threads_for_load(int asked, long cpus, long others);

void ts_parallel_for(size_t n, ts_range_fn fn, void *ctx);
void ts_parallel_passes(int npass, const size_t *count, ts_pass_fn fn, void *ctx);

/* The first touch of a fresh array's pages on the team (zero bytes written
 * over [p, p + bytes)), so that their page faults are shared by the threads
 * rather than taken one by one by the serial loop that fills the array
 * next; nothing on one thread or for a small array.  Only for memory whose
 * contents may become zero: calloc'd, or about to be written whole. */
void ts_parallel_touch(void *p, size_t bytes);

/* calloc, the pages of a large array zeroed on the team when there is one
 * (so first touched there): for an array a parallel loop fills next. */
void *ts_calloc_team(size_t count, size_t size);

#define TS_PARALLEL(cond, n, fn, ctx)                                                     \
    do {                                                                                  \
        if (cond)                                                                         \
            ts_parallel_for(n, fn, ctx);                                                  \
        else                                                                              \
            fn(ctx, 0, n);                                                                \
    } while (0)

#endif

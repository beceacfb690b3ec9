/* Loops on the thread team only where the team pays (src/core, private).
 *
 * A parallel region enters the OpenMP runtime, and a futex system call ends
 * it, even when its if clause is false: on small systems (the test
 * equation, the oscillator) that cost far more than the work (stability on
 * the oscillator with midpoint: 1.75 s with those calls, 0.05 s without).
 * TS_PARALLEL_FOR(cond, loop) runs the for statement `loop` on the team
 * when cond holds, else as plain code; TS_PARALLEL_FOR_SIMD adds simd to
 * both.  The loop is a macro argument, so it holds no preprocessor
 * directive: a loop with a nested pragma goes into a function whose
 * worksharing `omp for` is orphaned (it runs on the calling thread alone
 * outside a parallel region). */
#ifndef TSTEP_CORE_PARALLEL_H
#define TSTEP_CORE_PARALLEL_H

#define TS_PARALLEL_FOR(cond, ...)                                                        \
    do {                                                                                  \
        if (cond) {                                                                       \
            _Pragma("omp parallel for schedule(static)") __VA_ARGS__                      \
        } else {                                                                          \
            __VA_ARGS__                                                                   \
        }                                                                                 \
    } while (0)

#define TS_PARALLEL_FOR_SIMD(cond, ...)                                                   \
    do {                                                                                  \
        if (cond) {                                                                       \
            _Pragma("omp parallel for simd schedule(static)") __VA_ARGS__                 \
        } else {                                                                          \
            _Pragma("omp simd") __VA_ARGS__                                               \
        }                                                                                 \
    } while (0)

#endif

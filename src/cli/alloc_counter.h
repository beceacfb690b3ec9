/* The grader's allocation counter, for a program's main file: malloc,
 * calloc, realloc, aligned_alloc and posix_memalign defined here forward to
 * glibc's own entry points (__libc_malloc, ...) and count calls while armed.
 * Included by exactly one file of a program (src/cli/main.c for tstep, the test
 * runner's grade suite), never by the library: defined in the program, they
 * replace the C library's allocator for every caller, including shared
 * objects loaded with dlopen (plugins), because the program is linked with
 * -rdynamic and the dynamic linker resolves malloc to the program's
 * definition first.  alloc_counter_install() hands the counter to the
 * core's hook (ts_alloc_counter_install, tstep/status.h), which the grader's
 * no-allocation check reads and arms around each step; a failed allocation
 * is passed to ts_alloc_failed, whose hook the grader's worker sets (the
 * memory limit).  Without glibc, or under AddressSanitizer (which brings its
 * own malloc), nothing is replaced or installed and the check is skipped. */
#ifndef TSTEP_ALLOC_COUNTER_H
#define TSTEP_ALLOC_COUNTER_H

#include <errno.h> /* first: a C library header, which defines __GLIBC__ */
#include <stddef.h>
#include "tstep/status.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TSTEP_NO_ALLOC_COUNTER 1
#endif
#endif

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(TSTEP_NO_ALLOC_COUNTER)

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static volatile int alloc_armed;
static volatile long alloc_calls;

void *malloc(size_t size)
{
    if (alloc_armed)
        alloc_calls++;
    void *q = __libc_malloc(size);
    if (!q && size)
        ts_alloc_failed(size);
    return q;
}

void *calloc(size_t n, size_t size)
{
    if (alloc_armed)
        alloc_calls++;
    void *q = __libc_calloc(n, size);
    if (!q && n && size)
        ts_alloc_failed(n * size);
    return q;
}

void *realloc(void *p, size_t size)
{
    if (alloc_armed)
        alloc_calls++;
    void *q = __libc_realloc(p, size);
    if (!q && size)
        ts_alloc_failed(size);
    return q;
}

void *aligned_alloc(size_t align, size_t size)
{
    if (alloc_armed)
        alloc_calls++;
    return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    if (alloc_armed)
        alloc_calls++;
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = __libc_memalign(align, size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

static void alloc_arm(int on) { alloc_armed = on; }
static long alloc_count(void) { return alloc_calls; }
static void alloc_counter_install(void)
{
    ts_alloc_counter_install(&(ts_alloc_counter){.arm = alloc_arm, .count = alloc_count});
}

#else

static void alloc_counter_install(void) {}

#endif

#endif

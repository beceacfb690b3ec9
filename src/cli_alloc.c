/* The tstep program's allocation counter, for the grader's no-allocation
 * check: malloc, calloc, realloc, aligned_alloc and posix_memalign are
 * defined here and forward to glibc's own entry points (__libc_malloc, ...),
 * counting calls while armed.  Defined in the program, they replace the C
 * library's for every caller, shared objects loaded with dlopen (plugins)
 * included, since the dynamic linker resolves malloc to the program's
 * definition first.  This object is linked only into programs that refer to
 * cli_alloc_count (the tstep program, through `grade`; the test runner);
 * it is not for the library.  Under AddressSanitizer, which brings its own
 * malloc, or without glibc, nothing is replaced and cli_alloc_available()
 * returns 0 (the check is then skipped). */
#include <errno.h> /* first: a C library header, which defines __GLIBC__ */
#include <stddef.h>
#include "cli_alloc.h"

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(TSTEP_NO_ALLOC_COUNTER)
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TSTEP_NO_ALLOC_COUNTER 1
#endif
#endif
#endif

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(TSTEP_NO_ALLOC_COUNTER)

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static volatile int armed;
static volatile long count;

void *malloc(size_t size)
{
    if (armed)
        count++;
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    if (armed)
        count++;
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    if (armed)
        count++;
    return __libc_realloc(p, size);
}

void *aligned_alloc(size_t align, size_t size)
{
    if (armed)
        count++;
    return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    if (armed)
        count++;
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = __libc_memalign(align, size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

int cli_alloc_available(void) { return 1; }
void cli_alloc_arm(int on) { armed = on; }
long cli_alloc_count(void) { return count; }

#else

int cli_alloc_available(void) { return 0; }
void cli_alloc_arm(int on) { (void)on; }
long cli_alloc_count(void) { return 0; }

#endif

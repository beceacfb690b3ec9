/* The tstep program's allocation counter (src/cli_alloc.c): counts
 * malloc/calloc/realloc/aligned_alloc/posix_memalign calls made while armed. */
#ifndef TSTEP_CLI_ALLOC_H
#define TSTEP_CLI_ALLOC_H

/* 1 when the counter replaces the C library's allocator in this program. */
int cli_alloc_available(void);
void cli_alloc_arm(int on);
long cli_alloc_count(void);

#endif

/* What the tests read of the multigrid preconditioner (src/linear/precond_amg.c):
 * internal to the library, not installed (a ts_ name, as every symbol of
 * the library has). */
#ifndef TSTEP_PRECOND_AMG_H
#define TSTEP_PRECOND_AMG_H
#include <stddef.h>

/* Level l's entries that the cycle's products read, and (*pattern) those
 * of its pattern; 0 and 0 past the last level.  state: the amg
 * preconditioner's, after a setup. */
size_t ts_amg_level_nonzeros(const void *state, int l, size_t *pattern);

/* The bytes the hierarchy holds, as allocated: part[0] its levels'
 * matrices (level 0's row pointers; the coarse levels' single-precision
 * copies), part[1] its prolongators, part[2] its work (vectors, aggregates,
 * strength flags, the coarse factor, set-up scratch). */
void ts_amg_bytes(const void *state, size_t part[3]);

/* The loop of the cycle's single-precision products: mode 0 the plain
 * loop, 1 AVX2's gathers where the processor has AVX2 (the same bits: the
 * tests compare the two), -1 (the default) the gathers on Intel's
 * processors with AVX2 and the plain loop elsewhere. */
void ts_amg_csr_simd(int mode);

#endif

/* The multigrid preconditioner's pieces that the tests check on their own
 * (internal to the library: not installed, not exported by libtstep.so). */
#ifndef TSTEP_PRECOND_AMG_H
#define TSTEP_PRECOND_AMG_H
#include <stddef.h>
#include <stdint.h>

/* Coarse couplings below this, relative to sqrt(a_ii a_jj), are dropped. */
#define AMG_DROP 1e-4

/* Drop, in the symmetric matrix of n compressed rows (p, col, v), the
 * couplings i != j with |a_ij| < AMG_DROP sqrt(a_ii a_jj) (a_ii, a_jj > 0,
 * as before any drop), both (i, j) and (j, i), adding each dropped |a_ij|
 * to its row's diagonal (src/precond_amg.c).  dpos and d: n entries of
 * scratch each; dpos is all SIZE_MAX on return. */
void ts_amg_sparsify(size_t n, const size_t *p, const uint32_t *col, double *v, size_t *dpos,
                     double *d);

/* Level l's entries that the cycle's products read, and (*pattern) those
 * of its pattern; 0 and 0 past the last level.  state: the amg
 * preconditioner's, after a setup. */
size_t ts_amg_level_nonzeros(const void *state, int l, size_t *pattern);

#endif

/* What the tests read of the spring networks (src/springs/springs.c):
 * internal to the library, not installed (a ts_ name, as every symbol of
 * the library has). */
#ifndef TSTEP_SPRINGS_SPRINGS_H
#define TSTEP_SPRINGS_SPRINGS_H

/* The linearization's loop: mode 0 one spring at a time, 1 four springs at
 * a time with AVX2 where the processor has it (the same bits: the tests
 * compare the two), -1 (the default) four at a time on AMD's processors
 * with AVX2 and one at a time elsewhere.  Networks with stiffness or
 * damping per spring take one at a time. */
void ts_springs_lanes(int mode);

#endif

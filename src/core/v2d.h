/* Two doubles in one register (SSE2 on x86-64, every x86-64 has it; GCC
 * and Clang lower it to scalar code elsewhere), for the kernels that pair
 * a particle's x and y components (src/springs/springs.c) or a dot product's
 * accumulators (src/core/linalg.c).  Lane by lane, the operations and their
 * order are those of the scalar code, so are the results.  Internal to
 * the library, not installed. */
#ifndef TSTEP_V2D_H
#define TSTEP_V2D_H
#include <string.h>

typedef double v2d __attribute__((vector_size(16)));

static inline v2d load2(const double *p)
{
    v2d r;
    memcpy(&r, p, sizeof r);
    return r;
}

static inline void store2(double *p, v2d v)
{
    memcpy(p, &v, sizeof v);
}

#endif

/* Linearly implicit Euler: one Newton iteration of backward Euler, the
 * original method of Baraff & Witkin, "Large Steps in Cloth Simulation"
 * (SIGGRAPH 1998), eq. 16-18:
 *   (M - h df/dv - h^2 df/dx) dv = h (f0 + h df/dx v0),
 *   v1 = v0 + dv,  x1 = x0 + h v1.
 * Exact backward Euler on linear systems; order 1.  See tstep/implicit.h. */
#include "tstep/implicit.h"

static int bel_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    return ts_implicit_euler_step(scratch, sys, t, h, 1, stats);
}

const ts_stepper_type ts_backward_euler_linear = {
    .name = "backward-euler-linear",
    .summary = "linearly implicit Euler (Baraff-Witkin): one Newton step per time step",
    .order = 1,
    .flags = TS_IMPLICIT | TS_NEEDS_JACOBIAN | TS_LINEARIZED | TS_KEEPS_START,
    .alloc = ts_implicit_alloc,
    .step = bel_step,
    .free = ts_implicit_free,
    .reset = ts_implicit_reset,
};

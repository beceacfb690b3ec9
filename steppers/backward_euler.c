/* Backward (implicit) Euler, order 1, solved by Newton's method.
 *   Y_{n+1} = Y_n + h F(t_{n+1}, Y_{n+1})
 * Second-order systems use the mass-weighted velocity form of Baraff &
 * Witkin (1998), iterated at the current iterate until the Newton update is
 * below tolerance; each linear solve by the chosen linear solver (by
 * default the system's: preconditioned CG, matrix-free, or a sparse
 * Cholesky for banded systems; BiCGSTAB where the Jacobian is not
 * symmetric).  See tstep/implicit.h and tstep/linsolve.h.
 * One-step factor on x' = -k x: 1 / (1 + z), stable for every z >= 0. */
#include "tstep/implicit.h"

static int be_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    return ts_implicit_euler_step(scratch, sys, t, h, 0, stats);
}

const ts_stepper_type ts_backward_euler = {
    .name = "backward-euler",
    .summary = "implicit Euler, Newton iterations with matrix-free preconditioned CG",
    .order = 1,
    .flags = TS_IMPLICIT | TS_NEEDS_JACOBIAN | TS_KEEPS_START,
    .alloc = ts_implicit_alloc,
    .step = be_step,
    .free = ts_implicit_free,
    .reset = ts_implicit_reset,
};

/* Implicit midpoint rule, order 2, solved by Newton's method.
 *   Y_{n+1} = Y_n + h F(t_n + h/2, (Y_n + Y_{n+1})/2)
 * Second-order systems, unknown w = v1 - v0, in the mass-weighted velocity
 * form of the shared driver (tstep/implicit.h):
 *   vm = v0 + w/2,  xm = x0 + h/2 vm,  M w = h f(xm, vm),
 *   v1 = v0 + w,    x1 = x0 + h vm
 * with Newton matrix M - h/2 df/dv - h^2/4 df/dx.  First order: M w = h f(x0 + w/2),
 * x1 = x0 + w.
 * One-step factor R(z) = (1 + z/2) / (1 - z/2): |R| <= 1 exactly on Re z <= 0
 * (A-stable), |R| = 1 on the imaginary axis, so no numerical damping; it is
 * symplectic and keeps every quadratic invariant (the energy of a linear
 * undamped system) exactly.  One Newton solve per iteration, as backward Euler.
 * Hairer, Norsett & Wanner, Solving ODEs I, II.7 (the implicit midpoint
 * rule, the 1-stage Gauss method) and II, IV.3 (A-stability); Hairer, Lubich &
 * Wanner, Geometric Numerical Integration, 2nd ed., VI.3 (symplecticity),
 * IV.2 (quadratic invariants). */
#include "tstep/implicit.h"

static int im_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    int o2 = sys->order == 2;
    ts_implicit_method m = {.gamma = h, .ts = t, .tf = t + 0.5 * h, .cv = 0.5, .px = 0.5 * h,
                            .cx = o2 ? 0.25 * h : 0.5, .qx = h, .ex = o2 ? 0.5 * h : 1.0,
                            .at_start = 1};
    return ts_implicit_newton(scratch, sys, &m, 0, stats);
}

const ts_stepper_type ts_implicit_midpoint = {
    .name = "implicit-midpoint",
    .summary = "implicit midpoint: A-stable, symplectic, no numerical damping; Newton-CG",
    .order = 2,
    .flags = TS_IMPLICIT | TS_SYMPLECTIC | TS_NEEDS_JACOBIAN | TS_KEEPS_START,
    .alloc = ts_implicit_alloc,
    .step = im_step,
    .free = ts_implicit_free,
    .reset = ts_implicit_reset,
};

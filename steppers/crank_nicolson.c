/* Crank-Nicolson (the implicit trapezoidal rule), order 2, solved by Newton.
 *   Y_{n+1} = Y_n + h/2 (F(t_n, Y_n) + F(t_{n+1}, Y_{n+1}))
 * Second-order systems, unknown w = v1 - v0, in the mass-weighted velocity
 * form of the shared driver (tstep/implicit.h):
 *   v1 = v0 + w,  x1 = x0 + h v0 + h/2 w,  M w = h/2 (f0 + f(x1, v1))
 * with Newton matrix M - h/2 df/dv - h^2/4 df/dx.  First order:
 * M w = h/2 (f(x0) + f(x0 + w)), x1 = x0 + w.
 * One-step factor R(z) = (1 + z/2) / (1 - z/2), the same as the implicit
 * midpoint rule: A-stable, energy-conserving on linear undamped systems.
 * Not L-stable: R(z) -> -1 as z -> -infinity, so stiff modes are not damped
 * but flip sign every step (ringing), where backward Euler (R -> 0) damps
 * them.  f0 is reused from the step's start, so a step costs what a
 * backward Euler step costs.
 * Crank & Nicolson, Proc. Cambridge Philos. Soc. 43 (1947); Hairer, Norsett
 * & Wanner, Solving ODEs I, II.7 and II, IV.3 (A- and L-stability). */
#include "tstep/implicit.h"

static int cn_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    return ts_implicit_alloc_with(sys, opt, 1, scratch); /* f0 is in every residual */
}

static int cn_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    int o2 = sys->order == 2;
    ts_implicit_method m = {.gamma = 0.5 * h, .c0 = 0.5 * h, .ts = t, .tf = t + h, .cv = 1.0,
                            .px = h, .cx = o2 ? 0.5 * h : 1.0, .qx = h,
                            .ex = o2 ? 0.5 * h : 1.0, .at_start = 1};
    return ts_implicit_newton(scratch, sys, &m, 0, stats);
}

const ts_stepper_type ts_crank_nicolson = {
    .name = "crank-nicolson",
    .summary = "implicit trapezoid: A-stable, not L-stable (stiff modes ring); Newton-CG",
    .order = 2,
    .flags = TS_IMPLICIT | TS_NEEDS_JACOBIAN | TS_KEEPS_START,
    .alloc = cn_alloc,
    .step = cn_step,
    .free = ts_implicit_free,
    .reset = ts_implicit_reset,
};

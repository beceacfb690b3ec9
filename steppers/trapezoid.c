/* Explicit trapezoid rule (Heun's method), order 2.
 *   k1 = F(t_n, Y_n),  k2 = F(t_n + h, Y_n + h k1)
 *   Y_{n+1} = Y_n + h/2 (k1 + k2)
 * One-step factor on x' = -k x: 1 - z + z^2/2 (z = hk); stable for z <= 2.
 * Hairer, Norsett & Wanner, Solving ODEs I, II.1. */
#include <stdlib.h>
#include "tstep/linalg.h"
#include "tstep/stepper.h"

static int trapezoid_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_scratch_vectors(sys, 4, scratch);
}

static int trapezoid_step(void *scratch, ts_system *sys, double t, double h,
                          ts_step_stats *stats)
{
    size_t m = ts_system_ydim(sys);
    double *y = scratch, *ye = y + m, *k1 = ye + m, *k2 = k1 + m;
    int s;
    (void)stats;
    ts_system_get_y(sys, y);
    if ((s = ts_system_deriv(sys, t, y, k1)))
        return s;
    ts_vec_copy(m, y, ye);
    ts_vec_axpy(m, h, k1, ye); /* the Euler-predicted end */
    if ((s = ts_system_deriv(sys, t + h, ye, k2)))
        return s;
    ts_vec_axpy(m, 0.5 * h, k1, y);
    ts_vec_axpy(m, 0.5 * h, k2, y);
    ts_system_set_y(sys, y);
    return TS_OK;
}

const ts_stepper_type ts_trapezoid = {
    .name = "trapezoid",
    .summary = "explicit trapezoid (Heun): average of the slopes at the start and the Euler end",
    .order = 2,
    .alloc = trapezoid_alloc,
    .step = trapezoid_step,
    .free = free,
};

/* Explicit midpoint rule, order 2.
 *   Y_mid = Y_n + h/2 F(t_n, Y_n)
 *   Y_{n+1} = Y_n + h F(t_n + h/2, Y_mid)
 * One-step factor on x' = -k x: 1 - z + z^2/2 (z = hk); stable for z <= 2.
 * Hairer, Norsett & Wanner, Solving ODEs I, II.1 (Runge 1895). */
#include <stdlib.h>
#include "tstep/linalg.h"
#include "tstep/stepper.h"

static int midpoint_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_scratch_vectors(sys, 3, scratch);
}

static int midpoint_step(void *scratch, ts_system *sys, double t, double h,
                         ts_step_stats *stats)
{
    size_t m = ts_system_ydim(sys);
    double *y = scratch, *ymid = y + m, *k = ymid + m;
    int s;
    (void)stats;
    ts_system_get_y(sys, y);
    if ((s = ts_system_deriv(sys, t, y, k)))
        return s;
    ts_vec_copy(m, y, ymid);
    ts_vec_axpy(m, 0.5 * h, k, ymid);
    if ((s = ts_system_deriv(sys, t + 0.5 * h, ymid, k)))
        return s;
    ts_vec_axpy(m, h, k, y);
    ts_system_set_y(sys, y);
    return TS_OK;
}

const ts_stepper_type ts_midpoint = {
    .name = "midpoint",
    .summary = "explicit midpoint: half Euler step, full step with the slope there",
    .order = 2,
    .alloc = midpoint_alloc,
    .step = midpoint_step,
    .free = free,
};

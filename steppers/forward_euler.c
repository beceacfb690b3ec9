/* Forward (explicit) Euler, order 1.
 *   Y_{n+1} = Y_n + h F(t_n, Y_n)
 * On x' = -k x one step multiplies x by 1 - hk: stable for hk <= 2.
 * Hairer, Norsett & Wanner, Solving Ordinary Differential Equations I, II.1. */
#include <stdlib.h>
#include "tstep/linalg.h"
#include "tstep/stepper.h"

static int fe_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_scratch_vectors(sys, 2, scratch);
}

static int fe_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    size_t m = ts_system_ydim(sys);
    double *y = scratch, *k = y + m;
    (void)stats;
    ts_system_get_y(sys, y);
    int s = ts_system_deriv(sys, t, y, k);
    if (s)
        return s;
    ts_vec_axpy(m, h, k, y);
    ts_system_set_y(sys, y);
    return TS_OK;
}

const ts_stepper_type ts_forward_euler = {
    .name = "forward-euler",
    .summary = "explicit Euler, 1 force evaluation per step",
    .order = 1,
    .alloc = fe_alloc,
    .step = fe_step,
    .free = free,
};

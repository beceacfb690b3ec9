/* Classical Runge-Kutta, order 4.
 *   k1 = F(t, Y),            k2 = F(t + h/2, Y + h/2 k1),
 *   k3 = F(t + h/2, Y + h/2 k2), k4 = F(t + h, Y + h k3)
 *   Y_{n+1} = Y_n + h/6 (k1 + 2 k2 + 2 k3 + k4)
 * One-step factor on x' = -k x: 1 - z + z^2/2 - z^3/6 + z^4/24 (z = hk);
 * stable for z <= 2.785.  Hairer, Norsett & Wanner, Solving ODEs I, II.1. */
#include <stdlib.h>
#include "tstep/linalg.h"
#include "tstep/stepper.h"

static int rk4_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_scratch_vectors(sys, 4, scratch);
}

static int rk4_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    size_t m = ts_system_ydim(sys);
    double *y = scratch, *acc = y + m, *ys = acc + m, *k = ys + m;
    static const double c[4] = {0.0, 0.5, 0.5, 1.0}; /* stage times and offsets */
    static const double w[4] = {1.0, 2.0, 2.0, 1.0}; /* weights, over 6 */
    int s;
    (void)stats;
    ts_system_get_y(sys, y);
    ts_vec_copy(m, y, acc);
    ts_vec_copy(m, y, ys);
    for (int i = 0; i < 4; i++) {
        if ((s = ts_system_deriv(sys, t + c[i] * h, ys, k)))
            return s;
        ts_vec_axpy(m, h * w[i] / 6.0, k, acc);
        if (i < 3) { /* next stage: Y + c[i+1] h k_i */
            ts_vec_copy(m, y, ys);
            ts_vec_axpy(m, c[i + 1] * h, k, ys);
        }
    }
    ts_system_set_y(sys, acc);
    return TS_OK;
}

const ts_stepper_type ts_rk4 = {
    .name = "rk4",
    .summary = "classical Runge-Kutta, 4 force evaluations per step",
    .order = 4,
    .alloc = rk4_alloc,
    .step = rk4_step,
    .free = free,
};

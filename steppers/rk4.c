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

/* acc += a k (first stage: acc = y + a k) and ys = y + b k in one pass over k */
static void stage_update(size_t m, const double *k, double a, double *acc, const double *y,
                         double b, double *ys, int first)
{
#pragma omp parallel for schedule(static) if (m >= ts_threads_min())
    for (size_t i = 0; i < m; i++) {
        acc[i] = (first ? y[i] : acc[i]) + a * k[i];
        ys[i] = y[i] + b * k[i];
    }
}

static int rk4_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    size_t m = ts_system_ydim(sys), n = sys->n;
    double *y = scratch, *acc = y + m, *ys = acc + m, *k = ys + m;
    static const double c[4] = {0.0, 0.5, 0.5, 1.0}; /* stage times and offsets */
    static const double w[4] = {1.0, 2.0, 2.0, 1.0}; /* weights, over 6 */
    int s;
    (void)stats;
    ts_system_get_y(sys, y);
    for (int i = 0; i < 3; i++) { /* k_i at Y + c_i h k_{i-1}; next stage's Y + c_{i+1} h k_i */
        if ((s = ts_system_deriv(sys, t + c[i] * h, i ? ys : y, k)))
            return s;
        stage_update(m, k, h * w[i] / 6.0, acc, y, c[i + 1] * h, ys, i == 0);
    }
    if ((s = ts_system_deriv(sys, t + h, ys, k)))
        return s;
    /* Y_{n+1} = acc + h/6 k4, straight into the system's x (and v) */
    double a = h * w[3] / 6.0, *x = sys->x, *v = sys->v;
#pragma omp parallel for schedule(static) if (m >= ts_threads_min())
    for (size_t i = 0; i < m; i++) {
        double yi = acc[i] + a * k[i];
        if (i < n)
            x[i] = yi;
        else
            v[i - n] = yi;
    }
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

/* Classical Runge-Kutta, order 4.
 *   k1 = F(t, Y),                k2 = F(t + h/2, Y + h/2 k1),
 *   k3 = F(t + h/2, Y + h/2 k2), k4 = F(t + h, Y + h k3)
 *   Y_{n+1} = Y_n + h/6 (k1 + 2 k2 + 2 k3 + k4)
 * One-step factor R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24; on x' = -k x
 * stable for hk <= 2.785.  Hairer, Norsett & Wanner, Solving ODEs I, II.1. */
#include "tstep/butcher.h"

/*   0   |
 *   1/2 | 1/2
 *   1/2 | 0   1/2
 *   1   | 0   0   1
 *   ----+----------------
 *       | 1/6 1/3 1/3 1/6  */
static const double a[] = {0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0,
                           0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0};
static const double b[] = {1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0};
static const double c[] = {0.0, 0.5, 0.5, 1.0};
static const ts_butcher rk4_tableau = {.stages = 4, .a = a, .b = b, .c = c};

static int rk4_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_butcher_alloc(&rk4_tableau, sys, scratch);
}

const ts_stepper_type ts_rk4 = {
    .name = "rk4",
    .summary = "classical Runge-Kutta, 4 force evaluations per step",
    .order = 4,
    .tableau = &rk4_tableau,
    .flags = TS_KEEPS_START, /* a chained tableau (tstep/butcher.h) */
    .alloc = rk4_alloc,
    .step = ts_butcher_step,
    .free = ts_butcher_free,
    .reset = ts_butcher_reset,
};

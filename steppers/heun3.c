/* Heun's third-order method.
 *   k1 = F(t, Y),  k2 = F(t + h/3, Y + h/3 k1),  k3 = F(t + 2h/3, Y + 2h/3 k2)
 *   Y_{n+1} = Y_n + h/4 (k1 + 3 k3)
 * One-step factor R(z) = 1 + z + z^2/2 + z^3/6 (every three-stage order-3
 * method); on x' = -k x stable for hk <= 2.513.
 * Heun, Z. Math. Phys. 45 (1900); Hairer, Norsett & Wanner, Solving ODEs I,
 * II.1, Table 1.1. */
#include "tstep/butcher.h"

/*   0   |
 *   1/3 | 1/3
 *   2/3 | 0   2/3
 *   ----+-------------
 *       | 1/4 0   3/4  */
static const double a[] = {0.0, 0.0, 0.0, 1.0 / 3.0, 0.0, 0.0, 0.0, 2.0 / 3.0, 0.0};
static const double b[] = {0.25, 0.0, 0.75};
static const double c[] = {0.0, 1.0 / 3.0, 2.0 / 3.0};
static const ts_butcher heun3_tableau = {.stages = 3, .a = a, .b = b, .c = c};

static int heun3_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_butcher_alloc(&heun3_tableau, sys, scratch);
}

const ts_stepper_type ts_heun3 = {
    .name = "heun3",
    .summary = "Heun's third-order Runge-Kutta, 3 evaluations per step",
    .order = 3,
    .tableau = &heun3_tableau,
    .flags = TS_KEEPS_START, /* a chained tableau (tstep/butcher.h) */
    .alloc = heun3_alloc,
    .step = ts_butcher_step,
    .free = ts_butcher_free,
    .reset = ts_butcher_reset,
};

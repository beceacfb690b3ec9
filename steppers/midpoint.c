/* Explicit midpoint rule, order 2.
 *   Y_mid = Y_n + h/2 F(t_n, Y_n)
 *   Y_{n+1} = Y_n + h F(t_n + h/2, Y_mid)
 * One-step factor on y' = z y / h: R(z) = 1 + z + z^2/2; on x' = -k x
 * (z = -hk) stable for hk <= 2.  Two force evaluations per step.
 * Hairer, Norsett & Wanner, Solving ODEs I, II.1 (Runge 1895). */
#include "tstep/butcher.h"

/*   0   |
 *   1/2 | 1/2
 *   ----+---------
 *       | 0    1   */
static const double a[] = {0.0, 0.0, 0.5, 0.0};
static const double b[] = {0.0, 1.0};
static const double c[] = {0.0, 0.5};
static const ts_butcher midpoint_tableau = {.stages = 2, .a = a, .b = b, .c = c};

static int midpoint_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_butcher_alloc(&midpoint_tableau, sys, scratch);
}

const ts_stepper_type ts_midpoint = {
    .name = "midpoint",
    .summary = "explicit midpoint: half Euler step, full step with the slope there",
    .order = 2,
    .tableau = &midpoint_tableau,
    .flags = TS_KEEPS_START, /* a chained tableau (tstep/butcher.h) */
    .alloc = midpoint_alloc,
    .step = ts_butcher_step,
    .free = ts_butcher_free,
    .reset = ts_butcher_reset,
};

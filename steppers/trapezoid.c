/* Explicit trapezoid rule (Heun's method), order 2.
 *   k1 = F(t_n, Y_n),  k2 = F(t_n + h, Y_n + h k1)
 *   Y_{n+1} = Y_n + h/2 (k1 + k2)
 * One-step factor R(z) = 1 + z + z^2/2; on x' = -k x stable for hk <= 2.
 * Two force evaluations per step.
 * Hairer, Norsett & Wanner, Solving ODEs I, II.1. */
#include "tstep/butcher.h"

/*   0 |
 *   1 | 1
 *   --+---------
 *     | 1/2 1/2  */
static const double a[] = {0.0, 0.0, 1.0, 0.0};
static const double b[] = {0.5, 0.5};
static const double c[] = {0.0, 1.0};
static const ts_butcher trapezoid_tableau = {.stages = 2, .a = a, .b = b, .c = c};

static int trapezoid_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_butcher_alloc(&trapezoid_tableau, sys, scratch);
}

const ts_stepper_type ts_trapezoid = {
    .name = "trapezoid",
    .summary = "explicit trapezoid (Heun): average of the slopes at the start and the Euler end",
    .order = 2,
    .tableau = &trapezoid_tableau,
    .flags = TS_KEEPS_START, /* a chained tableau (tstep/butcher.h) */
    .alloc = trapezoid_alloc,
    .step = ts_butcher_step,
    .free = ts_butcher_free,
    .reset = ts_butcher_reset,
};

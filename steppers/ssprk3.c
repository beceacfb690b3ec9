/* The third-order strong-stability-preserving Runge-Kutta method.
 *   Y1 = Y_n + h F(t, Y_n)
 *   Y2 = 3/4 Y_n + 1/4 (Y1 + h F(t + h, Y1))
 *   Y_{n+1} = 1/3 Y_n + 2/3 (Y2 + h F(t + h/2, Y2))
 * a convex combination of forward Euler steps, so it keeps every convex
 * bound forward Euler keeps at h (SSP coefficient 1).  One-step factor
 * R(z) = 1 + z + z^2/2 + z^3/6; on x' = -k x stable for hk <= 2.513.
 * Shu & Osher, J. Comput. Phys. 77 (1988); Gottlieb, Shu & Tadmor, SIAM
 * Review 43 (2001). */
#include "tstep/butcher.h"

/*   0   |
 *   1   | 1
 *   1/2 | 1/4 1/4
 *   ----+-------------
 *       | 1/6 1/6 2/3  */
static const double a[] = {0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.25, 0.25, 0.0};
static const double b[] = {1.0 / 6.0, 1.0 / 6.0, 2.0 / 3.0};
static const double c[] = {0.0, 1.0, 0.5};
static const ts_butcher ssprk3_tableau = {.stages = 3, .a = a, .b = b, .c = c};

static int ssprk3_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_butcher_alloc(&ssprk3_tableau, sys, scratch);
}

const ts_stepper_type ts_ssprk3 = {
    .name = "ssprk3",
    .summary = "strong-stability-preserving RK3 (Shu-Osher), 3 evaluations per step",
    .order = 3,
    .tableau = &ssprk3_tableau,
    .alloc = ssprk3_alloc,
    .step = ts_butcher_step,
    .free = ts_butcher_free,
    .reset = ts_butcher_reset,
};

/* Ralston's second-order method (named ralston2: "ralston" is the example
 * plugin of the student guide, examples/ralston.c, written by hand).
 *   k1 = F(t, Y),  k2 = F(t + 2h/3, Y + 2h/3 k1)
 *   Y_{n+1} = Y_n + h/4 (k1 + 3 k2)
 * The two-stage second-order method whose third-order error coefficients
 * are smallest.  One-step factor R(z) = 1 + z + z^2/2 (as every two-stage
 * order-2 method); on x' = -k x stable for hk <= 2.
 * Ralston, Runge-Kutta methods with minimum error bounds, Math. Comp. 16
 * (1962); Hairer, Norsett & Wanner, Solving ODEs I, II.1. */
#include "tstep/butcher.h"

/*   0   |
 *   2/3 | 2/3
 *   ----+---------
 *       | 1/4 3/4  */
static const double a[] = {0.0, 0.0, 2.0 / 3.0, 0.0};
static const double b[] = {0.25, 0.75};
static const double c[] = {0.0, 2.0 / 3.0};
static const ts_butcher ralston2_tableau = {.stages = 2, .a = a, .b = b, .c = c};

static int ralston2_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_butcher_alloc(&ralston2_tableau, sys, scratch);
}

const ts_stepper_type ts_ralston2 = {
    .name = "ralston2",
    .summary = "Ralston's RK2: the two-stage method of least error bound, 2 evaluations",
    .order = 2,
    .tableau = &ralston2_tableau,
    .flags = TS_KEEPS_START, /* a chained tableau (tstep/butcher.h) */
    .alloc = ralston2_alloc,
    .step = ts_butcher_step,
    .free = ts_butcher_free,
    .reset = ts_butcher_reset,
};

/* Dormand-Prince 5(4), explicit Runge-Kutta of order 5 with an embedded
 * fourth-order error estimate, first same as last (FSAL).
 *   k_i = F(t + c_i h, Y_n + h sum_{j<i} a_ij k_j),  i = 1..7
 *   Y_{n+1} = Y_n + h sum_i b_i k_i      (b = a's last row: k_7 = F(t + h, Y_{n+1}))
 *   error estimate  Y_{n+1} - Yhat = h sum_i (b_i - bhat_i) k_i
 * Seven stages, six force evaluations per step after the first (k_7 is the
 * next step's k_1).  One-step factor
 *   R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24 + z^5/120 + z^6/600,
 * on x' = -k x stable for hk <= 3.307.  At a fixed step (sweep) it is a
 * plain order-5 method; `run --rtol/--atol` adapts the step with the
 * embedded estimate and a PI controller (src/analysis/run.c).
 * Dormand & Prince, J. Comput. Appl. Math. 6 (1980); Hairer, Norsett &
 * Wanner, Solving ODEs I, II.5, Table 5.2 (the coefficients) and II.4 (the
 * step-size control). */
#include "tstep/butcher.h"

static const double a[49] = {
    0, 0, 0, 0, 0, 0, 0,
    1.0 / 5, 0, 0, 0, 0, 0, 0,
    3.0 / 40, 9.0 / 40, 0, 0, 0, 0, 0,
    44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0, 0,
    19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0, 0,
    9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0, 0,
    35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0,
};
static const double b[7] = {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784,
                            11.0 / 84, 0};
static const double bhat[7] = {5179.0 / 57600,    0,          7571.0 / 16695, 393.0 / 640,
                               -92097.0 / 339200, 187.0 / 2100, 1.0 / 40};
static const double c[7] = {0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1};
static const ts_butcher dopri5_tableau = {.stages = 7, .a = a, .b = b, .c = c, .bhat = bhat,
                                          .fsal = 1};

static int dopri5_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_butcher_alloc(&dopri5_tableau, sys, scratch);
}

const ts_stepper_type ts_dopri5 = {
    .name = "dopri5",
    .summary = "Dormand-Prince 5(4), FSAL, 6 evaluations per step; adaptive with run --rtol",
    .order = 5,
    .flags = TS_ADAPTIVE,
    .tableau = &dopri5_tableau,
    .alloc = dopri5_alloc,
    .step = ts_butcher_step,
    .free = ts_butcher_free,
    .reset = ts_butcher_reset,
    .error = ts_butcher_error,
};

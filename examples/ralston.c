/* Ralston's method, an explicit Runge-Kutta method of order 2, as a tstep
 * plugin (docs/students.md walks through it).
 *   k1 = F(t, Y)
 *   k2 = F(t + 2h/3, Y + 2h/3 k1)
 *   Y_{n+1} = Y_n + h (1/4 k1 + 3/4 k2)
 * Order 2 needs b1 + b2 = 1 and b2 c2 = 1/2; Ralston's choice c2 = 2/3
 * minimizes a bound on the third-order error term.  One-step factor on
 * x' = -k x: 1 - z + z^2/2 (z = hk), as every two-stage order-2 method.
 * A. Ralston, Runge-Kutta methods with minimum error bounds, Math. Comp. 16
 * (1962) 431-437; Hairer, Norsett & Wanner, Solving ODEs I, II.1.
 * ANSWER-FILE(ralston2): the method of the built-in ralston2, and of any
 * two-stage order-2 method up to its coefficients, so tools/assignment.sh
 * leaves this file out of a hand-out that assigns one.
 *
 * Build and use (PKG_CONFIG_PATH pointing at an installed tstep):
 *   cc -shared -fPIC $(pkg-config --cflags tstep) ralston.c -o ralston.so
 *   tstep --plugin ./ralston.so sweep --system oscillator --stepper ralston,midpoint \
 *         --dt-min 0.01 --dt-max 0.2 --t-end 2 */
#include <stdlib.h>
#include <tstep/tstep.h>

static const double c2 = 2.0 / 3.0;             /* the second stage's time */
static const double b1 = 1.0 / 4.0, b2 = 3.0 / 4.0; /* the weights */

/* Scratch: Y, the second stage's argument and the two slopes, sized once. */
static int ralston_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_scratch_vectors(sys, 4, scratch);
}

static int ralston_step(void *scratch, ts_system *sys, double t, double h,
                        ts_step_stats *stats)
{
    size_t m = ts_system_ydim(sys);
    double *y = scratch, *ys = y + m, *k1 = ys + m, *k2 = k1 + m;
    int s;
    (void)stats;
    ts_system_get_y(sys, y);
    if ((s = ts_system_deriv(sys, t, y, k1)))
        return s; /* the framework restores the state */
    ts_vec_copy(m, y, ys);
    ts_vec_axpy(m, c2 * h, k1, ys);
    if ((s = ts_system_deriv(sys, t + c2 * h, ys, k2)))
        return s;
    ts_vec_axpy(m, b1 * h, k1, y);
    ts_vec_axpy(m, b2 * h, k2, y);
    ts_system_set_y(sys, y);
    return TS_OK;
}

static const ts_stepper_type ralston = {
    .name = "ralston",
    .summary = "Ralston's RK2: slopes at t and t + 2h/3, weights 1/4 and 3/4",
    .order = 2,
    .alloc = ralston_alloc,
    .step = ralston_step,
    .free = free,
};

/* What the plugin gives tstep: its steppers (NULL-terminated) and the
 * interface version it was built for. */
const ts_stepper_type *const tstep_plugin_steppers[] = {&ralston, NULL};
TSTEP_PLUGIN();

/* The stepper contract, table-driven over every registered stepper
 * (tcase_add_loop_test), so a new stepper is tested without editing this
 * file.  Exact oracles: one-step amplification factors on the (complex)
 * test equation, the local order of the factor, observed global orders,
 * the forward Euler energy factor, the implicit equation's residual on
 * nonlinear systems, and restore-on-failure. */
#include <complex.h>
#include <stdio.h>
#include <math.h>
#include <string.h>
#include "probe_systems.h"
#include "tests.h"
#include "tstep/run.h"

static int stepper_count(void)
{
    int n = 0;
    while (ts_stepper_at(n))
        n++;
    return n;
}

/* One step of `type` on test1d with parameters k, omega; *x1 gets x1 (x0 = 1).
 * Returns 0 when the stepper refuses the system (TS_ERR_UNSUPPORTED: e.g. a
 * minimization stepper on the complex test equation, which has no energy);
 * every stepper must accept the real test equation. */
static int one_step(const ts_stepper_type *type, double k, double omega, double h,
                    double complex *x1)
{
    ts_params p;
    char buf[64];
    ts_params_init(&p, ts_test1d.params);
    snprintf(buf, sizeof buf, "%.17g", k);
    ck_assert_int_eq(ts_params_set(&p, "k", buf), TS_OK);
    snprintf(buf, sizeof buf, "%.17g", omega);
    ck_assert_int_eq(ts_params_set(&p, "omega", buf), TS_OK);
    ts_system *sys;
    ts_stepper *st;
    ck_assert_int_eq(ts_system_new(&ts_test1d, &p, &sys), TS_OK);
    int s = ts_stepper_new(type, sys, NULL, &st);
    if (s == TS_ERR_UNSUPPORTED && omega != 0.0) {
        ts_system_free(sys);
        return 0;
    }
    ck_assert_int_eq(s, TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, h), TS_OK);
    *x1 = sys->x[0] + (sys->n == 2 ? I * sys->x[1] : 0.0);
    ts_stepper_free(st);
    ts_system_free(sys);
    return 1;
}

/* The closed-form stability function R(z) of the built-in steppers. */
static int known_factor(const char *name, double complex z, double complex *r)
{
    if (strcmp(name, "forward-euler") == 0)
        *r = 1.0 + z;
    else if (strcmp(name, "midpoint") == 0 || strcmp(name, "trapezoid") == 0)
        *r = 1.0 + z + z * z / 2.0;
    else if (strcmp(name, "rk4") == 0)
        *r = 1.0 + z + z * z / 2.0 + z * z * z / 6.0 + z * z * z * z / 24.0;
    else if (strcmp(name, "backward-euler") == 0 || strcmp(name, "backward-euler-linear") == 0 ||
             strcmp(name, "backward-euler-opt") == 0)
        *r = 1.0 / (1.0 - z);
    else
        return 0;
    return 1;
}

START_TEST(builtin_factors_are_known)
{
    double complex r;
    const char *names[] = {"forward-euler", "midpoint", "trapezoid", "rk4", "backward-euler",
                           "backward-euler-linear"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        tests_need(names[i]); /* registered (a hand-out may leave it out) */
        ck_assert(known_factor(names[i], 0.0, &r));
    }
}
END_TEST

/* x1/x0 equals R(z) to 1e-12 relative, on the real and the complex test
 * equation, z = h (-k + i omega), including z beyond the stability limit. */
START_TEST(amplification_factor_exact)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    static const struct { double k, omega, h; } cases[] = {
        {1.0, 0.0, 0.1}, {1.0, 0.0, 1.5}, {10.0, 0.0, 0.25}, {2.0, 0.0, 3.0},
        {1.0, 2.0, 0.3}, {0.5, 4.0, 0.5}, {3.0, -1.0, 0.7},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        double complex z = cases[c].h * (-cases[c].k + I * cases[c].omega), r;
        if (!known_factor(type->name, z, &r))
            return; /* a stepper without a closed form: covered by the local-order test */
        double complex x1;
        if (!one_step(type, cases[c].k, cases[c].omega, cases[c].h, &x1))
            continue;
        ck_assert_msg(cabs(x1 - r) <= 1e-12 * cabs(r), "%s: z = %g%+gi: got %.17g%+.17gi, want %.17g%+.17gi",
                      type->name, creal(z), cimag(z), creal(x1), cimag(x1), creal(r), cimag(r));
    }
}
END_TEST

/* For any stepper of order p, |R(z) - e^z| = C |z|^(p+1) + ...: halving z
 * divides the one-step error by 2^(p+1). */
START_TEST(local_order_matches_nominal)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    if (type->flags & TS_MULTISTEP)
        return; /* one step is its lower-order starting step (tests/check_methods.c) */
    double omega[] = {0.0, 1.0};
    for (int c = 0; c < 2; c++) {
        double h1 = type->order >= 4 ? 0.08 : 0.02, h2 = h1 / 2.0;
        double complex x1, x2;
        if (!one_step(type, 1.0, omega[c], h1, &x1) || !one_step(type, 1.0, omega[c], h2, &x2))
            continue;
        double complex e1 = x1 - cexp(h1 * (-1.0 + I * omega[c]));
        double complex e2 = x2 - cexp(h2 * (-1.0 + I * omega[c]));
        double local = log2(cabs(e1) / cabs(e2)) - 1.0;
        ck_assert_msg(fabs(local - type->order) < 0.15, "%s: local order %.3f, nominal %d",
                      type->name, local, type->order);
    }
}
END_TEST

static void check_observed_order(const ts_stepper_type *type, const ts_system_type *stype)
{
    ts_sweep_point pts[7];
    /* order 5 and up reach round-off below dt = 0.025 on [0, 1]: a range above it */
    double dt_min = type->order >= 5 ? 0.025 : 1e-3, dt_max = type->order >= 5 ? 0.06 : 1e-1;
    /* Newton's error (newton_tol of the state per step) below the finest step's
     * truncation error, so the order measured is the method's */
    ts_solver_options o = ts_default_solver_options();
    o.newton_tol = 1e-12;
    ts_sweep_request rq = {.stype = stype, .type = type, .opt = &o, .dt_min = dt_min,
                           .dt_max = dt_max, .levels = 7};
    ck_assert_int_eq(ts_sweep(&rq, 1.0, pts), TS_OK);
    int used;
    double p = ts_observed_order(pts, 7, &used);
    ck_assert_int_ge(used, 3);
    ck_assert_msg(fabs(p - type->order) <= 0.1, "%s on %s: observed order %.3f, nominal %d",
                  type->name, stype->name, p, type->order);
    for (int i = 0; i < 7; i++) { /* every run ends exactly at t_end */
        ck_assert_int_eq(pts[i].status, TS_OK);
        ck_assert_double_eq_tol(pts[i].dt * (double)pts[i].steps, 1.0, 1e-14);
    }
}

START_TEST(observed_order_test1d) { check_observed_order(ts_stepper_at(_i), &ts_test1d); }
END_TEST

START_TEST(observed_order_oscillator)
{
    check_observed_order(ts_stepper_at(_i), &ts_oscillator);
}
END_TEST

/* Undamped oscillator, forward Euler: E_{n+1} = (1 + (h w)^2) E_n exactly. */
START_TEST(forward_euler_energy_factor)
{
    ts_params p;
    ts_params_init(&p, ts_oscillator.params);
    ts_params_set(&p, "k", "4");
    ts_params_set(&p, "m", "1");
    ts_params_set(&p, "v0", "0.5");
    ts_system *sys;
    ts_stepper *st;
    ck_assert_int_eq(ts_system_new(&ts_oscillator, &p, &sys), TS_OK);
    ck_assert_int_eq(ts_stepper_new(&ts_forward_euler, sys, NULL, &st), TS_OK);
    double h = 0.05, w2 = 4.0, ke, pe;
    ts_system_energy(sys, 0, &ke, &pe);
    double e0 = ke + pe;
    for (int n = 1; n <= 40; n++) {
        ck_assert_int_eq(ts_stepper_step(st, sys, (n - 1) * h, h), TS_OK);
        ts_system_energy(sys, n * h, &ke, &pe);
        double want = e0 * pow(1.0 + h * h * w2, n);
        ck_assert_double_eq_tol(ke + pe, want, 1e-12 * want);
    }
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* A step whose k-th force evaluation fails returns that failure and leaves
 * the state bit-for-bit as it was, for every k the step uses. */
START_TEST(failed_step_restores_state)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    probe_pendulum *p = probe_pendulum_new(3, 2.0, 0.1, 1.5, 0.3);
    ts_system *sys = &p->base;
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, 0.1), TS_OK);
    long evals = st->last.force_evals;
    ck_assert_int_ge(evals, 1);
    double y[6], y2[6];
    for (long k = 1; k <= evals; k++) {
        ts_system_get_y(sys, y);
        p->calls = 0, p->fail_at = k;
        ck_assert_int_eq(ts_stepper_step(st, sys, 0.1, 0.1), TS_ERR_INPUT);
        ts_system_get_y(sys, y2);
        ck_assert_msg(memcmp(y, y2, sizeof y) == 0, "%s: state changed by a step failing at force call %ld",
                      type->name, k);
        p->fail_at = 0;
    }
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* Pinned degrees of freedom never move, even with a nonzero velocity. */
START_TEST(pinned_dofs_never_move)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    probe_pendulum *p = probe_pendulum_new(3, 2.0, 0.1, 1.0, 0.5);
    ts_system *sys = &p->base;
    ck_assert_int_eq(ts_system_alloc_pins(sys), TS_OK);
    sys->pinned[1] = 1;
    double x1 = sys->x[1], x0 = sys->x[0];
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    for (int k = 0; k < 10; k++)
        ck_assert_int_eq(ts_stepper_step(st, sys, k * 0.1, 0.1), TS_OK);
    ck_assert_msg(sys->x[1] == x1, "%s moved a pinned DOF: %.17g -> %.17g", type->name, x1,
                  sys->x[1]);
    ck_assert(sys->x[0] != x0);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* An implicit stepper refuses a system without Jacobian products; an
 * explicit one runs it. */
START_TEST(jacobian_requirement)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    ts_system *sys = probe_nojacobian_new();
    ts_stepper *st = NULL;
    int s = ts_stepper_new(type, sys, NULL, &st);
    if (type->flags & TS_NEEDS_JACOBIAN) {
        ck_assert_int_eq(s, TS_ERR_UNSUPPORTED);
        ck_assert_ptr_null(st);
        ck_assert_ptr_nonnull(strstr(ts_error_detail(), "Jacobian"));
    } else {
        ck_assert_int_eq(s, TS_OK);
        ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, 0.1), TS_OK);
    }
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* Force evaluations per step are counted by the framework. */
START_TEST(force_evaluations_counted)
{
    static const struct { const char *name; long evals; } table[] = {
        {"forward-euler", 1}, {"midpoint", 2}, {"trapezoid", 2}, {"rk4", 4}};
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        ts_system *sys;
        ts_stepper *st;
        ck_assert_int_eq(ts_system_new(&ts_oscillator, NULL, &sys), TS_OK);
        ck_assert_int_eq(ts_stepper_new(tests_stepper(table[i].name), sys, NULL, &st), TS_OK);
        for (int k = 0; k < 3; k++)
            ck_assert_int_eq(ts_stepper_step(st, sys, 0.1 * k, 0.1), TS_OK);
        ck_assert_int_eq(st->last.force_evals, table[i].evals);
        ck_assert_int_eq(st->total.force_evals, 3 * table[i].evals);
        ck_assert_int_eq(st->total.accepted, 3);
        ts_stepper_free(st);
        ts_system_free(sys);
    }
}
END_TEST

/* Backward Euler on x' = -x^3 solves x1 + h x1^3 = x0 to Newton tolerance;
 * capped at one Newton iteration it reports TS_ERR_NEWTON and keeps x0. */
START_TEST(backward_euler_nonlinear_order1)
{
    ts_system *sys = probe_cubic_new(1.0);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler"), sys, NULL, &st), TS_OK);
    double h = 0.5;
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, h), TS_OK);
    double x1 = sys->x[0];
    ck_assert_double_eq_tol(x1 + h * x1 * x1 * x1, 1.0, 1e-10);
    ck_assert_int_ge(st->last.newton_iters, 3);
    ts_stepper_free(st);

    ts_solver_options o = ts_default_solver_options();
    o.newton_max = 1;
    sys->x[0] = 1.0;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler"), sys, &o, &st), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, h), TS_ERR_NEWTON);
    ck_assert(sys->x[0] == 1.0);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* Order 2, nonlinear damped pendulums: backward Euler satisfies
 * x1 = x0 + h v1 and m v1 = m v0 + h f(x1, v1); the linear variant is one
 * Baraff-Witkin solve: (m + h c + h^2 k cos x0) dv = h (f0 - h k cos(x0) v0). */
START_TEST(backward_euler_nonlinear_order2)
{
    double h = 0.2, k = 3.0, c = 0.4, m = 1.5;
    probe_pendulum *p = probe_pendulum_new(4, k, c, m, 0.8);
    ts_system *sys = &p->base;
    double x0[4], v0[4], f[4];
    memcpy(x0, sys->x, sizeof x0);
    memcpy(v0, sys->v, sizeof v0);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler"), sys, NULL, &st), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, h), TS_OK);
    ts_system_forces(sys, h, sys->x, sys->v, f);
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq_tol(sys->x[i], x0[i] + h * sys->v[i], 1e-14);
        ck_assert_double_eq_tol(m * sys->v[i], m * v0[i] + h * f[i], 1e-9);
    }
    ts_stepper_free(st);

    memcpy(sys->x, x0, sizeof x0);
    memcpy(sys->v, v0, sizeof v0);
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler-linear"), sys, NULL, &st), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, h), TS_OK);
    ck_assert_int_eq(st->last.newton_iters, 1);
    for (int i = 0; i < 4; i++) {
        double kc = k * cos(x0[i]), f0 = -k * sin(x0[i]) - c * v0[i];
        double dv = h * (f0 - h * kc * v0[i]) / (m + h * c + h * h * kc);
        ck_assert_double_eq_tol(sys->v[i], v0[i] + dv, 1e-12);
        ck_assert_double_eq_tol(sys->x[i], x0[i] + h * (v0[i] + dv), 1e-12);
    }
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* A run that explodes stops at the step that exploded, with the state of
 * the step before: forward Euler on x' = -1000 x, h = 0.1 multiplies by -99
 * per step and passes 1e8 at step 5. */
START_TEST(run_reports_divergence)
{
    ts_params p;
    ts_params_init(&p, ts_test1d.params);
    ts_params_set(&p, "k", "1000");
    ts_system *sys;
    ts_stepper *st;
    ck_assert_int_eq(ts_system_new(&ts_test1d, &p, &sys), TS_OK);
    ck_assert_int_eq(ts_stepper_new(&ts_forward_euler, sys, NULL, &st), TS_OK);
    ts_run_options o = ts_default_run_options();
    o.dt = 0.1;
    o.steps = 20;
    ts_run_result res;
    ck_assert_int_eq(ts_run(sys, st, &o, NULL, NULL, &res), TS_ERR_DIVERGED);
    ck_assert_int_eq(res.failed_step, 5);
    ck_assert_int_eq(res.steps_done, 4);
    ck_assert_double_eq_tol(res.failed_time, 0.4, 1e-15);
    ck_assert_double_eq(sys->x[0], pow(-99.0, 4));
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* A stepper stopped inside its third step: forward Euler with 2 force
 * evaluations and 5 linear iterations a step, whose third step works (4
 * more evaluations, 9 iterations) and is then stopped from outside. */
static int stop_calls;
static int stopped_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    (void)scratch;
    double f[2];
    ts_system_forces(sys, t, sys->x, NULL, f);
    ts_system_forces(sys, t, sys->x, NULL, f);
    stats->linear_iters = 5;
    if (++stop_calls == 3) {
        for (int i = 0; i < 4; i++)
            ts_system_forces(sys, t, sys->x, NULL, f);
        stats->linear_iters = 9;
        sys->x[0] = 1e3; /* half done */
        ts_stop_signal = 15;
        return ts_stop_check("probe");
    }
    sys->x[0] += h * f[0] / sys->mass[0];
    return TS_OK;
}
static int stopped_alloc(const ts_system *sys, const ts_solver_options *o, void **scratch)
{
    (void)sys, (void)o;
    *scratch = NULL;
    return TS_OK;
}
static void stopped_free(void *scratch) { (void)scratch; }
static const ts_stepper_type stopped_type = {.name = "probe-stopped", .order = 1,
                                             .alloc = stopped_alloc, .step = stopped_step,
                                             .free = stopped_free};

typedef struct {
    long k[4];
    ts_step_stats last[4], total[4];
    double x[4];
    int n;
} stop_rows;
static int stop_observe(void *ctx, ts_system *sys, const ts_stepper *st, long k, double t)
{
    (void)t;
    stop_rows *r = ctx;
    ck_assert_int_lt(r->n, 4);
    r->k[r->n] = k, r->last[r->n] = st->last, r->total[r->n] = st->total;
    r->x[r->n++] = sys->x[0];
    return TS_OK;
}

/* A run stopped inside step 3 with --every 5: its outputs end at step 2,
 * whose row carries step 2's statistics and the totals after it (2 steps,
 * 4 force evaluations, 10 linear iterations, nothing rejected), not the
 * stopped step's; the stepper's totals after the run are those too. */
START_TEST(run_stopped_inside_a_step_keeps_the_last_statistics)
{
    ts_system *sys;
    ts_stepper *st;
    ck_assert_int_eq(ts_system_new(&ts_test1d, NULL, &sys), TS_OK);
    ck_assert_int_eq(ts_stepper_new(&stopped_type, sys, NULL, &st), TS_OK);
    ts_run_options o = ts_default_run_options();
    o.dt = 0.1;
    o.steps = 10;
    o.every = 5;
    ts_run_result res;
    stop_rows rows = {0};
    stop_calls = 0;
    int s = ts_run(sys, st, &o, stop_observe, &rows, &res);
    ts_stop_signal = 0;
    ck_assert_int_eq(s, TS_ERR_INTERRUPTED);
    ck_assert_int_eq(rows.n, 2); /* t = 0 and step 2 */
    ck_assert_int_eq(rows.k[1], 2);
    ck_assert_double_eq(rows.x[1], 0.81); /* x' = -x, two Euler steps of 0.1 */
    ck_assert_int_eq(rows.last[1].force_evals, 2);
    ck_assert_int_eq(rows.last[1].linear_iters, 5);
    ck_assert_int_eq(rows.last[1].accepted, 1);
    ck_assert_int_eq(rows.last[1].rejected, 0);
    ck_assert_int_eq(rows.total[1].force_evals, 4);
    ck_assert_int_eq(rows.total[1].linear_iters, 10);
    ck_assert_int_eq(rows.total[1].accepted, 2);
    ck_assert_int_eq(rows.total[1].rejected, 0);
    ck_assert_int_eq(st->total.accepted, 2);
    ck_assert_int_eq(st->total.rejected, 0);
    ck_assert_double_eq(sys->x[0], 0.81);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

Suite *steppers_suite(void)
{
    Suite *s = suite_create("steppers");
    int n = stepper_count();
    TCase *tc = tcase_create("contract");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, builtin_factors_are_known);
    tcase_add_loop_test(tc, amplification_factor_exact, 0, n);
    tcase_add_loop_test(tc, local_order_matches_nominal, 0, n);
    tcase_add_loop_test(tc, observed_order_test1d, 0, n);
    tcase_add_loop_test(tc, observed_order_oscillator, 0, n);
    tcase_add_loop_test(tc, failed_step_restores_state, 0, n);
    tcase_add_loop_test(tc, pinned_dofs_never_move, 0, n);
    tcase_add_loop_test(tc, jacobian_requirement, 0, n);
    suite_add_tcase(s, tc);
    TCase *tx = tcase_create("exact");
    tcase_add_test(tx, forward_euler_energy_factor);
    tcase_add_test(tx, force_evaluations_counted);
    tcase_add_test(tx, backward_euler_nonlinear_order1);
    tcase_add_test(tx, backward_euler_nonlinear_order2);
    tcase_add_test(tx, run_reports_divergence);
    tcase_add_test(tx, run_stopped_inside_a_step_keeps_the_last_statistics);
    suite_add_tcase(s, tx);
    return s;
}

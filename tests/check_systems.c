/* The system contract, table-driven over every registered system: forces
 * are evaluated at the state handed in, never the stored one; an exact
 * solution starts at the initial state and satisfies the ODE (central
 * differences in time); plus the oscillator's damping regimes and the
 * parameter table's checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "tstep/linalg.h"
#include "tstep/stepper.h"

static int system_count(void)
{
    int n = 0;
    while (ts_system_at(n))
        n++;
    return n;
}

START_TEST(forces_use_the_state_handed_in)
{
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(ts_system_at(_i), NULL, &sys), TS_OK);
    size_t n = sys->n;
    double *x = malloc(n * sizeof *x), *v = malloc(n * sizeof *v);
    double *f1 = malloc(n * sizeof *f1), *f2 = malloc(n * sizeof *f2);
    for (size_t i = 0; i < n; i++) {
        x[i] = sys->x[i] + 0.01 * sin((double)i + 1.0);
        v[i] = 0.05 * cos((double)i);
    }
    const double *vp = sys->order == 2 ? v : NULL;
    ck_assert_int_eq(ts_system_forces(sys, 0.3, x, vp, f1), TS_OK);
    for (size_t i = 0; i < n; i++) { /* scramble the stored state */
        sys->x[i] += 1.0;
        if (sys->v)
            sys->v[i] -= 2.0;
    }
    ck_assert_int_eq(ts_system_forces(sys, 0.3, x, vp, f2), TS_OK);
    ck_assert_int_eq(memcmp(f1, f2, n * sizeof *f1), 0);
    ck_assert(ts_vec_all_finite(n, f1));
    free(x), free(v), free(f1), free(f2);
    ts_system_free(sys);
}
END_TEST

/* Y(0) equals the initial state; (Y(t+e) - Y(t-e)) / 2e = F(t, Y(t)). */
static void check_exact(const ts_system_type *type, const ts_params *p)
{
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(type, p, &sys), TS_OK);
    if (!sys->ops->exact) {
        ts_system_free(sys);
        return;
    }
    size_t m = ts_system_ydim(sys);
    double *y = malloc(5 * m * sizeof *y), *y0 = y + m, *yp = y0 + m, *ym = yp + m, *dy = ym + m;
    ts_system_get_y(sys, y0);
    ck_assert_int_eq(ts_system_exact_y(sys, 0.0, y), TS_OK);
    ck_assert_double_le(ts_vec_dist_inf(m, y, y0), 1e-14 * fmax(1.0, ts_vec_norm_inf(m, y0)));
    for (double t = 0.3; t < 2.0; t += 0.7) {
        double e = 1e-5;
        ts_system_exact_y(sys, t, y);
        ts_system_exact_y(sys, t + e, yp);
        ts_system_exact_y(sys, t - e, ym);
        ck_assert_int_eq(ts_system_deriv(sys, t, y, dy), TS_OK);
        for (size_t i = 0; i < m; i++) {
            double fd = (yp[i] - ym[i]) / (2 * e);
            ck_assert_msg(fabs(fd - dy[i]) <= 1e-7 * fmax(1.0, fabs(dy[i])),
                          "%s: dY[%zu] at t = %g: exact gives %.12g, F gives %.12g", type->name,
                          i, t, fd, dy[i]);
        }
    }
    free(y);
    ts_system_free(sys);
}

START_TEST(exact_solution_solves_the_ode) { check_exact(ts_system_at(_i), NULL); }
END_TEST

START_TEST(oscillator_regimes)
{
    /* underdamped, critical (c = 2 sqrt(k m)), overdamped, k = 0, moving start */
    static const char *cases[][5] = {
        {"1", "1", "0.5", "1", "0"},  {"4", "1", "4", "1", "-2"}, {"1", "2", "7", "0.5", "1"},
        {"0", "1", "0", "1", "0.3"}, {"9", "0.5", "0", "-1", "3"},
    };
    static const char *names[] = {"k", "m", "c", "x0", "v0"};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ts_params p;
        ts_params_init(&p, ts_oscillator.params);
        for (int j = 0; j < 5; j++)
            ck_assert_int_eq(ts_params_set(&p, names[j], cases[c][j]), TS_OK);
        check_exact(&ts_oscillator, &p);
    }
}
END_TEST

START_TEST(complex_test_equation)
{
    ts_params p;
    ts_params_init(&p, ts_test1d.params);
    ts_params_set(&p, "k", "0.5");
    ts_params_set(&p, "omega", "3");
    check_exact(&ts_test1d, &p);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(&ts_test1d, &p, &sys), TS_OK);
    ck_assert_int_eq(sys->n, 2);
    ck_assert_int_eq(sys->jacobian_symmetric, 0);
    double y[2];
    ts_system_exact_y(sys, 1.7, y);
    ck_assert_double_eq_tol(hypot(y[0], y[1]), exp(-0.5 * 1.7), 1e-15);
    ts_system_free(sys);
}
END_TEST

START_TEST(undamped_oscillator_exact_energy)
{
    ts_params p;
    ts_params_init(&p, ts_oscillator.params);
    ts_params_set(&p, "k", "3");
    ts_params_set(&p, "m", "2");
    ts_params_set(&p, "v0", "1");
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(&ts_oscillator, &p, &sys), TS_OK);
    double ke, pe;
    ts_system_energy(sys, 0, &ke, &pe);
    double e0 = ke + pe; /* 1/2 2 1 + 1/2 3 1 = 2.5 */
    ck_assert_double_eq_tol(e0, 2.5, 1e-15);
    for (double t = 0.5; t < 5; t += 1.1) {
        double y[2];
        ts_system_exact_y(sys, t, y);
        ck_assert_double_eq_tol(0.5 * 2 * y[1] * y[1] + 0.5 * 3 * y[0] * y[0], e0, 1e-13);
    }
    ts_system_free(sys);
}
END_TEST

START_TEST(parameters_checked)
{
    ts_params p;
    ts_params_init(&p, ts_oscillator.params);
    ck_assert_int_eq(ts_params_set(&p, "stiffness", "1"), TS_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(ts_error_detail(), "'stiffness'"));
    ck_assert_ptr_nonnull(strstr(ts_error_detail(), "k, m, c, x0, v0"));
    ck_assert_int_eq(ts_params_set(&p, "k", "1e400"), TS_ERR_INPUT);
    ck_assert_int_eq(ts_params_set(&p, "k", "2x"), TS_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(ts_error_detail(), "'2x'"));
    ck_assert_int_eq(ts_params_set(&p, "k", "nan"), TS_ERR_INPUT);
    ck_assert_int_eq(ts_params_set_pair(&p, "k2"), TS_ERR_INPUT);
    ck_assert_int_eq(ts_params_set_pair(&p, "m=0"), TS_OK);
    ck_assert_double_eq(ts_params_real(&p, "m"), 0.0);
    ts_system *sys = (ts_system *)1;
    ck_assert_int_eq(ts_system_new(&ts_oscillator, &p, &sys), TS_ERR_INPUT);
    ck_assert_ptr_null(sys);
    ck_assert_ptr_nonnull(strstr(ts_error_detail(), "'m'"));
}
END_TEST

Suite *systems_suite(void)
{
    Suite *s = suite_create("systems");
    TCase *tc = tcase_create("contract");
    int n = system_count();
    tcase_add_loop_test(tc, forces_use_the_state_handed_in, 0, n);
    tcase_add_loop_test(tc, exact_solution_solves_the_ode, 0, n);
    tcase_add_test(tc, oscillator_regimes);
    tcase_add_test(tc, complex_test_equation);
    tcase_add_test(tc, undamped_oscillator_exact_energy);
    tcase_add_test(tc, parameters_checked);
    suite_add_tcase(s, tc);
    return s;
}

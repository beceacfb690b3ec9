/* The course's second set of methods against exact oracles: one-step
 * factors of the implicit midpoint and Crank-Nicolson rules, the stability
 * polynomial of every Butcher tableau computed from the table itself,
 * BDF2's characteristic roots, the 2x2 one-step matrices of symplectic
 * Euler and velocity Verlet on the oscillator, energy conservation
 * (exact for the implicit midpoint rule on a linear system, bounded for
 * the symplectic steppers over 10^5 steps, drifting for rk4), observed
 * orders, the reset hook (FSAL caches, multistep history) and dopri5's
 * error control. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "cli_run.h"
#include "tests.h"
#include "tstep/butcher.h"
#include "tstep/run.h"

static ts_system *make(const ts_system_type *type, const char *const *pairs)
{
    ts_params p;
    ts_params_init(&p, type->params);
    for (int i = 0; pairs && pairs[i]; i++)
        ck_assert_int_eq(ts_params_set_pair(&p, pairs[i]), TS_OK);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(type, &p, &sys), TS_OK);
    return sys;
}

/* test1d with x' = lambda x, lambda = -k + i omega */
static ts_system *test_equation(double k, double omega)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "k=%.17g", k);
    snprintf(b, sizeof b, "omega=%.17g", omega);
    const char *const pairs[] = {a, b, NULL};
    return make(&ts_test1d, pairs);
}

static double complex state_of(const ts_system *sys)
{
    return sys->x[0] + (sys->n == 2 ? I * sys->x[1] : 0.0);
}

/* x1 / x0 after one step of h on x' = lambda x from x0 = 1 */
static double complex one_step(const ts_stepper_type *type, double k, double omega, double h)
{
    ts_system *sys = test_equation(k, omega);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, h), TS_OK);
    double complex x1 = state_of(sys);
    ts_stepper_free(st);
    ts_system_free(sys);
    return x1;
}

static const struct {
    double k, omega, h;
} zcases[] = {
    {1.0, 0.0, 0.1}, {1.0, 0.0, 1.5}, {10.0, 0.0, 0.25}, {2.0, 0.0, 3.0},  {50.0, 0.0, 1.0},
    {1.0, 2.0, 0.3}, {0.5, 4.0, 0.5}, {3.0, -1.0, 0.7},  {0.0, 1.0, 0.4},  {1e4, 0.0, 1.0},
};
#define NZ (sizeof zcases / sizeof *zcases)

static void check_factor(const ts_stepper_type *type, double complex (*R)(double complex))
{
    for (size_t c = 0; c < NZ; c++) {
        double complex z = zcases[c].h * (-zcases[c].k + I * zcases[c].omega), r = R(z);
        double complex x1 = one_step(type, zcases[c].k, zcases[c].omega, zcases[c].h);
        ck_assert_msg(cabs(x1 - r) <= 1e-12 * fmax(1.0, cabs(r)),
                      "%s: z = %g%+gi: got %.17g%+.17gi, want %.17g%+.17gi", type->name,
                      creal(z), cimag(z), creal(x1), cimag(x1), creal(r), cimag(r));
    }
}

static double complex r_gauss(double complex z) { return (1.0 + z / 2.0) / (1.0 - z / 2.0); }
static double complex r_euler(double complex z) { return 1.0 + z; }
static double complex r_heun(double complex z) { return 1.0 + z + z * z / 2.0; }
static double complex r_dopri5(double complex z)
{
    double complex s = 1.0, t = 1.0;
    for (int k = 1; k <= 5; k++)
        t *= z / k, s += t;
    return s + t * z / 5.0; /* z^6/600 = (z^5/120) z/5 */
}

/* --- one-step factors ------------------------------------------------------- */

START_TEST(midpoint_and_crank_nicolson_factor)
{
    check_factor(tests_stepper("implicit-midpoint"), r_gauss);
    check_factor(tests_stepper("crank-nicolson"), r_gauss);
    /* not L-stable: a stiff mode flips sign instead of decaying */
    ck_assert_double_lt(creal(one_step(tests_stepper("crank-nicolson"), 1e6, 0.0, 1.0)), -0.999);
    ck_assert_double_lt(fabs(creal(one_step(tests_stepper("backward-euler"), 1e6, 0.0, 1.0))), 1e-5);
}
END_TEST

START_TEST(dopri5_factor) { check_factor(&ts_dopri5, r_dopri5); }
END_TEST

/* First-order systems: symplectic Euler is forward Euler, Verlet the
 * explicit trapezoid rule (documented in their files). */
START_TEST(partitioned_on_first_order_systems)
{
    check_factor(tests_stepper("symplectic-euler"), r_euler);
    check_factor(tests_stepper("verlet"), r_heun);
}
END_TEST

/* R(z) = 1 + sum_{k>=1} z^k b^T A^(k-1) 1 from the tableau, so the test
 * needs nothing but the table; and its first coefficients are 1/k! up to
 * the nominal order (the order conditions of the bushy trees). */
static int polynomial_of(const ts_butcher *tab, double coef[16])
{
    int s = tab->stages;
    double u[16], w[16];
    coef[0] = 1.0;
    for (int i = 0; i < s; i++)
        u[i] = 1.0;
    for (int k = 1; k <= s; k++) {
        double d = 0.0;
        for (int i = 0; i < s; i++)
            d += tab->b[i] * u[i];
        coef[k] = d;
        for (int i = 0; i < s; i++) { /* u = A u */
            w[i] = 0.0;
            for (int j = 0; j < s; j++)
                w[i] += tab->a[i * s + j] * u[j];
        }
        memcpy(u, w, sizeof(double) * (size_t)s);
    }
    return s;
}

START_TEST(tableau_polynomial)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    if (!type->tableau)
        return;
    ck_assert_int_le(type->tableau->stages, 15);
    double coef[16], fact = 1.0;
    int deg = polynomial_of(type->tableau, coef);
    for (int k = 1; k <= type->order; k++) {
        fact *= k;
        ck_assert_msg(fabs(coef[k] - 1.0 / fact) <= 1e-14, "%s: z^%d coefficient %.17g, 1/%d! %.17g",
                      type->name, k, coef[k], k, 1.0 / fact);
    }
    for (size_t c = 0; c < NZ; c++) {
        double complex z = zcases[c].h * (-zcases[c].k + I * zcases[c].omega), r = 0.0;
        for (int k = deg; k >= 0; k--)
            r = r * z + coef[k];
        double complex x1 = one_step(type, zcases[c].k, zcases[c].omega, zcases[c].h);
        ck_assert_msg(cabs(x1 - r) <= 1e-12 * fmax(1.0, cabs(r)), "%s: z = %g%+gi", type->name,
                      creal(z), cimag(z));
    }
}
END_TEST

START_TEST(dopri5_tableau_is_dormand_prince)
{
    double coef[16];
    ck_assert_int_eq(polynomial_of(ts_dopri5.tableau, coef), 7);
    ck_assert_double_eq_tol(coef[6], 1.0 / 600.0, 1e-15);
    ck_assert_double_eq_tol(coef[7], 0.0, 1e-15);
    /* the embedded weights: order 4, not 5 */
    double d4 = 0.0, d5 = 0.0, u[7], w[7];
    const ts_butcher *t = ts_dopri5.tableau;
    for (int i = 0; i < 7; i++)
        u[i] = 1.0;
    for (int k = 1; k <= 5; k++) {
        double d = 0.0;
        for (int i = 0; i < 7; i++)
            d += t->bhat[i] * u[i];
        if (k == 4)
            d4 = d;
        if (k == 5)
            d5 = d;
        for (int i = 0; i < 7; i++) {
            w[i] = 0.0;
            for (int j = 0; j < 7; j++)
                w[i] += t->a[i * 7 + j] * u[j];
        }
        memcpy(u, w, sizeof u);
    }
    ck_assert_double_eq_tol(d4, 1.0 / 24.0, 1e-15);
    ck_assert_double_gt(fabs(d5 - 1.0 / 120.0), 1e-6);
}
END_TEST

/* --- energy ------------------------------------------------------------------ */

static double energy(ts_system *sys)
{
    double ke, pe;
    ck_assert_int_eq(ts_system_energy(sys, 0.0, &ke, &pe), TS_OK);
    return ke + pe;
}

/* Undamped oscillator: |R(i h w)| = 1, so the energy after every step is E0
 * (the implicit midpoint rule keeps quadratic invariants). */
START_TEST(midpoint_and_crank_nicolson_keep_energy)
{
    const ts_stepper_type *types[] = {tests_stepper("implicit-midpoint"), tests_stepper("crank-nicolson")};
    static const char *const pairs[] = {"k=9", "m=2", "x0=0.3", "v0=-1.2", NULL};
    for (int i = 0; i < 2; i++) {
        double hs[] = {0.05, 0.7, 5.0};
        for (int j = 0; j < 3; j++) {
            ts_system *sys = make(&ts_oscillator, pairs);
            ts_stepper *st;
            ck_assert_int_eq(ts_stepper_new(types[i], sys, NULL, &st), TS_OK);
            double e0 = energy(sys);
            for (int n = 0; n < 50; n++) {
                ck_assert_int_eq(ts_stepper_step(st, sys, n * hs[j], hs[j]), TS_OK);
                ck_assert_msg(fabs(energy(sys) / e0 - 1.0) <= 1e-12, "%s h %g step %d: E/E0 - 1 = %g",
                              types[i]->name, hs[j], n, energy(sys) / e0 - 1.0);
            }
            ts_stepper_free(st);
            ts_system_free(sys);
        }
    }
}
END_TEST

/* 10^5 steps of h = 0.1 on the oscillator (w = 1): the symplectic steppers'
 * energy error does not grow (the largest over the last 10^4 steps is no
 * larger than over the first 10^4), and stays small; rk4's drifts: its
 * error grows in proportion to t (|R(ih)|^2 = 1 - h^6/72 + ...). */
static void energy_history(const ts_stepper_type *type, double *first, double *last,
                           double *at1000, double *end)
{
    ts_system *sys = make(&ts_oscillator, NULL);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    double e0 = energy(sys), h = 0.1;
    *first = *last = 0.0;
    long steps = 100000;
    for (long n = 1; n <= steps; n++) {
        ck_assert_int_eq(ts_stepper_step(st, sys, (n - 1) * h, h), TS_OK);
        double d = fabs(energy(sys) - e0) / e0;
        if (n <= 10000)
            *first = fmax(*first, d);
        if (n > steps - 10000)
            *last = fmax(*last, d);
        if (n == 1000)
            *at1000 = d;
        if (n == steps)
            *end = d;
    }
    ts_stepper_free(st);
    ts_system_free(sys);
}

START_TEST(symplectic_energy_bounded_rk4_drifts)
{
    double first, last, a, e;
    energy_history(tests_stepper("symplectic-euler"), &first, &last, &a, &e);
    ck_assert_msg(last <= 1.001 * first && first < 0.06, "symplectic-euler: %g then %g", first,
                  last);
    energy_history(tests_stepper("verlet"), &first, &last, &a, &e);
    ck_assert_msg(last <= 1.001 * first && first < 0.003, "verlet: %g then %g", first, last);
    energy_history(tests_stepper("implicit-midpoint"), &first, &last, &a, &e);
    ck_assert_msg(last < 1e-9, "implicit-midpoint: %g", last);
    energy_history(&ts_rk4, &first, &last, &a, &e);
    double drift = 1.0 - pow(1.0 - 1e-6 / 72.0 + 1e-8 / 576.0, 100000); /* 1 - |R(ih)|^(2N) */
    ck_assert_msg(e >= 50.0 * a && fabs(e / drift - 1.0) < 0.01, "rk4: %g at 1000, %g at 1e5 (%g)",
                  a, e, drift);
}
END_TEST

/* --- 2x2 one-step matrices --------------------------------------------------- */

/* The one-step matrix of `type` on x'' = -w^2 x, columns from the unit states */
static void one_step_matrix(const ts_stepper_type *type, double w2, double h, double m[2][2])
{
    char kbuf[64];
    snprintf(kbuf, sizeof kbuf, "k=%.17g", w2);
    for (int col = 0; col < 2; col++) {
        const char *const pairs[] = {kbuf, col ? "x0=0" : "x0=1", col ? "v0=1" : "v0=0", NULL};
        ts_system *sys = make(&ts_oscillator, pairs);
        ts_stepper *st;
        ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
        ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, h), TS_OK);
        m[0][col] = sys->x[0];
        m[1][col] = sys->v[0];
        ts_stepper_free(st);
        ts_system_free(sys);
    }
}

START_TEST(symplectic_one_step_matrices)
{
    static const double w2s[] = {1.0, 4.0, 100.0}, hs[] = {0.01, 0.1, 0.19};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double w2 = w2s[i], h = hs[j], c = h * h * w2, m[2][2];
            /* symplectic Euler: x1 = (1 - c) x0 + h v0, v1 = -h w^2 x0 + v0 */
            one_step_matrix(tests_stepper("symplectic-euler"), w2, h, m);
            double se[2][2] = {{1.0 - c, h}, {-h * w2, 1.0}};
            /* Verlet: x1 = (1 - c/2) x0 + h v0, v1 = -h w^2 (1 - c/4) x0 + (1 - c/2) v0 */
            double ve[2][2] = {{1.0 - c / 2.0, h}, {-h * w2 * (1.0 - c / 4.0), 1.0 - c / 2.0}};
            for (int k = 0; k < 2; k++) {
                double (*want)[2] = k ? ve : se;
                if (k)
                    one_step_matrix(tests_stepper("verlet"), w2, h, m);
                for (int r = 0; r < 2; r++)
                    for (int s = 0; s < 2; s++)
                        ck_assert_msg(fabs(m[r][s] - want[r][s]) <= 1e-14 * fmax(1.0, fabs(want[r][s])),
                                      "%s w2 %g h %g: m[%d][%d] = %.17g, want %.17g",
                                      k ? "verlet" : "symplectic-euler", w2, h, r, s, m[r][s],
                                      want[r][s]);
                double det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
                ck_assert_double_eq_tol(det, 1.0, 1e-13);
                ck_assert_double_eq_tol(m[0][0] + m[1][1], 2.0 - c, 1e-13);
            }
        }
}
END_TEST

/* --- BDF2 -------------------------------------------------------------------- */

/* On x' = lambda x: the first step is backward Euler, the second solves the
 * recurrence (1 - 2/3 z) x2 = 4/3 x1 - 1/3 x0 exactly, and the ratio of
 * successive steps tends to the dominant characteristic root
 * zeta = (2 +- sqrt(1 + 2z)) / (3 - 2z). */
START_TEST(bdf2_characteristic_roots)
{
    static const struct {
        double k, omega, h;
    } cases[] = {{4.0, 0.0, 0.1}, {1.0, 0.0, 0.3}, {1.0, 1.5, 0.2}, {0.5, -2.0, 0.1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        double h = cases[c].h;
        double complex z = h * (-cases[c].k + I * cases[c].omega);
        double complex sq = csqrt(1.0 + 2.0 * z);
        double complex r1 = (2.0 + sq) / (3.0 - 2.0 * z), r2 = (2.0 - sq) / (3.0 - 2.0 * z);
        double complex dom = cabs(r1) >= cabs(r2) ? r1 : r2;
        double sep = fmin(cabs(r1), cabs(r2)) / cabs(dom);
        ck_assert_double_lt(sep, 0.8);
        ts_system *sys = test_equation(cases[c].k, cases[c].omega);
        ts_stepper *st;
        ck_assert_int_eq(ts_stepper_new(tests_stepper("bdf2"), sys, NULL, &st), TS_OK);
        double complex x0 = state_of(sys), xs[200];
        int steps = (int)ceil(log(1e-13) / log(sep)) + 2;
        ck_assert_int_lt(steps, 200);
        for (int n = 0; n < steps; n++) {
            ck_assert_int_eq(ts_stepper_step(st, sys, n * h, h), TS_OK);
            xs[n] = state_of(sys);
        }
        ck_assert(cabs(xs[0] - x0 / (1.0 - z)) <= 1e-12);
        double complex want2 = (4.0 / 3.0 * xs[0] - 1.0 / 3.0 * x0) / (1.0 - 2.0 / 3.0 * z);
        ck_assert_msg(cabs(xs[1] - want2) <= 1e-12 * cabs(want2), "z = %g%+gi: x2", creal(z),
                      cimag(z));
        for (int n = 2; n < steps; n++) { /* every step solves the recurrence */
            double complex want = (4.0 / 3.0 * xs[n - 1] - 1.0 / 3.0 * xs[n - 2]) /
                                  (1.0 - 2.0 / 3.0 * z);
            ck_assert(cabs(xs[n] - want) <= 1e-12 * cabs(want));
        }
        double complex ratio = xs[steps - 1] / xs[steps - 2];
        ck_assert_msg(cabs(ratio - dom) <= 1e-10, "z = %g%+gi: ratio %.15g%+.15gi, root %.15g%+.15gi",
                      creal(z), cimag(z), creal(ratio), cimag(ratio), creal(dom), cimag(dom));
        ts_stepper_free(st);
        ts_system_free(sys);
    }
}
END_TEST

/* The history is forgotten on reset, on a state changed from outside and
 * on a time that does not continue the last step: the next step is the
 * backward Euler start again.  A failed step keeps no history. */
START_TEST(bdf2_history_reset)
{
    double h = 0.2;
    double complex z = -h;
    ts_system *sys = test_equation(1.0, 0.0);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("bdf2"), sys, NULL, &st), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, h), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, h, h), TS_OK); /* BDF2 */
    double x = sys->x[0];
    ts_stepper_reset(st);
    ck_assert_int_eq(ts_stepper_step(st, sys, 2 * h, h), TS_OK);
    ck_assert_double_eq_tol(sys->x[0], x / (1.0 - creal(z)), 1e-14);
    sys->x[0] = 1.0; /* from outside */
    ck_assert_int_eq(ts_stepper_step(st, sys, 3 * h, h), TS_OK);
    ck_assert_double_eq_tol(sys->x[0], 1.0 / (1.0 - creal(z)), 1e-14);
    x = sys->x[0];
    ck_assert_int_eq(ts_stepper_step(st, sys, 7.0, h), TS_OK); /* not 4h */
    ck_assert_double_eq_tol(sys->x[0], x / (1.0 - creal(z)), 1e-14);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* A run from the same state gives the same trajectory bit for bit: ts_run
 * resets history and caches at its start. */
START_TEST(runs_repeat_exactly)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    static const char *const osc[] = {"c=0.3", "k=5", NULL}, *const cplx[] = {"omega=2", NULL};
    for (int c = 0; c < 2; c++) { /* the damped oscillator, the complex test equation */
        ts_system *sys = c ? make(&ts_test1d, cplx) : make(&ts_oscillator, osc);
        ts_stepper *st;
        ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
        double y0[2], y1[2], y2[2];
        ts_system_get_y(sys, y0);
        ts_run_options o = ts_default_run_options();
        o.dt = 0.05;
        o.steps = 30;
        ck_assert_int_eq(ts_run(sys, st, &o, NULL, NULL, NULL), TS_OK);
        ts_system_get_y(sys, y1);
        long evals = st->total.force_evals;
        ts_system_set_y(sys, y0);
        ck_assert_int_eq(ts_run(sys, st, &o, NULL, NULL, NULL), TS_OK);
        ts_system_get_y(sys, y2);
        ck_assert_msg(memcmp(y1, y2, sizeof y1) == 0, "%s: a repeated run differs (%s)",
                      type->name, c ? "test1d" : "oscillator");
        ck_assert_int_eq(st->total.force_evals, 2 * evals);
        ts_stepper_free(st);
        ts_system_free(sys);
    }
}
END_TEST

/* First same as last: verlet takes one force evaluation per step and dopri5
 * six, after a first step of two and seven; a reset or a state changed from
 * outside costs the first step's count again. */
START_TEST(fsal_evaluations)
{
    const ts_stepper_type *types[] = {tests_stepper("verlet"), &ts_dopri5};
    long first[] = {2, 7}, next[] = {1, 6};
    for (int i = 0; i < 2; i++) {
        ts_system *sys = make(&ts_oscillator, NULL);
        ts_stepper *st;
        ck_assert_int_eq(ts_stepper_new(types[i], sys, NULL, &st), TS_OK);
        double h = 0.1, t = 0.0;
        ck_assert_int_eq(ts_stepper_step(st, sys, t, h), TS_OK);
        t += h;
        ck_assert_int_eq(st->last.force_evals, first[i]);
        for (int k = 0; k < 5; k++) {
            ck_assert_int_eq(ts_stepper_step(st, sys, t, h), TS_OK);
        t += h;
            ck_assert_int_eq(st->last.force_evals, next[i]);
        }
        ts_stepper_reset(st);
        ck_assert_int_eq(ts_stepper_step(st, sys, t, h), TS_OK);
        t += h;
        ck_assert_int_eq(st->last.force_evals, first[i]);
        sys->v[0] += 0.25;
        ck_assert_int_eq(ts_stepper_step(st, sys, t, h), TS_OK);
        t += h;
        ck_assert_int_eq(st->last.force_evals, first[i]);
        ts_stepper_free(st);
        ts_system_free(sys);
    }
}
END_TEST

/* --- orders ------------------------------------------------------------------ */

START_TEST(observed_orders)
{
    static const struct {
        const char *name;
        int order;
    } want[] = {{"symplectic-euler", 1}, {"verlet", 2}, {"implicit-midpoint", 2},
                {"crank-nicolson", 2},   {"bdf2", 2},   {"dopri5", 5}};
    const ts_system_type *systems[] = {&ts_test1d, &ts_oscillator};
    static const char *const damped[] = {"c=0.4", NULL};
    ts_solver_options o = ts_default_solver_options();
    o.newton_tol = 1e-12;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        for (int s = 0; s < 3; s++) {
            ts_params p;
            const ts_system_type *stype = systems[s ? 1 : 0];
            ts_params_init(&p, stype->params);
            if (s == 2) /* damped: velocity-dependent forces */
                ck_assert_int_eq(ts_params_set_pair(&p, damped[0]), TS_OK);
            ts_sweep_point pts[7];
            double lo = want[i].order >= 5 ? 0.025 : 1e-3, hi = want[i].order >= 5 ? 0.06 : 0.1;
            ts_sweep_request rq = {.stype = stype, .params = &p,
                                   .type = tests_stepper(want[i].name), .opt = &o,
                                   .dt_min = lo, .dt_max = hi, .levels = 7};
            ck_assert_int_eq(ts_sweep(&rq, 1.0, pts), TS_OK);
            int used;
            double q = ts_observed_order(pts, 7, &used);
            ck_assert_int_ge(used, 5);
            ck_assert_msg(fabs(q - want[i].order) <= 0.1, "%s on %s%s: observed %.3f",
                          want[i].name, stype->name, s == 2 ? " (damped)" : "", q);
        }
}
END_TEST

/* --- dopri5's error control --------------------------------------------------- */

typedef struct {
    int rows;
    double worst; /* largest error at the output times */
} landing;

static int observe_landing(void *ctx, ts_system *sys, const ts_stepper *st, long step, double t)
{
    (void)st;
    landing *l = ctx;
    double y[2];
    ck_assert_double_eq(t, 0.5 * (double)step); /* the output time itself */
    ck_assert_int_eq(ts_system_exact_y(sys, t, y), TS_OK);
    l->worst = fmax(l->worst, fmax(fabs(sys->x[0] - y[0]), fabs(sys->v[0] - y[1])));
    l->rows++;
    return TS_OK;
}

/* rtol = atol = 1e-8 on the oscillator to t = 10: error below 1e-6 at every
 * output time, and rk4 with as many steps as dopri5 attempted is further off
 * than dopri5 (so rk4 needs more steps for the same error). */
START_TEST(dopri5_error_control)
{
    ts_system *sys = make(&ts_oscillator, NULL);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(&ts_dopri5, sys, NULL, &st), TS_OK);
    ts_run_options o = ts_default_run_options();
    o.dt = 0.5;
    o.steps = 20;
    o.rtol = o.atol = 1e-8;
    landing l = {0, 0.0};
    ck_assert_int_eq(ts_run(sys, st, &o, observe_landing, &l, NULL), TS_OK);
    ck_assert_int_eq(l.rows, 21);
    ck_assert_msg(l.worst < 1e-6, "dopri5 error %g", l.worst);
    long steps = st->total.accepted + st->total.rejected;
    ck_assert_int_gt(st->total.accepted, 20); /* it did sub-step */
    ts_stepper_free(st);
    ts_system_free(sys);

    sys = make(&ts_oscillator, NULL);
    ck_assert_int_eq(ts_stepper_new(&ts_rk4, sys, NULL, &st), TS_OK);
    o = ts_default_run_options();
    o.dt = 10.0 / (double)steps;
    o.steps = steps;
    ck_assert_int_eq(ts_run(sys, st, &o, NULL, NULL, NULL), TS_OK);
    double y[2];
    ck_assert_int_eq(ts_system_exact_y(sys, 10.0, y), TS_OK);
    double rk4_err = fmax(fabs(sys->x[0] - y[0]), fabs(sys->v[0] - y[1]));
    ck_assert_msg(rk4_err > 10.0 * l.worst, "rk4 with %ld steps: %g, dopri5 %g", steps, rk4_err,
                  l.worst);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* Tighter tolerances give smaller errors; a stepper without an error
 * estimate is refused. */
START_TEST(dopri5_tolerance_proportionality)
{
    double prev = INFINITY;
    for (double tol = 1e-4; tol >= 1e-10; tol *= 1e-2) {
        ts_system *sys = make(&ts_oscillator, NULL);
        ts_stepper *st;
        ck_assert_int_eq(ts_stepper_new(&ts_dopri5, sys, NULL, &st), TS_OK);
        ts_run_options o = ts_default_run_options();
        o.dt = 10.0;
        o.steps = 1;
        o.rtol = o.atol = tol;
        ck_assert_int_eq(ts_run(sys, st, &o, NULL, NULL, NULL), TS_OK);
        double y[2];
        ts_system_exact_y(sys, 10.0, y);
        double err = fmax(fabs(sys->x[0] - y[0]), fabs(sys->v[0] - y[1]));
        ck_assert_msg(err < 100.0 * tol && err < prev, "tol %g: error %g", tol, err);
        prev = err;
        ts_stepper_free(st);
        ts_system_free(sys);
    }
    ts_system *sys = make(&ts_oscillator, NULL);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(&ts_rk4, sys, NULL, &st), TS_OK);
    ts_run_options o = ts_default_run_options();
    o.rtol = 1e-6;
    ck_assert_int_eq(ts_run(sys, st, &o, NULL, NULL, NULL), TS_ERR_UNSUPPORTED);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* run --rtol: usage errors exit 2 naming the option; a run writes the
 * output times exactly, and --stats reports accepted and rejected steps. */
START_TEST(cli_rtol)
{
    static char out[1 << 14], err[1 << 12];
    static const struct {
        const char *args, *needle;
    } bad[] = {
        {"run --system oscillator --stepper rk4 --dt 1 --steps 1 --rtol 1e-6", "--rtol"},
        {"run --system oscillator --stepper dopri5 --dt 1 --steps 1 --rtol -1", "--rtol"},
        {"run --system oscillator --stepper dopri5 --dt 1 --steps 1 --atol 1e-6", "--atol"},
        {"run --system oscillator --stepper dopri5 --dt 1 --steps 1 --rtol x", "--rtol"},
        {"run --system string --stepper dopri5 --dt 1 --steps 1 --rtol 1e-6 --adaptive",
         "--adaptive"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(cli_run(bad[i].args, out, sizeof out, err, sizeof err), 2);
        ck_assert_msg(strstr(err, bad[i].needle), "%s: %s", bad[i].args, err);
    }
    ck_assert_int_eq(cli_run("run --system oscillator --stepper dopri5 --dt 2.5 --t-end 10 "
                             "--rtol 1e-9 --atol 1e-12 --stats --format csv",
                             out, sizeof out, err, sizeof err),
                     0);
    ck_assert_ptr_nonnull(strstr(out, "accepted,rejected"));
    double t[5], x[5];
    long acc = 0, rej = -1;
    char *line = strchr(out, '\n') + 1;
    for (int k = 0; k < 5; k++) {
        ck_assert_int_ge(sscanf(line, "%lf,%lf", &t[k], &x[k]), 2);
        ck_assert_double_eq(t[k], 2.5 * k);
        ck_assert_double_eq_tol(x[k], cos(t[k]), 1e-7);
        if (k == 4) { /* the last two columns */
            char *end = strchr(line, '\n');
            char *c = end - 1;
            int commas = 0;
            while (c > line && commas < 2)
                commas += *--c == ',';
            ck_assert_int_eq(sscanf(c, ",%ld,%ld", &acc, &rej), 2);
        }
        line = strchr(line, '\n') + 1;
    }
    ck_assert_int_gt(acc, 10);
    ck_assert_int_ge(rej, 0);
    ck_assert_ptr_nonnull(strstr(err, "accepted"));
}
END_TEST

/* run --rtol prints the accuracy reached against the exact solution, in
 * units of the tolerance asked for, max |e_i| / (atol + rtol |exact_i|),
 * recomputed here from the last row and cos t, -sin t */
START_TEST(cli_rtol_achieved_accuracy)
{
    static char out[1 << 14], err[1 << 12];
    ck_assert_int_eq(cli_run("run --system oscillator --stepper dopri5 --dt 0.5 --t-end 10 "
                             "--rtol 1e-8 --format csv",
                             out, sizeof out, err, sizeof err),
                     0);
    const char *last = out + strlen(out) - 1;
    while (last > out && last[-1] != '\n')
        last--;
    double t, x, v;
    ck_assert_int_eq(sscanf(last, "%lf,%lf,%lf", &t, &x, &v), 3);
    ck_assert_double_eq(t, 10.0);
    double ex = cos(10.0), ev = -sin(10.0);
    double want = fmax(fabs(x - ex) / (1e-8 + 1e-8 * fabs(ex)),
                       fabs(v - ev) / (1e-8 + 1e-8 * fabs(ev)));
    const char *a = strstr(err, "achieved/requested ");
    ck_assert_msg(a != NULL, "no achieved accuracy: %s", err);
    double got = strtod(a + strlen("achieved/requested "), NULL);
    ck_assert_msg(fabs(got - want) <= 5e-3 * want, "printed %g, from the last row %g", got, want);
    ck_assert_ptr_nonnull(strstr(err, "accepted 120, rejected 2 steps"));
    /* no exact solution: said so, not a made-up figure */
    ck_assert_int_eq(cli_run("run --system string --stepper dopri5 --dt 0.01 --t-end 0.02 "
                             "--rtol 1e-6 --out /dev/null",
                             out, sizeof out, err, sizeof err),
                     0);
    ck_assert_ptr_nonnull(strstr(err, "no exact solution"));
}
END_TEST

Suite *methods_suite(void)
{
    Suite *s = suite_create("methods");
    int n = (int)ts_stepper_count();
    TCase *tc = tcase_create("factors");
    tcase_add_test(tc, midpoint_and_crank_nicolson_factor);
    tcase_add_test(tc, dopri5_factor);
    tcase_add_test(tc, partitioned_on_first_order_systems);
    tcase_add_loop_test(tc, tableau_polynomial, 0, n);
    tcase_add_test(tc, dopri5_tableau_is_dormand_prince);
    tcase_add_test(tc, symplectic_one_step_matrices);
    tcase_add_test(tc, bdf2_characteristic_roots);
    suite_add_tcase(s, tc);
    tc = tcase_create("energy");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, midpoint_and_crank_nicolson_keep_energy);
    tcase_add_test(tc, symplectic_energy_bounded_rk4_drifts);
    suite_add_tcase(s, tc);
    tc = tcase_create("history");
    tcase_add_test(tc, bdf2_history_reset);
    tcase_add_loop_test(tc, runs_repeat_exactly, 0, n);
    tcase_add_test(tc, fsal_evaluations);
    tcase_add_test(tc, cli_rtol_achieved_accuracy);
    suite_add_tcase(s, tc);
    tc = tcase_create("orders");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, observed_orders);
    tcase_add_test(tc, dopri5_error_control);
    tcase_add_test(tc, dopri5_tolerance_proportionality);
    tcase_add_test(tc, cli_rtol);
    suite_add_tcase(s, tc);
    return s;
}

/* Stability: one-step amplification against the closed-form factors,
 * stability intervals and regions found by running the steppers, the power
 * iteration against known eigenvalues, the bounded test (state bounds and
 * energy test) against exact growth factors, the measured critical step on
 * test1d (the values of issue 4), on the oscillator and on a spring chain
 * and the string against its prediction, and the stability commands' exit
 * codes and messages.
 *
 * Closed forms (z = hk on x' = -k x): forward Euler 1 - z; midpoint and
 * trapezoid 1 - z + z^2/2; rk4 1 - z + z^2/2 - z^3/6 + z^4/24; backward
 * Euler 1/(1 + z).  Hairer & Wanner, Solving ODEs II, IV.2.  The fixed-fixed
 * chain of N equal masses m and springs k has M^-1 K eigenvalues
 * -(4k/m) sin^2(j pi / (2(N+1))), j = 1..N. */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "json_valid.h"
#include "tests.h"
#include "tstep/linalg.h"
#include "tstep/run.h"
#include "tstep/spectrum.h"
#include "tstep/stability.h"
#include "analysis/recurrence.h"

#define PI 3.14159265358979323846
#define SQRT2 1.41421356237309504880

/* --- a spring chain between two walls, for power iteration and dt_crit ------ */

typedef struct {
    ts_system base;
    double k;
} chain;

static void chain_destroy(ts_system *sys)
{
    ts_system_release(sys);
    free(sys);
}

/* f = K x, K = k tridiag(1, -2, 1) (walls at both ends) */
static void chain_apply(const chain *c, const double *x, double *f)
{
    size_t n = c->base.n;
    for (size_t i = 0; i < n; i++)
        f[i] = c->k * (-2.0 * x[i] + (i > 0 ? x[i - 1] : 0.0) + (i + 1 < n ? x[i + 1] : 0.0));
}

static int chain_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    (void)t, (void)v;
    chain_apply((const chain *)sys, x, f);
    return TS_OK;
}

static int chain_dfdx(ts_system *sys, double t, const double *x, const double *v,
                      const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    chain_apply((const chain *)sys, u, out);
    return TS_OK;
}

static int chain_dfdv(ts_system *sys, double t, const double *x, const double *v,
                      const double *u, double *out)
{
    (void)sys, (void)t, (void)x, (void)v;
    ts_vec_zero(sys->n, out);
    (void)u;
    return TS_OK;
}

static const ts_system_ops chain_ops = {
    .destroy = chain_destroy, .forces = chain_forces, .dfdx_mul = chain_dfdx,
    .dfdv_mul = chain_dfdv};
/* the same without Jacobian products: power iteration by differences */
static const ts_system_ops chain_ops_nojac = {.destroy = chain_destroy,
                                              .forces = chain_forces};

static const ts_param_def chain_params[] = {
    {"n", TS_PARAM_INT, "10", "particles"},
    {"k", TS_PARAM_REAL, "100", "spring stiffness"},
    {"m", TS_PARAM_REAL, "1", "mass of even particles"},
    {"m_odd", TS_PARAM_REAL, "1", "mass of odd particles"},
    {"jacobian", TS_PARAM_INT, "1", "offer Jacobian products"},
    {NULL, 0, NULL, NULL},
};

static const ts_system_type chain_type;

static int chain_create(const ts_params *p, ts_system **out)
{
    chain *c = calloc(1, sizeof *c);
    if (!c)
        return TS_ERR_NOMEM;
    size_t n = (size_t)ts_params_int(p, "n");
    int s = ts_system_init(&c->base, ts_params_int(p, "jacobian") ? &chain_ops : &chain_ops_nojac,
                           &chain_type, 2, n);
    if (s) {
        free(c);
        return s;
    }
    c->k = ts_params_real(p, "k");
    for (size_t i = 0; i < n; i++) {
        c->base.mass[i] = ts_params_real(p, i % 2 ? "m_odd" : "m");
        /* a zigzag (the stiffest mode) plus a smooth part */
        c->base.x[i] = 0.1 * (i % 2 ? -1.0 : 1.0) + 0.05 * sin((double)i);
    }
    *out = &c->base;
    return TS_OK;
}

static const ts_system_type chain_type = {
    .name = "chain", .summary = "test chain", .params = chain_params, .create = chain_create};

/* --- two modes, one growing: x' = a x + c y, y' = -b y (eigenvalues a, -b) -- */

typedef struct {
    ts_system base;
    double a, b, c;
} split;

/* n = 2: (x, y); n = 3 (twin): x' = a x + c y, z' = a z + c y, y' = -b y,
 * the eigenvalue a twice */
static void split_apply(const split *c, const double *x, double *f)
{
    f[0] = c->a * x[0] + c->c * x[1];
    f[1] = -c->b * x[1];
    if (c->base.n == 3)
        f[2] = c->a * x[2] + c->c * x[1];
}

static int split_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    (void)t, (void)v;
    split_apply((const split *)sys, x, f);
    return TS_OK;
}

static int split_dfdx(ts_system *sys, double t, const double *x, const double *v,
                      const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    split_apply((const split *)sys, u, out);
    return TS_OK;
}

static const ts_system_ops split_ops = {
    .destroy = chain_destroy, .forces = split_forces, .dfdx_mul = split_dfdx};

static const ts_param_def split_params[] = {
    {"a", TS_PARAM_REAL, "40", "growth rate of x"},
    {"b", TS_PARAM_REAL, "100", "decay rate of y"},
    {"c", TS_PARAM_REAL, "50", "coupling of y into x"},
    {"twin", TS_PARAM_INT, "0", "1: a third unknown z' = a z + c y"},
    {NULL, 0, NULL, NULL},
};

static const ts_system_type split_type;

static int split_create(const ts_params *p, ts_system **out)
{
    split *c = calloc(1, sizeof *c);
    if (!c)
        return TS_ERR_NOMEM;
    int s = ts_system_init(&c->base, &split_ops, &split_type, 1,
                           ts_params_int(p, "twin") ? 3 : 2);
    if (s) {
        free(c);
        return s;
    }
    c->a = ts_params_real(p, "a"), c->b = ts_params_real(p, "b"), c->c = ts_params_real(p, "c");
    for (size_t i = 0; i < c->base.n; i++)
        c->base.x[i] = 1.0;
    c->base.jacobian_symmetric = 0; /* the implicit solves by a general method */
    *out = &c->base;
    return TS_OK;
}

static const ts_system_type split_type = {
    .name = "split", .summary = "x' = a x + c y, y' = -b y", .params = split_params,
    .create = split_create};

/* --- order 2, a growing complex pair: one pinned dof, then
 *     2 x1'' = -400 x1 + 4 x1' + 40 x2   (lambda = 1 +- i sqrt(199)),
 *   0.5 x2'' = -50 x2 - x2'              (lambda = -1 +- i sqrt(99)) ------- */

static void pair_apply(int which, const double *u, double *out)
{
    out[0] = 0.0;
    out[1] = which ? 4.0 * u[1] : -400.0 * u[1] + 40.0 * u[2];
    out[2] = which ? -u[2] : -50.0 * u[2];
}

static int pair_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    double fv[3];
    (void)sys, (void)t;
    pair_apply(0, x, f);
    pair_apply(1, v, fv);
    for (int i = 0; i < 3; i++)
        f[i] += fv[i];
    return TS_OK;
}

static int pair_dfdx(ts_system *sys, double t, const double *x, const double *v,
                     const double *u, double *out)
{
    (void)sys, (void)t, (void)x, (void)v;
    pair_apply(0, u, out);
    return TS_OK;
}

static int pair_dfdv(ts_system *sys, double t, const double *x, const double *v,
                     const double *u, double *out)
{
    (void)sys, (void)t, (void)x, (void)v;
    pair_apply(1, u, out);
    return TS_OK;
}

static const ts_system_ops pair_ops = {
    .destroy = chain_destroy, .forces = pair_forces, .dfdx_mul = pair_dfdx,
    .dfdv_mul = pair_dfdv};

static const ts_param_def pair_params[] = {{NULL, 0, NULL, NULL}};

static const ts_system_type pair_type;

static int pair_create(const ts_params *p, ts_system **out)
{
    ts_system *sys = calloc(1, sizeof *sys);
    (void)p;
    if (!sys)
        return TS_ERR_NOMEM;
    int s = ts_system_init(sys, &pair_ops, &pair_type, 2, 3);
    if (!s && (s = ts_system_alloc_pins(sys)))
        ts_system_release(sys);
    if (s) {
        free(sys);
        return s;
    }
    sys->pinned[0] = 1;
    sys->mass[1] = 2.0, sys->mass[2] = 0.5;
    sys->x[1] = sys->x[2] = 1.0;
    sys->jacobian_symmetric = 0;
    *out = sys;
    return TS_OK;
}

static const ts_system_type pair_type = {
    .name = "pair", .summary = "a growing complex pair and a damped one", .params = pair_params,
    .create = pair_create};

/* The parameters of stype with the key=value pairs (NULL-terminated) set. */
static void params_of(const ts_system_type *stype, const char *const *pairs, ts_params *p)
{
    ts_params_init(p, stype->params);
    for (const char *const *q = pairs; q && *q; q++)
        ck_assert_int_eq(ts_params_set_pair(p, *q), TS_OK);
}

static ts_system *make(const ts_system_type *type, const char *const *pairs)
{
    ts_params p;
    params_of(type, pairs, &p);
    ts_system *sys = NULL;
    ck_assert_int_eq(ts_system_new(type, &p, &sys), TS_OK);
    return sys;
}

/* --- one-step amplification ---------------------------------------------------- */

static const char *const expected_names[] = {"forward-euler", "midpoint", "trapezoid", "rk4",
                                             "backward-euler", "backward-euler-linear"};

static double closed_form(const char *name, double z)
{
    if (strcmp(name, "forward-euler") == 0)
        return 1.0 - z;
    if (strcmp(name, "midpoint") == 0 || strcmp(name, "trapezoid") == 0)
        return 1.0 - z + z * z / 2.0;
    if (strcmp(name, "rk4") == 0)
        return 1.0 - z + z * z / 2.0 - z * z * z / 6.0 + z * z * z * z / 24.0;
    return 1.0 / (1.0 + z); /* both backward Euler steppers, exact on linear systems */
}

START_TEST(amplification_matches_closed_form)
{
    const ts_stepper_type *type = tests_stepper(expected_names[_i]);
    ck_assert_ptr_nonnull(type);
    static const double zs[] = {0.0, 0.1, 0.5, 1.0, 2.0, 2.5, 3.7};
    for (size_t j = 0; j < sizeof zs / sizeof *zs; j++) {
        double re, im, want = closed_form(type->name, zs[j]);
        ck_assert_int_eq(ts_amplification(type, NULL, -zs[j], 0.0, &re, &im), TS_OK);
        ck_assert_msg(fabs(re - want) <= 1e-12 * fmax(1.0, fabs(want)) && im == 0.0,
                      "%s: R(-%g) = %.17g, closed form %.17g", type->name, zs[j], re, want);
    }
}
END_TEST

START_TEST(amplification_complex_forward_euler_and_backward_euler)
{
    /* z = -0.5 + 1.5 i: forward Euler 1 + z, backward Euler 1 / (1 - z) */
    double re, im;
    ck_assert_int_eq(ts_amplification(&ts_forward_euler, NULL, -0.5, 1.5, &re, &im), TS_OK);
    ck_assert_double_eq_tol(re, 0.5, 1e-14);
    ck_assert_double_eq_tol(im, 1.5, 1e-14);
    ck_assert_int_eq(ts_amplification(tests_stepper("backward-euler"), NULL, -0.5, 1.5, &re, &im), TS_OK);
    double complex_abs2 = 1.5 * 1.5 + 1.5 * 1.5; /* |1 - z|^2 */
    ck_assert_double_eq_tol(re, 1.5 / complex_abs2, 1e-12);
    ck_assert_double_eq_tol(im, 1.5 / complex_abs2, 1e-12);
    /* on Re z = 1 the implicit matrix is skew-symmetric: still solved */
    ck_assert_int_eq(ts_amplification(tests_stepper("backward-euler"), NULL, 1.0, 1.0, &re, &im), TS_OK);
    ck_assert_double_eq_tol(hypot(re, im), 1.0, 1e-12); /* |1/(1 - z)| = 1 at z = 1 + i */
}
END_TEST

/* --- regions and intervals, over every registered stepper --------------------- */

START_TEST(region_contains_minus_one_and_explicit_ends)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    double re, im;
    ck_assert_int_eq(ts_amplification(type, NULL, -1.0, 0.0, &re, &im), TS_OK);
    ck_assert_msg(hypot(re, im) <= 1.0, "%s: |R(-1)| = %g > 1", type->name, hypot(re, im));
    if (!(type->flags & TS_IMPLICIT)) {
        /* an explicit stepper's R is a polynomial: the interval ends */
        double r;
        ck_assert_int_eq(ts_stability_interval(type, NULL, -1.0, 0.0, &r), TS_OK);
        ck_assert_msg(isfinite(r) && r >= 1.0, "%s: interval %g", type->name, r);
        ck_assert_int_eq(ts_amplification(type, NULL, -1.01 * r - 0.01, 0.0, &re, &im), TS_OK);
        ck_assert_double_gt(hypot(re, im), 1.0);
    }
}
END_TEST

START_TEST(region_minus_three_outside_for_builtin_explicit)
{
    static const char *const names[] = {"forward-euler", "midpoint", "trapezoid", "rk4"};
    for (size_t i = 0; i < 4; i++) {
        double re, im;
        ck_assert_int_eq(ts_amplification(tests_stepper(names[i]), NULL, -3.0, 0.0, &re, &im),
                         TS_OK);
        ck_assert_msg(fabs(re) > 1.0, "%s: |R(-3)| = %g", names[i], fabs(re));
    }
}
END_TEST

START_TEST(intervals_of_builtin_steppers)
{
    static const struct {
        const char *name;
        double real, imag;
    } want[] = {
        {"forward-euler", 2.0, 0.0},  {"midpoint", 2.0, 0.0},
        {"trapezoid", 2.0, 0.0},      {"rk4", 2.785293563405282, 2.0 * SQRT2},
        {"backward-euler", INFINITY, INFINITY},
        {"backward-euler-linear", INFINITY, INFINITY},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const ts_stepper_type *type = tests_stepper(want[i].name);
        double r, q;
        ck_assert_int_eq(ts_stability_interval(type, NULL, -1.0, 0.0, &r), TS_OK);
        ck_assert_int_eq(ts_stability_interval(type, NULL, 0.0, 1.0, &q), TS_OK);
        if (isinf(want[i].real))
            ck_assert_msg(isinf(r) && isinf(q), "%s: %g %g", want[i].name, r, q);
        else {
            ck_assert_msg(fabs(r - want[i].real) <= 1e-8, "%s real: %.12g", want[i].name, r);
            ck_assert_msg(fabs(q - want[i].imag) <= 1e-8, "%s imag: %.12g", want[i].name, q);
        }
    }
}
END_TEST

/* --- the stiffest mode ----------------------------------------------------------- */

START_TEST(power_iteration_oscillator_is_k_over_m)
{
    ts_system *sys = make(&ts_oscillator, (const char *const[]){"k=100", "m=4", NULL});
    ts_stiff_mode mode;
    ck_assert_int_eq(ts_stiffest_mode(sys, &mode), TS_OK);
    ck_assert(mode.converged && !mode.finite_differences);
    ck_assert_double_eq_tol(mode.mu_re, -25.0, 1e-12);  /* -k/m */
    ck_assert_double_eq_tol(mode.re, 0.0, 1e-12);       /* +-i sqrt(k/m) */
    ck_assert_double_eq_tol(mode.im, 5.0, 1e-12);
    ts_system_free(sys);
    /* damped: lambda = -c/(2m) + i sqrt(k/m - (c/(2m))^2) */
    sys = make(&ts_oscillator, (const char *const[]){"k=100", "m=4", "c=8", NULL});
    ck_assert_int_eq(ts_stiffest_mode(sys, &mode), TS_OK);
    ck_assert_double_eq_tol(mode.damping, -2.0, 1e-12);
    ck_assert_double_eq_tol(mode.re, -1.0, 1e-12);
    ck_assert_double_eq_tol(mode.im, sqrt(24.0), 1e-12);
    ts_system_free(sys);
}
END_TEST

START_TEST(power_iteration_complex_test_equation)
{
    ts_system *sys = make(&ts_test1d, (const char *const[]){"k=3", "omega=-7", NULL});
    ts_stiff_mode mode;
    ck_assert_int_eq(ts_stiffest_mode(sys, &mode), TS_OK);
    ck_assert(mode.converged);
    ck_assert_double_eq_tol(mode.re, -3.0, 1e-10);
    ck_assert_double_eq_tol(mode.im, 7.0, 1e-10); /* the pair, reported with im >= 0 */
    ts_system_free(sys);
}
END_TEST

START_TEST(power_iteration_chain)
{
    /* equal masses: the largest |mu| is (4k/m) sin^2(N pi / (2(N+1))); both with the
     * system's Jacobian and with differences of forces */
    for (int fd = 0; fd < 2; fd++) {
        ts_system *sys = make(&chain_type, (const char *const[]){"n=12", "k=50", "m=2", "m_odd=2",
                                                                  fd ? "jacobian=0" : "jacobian=1",
                                                                  NULL});
        ts_stiff_mode mode;
        ck_assert_int_eq(ts_stiffest_mode(sys, &mode), TS_OK);
        ck_assert_int_eq(mode.finite_differences, fd);
        double s = sin(12.0 * PI / 26.0), want = -(4.0 * 50.0 / 2.0) * s * s;
        ck_assert_msg(fabs(mode.mu_re - want) <= 1e-6 * fabs(want),
                      "fd %d: mu %.15g, want %.15g", fd, mode.mu_re, want);
        ck_assert_double_eq_tol(mode.im, sqrt(-want), 1e-6 * sqrt(-want));
        ts_system_free(sys);
    }
    /* two unequal masses: m1 m2 mu^2 + 2k (m1 + m2) mu + 3k^2 = 0, larger |root| */
    ts_system *sys = make(&chain_type, (const char *const[]){"n=2", "k=3", "m=1", "m_odd=5",
                                                              NULL});
    ts_stiff_mode mode;
    ck_assert_int_eq(ts_stiffest_mode(sys, &mode), TS_OK);
    double a = 5.0, b = 2.0 * 3.0 * 6.0, c = 27.0;
    double want = (-b - sqrt(b * b - 4.0 * a * c)) / (2.0 * a);
    ck_assert_double_eq_tol(mode.mu_re, want, 1e-10 * fabs(want));
    ts_system_free(sys);
}
END_TEST

/* --- measured critical step ---------------------------------------------------- */

/* Measure as `tstep stability` does: rate = |lambda| of the stiffest mode. */
static ts_stability_result measure(const ts_system_type *stype, const char *const *pairs,
                                   const ts_stepper_type *type, double t_end)
{
    ts_params p;
    params_of(stype, pairs, &p);
    ts_system *sys = make(stype, pairs);
    ts_stiff_mode mode;
    ck_assert_int_eq(ts_stiffest_mode(sys, &mode), TS_OK);
    ts_system_free(sys);
    ts_stability_options o = ts_default_stability_options();
    o.t_end = t_end;
    o.rate = hypot(mode.re, mode.im);
    ts_stability_result res;
    ts_stability_problem pb = {stype, &p, type, NULL};
    ck_assert_int_eq(ts_stability_measure(&pb, &o, NAN, &res), TS_OK);
    return res;
}

/* Predict and measure exactly as `tstep stability` does (ts_stability_study
 * on the dense spectrum at the initial state, the linearized measurement or
 * runs of the system).  *pred gets dt_pred. */
static ts_stability_study_result study_of(const ts_system_type *stype,
                                          const char *const *pairs, const ts_stepper_type *type,
                                          int linearized)
{
    ts_params p;
    params_of(stype, pairs, &p);
    ts_system *sys = make(stype, pairs);
    ts_spectrum sp;
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_DENSE, &sp), TS_OK);
    ts_stability_options o = ts_default_stability_options();
    o.linearized = linearized;
    ts_stability_study_result r;
    ts_stability_problem pb = {stype, &p, type, NULL};
    ck_assert_int_eq(ts_stability_study(&pb, &o, sys, &sp, &r), TS_OK);
    ts_spectrum_free(&sp);
    ts_system_free(sys);
    return r;
}

static ts_stability_result study(const ts_system_type *stype, const char *const *pairs,
                                 const ts_stepper_type *type, int linearized, double *pred)
{
    ts_stability_study_result r = study_of(stype, pairs, type, linearized);
    *pred = r.binding.dt_pred;
    return r.result;
}

/* The measurement found a bracket [dt_crit, dt_fail) that holds limit. */
static int brackets(const ts_stability_result *r, double limit)
{
    return r->kind == TS_CRIT_FOUND && r->dt_crit <= limit && limit < r->dt_fail;
}

/* --- Adams-Bashforth 2 for first-order systems only, without TS_MULTISTEP:
 * x_{n+1} = x_n + h (3/2 f_n - 1/2 f_{n-1}), started by forward Euler.  On
 * x' = -k x its run map's roots satisfy z^2 - (1 - 3/2 hk) z - 1/2 hk = 0,
 * stable up to hk = 1 (HNW III.3); its start alone, forward Euler, up to 2. */

typedef struct {
    double *f, *f_prev;
    int have;
} ab2_scratch;

static void ab2_free(void *scratch)
{
    ab2_scratch *a = scratch;
    if (a)
        free(a->f), free(a->f_prev);
    free(a);
}

static int ab2_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    if (sys->order != 1)
        return ts_error(TS_ERR_UNSUPPORTED, "ab2: first-order systems only");
    ab2_scratch *a = calloc(1, sizeof *a);
    if (a)
        a->f = calloc(sys->n, sizeof *a->f), a->f_prev = calloc(sys->n, sizeof *a->f);
    if (!a || !a->f || !a->f_prev) {
        ab2_free(a);
        return TS_ERR_NOMEM;
    }
    *scratch = a;
    return TS_OK;
}

static void ab2_reset(void *scratch)
{
    ((ab2_scratch *)scratch)->have = 0;
}

static int ab2_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    ab2_scratch *a = scratch;
    (void)stats;
    int s = ts_system_forces(sys, t, sys->x, NULL, a->f);
    if (s)
        return s;
    for (size_t i = 0; i < sys->n; i++) {
        double fi = a->f[i] / sys->mass[i], fp = a->f_prev[i];
        sys->x[i] += a->have ? h * (1.5 * fi - 0.5 * fp) : h * fi;
        a->f_prev[i] = fi;
    }
    a->have = 1;
    return TS_OK;
}

static const ts_stepper_type ab2_type = {.name = "ab2", .summary = "Adams-Bashforth 2",
                                         .order = 2, .alloc = ab2_alloc, .step = ab2_step,
                                         .free = ab2_free, .reset = ab2_reset};

/* A stepper of first-order systems only that carries a history, without
 * TS_MULTISTEP: it is found to carry state (on x' = (-0.3 + i) x), and its
 * prediction on x' = -100 x is its run map's 1 / 100, not its start's
 * 2 / 100, which the runs bracket. */
START_TEST(first_order_multistep_carries_state)
{
    int memoryless = 1;
    ts_solver_options so = ts_default_solver_options();
    ck_assert_int_eq(ts_stepper_memoryless(&ab2_type, &so, &memoryless), TS_OK);
    ck_assert_int_eq(memoryless, 0);
    double pred;
    ts_stability_result r =
        study(&ts_test1d, (const char *const[]){"k=100", NULL}, &ab2_type, 1, &pred);
    ck_assert_msg(fabs(pred / 0.01 - 1.0) <= 1e-6 && brackets(&r, 0.01),
                  "ab2: kind %d, [%.9g, %.9g], predicted %.9g", (int)r.kind, r.dt_crit, r.dt_fail,
                  pred);
}
END_TEST

/* How many vectors of the growing modes' span a study on the linearization
 * removes from its runs (ts_stability_study_result.grow_removed). */
static int removed_by(const ts_system_type *stype, const char *const *pairs, const char *name)
{
    return study_of(stype, pairs, ts_stepper_find(name), 1).grow_removed;
}

/* Where the runs keep the growing span: a stepper that carries state (bdf2
 * drops its history when the state is changed from outside, so its runs
 * would iterate its start's map) and a repeated growing eigenvalue (x' =
 * 40 x + 50 y, z' = 40 z + 50 y: one vector found for the eigenvalue 40
 * twice, which does not span its plane).  Forward Euler on the plain split
 * removes one vector. */
START_TEST(growing_span_kept_where_not_whole)
{
    ck_assert_int_eq(removed_by(&split_type, NULL, "forward-euler"), 1);
    ck_assert_int_eq(removed_by(&split_type, NULL, "bdf2"), 0);
    static const char *const twin[] = {"twin=1", NULL};
    ck_assert_int_eq(removed_by(&split_type, twin, "forward-euler"), 0);
    ck_assert_int_eq(removed_by(&split_type, twin, "rk4"), 0);
}
END_TEST

/* A weakly damped mode: forward Euler on x'' = -100 x - 0.01 x' (lambda =
 * -0.005 + 10i, limit 2 |Re| / |lambda|^2 = 1e-4) grows past its limit too
 * slowly to show over T (capped at 2e5 steps): the bracket ends near 1.10e-4,
 * and the run at that step over 2 T grows, so the result is t-limited, not a
 * limit 10 % above the true one.  Midpoint's limit there is bracketed. */
START_TEST(weakly_damped_limit_is_t_limited)
{
    static const char *const osc[] = {"k=100", "c=0.01", NULL};
    double pred;
    ts_stability_result r = study(&ts_oscillator, osc, ts_stepper_find("forward-euler"), 1, &pred);
    ck_assert_msg(fabs(pred / 1e-4 - 1.0) <= 1e-6 && r.kind == TS_CRIT_T_LIMITED &&
                      r.dt_crit > 1.05e-4,
                  "forward Euler: kind %d, [%.9g, %.9g], predicted %.9g", (int)r.kind, r.dt_crit,
                  r.dt_fail, pred);
    r = study(&ts_oscillator, osc, ts_stepper_find("midpoint"), 1, &pred);
    ck_assert_msg(brackets(&r, pred), "midpoint: kind %d, [%.9g, %.9g], predicted %.9g", (int)r.kind, r.dt_crit,
                  r.dt_fail, pred);
}
END_TEST

/* A state that is unstable by itself: x' = 40 x + 50 y, y' = -100 y
 * (eigenvalues 40 and -100).  Every run grows along the first mode, the
 * exact solution too, at any step; the limit is the second's, 2 / 100 for
 * forward Euler and midpoint, 2.785293563405282 / 100 for rk4 (the root of
 * |R(-z)| = 1; HNW IV.2), none for backward Euler.  The runs leave the
 * growing mode's span out and bracket those; with it kept in, the seed's
 * rounding along it grows past the bound at every step (below-min).  The
 * same on an order-2 system whose growing mode is a complex pair (its
 * plane from y and A y), with unequal masses and a pinned dof: forward
 * Euler's limit is the damped pair's 2 |Re| / |lambda|^2 = 2 / 100, and
 * every explicit stepper brackets its prediction. */
START_TEST(own_growth_is_not_the_steppers)
{
    static const struct {
        const char *name;
        double limit;
    } want[] = {{"forward-euler", 0.02}, {"midpoint", 0.02}, {"rk4", 0.02785293563405282},
                {"backward-euler", INFINITY}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        double pred;
        ts_stability_result r = study(&split_type, NULL, ts_stepper_find(want[i].name), 1, &pred);
        if (isinf(want[i].limit)) {
            ck_assert_msg(isinf(pred) && r.kind == TS_CRIT_INF, "%s: kind %d, dt_crit %g",
                          want[i].name, (int)r.kind, r.dt_crit);
            continue;
        }
        ck_assert_msg(brackets(&r, want[i].limit) && r.dt_fail <= 1.0051 * r.dt_crit &&
                          fabs(pred / want[i].limit - 1.0) <= 1e-9,
                      "%s: kind %d, [%.9g, %.9g], predicted %.12g", want[i].name, (int)r.kind,
                      r.dt_crit, r.dt_fail, pred);
    }
    /* y's mode vector nearly along x (c = 1e8): |d(0)| is the seed left
     * once x's span is out, or growth past the limit would not show */
    double pred;
    ts_stability_result r = study(&split_type, (const char *const[]){"c=1e8", NULL},
                                  ts_stepper_find("forward-euler"), 1, &pred);
    ck_assert_msg(brackets(&r, 0.02), "c = 1e8: kind %d, [%.9g, %.9g]", (int)r.kind, r.dt_crit, r.dt_fail);
    static const char *const pairs[] = {"forward-euler", "midpoint", "rk4", "heun3", "dopri5"};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        r = study(&pair_type, NULL, ts_stepper_find(pairs[i]), 1, &pred);
        ck_assert_msg(brackets(&r, pred) && (i > 0 || fabs(pred / 0.02 - 1.0) <= 1e-9),
                      "pair, %s: kind %d, [%.9g, %.9g], predicted %.12g", pairs[i], (int)r.kind,
                      r.dt_crit, r.dt_fail, pred);
    }
}
END_TEST

/* T too short for the growth test: forward Euler on x' = -10x runs at
 * most 2 steps of T = 0.5 and grows 4x a step, below the bound; with its
 * limit of 0.2 predicted that is no verdict of inf (t-limited), and with
 * none predicted (backward Euler) inf stands. */
START_TEST(short_t_gives_no_inf_verdict)
{
    static const char *const k10[] = {"k=10", NULL};
    ts_params p;
    params_of(&ts_test1d, k10, &p);
    ts_stability_options o = ts_default_stability_options();
    o.t_end = 0.5;
    o.rate = 10.0;
    ts_stability_result res;
    ts_stability_problem fe = {&ts_test1d, &p, &ts_forward_euler, NULL},
                         be = {&ts_test1d, &p, tests_stepper("backward-euler"), NULL};
    ck_assert_int_eq(ts_stability_measure(&fe, &o, 0.197, &res), TS_OK);
    ck_assert_int_eq(res.kind, TS_CRIT_T_LIMITED);
    ck_assert(isinf(res.dt_crit));
    ck_assert_int_eq(ts_stability_measure(&be, &o, INFINITY, &res), TS_OK);
    ck_assert_int_eq(res.kind, TS_CRIT_INF);
}
END_TEST

/* z so large that the solvers' norms overflow: a failure, never R = 1
 * from a right-hand side whose infinite norm read as converged */
START_TEST(huge_z_fails_instead_of_r_one)
{
    const ts_stepper_type *const implicit[] = {
        tests_stepper("backward-euler"), tests_stepper("backward-euler-opt"),
        tests_stepper("backward-euler-linear"), tests_stepper("implicit-midpoint")};
    for (size_t i = 0; i < sizeof implicit / sizeof *implicit; i++) {
        double re = 0.0, im = 0.0;
        int s = ts_amplification(implicit[i], NULL, -1e155, 0.0, &re, &im);
        ck_assert_msg(s != TS_OK || hypot(re, im) < 1e-100, "%s: status %d, R = %g%+gi",
                      implicit[i]->name, s, re, im);
        ck_assert_int_eq(ts_amplification(implicit[i], NULL, -1e6, 0.0, &re, &im), TS_OK);
        /* A-stable: |R| <= 1 (backward Euler's about 1e-6, the midpoint rule's near -1) */
        ck_assert_msg(hypot(re, im) <= 1.0, "%s: R(-1e6) = %g", implicit[i]->name, re);
    }
}
END_TEST

START_TEST(bisection_on_test1d_k10)
{
    static const struct {
        const char *name;
        double dt;
    } want[] = {{"forward-euler", 0.2}, {"midpoint", 0.2}, {"trapezoid", 0.2},
                {"rk4", 0.27853},       {"backward-euler", INFINITY},
                {"backward-euler-linear", INFINITY}};
    static const char *const k10[] = {"k=10", NULL};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        ts_stability_result r = measure(&ts_test1d, k10, tests_stepper(want[i].name), 100.0);
        if (isinf(want[i].dt)) {
            ck_assert_msg(r.kind == TS_CRIT_INF && isinf(r.dt_crit), "%s: %g", want[i].name,
                          r.dt_crit);
        } else {
            ck_assert_msg(r.kind == TS_CRIT_FOUND, "%s: kind %d", want[i].name, r.kind);
            ck_assert_msg(fabs(r.dt_crit / want[i].dt - 1.0) <= 0.01, "%s: dt_crit %g",
                          want[i].name, r.dt_crit);
            /* the bracket is 0.5 %: its bounded end below its unbounded end */
            ck_assert(r.dt_fail > r.dt_crit && r.dt_fail <= 1.005 * r.dt_crit * (1 + 1e-12));
        }
    }
}
END_TEST

/* Every registered stepper: measured agrees with predicted on test1d (its own
 * interval, found by one-step runs, over |lambda| = 10). */
START_TEST(measured_matches_predicted_test1d)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    static const char *const k10[] = {"k=10", NULL};
    ts_system *sys = make(&ts_test1d, k10);
    ts_stiff_mode mode;
    ck_assert_int_eq(ts_stiffest_mode(sys, &mode), TS_OK);
    ts_system_free(sys);
    ck_assert_double_eq_tol(mode.re, -10.0, 1e-12);
    double r;
    ck_assert_int_eq(ts_stability_interval(type, NULL, mode.re, mode.im, &r), TS_OK);
    double pred = ts_stability_predict(&mode, r);
    ts_stability_result res = measure(&ts_test1d, k10, type, 100.0);
    if (isinf(pred))
        ck_assert_msg(isinf(res.dt_crit), "%s: predicted inf, measured %g", type->name,
                      res.dt_crit);
    else
        ck_assert_msg(fabs(res.dt_crit / pred - 1.0) <= 0.01, "%s: measured %g, predicted %g",
                      type->name, res.dt_crit, pred);
}
END_TEST

/* The bounded test on x' = -10 x (forward Euler, R = 1 - 10 h, one mode, so
 * the perturbation is exactly |R|^k |d(0)|): neutral at h = 0.2, growing
 * 1.1-fold per step at 0.21 (1.1^48 = 97, far below the cap C = 1e4: the
 * sustained-growth test decides), 1.002-fold at 0.2002 (10 % over the run:
 * still sustained), decaying at 0.1998; and the cap C alone at 0.21. */
START_TEST(bounded_definition)
{
    ts_params p;
    ts_params_init(&p, ts_test1d.params);
    ts_params_set_pair(&p, "k=10");
    ts_stability_options o = ts_default_stability_options();
    static const struct {
        double dt, bound;
        int bounded;
        long steps;
    } cases[] = {{0.2, 1e4, 1, 50},     {0.21, 1e4, 0, 48},  {0.2002, 1e4, 0, 50},
                 {0.1998, 1e4, 1, 51},  {0.21, 50.0, 0, 48}};
    ts_stability_problem pb = {&ts_test1d, &p, &ts_forward_euler, NULL};
    for (int lin = 0; lin < 2; lin++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            ts_stability_verdict v;
            o.bound = cases[i].bound;
            o.linearized = lin;
            ck_assert_int_eq(ts_stability_bounded(&pb, &o, 10.0, cases[i].dt, &v), TS_OK);
            ck_assert_msg(v.bounded == cases[i].bounded && v.steps == cases[i].steps,
                          "dt %g linearized %d: bounded %d, steps %ld", cases[i].dt, lin,
                          v.bounded, v.steps);
            ck_assert_int_eq(v.status, v.bounded ? TS_OK : TS_ERR_DIVERGED);
        }
}
END_TEST

/* Transient growth is not instability: forward Euler on the critically
 * damped oscillator (k = 100, c = 20: lambda = -10 twice, a defective
 * Jacobian) at h = 0.19 has the one-step matrix A = [1 h; -100h 1-20h] with
 * a double eigenvalue -0.9: a perturbation first grows (like k 0.9^k) and
 * then decays.  The peak growth G of |d| = sqrt(w^2 dx^2 + dv^2), w = 10,
 * from (dx, dv) = (1, 0) is computed here by iterating A: the run is
 * bounded for C above G and not for C below it. */
START_TEST(transient_growth_is_not_instability)
{
    ts_params p;
    ts_params_init(&p, ts_oscillator.params);
    ts_params_set_pair(&p, "k=100");
    ts_params_set_pair(&p, "c=20");
    const double h = 0.19, w = 10.0, T = 20.0;
    long N = (long)ceil(T / h - 1e-9);
    double x = 1.0, v = 0.0, g = 1.0;
    for (long k = 1; k <= N; k++) {
        double hk = k == N ? T - (double)(N - 1) * h : h;
        double xn = x + hk * v, vn = v + hk * (-100.0 * x - 20.0 * v);
        x = xn, v = vn;
        g = fmax(g, sqrt(w * w * x * x + v * v) / w);
    }
    ck_assert_msg(g > 2.0, "peak growth %g", g); /* a real transient */
    static const double one = 1.0, zero = 0.0;
    ts_stability_options o = ts_default_stability_options();
    o.seed = &one, o.seed_v = &zero, o.rate = w, o.linearized = 1;
    ts_stability_problem pb = {&ts_oscillator, &p, &ts_forward_euler, NULL};
    ts_stability_verdict run;
    o.bound = 1.01 * g;
    ck_assert_int_eq(ts_stability_bounded(&pb, &o, T, h, &run), TS_OK);
    ck_assert_msg(run.bounded, "C = %g above the peak growth %g: bounded", o.bound, g);
    o.bound = 0.99 * g;
    ck_assert_int_eq(ts_stability_bounded(&pb, &o, T, h, &run), TS_OK);
    ck_assert(!run.bounded && run.status == TS_ERR_DIVERGED);
}
END_TEST

/* The string past rk4's limit: the stiff longitudinal mode grows; on the
 * string itself (runs of the system) it saturates near the spring rest
 * length, which the growth cap C catches; on the linearization it just
 * grows.  Below the limit both are bounded. */
START_TEST(string_rk4_both_measurements)
{
    ts_params p;
    ts_params_init(&p, ts_string.params);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(&ts_string, &p, &sys), TS_OK);
    ts_spectrum sp;
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_DENSE, &sp), TS_OK);
    ts_binding bd;
    ck_assert_int_eq(ts_stability_binding(&(ts_mode_test){&ts_rk4, NULL, 0}, &sp, &bd), TS_OK);
    double *u = malloc(2 * sys->n * sizeof *u);
    ck_assert_int_eq(ts_spectrum_mode(sys, &sp, bd.mode, u, u + sys->n), TS_OK);
    ts_stability_options o = ts_default_stability_options();
    o.rate = hypot(bd.re, bd.im);
    o.seed = u, o.seed_v = u + sys->n;
    double T = ts_stability_choose_t(&ts_rk4, NULL, &bd, sp.lambda_max);
    ts_stability_problem pb = {&ts_string, &p, &ts_rk4, NULL};
    for (int lin = 0; lin < 2; lin++) {
        ts_stability_verdict v;
        o.linearized = lin;
        ck_assert_int_eq(ts_stability_bounded(&pb, &o, T, 1.1 * bd.dt_pred, &v), TS_OK);
        ck_assert_msg(!v.bounded && v.status == TS_ERR_DIVERGED, "linearized %d at 1.1 dt_pred",
                      lin);
        ck_assert_int_eq(ts_stability_bounded(&pb, &o, T, 0.95 * bd.dt_pred, &v), TS_OK);
        ck_assert_msg(v.bounded, "linearized %d at 0.95 dt_pred", lin);
    }
    free(u);
    ts_spectrum_free(&sp);
    ts_system_free(sys);
}
END_TEST

/* The string: every built-in explicit stepper's measured dt_crit within 5 %
 * of the prediction as the command makes them, on the linearization; rk4
 * also on runs of the string itself.  (Forward Euler, midpoint and
 * trapezoid have no stable step on the swinging string over a long T: as
 * it swings, gravity's tension gives its transverse modes frequencies
 * without damping, which their stability regions exclude.)  Backward Euler
 * far beyond. */
START_TEST(string_measured_vs_predicted)
{
    static const char *const names[] = {"forward-euler", "midpoint", "trapezoid", "rk4"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        for (int lin = 1; lin >= (i == 3 ? 0 : 1); lin--) {
            double pred;
            ts_stability_result res = study(&ts_string, NULL, tests_stepper(names[i]), lin,
                                            &pred);
            ck_assert_msg(isfinite(pred) && pred > 0.0, "%s: prediction %g", names[i], pred);
            ck_assert_msg(fabs(res.dt_crit / pred - 1.0) <= 0.05,
                          "%s (linearized %d): measured %g, predicted %g", names[i], lin,
                          res.dt_crit, pred);
        }
    double pred;
    ts_stability_result res = study(&ts_string, NULL, tests_stepper("backward-euler"), 1, &pred);
    ck_assert_msg(isinf(pred) && res.dt_crit > 20.0 * 0.0065, "backward-euler: pred %g, [%g, %g] kind %d", pred, res.dt_crit, res.dt_fail, res.kind);
}
END_TEST

/* The undamped oscillator: rk4 has a true limit 2 sqrt 2 / omega; forward
 * Euler and midpoint have none (|R(iy)| > 1 for y > 0): forward Euler's
 * growth (1 + (hw)^2)^(N/2) is seen at every step size tried (below-min),
 * midpoint's (1 + (hw)^4/4)^(N/2) only where it adds up over T, so its
 * measurement is flagged T-limited. */
START_TEST(oscillator_rk4_limit_and_euler_t_limited)
{
    static const char *const osc[] = {"k=100", NULL};
    ts_stability_result r = measure(&ts_oscillator, osc, &ts_rk4, 100.0);
    ck_assert_int_eq(r.kind, TS_CRIT_FOUND);
    ck_assert_double_eq_tol(r.dt_crit, 0.2 * SQRT2, 0.005 * 0.2 * SQRT2);
    r = measure(&ts_oscillator, osc, &ts_forward_euler, 100.0);
    ck_assert_int_eq(r.kind, TS_CRIT_BELOW_MIN);
    r = measure(&ts_oscillator, osc, tests_stepper("midpoint"), 100.0);
    ck_assert_int_eq(r.kind, TS_CRIT_T_LIMITED);
    double pred;
    r = study(&ts_oscillator, osc, &ts_rk4, 1, &pred);
    ck_assert_int_eq(r.kind, TS_CRIT_FOUND);
    ck_assert_double_eq_tol(pred, 0.2 * SQRT2, 1e-9);
    ck_assert_msg(r.dt_crit <= pred && r.dt_fail >= pred, "[%g, %g] against %g", r.dt_crit,
                  r.dt_fail, pred);
    /* one rule for a stepper with no stable step (prediction 0): t-limited,
     * whether runs over T show it at dt_min (forward Euler, dt_crit 0) or
     * only above (midpoint) */
    r = study(&ts_oscillator, osc, &ts_forward_euler, 1, &pred);
    ck_assert(pred == 0.0 && r.kind == TS_CRIT_T_LIMITED && r.dt_crit == 0.0);
    r = study(&ts_oscillator, osc, tests_stepper("midpoint"), 1, &pred);
    ck_assert(pred == 0.0 && r.kind == TS_CRIT_T_LIMITED && r.dt_crit > 0.0);
    /* damped (c = 0.5): Euler's true interval 2 |Re lambda| / |lambda|^2 = 0.005 */
    static const char *const damped[] = {"k=100", "c=0.5", NULL};
    r = study(&ts_oscillator, damped, &ts_forward_euler, 1, &pred);
    ck_assert_double_eq_tol(pred, 0.005, 1e-9);
    ck_assert_msg(r.kind == TS_CRIT_FOUND && r.dt_crit <= 0.005 && r.dt_fail >= 0.005,
                  "damped Euler: [%g, %g]", r.dt_crit, r.dt_fail);
}
END_TEST

/* A spring chain of 16 masses: rk4's measured dt_crit within 5 % of the
 * prediction from power iteration (undamped, so the stiffest mode is on the
 * imaginary axis and rk4 is the built-in explicit stepper with an interval
 * there); backward Euler stable at every dt up to T. */
START_TEST(chain_measured_vs_predicted)
{
    static const char *const ch[] = {"n=16", "k=400", "m=0.5", "m_odd=0.8", NULL};
    ts_system *sys = make(&chain_type, ch);
    ts_stiff_mode mode;
    ck_assert_int_eq(ts_stiffest_mode(sys, &mode), TS_OK);
    ts_system_free(sys);
    double r;
    ck_assert_int_eq(ts_stability_interval(&ts_rk4, NULL, mode.re, mode.im, &r), TS_OK);
    double pred = ts_stability_predict(&mode, r), T = 1000.0 / hypot(mode.re, mode.im);
    ts_stability_result res = measure(&chain_type, ch, &ts_rk4, T);
    ck_assert_int_eq(res.kind, TS_CRIT_FOUND);
    ck_assert_msg(fabs(res.dt_crit / pred - 1.0) <= 0.05, "measured %g, predicted %g",
                  res.dt_crit, pred);
    res = measure(&chain_type, ch, tests_stepper("backward-euler"), T);
    ck_assert_int_eq(res.kind, TS_CRIT_INF);
}
END_TEST

/* --- the commands ------------------------------------------------------------------ */

/* Run a shell command; its exit status, and stdout + stderr in out. */
static int run(const char *cmd, char *out, size_t size)
{
    char full[1024];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *f = popen(full, "r");
    ck_assert_ptr_nonnull(f);
    size_t len = fread(out, 1, size - 1, f);
    out[len] = '\0';
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(cli_bad_input)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"stability --stepper rk4", "--system is required"},
        {"stability --system nope --stepper rk4", "unknown system 'nope' (valid: test1d"},
        {"stability --system test1d --stepper rk5", "unknown stepper 'rk5' (valid: forward-euler"},
        {"stability --system test1d --stepper rk4 --param q=1", "--param q=1"},
        {"stability --system test1d --stepper rk4 --bound 1", "--bound: '1' must be greater than 1"},
        {"stability --system test1d --stepper rk4 --t-end -1", "--t-end: '-1' must be greater"},
        {"stability --system test1d --stepper rk4 --format frames", "--format"},
        {"stability --system test1d --stepper rk4 extra", "unexpected argument 'extra'"},
        {"stability --system test1d --stepper rk4 --at-time 1", "--at-time needs --at-dt"},
        {"stability --system test1d --stepper rk4 --at-dt 1", "--at-dt is only used with"},
        {"stability --system test1d --stepper rk4 --at-time 1 --at-dt 0.1 --at-stepper q",
         "--at-stepper: unknown stepper 'q'"},
        {"stability --system test1d --stepper rk4 --eig qr", "--eig: 'qr' is not one of"},
        {"stability --system test1d --stepper rk4 --measure x", "--measure: 'x' is not one of"},
        {"region --stepper all --plane w", "--plane: 'w' is not one of z, oscillator"},
        {"region --stepper all --plane oscillator --zeta-min 1 --zeta-max 0",
         "--zeta-min 1 must be less than --zeta-max 0"},
        {"stability --system test1d --stepper rk4 --bogus", "'--bogus'"},
        {"amplification --stepper all --points 1", "--points: '1' must be at least 2"},
        {"amplification --stepper all --axis diagonal", "--axis: 'diagonal' is not one of"},
        {"amplification --stepper all --z-max x", "--z-max: 'x' is not a finite number"},
        {"region --stepper all --re-min 1 --re-max 0", "--re-min 1 must be less than --re-max 0"},
        {"region --stepper all --step 0.0001", "more than 4 million"},
        {"region", "--stepper is required"},
    };
    char out[4096], cmd[512];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(cmd, sizeof cmd, TSTEP_BIN " %s", cases[i].args);
        int code = run(cmd, out, sizeof out);
        ck_assert_msg(code == 2, "'%s' exited %d", cases[i].args, code);
        ck_assert_msg(strstr(out, cases[i].message), "'%s' said: %s", cases[i].args, out);
    }
}
END_TEST

START_TEST(cli_stability_csv_test1d)
{
    char out[4096];
    int code = run(TSTEP_BIN " stability --system test1d --param k=10 --stepper all "
                             "--format csv 2>/dev/null",
                   out, sizeof out);
    ck_assert_int_eq(code, 0);
    const char *csv = out; /* after a hand-out's notes on its skeletons (stderr) */
    while (strncmp(csv, "tstep stability: skipping '", 27) == 0 && strchr(csv, '\n'))
        csv = strchr(csv, '\n') + 1;
    ck_assert_msg(strncmp(csv, "stepper,dt_crit,", 16) == 0, "header: %s", out);
    static const struct {
        const char *name;
        double dt;
    } want[] = {{"forward-euler", 0.2}, {"midpoint", 0.2}, {"trapezoid", 0.2},
                {"rk4", 0.2785},        {"backward-euler", INFINITY},
                {"backward-euler-linear", INFINITY}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char key[64];
        if (!tests_runs(want[i].name)) /* a hand-out's skeleton or left-out stepper */
            continue;
        snprintf(key, sizeof key, "\n%s,", want[i].name);
        const char *row = strstr(out, key);
        ck_assert_msg(row, "no row for %s in %s", want[i].name, out);
        double dt = strtod(row + strlen(key), NULL);
        if (isinf(want[i].dt))
            ck_assert_msg(isinf(dt), "%s: %g", want[i].name, dt);
        else
            ck_assert_msg(fabs(dt / want[i].dt - 1.0) <= 0.01, "%s: %g", want[i].name, dt);
    }
}
END_TEST

/* No binding mode (a free mass: the spectrum is zero): the row says so
 * as the table and the JSON do (nan, nan, '-', and nan for w and zeta),
 * not lambda 0, 0. */
START_TEST(cli_stability_no_binding_mode)
{
    char out[4096];
    int code = run(TSTEP_BIN " stability --system oscillator --param k=0 --stepper rk4 "
                             "--format csv 2>/dev/null",
                   out, sizeof out);
    ck_assert_int_eq(code, 0);
    ck_assert_msg(strstr(out, "\nrk4,inf,inf,inf,1,inf,nan,nan,") &&
                      strstr(out, ",inf,-,scalar,nan,nan\n"),
                  "%s", out);
    code = run(TSTEP_BIN " stability --system oscillator --param k=0 --stepper rk4 "
                         "--format json 2>/dev/null",
               out, sizeof out);
    ck_assert_int_eq(code, 0);
    ck_assert_msg(strstr(out, "\"lambda_re\": null") && strstr(out, "\"stiffest\": null") &&
                      strstr(out, "\"w\": null") && strstr(out, "\"overdamped\": null"),
                  "%s", out);
}
END_TEST

START_TEST(cli_region_and_amplification_layout)
{
    char out[8192];
    /* 3 x 2 grid, two steppers: header, name comment, scan lines, blank lines */
    int code = run(TSTEP_BIN " region --stepper forward-euler,rk4 --re-min -1 --re-max 0 "
                             "--im-min 0 --im-max 1 --step 0.5",
                   out, sizeof out);
    ck_assert_int_eq(code, 0);
    ck_assert_str_eq(out, "# stepper re_z im_z abs_R\n"
                          "# forward-euler\n"
                          "forward-euler -1 0 0\n"
                          "forward-euler -1 0.5 0.5\n"
                          "forward-euler -1 1 1\n"
                          "\n"
                          "forward-euler -0.5 0 0.5\n"
                          "forward-euler -0.5 0.5 0.707106781186548\n"
                          "forward-euler -0.5 1 1.11803398874989\n"
                          "\n"
                          "forward-euler 0 0 1\n"
                          "forward-euler 0 0.5 1.11803398874989\n"
                          "forward-euler 0 1 1.4142135623731\n"
                          "\n"
                          "\n"
                          "# rk4\n"
                          "rk4 -1 0 0.375\n"
                          "rk4 -1 0.5 0.356466567336226\n"
                          "rk4 -1 1 0.372677996249965\n"
                          "\n"
                          "rk4 -0.5 0 0.606770833333333\n"
                          "rk4 -0.5 0.5 0.606049508657869\n"
                          "rk4 -0.5 1 0.619775253634219\n"
                          "\n"
                          "rk4 0 0 1\n"
                          "rk4 0 0.5 0.999894878372291\n"
                          "rk4 0 1 0.993905036823047\n"
                          "\n");
    code = run(TSTEP_BIN " amplification --stepper backward-euler --z-max 1 --points 3 "
                         "--format csv",
               out, sizeof out);
    ck_assert_int_eq(code, 0);
    ck_assert_str_eq(out, "stepper,z,re_R,im_R,abs_R\n"
                          "backward-euler,0,1,0,1\n"
                          "backward-euler,0.5,0.666666666666667,0,0.666666666666667\n"
                          "backward-euler,1,0.5,0,0.5\n");
}
END_TEST

/* The string (one end pinned, springs at rest, undamped) is a fixed-free
 * chain of N = n - 1 free masses m: its stiffest mode has
 *   mu = -(4 k / m) sin^2((2N - 1) pi / (2 (2N + 1))),  lambda = i sqrt(-mu),
 * and its vector is longitudinal (along the string, x).  The measured
 * dt_crit against this prediction: string_measured_vs_predicted. */
START_TEST(power_iteration_string_is_fixed_free_chain)
{
    ts_params p;
    ts_params_init(&p, ts_string.params);
    ck_assert_int_eq(ts_params_set(&p, "damping", "0"), TS_OK);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(&ts_string, &p, &sys), TS_OK);
    double k = ts_params_real(&p, "k"), m = ts_params_real(&p, "mass") / 10.0;
    int nfree = (int)ts_params_int(&p, "n") - 1;
    double pi = acos(-1.0);
    double sn = sin((2.0 * nfree - 1.0) * pi / (2.0 * (2.0 * nfree + 1.0)));
    double mu = -4.0 * k / m * sn * sn;
    double *u = malloc(sys->n * sizeof *u);
    ts_stiff_mode mode;
    ck_assert_int_eq(ts_stiffest_mode_vector(sys, &mode, u), TS_OK);
    ck_assert(mode.converged);
    ck_assert_double_eq_tol(mode.mu_re, mu, 1e-6 * fabs(mu));
    ck_assert_double_eq_tol(mode.im, sqrt(-mu), 1e-6 * sqrt(-mu));
    ck_assert_double_eq_tol(mode.re, 0.0, 1e-9 * sqrt(-mu));
    for (size_t i = 0; i < sys->n; i += 3) /* longitudinal: y and z parts vanish */
        ck_assert(fabs(u[i + 1]) + fabs(u[i + 2]) <= 1e-8 * ts_vec_norm_inf(sys->n, u));
    free(u);
    ts_system_free(sys);
}
END_TEST

/* a mode of |lambda| = 1e300: steps near 1e-300 are bisected without
 * underflow and the perturbation's size without overflow (it once stopped
 * with an internal message, "dt 0 and T 2.01e-298 must be > 0") */
START_TEST(cli_stability_huge_stiffness)
{
    char out[4096], err[4096];
    EXPECT("stability --system test1d --param k=1e300 --stepper forward-euler,rk4 --format csv",
           0, NULL);
    double crit, fail, pred;
    const char *row = strstr(out, "\nforward-euler,");
    ck_assert_ptr_nonnull(row);
    ck_assert_int_eq(sscanf(row, "\nforward-euler,%lf,%lf,%lf", &crit, &fail, &pred), 3);
    ck_assert_double_eq_tol(pred, 2e-300, 1e-310);
    ck_assert(crit <= 2e-300 && fail >= 2e-300);
    ck_assert_ptr_nonnull(strstr(out, "rk4,"));
}
END_TEST

/* a stepper that returns NaN (the example plugin with its update replaced)
 * fails its own row, named; the other steppers' rows are kept; exit 1 */
START_TEST(cli_stability_failed_stepper_keeps_rows)
{
    char out[8192], err[8192], cmd[1024];
    snprintf(cmd, sizeof cmd,
             "sed -e 's/    ts_system_set_y(sys, y);/    for (size_t i = 0; i < m; i++) y[i] = "
             "0.0 \\/ 0.0;\\n    ts_system_set_y(sys, y);/' -e 's/\"ralston\"/\"nanstep\"/' "
             "examples/ralston.c > build/nanstep.c && cc -shared -fPIC -Iinclude "
             "build/nanstep.c -o build/nanstep.so");
    ck_assert_int_eq(system(cmd), 0);
    EXPECT("--plugin build/nanstep.so stability --system oscillator --param k=100 --param c=2 "
           "--stepper rk4,nanstep,midpoint --format csv",
           1, "nanstep failed");
    ck_assert_ptr_nonnull(strstr(out, "\nrk4,0.29"));
    ck_assert_ptr_nonnull(strstr(out, "\nnanstep,nan,nan,nan,nan,nan,nan,nan,nan,0,0,failed,"));
    ck_assert_ptr_nonnull(strstr(out, "\nmidpoint,0.10"));
}
END_TEST

/* --growth-at: the fastest mode's growth per step and its e-folding time
 * against |1 + h lambda| for forward Euler (lambda = -1 + i sqrt 99) */
START_TEST(cli_stability_growth_at)
{
    char out[8192], err[8192];
    EXPECT("stability --system oscillator --param k=100 --param c=2 --stepper forward-euler,rk4 "
           "--growth-at 0.021",
           0, "at dt = 0.021: forward-euler: mode");
    double h = 0.021, re = 1.0 - h, im = h * sqrt(99.0), rho = hypot(re, im);
    const char *g = strstr(err, "grows ");
    ck_assert_ptr_nonnull(g);
    double got = strtod(g + 6, NULL);
    ck_assert_msg(fabs(got - rho) <= 1e-8, "growth %.12g, |1 + h lambda| %.12g", got, rho);
    const char *e = strstr(err, "e-folding time ");
    ck_assert_ptr_nonnull(e);
    double tau = strtod(e + strlen("e-folding time "), NULL);
    ck_assert_double_eq_tol(tau, h / log(rho), 1e-3 * h / log(rho));
    ck_assert_ptr_nonnull(strstr(err, "at dt = 0.021: rk4: every mode decays"));
}
END_TEST

/* Velocity Verlet on the critically damped oscillator (k = 1, c = 2): its
 * measured limit on the linearization, bisected to 0.1 %, brackets the run
 * map's exact crossing 2 sqrt 5 - 4 (the parasitic root grows from a small
 * start under the decaying seed; the growth test sees it from the trough). */
START_TEST(verlet_measured_brackets_closed_form)
{
    static const char *const osc[] = {"k=1", "c=2", NULL};
    ts_params p;
    params_of(&ts_oscillator, osc, &p);
    ts_system *sys = make(&ts_oscillator, osc);
    ts_spectrum sp;
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_DENSE, &sp), TS_OK);
    ts_stability_options o = ts_default_stability_options();
    o.rel_tol = 1e-3;
    ts_stability_study_result r;
    ts_stability_problem pb = {&ts_oscillator, &p, ts_stepper_find("verlet"), NULL};
    ck_assert_int_eq(ts_stability_study(&pb, &o, sys, &sp, &r), TS_OK);
    double exact = 2.0 * sqrt(5.0) - 4.0;
    ck_assert_msg(r.result.kind == TS_CRIT_FOUND && r.result.dt_crit <= exact &&
                      exact <= r.result.dt_fail && r.result.dt_fail <= 1.0011 * r.result.dt_crit,
                  "verlet: [%.9g, %.9g] against %.9g", r.result.dt_crit, r.result.dt_fail, exact);
    ts_spectrum_free(&sp);
    ts_system_free(sys);
}
END_TEST

/* Sketches of len states of the sequence d_{k+1} = G d_k (G 2 x 2, row
 * major) from d_0 = (1, 0), as the stability runs take them. */
static void sketch_map(const double g[4], int len, double *s)
{
    double x = 1.0, v = 0.0;
    for (int k = 0; k < len; k++) {
        double xn = g[0] * x + g[1] * v, vn = g[2] * x + g[3] * v;
        x = xn, v = vn;
        for (int c = 0; c < TS_RECURRENCE_WIDTH; c++)
            s[k * TS_RECURRENCE_WIDTH + c] =
                ts_recurrence_weight(c, 0) * x + ts_recurrence_weight(c, 1) * v;
    }
}

/* Prony's fit against maps whose roots are known: symplectic Euler on
 * x'' = -x, G = [1 - h^2, h; -h, 1] (det 1, trace t = 2 - h^2: roots on
 * the unit circle for h < 2, else of largest modulus (|t| + sqrt(t^2 -
 * 4)) / 2); three geometric modes 0.9^k, (-1.05)^k, 0.5^k (order 3,
 * radius 1.05); one (order 1); samples that follow no recurrence; and
 * samples too few for an order that would fit them. */
START_TEST(recurrence_roots_of_known_maps)
{
    enum { W = TS_RECURRENCE_WIDTH, L = TS_RECURRENCE_SAMPLES };
    double s[L * W];
    ts_recurrence rc;
    static const double hs[] = {0.3, 1.5, 1.615, 1.9, 1.99, 1.9999, 2.01, 2.5};
    for (size_t i = 0; i < sizeof hs / sizeof *hs; i++) {
        double h = hs[i], t = 2.0 - h * h;
        double exact = fabs(t) <= 2.0 ? 1.0 : 0.5 * (fabs(t) + sqrt(t * t - 4.0));
        sketch_map((const double[]){1.0 - h * h, h, -h, 1.0}, L, s);
        /* order 1 once the dominant root has swamped the other (h = 2.5:
         * roots -4 and -1/4) */
        int order = ts_recurrence_fit(s, L, W, TS_RECURRENCE_MAX_ORDER, 1e-8, &rc);
        double rho = ts_recurrence_radius(&rc);
        ck_assert_msg(order == (h < 2.4 ? 2 : 1) && fabs(rho - exact) <= 1e-12 * exact,
                      "h %g: order %d, %.17g against %.17g", h, order, rho, exact);
    }
    static const double r[3] = {0.9, -1.05, 0.5};
    for (int k = 0; k < L; k++)
        for (int c = 0; c < W; c++) {
            double z = 0.0;
            for (int m = 0; m < 3; m++)
                z += (1.0 + c + 2.0 * m * m) * pow(r[m], k);
            s[k * W + c] = z;
        }
    ck_assert_int_eq(ts_recurrence_fit(s, L, W, TS_RECURRENCE_MAX_ORDER, 1e-8, &rc), 3);
    ck_assert_msg(fabs(ts_recurrence_radius(&rc) - 1.05) <= 1e-10, "three modes: %.17g",
                  ts_recurrence_radius(&rc));
    ck_assert_int_eq(ts_recurrence_fit(s, L, W, 2, 1e-8, &rc), 0); /* not of order 2 */
    /* 5 samples give (5 - 3) W = 8 equations for order 3, 4 give W = 4:
     * fewer than 2 p = 6, so no order is fitted */
    ck_assert_int_eq(ts_recurrence_fit(s, 5, W, TS_RECURRENCE_MAX_ORDER, 1e-8, &rc), 3);
    ck_assert_int_eq(ts_recurrence_fit(s, 4, W, TS_RECURRENCE_MAX_ORDER, 1e-8, &rc), 0);
    ck_assert_int_eq(rc.order, 0);
    for (int k = 0; k < L; k++)
        for (int c = 0; c < W; c++)
            s[k * W + c] = (c + 1.0) * pow(-0.7, k);
    ck_assert_int_eq(ts_recurrence_fit(s, L, W, TS_RECURRENCE_MAX_ORDER, 1e-8, &rc), 1);
    ck_assert_msg(fabs(ts_recurrence_radius(&rc) - 0.7) <= 1e-14, "one mode: %.17g",
                  ts_recurrence_radius(&rc));
    ck_assert_int_eq(ts_recurrence_fit(s, 3, W, TS_RECURRENCE_MAX_ORDER, 1e-8, &rc), 1);
    ts_fill_pseudo_random(L * W, 5u, s);
    ck_assert_int_eq(ts_recurrence_fit(s, L, W, TS_RECURRENCE_MAX_ORDER, 1e-8, &rc), 0);
}
END_TEST

/* The peak of a recurrence's powers: the double root -1 of (z + 1)^2,
 * s_{k+2} = -s_k - 2 s_{k+1}, has C^k = (-1)^k [1 - k, -k; k, 1 + k], of
 * norm sqrt(2 + 4 k^2), growing without bound; a simple pair e^(+-i th)
 * (s_{k+2} = -s_k + 2 cos th s_{k+1}) has bounded powers, whose peak over
 * a run that completes the swing is the peak over any longer run. */
START_TEST(recurrence_peak_tells_a_double_root)
{
    ts_recurrence jordan = {.order = 2, .coef = {-1.0, -2.0}};
    static const long ns[] = {0, 1, 7, 100, 400};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        double n = (double)ns[i], exact = fmax(sqrt(2.0 + 4.0 * n * n), sqrt(2.0));
        double peak = ts_recurrence_peak(&jordan, ns[i]);
        ck_assert_msg(fabs(peak - exact) <= 1e-12 * exact, "n %ld: %.17g against %.17g", ns[i],
                      peak, exact);
    }
    static const double gaps[] = {0.5, 0.2, 0.1};
    for (size_t i = 0; i < sizeof gaps / sizeof *gaps; i++) {
        ts_recurrence pair = {.order = 2, .coef = {-1.0, 2.0 * cos(PI - gaps[i])}};
        double p1 = ts_recurrence_peak(&pair, 100), p4 = ts_recurrence_peak(&pair, 400);
        ck_assert_msg(p1 > 1.0 / gaps[i] && p4 <= 1.01 * p1, "gap %g: peaks %.17g, %.17g",
                      gaps[i], p1, p4);
    }
    ts_recurrence far = {.order = 1, .coef = {1e10}};
    ck_assert(isinf(ts_recurrence_peak(&far, 40)));
}
END_TEST

/* Symplectic Euler and Verlet on the undamped oscillator (k = 1): their run
 * map has its roots on the unit circle up to h = 2 exactly, a double root
 * -1 at 2 (|d| grows like the step count) and a root outside past it, so
 * every run below 2 is bounded, however elongated the orbit (the windows'
 * maxima beat there), every run from 2 on is not, and the measured bracket
 * holds 2.  The seed has a velocity part: at h = 2 Verlet's map is
 * [-1, 2; 0, -1] on (x, v), and a seed along x alone is its eigenvector. */
START_TEST(partitioned_undamped_limit_is_two)
{
    static const char *const osc[] = {"k=1", NULL};
    static const char *const names[] = {"symplectic-euler", "verlet"};
    ts_params p;
    params_of(&ts_oscillator, osc, &p);
    ts_system *sys = make(&ts_oscillator, osc);
    ts_spectrum sp;
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_DENSE, &sp), TS_OK);
    for (int i = 0; i < 2; i++) {
        ts_stability_problem pb = {&ts_oscillator, &p, ts_stepper_find(names[i]), NULL};
        ts_stability_options o = ts_default_stability_options();
        ts_stability_verdict v;
        o.seed = (const double[]){1.0};
        o.seed_v = (const double[]){0.375};
        static const double past[] = {2.0, 2.0000000001, 2.001};
        for (int j = 0; j < 403; j++) {
            double h = j < 400 ? 1.5 + 0.499 * j / 399.0 : past[j - 400];
            ck_assert_int_eq(ts_stability_bounded(&pb, &o, 64.0 * PI, h, &v), TS_OK);
            ck_assert_msg(v.bounded == (h < 2.0), "%s at h = %.9g: bounded %d", names[i], h,
                          v.bounded);
        }
        ts_stability_study_result r;
        ck_assert_int_eq(ts_stability_study(&pb, &o, sys, &sp, &r), TS_OK);
        ck_assert_msg(r.result.kind == TS_CRIT_FOUND && r.result.dt_crit < 2.0 &&
                          2.0 < r.result.dt_fail && r.result.dt_fail <= 1.0051 * r.result.dt_crit,
                      "%s: [%.9g, %.9g]", names[i], r.result.dt_crit, r.result.dt_fail);
    }
    ts_spectrum_free(&sp);
    ts_system_free(sys);
}
END_TEST

/* An overdamped oscillator x'' = -w^2 x - 2 zeta w x' (zeta > 1) has two
 * real eigenvalues, lambda_1 lambda_2 = w^2; symplectic Euler's map on it,
 * determinant 1 - 2 zeta h w and trace 2 - 2 zeta h w - (h w)^2, is stable
 * up to h w = 2 (sqrt(1 + zeta^2) - zeta).  The prediction takes the
 * binding real eigenvalue as that oscillator (not as a critically damped
 * one of w = |lambda|), and the measured brackets, symplectic Euler's and
 * Verlet's, hold it. */
START_TEST(overdamped_mode_is_its_own_oscillator)
{
    static const struct {
        const char *k, *c;
        double w, zeta;
    } cases[] = {{"k=1", "c=3", 1.0, 1.5}, {"k=4", "c=10", 2.0, 2.5}, {"k=100", "c=30", 10.0, 1.5}};
    static const char *const names[] = {"symplectic-euler", "verlet"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *const osc[] = {cases[i].k, cases[i].c, NULL};
        ts_params p;
        params_of(&ts_oscillator, osc, &p);
        ts_system *sys = make(&ts_oscillator, osc);
        ts_spectrum sp;
        ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_DENSE, &sp), TS_OK);
        double w = cases[i].w, z = cases[i].zeta;
        double exact = 2.0 * (sqrt(1.0 + z * z) - z) / w;
        for (int j = 0; j < 2; j++) {
            ts_stability_problem pb = {&ts_oscillator, &p, ts_stepper_find(names[j]), NULL};
            ts_stability_options o = ts_default_stability_options();
            ts_stability_study_result r;
            ck_assert_int_eq(ts_stability_study(&pb, &o, sys, &sp, &r), TS_OK);
            const ts_binding *b = &r.binding;
            ck_assert_msg(b->overdamped && fabs(b->w - w) <= 1e-9 * w &&
                              fabs(b->zeta - z) <= 1e-9 * z,
                          "%s %s %s: overdamped %d, w %.17g, zeta %.17g", names[j], cases[i].k,
                          cases[i].c, b->overdamped, b->w, b->zeta);
            if (j == 0)
                ck_assert_msg(fabs(b->dt_pred - exact) <= 1e-9 * exact, "%s %s: %.17g against %.17g",
                              cases[i].k, cases[i].c, b->dt_pred, exact);
            ck_assert_msg(r.result.kind == TS_CRIT_FOUND && r.result.dt_crit <= b->dt_pred &&
                              b->dt_pred <= r.result.dt_fail,
                          "%s %s %s: [%.9g, %.9g] against %.9g", names[j], cases[i].k,
                          cases[i].c, r.result.dt_crit, r.result.dt_fail, b->dt_pred);
        }
        ts_spectrum_free(&sp);
        ts_system_free(sys);
    }
}
END_TEST

/* The implicit steppers are A-stable (Hairer & Wanner, Solving ODEs II,
 * IV.3; implicit midpoint and Crank-Nicolson neutral on an undamped mode):
 * each measures inf on the undamped and on a lightly damped oscillator,
 * with the default Newton stop (10^-8, absolute below |v| = 1), which the
 * seed of the runs on the linearization lies far above. */
START_TEST(implicit_steppers_measure_inf_on_the_oscillator)
{
    static const char *const undamped[] = {"k=1", NULL}, *const damped[] = {"k=4", "c=0.1", NULL};
    static const char *const *const systems[] = {undamped, damped};
    static const char *const names[] = {"backward-euler",    "backward-euler-linear",
                                        "backward-euler-opt", "bdf2",
                                        "implicit-midpoint", "crank-nicolson"};
    for (int k = 0; k < 2; k++) {
        ts_params p;
        params_of(&ts_oscillator, systems[k], &p);
        ts_system *sys = make(&ts_oscillator, systems[k]);
        ts_spectrum sp;
        ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_DENSE, &sp), TS_OK);
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            ts_stability_problem pb = {&ts_oscillator, &p, ts_stepper_find(names[i]), NULL};
            ts_stability_options o = ts_default_stability_options();
            ts_stability_study_result r;
            ck_assert_int_eq(ts_stability_study(&pb, &o, sys, &sp, &r), TS_OK);
            ck_assert_msg(r.result.kind == TS_CRIT_INF, "%s on %s: kind %d, dt_crit %g",
                          names[i], systems[k][0], (int)r.result.kind, r.result.dt_crit);
        }
        ts_spectrum_free(&sp);
        ts_system_free(sys);
    }
}
END_TEST

/* A plain run of `type` at step h over [0, T] from the initial state: it
 * ends without failing and gains less than tol of energy (the systems are
 * damped: a run past its limit gains, a clean one keeps or loses). */
static void plain_run_clean(const ts_system_type *stype, const char *const *pairs,
                            const ts_stepper_type *type, double h, double T, double tol)
{
    ts_system *sys = make(stype, pairs);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    double k0, p0, k1, p1;
    ck_assert_int_eq(ts_system_energy(sys, 0.0, &k0, &p0), TS_OK);
    ts_run_options ro = ts_default_run_options();
    ro.dt = h, ro.t_end = T, ro.steps = (long)ceil(T / h - 1e-9), ro.every = ro.steps;
    ck_assert_int_eq(ts_run(sys, st, &ro, NULL, NULL, NULL), TS_OK);
    ck_assert_int_eq(ts_system_energy(sys, T, &k1, &p1), TS_OK);
    ck_assert_msg(k1 + p1 - k0 - p0 <= tol, "%s %s at %g over %g: energy %g -> %g",
                  stype->name, type->name, h, T, k0 + p0, k1 + p1);
    ts_stepper_free(st);
    ts_system_free(sys);
}

/* --measure run on the string, hair and an 8 x 8 cloth: forward Euler's and
 * rk4's limits measured on runs of the system itself within 2 % of the
 * prediction at the initial state (T is 32 periods of the binding mode,
 * before the state's own motion separates the runs), and a plain run at 0.9
 * of the measured limit over that T ends cleanly: its energy gains less
 * than 1 % of the system's m g L (the string 0.98 J, hair 0.012 J, the
 * cloth 4.9 J; forward Euler's own drift on the swinging string, whose
 * transverse modes it cannot keep, is 9.4e-4 J over that T). */
START_TEST(run_measure_string_hair_and_cloth)
{
    static const char *const cloth8[] = {"nx=8", "ny=8", NULL};
    static const struct {
        const ts_system_type *stype;
        const char *const *pairs;
        double mgl;
    } sys[] = {{&ts_string, NULL, 0.1 * 9.81},
               {&ts_hair, NULL, 0.005 * 9.81 * 0.25},
               {&ts_cloth, cloth8, 0.5 * 9.81}};
    static const char *const names[] = {"forward-euler", "rk4"};
    for (size_t i = 0; i < sizeof sys / sizeof *sys; i++)
        for (size_t j = 0; j < sizeof names / sizeof *names; j++) {
            const ts_stepper_type *type = ts_stepper_find(names[j]);
            ts_params p;
            params_of(sys[i].stype, sys[i].pairs, &p);
            ts_system *s0 = make(sys[i].stype, sys[i].pairs);
            ts_spectrum sp;
            ck_assert_int_eq(ts_spectrum_compute(s0, 0.0, TS_EIG_DENSE, &sp), TS_OK);
            ts_stability_options o = ts_default_stability_options();
            o.linearized = 0;
            ts_stability_study_result r;
            ts_stability_problem pb = {sys[i].stype, &p, type, NULL};
            ck_assert_int_eq(ts_stability_study(&pb, &o, s0, &sp, &r), TS_OK);
            double pred = r.binding.dt_pred, got = r.result.dt_crit;
            ck_assert_msg(r.result.kind == TS_CRIT_FOUND && fabs(got / pred - 1.0) <= 0.02,
                          "%s %s: measured %g (kind %d), predicted %g", sys[i].stype->name,
                          names[j], got, r.result.kind, pred);
            plain_run_clean(sys[i].stype, sys[i].pairs, type, 0.9 * got, r.t_end,
                            1e-2 * sys[i].mgl);
            ts_spectrum_free(&sp);
            ts_system_free(s0);
        }
}
END_TEST

/* --measure run on the string: the prediction along forward Euler's runs
 * reaches 0 on an undamped transverse mode (gravity's tension, no damping
 * across the springs), said on standard error and in the json; rk4's stays
 * within 1 % of its prediction at the start. */
START_TEST(cli_stability_along_the_runs)
{
    char out[1 << 14], err[8192];
    EXPECT("stability --system string --stepper forward-euler,rk4 --measure run --format json",
           0, "along the runs: forward-euler's prediction at 8 states");
    ck_assert_ptr_nonnull(strstr(err, "true limit there is 0"));
    ck_assert_msg(json_valid(out, NULL), "not JSON: %s", out);
    const char *fe = strstr(out, "\"along\"");
    ck_assert_ptr_nonnull(fe);
    ck_assert(json_number_after(fe, "dt_pred_min", NULL) == 0.0 &&
              json_number_after(fe, "lambda_re", NULL) == 0.0 &&
              json_number_after(fe, "lambda_im", NULL) > 0.0);
    const char *rk = strstr(fe + 1, "\"along\"");
    ck_assert_ptr_nonnull(rk);
    double lo = json_number_after(rk, "dt_pred_min", NULL),
           hi = json_number_after(rk, "dt_pred_max", NULL),
           p0 = json_number_after(strstr(out, "\"stepper\": \"rk4\""), "dt_pred", NULL);
    ck_assert_msg(lo > 0.99 * p0 && hi < 1.01 * p0, "rk4 along [%g, %g], at the start %g", lo,
                  hi, p0);
    EXPECT("stability --system string --stepper rk4 --format json", 0, NULL);
    ck_assert_ptr_null(strstr(out, "\"along\"")); /* on the linearization: none */
}
END_TEST

/* --- the map a run iterates: closed forms ------------------------------------------ */

/* Velocity Verlet with its kept force on x'' = -x - 2 zeta x' at step h, the
 * 3 x 3 map on (x, v, a) written from its formula (column-major):
 *   v' = v + h/2 a, x1 = x + h v', a1 = -x1 - 2 zeta (v + h a), v1 = v' + h/2 a1 */
static void verlet_map3(double h, double zeta, double m[9])
{
    for (int j = 0; j < 3; j++) {
        double x = j == 0, v = j == 1, a = j == 2;
        double vh = v + 0.5 * h * a, x1 = x + h * vh;
        double a1 = -x1 - 2.0 * zeta * (v + h * a);
        m[3 * j] = x1, m[3 * j + 1] = vh + 0.5 * h * a1, m[3 * j + 2] = a1;
    }
}

static double spectral_radius(double *m, int n)
{
    double wr[8], wi[8], rho = 0.0;
    ck_assert_int_eq(LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', 'N', n, m, n, wr, wi, NULL, 1, NULL, 1),
                     0);
    for (int i = 0; i < n; i++)
        rho = fmax(rho, hypot(wr[i], wi[i]));
    return rho;
}

/* Verlet's run map at zeta = 1 crosses rho = 1 at hw = 2 sqrt 5 - 4 = 0.4721
 * (bisection on the closed-form 3 x 3 map), not at 1.000 where its map from a
 * fresh start crosses; symplectic Euler's 2 x 2 map at 2 sqrt 2 - 2 = 0.8284;
 * Verlet on the scalar equation (Heun) at exactly 2 */
START_TEST(run_map_verlet_and_symplectic_euler_closed_forms)
{
    const ts_stepper_type *verlet = tests_stepper("verlet"),
                          *se = tests_stepper("symplectic-euler");
    /* verlet and symplectic Euler on the second-order test equation, verlet on the scalar one */
    ts_mode_test v2 = {verlet, NULL, 1}, se2 = {se, NULL, 1}, v1 = {verlet, NULL, 0};
    double lo = 0.1, hi = 1.0, m[9];
    while (hi - lo > 1e-13) {
        double mid = 0.5 * (lo + hi);
        verlet_map3(mid, 1.0, m);
        *(spectral_radius(m, 3) > 1.0 + 1e-13 ? &hi : &lo) = mid;
    }
    ck_assert_double_eq_tol(lo, 2.0 * sqrt(5.0) - 4.0, 1e-9);
    double r;
    ck_assert_int_eq(ts_stability_radius(&v2, -1.0, 0.0, &r), TS_OK);
    ck_assert_msg(fabs(r - lo) <= 1e-8, "verlet run-map radius %.12g, closed form %.12g", r, lo);
    /* the eigenvalues themselves, at hw = 1, zeta = 0.3 */
    ts_run_map rm;
    double zeta = 0.3, w = 1.0;
    ck_assert_int_eq(ts_mode_run_map(&v2, -zeta * w, sqrt(1 - zeta * zeta) * w, &rm), TS_OK);
    verlet_map3(1.0, zeta, m);
    double rho3 = spectral_radius(m, 3);
    ck_assert_msg(fabs(rm.rho - rho3) <= 1e-10, "run map rho %.15g, 3x3 %.15g", rm.rho, rho3);
    /* the fresh-start map crosses at 1.000 */
    double map[4], rre, rim;
    ck_assert_int_eq(ts_oscillator_amplification(verlet, NULL, 0.999, 1.0, &rre, &rim), TS_OK);
    ck_assert(hypot(rre, rim) <= 1.0);
    ck_assert_int_eq(ts_oscillator_amplification(verlet, NULL, 1.001, 1.0, &rre, &rim), TS_OK);
    ck_assert(hypot(rre, rim) > 1.0);
    (void)map;
    ck_assert_int_eq(ts_stability_radius(&se2, -1.0, 0.0, &r), TS_OK);
    ck_assert_double_eq_tol(r, 2.0 * sqrt(2.0) - 2.0, 1e-10);
    ck_assert_int_eq(ts_stability_radius(&v1, -1.0, 0.0, &r), TS_OK);
    ck_assert_double_eq_tol(r, 2.0, 1e-10);
    ck_assert_int_eq(ts_stability_radius(&v2, 0.0, 1.0, &r), TS_OK);
    ck_assert_double_eq_tol(r, 2.0, 1e-8);
}
END_TEST

/* BDF2's run map on y' = lambda y: the roots of its recurrence
 * (1 - 2z/3) rho^2 - 4/3 rho + 1/3 = 0, z = h lambda, by the quadratic formula */
START_TEST(run_map_bdf2_roots)
{
    const ts_stepper_type *bdf2 = tests_stepper("bdf2");
    ts_solver_options opt = ts_default_solver_options();
    opt.newton_tol = 1e-13;
    ts_mode_test test = {bdf2, &opt, 0};
    static const double z[][2] = {{-1.0, 0.0}, {0.0, 1.0}, {-0.5, 2.0}, {-3.0, 0.7}, {0.0, 5.0}};
    for (size_t k = 0; k < sizeof z / sizeof *z; k++) {
        double complex zz = z[k][0] + I * z[k][1], a = 1.0 - 2.0 * zz / 3.0;
        double complex sq = csqrt(16.0 / 9.0 - 4.0 * a / 3.0);
        double complex r1 = (4.0 / 3.0 + sq) / (2.0 * a), r2 = (4.0 / 3.0 - sq) / (2.0 * a);
        double want = fmax(cabs(r1), cabs(r2));
        ts_run_map m;
        ck_assert_int_eq(ts_mode_run_map(&test, z[k][0], z[k][1], &m), TS_OK);
        ck_assert_msg(fabs(m.rho - want) <= 1e-7, "z = %g%+gi: rho %.12g, roots give %.12g",
                      z[k][0], z[k][1], m.rho, want);
        /* every root found is one of the two (or a conjugate, on the real system) */
        for (int j = 0; j < m.degree; j++) {
            double complex g = m.re[j] + I * m.im[j];
            double e = fmin(fmin(cabs(g - r1), cabs(g - r2)),
                            fmin(cabs(g - conj(r1)), cabs(g - conj(r2))));
            ck_assert_msg(e <= 1e-6, "z = %g%+gi: root %g%+gi is not BDF2's", z[k][0], z[k][1],
                          m.re[j], m.im[j]);
        }
    }
    double r;
    ck_assert_int_eq(ts_stability_radius(&(ts_mode_test){bdf2, NULL, 0}, -1.0, 0.0, &r), TS_OK);
    ck_assert(isinf(r)); /* A-stable */
}
END_TEST

Suite *stability_suite(void)
{
    Suite *s = suite_create("stability");
    int nsteppers = 0;
    while (ts_stepper_at(nsteppers))
        nsteppers++;
    TCase *tc = tcase_create("amplification");
    tcase_add_loop_test(tc, amplification_matches_closed_form, 0,
                        (int)(sizeof expected_names / sizeof *expected_names));
    tcase_add_test(tc, amplification_complex_forward_euler_and_backward_euler);
    suite_add_tcase(s, tc);
    tc = tcase_create("region");
    tcase_add_loop_test(tc, region_contains_minus_one_and_explicit_ends, 0, nsteppers);
    tcase_add_test(tc, region_minus_three_outside_for_builtin_explicit);
    tcase_add_test(tc, intervals_of_builtin_steppers);
    tcase_add_test(tc, run_map_verlet_and_symplectic_euler_closed_forms);
    tcase_add_test(tc, run_map_bdf2_roots);
    suite_add_tcase(s, tc);
    tc = tcase_create("stiffest mode");
    tcase_add_test(tc, power_iteration_oscillator_is_k_over_m);
    tcase_add_test(tc, power_iteration_string_is_fixed_free_chain);
    tcase_add_test(tc, power_iteration_complex_test_equation);
    tcase_add_test(tc, power_iteration_chain);
    suite_add_tcase(s, tc);
    tc = tcase_create("critical step");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bisection_on_test1d_k10);
    tcase_add_test(tc, short_t_gives_no_inf_verdict);
    tcase_add_test(tc, huge_z_fails_instead_of_r_one);
    tcase_add_loop_test(tc, measured_matches_predicted_test1d, 0, nsteppers);
    tcase_add_test(tc, bounded_definition);
    tcase_add_test(tc, chain_measured_vs_predicted);
    tcase_add_test(tc, transient_growth_is_not_instability);
    tcase_add_test(tc, string_rk4_both_measurements);
    tcase_add_test(tc, verlet_measured_brackets_closed_form);
    tcase_add_test(tc, recurrence_roots_of_known_maps);
    tcase_add_test(tc, recurrence_peak_tells_a_double_root);
    tcase_add_test(tc, partitioned_undamped_limit_is_two);
    tcase_add_test(tc, implicit_steppers_measure_inf_on_the_oscillator);
    tcase_add_test(tc, overdamped_mode_is_its_own_oscillator);
    tcase_add_test(tc, own_growth_is_not_the_steppers);
    tcase_add_test(tc, weakly_damped_limit_is_t_limited);
    tcase_add_test(tc, growing_span_kept_where_not_whole);
    tcase_add_test(tc, first_order_multistep_carries_state);
    tcase_add_test(tc, run_measure_string_hair_and_cloth);
    suite_add_tcase(s, tc);
    tc = tcase_create("commands");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, cli_bad_input);
    tcase_add_test(tc, cli_stability_no_binding_mode);
    tcase_add_test(tc, cli_stability_huge_stiffness);
    tcase_add_test(tc, cli_stability_failed_stepper_keeps_rows);
    tcase_add_test(tc, cli_stability_growth_at);
    tcase_add_test(tc, cli_stability_along_the_runs);
    tcase_add_test(tc, cli_region_and_amplification_layout);
    suite_add_tcase(s, tc);
    tc = tcase_create("end to end");
    tcase_set_tags(tc, "slow");
    tcase_add_test(tc, oscillator_rk4_limit_and_euler_t_limited);
    tcase_add_test(tc, string_measured_vs_predicted);
    tcase_add_test(tc, cli_stability_csv_test1d);
    suite_add_tcase(s, tc);
    return s;
}

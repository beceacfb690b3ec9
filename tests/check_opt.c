/* backward-euler-opt: the exact backward Euler step on linear problems,
 * agreement with backward-euler on a stiff nonlinear chain, a line search
 * that makes F decrease at every Newton iterate, and refusal of systems it
 * cannot minimize. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "chain.h"
#include "tests.h"
#include "tstep/stability.h"
#include "tstep/linalg.h"
#include "tstep/stepper.h"

static ts_system *make_system(const ts_system_type *type, const char *const *pairs)
{
    ts_params p;
    ts_params_init(&p, type->params);
    for (; pairs && *pairs; pairs++)
        ck_assert_int_eq(ts_params_set_pair(&p, *pairs), TS_OK);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(type, &p, &sys), TS_OK);
    return sys;
}

/* One step of `type` on `sys` from t = 0. */
static void one_step(const ts_stepper_type *type, ts_system *sys, double h)
{
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, h), TS_OK);
    ck_assert_int_ge(st->last.newton_iters, 1);
    ck_assert_int_ge(st->last.linear_iters, 1);
    ts_stepper_free(st);
}

static const double steps[] = {0.01, 0.1, 1.0, 10.0};

/* m x'' = -k x: x1 = (x0 + h v0) / (1 + h^2 k/m), v1 = (x1 - x0)/h */
START_TEST(oscillator_step_is_exact_backward_euler)
{
    double h = steps[_i], k = 4, m = 2, x0 = 1, v0 = 0.5;
    const char *pairs[] = {"k=4", "m=2", "x0=1", "v0=0.5", NULL};
    ts_system *opt = make_system(&ts_oscillator, pairs), *be = make_system(&ts_oscillator, pairs);
    one_step(tests_stepper("backward-euler-opt"), opt, h);
    one_step(tests_stepper("backward-euler"), be, h);
    double x1 = (x0 + h * v0) / (1.0 + h * h * k / m), v1 = (x1 - x0) / h;
    ck_assert_double_eq_tol(opt->x[0], x1, 1e-13 * fmax(1.0, fabs(x1)));
    ck_assert_double_eq_tol(opt->v[0], v1, 1e-12 * fmax(1.0, fabs(v1)));
    ck_assert_double_eq_tol(opt->x[0], be->x[0], 1e-10);
    ck_assert_double_eq_tol(opt->v[0], be->v[0], 1e-10);
    ts_system_free(opt);
    ts_system_free(be);
}
END_TEST

/* order 1, x' = -k x as the gradient flow of E = k x^2/2: x1 = x0 / (1 + h k) */
START_TEST(test1d_step_is_exact_backward_euler)
{
    double h = steps[_i];
    const char *pairs[] = {"k=3", "x0=2", NULL};
    ts_system *sys = make_system(&ts_test1d, pairs);
    one_step(tests_stepper("backward-euler-opt"), sys, h);
    ck_assert_double_eq_tol(sys->x[0], 2.0 / (1.0 + 3.0 * h), 1e-13);
    ts_system_free(sys);
}
END_TEST

/* {drag, fast path, clamped fast path}: the same steps as backward-euler */
static const struct {
    double drag;
    int fast, clamp;
} chain_cases[] = {{0, 0, 0}, {0, 1, 0}, {0, 1, 1}, {0.5, 0, 0}, {0.5, 1, 0}};

START_TEST(stiff_chain_agrees_with_backward_euler)
{
    chain_options o = chain_default_options();
    o.particles = 4, o.k = 1e3, o.stretch = 1.2;
    o.drag = chain_cases[_i].drag, o.fast_path = chain_cases[_i].fast;
    o.clamp = chain_cases[_i].clamp;
    ts_system *a, *b;
    ck_assert_int_eq(chain_new(&o, &a), TS_OK);
    ck_assert_int_eq(chain_new(&o, &b), TS_OK);
    ts_stepper *sa, *sb;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler-opt"), a, NULL, &sa), TS_OK);
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler"), b, NULL, &sb), TS_OK);
    double h = 0.02, moved = 0.0;
    for (int k = 0; k < 25; k++) {
        ck_assert_int_eq(ts_stepper_step(sa, a, k * h, h), TS_OK);
        ck_assert_int_eq(ts_stepper_step(sb, b, k * h, h), TS_OK);
        /* each within about newton-tol (1e-8) times max(1, |v|) of the exact
         * step, and the chain's |v| is up to 6 */
        double agree = 4e-8 * fmax(1.0, ts_vec_norm_inf(b->n, b->v));
        ck_assert_double_le(ts_vec_dist_inf(a->n, a->x, b->x), agree);
        ck_assert_double_le(ts_vec_dist_inf(a->n, a->v, b->v), agree);
    }
    for (size_t i = 2; i < a->n; i++)
        moved = fmax(moved, fabs(a->x[i] - b->x[i]) + fabs(a->v[i]));
    ck_assert_double_gt(moved, 0.1);                      /* the chain really moved */
    ck_assert(a->x[0] == 0.0 && a->x[1] == 0.0);          /* pinned particle stays */
    ck_assert(a->v[0] == 0.0 && a->v[1] == 0.0);
    ck_assert_int_ge(sa->total.newton_iters, 25);
    ck_assert_int_ge(sa->total.linear_iters, sa->total.newton_iters);
    ts_stepper_free(sa);
    ts_stepper_free(sb);
    ts_system_free(a);
    ts_system_free(b);
}
END_TEST

/* One particle in a pseudo-Huber well, E = k a^2 (sqrt(1 + (x/a)^2) - 1):
 * far from 0 the force is nearly constant and the curvature tiny, so a full
 * Newton step from x_pred overshoots and F rises; the line search must
 * backtrack.  Every position the forces are evaluated at is logged. */
typedef struct {
    ts_system base;
    double k, a;
    int nlog, energy_calls;
    double log[256];
} huber;

static const ts_system_type huber_type = {.name = "huber", .summary = "pseudo-Huber well"};

static void huber_destroy(ts_system *sys)
{
    ts_system_release(sys);
    free(sys);
}

static int huber_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    huber *s = (huber *)sys;
    (void)t, (void)v;
    if (s->nlog < 256)
        s->log[s->nlog++] = x[0];
    f[0] = -s->k * x[0] / sqrt(1.0 + x[0] * x[0] / (s->a * s->a));
    return TS_OK;
}

static int huber_dfdx(ts_system *sys, double t, const double *x, const double *v,
                      const double *u, double *out)
{
    huber *s = (huber *)sys;
    (void)t, (void)v;
    out[0] = -s->k * pow(1.0 + x[0] * x[0] / (s->a * s->a), -1.5) * u[0];
    return TS_OK;
}

static int huber_dfdv(ts_system *sys, double t, const double *x, const double *v,
                      const double *u, double *out)
{
    (void)sys, (void)t, (void)x, (void)v, (void)u;
    out[0] = 0.0;
    return TS_OK;
}

static double huber_potential(const huber *s, double x)
{
    return s->k * s->a * s->a * (sqrt(1.0 + x * x / (s->a * s->a)) - 1.0);
}

static int huber_energy(ts_system *sys, double t, const double *x, const double *v,
                        double *kinetic, double *potential)
{
    huber *s = (huber *)sys;
    (void)t;
    s->energy_calls++;
    *kinetic = 0.5 * sys->mass[0] * v[0] * v[0];
    *potential = huber_potential(s, x[0]);
    return TS_OK;
}

static const ts_system_ops huber_ops = {.destroy = huber_destroy, .forces = huber_forces,
                                        .dfdx_mul = huber_dfdx, .dfdv_mul = huber_dfdv,
                                        .energy = huber_energy};

static huber *huber_new(double x0)
{
    huber *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(ts_system_init(&s->base, &huber_ops, &huber_type, 2, 1), TS_OK);
    s->k = 1.0, s->a = 0.1;
    s->base.x[0] = x0;
    return s;
}

START_TEST(objective_decreases_at_every_iterate)
{
    double h = 10.0, x0 = 5.0;
    huber *s = huber_new(x0);
    ts_system *sys = &s->base;
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler-opt"), sys, NULL, &st), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, h), TS_OK);
    /* the forces are evaluated once per accepted iterate, starting at x_pred;
     * F(x) = (x - x_pred)^2 / (2 h^2) + E(x) must never rise along them */
    ck_assert_int_ge(s->nlog, 4);
    ck_assert_double_eq(s->log[0], x0);
    double prev = INFINITY;
    for (int i = 0; i < s->nlog; i++) {
        double F = (s->log[i] - x0) * (s->log[i] - x0) / (2 * h * h) + huber_potential(s, s->log[i]);
        ck_assert_msg(F <= prev + 1e-14, "F rose at iterate %d: %.17g after %.17g", i, F, prev);
        prev = F;
    }
    ck_assert_int_gt(s->energy_calls, s->nlog); /* the line search backtracked */
    /* and the result is the backward Euler step, M (x1 - x_pred) / h^2 = f(x1),
     * to the solver's tolerance (|f| is about 0.05 here) */
    double x1 = sys->x[0], f1 = -x1 / sqrt(1.0 + x1 * x1 / 0.01);
    ck_assert_double_eq_tol((x1 - x0) / (h * h), f1, 1e-10);
    ck_assert_double_eq_tol(sys->v[0], (x1 - x0) / h, 1e-14);
    ck_assert_double_lt(fabs(x1), 0.1);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* A system with no objective to minimize (no energy, or the rotation of the
 * complex test equation) gets backward Euler's Newton step: the same state
 * as backward-euler, and R(z) = 1 / (1 - z) for complex z.  Without
 * Jacobian products it is refused. */
START_TEST(backward_euler_where_nothing_to_minimize)
{
    chain_options o = chain_default_options();
    o.energy = 0;
    ts_system *a, *b;
    ck_assert_int_eq(chain_new(&o, &a), TS_OK);
    ck_assert_int_eq(chain_new(&o, &b), TS_OK);
    one_step(tests_stepper("backward-euler-opt"), a, 0.05);
    one_step(tests_stepper("backward-euler"), b, 0.05);
    ck_assert_double_le(ts_vec_dist_inf(a->n, a->x, b->x), 1e-12);
    ck_assert_double_le(ts_vec_dist_inf(a->n, a->v, b->v), 1e-12);
    ts_system_free(a);
    ts_system_free(b);

    static const double z[][2] = {{0.0, 1.0}, {-0.5, 2.0}, {0.3, -0.7}, {-3.0, 10.0}, {0.5, 0.5}};
    for (size_t i = 0; i < sizeof z / sizeof *z; i++) {
        double re, im;
        ck_assert_int_eq(ts_amplification(tests_stepper("backward-euler-opt"), NULL, z[i][0], z[i][1], &re, &im),
                         TS_OK);
        double complex r = 1.0 / (1.0 - (z[i][0] + I * z[i][1]));
        ck_assert_double_le(cabs((re + I * im) - r), 1e-9 * cabs(r));
    }

    ts_system *sys;
    ts_stepper *st = NULL;
    o = chain_default_options();
    o.jacobian = 0;
    ck_assert_int_eq(chain_new(&o, &sys), TS_OK);
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler-opt"), sys, NULL, &st), TS_ERR_UNSUPPORTED);
    ck_assert_ptr_null(st);
    ts_system_free(sys);
}
END_TEST

Suite *opt_suite(void)
{
    Suite *s = suite_create("backward-euler-opt");
    TCase *tc = tcase_create("opt");
    int nsteps = (int)(sizeof steps / sizeof *steps);
    tcase_add_loop_test(tc, oscillator_step_is_exact_backward_euler, 0, nsteps);
    tcase_add_loop_test(tc, test1d_step_is_exact_backward_euler, 0, nsteps);
    tcase_add_loop_test(tc, stiff_chain_agrees_with_backward_euler, 0,
                        (int)(sizeof chain_cases / sizeof *chain_cases));
    tcase_add_test(tc, objective_decreases_at_every_iterate);
    tcase_add_test(tc, backward_euler_where_nothing_to_minimize);
    suite_add_tcase(s, tc);
    return s;
}

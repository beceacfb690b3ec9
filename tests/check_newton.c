/* The Newton stop: converged means the implicit equation is satisfied to
 * newton_tol (tstep/implicit.h), never "the residual is at the linear
 * tolerance".  Loose or tight linear tolerances must give the same step to
 * within the Newton tolerance, and the residual a stepper reports must be
 * the one an independent evaluation of the equation finds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_run.h"
#include "tests.h"
#include "tstep/linalg.h"
#include "tstep/stability.h"
#include "tstep/stepper.h"

/* Implicit steppers that iterate Newton (not a single linearized solve). */
static const ts_stepper_type *newton_stepper(int i)
{
    const ts_stepper_type *t = ts_stepper_at((size_t)i);
    return t && (t->flags & TS_IMPLICIT) && !(t->flags & TS_LINEARIZED) ? t : NULL;
}

static int nregistry(void) { return (int)ts_stepper_count(); }

/* The string from its default state, `steps` steps of h; y receives the
 * final state (2n doubles). */
static void run_string(const ts_stepper_type *type, double cg_tol, double h, int steps,
                       double *y, size_t *ny)
{
    ts_params p;
    ts_params_init(&p, ts_string.params);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(&ts_string, &p, &sys), TS_OK);
    ts_solver_options o = ts_default_solver_options();
    o.newton_tol = 1e-10;
    o.newton_max = 50;
    o.cg_tol = cg_tol;
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, &o, &st), TS_OK);
    for (int k = 0; k < steps; k++)
        ck_assert_msg(ts_stepper_step(st, sys, k * h, h) == TS_OK, "%s cg_tol %g: step %d: %s",
                      type->name, cg_tol, k, ts_error_detail());
    ck_assert(isfinite(st->total.residual));
    *ny = ts_system_ydim(sys);
    ts_system_get_y(sys, y);
    ts_stepper_free(st);
    ts_system_free(sys);
}

/* Twenty steps of 0.1 on the swinging string: with the linear tolerance
 * used as Newton's stop, cg_tol 0.01 moved the tip by 0.017 and cg_tol 1
 * froze the string.  Every tolerance must land on the tight solution. */
START_TEST(linear_tolerance_does_not_change_the_step)
{
    const ts_stepper_type *type = newton_stepper(_i);
    if (!type)
        return;
    static const double tols[] = {0.5, 0.01, 0.0 /* automatic */};
    double ref[512], y[512], re, im;
    size_t n, m;
    /* A stepper that does not damp stiff modes (|R(-inf)| = 1: implicit
     * midpoint, Crank-Nicolson) keeps the string's stiff modes at full
     * amplitude at h = 0.1 (h w = 22), and after about ten steps Newton no
     * longer converges from its start: it is tested over the first 8. */
    ck_assert_int_eq(ts_amplification(type, NULL, -1e6, 0.0, &re, &im), TS_OK);
    int steps = hypot(re, im) > 0.5 ? 8 : 20;
    run_string(type, 1e-12, 0.1, steps, ref, &n);
    ck_assert_uint_le(n, 512);
    for (size_t k = 0; k < sizeof tols / sizeof *tols; k++) {
        run_string(type, tols[k], 0.1, steps, y, &m);
        ck_assert_uint_eq(m, n);
        double d = ts_vec_dist_inf(n, y, ref), scale = fmax(1.0, ts_vec_norm_inf(n, ref));
        ck_assert_msg(d <= 1e-6 * scale, "%s: cg_tol %g differs from cg_tol 1e-12 by %g",
                      type->name, tols[k], d);
    }
}
END_TEST

/* The residual a backward Euler stepper reports is Newton's stop measure
 * of the state it returns: r = h f(x1, v1) - M (v1 - v0), filtered,
 * |M^-1 r|_inf / max(1, |v1|_inf), recomputed here from the forces. */
START_TEST(reported_residual_is_the_equations)
{
    const ts_stepper_type *types[] = {&ts_backward_euler, &ts_backward_euler_opt};
    for (size_t k = 0; k < 2; k++) {
        ts_params p;
        ts_params_init(&p, ts_string.params);
        ts_system *sys;
        ck_assert_int_eq(ts_system_new(&ts_string, &p, &sys), TS_OK);
        ts_solver_options o = ts_default_solver_options();
        o.newton_tol = 1e-6; /* loose, so the residual is well above round-off */
        ts_stepper *st;
        ck_assert_int_eq(ts_stepper_new(types[k], sys, &o, &st), TS_OK);
        size_t n = sys->n;
        double h = 0.1, *v0 = malloc(n * sizeof *v0), *f = malloc(n * sizeof *f);
        for (int s = 0; s < 5; s++) { /* from a moving state */
            ts_vec_copy(n, sys->v, v0);
            ck_assert_int_eq(ts_stepper_step(st, sys, s * h, h), TS_OK);
        }
        ck_assert_int_eq(ts_system_forces(sys, 5 * h, sys->x, sys->v, f), TS_OK);
        double m = 0.0;
        for (size_t i = 0; i < n; i++) {
            double r = h * f[i] - sys->mass[i] * (sys->v[i] - v0[i]);
            if (!(sys->pinned && sys->pinned[i]))
                m = fmax(m, fabs(r) / sys->mass[i]);
        }
        m /= fmax(1.0, ts_vec_norm_inf(n, sys->v));
        ck_assert_msg(fabs(st->last.residual - m) <= 1e-6 * m + 1e-15,
                      "%s: reported %g, recomputed %g", types[k]->name, st->last.residual, m);
        ck_assert_double_ge(st->total.residual, st->last.residual);
        ck_assert(st->last.linear_residual >= 0.0 && st->last.linear_residual < 1.0);
        free(v0);
        free(f);
        ts_stepper_free(st);
        ts_system_free(sys);
    }
}
END_TEST

/* A fixed linear tolerance is the relative residual each solve reaches. */
START_TEST(fixed_linear_tolerance_is_reached)
{
    ts_params p;
    ts_params_init(&p, ts_cloth.params);
    ck_assert_int_eq(ts_params_set(&p, "nx", "8"), TS_OK);
    ck_assert_int_eq(ts_params_set(&p, "ny", "8"), TS_OK);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(&ts_cloth, &p, &sys), TS_OK);
    ts_solver_options o = ts_default_solver_options();
    o.cg_tol = 1e-3;
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(&ts_backward_euler_linear, sys, &o, &st), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, 1.0 / 60), TS_OK);
    ck_assert_double_le(st->last.linear_residual, 1e-3);
    ck_assert_double_gt(st->last.linear_residual, 1e-8); /* and stopped there, not beyond */
    ck_assert(isnan(st->last.residual));                  /* no Newton iteration */
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

START_TEST(cg_tol_range)
{
    char out[4096], err[4096];
    static const char *const bad[] = {"1", "1.5", "0", "-0.1"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char args[256];
        snprintf(args, sizeof args,
                 "run --system string --stepper backward-euler --dt 0.1 --steps 2 --cg-tol %s",
                 bad[k]);
        int rc = cli_run(args, out, sizeof out, err, sizeof err);
        ck_assert_msg(rc == 2 && strstr(err, "--cg-tol"), "%s: exit %d: %s", args, rc, err);
    }
    int rc = cli_run("run --system string --stepper backward-euler --dt 0.1 --steps 2 --stats "
                     "--cg-tol 0.1 --newton-max 60",
                     out, sizeof out, err, sizeof err);
    ck_assert_msg(rc == 0 && strstr(err, "Newton residual"), "exit %d: %s", rc, err);
}
END_TEST

Suite *newton_suite(void)
{
    Suite *s = suite_create("newton");
    TCase *tc = tcase_create("stop");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, linear_tolerance_does_not_change_the_step, 0, nregistry());
    tcase_add_test(tc, reported_residual_is_the_equations);
    tcase_add_test(tc, fixed_linear_tolerance_is_reached);
    tcase_add_test(tc, cg_tol_range);
    suite_add_tcase(s, tc);
    return s;
}

/* The Newton stop: converged means the implicit equation is satisfied to
 * newton_tol (tstep/implicit.h), never "the residual is at the linear
 * tolerance".  Loose or tight linear tolerances must give the same step to
 * within the Newton tolerance, and the measure a stepper reports must be
 * the one an independent evaluation of the equation finds, or, where a
 * small enough update stopped Newton, a smaller one within newton_tol. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_run.h"
#include "tests.h"
#include "tstep/implicit.h"
#include "tstep/linalg.h"
#include "tstep/linsolve.h"
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
/* ts_newton_measure, max_i |r_i| / m_i / scale, against a serial loop:
 * lengths below, at and past the chunks' sizes (one of 8192 entries,
 * doubled past 512 of them), the largest entry first, last, at a chunk's
 * last entry and in a partial last chunk, on 1 and 2 threads. */
START_TEST(newton_measure_is_the_largest_scaled_entry)
{
    static const size_t lens[] = {7, 8192, 3 * 8192 + 17, 512 * 8192 + 100};
    size_t nmax = lens[3];
    double *r = malloc(nmax * sizeof *r), *m = malloc(nmax * sizeof *m);
    ck_assert(r && m);
    ts_threads_set_min(1);
    for (int th = 1; th <= 2; th++) {
        ck_assert_int_eq(ts_threads_set(th), TS_OK);
        for (size_t c = 0; c < sizeof lens / sizeof *lens; c++) {
            size_t n = lens[c];
            size_t at[] = {0, n - 1, n > 8192 ? 8191 : n / 2, n > 8192 ? n - 5 : 1};
            for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
                for (size_t i = 0; i < n; i++)
                    r[i] = (i % 2 ? -1.0 : 1.0) * (double)(i % 97), m[i] = 1.0 + (double)(i % 5);
                r[at[k]] = -1e6, m[at[k]] = 2.0;
                double want = 0.0;
                for (size_t i = 0; i < n; i++)
                    want = fmax(want, fabs(r[i]) / m[i]);
                ts_system sys = {.n = n, .mass = m};
                ck_assert_msg(ts_newton_measure(&sys, r, 4.0) == want / 4.0 && want == 5e5,
                              "n %zu, largest at %zu, %d threads", n, at[k], th);
            }
        }
    }
    ts_threads_set(1);
    ts_threads_set_min(TS_PAR_MIN);
    free(r), free(m);
}
END_TEST

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

/* Backward Euler's residual at the system's state after a step of h from
 * velocities v0, ending at t1: r = h f(x1, v1) - M (v1 - v0), filtered, and
 * its Newton measure |M^-1 r|_inf / max(1, |v1|_inf), recomputed from the
 * forces (f: n doubles of scratch). */
static double equation_measure(ts_system *sys, double t1, double h, const double *v0, double *f)
{
    size_t n = sys->n;
    ck_assert_int_eq(ts_system_forces(sys, t1, sys->x, sys->v, f), TS_OK);
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double r = h * f[i] - sys->mass[i] * (sys->v[i] - v0[i]);
        if (!(sys->pinned && sys->pinned[i]))
            m = fmax(m, fabs(r) / sys->mass[i]);
    }
    return m / fmax(1.0, ts_vec_norm_inf(n, sys->v));
}

/* The residual a backward Euler stepper reports is Newton's stop measure
 * of the state it returns: r = h f(x1, v1) - M (v1 - v0), filtered,
 * |M^-1 r|_inf / max(1, |v1|_inf), recomputed here from the forces; or,
 * when the update test stopped Newton, the update's measure if smaller,
 * then within newton_tol. */
START_TEST(reported_residual_is_the_equations)
{
    const ts_stepper_type *types[] = {tests_stepper("backward-euler"), tests_stepper("backward-euler-opt")};
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
        double m = equation_measure(sys, 5 * h, h, v0, f);
        double r = st->last.residual;
        ck_assert_msg(fabs(r - m) <= 1e-6 * m + 1e-15 || (r < m && r <= o.newton_tol),
                      "%s: reported %g, recomputed %g", types[k]->name, r, m);
        ck_assert_double_ge(st->total.residual, st->last.residual);
        ck_assert(st->last.linear_residual >= 0.0 && st->last.linear_residual < 1.0);
        free(v0);
        free(f);
        ts_stepper_free(st);
        ts_system_free(sys);
    }
}
END_TEST

/* The forcing rule's stop estimate (ts_newton_rstop): the residual test's
 * bound until a solve has been seen, then a norm proportional to the
 * update bound and to the last solve's residual per unit of update, never
 * above the norm that estimate lets pass, and never below the bound. */
START_TEST(stop_estimate_follows_the_last_solve)
{
    ck_assert_double_eq(ts_newton_rstop(1e-12, 1e-8, 0.0, 0.0), 1e-12);
    ck_assert_double_eq(ts_newton_rstop(1e-12, 1e-8, 2e-5, 0.0), 1e-12);
    double r1 = ts_newton_rstop(0.0, 1e-8, 2e-5, 4e-6); /* passes at 2e-9 */
    ck_assert(r1 > 0.0 && r1 <= 2e-9);
    ck_assert_double_eq_tol(ts_newton_rstop(0.0, 2e-8, 2e-5, 4e-6), 2.0 * r1, 1e-15 * r1);
    ck_assert_double_eq_tol(ts_newton_rstop(0.0, 1e-8, 4e-5, 4e-6), 0.5 * r1, 1e-15 * r1);
    ck_assert_double_eq_tol(ts_newton_rstop(0.0, 1e-8, 2e-5, 8e-6), 2.0 * r1, 1e-15 * r1);
    ck_assert_double_eq(ts_newton_rstop(1.0, 1e-8, 2e-5, 4e-6), 1.0);
    /* and the forcing term keeps to half of it relative to |r|, at most
     * 0.3 (above the rule's own cap, 0.01) */
    ts_solver_options o = ts_default_solver_options();
    ck_assert_double_eq(ts_newton_forcing(&o, 1e-3, 1e-6, 1e-3, 1e-8), 0.005);
    ck_assert_double_eq(ts_newton_forcing(&o, 1e-3, 1e-6, 1e-3, 1e-7), 0.05);
    ck_assert_double_eq(ts_newton_forcing(&o, 1e-3, 1e-6, 1e-3, 1.0), 0.3);
    /* without a stop estimate, Eisenstat-Walker alone: 0.9 (|r| / |r_prev|)^2 */
    ck_assert_double_eq_tol(ts_newton_forcing(&o, 1e-3, 1e-6, 1e-3, 0.0), 9e-7, 1e-20);
}
END_TEST

/* The update test's measure (ts_newton_update_measure): the update alone
 * without a previous full update, when it did not contract, when the
 * solve's residual is unknown, or at round-off (1024 unit roundoffs of the
 * scale); else the error left after it, Newton's part rho / (1 - rho) upd
 * plus the solve's linres upd, over the safety factor 0.1, when smaller;
 * rho the ratio of the updates, or 0.3 times the rate remembered if
 * larger (one small ratio does not lower it at once). */
START_TEST(update_measure_estimates_the_error_left)
{
    double rate = 0.0;
    ck_assert_double_eq(ts_newton_update_measure(1e-5, 0.0, 1e-3, 1.0, &rate), 1e-5);
    ck_assert_double_eq(rate, 0.0); /* no ratio yet */
    rate = 0.0;
    ck_assert_double_eq(ts_newton_update_measure(1e-5, 1e-5, 1e-3, 1.0, &rate), 1e-5); /* 1 */
    rate = 0.0;
    ck_assert_double_eq(ts_newton_update_measure(2e-5, 1e-5, 1e-3, 1.0, &rate), 2e-5); /* grew */
    rate = 0.0;
    ck_assert_double_eq(ts_newton_update_measure(1e-5, 1e-2, NAN, 1.0, &rate), 1e-5);
    /* rho = 1e-4: (1e-4 / (1 - 1e-4) 1e-6 + 1e-5 1e-6) / 0.1 */
    rate = 0.0;
    double e = ts_newton_update_measure(1e-6, 1e-2, 1e-5, 1.0, &rate);
    ck_assert_double_eq_tol(e, (1e-10 / (1.0 - 1e-4) + 1e-11) / 0.1, 1e-24);
    ck_assert_double_eq_tol(rate, 1e-4, 1e-18);
    /* rho = 0.2: the estimate 0.25 upd / 0.1 is above upd, which is taken */
    rate = 0.0;
    ck_assert_double_eq(ts_newton_update_measure(2e-3, 1e-2, 0.0, 1.0, &rate), 2e-3);
    /* the memory: after a rate of 0.02, a ratio of 1e-4 counts as 0.006 */
    rate = 0.02;
    e = ts_newton_update_measure(1e-8, 1e-4, 0.0, 1.0, &rate);
    ck_assert_double_eq_tol(rate, 0.006, 1e-17);
    ck_assert_double_eq_tol(e, 0.006 / 0.994 * 1e-8 / 0.1, 1e-22);
    /* round-off: below 1024 eps scale the ratio of updates is not used */
    double noise = 1024.0 * DBL_EPSILON * 4.0;
    rate = 0.0;
    ck_assert_double_eq(ts_newton_update_measure(noise, 1.0, 0.0, 4.0, &rate), noise);
    rate = 0.0;
    ck_assert_double_lt(ts_newton_update_measure(1.01 * noise, 1.0, 0.0, 4.0, &rate), noise);
}
END_TEST

/* A pair on the same system: [0] with the default solver options, [1]
 * solved tightly (newton_tol 1e-13, and cg_tol when tight_cg is set). */
static void new_pair(const ts_system_type *stype, const char *const *pairs,
                     const ts_stepper_type *type, int tight_cg, ts_system *sys[2],
                     ts_stepper *st[2])
{
    for (int j = 0; j < 2; j++) {
        ts_params p;
        ts_params_init(&p, stype->params);
        for (const char *const *kv = pairs; *kv; kv++)
            ck_assert_int_eq(ts_params_set_pair(&p, *kv), TS_OK);
        ck_assert_int_eq(ts_system_new(stype, &p, &sys[j]), TS_OK);
        ts_solver_options o = ts_default_solver_options();
        if (j == 1) {
            o.newton_tol = 1e-13, o.newton_max = 60;
            if (tight_cg)
                o.cg_tol = 1e-13;
        }
        ck_assert_int_eq(ts_stepper_new(type, sys[j], &o, &st[j]), TS_OK);
    }
}

static void free_pair(ts_system *sys[2], ts_stepper *st[2])
{
    for (int j = 0; j < 2; j++) {
        ts_stepper_free(st[j]);
        ts_system_free(sys[j]);
    }
}

/* Each step from the same state as a tightly solved one (the tight run's
 * state copied into the default one before every step): the default
 * tolerances' step is within newton_tol * max(1, |v|_inf) of it, step by
 * step.  On the string at h = 0.05 Newton contracts only linearly (ratios
 * about 0.02, dipping to 0.004): the error estimate without its safety
 * factor and rate memory let steps through at 2.9 times the tolerance. */
START_TEST(each_step_within_the_newton_tolerance)
{
    static const char *steppers[] = {"backward-euler", "backward-euler-opt"};
    for (int k = 0; k < 2; k++) {
        const ts_stepper_type *type = tests_stepper(steppers[k]);
        ck_assert_ptr_nonnull(type);
        ts_system *sys[2];
        ts_stepper *st[2];
        static const char *const string20[] = {"n=20", NULL};
        new_pair(&ts_string, string20, type, 0, sys, st);
        size_t n = sys[0]->n, m = ts_system_ydim(sys[0]);
        double *y = malloc(m * sizeof *y), h = 0.05, worst = 0.0;
        for (int s = 0; s < 40; s++) {
            ts_system_get_y(sys[1], y);
            ts_system_set_y(sys[0], y);
            for (int j = 0; j < 2; j++)
                ck_assert_int_eq(ts_stepper_step(st[j], sys[j], s * h, h), TS_OK);
            double scale = fmax(1.0, ts_vec_norm_inf(n, sys[1]->v));
            worst = fmax(worst, ts_vec_dist_inf(n, sys[0]->v, sys[1]->v) / (1e-8 * scale));
        }
        ck_assert_msg(worst <= 1.0, "%s: a step %g times the Newton tolerance from the tight one",
                      steppers[k], worst);
        free(y);
        free_pair(sys, st);
    }
}
END_TEST

/* On the falling 20 x 20 cloth (multigrid, the default) at h = 0.03, the
 * automatic linear tolerances, whose last solve in a step only measures
 * the update that ends Newton, give every step to within the Newton
 * tolerance of tightly solved ones, and report the measure of the test
 * that stopped Newton: at most newton_tol, and at most the equation's own
 * measure, recomputed from the forces; below it in the steps that the
 * update test ended (9 of these 10; 6 before its error estimate), where
 * reporting the residual's measure alone would give the equation's. */
START_TEST(automatic_tolerances_keep_the_newton_tolerance)
{
    ts_system *sys[2];
    ts_stepper *st[2];
    static const char *const cloth20[] = {"nx=20", "ny=20", NULL};
    new_pair(&ts_cloth, cloth20, tests_stepper("backward-euler"), 1, sys, st);
    size_t n = sys[0]->n;
    double h = 0.03, *v0 = malloc(n * sizeof *v0), *f = malloc(n * sizeof *f);
    int by_update = 0;
    for (int s = 0; s < 10; s++) {
        ts_vec_copy(n, sys[0]->v, v0);
        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(ts_stepper_step(st[k], sys[k], s * h, h), TS_OK);
        double scale = fmax(1.0, ts_vec_norm_inf(n, sys[1]->v));
        ck_assert_double_le(ts_vec_dist_inf(n, sys[0]->v, sys[1]->v), 1e-8 * scale);
        double r = st[0]->last.residual, m = equation_measure(sys[0], (s + 1) * h, h, v0, f);
        ck_assert_double_le(r, 1e-8);
        ck_assert_msg(r <= m * (1.0 + 1e-6) + 1e-15, "step %d: reported %g, the equation's %g", s,
                      r, m);
        by_update += r < m * (1.0 - 1e-6); /* the update test ended it */
    }
    ck_assert_int_ge(by_update, 6);
    ck_assert_double_le(ts_vec_dist_inf(n, sys[0]->x, sys[1]->x), 1e-8);
    free(v0);
    free(f);
    free_pair(sys, st);
}
END_TEST

/* An nx x nx cloth with its other parameters at their defaults. */
static ts_system *cloth_new(int nx)
{
    ts_params p;
    ts_params_init(&p, ts_cloth.params);
    char buf[16];
    snprintf(buf, sizeof buf, "%d", nx);
    ck_assert_int_eq(ts_params_set(&p, "nx", buf), TS_OK);
    ck_assert_int_eq(ts_params_set(&p, "ny", buf), TS_OK);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(&ts_cloth, &p, &sys), TS_OK);
    return sys;
}

/* A step's first Newton solve: the user's cg_tol when fixed, else the
 * preconditioner's first forcing (multigrid: 0.05), else 0.01. */
START_TEST(first_forcing_follows_the_preconditioner)
{
    ts_system *sys = cloth_new(8);
    const ts_precond_type *pre[] = {&ts_precond_amg, &ts_precond_jacobi, &ts_precond_ic0};
    double want[] = {0.05, 0.01, 0.01};
    for (int k = 0; k < 3; k++) {
        ts_solver_options o = ts_default_solver_options();
        o.precond = pre[k];
        ts_linsolve *ls;
        ck_assert_int_eq(ts_linsolve_new(sys, &o, &ls), TS_OK);
        ck_assert_double_eq(ts_newton_forcing_first(&o, ls), want[k]);
        o.cg_tol = 1e-4;
        ck_assert_double_eq(ts_newton_forcing_first(&o, ls), 1e-4);
        ts_linsolve_free(ls);
    }
    ts_solver_options o = ts_default_solver_options();
    ck_assert_double_eq(ts_newton_forcing_first(&o, NULL), 0.01);
    ts_system_free(sys);
}
END_TEST

/* A fixed linear tolerance is the relative residual each solve reaches. */
START_TEST(fixed_linear_tolerance_is_reached)
{
    ts_system *sys = cloth_new(8);
    ts_solver_options o = ts_default_solver_options();
    o.cg_tol = 1e-3;
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler-linear"), sys, &o, &st), TS_OK);
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


/* The cloth (nx x ny, hanging from its corners) and a type's own scratch,
 * driven through the type's step function so that a test can reset the
 * Newton driver's memory (ts_implicit_reset) between steps. */
typedef struct {
    ts_system *sys;
    void *scratch;
    const ts_stepper_type *type;
} driver_run;

static void driver_open(driver_run *r, const ts_stepper_type *type, int nx, double newton_tol)
{
    r->sys = cloth_new(nx);
    ts_solver_options o = ts_default_solver_options();
    o.newton_tol = newton_tol;
    r->type = type;
    ck_assert_int_eq(type->alloc(r->sys, &o, &r->scratch), TS_OK);
}

static void driver_close(driver_run *r)
{
    r->type->free(r->scratch);
    ts_system_free(r->sys);
}

/* One step; forget: the driver forgets the previous step first (no
 * predictor).  Returns the step's Newton iterations (linear solves). */
static long driver_step(driver_run *r, double t, double h, int forget)
{
    ts_step_stats stats = {0};
    stats.residual = stats.linear_residual = NAN;
    if (forget)
        ts_implicit_reset(r->scratch);
    ck_assert_msg(r->type->step(r->scratch, r->sys, t, h, &stats) == TS_OK, "%s: %s",
                  r->type->name, ts_error_detail());
    ck_assert_double_le(stats.residual, ts_implicit_options(r->scratch)->newton_tol);
    ck_assert_int_ge(stats.newton_iters, 1);
    return stats.newton_iters;
}

/* The distance of two runs' states, relative to max(1, |y|_inf). */
static double driver_dist(const driver_run *a, const driver_run *b)
{
    size_t n = ts_system_ydim(a->sys);
    double *ya = malloc(n * sizeof *ya), *yb = malloc(n * sizeof *yb);
    ts_system_get_y(a->sys, ya);
    ts_system_get_y(b->sys, yb);
    double d = ts_vec_dist_inf(n, ya, yb) / fmax(1.0, ts_vec_norm_inf(n, ya));
    free(ya);
    free(yb);
    return d;
}

/* Newton's predictor (backward Euler's, tstep/implicit.h: the previous
 * step's w when h is unchanged) against the first iterate it replaces,
 * step by step on the falling cloth: the same states to within the Newton
 * tolerance, the first step (no previous w) identical, and fewer linear
 * solves over the run (the predictor's reason to exist: on the 100 x 100
 * cloth it saves one solve in most steps).  The implicit midpoint rule and
 * Crank-Nicolson take no predictor: the same number of solves. */
static const char *const driver_types[] = {"backward-euler", "implicit-midpoint",
                                           "crank-nicolson", "bdf2"};

START_TEST(predictor_gives_the_same_steps_in_fewer_solves)
{
    if (strcmp(driver_types[_i], "bdf2") == 0)
        return; /* its history: not a scratch of the driver's */
    const ts_stepper_type *type = tests_stepper(driver_types[_i]);
    driver_run a, b;
    driver_open(&a, type, 16, 1e-10);
    driver_open(&b, type, 16, 1e-10);
    double h = 1.0 / 60;
    long na = 0, nb = 0;
    for (int k = 0; k < 12; k++) {
        long ia = driver_step(&a, k * h, h, 0), ib = driver_step(&b, k * h, h, 1);
        if (k == 0)
            ck_assert_int_eq(ia, ib);
        na += ia, nb += ib;
        /* each step's error is below the tolerance's worth of the stiff
         * springs' amplification; the runs must not drift apart */
        double d = driver_dist(&a, &b);
        ck_assert_msg(d <= 1e-7, "%s step %d: predictor and first iterate differ by %g",
                      type->name, k, d);
    }
    if (strcmp(type->name, "backward-euler") == 0)
        ck_assert_msg(na < nb, "%s: %ld solves with the predictor, %ld without", type->name, na,
                      nb);
    else
        ck_assert_int_eq(na, nb);
    driver_close(&a);
    driver_close(&b);
}
END_TEST

/* After a change of h (the previous w the wrong size: the step then starts
 * from the first iterate, which this test cannot tell from Newton reaching
 * the same root from the predictor), and after a state set from outside
 * without ts_stepper_reset (against the stepper's contract), the step is
 * the one of a driver that forgot the previous step, to within the Newton
 * tolerance. */
START_TEST(predictor_follows_h_and_the_state)
{
    driver_run a, b;
    driver_open(&a, tests_stepper("backward-euler"), 12, 1e-10);
    driver_open(&b, tests_stepper("backward-euler"), 12, 1e-10);
    double h = 1.0 / 60, t = 0.0;
    for (int k = 0; k < 4; k++, t += h) {
        driver_step(&a, t, h, 0);
        driver_step(&b, t, h, 1);
    }
    /* h divided by 1000 (the previous w a thousand times too large), then
     * back to h */
    driver_step(&a, t, 1e-3 * h, 0);
    driver_step(&b, t, 1e-3 * h, 1);
    t += 1e-3 * h;
    ck_assert_double_le(driver_dist(&a, &b), 1e-7);
    driver_step(&a, t, h, 0);
    driver_step(&b, t, h, 1);
    t += h;
    ck_assert_double_le(driver_dist(&a, &b), 1e-7);
    /* the velocities reversed from outside: the predictor is far off */
    size_t n = a.sys->n;
    for (size_t i = 0; i < n; i++)
        a.sys->v[i] = -a.sys->v[i], b.sys->v[i] = -b.sys->v[i];
    driver_step(&a, t, h, 0);
    driver_step(&b, t, h, 1);
    ck_assert_double_le(driver_dist(&a, &b), 1e-7);
    driver_close(&a);
    driver_close(&b);
}
END_TEST

/* A step that Newton's update test ends costs one force evaluation per
 * solve: the residual at each iterate a solve starts from (the predictor,
 * or the base point of the first step), none at the iterate the passing
 * update leads to, which nothing would use.  Every step of the falling 16 x
 * 16 cloth ends on the update test, with 2 to 4 solves; a step that
 * evaluated the forces there too would count one more. */
START_TEST(no_force_evaluation_after_the_update_test)
{
    ts_system *sys = cloth_new(16);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler"), sys, NULL, &st), TS_OK);
    double h = 1.0 / 60;
    for (int k = 0; k < 12; k++) {
        ck_assert_int_eq(ts_stepper_step(st, sys, k * h, h), TS_OK);
        ck_assert_int_ge(st->last.newton_iters, 2);
        ck_assert_msg(st->last.force_evals == st->last.newton_iters,
                      "step %d: %ld force evaluations for %ld solves", k,
                      (long)st->last.force_evals, (long)st->last.newton_iters);
        ck_assert_double_le(st->last.residual, st->opt.newton_tol);
    }
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* At rest in equilibrium the previous step's w (zero) already satisfies the
 * equation: the step must still take a Newton solve (the predictor alone is
 * never the step, so a step's accuracy does not depend on what the last
 * step left behind), for every stepper of the driver. */
START_TEST(a_step_takes_at_least_one_solve)
{
    const ts_stepper_type *type = tests_stepper(driver_types[_i]);
    ts_params p;
    ts_params_init(&p, ts_oscillator.params);
    ck_assert_int_eq(ts_params_set(&p, "x0", "0"), TS_OK);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(&ts_oscillator, &p, &sys), TS_OK);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(ts_stepper_step(st, sys, k * 0.1, 0.1), TS_OK);
        ck_assert_msg(st->last.newton_iters >= 1, "%s step %d: %ld solves", type->name, k,
                      st->last.newton_iters);
    }
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

Suite *newton_suite(void)
{
    Suite *s = suite_create("newton");
    TCase *tc = tcase_create("stop");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, linear_tolerance_does_not_change_the_step, 0, nregistry());
    tcase_add_test(tc, reported_residual_is_the_equations);
    tcase_add_test(tc, newton_measure_is_the_largest_scaled_entry);
    tcase_add_test(tc, stop_estimate_follows_the_last_solve);
    tcase_add_test(tc, update_measure_estimates_the_error_left);
    tcase_add_test(tc, each_step_within_the_newton_tolerance);
    tcase_add_test(tc, automatic_tolerances_keep_the_newton_tolerance);
    tcase_add_test(tc, first_forcing_follows_the_preconditioner);
    tcase_add_test(tc, fixed_linear_tolerance_is_reached);
    tcase_add_test(tc, cg_tol_range);
    tcase_add_loop_test(tc, predictor_gives_the_same_steps_in_fewer_solves, 0,
                        (int)(sizeof driver_types / sizeof *driver_types));
    tcase_add_test(tc, predictor_follows_h_and_the_state);
    tcase_add_test(tc, no_force_evaluation_after_the_update_test);
    tcase_add_loop_test(tc, a_step_takes_at_least_one_solve, 0,
                        (int)(sizeof driver_types / sizeof *driver_types));
    suite_add_tcase(s, tc);
    return s;
}

/* Reference solutions and what is measured against them: sweep's observed
 * orders on systems without an exact solution (string, hair, cloth, mesh
 * cloth) for every registered stepper, the round-off rule on a tiny
 * solution, the computed reference against a closed form, run --error
 * against the closed form of forward Euler on the oscillator, the phase and
 * amplitude per step against R(i w h), and check-system's energy checks. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_run.h"
#include "probe_systems.h"
#include "tests.h"
#include "tstep/check.h"
#include "tstep/linalg.h"
#include "tstep/phase.h"
#include "tstep/run.h"

static char out[1 << 16], err[1 << 14];

#define LEVELS 7
#define ORDER_TOL 0.2
#define ORDER5_ABOVE 0.6

/* observed within [p - 0.2, p + 0.2], for p >= 5 [p - 0.2, p + 0.6] */
static int order_ok(double observed, int order)
{
    return observed >= order - ORDER_TOL &&
           observed <= order + (order >= 5 ? ORDER5_ABOVE : ORDER_TOL);
}

/* the systems without an exact solution, with the parameters swept */
static const struct {
    const char *system;
    const char *params[4]; /* key=value, NULL-terminated */
} ref_systems[] = {
    {"string", {NULL}},
    {"hair", {NULL}},
    {"cloth", {"nx=6", "ny=6", NULL}},
    {"cloth", {"mesh=data/cloth.obj", NULL}},
};

static void make_params(const ts_system_type *t, const char *const *pairs, ts_params *p)
{
    ts_params_init(p, t->params);
    for (int i = 0; pairs && pairs[i]; i++)
        ck_assert_int_eq(ts_params_set_pair(p, pairs[i]), TS_OK);
}

/* With the default ranges (from the stiffest mode) and the default norm
 * (the whole state, velocities scaled by 1/|lambda|) every registered
 * stepper the system can run measures its nominal order within 0.2, on at
 * least three points, against a reference whose estimate holds.  Order 5
 * (dopri5) up to ORDER5_ABOVE above: between its truncation error and
 * rounding there is only about a factor 1e3 in double precision, and over
 * it the error still falls faster than h^5 (the h^6 term beside its small
 * h^5 error constant), measured 5.1 to 5.55 (docs/sweep.md); below 4.8
 * would be a wrong tableau. */
START_TEST(sweep_orders_against_reference)
{
    const ts_system_type *t = ts_system_find(ref_systems[_i].system);
    ck_assert_ptr_nonnull(t);
    ts_params p;
    make_params(t, ref_systems[_i].params, &p);
    double rate;
    ck_assert_int_eq(ts_sweep_stiffness(t, &p, &rate), TS_OK);
    ck_assert_double_gt(rate, 100.0);
    double t_end = ts_sweep_default_t_end(rate), lo_all = INFINITY, lo, hi;
    for (size_t k = 0; ts_stepper_at(k); k++) {
        ts_sweep_default_dt(rate, t_end, ts_stepper_at(k)->order, &lo, &hi);
        lo_all = fmin(lo_all, lo);
    }
    ts_sweep_reference ref;
    ts_sweep_reference_options ro = ts_sweep_reference_options_for(lo_all, t_end);
    ck_assert_int_eq(ts_sweep_reference_compute(t, &p, t_end, &ro, &ref), TS_OK);
    ck_assert_int_eq(ref.computed, 1);
    ck_assert_int_ne(ref.verdict, TS_REF_UNRESOLVED);
    ck_assert_double_lt(ref.error, 1e-10 * ref.scale);
    for (size_t k = 0; ts_stepper_at(k); k++) {
        const ts_stepper_type *st = ts_stepper_at(k);
        ts_system *probe;
        ts_stepper *trial;
        ck_assert_int_eq(ts_system_new(t, &p, &probe), TS_OK);
        int s = ts_stepper_new(st, probe, NULL, &trial);
        ts_stepper_free(trial);
        ts_system_free(probe);
        if (s == TS_ERR_UNSUPPORTED)
            continue;
        ts_solver_options so = ts_default_solver_options();
        so.newton_tol = 1e-12, so.cg_tol = 1e-12;
        ts_sweep_point pts[LEVELS];
        ts_sweep_default_dt(rate, t_end, st->order, &lo, &hi);
        ts_sweep_request rq = {.stype = t, .params = &p, .type = st, .opt = &so, .dt_min = lo,
                               .dt_max = hi, .levels = LEVELS};
        ck_assert_int_eq(ts_sweep_against(&rq, &ref, pts), TS_OK);
        int used;
        double order = ts_observed_order(pts, LEVELS, &used);
        ck_assert_msg(used >= 3, "%s on %s: %d points in the fit", st->name, t->name, used);
        ck_assert_msg(order_ok(order, st->order),
                      "%s on %s %s: observed %g, nominal %d",
                      st->name, t->name, ref_systems[_i].params[0] ? ref_systems[_i].params[0] : "",
                      order, st->order);
    }
    ts_sweep_reference_release(&ref);
}
END_TEST

/* The computed reference of a system that has an exact solution is within
 * a few times its own estimated error of it (Richardson's estimate is
 * honest), and that error is small. */
START_TEST(computed_reference_matches_closed_form)
{
    static const char *const cases[][3] = {
        {"oscillator", "k=100", "c=0.5"}, {"oscillator", "k=4", NULL}, {"test1d", "k=3", NULL}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const ts_system_type *t = ts_system_find(cases[c][0]);
        ts_params p;
        const char *pairs[] = {cases[c][1], cases[c][2], NULL};
        make_params(t, pairs, &p);
        ts_sweep_reference_options ro = ts_default_sweep_reference_options();
        ro.computed = 1;
        ro.norm = TS_NORM_STATE;
        ro.dt = 0.02; /* coarse: the estimate is asymptotic, not at round-off */
        ts_sweep_reference ref;
        ck_assert_int_eq(ts_sweep_reference_compute(t, &p, 1.0, &ro, &ref), TS_OK);
        ck_assert_int_eq(ref.verdict, TS_REF_ASYMPTOTIC);
        ck_assert_double_lt(fabs(ref.ratio - 16.0), 8.0);
        ts_system *sys;
        ck_assert_int_eq(ts_system_new(t, &p, &sys), TS_OK);
        double y[2];
        ck_assert_int_eq(ts_system_exact_y(sys, 1.0, y), TS_OK);
        double actual = ts_vec_dist_inf(ref.m, y, ref.y);
        ck_assert_msg(actual <= 3.0 * ref.error && actual >= ref.error / 3.0,
                      "%s %s: actual error %g, estimated %g", cases[c][0], cases[c][1], actual,
                      ref.error);
        ts_system_free(sys);
        ts_sweep_reference_release(&ref);
    }
}
END_TEST

/* A point the reference cannot judge is excluded as "reference": with a
 * deliberately coarse reference, the finest rk4 points are. */
START_TEST(coarse_reference_excludes_points)
{
    const ts_system_type *t = &ts_oscillator;
    ts_params p;
    const char *pairs[] = {"k=4", NULL};
    make_params(t, pairs, &p);
    ts_sweep_reference_options ro = ts_default_sweep_reference_options();
    ro.computed = 1;
    ro.dt = 0.1;
    ts_sweep_reference ref;
    ck_assert_int_eq(ts_sweep_reference_compute(t, &p, 1.0, &ro, &ref), TS_OK);
    ts_sweep_point pts[LEVELS];
    ts_sweep_request rq = {.stype = t, .params = &p, .type = &ts_rk4, .dt_min = 1e-3,
                           .dt_max = 1e-1, .levels = LEVELS};
    ck_assert_int_eq(ts_sweep_against(&rq, &ref, pts), TS_OK);
    int reference = 0;
    for (int i = 0; i < LEVELS; i++) {
        if (pts[i].excluded == TS_SWEEP_REFERENCE) {
            reference++;
            ck_assert_double_le(pts[i].error, TS_SWEEP_REFERENCE_FACTOR * ref.error);
        } else if (pts[i].excluded == TS_SWEEP_USED) {
            ck_assert_double_gt(pts[i].error, TS_SWEEP_REFERENCE_FACTOR * ref.error);
        }
    }
    ck_assert_int_gt(reference, 0);
    ts_sweep_reference_release(&ref);
}
END_TEST

/* Levels that round to the same number of steps run once: on [0, 1] from
 * dt 0.5 to 0.1, 64 levels give the 9 step counts 2..10, each point a run
 * of its own (force evaluations 4 per step for rk4, the error the closed
 * form's), the others copies marked repeat; the fit over the 9 equals the
 * fit over the same 9 levels swept alone. */
START_TEST(repeated_step_counts_run_once)
{
    ts_sweep_point pts[64], alone[9];
    ts_sweep_request rq = {.stype = &ts_test1d, .type = &ts_rk4, .dt_min = 0.1, .dt_max = 0.5,
                           .levels = 64};
    ck_assert_int_eq(ts_sweep(&rq, 1.0, pts), TS_OK);
    int distinct = 0;
    for (int i = 0; i < 64; i++) {
        if (pts[i].excluded == TS_SWEEP_REPEAT) {
            ck_assert_int_gt(i, 0);
            ck_assert_int_eq(pts[i].steps, pts[i - 1].steps);
            ck_assert_double_eq(pts[i].error, pts[i - 1].error);
            /* a copy, not a run again: the same wall-clock time, to the bit */
            ck_assert_double_eq(pts[i].seconds, pts[i - 1].seconds);
            continue;
        }
        ck_assert_int_eq(pts[i].steps, 2 + distinct);
        ck_assert_int_eq(pts[i].stats.force_evals, 4 * pts[i].steps);
        double h = 1.0 / pts[i].steps, z = -h;
        double r = 1.0 + z + z * z / 2.0 + z * z * z / 6.0 + z * z * z * z / 24.0;
        ck_assert_double_eq_tol(pts[i].error, fabs(pow(r, pts[i].steps) - exp(-1.0)), 1e-15);
        distinct++;
    }
    ck_assert_int_eq(distinct, 9);
    int used, used_alone;
    double p = ts_observed_order(pts, 64, &used);
    for (int k = 0; k < 9; k++) { /* the same 9 step sizes, one level each */
        ts_sweep_request one = {.stype = &ts_test1d, .type = &ts_rk4, .dt_min = 1.0 / (2 + k),
                                .dt_max = 1.0 / (2 + k), .levels = 1};
        ck_assert_int_eq(ts_sweep(&one, 1.0, &alone[k]), TS_OK);
    }
    double q = ts_observed_order(alone, 9, &used_alone);
    ck_assert_int_eq(used, 9);
    ck_assert_int_eq(used_alone, 9);
    ck_assert_double_eq_tol(p, q, 1e-12);
}
END_TEST

/* Round-off is judged relative to the solution's size: x0 = 2^-40 gives
 * exactly the errors of x0 = 1 times 2^-40 (scaling by a power of two is
 * exact) and the same exclusions, and x0 = 1e-12 orders 1 and 4 (the old
 * rule, max(1, |y|), called every point round-off). */
START_TEST(tiny_solution_orders)
{
    const ts_stepper_type *types[] = {&ts_forward_euler, &ts_rk4};
    for (int k = 0; k < 2; k++) {
        ts_sweep_point big[LEVELS], tiny[LEVELS];
        ts_params p;
        const char *one[] = {"x0=1", NULL}, *pow2[] = {"x0=0x1p-40", NULL},
                   *small[] = {"x0=1e-12", NULL};
        ts_sweep_request rq = {.stype = &ts_test1d, .params = &p, .type = types[k],
                               .dt_min = 1e-3, .dt_max = 1e-1, .levels = LEVELS};
        make_params(&ts_test1d, one, &p);
        ck_assert_int_eq(ts_sweep(&rq, 1.0, big), TS_OK);
        make_params(&ts_test1d, pow2, &p);
        ck_assert_int_eq(ts_sweep(&rq, 1.0, tiny), TS_OK);
        for (int i = 0; i < LEVELS; i++) {
            ck_assert_int_eq(big[i].excluded, tiny[i].excluded);
            ck_assert_double_eq(tiny[i].error, ldexp(big[i].error, -40));
        }
        make_params(&ts_test1d, small, &p);
        ck_assert_int_eq(ts_sweep(&rq, 1.0, tiny), TS_OK);
        int used;
        double order = ts_observed_order(tiny, LEVELS, &used);
        ck_assert_msg(fabs(order - types[k]->order) <= 0.2, "%s: %g", types[k]->name, order);
        ck_assert_int_ge(used, 3);
    }
    /* the command line of the issue */
    int rc = cli_run("sweep --system test1d --param x0=1e-12 --stepper forward-euler,rk4 "
                     "--dt-min 1e-3 --dt-max 1e-1 --t-end 1 --out /dev/null",
                     out, sizeof out, err, sizeof err);
    ck_assert_int_eq(rc, 0);
    const char *names[] = {"forward-euler", "rk4"};
    for (int k = 0; k < 2; k++) {
        char key[64], name[64];
        snprintf(key, sizeof key, "\n  %s ", names[k]);
        const char *row = strstr(err, key);
        ck_assert_msg(row != NULL, "no row for %s: %s", names[k], err);
        int nominal;
        double observed;
        ck_assert_int_eq(sscanf(row, " %63s %d %lf", name, &nominal, &observed), 3);
        ck_assert_double_lt(fabs(observed - nominal), 0.2);
    }
}
END_TEST

/* `sweep --system string` with no ranges: the defaults give every stepper
 * its order, and the reference with its estimated error is printed on
 * stderr and written in the data. */
START_TEST(sweep_string_defaults_cli)
{
    tests_need("rk4"); /* the computed reference's method */
    int rc = cli_run("sweep --system string --format csv", out, sizeof out, err, sizeof err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_ptr_nonnull(strstr(err, "reference: rk4 at dt = "));
    ck_assert_ptr_nonnull(strstr(err, "estimated error "));
    ck_assert_ptr_nonnull(strstr(out, ",seconds,reference_error\n"));
    for (size_t i = 0; ts_stepper_at(i); i++) {
        const ts_stepper_type *t = ts_stepper_at(i);
        char key[80], name[64];
        snprintf(key, sizeof key, "\n  %s ", t->name);
        const char *row = strstr(err, key);
        ck_assert_msg(row != NULL, "no row for %s", t->name);
        int nominal;
        double observed;
        ck_assert_int_eq(sscanf(row, " %63s %d %lf", name, &nominal, &observed), 3);
        ck_assert_msg(order_ok(observed, t->order), "%s: %g", t->name,
                      observed);
    }
}
END_TEST

/* The three norms against their definitions: forward Euler on the damped
 * oscillator (k = 100, c = 0.5, |lambda| = sqrt(k/m) = 10) to t = 1 at
 * dt = 0.01, stepped here by hand, against the closed form: positions
 * |dx|, state max(|dx|, |dv|), scaled max(|dx|, |dv| / 10); on test1d (no
 * v) all three are |dx|.  A bad --norm exits 2 naming the value. */
static double ref_rate(const ts_system_type *t, const ts_params *p)
{
    double rate;
    ck_assert_int_eq(ts_sweep_stiffness(t, p, &rate), TS_OK);
    ck_assert_double_lt(fabs(rate - 10.0), 1e-5);
    return rate;
}

START_TEST(error_norms_defined)
{
    const ts_system_type *t = &ts_oscillator;
    ts_params p;
    const char *pairs[] = {"k=100", "c=0.5", NULL};
    make_params(t, pairs, &p);
    ts_system *sys;
    ts_stepper *st;
    ck_assert_int_eq(ts_system_new(t, &p, &sys), TS_OK);
    double exact[2];
    ck_assert_int_eq(ts_system_exact_y(sys, 1.0, exact), TS_OK);
    ck_assert_int_eq(ts_stepper_new(&ts_forward_euler, sys, NULL, &st), TS_OK);
    for (int k = 0; k < 100; k++)
        ck_assert_int_eq(ts_stepper_step(st, sys, 0.01 * k, 0.01), TS_OK);
    double dx = fabs(sys->x[0] - exact[0]), dv = fabs(sys->v[0] - exact[1]);
    ts_stepper_free(st);
    ts_system_free(sys);
    ck_assert_double_gt(dv, 2.0 * dx); /* state and positions differ */
    const ts_error_norm norms[] = {TS_NORM_POSITIONS, TS_NORM_STATE, TS_NORM_SCALED};
    const double want[] = {dx, fmax(dx, dv), fmax(dx, dv / ref_rate(t, &p))};
    for (int k = 0; k < 3; k++) {
        ts_sweep_reference_options ro = ts_default_sweep_reference_options();
        ro.norm = norms[k];
        ts_sweep_reference ref;
        ck_assert_int_eq(ts_sweep_reference_compute(t, &p, 1.0, &ro, &ref), TS_OK);
        ck_assert_int_eq(ref.computed, 0);
        if (norms[k] == TS_NORM_SCALED) /* w = 1/|lambda| from the stiffest mode */
            ck_assert_double_lt(fabs(ref.weight - 0.1), 1e-6);
        ts_sweep_point pt;
        ts_sweep_request rq = {.stype = t, .params = &p, .type = &ts_forward_euler,
                               .dt_min = 0.01, .dt_max = 0.01, .levels = 1};
        ck_assert_int_eq(ts_sweep_against(&rq, &ref, &pt), TS_OK);
        ck_assert_msg(fabs(pt.error - want[k]) <= 1e-6 * want[k], "%s: %.10g, want %.10g",
                      ts_error_norm_name(norms[k]), pt.error, want[k]);
        ts_sweep_reference_release(&ref);
    }
    ck_assert_int_eq(ts_sweep_reference_options_for(1e-3, 1.0).norm, TS_NORM_SCALED);
    ck_assert_int_eq(cli_run("sweep --system test1d --norm bogus", out, sizeof out, err, sizeof err),
                     2);
    ck_assert_ptr_nonnull(strstr(err, "bogus"));
    double e[3];
    const char *names[] = {"positions", "state", "scaled"};
    for (int k = 0; k < 3; k++) {
        char args[200];
        snprintf(args, sizeof args,
                 "sweep --system test1d --stepper forward-euler --dt-min 0.01 --dt-max 0.01 "
                 "--levels 1 --t-end 1 --format csv --norm %s",
                 names[k]);
        ck_assert_int_eq(cli_run(args, out, sizeof out, err, sizeof err), 0);
        const char *row = strstr(out, "\nforward-euler,");
        ck_assert_ptr_nonnull(row);
        ck_assert_int_eq(sscanf(row, "\nforward-euler,%*[^,],%*[^,],%lf", &e[k]), 1);
    }
    ck_assert_double_eq(e[0], e[1]);
    ck_assert_double_eq(e[0], e[2]);
}
END_TEST

/* run --error on the undamped oscillator (k = m = 1) with forward Euler:
 * Y_n = S^n Y_0, S = [1 h; -h 1] = rho (rotation by -theta),
 * rho = sqrt(1 + h^2), theta = atan h, so x_n = rho^n cos(n theta),
 * v_n = -rho^n sin(n theta); exact x = cos t, v = -sin t. */
START_TEST(error_against_time_closed_form)
{
    const char *path = "build/check_reference_error.csv";
    char args[256];
    snprintf(args, sizeof args,
             "run --system oscillator --stepper forward-euler --dt 0.1 --t-end 3 --every 3 "
             "--out /dev/null --error %s",
             path);
    ck_assert_int_eq(cli_run(args, out, sizeof out, err, sizeof err), 0);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "t,step,error_x,error_v,error,reference_error\n");
    int rows = 0;
    double h = 0.1, rho = sqrt(1.0 + h * h), th = atan(h);
    while (fgets(line, sizeof line, f)) {
        double t, ex, ev, e, re;
        long n;
        ck_assert_int_eq(sscanf(line, "%lf,%ld,%lf,%lf,%lf,%lf", &t, &n, &ex, &ev, &e, &re), 6);
        double xn = pow(rho, (double)n) * cos(n * th), vn = -pow(rho, (double)n) * sin(n * th);
        double want_x = fabs(xn - cos(n * h)), want_v = fabs(vn + sin(n * h));
        ck_assert_double_lt(fabs(t - n * h), 1e-12);
        ck_assert_double_le(fabs(ex - want_x), 1e-6 * want_x + 1e-14);
        ck_assert_double_le(fabs(ev - want_v), 1e-6 * want_v + 1e-14);
        ck_assert_double_eq(e, fmax(ex, ev));
        ck_assert_double_eq(re, 0.0);
        rows++;
    }
    fclose(f);
    remove(path);
    ck_assert_int_eq(rows, 11); /* steps 0, 3, ..., 30 */

    /* a system without an exact solution: the reference's estimate is there
     * and far below forward Euler's error */
    path = "build/check_reference_error.dat";
    snprintf(args, sizeof args,
             "run --system string --stepper forward-euler --dt 5e-5 --t-end 0.1 --every 200 "
             "--out /dev/null --error %s",
             path);
    ck_assert_int_eq(cli_run(args, out, sizeof out, err, sizeof err), 0);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    rows = 0;
    while (fgets(line, sizeof line, f)) {
        double t, ex, ev, e, re;
        long n;
        if (line[0] == '#')
            continue;
        ck_assert_int_eq(sscanf(line, "%lf %ld %lf %lf %lf %lf", &t, &n, &ex, &ev, &e, &re), 6);
        if (n > 0) {
            ck_assert_double_gt(e, 0.0);
            ck_assert_double_lt(re, 1e-6 * e);
        }
        rows++;
    }
    fclose(f);
    remove(path);
    ck_assert_int_eq(rows, 11);
}
END_TEST

/* Phase and amplitude per step against exact formulas: forward Euler
 * |R| = sqrt(1 + y^2), arg R = atan y; rk4 R(iy) = 1 - y^2/2 + y^4/24 +
 * i (y - y^3/6) (for y < sqrt 6, Im R > 0); backward Euler 1 / (1 - iy). */
START_TEST(phase_against_formulas)
{
    for (int j = 1; j <= 40; j++) {
        double y = 0.05 * j, a, g;
        ck_assert_int_eq(ts_phase_response(&ts_forward_euler, NULL, y, &a, &g), TS_OK);
        ck_assert_double_lt(fabs(a - sqrt(1.0 + y * y)), 1e-13);
        ck_assert_double_lt(fabs(g - atan(y)), 1e-13);
        double complex r = 1.0 - y * y / 2.0 + pow(y, 4) / 24.0 + I * (y - pow(y, 3) / 6.0);
        ck_assert_int_eq(ts_phase_response(&ts_rk4, NULL, y, &a, &g), TS_OK);
        ck_assert_double_lt(fabs(a - cabs(r)), 1e-13);
        ck_assert_double_lt(fabs(g - carg(r)), 1e-13);
        double complex b = 1.0 / (1.0 - I * y);
        ck_assert_int_eq(ts_phase_response(tests_stepper("backward-euler"), NULL, y, &a, &g), TS_OK);
        ck_assert_double_lt(fabs(a - cabs(b)), 1e-9);
        ck_assert_double_lt(fabs(g - carg(b)), 1e-9);
        /* bdf2: the principal root of (3/2 - z) zeta^2 - 2 zeta + 1/2 = 0,
         * z = i y: zeta = (2 + sqrt(1 + 2z)) / (3 - 2z) */
        double complex z = I * y, zeta = (2.0 + csqrt(1.0 + 2.0 * z)) / (3.0 - 2.0 * z);
        ck_assert_int_eq(ts_phase_response(tests_stepper("bdf2"), NULL, y, &a, &g), TS_OK);
        ck_assert_msg(fabs(a - cabs(zeta)) < 1e-9 && fabs(g - carg(zeta)) < 1e-9,
                      "bdf2 at w h = %g: |mu| %.12g arg %.12g, root %.12g %.12g", y, a, g,
                      cabs(zeta), carg(zeta));
    }
    /* the command's rows are the same numbers */
    ck_assert_int_eq(cli_run("phase --stepper forward-euler --wh-max 2 --points 4 --format csv",
                             out, sizeof out, err, sizeof err),
                     0);
    const char *row = strstr(out, "\nforward-euler,1.5,");
    ck_assert_ptr_nonnull(row);
    double wh, a, g, pe, ae;
    ck_assert_int_eq(sscanf(row, "\nforward-euler,%lf,%lf,%lf,%lf,%lf", &wh, &a, &g, &pe, &ae), 5);
    ck_assert_double_lt(fabs(a - sqrt(1.0 + 2.25)), 1e-12);
    ck_assert_double_lt(fabs(g - atan(1.5)), 1e-12);
    ck_assert_double_lt(fabs(pe - (atan(1.5) - 1.5)), 1e-12);
    ck_assert_double_lt(fabs(ae - (sqrt(3.25) - 1.0)), 1e-12);
}
END_TEST

/* Every registered stepper: one step's eigenvalue mu (a two-step method's
 * principal root) agrees with the exact e^{i w h} to order p + 1 (a
 * stepper of order p has local error O(h^{p+1})), seen as the slope of
 * log |mu - e^{i w h}| between w h = y0 and y0 / 2, y0 = 0.02 for p <= 4;
 * for p >= 5, y0 = 0.2: at 0.01 a fifth-order method's local error,
 * about (w h)^6 / 600 ~ 2e-15, is rounding. */
START_TEST(phase_local_order)
{
    const ts_stepper_type *t = ts_stepper_at(_i);
    double e[2], y0 = t->order >= 5 ? 0.2 : 0.02;
    for (int k = 0; k < 2; k++) {
        double y = y0 / (1 << k), a, g;
        ck_assert_int_eq(ts_phase_response(t, NULL, y, &a, &g), TS_OK);
        e[k] = cabs(a * cexp(I * g) - cexp(I * y));
    }
    double slope = log2(e[0] / e[1]);
    ck_assert_msg(slope >= t->order + 1 - 0.2, "%s: local slope %g, order %d", t->name, slope,
                  t->order);
}
END_TEST

/* check-system's energy checks: every registered system passes; a pendulum
 * with its potential's sign flipped, or scaled, fails the gradient check
 * (and the Taylor slope drops to 1); a wrong kinetic energy fails its own. */
START_TEST(energy_checks)
{
    for (size_t i = 0; ts_system_at(i); i++) {
        ts_system *sys;
        ck_assert_int_eq(ts_system_new(ts_system_at(i), NULL, &sys), TS_OK);
        ts_jacobian_report rep;
        ck_assert_int_eq(ts_jacobian_check(sys, NULL, &rep), TS_OK);
        ck_assert_msg(rep.passed, "%s fails %s", ts_system_at(i)->name,
                      ts_jcheck_name(rep.worst));
        if (sys->ops->energy) {
            ck_assert(rep.check[TS_JCHECK_ENERGY_GRADIENT].done);
            ck_assert(rep.check[TS_JCHECK_ENERGY_TAYLOR].done);
            ck_assert_int_eq(rep.check[TS_JCHECK_KINETIC].done, sys->order == 2);
        }
        ts_system_free(sys);
    }
    static const struct {
        const char *pair;
        int fails;       /* the check that must fail */
        double slope;    /* the energy Taylor slope expected near, or NAN */
    } cases[] = {
        {"potential_scale=1", -1, 2.0},
        {"potential_scale=-1", TS_JCHECK_ENERGY_GRADIENT, 1.0},
        {"potential_scale=2", TS_JCHECK_ENERGY_GRADIENT, 1.0},
        {"kinetic_scale=2", TS_JCHECK_KINETIC, 2.0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ts_params p;
        const char *pairs[] = {cases[c].pair, NULL};
        make_params(&probe_pendulum_type, pairs, &p);
        ts_system *sys;
        ck_assert_int_eq(ts_system_new(&probe_pendulum_type, &p, &sys), TS_OK);
        ts_jacobian_report rep;
        ck_assert_int_eq(ts_jacobian_check(sys, NULL, &rep), TS_OK);
        if (cases[c].fails < 0) {
            ck_assert_msg(rep.passed, "%s: %s failed", cases[c].pair, ts_jcheck_name(rep.worst));
        } else {
            ck_assert(!rep.passed);
            ck_assert_msg(!rep.check[cases[c].fails].passed, "%s: %s passed", cases[c].pair,
                          ts_jcheck_name(cases[c].fails));
            ck_assert_msg(rep.worst == cases[c].fails, "%s: worst is %s", cases[c].pair,
                          ts_jcheck_name(rep.worst));
        }
        ck_assert_msg(fabs(rep.check[TS_JCHECK_ENERGY_TAYLOR].slope - cases[c].slope) < 0.1,
                      "%s: Taylor slope %g", cases[c].pair,
                      rep.check[TS_JCHECK_ENERGY_TAYLOR].slope);
        ts_system_free(sys);
    }
    /* the command line names the check; wind (not conservative) fails it too */
    int rc = cli_run("check-system --system cloth --param nx=5 --param ny=5 --param wind_x=2", out,
                     sizeof out, err, sizeof err);
    ck_assert_int_eq(rc, 1);
    ck_assert_ptr_nonnull(strstr(out, "result: FAIL: energy gradient = -f"));
    ck_assert_ptr_nonnull(strstr(err, "failed the energy check (energy gradient = -f)"));
}
END_TEST

/* Tolerance mode: dopri5 on the oscillator to T = 10 at rtol = atol from
 * 1e-3 to 1e-11.  Against the exact solution, each error is within a small
 * multiple of its tolerance (the controller bounds the local error; the
 * global error over ten time units of an oscillation stays within 100 tol
 * here), the error falls with the tolerance at a slope near 1, the work
 * grows as the tolerance shrinks, and a stepper without an estimate is
 * refused. */
START_TEST(tolerance_mode)
{
    ts_params p;
    ts_params_init(&p, ts_oscillator.params);
    ts_sweep_reference ref;
    ts_sweep_reference_options ro = ts_sweep_reference_options_for(0.01, 10.0);
    ck_assert_int_eq(ts_sweep_reference_compute(&ts_oscillator, &p, 10.0, &ro, &ref), TS_OK);
    ck_assert_int_eq(ref.computed, 0);
    ts_sweep_point pts[5];
    ts_solver_options o = ts_default_solver_options();
    ts_sweep_request rq = {.stype = &ts_oscillator, .params = &p, .type = &ts_dopri5, .opt = &o,
                           .tol_min = 1e-11, .tol_max = 1e-3, .levels = 5};
    ck_assert_int_eq(ts_sweep_tolerances(&rq, &ref, pts), TS_OK);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(pts[i].status, TS_OK);
        ck_assert_double_eq_tol(pts[i].tol, 1e-3 * pow(1e-2, i), 1e-6 * pts[i].tol);
        ck_assert_msg(pts[i].error <= 100.0 * pts[i].tol, "tol %g: error %g", pts[i].tol,
                      pts[i].error);
        ck_assert_int_eq(pts[i].steps, pts[i].stats.accepted);
        ck_assert_double_eq_tol(pts[i].dt * (double)pts[i].steps, 10.0, 1e-9);
        if (i > 0) {
            ck_assert_double_lt(pts[i].error, pts[i - 1].error);
            ck_assert_int_gt(pts[i].stats.force_evals, pts[i - 1].stats.force_evals);
        }
    }
    int used;
    double slope = ts_tolerance_slope(pts, 5, &used);
    ck_assert_int_eq(used, 5);
    ck_assert_msg(slope > 0.8 && slope < 1.2, "slope %g", slope);
    ts_sweep_request rk4 = {.stype = &ts_oscillator, .params = &p, .type = &ts_rk4, .opt = &o,
                            .tol_min = 1e-8, .tol_max = 1e-3, .levels = 3};
    ck_assert_int_eq(ts_sweep_tolerances(&rk4, &ref, pts), TS_ERR_UNSUPPORTED);
    /* a tolerance error control cannot meet: the run fails, its row has no
     * mean step (nan) and the steps accepted before it failed, not dt = T
     * and 1 step */
    rq.tol_min = rq.tol_max = 1e-300, rq.levels = 1;
    ck_assert_int_eq(ts_sweep_tolerances(&rq, &ref, pts), TS_OK);
    ck_assert_int_ne(pts[0].status, TS_OK);
    ck_assert_int_eq(pts[0].excluded, TS_SWEEP_UNSTABLE);
    ck_assert(isnan(pts[0].dt));
    ck_assert_int_eq(pts[0].steps, pts[0].stats.accepted);
    ts_sweep_reference_release(&ref);

    char out[1 << 14], err[4096];
    int rc = cli_run("sweep --system oscillator --stepper dopri5,rk4 --tol-max 1e-4 --tol-min "
                     "1e-8 --levels 3 --t-end 5 --dt-min 0.02 --dt-max 0.2 --format csv",
                     out, sizeof out, err, sizeof err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_ptr_nonnull(strstr(out, ",reference_error,tol\n"));
    ck_assert_ptr_nonnull(strstr(err, "slope of log error vs log tol"));
    rc = cli_run("sweep --system oscillator --tol-max 1e-4", out, sizeof out, err, sizeof err);
    ck_assert_msg(rc == 2 && strstr(err, "--tol-min"), "exit %d: %s", rc, err);
}
END_TEST

/* The error estimate's reliability on x' = -x (test1d, k = 1, x0 = 1),
 * against closed forms: one step of dopri5 gives R(z) with z = -h and its
 * embedded solution Rhat(z), both polynomials from the tableau,
 * R(z) = 1 + sum_j z^j b^T A^(j-1) 1 (Rhat with bhat), so the estimate is
 * |R(z) - Rhat(z)| and the true local error |R(z) - e^z|.  The estimate is
 * of order 5 and the true error of order 6 (dopri5 keeps the fifth-order
 * solution), so estimated / true grows like 1/h: ratio * h settles to a
 * constant.  Both differences of numbers near 1 carry about 1e-16 of
 * rounding, the closed forms' and the stepper's alike. */
static double dopri5_poly(const double *w, double z)
{
    static const double a[7][7] = {
        {0}, {1.0 / 5}, {3.0 / 40, 9.0 / 40},
        {44.0 / 45, -56.0 / 15, 32.0 / 9},
        {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
        {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
        {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
    double v[7] = {1, 1, 1, 1, 1, 1, 1}, r = 1.0, zj = 1.0; /* v = A^(j-1) 1 */
    for (int j = 1; j <= 7; j++) {
        double c = 0.0, nv[7] = {0};
        for (int i = 0; i < 7; i++)
            c += w[i] * v[i];
        zj *= z;
        r += c * zj;
        for (int i = 0; i < 7; i++)
            for (int k = 0; k < i; k++)
                nv[i] += a[i][k] * v[k];
        for (int i = 0; i < 7; i++)
            v[i] = nv[i];
    }
    return r;
}

START_TEST(estimator_against_closed_form)
{
    static const double b[7] = {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784,
                                11.0 / 84, 0};
    static const double bhat[7] = {5179.0 / 57600, 0, 7571.0 / 16695, 393.0 / 640,
                                   -92097.0 / 339200, 187.0 / 2100, 1.0 / 40};
    ts_params p;
    ts_params_init(&p, ts_test1d.params);
    enum { N = 7 };
    ts_estimator_point pts[N];
    ts_sweep_request rq = {.stype = &ts_test1d, .params = &p, .type = ts_stepper_find("dopri5"),
                           .dt_min = 0.025, .dt_max = 0.1, .levels = N};
    ck_assert_int_eq(ts_estimator_sweep(&rq, pts), TS_OK);
    for (int k = 0; k < N; k++) {
        double z = -pts[k].dt, R = dopri5_poly(b, z);
        double est = fabs(R - dopri5_poly(bhat, z)), tru = fabs(R - exp(z));
        ck_assert_msg(fabs(pts[k].estimated - est) <= 1e-9 * est + 4e-16 &&
                          fabs(pts[k].truth - tru) <= 1e-9 * tru + 4e-16,
                      "dt %g: estimated %.15g (closed form %.15g), true %.15g (%.15g)",
                      pts[k].dt, pts[k].estimated, est, pts[k].truth, tru);
    }
    double eo = ts_estimator_slope(pts, N, 0), to = ts_estimator_slope(pts, N, 1);
    ck_assert_msg(fabs(eo - 5.0) <= 0.05 && fabs(to - 6.0) <= 0.1, "orders %g and %g", eo, to);
    double c1 = pts[N - 2].estimated / pts[N - 2].truth * pts[N - 2].dt,
           c2 = pts[N - 1].estimated / pts[N - 1].truth * pts[N - 1].dt;
    ck_assert_msg(fabs(c2 / c1 - 1.0) <= 0.03, "ratio * dt %g then %g", c1, c2);
    /* a stepper without an estimate is refused; the command says which */
    rq.type = ts_stepper_find("rk4");
    ck_assert_int_eq(ts_estimator_sweep(&rq, pts), TS_ERR_UNSUPPORTED);
    int rc = cli_run("sweep --system test1d --stepper rk4 --estimator", out, sizeof out, err,
                     sizeof err);
    ck_assert_msg(rc == 2 && strstr(err, "'rk4' has no error estimate"), "exit %d: %s", rc, err);
    rc = cli_run("sweep --system test1d --estimator --format csv", out, sizeof out, err,
                 sizeof err);
    ck_assert_msg(rc == 0 && strstr(out, "stepper,dt,estimated,true,ratio,estimated_order,"
                                         "true_order\ndopri5,0.1,"),
                  "exit %d: %s", rc, out);
}
END_TEST

Suite *reference_suite(void)
{
    Suite *s = suite_create("reference");
    TCase *tc = tcase_create("reference");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, sweep_orders_against_reference, 0,
                        (int)(sizeof ref_systems / sizeof *ref_systems));
    tcase_add_test(tc, computed_reference_matches_closed_form);
    tcase_add_test(tc, coarse_reference_excludes_points);
    tcase_add_test(tc, repeated_step_counts_run_once);
    tcase_add_test(tc, tiny_solution_orders);
    tcase_add_test(tc, sweep_string_defaults_cli);
    tcase_add_test(tc, error_norms_defined);
    tcase_add_test(tc, error_against_time_closed_form);
    tcase_add_test(tc, phase_against_formulas);
    int nsteppers = 0;
    while (ts_stepper_at(nsteppers))
        nsteppers++;
    tcase_add_loop_test(tc, phase_local_order, 0, nsteppers);
    tcase_add_test(tc, energy_checks);
    tcase_add_test(tc, tolerance_mode);
    tcase_add_test(tc, estimator_against_closed_form);
    suite_add_tcase(s, tc);
    return s;
}

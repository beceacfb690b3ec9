/* The Jacobian checker (tstep/check.h) and `tstep check-system`: every
 * registered system passes; a test chain with a deliberately wrong df/dx
 * block fails, with the wrong particle named and a Taylor slope near 1
 * (near 2 when right); a fast path that clamps compressed springs is caught. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include "chain.h"
#include "tests.h"
#include "tstep/check.h"
#include "tstep/stepper.h"

static int has_param(const ts_system_type *t, const char *name)
{
    for (const ts_param_def *d = t->params; d && d->name; d++)
        if (strcmp(d->name, name) == 0)
            return 1;
    return 0;
}

/* Every registered system passes with the default options.  A system whose
 * fast path clamps compressed springs (a `clamp` parameter) is checked with
 * clamping off, where the fast path is meant to be exact. */
START_TEST(registry_system_passes)
{
    const ts_system_type *type = ts_system_at(_i);
    ts_params p;
    ts_params_init(&p, type->params);
    if (has_param(type, "clamp"))
        ck_assert_int_eq(ts_params_set(&p, "clamp", "0"), TS_OK);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(type, &p, &sys), TS_OK);
    ts_jacobian_report rep;
    int s = ts_jacobian_check(sys, NULL, &rep);
    if (!ts_system_has_jacobian(sys)) {
        ck_assert_int_eq(s, TS_ERR_UNSUPPORTED);
    } else {
        ck_assert_int_eq(s, TS_OK);
        ck_assert_msg(rep.passed, "system '%s' fails %s (error %g, slope %g) at component %zu",
                      type->name, ts_jcheck_name(rep.worst), rep.check[rep.worst].error,
                      rep.check[rep.worst].slope, rep.component);
        ck_assert(rep.check[TS_JCHECK_DFDX].done && rep.check[TS_JCHECK_TAYLOR_X].done);
        ck_assert_int_eq(rep.check[TS_JCHECK_DFDV].done, sys->order == 2);
    }
    ts_system_free(sys);
}
END_TEST

static void check_chain(const chain_options *o, ts_jacobian_report *rep)
{
    ts_system *sys;
    ck_assert_int_eq(chain_new(o, &sys), TS_OK);
    ck_assert_int_eq(ts_jacobian_check(sys, NULL, rep), TS_OK);
    ts_system_free(sys);
}

START_TEST(exact_chain_passes_with_slope_two)
{
    for (int fast = 0; fast <= 1; fast++) {
        chain_options o = chain_default_options();
        o.particles = 5, o.drag = 0.4, o.fast_path = fast;
        ts_jacobian_report rep;
        check_chain(&o, &rep);
        ck_assert(rep.passed);
        const ts_jcheck_result *tx = &rep.check[TS_JCHECK_TAYLOR_X];
        ck_assert(!tx->linear);
        ck_assert_double_ge(tx->slope, 1.9);
        ck_assert_double_le(tx->slope, 2.1);
        ck_assert(rep.check[TS_JCHECK_TAYLOR_V].linear); /* drag is linear in v */
        ck_assert_double_le(rep.check[TS_JCHECK_DFDX].error, 1e-8);
        ck_assert_double_le(rep.check[TS_JCHECK_SYMMETRY_X].error, 1e-12);
        ck_assert_int_eq(rep.check[TS_JCHECK_FAST_PATH].done, fast);
        ck_assert_int_eq(rep.check[TS_JCHECK_DIAGONAL].done, fast);
        ck_assert_uint_eq(rep.pinned, 2);
        ck_assert_uint_eq(rep.dofs, 10);
    }
}
END_TEST

/* {defect, wrong particle}: the checker fails, blames df/dx at that particle,
 * and the Taylor remainder shrinks like e (slope about 1). */
static const struct {
    chain_bug bug;
    int particle;
} wrong_cases[] = {
    {CHAIN_BUG_SIGN, 1}, {CHAIN_BUG_SIGN, 3}, {CHAIN_BUG_FACTOR, 2}, {CHAIN_BUG_FACTOR, 4},
};

START_TEST(wrong_jacobian_is_caught_at_its_particle)
{
    chain_options o = chain_default_options();
    o.particles = 5;
    o.bug = wrong_cases[_i].bug;
    o.bug_particle = wrong_cases[_i].particle;
    ts_jacobian_report rep;
    check_chain(&o, &rep);
    ck_assert(!rep.passed);
    ck_assert_int_eq(rep.worst, TS_JCHECK_DFDX);
    ck_assert_uint_eq(rep.particle, (size_t)o.bug_particle);
    ck_assert_uint_eq(rep.component / 2, (size_t)o.bug_particle);
    ck_assert(!rep.component_pinned);
    ck_assert(!rep.check[TS_JCHECK_DFDX].passed);
    ck_assert_double_gt(rep.check[TS_JCHECK_DFDX].error, 1e-2);
    const ts_jcheck_result *tx = &rep.check[TS_JCHECK_TAYLOR_X];
    ck_assert(!tx->passed && !tx->linear);
    ck_assert_double_ge(tx->slope, 0.9);
    ck_assert_double_le(tx->slope, 1.2);
    ck_assert(!rep.check[TS_JCHECK_SYMMETRY_X].passed); /* one row wrong: not symmetric */
    ck_assert(rep.check[TS_JCHECK_DFDV].passed);        /* df/dv is right */
}
END_TEST

/* A NaN in the product: every check it enters fails, the Taylor slope too
 * (its remainders are not finite: no slope, where too few finite points
 * used to read as a linear map, "ok"). */
START_TEST(nan_jacobian_fails_the_taylor_check)
{
    chain_options o = chain_default_options();
    o.particles = 5;
    o.bug = CHAIN_BUG_NAN;
    o.bug_particle = 2;
    ts_jacobian_report rep;
    check_chain(&o, &rep);
    ck_assert(!rep.passed);
    const ts_jcheck_result *tx = &rep.check[TS_JCHECK_TAYLOR_X];
    ck_assert(tx->done && !tx->passed && !tx->linear && isnan(tx->slope));
    ck_assert(rep.check[TS_JCHECK_DFDV].passed);
}
END_TEST

/* Forces on pinned particles are still checked: a wrong block there fails. */
START_TEST(wrong_jacobian_on_pinned_particle_is_caught)
{
    chain_options o = chain_default_options();
    o.bug = CHAIN_BUG_FACTOR, o.bug_particle = 0;
    ts_jacobian_report rep;
    check_chain(&o, &rep);
    ck_assert(!rep.passed);
    ck_assert_uint_eq(rep.particle, 0);
    ck_assert(rep.component_pinned);
    ck_assert_uint_eq(rep.pinned, 2);
}
END_TEST

/* A fast path that clamps 1 - L/|d| at 0 differs from the exact products
 * where springs are compressed; with clamping off it matches. */
START_TEST(clamped_fast_path_is_caught)
{
    chain_options o = chain_default_options();
    o.particles = 4, o.stretch = 0.8, o.fast_path = 1, o.clamp = 1;
    ts_jacobian_report rep;
    check_chain(&o, &rep);
    ck_assert(!rep.passed);
    ck_assert_int_eq(rep.worst, TS_JCHECK_FAST_PATH);
    ck_assert(rep.check[TS_JCHECK_DFDX].passed && rep.check[TS_JCHECK_TAYLOR_X].passed);
    o.clamp = 0;
    check_chain(&o, &rep);
    ck_assert(rep.passed);
    ck_assert_double_le(rep.check[TS_JCHECK_FAST_PATH].error, 1e-12);
}
END_TEST

START_TEST(same_seed_same_report)
{
    chain_options o = chain_default_options();
    ts_system *sys;
    ck_assert_int_eq(chain_new(&o, &sys), TS_OK);
    double x0[6];
    memcpy(x0, sys->x, sizeof x0);
    ts_jacobian_check_options opt = ts_default_jacobian_check_options();
    ts_jacobian_report a, b, c;
    ck_assert_int_eq(ts_jacobian_check(sys, &opt, &a), TS_OK);
    ck_assert_int_eq(ts_jacobian_check(sys, &opt, &b), TS_OK);
    opt.seed = 7;
    ck_assert_int_eq(ts_jacobian_check(sys, &opt, &c), TS_OK);
    ck_assert(a.check[TS_JCHECK_DFDX].error == b.check[TS_JCHECK_DFDX].error);
    ck_assert(a.check[TS_JCHECK_TAYLOR_X].slope == b.check[TS_JCHECK_TAYLOR_X].slope);
    ck_assert(a.check[TS_JCHECK_DFDX].error != c.check[TS_JCHECK_DFDX].error);
    ck_assert(memcmp(x0, sys->x, sizeof x0) == 0); /* the stored state is untouched */
    ts_system_free(sys);
}
END_TEST

START_TEST(unsupported_and_bad_options)
{
    chain_options o = chain_default_options();
    o.jacobian = 0;
    ts_system *sys;
    ck_assert_int_eq(chain_new(&o, &sys), TS_OK);
    ts_jacobian_report rep;
    ck_assert_int_eq(ts_jacobian_check(sys, NULL, &rep), TS_ERR_UNSUPPORTED);
    ts_system_free(sys);
    o = chain_default_options();
    ck_assert_int_eq(chain_new(&o, &sys), TS_OK);
    ts_jacobian_check_options opt = ts_default_jacobian_check_options();
    opt.samples = 0;
    ck_assert_int_eq(ts_jacobian_check(sys, &opt, &rep), TS_ERR_INPUT);
    ts_system_free(sys);
}
END_TEST

/* Run build/tstep with `args`, standard error merged into `out`; the exit status. */
static int run_tstep(const char *args, char *out, size_t size)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", TSTEP_BIN, args);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t len = fread(out, 1, size - 1, f);
    out[len] = '\0';
    int st = pclose(f);
    ck_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

START_TEST(cli_check_system)
{
    char out[8192];
    ck_assert_int_eq(run_tstep("check-system --system oscillator", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "result: pass"));
    ck_assert_ptr_nonnull(strstr(out, "df/dx vs differences"));
    ck_assert_ptr_nonnull(strstr(out, "Taylor slope in x"));
    ck_assert_int_eq(run_tstep("check-system --system test1d --param omega=3 --samples 2 --seed 5",
                               out, sizeof out), 0);
    ck_assert_int_eq(run_tstep("check-system --system nosuch", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "unknown system 'nosuch'"));
    for (size_t i = 0; ts_system_at(i); i++)
        ck_assert_ptr_nonnull(strstr(out, ts_system_at(i)->name));
    ck_assert_int_eq(run_tstep("check-system", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--system"));
    ck_assert_int_eq(run_tstep("check-system --system oscillator --samples 0", out, sizeof out),
                     2);
    ck_assert_ptr_nonnull(strstr(out, "--samples"));
    ck_assert_int_eq(run_tstep("check-system --system oscillator --tol abc", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--tol"));
    ck_assert_int_eq(run_tstep("check-system --system oscillator --param q=1", out, sizeof out),
                     2);
    ck_assert_ptr_nonnull(strstr(out, "unknown parameter 'q'"));
    ck_assert_int_eq(run_tstep("check-system --help", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "Usage: tstep check-system"));
}
END_TEST

Suite *jacobian_suite(void)
{
    Suite *s = suite_create("jacobian");
    TCase *tc = tcase_create("check");
    int nsys = 0;
    while (ts_system_at(nsys))
        nsys++;
    tcase_add_loop_test(tc, registry_system_passes, 0, nsys);
    tcase_add_test(tc, exact_chain_passes_with_slope_two);
    tcase_add_loop_test(tc, wrong_jacobian_is_caught_at_its_particle, 0,
                        (int)(sizeof wrong_cases / sizeof *wrong_cases));
    tcase_add_test(tc, nan_jacobian_fails_the_taylor_check);
    tcase_add_test(tc, wrong_jacobian_on_pinned_particle_is_caught);
    tcase_add_test(tc, clamped_fast_path_is_caught);
    tcase_add_test(tc, same_seed_same_report);
    tcase_add_test(tc, unsupported_and_bad_options);
    tcase_add_test(tc, cli_check_system);
    suite_add_tcase(s, tc);
    return s;
}

/* The command line: exit codes (0 success, 1 computation failed, 2 usage or
 * input error), messages that name the bad option or value, valid-name
 * lists, output formats, and the acceptance sweep of the README. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_run.h"
#include "tests.h"
#include "tstep/stepper.h"

static char out[1 << 16], err[1 << 14];

static const struct {
    const char *args;
    const char *needle; /* must appear in stderr */
} usage_errors[] = {
    {"", "Usage"},
    {"frobnicate", "unknown command 'frobnicate'"},
    {"run --system nope --stepper rk4 --dt 0.1 --steps 1", "unknown system 'nope' (valid: test1d, oscillator"},
    {"run --system test1d --stepper rk5 --dt 0.1 --steps 1", "unknown stepper 'rk5' (valid: "},
    {"run --system test1d --stepper rk4 --dt abc --steps 1", "--dt: 'abc' is not a finite number"},
    {"run --system test1d --stepper rk4 --dt -0.1 --steps 1", "--dt: '-0.1' must be greater than 0"},
    {"run --system test1d --stepper rk4 --dt 0 --steps 1", "--dt: '0' must be greater than 0"},
    {"run --system test1d --stepper rk4 --steps 1", "--dt is required"},
    {"run --system test1d --stepper rk4 --dt 0.1", "exactly one of --t-end and --steps"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 2 --t-end 1", "exactly one of --t-end and --steps"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 2.5", "--steps: '2.5' is not a whole number"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 0", "--steps: '0' must be at least 1"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --param q=1", "unknown parameter 'q' (valid: k, omega, x0)"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --param k=fast", "parameter 'k': 'fast' is not a finite number"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --param k", "'k' is not of the form key=value"},
    {"run --system oscillator --stepper rk4 --dt 0.1 --steps 1 --param m=-1", "parameter 'm': -1 must be > 0"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --format xml", "--format: 'xml' is not a format; run writes dat, csv, frames, npy or json"},
    {"region --stepper rk4 --format frames", "--format: region writes dat, csv or json, not frames"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --format frames", "needs a particle system"},
    {"run --system test1d --stepper rk4,midpoint --dt 0.1 --steps 1", "run takes one stepper"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --bogus", "unrecognized option or missing value: '--bogus'"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --out /nonexistent/dir/f.csv", "cannot write '/nonexistent/dir/f.csv'"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 extra", "unexpected argument 'extra'"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --newton-max 0", "--newton-max: '0' must be at least 1"},
    {"sweep --system test1d --stepper all --dt-min 0.1 --dt-max 0.01 --t-end 1", "--dt-min 0.1 is larger than --dt-max 0.01"},
    {"sweep --system test1d --stepper all --dt-min 0.01 --t-end 1", "give both --dt-min and --dt-max"},
    {"sweep --system test1d --stepper all --dt-min 0.01 --dt-max 2 --t-end 1", "--dt-max 2 is larger than --t-end 1"},
    {"sweep --system test1d --stepper all --dt-min 0.01 --dt-max 0.1 --t-end 1 --levels 0", "--levels: '0' must be at least 1"},
    {"sweep --system test1d --stepper nope --dt-min 0.01 --dt-max 0.1 --t-end 1", "unknown stepper 'nope'"},
    {"list extra", "unexpected argument 'extra'"},
};

START_TEST(usage_errors_exit_2)
{
    EXPECT(usage_errors[_i].args, 2, usage_errors[_i].needle);
    if (strstr(usage_errors[_i].args, "rk5")) { /* the registry's names, in its order */
        char names[128];
        snprintf(names, sizeof names, "(valid: %s, %s,", ts_stepper_at(0)->name,
                 ts_stepper_at(1)->name);
        ck_assert_msg(strstr(err, names), "lacks '%s': %s", names, err);
    }
}
END_TEST

START_TEST(help_for_every_command)
{
    const char *cmds[] = {"--help", "list --help", "run --help", "sweep --help"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        EXPECT(cmds[i], 0, NULL);
        ck_assert_ptr_nonnull(strstr(out, "Usage: tstep"));
    }
    EXPECT("run --help", 0, NULL);
    const char *run_opts[] = {"--system", "--stepper", "--dt", "--t-end", "--steps", "--param",
                              "--out", "--every", "--format", "--stats", "--adaptive"};
    for (size_t i = 0; i < sizeof run_opts / sizeof *run_opts; i++)
        ck_assert_msg(strstr(out, run_opts[i]), "run --help lacks %s", run_opts[i]);
}
END_TEST

START_TEST(list_shows_every_stepper_and_system)
{
    EXPECT("list", 0, NULL);
    for (size_t i = 0; ts_stepper_at(i); i++)
        ck_assert_msg(strstr(out, ts_stepper_at(i)->name), "list lacks %s",
                      ts_stepper_at(i)->name);
    for (size_t i = 0; ts_system_at(i); i++) {
        ck_assert_msg(strstr(out, ts_system_at(i)->name), "list lacks %s",
                      ts_system_at(i)->name);
        for (const ts_param_def *d = ts_system_at(i)->params; d && d->name; d++)
            ck_assert_msg(strstr(out, d->summary), "list lacks parameter %s", d->name);
    }
}
END_TEST

/* CSV columns and values: two rk4 steps on the oscillator. */
START_TEST(run_csv_trajectory)
{
    EXPECT("run --system oscillator --stepper forward-euler --dt 0.5 --t-end 1 --format csv", 0,
           NULL);
    /* forward Euler, k = m = 1: (x, v) -> (x + h v, v - h x); E = (x^2 + v^2)/2 */
    ck_assert_str_eq(out, "t,x0,v0,energy\n0,1,0,0.5\n0.5,1,-0.5,0.625\n1,0.75,-1,0.78125\n");
    EXPECT("run --system test1d --stepper forward-euler --dt 0.25 --steps 4 --every 3", 0, NULL);
    /* test1d energy k x^2 / 2 */
    ck_assert_str_eq(out, "# t x0 energy\n0 1 0.5\n0.75 0.421875 0.0889892578125\n"
                          "1 0.31640625 0.05005645751953125\n"); /* exact in binary */
}
END_TEST

START_TEST(run_stats_columns)
{
    EXPECT("run --system oscillator --stepper backward-euler --dt 0.1 --steps 2 --format csv "
           "--stats",
           0, "Newton iterations");
    ck_assert_ptr_nonnull(strstr(out, "t,x0,v0,energy,force_evals,newton_iters,linear_iters,residual,linear_residual\n"));
    /* the row at t = 0 follows no step: nothing solved, the residuals nan */
    ck_assert_ptr_nonnull(strstr(out, "linear_residual\n0,1,0,0.5,0,0,0,nan,nan\n"));
    /* backward Euler, k = m = 1: x1 = x0 / (1 + h^2), v1 = -h x1 */
    const char *row = strstr(out, "\n0.1,");
    ck_assert_ptr_nonnull(row);
    char *end;
    double x1 = strtod(row + 5, &end), v1 = strtod(end + 1, NULL);
    ck_assert_double_eq_tol(x1, 1.0 / 1.01, 1e-14);
    ck_assert_double_eq_tol(v1, -0.1 / 1.01, 1e-14);
}
END_TEST

/* Divergence: exit 1, the message names the step and time, and the rows
 * written before it are complete. */
START_TEST(run_divergence_exit_1)
{
    char path[] = "/tmp/tstep-div-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    char args[256];
    snprintf(args, sizeof args,
             "run --system test1d --param k=1000 --stepper forward-euler --dt 0.1 --t-end 5 "
             "--format csv --out %s",
             path);
    EXPECT(args, 1, "diverged");
    ck_assert_ptr_nonnull(strstr(err, "at step 5 (t = 0.4 to 0.5)"));
    FILE *f = fopen(path, "r");
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    remove(path);
    /* x_k = (-99)^k exactly; t = 0.1 + 0.1 + 0.1 is 0.30000000000000004 in
     * doubles, and 500 * 96059601^2 = 4613723472139600500 rounds to the
     * double written shortest as 4.613723472139601e+18 */
    ck_assert_str_eq(buf, "t,x0,energy\n0,1,500\n0.1,-99,4900500\n0.2,9801,48029800500\n"
                          "0.30000000000000004,-970299,470740074700500\n"
                          "0.4,96059601,4.613723472139601e+18\n");
}
END_TEST

/* The acceptance sweep: observed orders 1, 2, 2, 4, 1 within 0.1 on test1d
 * and on the oscillator, read from the order table on stderr.  Newton's
 * error (newton_tol of the state per step) is kept below the finest step's
 * truncation error of the order-2 implicit methods. */
START_TEST(sweep_orders)
{
    const char *systems[] = {"test1d", "oscillator"};
    for (int s = 0; s < 2; s++) {
        char args[256];
        snprintf(args, sizeof args,
                 "sweep --system %s --stepper all --dt-min 1e-3 --dt-max 1e-1 --levels 7 "
                 "--t-end 1 --format csv --newton-tol 1e-12",
                 systems[s]);
        EXPECT(args, 0, "observed order");
        ck_assert_ptr_nonnull(strstr(out, "stepper,dt,steps,error"));
        for (size_t i = 0; ts_stepper_at(i); i++) {
            const ts_stepper_type *t = ts_stepper_at(i);
            char key[64];
            if (tests_is_skeleton(t)) /* `all` skips a hand-out's skeletons */
                continue;
            snprintf(key, sizeof key, "\n  %s ", t->name);
            const char *row = strstr(err, key);
            ck_assert_msg(row, "no order row for %s", t->name);
            int nominal;
            double observed;
            char name[64];
            ck_assert_int_eq(sscanf(row, " %63s %d %lf", name, &nominal, &observed), 3);
            ck_assert_int_eq(nominal, t->order);
            if (t->order >= 5)
                continue; /* at round-off below dt = 0.025: measured on its own range in
                             tests/check_steppers.c */
            ck_assert_msg(fabs(observed - t->order) <= 0.1, "%s on %s: observed %g", t->name,
                          systems[s], observed);
        }
    }
}
END_TEST

START_TEST(sweep_dat_blocks)
{
    EXPECT("sweep --system test1d --stepper forward-euler,rk4 --dt-min 0.01 --dt-max 0.1 "
           "--levels 3 --t-end 1",
           0, NULL);
    ck_assert_ptr_nonnull(strstr(out, "# stepper dt steps error excluded observed_order "
                                      "force_evals jacobian_products newton_iters linear_iters "
                                      "seconds reference_error\nforward-euler 0.1 10 "));
    ck_assert_ptr_nonnull(strstr(out, "\n\n\nrk4 0.1 10 ")); /* a new gnuplot index block */
}
END_TEST

/* run --out follows its file's extension without --format (.csv, .npy),
 * as --diagnostics does; --format wins when given */
START_TEST(run_out_follows_extension)
{
    char out[4096], err[4096], text[256];
    static const struct {
        const char *args, *start;
    } cases[] = {
        {"--out build/ext_test.csv", "t,x0,v0,energy"},
        {"--out build/ext_test.npy", "\x93NUMPY"},
        {"--out build/ext_test.dat", "# t x0 v0 energy"},
        {"--out build/ext_test.csv --format dat", "# t x0 v0 energy"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char args[512];
        snprintf(args, sizeof args, "run --system oscillator --stepper rk4 --dt 0.1 --steps 2 %s",
                 cases[k].args);
        EXPECT(args, 0, NULL);
        const char *path = strstr(cases[k].args, "build/");
        char file[64];
        sscanf(path, "%63s", file);
        FILE *f = fopen(file, "rb");
        ck_assert_ptr_nonnull(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
        remove(file);
        ck_assert_msg(strncmp(text, cases[k].start, strlen(cases[k].start)) == 0,
                      "%s: starts '%.20s'", cases[k].args, text);
    }
}
END_TEST

/* A long header (the 30 x 30 cloth: 5,402 columns, some 33 kB, formed in
 * 8 kB blocks): t, x0 .. x2699, v0 .. v2699, energy, in order, csv and dat */
START_TEST(run_header_names_every_column)
{
    static char line[1 << 16];
    const char *formats[] = {"csv", "dat"};
    for (int f = 0; f < 2; f++) {
        char args[256], file[64];
        snprintf(file, sizeof file, "build/header_test.%s", formats[f]);
        snprintf(args, sizeof args,
                 "run --system cloth --param nx=30 --param ny=30 --stepper forward-euler "
                 "--dt 1e-4 --steps 1 --out %s",
                 file);
        EXPECT(args, 0, NULL);
        FILE *in = fopen(file, "r");
        ck_assert_ptr_nonnull(in);
        ck_assert_ptr_nonnull(fgets(line, sizeof line, in));
        fclose(in);
        remove(file);
        const char *sep = f == 0 ? ",\n" : " \n";
        char *tok = strtok(line, sep);
        if (f == 1) { /* the comment mark */
            ck_assert_str_eq(tok, "#");
            tok = strtok(NULL, sep);
        }
        ck_assert_str_eq(tok, "t");
        char want[32];
        for (int half = 0; half < 2; half++)
            for (int i = 0; i < 2700; i++) {
                snprintf(want, sizeof want, "%c%d", half ? 'v' : 'x', i);
                tok = strtok(NULL, sep);
                ck_assert_msg(tok && strcmp(tok, want) == 0, "%s: column %s is %s", file, want,
                              tok ? tok : "missing");
            }
        ck_assert_str_eq(strtok(NULL, sep), "energy");
        ck_assert_ptr_null(strtok(NULL, sep));
    }
}
END_TEST

/* sweep --levels 1: one step size, said as such (no range, no order) */
START_TEST(sweep_levels_one_header)
{
    char out[8192], err[8192];
    EXPECT("sweep --system oscillator --stepper rk4 --levels 1", 0,
           "one dt per stepper (--levels 1: no observed order");
    ck_assert_ptr_null(strstr(err, "down by"));
    ck_assert_ptr_null(strstr(err, ".. "));
}
END_TEST

Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, usage_errors_exit_2, 0,
                        (int)(sizeof usage_errors / sizeof *usage_errors));
    tcase_add_test(tc, help_for_every_command);
    tcase_add_test(tc, list_shows_every_stepper_and_system);
    tcase_add_test(tc, run_csv_trajectory);
    tcase_add_test(tc, run_out_follows_extension);
    tcase_add_test(tc, run_header_names_every_column);
    tcase_add_test(tc, sweep_levels_one_header);
    tcase_add_test(tc, run_stats_columns);
    tcase_add_test(tc, run_divergence_exit_1);
    tcase_add_test(tc, sweep_orders);
    tcase_add_test(tc, sweep_dat_blocks);
    suite_add_tcase(s, tc);
    return s;
}

/* Robustness: interrupted runs leave complete files, data-loss corners of
 * the command line (one file for two outputs, counts past their type,
 * unbounded runs), honest totals and warnings, landing exactly on T. */
#define _GNU_SOURCE
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli_run.h"
#include "tests.h"
#include "tstep/springs.h"
#include "tstep/obj.h"
#include "tstep/status.h"
#include "tstep/stepper.h"

static char out[1 << 16], err[1 << 14];

static long file_size(const char *path);

/* --- bad input: exit 2 naming the option ------------------------------------ */

static const struct {
    const char *args;
    const char *needle;
} refused[] = {
    /* counts against their real type (int): no wrap to negative, 0 or 1 */
    {"run --system test1d --stepper backward-euler --dt 0.1 --steps 2 --newton-max 2147483648",
     "--newton-max: '2147483648' is more than 2147483647"},
    {"run --system test1d --stepper backward-euler --dt 0.1 --steps 2 --newton-max 4294967296",
     "--newton-max: '4294967296'"},
    {"run --system test1d --stepper backward-euler --dt 0.1 --steps 2 --cg-max 4294967297",
     "--cg-max: '4294967297'"},
    {"sweep --system test1d --stepper rk4 --dt-min 0.01 --dt-max 0.1 --t-end 1 --cg-max "
     "2147483648",
     "--cg-max: '2147483648'"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 99999999999999999999",
     "--steps: '99999999999999999999' is out of range"},
    /* the diagnostics' own option named */
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 2 --diagnostics /nonexist/d.csv",
     "--diagnostics: cannot write '/nonexist/d.csv'"},
    /* an ambiguous prefix names its candidates; flags and values */
    {"run --system test1d --stepper rk4 --dt 0.1 --step 2", "ambiguous option '--step'"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 2 --stats=1",
     "--stats takes no value"},
    {"run --system test1d --stepper rk4 --steps 2 --dt", "--dt needs a value"},
    /* run takes one stepper: no "or all" offered */
    {"run --system test1d --stepper rk5 --dt 0.1 --steps 2", "unknown stepper 'rk5' (valid: "},
    /* unbounded runs: the estimate and the option that allows it */
    {"run --system oscillator --stepper rk4 --dt 0.01 --steps 1000000000 --out /dev/null",
     "--allow-large"},
    {"run --system test1d --stepper rk4 --dt 1e-12 --t-end 1 --out /dev/null", "GB"},
    /* a small output but a billion cloth steps: the time estimate refuses */
    {"run --system cloth --stepper rk4 --dt 1e-5 --steps 1000000000 --every 1000000 --out "
     "/dev/null",
     "hours (1000000000 steps, timed from a few)"},
};

START_TEST(refused_with_exit_2)
{
    EXPECT(refused[_i].args, 2, refused[_i].needle);
    if (strstr(refused[_i].args, "--step 2"))
        ck_assert_msg(strstr(err, "--stepper") && strstr(err, "--steps"), "%s", err);
    if (strstr(refused[_i].args, "rk5")) { /* the registry's names, in its order */
        char names[128];
        snprintf(names, sizeof names, "(valid: %s, %s, %s,", ts_stepper_at(0)->name,
                 ts_stepper_at(1)->name, ts_stepper_at(2)->name);
        ck_assert_msg(strstr(err, names), "lacks '%s': %s", names, err);
    }
    if (strstr(refused[_i].args, "rk5"))
        ck_assert_msg(!strstr(err, "or all"), "run offers 'or all': %s", err);
}
END_TEST

/* --out F --diagnostics F, also through different paths to one file, and
 * standard output redirected to the diagnostics file: refused, and the
 * file left as it was. */
START_TEST(one_file_for_two_outputs_refused)
{
    char dir[] = "/tmp/tstep-robust-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char args[2048], path[512];
    const char *forms[][2] = {{"%s/f.csv", "%s/f.csv"},
                              {"%s/f.csv", "%s/./f.csv"},
                              {"%s/f.csv", "%s/../%s/f.csv"}};
    for (int k = 0; k < 3; k++) {
        char a[512], b[512];
        snprintf(a, sizeof a, forms[k][0], dir);
        const char *base = strrchr(dir, '/') + 1;
        if (k == 2)
            snprintf(b, sizeof b, forms[k][1], dir, base);
        else
            snprintf(b, sizeof b, forms[k][1], dir);
        for (int exists = 0; exists < 2; exists++) {
            snprintf(path, sizeof path, "%s/f.csv", dir);
            remove(path);
            if (exists) {
                FILE *f = fopen(path, "w");
                fputs("keep\n", f);
                fclose(f);
            }
            snprintf(args, sizeof args,
                     "run --system test1d --stepper rk4 --dt 0.1 --steps 3 --out %s "
                     "--diagnostics %s",
                     a, b);
            EXPECT(args, 2, "--diagnostics");
            struct stat sb;
            if (exists)
                ck_assert_msg(stat(path, &sb) == 0 && sb.st_size == 5, "%s: file changed",
                              args);
        }
    }
    /* a hard link is one file under two names */
    char link_path[600];
    snprintf(link_path, sizeof link_path, "%s/g.csv", dir);
    ck_assert_int_eq(link(path, link_path), 0);
    snprintf(args, sizeof args,
             "run --system test1d --stepper rk4 --dt 0.1 --steps 3 --out %s --diagnostics %s",
             path, link_path);
    EXPECT(args, 2, "the same file");
    remove(link_path);
    /* a symbolic link to a file not there yet, in another directory: the
     * file that writing through it would create */
    char sub[600], target[600];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(link_path, sizeof link_path, "%s/sub/l.csv", dir);
    snprintf(target, sizeof target, "%s/new.csv", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ck_assert_int_eq(symlink("../new.csv", link_path), 0);
    snprintf(args, sizeof args,
             "run --system test1d --stepper rk4 --dt 0.1 --steps 3 --out %s --diagnostics %s",
             target, link_path);
    EXPECT(args, 2, "the same file");
    struct stat nb;
    ck_assert_msg(stat(target, &nb) != 0, "%s was created", target);
    remove(link_path);
    /* standard output redirected into the diagnostics file */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s run --system test1d --stepper rk4 --dt 0.1 --steps 3 --diagnostics %s >%s "
             "2>/dev/null",
             TSTEP_BIN, path, path);
    int status = system(cmd);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2, "%s: status %d", cmd, status);
    /* two different files are fine */
    snprintf(args, sizeof args,
             "run --system test1d --stepper rk4 --dt 0.1 --steps 3 --out %s --diagnostics "
             "%s/d.csv",
             path, dir);
    EXPECT(args, 0, NULL);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

/* --- memory: the estimate, not an allocation size ----------------------------------- */

START_TEST(large_system_refused_with_estimate)
{
    /* 10000 x 10000 grid: 1e8 particles; springs: structural 2 n (n-1),
     * shear 2 (n-1)^2, flexion 2 n (n-2) */
    long n = 10000;
    long springs = 2 * n * (n - 1) + 2 * (n - 1) * (n - 1) + 2 * n * (n - 2);
    double need = TS_SPRINGS_BYTES_PER_PARTICLE * (double)n * n +
                  TS_SPRINGS_BYTES_PER_SPRING * (double)springs;
    EXPECT("list", 0, NULL);
    const char *lim = strstr(out, "this machine has ");
    ck_assert_msg(lim != NULL, "tstep list shows no limits");
    double have_gb = strtod(lim + strlen("this machine has "), NULL);
    if (need / 1e9 <= have_gb)
        return; /* a machine this large runs it */
    EXPECT("run --system cloth --param nx=10000 --param ny=10000 --stepper rk4 --dt 1e-4 "
           "--steps 1 --out /dev/null",
           2, "needs about");
    char want[128];
    snprintf(want, sizeof want, "%.3g GB (100000000 particles, %ld springs)", need / 1e9,
             springs);
    ck_assert_msg(strstr(err, want), "stderr lacks '%s': %s", want, err);
    ck_assert_msg(!strstr(err, "out of memory"), "%s", err);
}
END_TEST

/* --- figures: the simulated geometry, sizes, distinguishable curves ------------------ */

static int sh_out(const char *cmd, char *buf, size_t size)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(buf, 1, size - 1, p);
    buf[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* plots/cloth.gp draws the collider, the grid row, the frame times and the
 * titles from the run's own output, whatever they were */
START_TEST(cloth_figure_reads_the_run)
{
    char dir[] = "/tmp/tstep-robust-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s run --system cloth --param plane=xz --param nx=6 --param ny=5 "
             "--param sphere_x=0.4 --param sphere_y=-0.37 --param sphere_z=0.45 "
             "--param sphere_r=0.21 --stepper rk4 --dt 0.002 --t-end 0.06 --every 3 "
             "--format frames --out %s/frames-cloth.dat",
             TSTEP_BIN, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "gnuplot -e \"datadir='%s'; outdir='%s'; fmt='png'\" -e \"set loadpath 'plots'\" "
             "plots/cloth.gp -e \"set print '-'; print sphere_x, sphere_y, sphere_z, sphere_r, "
             "nx, frame_dt, stepper\" 2>&1",
             dir, dir);
    static char got[1 << 14];
    ck_assert_int_eq(sh_out(cmd, got, sizeof got), 0);
    double x, y, z, r, fdt;
    int nx;
    char stepper[64];
    ck_assert_msg(sscanf(got, "%lf %lf %lf %lf %d %lf %63s", &x, &y, &z, &r, &nx, &fdt,
                         stepper) == 7,
                  "%s", got);
    ck_assert_double_eq(x, 0.4);
    ck_assert_double_eq(y, -0.37);
    ck_assert_double_eq(z, 0.45);
    ck_assert_double_eq(r, 0.21);
    ck_assert_int_eq(nx, 6);
    ck_assert_double_eq_tol(fdt, 0.006, 1e-15);
    ck_assert_str_eq(stepper, "rk4");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* the regions figure at make plots' own grid (0.04) stays under 2 MB as svg */
START_TEST(regions_svg_small)
{
    char dir[] = "/tmp/tstep-robust-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[2048], path[600];
    snprintf(cmd, sizeof cmd,
             "%s region --stepper all --re-min -5 --re-max 3 --im-min -4 --im-max 4 "
             "--step 0.04 --out %s/region.dat 2>/dev/null && "
             "gnuplot -e \"datadir='%s'; outdir='%s'; fmt='svg'\" -e \"set loadpath 'plots'\" "
             "plots/regions.gp",
             TSTEP_BIN, dir, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/regions.svg", dir);
    long size = file_size(path);
    ck_assert_msg(size > 0 && size < 2000000, "regions.svg is %ld bytes", size);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* steppers whose curves coincide (midpoint and trapezoid share R(z); the
 * backward-Euler variants their steps) differ in dash and point type */
START_TEST(coinciding_curves_distinguishable)
{
    static const char *groups[][3] = {{"midpoint", "trapezoid", NULL},
                                      {"backward-euler", "backward-euler-linear",
                                       "backward-euler-opt"}};
    for (int g = 0; g < 2; g++) {
        char cmd[1024], got[512];
        snprintf(cmd, sizeof cmd,
                 "gnuplot -e \"outdir='/tmp'; fmt='png'\" -e \"set loadpath 'plots'; "
                 "call 'style.gp' 'tstep-robust-style' 100 100; set print '-'; "
                 "do for [s in '%s %s %s'] { print stepper_dash(s, 1), stepper_point(s, 1) }\" "
                 "2>&1; rm -f /tmp/tstep-robust-style.png",
                 groups[g][0], groups[g][1], groups[g][2] ? groups[g][2] : "");
        ck_assert_int_eq(sh_out(cmd, got, sizeof got), 0);
        int d[3] = {0}, p[3] = {0}, k = groups[g][2] ? 3 : 2;
        const char *q = got;
        for (int i = 0; i < k; i++) {
            int used = 0;
            ck_assert_msg(sscanf(q, "%d %d%n", &d[i], &p[i], &used) == 2, "%s", got);
            q += used;
        }
        for (int i = 0; i < k; i++)
            for (int j = i + 1; j < k; j++)
                ck_assert_msg(d[i] != d[j] && p[i] != p[j], "%s and %s look alike",
                              groups[g][i], groups[g][j]);
    }
}
END_TEST

/* --- help and list texts ------------------------------------------------------------ */

START_TEST(help_texts_tell_the_truth)
{
    EXPECT("amplification --help", 0, NULL);
    ck_assert_msg(!strstr(out, "o.plot") && strstr(out, "gnuplot> plot 'build/amp"), "%s", out);
    /* the figures stability --help quotes are what its example prints:
     * dt_pred (column 4) of forward-euler and rk4 */
    EXPECT("stability --system oscillator --param k=100 --param c=20 --stepper "
           "forward-euler,rk4 --format csv",
           0, NULL);
    const char *row = strstr(out, "\nrk4,");
    ck_assert_ptr_nonnull(row);
    double col[4];
    const char *q = row + 5;
    for (int k = 1; k < 4; k++) {
        col[k] = strtod(q, NULL);
        q = strchr(q, ',') + 1;
    }
    char want[64];
    snprintf(want, sizeof want, "%.4g for rk4", col[3]);
    EXPECT("stability --help", 0, NULL);
    ck_assert_msg(strstr(out, want), "stability --help lacks '%s'", want);
    /* cloth's ny: the default grid hangs along -y */
    EXPECT("list", 0, NULL);
    const char *ny = strstr(strstr(out, "  cloth "), "\n      ny ");
    ck_assert_ptr_nonnull(ny);
    ck_assert_msg(strstr(ny, "-y") && strstr(ny, "-y") < strchr(ny + 1, '\n'), "%.100s", ny);
    /* gnuplot's exit status, not a raw wait status */
    char gp[] = "/tmp/tstep-robust-gnuplot-XXXXXX"; /* its own: runs side by side */
    int fd = mkstemp(gp);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("#!/bin/sh\ncat >/dev/null\nexit 3\n", f);
    fclose(f);
    chmod(gp, 0755);
    setenv("GNUPLOT", gp, 1);
    EXPECT("run --system test1d --stepper rk4 --dt 0.1 --steps 3 --plot", 1,
           "gnuplot failed with exit status 3");
    unsetenv("GNUPLOT");
    remove(gp);
}
END_TEST

/* --- totals, warnings, the end time ------------------------------------------- */

/* forward Euler on test1d with k dt = 3: |R| = 2, diverges after about
 * 27 steps; the totals count the failed step as rejected, not accepted */
START_TEST(diverged_run_totals)
{
    EXPECT("run --system test1d --param k=30 --stepper forward-euler --dt 0.1 --steps 100 "
           "--stats --out /dev/null",
           1, "diverged");
    long steps = -1, acc = -1, rej = -1;
    const char *p = strstr(err, "tstep run: ");
    for (; p; p = strstr(p + 1, "tstep run: "))
        if (sscanf(p, "tstep run: %ld steps to", &steps) == 1)
            break;
    ck_assert_msg(p, "no totals line: %s", err);
    const char *a = strstr(p, "accepted "), *r = strstr(p, "rejected ");
    ck_assert(a && r);
    sscanf(a, "accepted %ld", &acc);
    sscanf(r, "rejected %ld", &rej);
    /* |x_k| = 2^k exceeds 1e8 = the divergence limit first at k = 27 */
    ck_assert_int_eq(steps, 26);
    ck_assert_int_eq(acc, steps);
    ck_assert_int_eq(rej, 1);
}
END_TEST

/* the oscillator's energy grows by (1 + dt^2) per forward Euler step */
START_TEST(energy_growth_warns)
{
    EXPECT("run --system oscillator --stepper forward-euler --dt 0.1 --steps 1000 --out "
           "/dev/null",
           0, "energy grew from 0.5 to ");
    double e = 0;
    sscanf(strstr(err, " to ") + 4, "%lf", &e);
    ck_assert_double_eq_tol(e, 0.5 * pow(1.01, 1000), 1e-5 * e); /* printed to 6 digits */
    ck_assert(strstr(err, "see tstep stability"));
    EXPECT("run --system oscillator --stepper rk4 --dt 0.1 --steps 1000 --out /dev/null", 0,
           NULL);
    ck_assert_msg(!strstr(err, "energy grew"), "a stable run warned: %s", err);
    EXPECT("run --system oscillator --param c=0.5 --stepper backward-euler --dt 0.1 --steps 100 "
           "--out /dev/null",
           0, NULL);
    ck_assert_msg(!strstr(err, "energy grew"), "a damped run warned: %s", err);
}
END_TEST

/* rk4's amplification on x' = -k x: R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24 */
static double rk4_r(double z) { return 1 + z + z * z / 2 + z * z * z / 6 + z * z * z * z / 24; }

/* t and x0 of the last row of out[] */
static void last_row(double *t, double *x)
{
    char *last = NULL;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
        last = line;
    ck_assert_ptr_nonnull(last);
    ck_assert_int_eq(sscanf(last, "%lf %lf", t, x), 2);
}

START_TEST(t_end_lands_exactly)
{
    EXPECT("run --system test1d --param k=2 --stepper rk4 --dt 0.0333 --t-end 5", 0, NULL);
    double t, x;
    last_row(&t, &x);
    ck_assert_msg(t == 5.0, "last row at t = %.17g, not 5", t);
    /* 150 steps of 0.0333 and one of 5 - 150 * 0.0333 = 0.005 */
    double h = 5.0 - 150 * 0.0333;
    double want = pow(rk4_r(-2 * 0.0333), 150) * rk4_r(-2 * h);
    ck_assert_double_eq_tol(x, want, 1e-13);
    /* steps that divide T stay as they were: four of 0.25 */
    EXPECT("run --system test1d --stepper rk4 --dt 0.25 --t-end 1", 0, NULL);
    last_row(&t, &x);
    ck_assert(t == 1.0);
    ck_assert_double_eq_tol(x, pow(rk4_r(-0.25), 4), 1e-14);
}
END_TEST

/* --- interrupted runs ----------------------------------------------------------- */

/* Fields per line of a file: every line must end in '\n' and have the same
 * number of `sep`-separated fields as the first data line; returns the
 * number of lines, and the last line's first field in *t_last. */
static long check_rows(const char *path, char sep, double *t_last)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s missing", path);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lines = 0, fields0 = -1;
    while ((len = getline(&line, &cap, f)) > 0) {
        ck_assert_msg(line[len - 1] == '\n', "%s: line %ld is cut off (%zd bytes, no newline)",
                      path, lines + 1, len);
        lines++;
        if (line[0] == '#' || (line[0] == 't' && lines == 1))
            continue;
        long fields = 1;
        for (char *p = line; *p; p++)
            fields += *p == sep;
        if (fields0 < 0)
            fields0 = fields;
        ck_assert_msg(fields == fields0, "%s: line %ld has %ld fields, the first row %ld", path,
                      lines, fields, fields0);
        *t_last = strtod(line, NULL);
    }
    free(line);
    fclose(f);
    return lines;
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* Start `args` with stdout/stderr to files, wait until `watch` has grown
 * past `bytes`, send `sig`; returns the exit status. */
/* `watch` has grown past `bytes` and, when needle is not NULL, holds it */
static int watched(const char *watch, long bytes, const char *needle)
{
    if (file_size(watch) < bytes)
        return 0;
    if (!needle)
        return 1;
    static char text[1 << 16];
    FILE *f = fopen(watch, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    return strstr(text, needle) != NULL;
}

static int interrupt(const char *args, const char *watch, long bytes, const char *needle,
                     int sig, const char *errpath)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "exec %s %s 2>%s", TSTEP_BIN, args, errpath);
    tests_check_command(cmd);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    struct timespec tick = {0, 20000000};
    for (int i = 0; i < 1500 && !watched(watch, bytes, needle); i++)
        nanosleep(&tick, NULL);
    kill(pid, sig);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

static const struct {
    int sig, code;
    const char *name, *format;
    char sep;
} stops[] = {{SIGINT, 130, "SIGINT", "csv", ','}, {SIGTERM, 143, "SIGTERM", "dat", ' '}};

START_TEST(interrupted_run_leaves_complete_rows)
{
    char dir[] = "/tmp/tstep-robust-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char traj[600], diag[600], errp[600], args[2048];
    snprintf(traj, sizeof traj, "%s/t.%s", dir, stops[_i].format);
    snprintf(diag, sizeof diag, "%s/d.%s", dir, stops[_i].format);
    snprintf(errp, sizeof errp, "%s/err", dir);
    /* a long cloth run, every 7th step: the stop falls between output rows */
    snprintf(args, sizeof args,
             "run --system cloth --param nx=10 --param ny=10 --stepper rk4 --dt 1e-4 "
             "--steps 5000000 --every 7 --format %s --out %s --diagnostics %s --allow-large",
             stops[_i].format, traj, diag);
    int code = interrupt(args, traj, 200000, NULL, stops[_i].sig, errp);
    slurp(errp, err, sizeof err);
    ck_assert_msg(code == stops[_i].code, "exit %d, want %d: %s", code, stops[_i].code, err);
    ck_assert_msg(strstr(err, stops[_i].name) && strstr(err, "every output ends there"), "%s",
                  err);
    double t1 = NAN, t2 = NAN;
    long n1 = check_rows(traj, stops[_i].sep, &t1), n2 = check_rows(diag, stops[_i].sep, &t2);
    ck_assert_msg(n1 > 10 && n1 == n2, "%ld trajectory lines, %ld diagnostics lines", n1, n2);
    /* the same step; the two files may print t with different digits */
    ck_assert_msg(fabs(t1 - t2) <= 1e-12 * fabs(t1), "the trajectory ends at t = %.17g, the "
                                                     "diagnostics at %.17g", t1, t2);
    /* and the message says that time */
    char want[64];
    snprintf(want, sizeof want, "t = %.15g", t1);
    ck_assert_msg(strstr(err, want), "stderr does not say %s: %s", want, err);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

/* sweep: the steppers finished before the signal keep complete rows */
START_TEST(interrupted_sweep_keeps_finished_rows)
{
    char dir[] = "/tmp/tstep-robust-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char table[600], errp[600], args[2048];
    snprintf(table, sizeof table, "%s/w.dat", dir);
    snprintf(errp, sizeof errp, "%s/err", dir);
    snprintf(args, sizeof args,
             "sweep --system oscillator --stepper forward-euler,rk4 --levels 20 --dt-min 1e-5 "
             "--dt-max 0.1 --t-end 10 --out %s",
             table);
    int code = interrupt(args, table, 1, "\nforward-euler ", SIGINT, errp);
    slurp(errp, err, sizeof err);
    ck_assert_msg(code == 130, "exit %d: %s", code, err);
    ck_assert_msg(strstr(err, "stopped by SIGINT; during 'rk4'"), "%s", err);
    double t;
    check_rows(table, ' ', &t); /* every line complete, rows of one width */
    /* forward Euler's 20 rows, none of rk4's */
    static char text[1 << 16];
    slurp(table, text, sizeof text);
    int fe = 0, rk = 0;
    for (const char *q = text; q; q = strchr(q, '\n'), q = q ? q + 1 : q) {
        fe += strncmp(q, "forward-euler ", 14) == 0;
        rk += strncmp(q, "rk4 ", 4) == 0;
    }
    ck_assert_msg(fe == 20 && rk == 0, "%d forward-euler rows, %d rk4 rows", fe, rk);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

/* --- the OBJ reader ------------------------------------------------------------- */

static char objdir[64];

static const char *obj_file(const char *name, const char *text)
{
    static char path[128];
    if (!objdir[0]) {
        snprintf(objdir, sizeof objdir, "/tmp/tstep-robust-obj-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(objdir));
    }
    snprintf(path, sizeof path, "%s/%s", objdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static const struct {
    const char *name, *text; /* text NULL: the path itself is the case */
    const char *needle;      /* in the detail, after "PATH" */
} bad_meshes[] = {
    /* a stray vertex would become a particle, even "the top" */
    {"stray.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1e300 1e300 0\nf 1 2 3\n",
     ":4: vertex 4 is used by no face"},
    /* coincident vertices: file:line, numbers from 1 as in the file */
    {"twin.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n# again\nv 1 0 0\nf 1 2 3\nf 5 4 3\n",
     ":6: vertex 5 is at the same point (1, 0, 0) as vertex 2 (line 2)"},
    {"nul.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", ":5: a NUL byte"},
    {"/dev/zero", NULL, ": a device, not an OBJ file"},
    {"/tmp", NULL, ": a directory, not an OBJ file"},
};

START_TEST(obj_reader_refuses)
{
    const char *path = bad_meshes[_i].name;
    if (bad_meshes[_i].text) {
        path = obj_file(bad_meshes[_i].name, bad_meshes[_i].text);
        if (strcmp(bad_meshes[_i].name, "nul.obj") == 0) {
            FILE *f = fopen(path, "a");
            fputc('\0', f);
            fclose(f);
        }
    }
    ts_obj_mesh *m = NULL;
    ck_assert_int_eq(ts_obj_load(path, &m), TS_ERR_INPUT);
    ck_assert_ptr_null(m);
    char want[256];
    snprintf(want, sizeof want, "%s%s", path, bad_meshes[_i].needle);
    ck_assert_msg(strstr(ts_error_detail(), want), "detail '%s' lacks '%s'", ts_error_detail(),
                  want);
    /* and on the command line: exit 2 with that message */
    char args[512];
    snprintf(args, sizeof args,
             "run --system cloth --param mesh=%s --stepper rk4 --dt 0.01 --steps 1 --out "
             "/dev/null",
             path);
    EXPECT(args, 2, want);
}
END_TEST

/* a line past TS_OBJ_MAX_LINE is named, not read into memory without end */
START_TEST(obj_reader_caps_the_line)
{
    const char *path = obj_file("long.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n# ");
    FILE *f = fopen(path, "a");
    for (long i = 0; i < TS_OBJ_MAX_LINE / 64 + 1; i++)
        fputs("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", f);
    fputs("\nf 1 2 3\n", f);
    fclose(f);
    ts_obj_mesh *m = NULL;
    ck_assert_int_eq(ts_obj_load(path, &m), TS_ERR_INPUT);
    char want[256];
    snprintf(want, sizeof want, "%s:4: line longer than", path);
    ck_assert_msg(strstr(ts_error_detail(), want), "%s", ts_error_detail());
    remove(path);
}
END_TEST

/* one polygon of 300000 corners: the repeated-corner check is linear (it
 * was quadratic: 4.5e10 comparisons, far past this test's timeout) */
START_TEST(obj_reader_big_polygon)
{
    enum { N = 300000 };
    const char *path = obj_file("big.obj", "");
    FILE *f = fopen(path, "w");
    for (long k = 0; k < N; k++)
        fprintf(f, "v %.17g %.17g 0\n", cos(2 * M_PI * k / N), sin(2 * M_PI * k / N));
    fputs("f", f);
    for (long k = 1; k <= N; k++)
        fprintf(f, " %ld", k);
    fputs("\n", f);
    fclose(f);
    ts_obj_mesh *m = NULL;
    ck_assert_msg(ts_obj_load(path, &m) == TS_OK, "%s", ts_error_detail());
    ck_assert_uint_eq(m->nverts, N);
    ck_assert_uint_eq(m->ntris, N - 2);
    ts_obj_free(m);
    /* and a repeat of the first corner at the very end is still found */
    f = fopen(path, "a");
    fputs("f 1 2 3 4 5 1\n", f);
    fclose(f);
    ck_assert_int_eq(ts_obj_load(path, &m), TS_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(ts_error_detail(), "vertex 1 repeated"));
    remove(path);
}
END_TEST

/* Out of memory while reading is an error, never a silently shorter mesh:
 * under an address-space limit, a mesh with a long comment line between
 * its two faces loads whole or fails. */
START_TEST(obj_reader_no_silent_truncation)
{
#if defined(__SANITIZE_ADDRESS__)
    return; /* ASan reserves more address space than any limit here allows */
#else
    const char *path = obj_file("pressure.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\n#");
    FILE *f = fopen(path, "a");
    for (long i = 0; i < (8L << 20) / 64; i++)
        fputs("cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc", f);
    fputs("\nf 2 4 3\n", f);
    fclose(f);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        /* room for what is mapped now and 4 MB more: not for the line */
        FILE *maps = fopen("/proc/self/status", "r");
        char line[256];
        long vm_kb = 0;
        while (maps && fgets(line, sizeof line, maps))
            if (sscanf(line, "VmSize: %ld kB", &vm_kb) == 1)
                break;
        if (maps)
            fclose(maps);
        struct rlimit rl = {(rlim_t)(vm_kb + 4096) * 1024, (rlim_t)(vm_kb + 4096) * 1024};
        setrlimit(RLIMIT_AS, &rl);
        ts_obj_mesh *m = NULL;
        int s = ts_obj_load(path, &m);
        _exit(s == TS_OK ? (m->ntris == 2 ? 0 : 3) : 0);
    }
    int status;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "a truncated mesh was returned as complete (status %d)", status);
    remove(path);
#endif
}
END_TEST

/* --- documentation that renders -------------------------------------------------- */

/* Line `n` (from 1) of a file, into buf. */
static void source_line(const char *path, long n, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    for (long i = 1; f && fgets(buf, (int)size, f) && i < n; i++)
        buf[0] = '\0';
    if (f)
        fclose(f);
}

static int is_fence(const char *line)
{
    line += strspn(line, " ");
    return strncmp(line, "```", 3) == 0 || strncmp(line, "~~~", 3) == 0;
}

/* Render one Markdown file with cmark (the XML tree with source positions):
 * 0 when it renders, else 1 with the problem in msg: a fenced code block
 * never closed (it runs to the end of the file), a code block holding a
 * heading or a table (text lost to a fence that opens where one should
 * close), no heading at all, or cmark failing. */
static int markdown_problem(const char *path, char *msg, size_t size)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cmark -t xml --sourcepos '%s'", path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return snprintf(msg, size, "cannot run cmark"), 1;
    static char xml[1 << 21];
    size_t n = fread(xml, 1, sizeof xml - 1, p);
    xml[n] = '\0';
    int status = pclose(p);
    if (status != 0 || n == 0 || n >= sizeof xml - 1)
        return snprintf(msg, size,
                        "%s: cmark failed (status %d; is the Debian package cmark installed?)",
                        path, status),
               1;
    if (!strstr(xml, "<heading"))
        return snprintf(msg, size, "%s renders without a single heading", path), 1;
    for (const char *c = strstr(xml, "<code_block"); c; c = strstr(c + 1, "<code_block")) {
        long a = 0, b = 0, e = 0, d = 0;
        if (sscanf(c, "<code_block sourcepos=\"%ld:%ld-%ld:%ld\"", &a, &b, &e, &d) != 4)
            return snprintf(msg, size, "%s: unexpected cmark output", path), 1;
        char first[1024], last[1024];
        source_line(path, a, first, sizeof first);
        source_line(path, e, last, sizeof last);
        if (is_fence(first) && !(e > a && is_fence(last)))
            return snprintf(msg, size, "%s:%ld: the code fence opened here is never closed", path,
                            a),
                   1;
        const char *body = strchr(c, '>'), *end = strstr(c, "</code_block>");
        for (const char *q = body ? body + 1 : NULL; q && end && q < end;
             q = strchr(q, '\n'), q = q ? q + 1 : q)
            if (strncmp(q, "## ", 3) == 0 || strncmp(q, "### ", 4) == 0 ||
                strncmp(q, "|---", 4) == 0)
                return snprintf(msg, size,
                                "%s:%ld-%ld renders as code but holds '%.40s': a fence opens "
                                "where one should close",
                                path, a, e, q),
                       1;
    }
    return 0;
}

START_TEST(markdown_renders)
{
    char msg[512];
    ck_assert_msg(!markdown_problem("README.md", msg, sizeof msg), "%s", msg);
    glob_t g;
    if (glob("docs/*.md", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            ck_assert_msg(!markdown_problem(g.gl_pathv[i], msg, sizeof msg), "%s", msg);
        globfree(&g);
    }
}
END_TEST

/* the checker itself: the README's old kind of unclosed fence (a heading
 * lost in code) and a fence left open at the end are caught; a good file
 * passes */
START_TEST(markdown_check_catches_fences)
{
    static const struct {
        const char *name, *text, *needle;
    } cases[] = {
        {"lost.md", "# T\n\n```\ncode\n\n## Lost\n\ntext\n```\nmore\n```\n", "## Lost"},
        {"open.md", "# T\n\ntext\n\n```sh\nmake\n\nno end\n", "never closed"},
        {"good.md", "# T\n\n```sh\nmake # ok\n```\n\n## Next\n\n|a|\n|---|\n|1|\n", NULL},
    };
    for (int k = 0; k < 3; k++) {
        char msg[512] = "";
        const char *path = obj_file(cases[k].name, cases[k].text);
        int bad = markdown_problem(path, msg, sizeof msg);
        ck_assert_msg(bad == (cases[k].needle != NULL), "%s: %s", cases[k].name, msg);
        if (bad)
            ck_assert_msg(strstr(msg, cases[k].needle), "%s: %s", cases[k].name, msg);
    }
}
END_TEST

/* Every tstep command line in the README and the reference docs runs as
 * written: lines in code blocks that start with `build/tstep` (or `$
 * build/tstep`), continued over trailing backslashes.  Lines with
 * placeholders (S, N, FILE, [...], A|B, "...") and --live are skipped.  A
 * trailing comment "exit N" gives the expected status; otherwise 0, or 0
 * or 1 for a "$ " example (whose block shows its output, failures
 * included).  They run in a scratch directory holding links to build/ and
 * data/, so files they write land there. */
static const char *const doc_files[] = {"README.md", "docs/commands.md", "docs/formats.md",
                                        "docs/definitions.md", "docs/internals.md"};

static int placeholder(const char *cmd)
{
    if (strstr(cmd, "...") || strchr(cmd, '[') || strchr(cmd, '|') || strstr(cmd, "--live"))
        return 1;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", cmd);
    for (char *save = NULL, *tok = strtok_r(buf, " \t", &save); tok;
         tok = strtok_r(NULL, " \t", &save)) {
        int upper = 1;
        for (const char *c = tok; *c; c++)
            upper &= (*c >= 'A' && *c <= 'Z') || *c == ',';
        if (upper)
            return 1;
    }
    return 0;
}

static int run_doc_commands(const char *path, const char *scratch, int *count, char *msg,
                            size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0; /* not written (yet) */
    char line[4096], cmd[8192];
    int fence = 0, lineno = 0, bad = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        const char *p = line + strspn(line, " ");
        if (strncmp(p, "```", 3) == 0) {
            fence = !fence;
            continue;
        }
        int indented = strncmp(line, "    ", 4) == 0;
        int example = strncmp(p, "$ ", 2) == 0;
        if (example)
            p += 2;
        if (!(fence || indented) || strncmp(p, "build/tstep ", 12) != 0)
            continue;
        int start = lineno;
        snprintf(cmd, sizeof cmd, "%s", p + 12);
        size_t n;
        while ((n = strcspn(cmd, "\n")) > 0 && cmd[n - 1] == '\\' && fgets(line, sizeof line, f)) {
            lineno++;
            cmd[n - 1] = ' ';
            cmd[n] = '\0';
            strncat(cmd, line + strspn(line, " "), sizeof cmd - strlen(cmd) - 1);
        }
        cmd[strcspn(cmd, "\n")] = '\0';
        int want = -1; /* 0, or 0 or 1 for examples */
        char *hash = strstr(cmd, " #");
        if (hash) {
            const char *e = strstr(hash, "exit ");
            if (e)
                want = atoi(e + 5);
            *hash = '\0';
        }
        if (placeholder(cmd))
            continue;
        char full[10000];
        snprintf(full, sizeof full,
                 "cd '%s' && TSTEP_PROGRESS=0 timeout 300 build/tstep %s >/dev/null 2>err.txt "
                 "</dev/null",
                 scratch, cmd);
        int st = system(full);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        int ok = want >= 0 ? code == want : (code == 0 || (example && code == 1));
        (*count)++;
        if (!ok) {
            char errtext[512], errpath[600];
            snprintf(errpath, sizeof errpath, "%s/err.txt", scratch);
            slurp(errpath, errtext, sizeof errtext);
            snprintf(msg, size, "%s:%d: build/tstep %s: exit %d%s: %s", path, start, cmd, code,
                     want >= 0 ? " (the text says otherwise)" : "", errtext);
            bad = 1;
        }
    }
    fclose(f);
    return bad;
}

START_TEST(doc_commands_run_as_written)
{
    char scratch[] = "/tmp/tstep-robust-docs-XXXXXX", cmd[8192], cwd[2048];
    ck_assert_ptr_nonnull(mkdtemp(scratch));
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    /* build/ -> this build directory (TSTEP_BIN's), data/ -> the shipped data */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/build' && ln -s '%s/%s' '%s/build/tstep' && "
                              "ln -s '%s/data' '%s/data'",
             scratch, cwd, TSTEP_BIN, scratch, cwd, scratch);
    ck_assert_int_eq(system(cmd), 0);
    int count = 0;
    char msg[2048] = "";
    for (size_t i = 0; i < sizeof doc_files / sizeof *doc_files; i++)
        ck_assert_msg(!run_doc_commands(doc_files[i], scratch, &count, msg, sizeof msg), "%s",
                      msg);
    ck_assert_msg(count >= 10, "only %d commands found in the docs", count);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *robust_suite(void)
{
    Suite *s = suite_create("robust");
    TCase *tc = tcase_create("cli");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, refused_with_exit_2, 0, (int)(sizeof refused / sizeof *refused));
    tcase_add_test(tc, one_file_for_two_outputs_refused);
    tcase_add_test(tc, help_texts_tell_the_truth);
    tcase_add_test(tc, large_system_refused_with_estimate);
    tcase_add_test(tc, cloth_figure_reads_the_run);
    tcase_add_test(tc, coinciding_curves_distinguishable);
    tcase_add_test(tc, diverged_run_totals);
    tcase_add_test(tc, energy_growth_warns);
    tcase_add_test(tc, t_end_lands_exactly);
    tcase_add_loop_test(tc, interrupted_run_leaves_complete_rows, 0, 2);
    tcase_add_test(tc, interrupted_sweep_keeps_finished_rows);
    suite_add_tcase(s, tc);
    TCase *obj = tcase_create("obj");
    tcase_set_timeout(obj, 20);
    tcase_add_loop_test(obj, obj_reader_refuses, 0, (int)(sizeof bad_meshes / sizeof *bad_meshes));
    tcase_add_test(obj, obj_reader_caps_the_line);
    tcase_add_test(obj, obj_reader_big_polygon);
    tcase_add_test(obj, obj_reader_no_silent_truncation);
    suite_add_tcase(s, obj);
    TCase *docs = tcase_create("figures and docs");
    tcase_set_tags(docs, "long");
    tcase_add_test(docs, regions_svg_small);
    tcase_add_test(docs, markdown_renders);
    tcase_add_test(docs, markdown_check_catches_fences);
    tcase_add_test(docs, doc_commands_run_as_written);
    tcase_set_timeout(docs, 900);
    suite_add_tcase(s, docs);
    return s;
}

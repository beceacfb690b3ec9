/* Diagnostics, terminal figures, the live view (its refusals, and the cloth
 * in a real X server under Xvfb), sweep's cost
 * columns, and that every gnuplot script in plots/ renders.
 *
 * These run build/tstep (and tools/plots.sh, gnuplot) from the repository
 * root, as `make test` does, and read back what they wrote.  Oracles: the
 * energy split kinetic + potential = energy; forward Euler's exact energy
 * factor 1 + (h omega)^2 per step on the undamped oscillator; the
 * statistics columns against an in-process run of the same stepper. */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests.h"
#include "tstep/run.h"

/* --- helpers ------------------------------------------------------------- */

static char tmpdir[64];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tstep-check-plots-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Run a shell command line (printf-style); its exit status. */
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st), "could not run: %s", cmd);
    return WEXITSTATUS(st);
}

/* The whole file (NUL-terminated); *len its size.  Fails the test if absent. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "missing file %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

static const char *in_tmp(const char *name)
{
    static char path[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", tmpdir, name);
    return path[k];
}

/* A CSV (or, with sep ' ', a '#'-headed dat) table of numbers. */
enum { MAXCOL = 64, MAXROW = 4096 };
typedef struct {
    int ncol, nrow;
    char name[MAXCOL][32];
    double *v; /* nrow x ncol */
} table;

static table read_table(const char *path, char sep)
{
    table t = {0};
    char *text = slurp(path, NULL), *save = NULL;
    t.v = calloc((size_t)MAXROW * MAXCOL, sizeof *t.v);
    ck_assert_ptr_nonnull(t.v);
    char *line = strtok_r(text, "\n", &save);
    ck_assert_ptr_nonnull(line);
    if (sep == ' ') {
        ck_assert_msg(line[0] == '#', "dat header should start with '#': %s", line);
        line += 1;
    }
    char delim[2] = {sep, '\0'};
    for (char *s2 = NULL, *tok = strtok_r(line, delim, &s2); tok; tok = strtok_r(NULL, delim, &s2)) {
        ck_assert_int_lt(t.ncol, MAXCOL);
        snprintf(t.name[t.ncol++], sizeof t.name[0], "%s", tok);
    }
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        ck_assert_int_lt(t.nrow, MAXROW);
        int c = 0;
        for (char *s2 = NULL, *tok = strtok_r(line, delim, &s2); tok;
             tok = strtok_r(NULL, delim, &s2), c++) {
            ck_assert_int_lt(c, t.ncol);
            char *end;
            t.v[t.nrow * MAXCOL + c] = strtod(tok, &end);
            ck_assert_msg(*end == '\0', "not a number: '%s' in %s", tok, path);
        }
        ck_assert_msg(c == t.ncol, "row %d of %s has %d fields, header %d", t.nrow, path, c,
                      t.ncol);
        t.nrow++;
    }
    free(text);
    return t;
}

static int col(const table *t, const char *name)
{
    for (int c = 0; c < t->ncol; c++)
        if (strcmp(t->name[c], name) == 0)
            return c;
    return -1;
}

static double at(const table *t, int row, const char *name)
{
    int c = col(t, name);
    ck_assert_msg(c >= 0, "no column '%s'", name);
    return t->v[row * MAXCOL + c];
}

static void check_rel(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol * fmax(fabs(want), 1e-300), "%s: got %.17g, want %.17g",
                  what, got, want);
}

/* --- run --diagnostics -------------------------------------------------- */

START_TEST(diag_energy_split)
{
    make_tmpdir();
    const char *d = in_tmp("d.csv");
    ck_assert_int_eq(sh(TSTEP_BIN " run --system oscillator --stepper rk4 --dt 0.05 --steps 40 "
                        "--param k=2 --param m=3 --param x0=0.7 --param v0=0.3 --out /dev/null "
                        "--diagnostics %s",
                        d),
                     0);
    table t = read_table(d, ',');
    ck_assert_str_eq(t.name[0], "t");
    ck_assert_str_eq(t.name[1], "step");
    ck_assert_int_eq(t.nrow, 41);
    ck_assert_int_lt(col(&t, "px"), 0); /* the oscillator defines no momentum */
    check_rel(at(&t, 0, "kinetic"), 0.5 * 3 * 0.3 * 0.3, 1e-15, "kinetic at t = 0");
    check_rel(at(&t, 0, "potential"), 0.5 * 2 * 0.7 * 0.7, 1e-15, "potential at t = 0");
    for (int r = 0; r < t.nrow; r++) {
        check_rel(at(&t, r, "kinetic") + at(&t, r, "potential"), at(&t, r, "energy"), 1e-14,
                  "kinetic + potential = energy");
        check_rel(at(&t, r, "t"), 0.05 * r, 1e-12, "t");
        ck_assert_int_eq((int)at(&t, r, "step"), r);
    }
    /* rk4 holds the energy of the undamped oscillator over 2 time units */
    check_rel(at(&t, 40, "energy"), at(&t, 0, "energy"), 1e-5, "rk4 energy drift");
    free(t.v);
    remove_tmpdir();
}
END_TEST

/* Forward Euler on m x'' = -k x: E_{n+1} = (1 + (h omega)^2) E_n exactly,
 * omega^2 = k/m; the same run with backward Euler divides by that factor. */
START_TEST(diag_forward_euler_factor)
{
    make_tmpdir();
    const double h = 0.05, k = 4.0, m = 1.0, factor = 1.0 + h * h * k / m;
    const char *d = in_tmp("fe.csv"), *b = in_tmp("be.csv");
    ck_assert_int_eq(sh(TSTEP_BIN " run --system oscillator --stepper forward-euler --dt %g "
                        "--steps 200 --param k=%g --param m=%g --out /dev/null --diagnostics %s",
                        h, k, m, d),
                     0);
    ck_assert_int_eq(sh(TSTEP_BIN " run --system oscillator --stepper backward-euler --dt %g "
                        "--steps 200 --param k=%g --param m=%g --out /dev/null --diagnostics %s "
                        "--newton-tol 1e-14",
                        h, k, m, b),
                     0);
    table t = read_table(d, ','), u = read_table(b, ',');
    ck_assert_int_eq(t.nrow, 201);
    for (int r = 1; r < t.nrow; r++) {
        check_rel(at(&t, r, "energy") / at(&t, r - 1, "energy"), factor, 1e-12,
                  "forward Euler energy factor");
        check_rel(at(&u, r - 1, "energy") / at(&u, r, "energy"), factor, 1e-9,
                  "backward Euler energy factor");
    }
    check_rel(at(&t, 200, "energy") / at(&t, 0, "energy"), pow(factor, 200), 1e-10,
              "forward Euler gain over 200 steps");
    free(t.v);
    free(u.v);
    remove_tmpdir();
}
END_TEST

/* The statistics columns, for every registered stepper: cumulative, one
 * accepted step per step, and at the end equal to an in-process run's totals. */
START_TEST(diag_stats_columns)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    make_tmpdir();
    const char *d = in_tmp("s.dat");
    ck_assert_int_eq(sh(TSTEP_BIN " run --system oscillator --stepper %s --dt 0.1 --steps 20 "
                        "--every 3 --param c=0.2 --out /dev/null --diagnostics %s",
                        type->name, d),
                     0);
    table t = read_table(d, ' ');
    ck_assert_int_eq(t.nrow, 1 + 6 + 1); /* steps 0, 3, ..., 18, and the last, 20 */
    for (int r = 0; r < t.nrow; r++) {
        double step = at(&t, r, "step");
        ck_assert_double_eq(at(&t, r, "accepted"), step);
        ck_assert_double_eq(at(&t, r, "rejected"), 0);
        ck_assert_double_ge(at(&t, r, "force_evals"), step);
        if (r > 0)
            ck_assert_double_ge(at(&t, r, "force_evals"), at(&t, r - 1, "force_evals"));
    }
    ck_assert_double_eq(at(&t, t.nrow - 1, "step"), 20);

    ts_params p;
    ts_params_init(&p, ts_oscillator.params);
    ck_assert_int_eq(ts_params_set(&p, "c", "0.2"), TS_OK);
    ts_system *sys;
    ts_stepper *st;
    ck_assert_int_eq(ts_system_new(&ts_oscillator, &p, &sys), TS_OK);
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    ts_run_options ro = ts_default_run_options();
    ro.dt = 0.1;
    ro.steps = 20;
    ck_assert_int_eq(ts_run(sys, st, &ro, NULL, NULL, NULL), TS_OK);
    int last = t.nrow - 1;
    ck_assert_double_eq(at(&t, last, "force_evals"), (double)st->total.force_evals);
    ck_assert_double_eq(at(&t, last, "jacobian_products"), (double)st->total.jacobian_products);
    ck_assert_double_eq(at(&t, last, "newton_iters"), (double)st->total.newton_iters);
    ck_assert_double_eq(at(&t, last, "linear_iters"), (double)st->total.linear_iters);
    if (type->flags & TS_IMPLICIT) {
        ck_assert_double_ge(at(&t, last, "newton_iters"), 20);
        ck_assert_double_ge(at(&t, last, "linear_iters"), 20);
        /* the achieved accuracy, printed to 4 digits: the run's own worst */
        double lr = at(&t, last, "linear_residual");
        ck_assert(lr >= 0.0 && lr < 1.0);
        if (!(type->flags & TS_LINEARIZED)) {
            double rmax = at(&t, last, "residual_max");
            ck_assert_double_eq_tol(rmax, st->total.residual, 1e-3 * st->total.residual);
            ck_assert_double_le(rmax, 1e-8); /* the default newton-tol */
            for (int r = 1; r <= last; r++)
                ck_assert_double_le(at(&t, r, "residual"), rmax);
        }
    } else {
        ck_assert_double_eq(at(&t, last, "newton_iters"), 0);
        ck_assert(isnan(at(&t, last, "residual")) && isnan(at(&t, last, "linear_residual")));
    }
    if (strcmp(type->name, "rk4") == 0)
        ck_assert_double_eq(at(&t, last, "force_evals"), 4 * 20);
    if (strcmp(type->name, "forward-euler") == 0)
        ck_assert_double_eq(at(&t, last, "force_evals"), 20);
    ts_stepper_free(st);
    ts_system_free(sys);
    free(t.v);
    remove_tmpdir();
}
END_TEST

/* dat and csv carry the same numbers; the trajectory is unchanged by it. */
START_TEST(diag_formats_agree)
{
    make_tmpdir();
    const char *c = in_tmp("d.csv"), *d = in_tmp("d.dat");
    const char *a = in_tmp("a.dat"), *b = in_tmp("b.dat");
    ck_assert_int_eq(sh(TSTEP_BIN " run --system oscillator --stepper midpoint --dt 0.1 "
                        "--steps 10 --out %s --diagnostics %s",
                        a, c),
                     0);
    ck_assert_int_eq(sh(TSTEP_BIN " run --system oscillator --stepper midpoint --dt 0.1 "
                        "--steps 10 --out %s --diagnostics %s",
                        b, d),
                     0);
    ck_assert_int_eq(sh(TSTEP_BIN " run --system oscillator --stepper midpoint --dt 0.1 "
                        "--steps 10 | cmp -s - %s",
                        a),
                     0);
    table tc = read_table(c, ','), td = read_table(d, ' ');
    ck_assert_int_eq(tc.ncol, td.ncol);
    ck_assert_int_eq(tc.nrow, td.nrow);
    for (int k = 0; k < tc.ncol; k++)
        ck_assert_str_eq(tc.name[k], td.name[k]);
    for (int k = 0; k < tc.nrow * MAXCOL; k++) /* equal, or both nan */
        ck_assert(tc.v[k] == td.v[k] || (isnan(tc.v[k]) && isnan(td.v[k])));
    free(tc.v);
    free(td.v);
    remove_tmpdir();
}
END_TEST

/* A diverging run: exit 1; the diagnostics rows before it are complete. */
START_TEST(diag_divergence_keeps_rows)
{
    make_tmpdir();
    const char *d = in_tmp("d.csv");
    /* forward Euler on x' = -100 x with h = 0.1: x_n = (-9)^n, past 1e8 at step 9 */
    ck_assert_int_eq(sh(TSTEP_BIN " run --system test1d --param k=100 --stepper forward-euler "
                        "--dt 0.1 --steps 50 --out /dev/null --diagnostics %s 2>/dev/null",
                        d),
                     1);
    size_t len;
    char *text = slurp(d, &len);
    ck_assert_uint_gt(len, 0);
    ck_assert_int_eq(text[len - 1], '\n');
    free(text);
    table t = read_table(d, ',');
    ck_assert_int_eq(t.nrow, 9); /* steps 0 .. 8 */
    ck_assert_int_lt(col(&t, "px"), 0); /* test1d defines no momentum */
    ck_assert_double_eq(at(&t, 8, "force_evals"), 8);
    free(t.v);
    remove_tmpdir();
}
END_TEST

/* --- sweep's cost columns ------------------------------------------------- */

START_TEST(sweep_cost_columns)
{
    make_tmpdir();
    const char *s = in_tmp("s.csv"), *e = in_tmp("err.txt");
    ck_assert_int_eq(sh(TSTEP_BIN " sweep --system oscillator --stepper forward-euler,rk4 "
                        "--dt-min 1e-2 --dt-max 1e-1 --levels 4 --t-end 1 --format csv "
                        "--out %s 2>%s",
                        s, e),
                     0);
    char *text = slurp(s, NULL);
    const char *header = "stepper,dt,steps,error,excluded,observed_order,force_evals,"
                         "jacobian_products,newton_iters,linear_iters,seconds,reference_error\n";
    ck_assert_msg(strncmp(text, header, strlen(header)) == 0, "header: %.120s", text);
    /* the rows, by hand: stepper name, then numbers */
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    int rows = 0;
    double order_rk4 = NAN;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        char name[32], excl[32];
        double dt, err, order, sec;
        long steps, fe, jp, ni, li;
        /* excluded may be empty: split on commas keeping empty fields */
        char *f[12];
        int nf = 0;
        for (char *p = line; nf < 12; nf++) {
            f[nf] = p;
            char *comma = strchr(p, ',');
            if (!comma) {
                nf++;
                break;
            }
            *comma = '\0';
            p = comma + 1;
        }
        ck_assert_int_eq(nf, 12);
        snprintf(name, sizeof name, "%s", f[0]);
        snprintf(excl, sizeof excl, "%s", f[4]);
        dt = strtod(f[1], NULL), steps = strtol(f[2], NULL, 10), err = strtod(f[3], NULL);
        order = strtod(f[5], NULL), fe = strtol(f[6], NULL, 10), jp = strtol(f[7], NULL, 10);
        ni = strtol(f[8], NULL, 10), li = strtol(f[9], NULL, 10), sec = strtod(f[10], NULL);
        check_rel(dt * (double)steps, 1.0, 1e-12, "dt * steps = t_end");
        ck_assert_double_gt(err, 0);
        ck_assert_int_eq(jp, 0);
        ck_assert_int_eq(ni, 0);
        ck_assert_int_eq(li, 0);
        ck_assert_double_gt(sec, 0);
        ck_assert_double_lt(sec, 1);
        if (strcmp(name, "rk4") == 0) {
            ck_assert_int_eq(fe, 4 * steps);
            order_rk4 = order;
        } else {
            ck_assert_str_eq(name, "forward-euler");
            ck_assert_int_eq(fe, steps);
            ck_assert_double_lt(fabs(order - 1.0), 0.1);
        }
        rows++;
    }
    ck_assert_int_eq(rows, 8);
    ck_assert_double_lt(fabs(order_rk4 - 4.0), 0.1);
    /* the column agrees with the table on standard error */
    char *err = slurp(e, NULL), *p = strstr(err, "\n  rk4 ");
    ck_assert_ptr_nonnull(p);
    double table_order;
    int nominal;
    ck_assert_int_eq(sscanf(p, " rk4 %d %lf", &nominal, &table_order), 2);
    ck_assert_double_lt(fabs(table_order - order_rk4), 0.006);
    free(err);
    free(text);
    remove_tmpdir();
}
END_TEST

/* --- --plot, --live, progress -------------------------------------------- */

START_TEST(plot_in_terminal)
{
    make_tmpdir();
    const char *o = in_tmp("o.txt");
    ck_assert_int_eq(sh("COLUMNS=100 LINES=30 build/tstep sweep --system test1d --stepper "
                        "forward-euler,rk4 --dt-min 1e-3 --dt-max 1e-1 --levels 5 --t-end 1 "
                        "--plot >%s 2>/dev/null",
                        o),
                     0);
    char *text = slurp(o, NULL);
    ck_assert_ptr_nonnull(strstr(text, "test1d: max-norm error at t = 1 against dt"));
    ck_assert_ptr_nonnull(strstr(text, "rk4 p=4.0"));
    ck_assert_ptr_nonnull(strstr(text, "forward-euler p=1.0"));
    ck_assert_ptr_null(strstr(text, "stepper,dt")); /* no table on stdout without --out */
    free(text);
    ck_assert_int_eq(sh(TSTEP_BIN " run --system oscillator --stepper rk4 --dt 0.1 --t-end 10 "
                        "--plot >%s 2>/dev/null",
                        o),
                     0);
    text = slurp(o, NULL);
    ck_assert_ptr_nonnull(strstr(text, "oscillator, rk4, dt = 0.1: state against t"));
    ck_assert_ptr_nonnull(strstr(text, "total energy against t"));
    ck_assert_ptr_nonnull(strstr(text, "+----"));
    free(text);
    ck_assert_int_eq(sh(TSTEP_BIN " stability --system test1d --param k=10 --stepper "
                        "forward-euler,rk4 --plot >%s 2>/dev/null",
                        o),
                     0);
    text = slurp(o, NULL);
    ck_assert_ptr_nonnull(strstr(text, "test1d: |R(dt lambda)| along the stiffest mode"));
    /* the bracket starts 0.245 % below the limits 0.2 and 0.27853 */
    ck_assert_ptr_nonnull(strstr(text, "forward-euler 0.1995"));
    ck_assert_ptr_nonnull(strstr(text, "rk4 0.2778"));
    ck_assert_ptr_null(strstr(text, "dt_crit,")); /* no table without --out */
    free(text);
    /* the script itself: the energy plot after a particle system's frame
     * labels its own y axis (it kept the frame's 'z') */
    const char *g = in_tmp("gp.sh"), *script = in_tmp("script.gp");
    ck_assert_int_eq(sh("printf '#!/bin/sh\\ncat >%s\\n' >%s && chmod +x %s", script, g, g), 0);
    ck_assert_int_eq(sh("GNUPLOT=%s " TSTEP_BIN " run --system cloth --param nx=4 --param ny=4 "
                        "--stepper backward-euler --dt 0.01 --steps 2 --plot >/dev/null 2>&1",
                        g),
                     0);
    text = slurp(script, NULL);
    const char *frame = strstr(text, "splot $frame"), *energy = strstr(text, "energy against t");
    ck_assert_ptr_nonnull(frame);
    ck_assert_ptr_nonnull(energy);
    ck_assert(energy > frame);
    const char *label = strstr(energy, "set ylabel 'E'"), *plot = strstr(energy, "plot $run");
    ck_assert_ptr_nonnull(label);
    ck_assert_ptr_nonnull(plot);
    ck_assert(label < plot);
    free(text);
    const char *e = in_tmp("e.txt");
    ck_assert_int_eq(sh("GNUPLOT=/nonexistent/gnuplot build/tstep run --system oscillator "
                        "--stepper rk4 --dt 0.1 --steps 3 --plot >/dev/null 2>%s",
                        e),
                     2);
    text = slurp(e, NULL);
    ck_assert_ptr_nonnull(strstr(text, "gnuplot not found"));
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(live_refuses_without_display)
{
    make_tmpdir();
    const char *e = in_tmp("e.txt");
    ck_assert_int_eq(sh("env -u DISPLAY -u WAYLAND_DISPLAY build/tstep run --system oscillator "
                        "--stepper rk4 --dt 0.1 --steps 3 --live 2>%s",
                        e),
                     2);
    char *text = slurp(e, NULL);
    ck_assert_ptr_nonnull(strstr(text, "--live needs a graphical display"));
    ck_assert_ptr_nonnull(strstr(text, "$DISPLAY"));
    free(text);
    /* a gnuplot without an interactive terminal (a stand-in that lists only dumb) */
    const char *fake = in_tmp("gnuplot");
    FILE *f = fopen(fake, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\necho 'Available terminal types:'\necho '  dumb  ascii art'\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(fake, 0755), 0);
    ck_assert_int_eq(sh("DISPLAY=:99 GNUPLOT=%s build/tstep run --system oscillator --stepper "
                        "rk4 --dt 0.1 --steps 3 --live 2>%s",
                        fake, e),
                     2);
    text = slurp(e, NULL);
    ck_assert_ptr_nonnull(strstr(text, "interactive gnuplot terminal (qt, wxt or x11)"));
    free(text);
    remove_tmpdir();
}
END_TEST

/* A TrueColor XWD screenshot of 24 or 32 bits per pixel (as `xwd -root` writes it): counts
 * of the pixels near rgb (within tol per channel) and of white pixels. */
static void xwd_count(const char *path, unsigned rgb, int tol, long *near, long *white)
{
    size_t len;
    unsigned char *b = (unsigned char *)slurp(path, &len);
    ck_assert_msg(len >= 100, "%s: not an XWD file", path);
    unsigned long h[25]; /* the header: 25 big-endian 32-bit words */
    for (int i = 0; i < 25; i++)
        h[i] = (unsigned long)b[4 * i] << 24 | (unsigned long)b[4 * i + 1] << 16 |
               (unsigned long)b[4 * i + 2] << 8 | b[4 * i + 3];
    unsigned long width = h[4], height = h[5], lsb = h[7] == 0, bpp = h[11], bpl = h[12];
    unsigned long masks[3] = {h[14], h[15], h[16]}, ncolors = h[19];
    ck_assert_msg(h[1] == 7 && (bpp == 24 || bpp == 32), "%s: XWD version %lu, %lu bits per pixel",
                  path, h[1], bpp);
    unsigned long bytes = bpp / 8;
    size_t off = h[0] + 12 * ncolors;
    ck_assert_msg(off + height * bpl <= len, "%s: truncated", path);
    *near = *white = 0;
    int want[3] = {(int)(rgb >> 16 & 255), (int)(rgb >> 8 & 255), (int)(rgb & 255)};
    for (unsigned long y = 0; y < height; y++)
        for (unsigned long x = 0; x < width; x++) {
            const unsigned char *q = b + off + y * bpl + bytes * x;
            unsigned long px = 0;
            for (unsigned long j = 0; j < bytes; j++)
                px = px << 8 | q[lsb ? bytes - 1 - j : j];
            int c[3], close = 1, bright = 1;
            for (int k = 0; k < 3; k++) {
                unsigned long m = masks[k];
                int shift = 0;
                while (m && !(m & 1))
                    m >>= 1, shift++;
                c[k] = (int)((px >> shift) & m);
                close &= abs(c[k] - want[k]) <= tol;
                bright &= c[k] >= 250;
            }
            *near += close;
            *white += bright;
        }
    free(b);
}

/* The live view in a real X server (Xvfb) with the interactive gnuplot that
 * `make deps` installs: the 3-D cloth.  The commands tstep sends are logged
 * by a stand-in gnuplot that passes them on to the real one.  Oracles: the
 * run exits 0 and gnuplot reports no error; the last frame sent is the
 * run's final state (the same run's --format frames output), as a 6 x 6
 * grid drawn with y up; and a screenshot of the display shows the window
 * (white, on the server's black root) with the cloth in its colour. */
START_TEST(live_cloth_under_xvfb)
{
    /* Without the X tools the test says it is skipped and why, unless
     * TSTEP_REQUIRE_LIVE is set (CI sets it: there it must run). */
    const char *missing =
        sh("command -v xvfb-run >/dev/null && command -v xwd >/dev/null") != 0
            ? "needs xvfb-run and xwd (Debian: xvfb xauth x11-apps; make deps installs them)"
        : sh("gnuplot -e 'set terminal' 2>&1 | grep -Eqw 'qt|wxt|x11'") != 0
            ? "needs a gnuplot with an interactive terminal (gnuplot-x11 or gnuplot-qt; "
              "make deps installs gnuplot-x11)"
            : NULL;
    if (missing) {
        const char *req = getenv("TSTEP_REQUIRE_LIVE");
        ck_assert_msg(!req || !*req, "TSTEP_REQUIRE_LIVE is set: %s", missing);
        tests_skip(missing);
    }
    tests_need("backward-euler"); /* the command is in a script: name it here */
    make_tmpdir();
    static const char *const args = "--system cloth --param nx=6 --param ny=6 "
                                    "--stepper backward-euler --dt 0.02 --steps 10";
    FILE *f = fopen(in_tmp("gnuplot"), "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\ncase \"$*\" in *-e*) exec gnuplot \"$@\" ;; esac\n"
               "tee '%s' | gnuplot \"$@\"\n",
            in_tmp("stream.gp"));
    fclose(f);
    ck_assert_int_eq(chmod(in_tmp("gnuplot"), 0755), 0);
    f = fopen(in_tmp("live.sh"), "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "GNUPLOT='%s' build/tstep run %s --live --live-speed 1000 --out /dev/null 2>'%s'\n"
               "echo $? >'%s'\nsleep 2\nxwd -root -silent >'%s'\n",
            in_tmp("gnuplot"), args, in_tmp("err.txt"), in_tmp("rc.txt"), in_tmp("shot.xwd"));
    fclose(f);
    ck_assert_int_eq(sh("xvfb-run -a -s '-screen 0 640x480x24 -br' sh '%s'", in_tmp("live.sh")), 0);
    char *text = slurp(in_tmp("rc.txt"), NULL);
    ck_assert_str_eq(text, "0\n");
    free(text);
    /* gnuplot reports a bad command as "line N: ..." (a toolkit may warn
     * about other things on some machines: those are not failures) */
    text = slurp(in_tmp("err.txt"), NULL);
    ck_assert_msg(!strstr(text, "line ") && !strstr(text, "tstep run:"),
                  "stderr of the live run: %s", text);
    free(text);

    /* the stream: an interactive terminal, y up, and frames of 6 rows of 6 */
    char *stream = slurp(in_tmp("stream.gp"), NULL);
    ck_assert_msg(strstr(stream, "set terminal qt ") || strstr(stream, "set terminal wxt ") ||
                      strstr(stream, "set terminal x11 "),
                  "no interactive terminal set");
    ck_assert_ptr_nonnull(strstr(stream, "set zlabel 'y (up)'"));
    int frames = 0;
    const char *last = NULL;
    for (const char *p = stream; (p = strstr(p, "splot '-' using 1:3:2")); p++)
        frames++, last = p;
    ck_assert_msg(frames >= 2, "%d frames", frames);
    ck_assert_ptr_nonnull(strstr(stream, "t = 0.200'"));
    const char *q = strchr(last, '\n') + 1;
    double live[36][3];
    for (int i = 0; i < 36; i++) {
        char *end;
        for (int k = 0; k < 3; k++) {
            live[i][k] = strtod(q, &end);
            ck_assert_msg(end != q, "frame row %d: '%.40s'", i, q);
            q = end;
        }
        ck_assert(*q == '\n');
        q++;
        if (i % 6 == 5 && i < 35) { /* a blank line between grid rows */
            ck_assert(*q == '\n');
            q++;
        }
    }
    ck_assert(strncmp(q, "e\n", 2) == 0);
    free(stream);

    /* the last frame is the run's final state */
    ck_assert_int_eq(sh(TSTEP_BIN " run %s --format frames --out '%s'", args, in_tmp("fr.dat")),
                     0);
    char *frames_text = slurp(in_tmp("fr.dat"), NULL);
    const char *fin = strstr(frames_text, "# t = 0.2 step 10");
    ck_assert_ptr_nonnull(fin);
    fin = strchr(fin, '\n') + 1;
    for (int i = 0; i < 36; i++)
        for (int k = 0; k < 3; k++) {
            char *end;
            double want = strtod(fin, &end);
            ck_assert(end != fin);
            fin = end;
            ck_assert_msg(fabs(live[i][k] - want) <= 1e-7 * fmax(1.0, fabs(want)),
                          "particle %d coordinate %d: live %.10g, run %.10g", i, k, live[i][k],
                          want);
        }
    free(frames_text);

    /* the screenshot: a white window and the cloth's colour (#1f5fa0) */
    long near, white;
    xwd_count(in_tmp("shot.xwd"), 0x1f5fa0, 40, &near, &white);
    ck_assert_msg(white >= 20000 && near >= 100, "screenshot: %ld white, %ld cloth-coloured",
                  white, near);
    remove_tmpdir();
}
END_TEST

START_TEST(progress_only_on_terminals)
{
    make_tmpdir();
    const char *e = in_tmp("e.txt");
    ck_assert_int_eq(sh(TSTEP_BIN " run --system oscillator --stepper rk4 --dt 1e-5 "
                        "--steps 2000000 --every 2000000 --out /dev/null 2>%s",
                        e),
                     0);
    size_t len;
    char *text = slurp(e, &len);
    ck_assert_uint_eq(len, 0); /* redirected: no progress line */
    free(text);
    ck_assert_int_eq(sh("TSTEP_PROGRESS=always build/tstep run --system oscillator --stepper rk4 "
                        "--dt 1e-5 --steps 2000000 --every 2000000 --out /dev/null 2>%s",
                        e),
                     0);
    text = slurp(e, &len);
    ck_assert_ptr_nonnull(strstr(text, "\rtstep run: "));
    ck_assert_ptr_nonnull(strstr(text, "step "));
    ck_assert_ptr_nonnull(strstr(text, " of 2000000"));
    ck_assert_int_eq(text[len - 1], 'K'); /* erased at the end: "\r\033[K" */
    free(text);
    remove_tmpdir();
}
END_TEST

/* --- every script in plots/ renders -------------------------------------- */

static int has_bytes(const char *buf, size_t len, const char *pat, size_t plen)
{
    int count = 0;
    for (size_t i = 0; i + plen <= len; i++)
        if (memcmp(buf + i, pat, plen) == 0)
            count++;
    return count;
}

START_TEST(scripts_render)
{
    make_tmpdir();
    ck_assert_int_eq(sh("TSTEP=" TSTEP_BIN " sh tools/plots.sh --quick --out %s >%s/log.txt 2>&1 || "
                        "{ tail -30 %s/log.txt; exit 1; }",
                        tmpdir, tmpdir, tmpdir),
                     0);
    DIR *dir = opendir("plots");
    ck_assert_ptr_nonnull(dir);
    struct dirent *de;
    int scripts = 0;
    while ((de = readdir(dir)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 4 || strcmp(de->d_name + n - 3, ".gp") != 0 ||
            strcmp(de->d_name, "style.gp") == 0 || strcmp(de->d_name, "strand.gp") == 0)
            continue;
        char base[128], path[512];
        snprintf(base, sizeof base, "%.*s", (int)(n - 3), de->d_name);
        snprintf(path, sizeof path, "plots/%s", de->d_name);
        char *src = slurp(path, NULL);
        /* a script whose data need a system this build lacks is not rendered */
        int runnable = 1;
        for (const char *q = strstr(src, "# needs system: "); q;
             q = strstr(q + 1, "# needs system: ")) {
            char sysname[64];
            if (sscanf(q, "# needs system: %63s", sysname) == 1 && !ts_system_find(sysname)) {
                printf("plots: %s skipped: no system '%s' in this build\n", de->d_name, sysname);
                runnable = 0;
            }
        }
        int animated = strstr(src, "gif animate") != NULL;
        free(src);
        if (!runnable)
            continue;
        scripts++;

        snprintf(path, sizeof path, "%s/%s.png", tmpdir, base);
        size_t len;
        char *png = slurp(path, &len);
        ck_assert_msg(len > 8000, "%s: only %zu bytes", path, len);
        ck_assert_msg(memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0, "%s is not a PNG", path);
        unsigned w = ((unsigned char)png[16] << 24 | (unsigned char)png[17] << 16 |
                      (unsigned char)png[18] << 8 | (unsigned char)png[19]);
        unsigned h = ((unsigned char)png[20] << 24 | (unsigned char)png[21] << 16 |
                      (unsigned char)png[22] << 8 | (unsigned char)png[23]);
        ck_assert_msg(w >= 400 && h >= 300, "%s is %ux%u", path, w, h);
        free(png);

        snprintf(path, sizeof path, "%s/%s.svg", tmpdir, base);
        char *svg = slurp(path, &len);
        ck_assert_msg(strstr(svg, "<svg") != NULL && len > 2000, "%s is not an SVG figure", path);
        free(svg);

        /* an animation script also makes NAME.gif: animated, many frames */
        if (animated) {
            snprintf(path, sizeof path, "%s/%s.gif", tmpdir, base);
            char *gif = slurp(path, &len);
            ck_assert_msg(memcmp(gif, "GIF89a", 6) == 0, "%s is not a GIF", path);
            ck_assert_msg(has_bytes(gif, len, "NETSCAPE2.0", 11) == 1, "%s does not loop", path);
            ck_assert_msg(has_bytes(gif, len, "\x21\xf9\x04", 3) >= 10, "%s: under 10 frames",
                          path);
            free(gif);
        }
    }
    closedir(dir);
    ck_assert_int_ge(scripts, 3);
    remove_tmpdir();
}
END_TEST

Suite *plots_suite(void)
{
    Suite *s = suite_create("plots");
    TCase *diag = tcase_create("diagnostics");
    tcase_add_test(diag, diag_energy_split);
    tcase_add_test(diag, diag_forward_euler_factor);
    int nsteppers = 0;
    while (ts_stepper_at(nsteppers))
        nsteppers++;
    tcase_add_loop_test(diag, diag_stats_columns, 0, nsteppers);
    tcase_add_test(diag, diag_formats_agree);
    tcase_add_test(diag, diag_divergence_keeps_rows);
    tcase_add_test(diag, sweep_cost_columns);
    tcase_set_timeout(diag, 30);
    suite_add_tcase(s, diag);

    TCase *gp = tcase_create("gnuplot");
    tcase_set_tags(gp, "slow");
    tcase_add_test(gp, plot_in_terminal);
    tcase_add_test(gp, live_refuses_without_display);
    tcase_add_test(gp, live_cloth_under_xvfb);
    tcase_add_test(gp, progress_only_on_terminals);
    tcase_set_timeout(gp, 240);
    suite_add_tcase(s, gp);
    TCase *all = tcase_create("every script");
    tcase_set_tags(all, "long");
    tcase_set_timeout(all, 240);
    tcase_add_test(all, scripts_render);
    suite_add_tcase(s, all);
    return s;
}

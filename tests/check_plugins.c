/* Installing tstep and using it from outside the tree, as docs/students.md
 * says: `make install PREFIX=...` into a temporary prefix, then in a
 * student's own folder the example plugins (examples/ralston.c,
 * examples/pendulum.c) built with
 *     cc -shared -fPIC $(pkg-config --cflags tstep) ralston.c -o ralston.so
 * and loaded with `tstep --plugin ./ralston.so ...`; the own program
 * (examples/mytstep.c) linked against the installed libtstep.a; the
 * refusals (a clashing name, a file that is not a plugin, another interface
 * version) with exit 2; and the run-time registry in-process.
 *
 * Oracles: Ralston's method is order 2 (observed order within 0.2 of 2 on
 * the oscillator and the test equation) and its one-step factor on the
 * imaginary axis is exactly 1 + iz - z^2/2; the same file with wrong
 * weights (b = 1/2, 1/2: b2 c2 = 1/3, not 1/2) is order 1 with factor
 * 1 + iz - z^2/3, so these tests fail on a wrong answer; the pendulum's
 * Jacobian passes check-system and a wrong one (sin for cos) fails it; the
 * installed libraries export only ts_* and tstep_* symbols (nm).
 *
 * They run make and cc from the repository root, as `make test` does; the
 * own program is linked with TSTEP_TEST_CFLAGS too (make test sets it to
 * CFLAGS, which a sanitizer build of the library needs). */
#include <complex.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests.h"
#include "tstep/tstep.h"

/* --- the installed tree and a student's folders ------------------------- */

static char root[64];        /* temporary directory of this test case */
static char prefix[128];     /* root/prefix: make install PREFIX=... */
static char repo[1024];      /* the repository (the working directory) */
static int install_status = -1;

/* Run a shell command line (printf-style) with stdout and stderr into out
 * (NUL-terminated, truncated to size); its exit status. */
static int shell(char *out, size_t size, const char *fmt, ...)
{
    char cmd[8192], log[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(log, sizeof log, "%s/last.log", root);
    char full[8192 + 512];
    snprintf(full, sizeof full, "{ %s\n} >'%s' 2>&1 </dev/null", cmd, log);
    int st = system(full);
    if (out) {
        FILE *f = fopen(log, "r");
        size_t n = f ? fread(out, 1, size - 1, f) : 0;
        out[n] = '\0';
        if (f)
            fclose(f);
    }
    ck_assert_msg(st != -1 && WIFEXITED(st), "could not run: %s", cmd);
    return WEXITSTATUS(st);
}

/* The environment of docs/students.md: the installed tstep on PATH and its
 * pkg-config file found; make's job server is not handed down. */
#define STUDENT_ENV                                                                   \
    "unset MAKEFLAGS MFLAGS MAKELEVEL; export PKG_CONFIG_PATH='%s/lib/pkgconfig' "   \
    "PATH='%s/bin':\"$PATH\"; "

static void install_tree(void)
{
    snprintf(root, sizeof root, "/tmp/tstep-check-plugins-XXXXXX");
    if (!mkdtemp(root) || !getcwd(repo, sizeof repo))
        return;
    snprintf(prefix, sizeof prefix, "%s/prefix", root);
    install_status = shell(NULL, 0, STUDENT_ENV "make -s install PREFIX='%s'", prefix, prefix,
                           prefix);
}

static void remove_tree(void)
{
    if (root[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0)
            fprintf(stderr, "check_plugins: could not remove %s\n", root);
    }
}

static void require_install(void)
{
    ck_assert_msg(install_status == 0, "make install PREFIX=%s failed (status %d)", prefix,
                  install_status);
}

/* A student's folder root/name holding copies of the named example files.
 * A hand-out may leave an example out (tools/assignment.sh: it is an answer):
 * then the check is skipped. */
static const char *folder(const char *name, const char *files)
{
    static char dir[256];
    char out[4096], list[256], path[1200];
    snprintf(list, sizeof list, "%s", files);
    for (char *save = NULL, *f = strtok_r(list, " ", &save); f; f = strtok_r(NULL, " ", &save)) {
        snprintf(path, sizeof path, "%s/examples/%s", repo, f);
        tests_need_file(path);
    }
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    ck_assert_msg(shell(out, sizeof out, "mkdir -p '%s' && for f in %s; do cp '%s/examples/'$f "
                                         "'%s'/ || exit 1; done",
                        dir, files, repo, dir) == 0,
                  "copying %s: %s", files, out);
    return dir;
}

/* Run `cmd` (printf-style) in `dir` in the students' environment. */
static int student(const char *dir, char *out, size_t size, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return shell(out, size, STUDENT_ENV "cd '%s' && %s", prefix, prefix, dir, cmd);
}

/* Build a plugin exactly as the docs say. */
static void build_plugin(const char *dir, const char *name)
{
    char out[65536];
    ck_assert_msg(student(dir, out, sizeof out,
                          "cc -shared -fPIC $(pkg-config --cflags tstep) %s.c -o %s.so", name,
                          name) == 0,
                  "building %s.so: %s", name, out);
}

/* Replace the first `from` by `to` in dir/file; fails if `from` is absent. */
static void edit(const char *dir, const char *file, const char *from, const char *to)
{
    char path[512], text[1 << 15], *at;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    ck_assert_msg((at = strstr(text, from)), "%s: '%s' not found to edit", file, from);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    ck_assert_int_eq(fclose(f), 0);
}

/* The observed order of `stepper` in a `sweep --format csv` table (column 6). */
static double observed_order(const char *csv, const char *stepper)
{
    size_t n = strlen(stepper);
    for (const char *line = csv; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, stepper, n) == 0 && line[n] == ',') {
            const char *p = line;
            for (int comma = 0; comma < 5; comma++)
                p = strchr(p, ',') + 1;
            return strtod(p, NULL);
        }
    return NAN;
}

/* Sweep `steppers` (a list, `stepper` first) on `system` with the plugin in
 * dir; the observed order of `stepper`. */
static double sweep_order(const char *dir, const char *tstep, const char *system,
                          const char *steppers)
{
    char stepper[64];
    snprintf(stepper, sizeof stepper, "%.*s", (int)strcspn(steppers, ","), steppers);
    static char out[1 << 16];
    int rc = student(dir, out, sizeof out,
                     "%s sweep --system %s --stepper %s --dt-min 0.01 --dt-max 0.2 --t-end 2 "
                     "--format csv --out sweep.csv && cat sweep.csv",
                     tstep, system, steppers);
    ck_assert_msg(rc == 0, "sweep %s on %s: exit %d: %s", stepper, system, rc, out);
    return observed_order(out, stepper);
}

/* The largest |R - want(iz)| over the imaginary-axis amplification table of
 * `stepper`, want(iz) = 1 + iz + a2 (iz)^2. */
static double amplification_error(const char *dir, const char *tstep, const char *stepper,
                                  double a2)
{
    static char out[1 << 16];
    int rc = student(dir, out, sizeof out,
                     "%s amplification --stepper %s --axis imag --z-max 2 --points 9 "
                     "--format csv",
                     tstep, stepper);
    ck_assert_msg(rc == 0, "amplification: exit %d: %s", rc, out);
    double worst = 0.0;
    int rows = 0;
    size_t n = strlen(stepper);
    for (const char *line = out; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, stepper, n) == 0 && line[n] == ',') {
            double z, re, im;
            ck_assert_int_eq(sscanf(line + n + 1, "%lf,%lf,%lf", &z, &re, &im), 3);
            double complex iz = I * z, want = 1.0 + iz + a2 * iz * iz;
            worst = fmax(worst, cabs(re + I * im - want));
            rows++;
        }
    ck_assert_int_eq(rows, 9);
    return worst;
}

/* --- the installed tree -------------------------------------------------- */

START_TEST(install_layout_version_and_man_page)
{
    require_install();
    static const char *const files[] = {
        "bin/tstep", "lib/libtstep.a", "lib/libtstep.so", "lib/pkgconfig/tstep.pc",
        "lib/libtstep-ext.a", "lib/libtstep-ext.so", "lib/pkgconfig/tstep-ext.pc",
        "include/tstep/tstep.h", "include/tstep/version.h", "include/tstep/builtins.h",
        "share/man/man1/tstep.1", "share/tstep/style.gp", "share/tstep/convergence.gp",
    };
    char out[8192], want[512];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        ck_assert_msg(student(root, out, sizeof out, "test -f '%s/%s'", prefix, files[i]) == 0,
                      "not installed: %s", files[i]);
    /* the shared library's soname carries the major version */
    ck_assert_int_eq(student(root, out, sizeof out,
                             "readelf -d '%s/lib/libtstep.so' | grep SONAME", prefix), 0);
    snprintf(want, sizeof want, "[libtstep.so.%d]", TSTEP_VERSION_MAJOR);
    ck_assert_msg(strstr(out, want), "soname: %s", out);
    ck_assert_int_eq(student(root, out, sizeof out, "test -e '%s/lib/libtstep.so.%d'", prefix,
                             TSTEP_VERSION_MAJOR), 0);
    /* the version of the headers in the tree, from the program and pkg-config */
    ck_assert_int_eq(student(root, out, sizeof out, "tstep --version"), 0);
    snprintf(want, sizeof want, "tstep %s (plugin interface %d)\n", TSTEP_VERSION,
             TSTEP_PLUGIN_ABI);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(student(root, out, sizeof out, "pkg-config --modversion tstep"), 0);
    snprintf(want, sizeof want, "%s\n", TSTEP_VERSION);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(student(root, out, sizeof out, "pkg-config --cflags --libs tstep"), 0);
    snprintf(want, sizeof want, "-I%s/include -L%s/lib -ltstep", prefix, prefix);
    ck_assert_msg(strstr(out, want), "pkg-config: '%s', want '%s'", out, want);
    /* the man page: a section per command, the global options */
    ck_assert_int_eq(student(root, out, sizeof out, "head -1 '%s/share/man/man1/tstep.1'",
                             prefix), 0);
    ck_assert_msg(strncmp(out, ".TH TSTEP 1", 11) == 0, "man page starts: %s", out);
    static const char *const commands[] = {"list", "run", "sweep", "check-system",
                                           "stability", "amplification", "region"};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        ck_assert_msg(student(root, out, sizeof out,
                              "grep -qx '.SS %s' '%s/share/man/man1/tstep.1'", commands[i],
                              prefix) == 0,
                      "man page lacks the command %s", commands[i]);
    ck_assert_int_eq(student(root, out, sizeof out,
                             "grep -q 'TSTEP_PLUGINS' '%s/share/man/man1/tstep.1'", prefix), 0);
}
END_TEST

/* Every defined global symbol of the libraries is ts_* or tstep_* (names
 * starting with __ are reserved to the compiler and skipped); the
 * extension's shared library exports its table only. */
START_TEST(libraries_export_only_prefixed_symbols)
{
    require_install();
    static char out[1 << 18];
    static const char *const nm[] = {"nm -g --defined-only '%s/lib/libtstep.a'",
                                     "nm -D --defined-only '%s/lib/libtstep.so'",
                                     "nm -g --defined-only '%s/lib/libtstep-ext.a'",
                                     "nm -D --defined-only '%s/lib/libtstep-ext.so'"};
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(student(root, out, sizeof out, nm[k], prefix), 0);
        int symbols = 0, has_main = 0;
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
            char addr[64], type[8], name[256];
            if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3)
                continue; /* a member's name line, or blank */
            if (strncmp(name, "__", 2) == 0)
                continue; /* the compiler's own (sanitizers' __odr_asan.*) */
            ck_assert_msg(strncmp(name, "ts_", 3) == 0 || strncmp(name, "tstep_", 6) == 0,
                          "%s exports %s", nm[k], name);
            ck_assert_msg(k != 3 || strcmp(name, "tstep_ext_entries") == 0,
                          "libtstep-ext.so exports %s", name);
            symbols++;
            has_main |= strcmp(name, "tstep_main") == 0;
        }
        if (k < 2)
            ck_assert_msg(symbols > 50 && has_main, "%d symbols, tstep_main %s", symbols,
                          has_main ? "present" : "missing");
        else
            ck_assert_msg(symbols >= 1 && !has_main, "%s: %d symbols", nm[k], symbols);
    }
}
END_TEST

/* DESTDIR stages the files under it; .pc names PREFIX; uninstall removes them. */
START_TEST(destdir_install_and_uninstall)
{
    char out[65536];
    ck_assert_msg(student(repo, out, sizeof out,
                          "make -s install DESTDIR='%s/stage' PREFIX=/opt/tstep", root) == 0,
                  "make install DESTDIR: %s", out);
    ck_assert_int_eq(student(root, out, sizeof out, "test -x stage/opt/tstep/bin/tstep && "
                                                     "grep -x 'prefix=/opt/tstep' "
                                                     "stage/opt/tstep/lib/pkgconfig/tstep.pc && "
                                                     "grep -x 'prefix=/opt/tstep' "
                                                     "stage/opt/tstep/lib/pkgconfig/tstep-ext.pc && "
                                                     "test -f stage/opt/tstep/lib/libtstep-ext.a && "
                                                     "test -L stage/opt/tstep/lib/libtstep-ext.so && "
                                                     "test -x stage/opt/tstep/libexec/tstep/"
                                                     "tstep-grade-worker"),
                     0);
    ck_assert_msg(student(repo, out, sizeof out,
                          "make -s uninstall DESTDIR='%s/stage' PREFIX=/opt/tstep", root) == 0,
                  "make uninstall: %s", out);
    ck_assert_int_eq(student(root, out, sizeof out, "find stage ! -type d"), 0);
    ck_assert_msg(out[0] == '\0', "left after uninstall:\n%s", out);
}
END_TEST

/* --- plugins ------------------------------------------------------------- */

START_TEST(ralston_plugin_is_listed_and_order_2)
{
    require_install();
    const char *dir = folder("ralston", "ralston.c");
    build_plugin(dir, "ralston");
    char out[65536];
    ck_assert_int_eq(student(dir, out, sizeof out, "tstep --plugin ./ralston.so list"), 0);
    const char *line = strstr(out, "\n  ralston ");
    ck_assert_msg(line, "list lacks ralston:\n%s", out);
    ck_assert_msg(strstr(line, "order 2") && strstr(line, "order 2") < strchr(line + 1, '\n'),
                  "ralston's line: %.80s", line + 1);
    /* the installed grader finds its worker in libexec/tstep */
    ck_assert_msg(student(dir, out, sizeof out, "tstep --plugin ./ralston.so grade --stepper "
                                                "ralston --order 2 --seed 1") == 0 &&
                      strstr(out, "score: 10 of 10 checks passed"),
                  "%s", out);
    double p1 = sweep_order(dir, "tstep --plugin ./ralston.so", "oscillator", "ralston,midpoint");
    double p2 = sweep_order(dir, "tstep --plugin ./ralston.so", "test1d", "ralston");
    ck_assert_msg(fabs(p1 - 2.0) <= 0.2 && fabs(p2 - 2.0) <= 0.2,
                  "observed order %g (oscillator), %g (test1d), want 2", p1, p2);
    double e = amplification_error(dir, "tstep --plugin ./ralston.so", "ralston", 0.5);
    ck_assert_msg(e <= 1e-9, "R(iz) differs from 1 + iz - z^2/2 by %g", e);
}
END_TEST

/* ANSWER-BEGIN(ralston2): Ralston's weights in code */
/* The same file with wrong weights: the tests above would catch it. */
START_TEST(ralston_with_wrong_weights_is_order_1)
{
    require_install();
    const char *dir = folder("ralston-wrong", "ralston.c");
    edit(dir, "ralston.c", "b1 = 1.0 / 4.0, b2 = 3.0 / 4.0", "b1 = 1.0 / 2.0, b2 = 1.0 / 2.0");
    build_plugin(dir, "ralston");
    double p = sweep_order(dir, "tstep --plugin ./ralston.so", "oscillator", "ralston");
    ck_assert_msg(fabs(p - 1.0) <= 0.2, "observed order %g, want 1", p);
    double e = amplification_error(dir, "tstep --plugin ./ralston.so", "ralston", 1.0 / 3.0);
    ck_assert_msg(e <= 1e-9, "R(iz) differs from 1 + iz - z^2/3 by %g", e);
    ck_assert_double_gt(amplification_error(dir, "tstep --plugin ./ralston.so", "ralston", 0.5),
                        0.1);
}
END_TEST
/* ANSWER-END */

/* A plugin that crashes in its fourth step: the rows of the three before it
 * are in the file (run flushes every row for a plugin's stepper). */
START_TEST(plugin_crash_keeps_the_rows_before_it)
{
    require_install();
    const char *dir = folder("ralston-crash", "ralston.c");
    edit(dir, "ralston.c", "    if ((s = ts_system_deriv(sys, t, y, k1)))",
         "    if (t > 0.25)\n        *(volatile int *)0 = 0;\n"
         "    if ((s = ts_system_deriv(sys, t, y, k1)))");
    build_plugin(dir, "ralston");
    char out[65536];
    int rc = student(dir, out, sizeof out,
                     "tstep --plugin ./ralston.so run --system oscillator --stepper ralston "
                     "--dt 0.1 --t-end 1 --out rows.dat; echo \"status $?\"; cat rows.dat");
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(out, "status 139"), "%s", out);
    ck_assert_msg(strstr(out, "# t x0 v0 energy\n0 1 0 0.5\n0.1 ") &&
                      strstr(out, "\n0.30000000000000004 "),
                  "%s", out);
}
END_TEST

START_TEST(pendulum_plugin_passes_check_system)
{
    require_install();
    const char *dir = folder("pendulum", "pendulum.c");
    build_plugin(dir, "pendulum");
    char out[65536];
    ck_assert_int_eq(student(dir, out, sizeof out, "tstep --plugin ./pendulum.so list"), 0);
    ck_assert_msg(strstr(out, "\n  pendulum "), "list lacks pendulum:\n%s", out);
    int rc = student(dir, out, sizeof out,
                     "tstep --plugin ./pendulum.so check-system --system pendulum");
    ck_assert_msg(rc == 0, "check-system: exit %d:\n%s", rc, out);
    rc = student(dir, out, sizeof out, "tstep --plugin ./pendulum.so check-system --system "
                                       "pendulum --param theta0=2.5 --param c=0.3");
    ck_assert_msg(rc == 0, "check-system theta0=2.5 c=0.3: exit %d:\n%s", rc, out);
    /* its energy: conserved by rk4 to the method's error (about 1e-8 here
     * over 1000 steps), gained by forward Euler (factor > 1 per step) */
    double e0, e1;
    for (int k = 0; k < 2; k++) {
        rc = student(dir, out, sizeof out,
                     "tstep --plugin ./pendulum.so run --system pendulum --stepper %s "
                     "--dt 0.01 --t-end 10 --out /dev/null --diagnostics d.csv && "
                     "sed -n '2p;$p' d.csv | cut -d, -f5",
                     k ? "forward-euler" : "rk4");
        ck_assert_msg(rc == 0 && sscanf(out, "%lf %lf", &e0, &e1) == 2, "run: %d %s", rc, out);
        ck_assert_double_eq_tol(e0, 9.81 * (1.0 - cos(1.0)), 1e-12); /* m g L (1 - cos 1) */
        if (k == 0)
            ck_assert_msg(fabs(e1 - e0) <= 1e-6 * e0, "rk4: energy %g -> %g", e0, e1);
        else
            ck_assert_msg(e1 > 1.5 * e0, "forward Euler: energy %g -> %g", e0, e1);
    }
    /* a wrong Jacobian (sin for cos) fails it */
    const char *bad = folder("pendulum-wrong", "pendulum.c");
    edit(bad, "pendulum.c", "cos(x[0]) * u[0]", "sin(x[0]) * u[0]");
    build_plugin(bad, "pendulum");
    rc = student(bad, out, sizeof out, "tstep --plugin ./pendulum.so check-system --system pendulum");
    ck_assert_msg(rc == 1, "check-system of a wrong Jacobian: exit %d:\n%s", rc, out);
}
END_TEST

/* TSTEP_PLUGINS (colon-separated) and --plugin together; both types work in
 * one run: rk4 on the plugin pendulum, ralston on a built-in system. */
START_TEST(plugins_from_the_environment)
{
    require_install();
    const char *dir = folder("both", "ralston.c pendulum.c");
    build_plugin(dir, "ralston");
    build_plugin(dir, "pendulum");
    char out[65536];
    ck_assert_int_eq(student(dir, out, sizeof out,
                             "TSTEP_PLUGINS=./ralston.so:./pendulum.so tstep list"), 0);
    ck_assert_msg(strstr(out, "\n  ralston ") && strstr(out, "\n  pendulum "), "%s", out);
    ck_assert_int_eq(student(dir, out, sizeof out,
                             "TSTEP_PLUGINS=./ralston.so tstep --plugin ./pendulum.so run "
                             "--system pendulum --stepper ralston --dt 0.01 --steps 10 "
                             "--out /dev/null"),
                     0);
}
END_TEST

/* Each refusal: exit 2, the file and the reason named, the command not run. */
START_TEST(bad_plugins_are_refused_with_exit_2)
{
    require_install();
    const char *dir = folder("bad", "ralston.c");
    char out[65536];
    ck_assert_int_eq(student(dir, out, sizeof out,
                             "cp ralston.c clash.c && cp ralston.c abi.c && "
                             "echo 'int unrelated = 1;' > notplugin.c && "
                             "echo 'not an ELF file' > junk.so"),
                     0);
    edit(dir, "clash.c", "\"ralston\"", "\"rk4\"");
    edit(dir, "abi.c", "\nTSTEP_PLUGIN();", "\nconst int tstep_plugin_abi = TSTEP_PLUGIN_ABI + 1;");
    char other_abi[64];
    snprintf(other_abi, sizeof other_abi, "built for plugin interface %d", TSTEP_PLUGIN_ABI + 1);
    build_plugin(dir, "ralston");
    build_plugin(dir, "clash");
    build_plugin(dir, "abi");
    build_plugin(dir, "notplugin");
    const struct {
        const char *args, *file, *reason;
    } cases[] = {
        {"--plugin ./clash.so", "./clash.so", "stepper 'rk4' clashes with the built-in"},
        {"--plugin ./ralston.so --plugin ./ralston.so", "./ralston.so", "clashes with an earlier"},
        {"--plugin ./abi.so", "./abi.so", other_abi},
        {"--plugin ./notplugin.so", "./notplugin.so", "not a tstep plugin"},
        {"--plugin ./junk.so", "./junk.so", "cannot load"},
        {"--plugin ./missing.so", "./missing.so", "cannot load"},
        {"--plugin=./abi.so", "./abi.so", "interface"},
        {"--plugin=", "--plugin", "empty file name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = student(dir, out, sizeof out, "tstep %s list", cases[i].args);
        ck_assert_msg(rc == 2, "%s: exit %d: %s", cases[i].args, rc, out);
        ck_assert_msg(strstr(out, cases[i].file) && strstr(out, cases[i].reason),
                      "%s: message '%s' lacks '%s' or '%s'", cases[i].args, out, cases[i].file,
                      cases[i].reason);
        ck_assert_msg(!strstr(out, "Steppers:"), "%s: list ran anyway", cases[i].args);
    }
    int rc = student(dir, out, sizeof out, "tstep --plugin");
    ck_assert_msg(rc == 2 && strstr(out, "expected --plugin FILE"), "exit %d: %s", rc, out);
    rc = student(dir, out, sizeof out, "TSTEP_PLUGINS=./junk.so tstep list");
    ck_assert_msg(rc == 2 && strstr(out, "TSTEP_PLUGINS") && strstr(out, "./junk.so"),
                  "TSTEP_PLUGINS=./junk.so: exit %d: %s", rc, out);
}
END_TEST

/* --- the own program ----------------------------------------------------- */

START_TEST(own_program_links_the_installed_library)
{
    require_install();
    const char *dir = folder("mytstep", "mytstep.c ralston.c pendulum.c");
    char out[65536];
    int rc = student(dir, out, sizeof out,
                     "cc mytstep.c ralston.c pendulum.c $(pkg-config --cflags tstep) "
                     "$(pkg-config --static --libs tstep-ext | sed 's/-ltstep\\([-a-z]*\\)/-l:libtstep\\1.a/g') "
                     "$TSTEP_TEST_CFLAGS -o mytstep");
    ck_assert_msg(rc == 0, "building mytstep: %s", out);
    ck_assert_int_eq(student(dir, out, sizeof out, "./mytstep list"), 0);
    ck_assert_msg(strstr(out, "\n  ralston ") && strstr(out, "\n  pendulum "), "%s", out);
    double p = sweep_order(dir, "./mytstep", "oscillator", "ralston");
    ck_assert_msg(fabs(p - 2.0) <= 0.2, "observed order %g, want 2", p);
    rc = student(dir, out, sizeof out, "./mytstep check-system --system pendulum");
    ck_assert_msg(rc == 0, "check-system: exit %d:\n%s", rc, out);
    /* an extra type whose name is taken is refused */
    edit(dir, "ralston.c", "\"ralston\"", "\"rk4\"");
    rc = student(dir, out, sizeof out,
                 "cc mytstep.c ralston.c pendulum.c $(pkg-config --cflags tstep) "
                 "$(pkg-config --static --libs tstep-ext | sed 's/-ltstep\\([-a-z]*\\)/-l:libtstep\\1.a/g') "
                 "$TSTEP_TEST_CFLAGS -o clash");
    ck_assert_msg(rc == 0, "building clash: %s", out);
    rc = student(dir, out, sizeof out, "./clash list");
    ck_assert_msg(rc == 2 && strstr(out, "stepper 'rk4' clashes with the built-in"),
                  "exit %d: %s", rc, out);
    /* linked with the core alone: the heavy options are refused by name,
     * and the string's default solver becomes cg */
    edit(dir, "ralston.c", "\"rk4\"", "\"ralston\"");
    rc = student(dir, out, sizeof out,
                 "cc mytstep.c ralston.c pendulum.c $(pkg-config --cflags tstep) $(pkg-config --static "
                 "--libs tstep | sed 's/-ltstep/-l:libtstep.a/') $TSTEP_TEST_CFLAGS -o core");
    ck_assert_msg(rc == 0, "building core: %s", out);
    static const char *const refused[][2] = {
        {"--linear-solver direct", "linear solver 'direct' needs libtstep-ext (CHOLMOD)"},
        {"--threads 2", "threads above 1 needs libtstep-ext (OpenMP)"},
    };
    for (int k = 0; k < 2; k++) {
        rc = student(dir, out, sizeof out,
                     "./core run --system string --stepper backward-euler --dt 0.01 --steps 3 %s",
                     refused[k][0]);
        ck_assert_msg(rc == 2 && strstr(out, refused[k][1]), "%s: exit %d: %s", refused[k][0],
                      rc, out);
    }
    rc = student(dir, out, sizeof out,
                 "./core run --system string --stepper backward-euler --dt 0.01 --steps 3 "
                 "--stats 2>&1 >/dev/null | grep -c 'linear solver cg/jacobi'");
    ck_assert_msg(rc == 0, "the default solver without the extension: %s", out);
    /* the core's serial loops give the bits of the extension's two threads
     * (an 80 x 80 cloth: its vectors are long enough for the team) */
    rc = student(dir, out, sizeof out,
                 "a='run --system cloth --param nx=80 --param ny=80 --stepper backward-euler "
                 "--dt 0.01 --steps 3 --precond jacobi' && ./core $a --out core.dat && "
                 "tstep $a --threads 2 --out ext.dat && cmp core.dat ext.dat && "
                 "test $(wc -l < core.dat) -ge 4");
    ck_assert_msg(rc == 0, "core alone and the extension's threads differ: %s", out);
}
END_TEST

/* --- the core library and the extension ---------------------------------- */

/* The heavy libraries a program of the core alone must not load. */
static const char heavy[] = "cholmod|lapack|arpack|openblas|gomp|seccomp|tstep-ext";

/* x(1) printed by examples/euler.c: forward Euler on x' = -x, ten steps of
 * 0.1, is 0.9^10 up to rounding. */
static void check_euler_output(const char *out)
{
    double x;
    ck_assert_msg(sscanf(out, "x(1) = %lf", &x) == 1, "euler printed: %s", out);
    ck_assert_msg(fabs(x - pow(0.9, 10)) <= 1e-15, "x(1) = %.17g, want 0.9^10", x);
}

/* libtstep.so needs libc and libm only; a forward Euler program linked
 * with pkg-config's line loads nothing heavy and runs; so does the same
 * program linked statically (pkg-config --static). */
START_TEST(core_library_links_libc_and_libm_only)
{
    require_install();
    const char *dir = folder("euler", "euler.c");
    char out[65536];
    ck_assert_int_eq(student(root, out, sizeof out,
                             "readelf -d '%s/lib/libtstep.so' | sed -n 's/.*NEEDED.*\\[\\(.*\\)\\]/\\1/p' "
                             "| sort | tr '\\n' ' '", prefix), 0);
    ck_assert_str_eq(out, "libc.so.6 libm.so.6 ");
    int rc = student(dir, out, sizeof out,
                     "cc euler.c $(pkg-config --cflags --libs tstep) $TSTEP_TEST_CFLAGS "
                     "-Wl,-rpath,$(pkg-config --variable=libdir tstep) -o euler");
    ck_assert_msg(rc == 0, "building euler: %s", out);
    rc = student(dir, out, sizeof out, "ldd ./euler | grep -E '%s'", heavy);
    ck_assert_msg(rc == 1 && !*out, "euler loads heavy libraries:\n%s", out);
    ck_assert_int_eq(student(dir, out, sizeof out, "ldd ./euler | grep -c libtstep.so.0"), 0);
    ck_assert_int_eq(student(dir, out, sizeof out, "./euler"), 0);
    check_euler_output(out);
    /* static: no libtstep.so, nothing heavy (every library in the program) */
    rc = student(dir, out, sizeof out,
                 "cc -static euler.c $(pkg-config --cflags tstep) $(pkg-config --static --libs "
                 "tstep) -o euler-static 2>&1 | grep -v 'dlopen\\|in function' ; "
                 "readelf -d euler-static | grep NEEDED");
    ck_assert_msg(rc == 1 && !strstr(out, "NEEDED") && !strstr(out, "error"),
                  "static euler: %s", out);
    ck_assert_int_eq(student(dir, out, sizeof out, "./euler-static"), 0);
    check_euler_output(out);
}
END_TEST

/* The last particle's position printed by examples/direct.c. */
static void direct_output(const char *out, const char *solver, double x[3])
{
    char want[64];
    snprintf(want, sizeof want, "%s: last particle at %%lf %%lf %%lf", solver);
    ck_assert_msg(sscanf(out, want, &x[0], &x[1], &x[2]) == 3, "direct printed: %s", out);
}

/* A program of the core alone that asks for the direct solver loads the
 * installed extension and gets the answer of the iterative solve; without
 * the extension beside the core it is refused with a message naming it. */
START_TEST(direct_solver_loads_the_extension)
{
    require_install();
    const char *dir = folder("direct", "direct.c");
    char out[65536];
    int rc = student(dir, out, sizeof out,
                     "cc direct.c $(pkg-config --cflags --libs tstep) $TSTEP_TEST_CFLAGS "
                     "-Wl,-rpath,$(pkg-config --variable=libdir tstep) -o direct && "
                     "readelf -d direct | grep -E 'NEEDED.*(%s)'", heavy);
    ck_assert_msg(rc == 1, "building direct, or it links a heavy library: %s", out);
    double xd[3], xc[3];
    ck_assert_int_eq(student(dir, out, sizeof out, "LD_DEBUG=files ./direct 2>debug.log"), 0);
    direct_output(out, "direct", xd);
    ck_assert_int_eq(student(dir, out, sizeof out,
                             "grep -c 'file=.*libtstep-ext.so.0 .*dynamically loaded' debug.log"),
                     0);
    ck_assert_int_eq(student(dir, out, sizeof out, "./direct cg"), 0);
    direct_output(out, "cg", xc);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabs(xd[i] - xc[i]) <= 1e-8, "direct %.17g, cg %.17g", xd[i], xc[i]);
    ck_assert_msg(xd[1] < -0.1, "the string did not swing: y = %g", xd[1]);
    /* the core alone in a folder: a clear refusal, exit 1, no crash */
    rc = student(dir, out, sizeof out,
                 "mkdir -p core && cp '%s/lib/libtstep.so.0' core/ && "
                 "LD_LIBRARY_PATH=$PWD/core ./direct", prefix);
    ck_assert_msg(rc == 1 && strstr(out, "linear solver 'direct' needs libtstep-ext (CHOLMOD): "
                                         "not installed"),
                  "exit %d: %s", rc, out);
    /* linked with the extension's static archive, the direct solver is there */
    rc = student(dir, out, sizeof out,
                 "cc direct.c $(pkg-config --cflags tstep-ext) $(pkg-config --static --libs "
                 "tstep-ext | sed 's/-ltstep\\([-a-z]*\\)/-l:libtstep\\1.a/g') "
                 "$TSTEP_TEST_CFLAGS -o direct-static && ./direct-static");
    ck_assert_msg(rc == 0, "direct-static: %s", out);
    double xs[3];
    direct_output(out, "direct", xs);
    ck_assert_msg(memcmp(xs, xd, sizeof xs) == 0, "static and shared direct differ");
}
END_TEST

/* --- the student guide as written ----------------------------------------- */

/* Every ```sh block of docs/students.md, in order, in one shell with a
 * scratch HOME, /path/to/tstep standing for this tree: each command must
 * succeed, and what the page quotes (the version line, the sweep table)
 * must be what the commands print. */
START_TEST(student_guide_runs_as_written)
{
    tests_need_file("examples/ralston.c"); /* the guide builds it */
    static char out[1 << 17];
    int rc = shell(out, sizeof out,
                   "mkdir -p '%s/home' && awk '/^```sh$/{f=1;next} /^```$/{f=0} f' "
                   "docs/students.md | sed 's|/path/to/tstep|%s|g' > '%s/students.sh' && "
                   "test -s '%s/students.sh'",
                   root, repo, root, root);
    ck_assert_msg(rc == 0, "extracting the commands: %s", out);
    rc = shell(out, sizeof out,
               "unset MAKEFLAGS MFLAGS MAKELEVEL TSTEP_PLUGINS; HOME='%s/home' bash -e -x "
               "'%s/students.sh'",
               root, root);
    ck_assert_msg(rc == 0, "docs/students.md: a command failed (exit %d):\n%s", rc,
                  strlen(out) > 3000 ? out + strlen(out) - 3000 : out);
    char want[128];
    snprintf(want, sizeof want, "tstep %s (plugin interface %d)", TSTEP_VERSION,
             TSTEP_PLUGIN_ABI);
    ck_assert_msg(strstr(out, want), "the guide's tstep --version did not print '%s'", want);
    ck_assert_msg(strstr(out, "result: pass"), "check-system did not pass:\n%s", out);
    /* the page quotes the same version line and the same sweep table */
    static char guide[1 << 16];
    FILE *f = fopen("docs/students.md", "r");
    ck_assert_ptr_nonnull(f);
    guide[fread(guide, 1, sizeof guide - 1, f)] = '\0';
    fclose(f);
    ck_assert_msg(strstr(guide, want), "docs/students.md does not quote '%s'", want);
    const char *table = strstr(guide, "\nobserved order on oscillator");
    ck_assert_ptr_nonnull(table);
    const char *end = strstr(table, "\n```");
    ck_assert_ptr_nonnull(end);
    char line[256];
    for (const char *p = table + 1; p < end; p = strchr(p, '\n') + 1) {
        snprintf(line, sizeof line, "%.*s", (int)(strchr(p, '\n') - p), p);
        ck_assert_msg(strstr(out, line), "the guide quotes a line the sweep did not print:\n%s",
                      line);
    }
}
END_TEST

/* --- the registry in-process --------------------------------------------- */

START_TEST(registry_appends_and_refuses_clashes)
{
    size_t ns = ts_stepper_count(), nsys = ts_system_count();
    ck_assert_ptr_eq(ts_stepper_at(0), &ts_forward_euler);
    ck_assert_ptr_null(ts_stepper_at(ns));
    ck_assert_ptr_null(ts_system_at(nsys));
    static const ts_stepper_type copy_of_rk4 = {
        .name = "rk4-copy", .order = 4, .alloc = NULL, .step = NULL, .free = NULL};
    static ts_stepper_type mine; /* registered: lives as long as the registry */
    static ts_system_type osc;
    mine = *ts_stepper_find("rk4");
    mine.name = copy_of_rk4.name;
    ck_assert_int_eq(ts_stepper_register(&copy_of_rk4), TS_ERR_INPUT); /* no functions */
    ck_assert_int_eq(ts_stepper_register(&mine), TS_OK);
    ck_assert_uint_eq(ts_stepper_count(), ns + 1);
    ck_assert_ptr_eq(ts_stepper_at(ns), &mine);
    ck_assert_ptr_eq(ts_stepper_find("rk4-copy"), &mine);
    ck_assert_int_eq(ts_stepper_register(&mine), TS_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(ts_error_detail(), "clashes with an earlier"));
    ts_stepper_type rk4 = mine;
    rk4.name = "rk4";
    ck_assert_int_eq(ts_stepper_register(&rk4), TS_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(ts_error_detail(), "clashes with the built-in"));
    osc = *ts_system_find("oscillator");
    ck_assert_int_eq(ts_system_register(&osc), TS_ERR_INPUT);
    osc.name = "oscillator-copy";
    ck_assert_int_eq(ts_system_register(&osc), TS_OK);
    ck_assert_ptr_eq(ts_system_at(nsys), &osc);
    ck_assert_uint_eq(ts_stepper_count(), ns + 1);
    /* names the command line could not select */
    static const char *const bad[] = {"a,b", "all", "my stepper", "x/y"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ts_stepper_type t = mine;
        t.name = bad[i];
        ck_assert_int_eq(ts_stepper_register(&t), TS_ERR_INPUT);
        ck_assert_ptr_nonnull(strstr(ts_error_detail(), bad[i]));
        ts_system_type y = osc;
        y.name = bad[i];
        ck_assert_int_eq(ts_system_register(&y), TS_ERR_INPUT);
    }
    ck_assert_uint_eq(ts_stepper_count(), ns + 1);
    ck_assert_uint_eq(ts_system_count(), nsys + 1);
}
END_TEST

Suite *plugins_suite(void)
{
    Suite *s = suite_create("plugins");
    TCase *tc = tcase_create("installed");
    tcase_set_tags(tc, "slow install"); /* CK_EXCLUDE_TAGS=install: the sanitizer pass */
    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, install_tree, remove_tree);
    tcase_add_test(tc, install_layout_version_and_man_page);
    tcase_add_test(tc, libraries_export_only_prefixed_symbols);
    tcase_add_test(tc, destdir_install_and_uninstall);
    tcase_add_test(tc, ralston_plugin_is_listed_and_order_2);
    tcase_add_test(tc, ralston_with_wrong_weights_is_order_1); /* ANSWER-LINE(ralston2) */
    tcase_add_test(tc, plugin_crash_keeps_the_rows_before_it);
    tcase_add_test(tc, pendulum_plugin_passes_check_system);
    tcase_add_test(tc, plugins_from_the_environment);
    tcase_add_test(tc, bad_plugins_are_refused_with_exit_2);
    tcase_add_test(tc, own_program_links_the_installed_library);
    tcase_add_test(tc, core_library_links_libc_and_libm_only);
    tcase_add_test(tc, direct_solver_loads_the_extension);
    tcase_add_test(tc, student_guide_runs_as_written);
    suite_add_tcase(s, tc);
    TCase *reg = tcase_create("registry");
    tcase_add_test(reg, registry_appends_and_refuses_clashes);
    suite_add_tcase(s, reg);
    return s;
}

/* make bench: tstep's kernels against baselines measured in the same run.
 *
 * Every figure is a ratio of two timings taken on this machine in this
 * run, each the median of REPS repeats, the two interleaved (a, b, a, b,
 * ...) so that a noisy, shared machine disturbs both alike:
 *
 *   product   the fast-path Jacobian product (the CG matvec) in ns per
 *             spring on cloths of 32^2 to 1000^2 particles, against the
 *             time a STREAM triad (McCalpin 1995: a[i] = b[i] + s c[i], on
 *             arrays far beyond cache) needs to move the product's
 *             compulsory traffic: with the wide cache (up to
 *             TS_SPRINGS_WIDE_MAX springs) per spring two indices and the
 *             cached q and w (40 B), per degree of freedom u and the mass
 *             read and out read and written (32 B); with the narrow cache
 *             two indices, q and g (24 B) and x read as well (40 B); without
 *             a cache, two indices, 1/l, the rest length and the kind (25 B)
 *             and the same 40 B per degree of freedom.  Goal: <= 1.3 beyond
 *             cache.
 *   threads   the force loop (300^2) and a backward-euler-linear step (100^2,
 *             cg-tol 1e-3, the state reset before each) with 2 threads
 *             against 1: the speed-up.
 *   rk4       an rk4 step (ts_stepper_step) against four force evaluations
 *             (100^2), 15 repeats, in processor time.  Goal <= 1.1.
 *   output    writing one output row of the 100^2 cloth as `tstep run`
 *             writes it (dat text, npy, and a frame of positions; to
 *             /dev/null) against an rk4 step on it (goal for dat: <= 1),
 *             and the dat row's formatting alone in ns per number.
 *   memory    peak resident memory growth per particle of a 300^2 cloth:
 *             the system, then a stepper and one step (in a child process,
 *             so nothing else counts): backward-euler-linear (cg-tol 1e-3,
 *             dt 1/60) and backward-euler (Newton, dt 1e-3, so that it
 *             converges quickly but in more than one Newton iteration:
 *             every vector of its scratch is touched), both with cg and
 *             jacobi, the lean option; then backward-euler with the
 *             cloth's default solver, cg and amg (about 1.3 kB).  Goal:
 *             <= 500 B per particle for implicit stepping (the lean path).
 *             And the whole process's peak (max RSS, as /usr/bin/time
 *             gives it) for one default backward-Euler step of the 300^2
 *             cloth per particle, beside a forward-Euler step's.  Goal:
 *             <= 1600 B per particle.
 *
 * Results: build/bench/kernels.csv (figure, size, value, unit, baseline,
 * ratio, goal) and a summary on standard output.  With arguments (memory,
 * product, threads, rk4, output) only those figures, into kernels.csv.part. */
#define _DEFAULT_SOURCE /* wait4 */
#ifdef __linux__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"
#include "tstep/linalg.h"
#include "tstep/linsolve.h"
#include "tstep/numfmt.h"
#include "tstep/springs.h"
#include "tstep/stepper.h"

#define REPS 7

static FILE *csv;
static double sink;


static void report(const char *figure, const char *size, double value, const char *unit,
                   double baseline, double ratio, const char *goal)
{
    /* a comma in a text field would shift the summary's columns (make bench
     * splits the rows at commas) */
    if (strchr(figure, ',') || strchr(size, ',') || strchr(unit, ',') || strchr(goal, ',')) {
        fprintf(stderr, "bench_kernels: a comma in the figure \"%s\"\n", figure);
        exit(1);
    }
    fprintf(csv, "%s,%s,%.6g,%s,%.6g,%.4g,%s\n", figure, size, value, unit, baseline, ratio,
            goal);
    printf("  %-34s %-7s %10.4g %-9s ratio %7.3f   %s\n", figure, size, value, unit, ratio,
           goal);
    fflush(stdout);
}

/* the nx^2 cloth at rest as tstep run starts it */
static ts_system *cloth_at_rest(int nx)
{
    char v[32];
    ts_params p;
    ts_params_init(&p, ts_cloth.params);
    snprintf(v, sizeof v, "%d", nx);
    ts_params_set(&p, "nx", v);
    ts_params_set(&p, "ny", v);
    ts_system *sys;
    if (ts_system_new(&ts_cloth, &p, &sys)) {
        fprintf(stderr, "bench: %s\n", ts_error_detail());
        exit(1);
    }
    return sys;
}

/* the nx^2 cloth with a little motion, so that no spring is at rest */
static ts_system *cloth(int nx)
{
    ts_system *sys = cloth_at_rest(nx);
    for (size_t i = 0; i < sys->n; i++)
        sys->v[i] = 0.01 * (double)((i * 7919) % 13) - 0.06;
    return sys;
}

/* --- the triad ------------------------------------------------------------ */

static size_t tri_n;
static double *ta, *tb, *tc;

static double triad_once(void)
{
    double t0 = bench_now();
    for (size_t i = 0; i < tri_n; i++)
        ta[i] = tb[i] + 3.0 * tc[i];
    double t = bench_now() - t0;
    sink += ta[tri_n / 3];
    return t;
}

/* --- figures ------------------------------------------------------------- */

static void bench_product(void)
{
    static const int sizes[] = {32, 100, 300, 1000};
    printf("product: fast-path Jacobian product against a STREAM triad (1 thread)\n");
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        ts_system *sys = cloth(sizes[z]);
        ts_springs *s = ts_springs_of(sys);
        size_t n = sys->n;
        double *u = malloc(n * sizeof *u), *out = malloc(n * sizeof *out);
        for (size_t i = 0; i < n; i++)
            u[i] = (double)(i % 7) - 3.0;
        ts_system_linearize(sys, 0.0, sys->x, sys->v, -1e-3, -3e-2);
        double bytes = s->lin_wcache  ? 40.0 * (double)s->ns + 32.0 * (double)n
                       : s->lin_coef ? 24.0 * (double)s->ns + 40.0 * (double)n
                                     : 25.0 * (double)s->ns + 40.0 * (double)n;
        /* enough products per timing for about 20 ms */
        int per = (int)(2e7 / bytes) + 1;
        double tp[REPS], tt[REPS];
        for (int r = 0; r < REPS; r++) {
            tt[r] = triad_once() / (24.0 * (double)tri_n); /* s per byte */
            double t0 = bench_now();
            for (int k = 0; k < per; k++)
                ts_system_jacobian_mul(sys, u, out);
            tp[r] = (bench_now() - t0) / per;
            sink += out[r];
        }
        double prod = bench_median(tp, REPS) / (double)s->ns * 1e9;
        double floor_ns = bench_median(tt, REPS) * bytes / (double)s->ns * 1e9;
        char size[16];
        snprintf(size, sizeof size, "%d^2", sizes[z]);
        report("product ns/spring vs triad floor", size, prod, "ns/spring", floor_ns,
               prod / floor_ns, sizes[z] >= 300 ? "goal <= 1.3" : "(in cache)");
        free(u), free(out);
        ts_system_free(sys);
    }
}

static void bench_threads(void)
{
    printf("threads: 2 against 1 (speed-up; this machine has %ld cores)\n",
           sysconf(_SC_NPROCESSORS_ONLN));
    ts_system *sys = cloth(300);
    size_t n = sys->n;
    double *f = malloc(n * sizeof *f), t1[REPS], t2[REPS];
    for (int r = 0; r < REPS; r++)
        for (int th = 1; th <= 2; th++) {
            ts_threads_set(th);
            double t0 = bench_now();
            for (int k = 0; k < 10; k++)
                ts_system_forces(sys, 0.0, sys->x, sys->v, f);
            (th == 1 ? t1 : t2)[r] = (bench_now() - t0) / 10;
            sink += f[r];
        }
    double a = bench_median(t1, REPS), b = bench_median(t2, REPS);
    report("force loop 2 threads vs 1", "300^2", b * 1e3, "ms", a * 1e3, a / b,
           "speed-up");
    ts_system_free(sys);
    free(f);

    sys = cloth(100);
    n = sys->n;
    double *y0 = malloc(2 * n * sizeof *y0);
    ts_system_get_y(sys, y0);
    ts_solver_options o = ts_default_solver_options();
    o.cg_tol = 1e-3;
    o.precond = &ts_precond_jacobi; /* the cloth's default would be amg */
    long iters = 0;
    for (int r = 0; r < REPS; r++)
        for (int th = 1; th <= 2; th++) {
            /* a new stepper each time: the solver warm-starts from its last solution */
            ts_stepper *st;
            if (ts_stepper_new(bench_stepper("backward-euler-linear"), sys, &o, &st))
                exit(1);
            ts_threads_set(th);
            ts_system_set_y(sys, y0);
            double t0 = bench_now();
            if (ts_stepper_step(st, sys, 0.0, 1.0 / 60.0))
                exit(1);
            (th == 1 ? t1 : t2)[r] = bench_now() - t0;
            iters = st->total.linear_iters;
            ts_stepper_free(st);
        }
    a = bench_median(t1, REPS), b = bench_median(t2, REPS);
    printf("  (backward-euler-linear, dt 1/60, cg-tol 1e-3: %ld CG iterations per step)\n",
           iters);
    report("BE-linear step 2 threads vs 1", "100^2", b * 1e3, "ms", a * 1e3, a / b,
           "speed-up");
    ts_threads_set(1);
    ts_system_free(sys);
    free(y0);
}

/* An rk4 step (through ts_stepper_step, as `tstep run` takes it) against
 * four force evaluations on the 100^2 cloth, one thread, interleaved; the
 * thread's processor time (bench_cpu_now), so that a timing the scheduler
 * cut into does not count the other processes' share. */
static void bench_rk4(void)
{
    printf("rk4: one step against four force evaluations (1 thread)\n");
    ts_system *sys = cloth(100);
    size_t n = sys->n;
    double *y0 = malloc(2 * n * sizeof *y0), *f4 = malloc(n * sizeof *f4);
    enum { R = 2 * REPS + 1 }; /* short timings: more repeats */
    double t1[R], t2[R];
    ts_system_get_y(sys, y0);
    ts_solver_options o = ts_default_solver_options();
    ts_stepper *rk;
    if (!y0 || !f4 || ts_stepper_new(&ts_rk4, sys, &o, &rk))
        exit(1);
    for (int r = 0; r < R; r++) {
        ts_system_set_y(sys, y0);
        double t0 = bench_cpu_now();
        for (int k = 0; k < 10; k++)
            ts_stepper_step(rk, sys, 0.0, 2e-4);
        t1[r] = (bench_cpu_now() - t0) / 10;
        t0 = bench_cpu_now();
        for (int k = 0; k < 40; k++)
            ts_system_forces(sys, 0.0, sys->x, sys->v, f4);
        t2[r] = (bench_cpu_now() - t0) / 10;
        sink += f4[r];
    }
    double a = bench_median(t1, R), b = bench_median(t2, R);
    report("rk4 step / 4 force evaluations", "100^2", a * 1e3, "ms", b * 1e3, a / b,
           "goal <= 1.1");
    ts_stepper_free(rk);
    ts_system_free(sys);
    free(y0), free(f4);
}

/* The row of the cloth's state at time t: t, x, v, energy, as cmd_run
 * fills it. */
static void output_row(ts_system *sys, double t, double *row)
{
    size_t n = sys->n;
    double ke = 0, pe = 0;
    row[0] = t;
    memcpy(row + 1, sys->x, n * sizeof *row);
    memcpy(row + 1 + n, sys->v, n * sizeof *row);
    ts_system_energy(sys, 0.0, &ke, &pe);
    row[2 * n + 1] = ke + pe;
}

/* The dat text of row (cols numbers, shortest round-trip decimals) in line;
 * returns its length. */
static size_t output_dat(const double *row, size_t cols, char *line)
{
    char *p = line;
    for (size_t i = 0; i < cols; i++) {
        if (i)
            *p++ = ' ';
        p += ts_format_double(p, row[i], 0);
    }
    *p++ = '\n';
    return (size_t)(p - line);
}

/* One output of kind f at time t: 0 a dat row, 1 an npy row, 2 a frame
 * (positions at 10 digits, a line each, as cli_write_particles), 3 the dat
 * row's formatting alone (the row filled once, nothing written). */
static void output_once(int f, ts_system *sys, double t, double *row, char *line, FILE *null)
{
    size_t n = sys->n, cols = 2 * n + 2;
    if (f == 3) {
        sink += (double)output_dat(row, cols, line);
        return;
    }
    output_row(sys, t, row);
    if (f == 0) {
        fwrite(line, 1, output_dat(row, cols, line), null);
    } else if (f == 1) {
        fwrite(row, sizeof *row, cols, null);
    } else {
        for (size_t q = 0; q < n; q += 3) {
            char *p = line;
            for (int c = 0; c < 3; c++) {
                if (c)
                    *p++ = ' ';
                p += ts_format_double(p, sys->x[q + c], 10);
            }
            *p++ = '\n';
            if ((q / 3 + 1) % sys->frame_row == 0)
                *p++ = '\n';
            fwrite(line, 1, (size_t)(p - line), null);
        }
    }
}

/* Writing one output row as cmd_run writes it: a dat row (t, x, v, energy:
 * shortest round-trip decimals, one fwrite), the same row as npy (one
 * fwrite of doubles), and a frame (positions at 10 digits, a line each),
 * to /dev/null, interleaved with rk4 steps on the same cloth: the 100^2
 * cloth released from rest under rk4 at dt 1e-5, as `tstep run --system
 * cloth --stepper rk4 --dt 1e-5` writes it (a third of the row is zeros,
 * a sixth below 1e-15).  And the dat row's formatting alone, in ns per
 * number (the baseline: the step's time per number of the row). */
static void bench_output(void)
{
    printf("output: writing one row of the 100^2 cloth against an rk4 step (1 thread)\n");
    ts_system *sys = cloth_at_rest(100);
    size_t cols = 2 * sys->n + 2;
    ts_solver_options o = ts_default_solver_options();
    ts_stepper *rk;
    FILE *null = fopen("/dev/null", "w");
    double *row = malloc(cols * sizeof *row);
    char *line = malloc(cols * (TS_NUM_MAX + 1) + 2);
    if (!null || !row || !line || ts_stepper_new(&ts_rk4, sys, &o, &rk))
        exit(1);
    for (int k = 0; k < 20; k++) /* the row of step 20 */
        ts_stepper_step(rk, sys, k * 1e-5, 1e-5);
    double ts[REPS], tw[4][REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        for (int k = 0; k < 5; k++)
            ts_stepper_step(rk, sys, 0.0, 1e-5);
        ts[r] = (bench_now() - t0) / 5;
        for (int f = 0; f < 4; f++) {
            t0 = bench_now();
            for (int k = 0; k < 5; k++)
                output_once(f, sys, 0.01 * k, row, line, null);
            tw[f][r] = (bench_now() - t0) / 5;
        }
    }
    static const char *name[3] = {"row dat text (shortest)", "row npy", "frame text (10 digits)"};
    double step = bench_median(ts, REPS);
    for (int f = 0; f < 3; f++) {
        double w = bench_median(tw[f], REPS);
        report(name[f], "100^2", w * 1e3, "ms", step * 1e3, w / step,
               f == 0 ? "goal <= 1 (row / rk4 step)" : "row / rk4 step");
    }
    double per = bench_median(tw[3], REPS) / (double)cols;
    report("row dat formatting per number", "100^2", per * 1e9, "ns", step / (double)cols * 1e9,
           per * (double)cols / step, "formatting / rk4 step");
    fclose(null);
    free(row), free(line);
    ts_stepper_free(rk);
    ts_system_free(sys);
}

static long peak_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* In a child process: the cloth, then the stepper and one step of dt
 * (with the preconditioner pc; NULL: the default solver);
 * r: system and stepper bytes per particle, springs per particle, Newton
 * iterations of the step. */
static void memory_child(const ts_stepper_type *type, double dt, double cg_tol,
                         const ts_precond_type *pc, double r[4])
{
    int fd[2];
    if (pipe(fd))
        exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
#ifdef M_MMAP_THRESHOLD
        /* a fixed threshold: every large block its own mapping, returned
         * to the system when freed, so that the peak counts the pages in
         * use (glibc's adaptive threshold would keep the freed sort arrays
         * of the cloth's construction resident and hand them to the
         * stepper, which then seems to take less than it does) */
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
        long k0 = peak_kb();
        ts_system *sys = cloth(300);
        long k1 = peak_kb();
        ts_solver_options o = ts_default_solver_options();
        o.cg_tol = cg_tol;
        o.precond = pc;
        ts_stepper *st;
        if (ts_stepper_new(type, sys, &o, &st) || ts_stepper_step(st, sys, 0.0, dt))
            _exit(1);
        long k2 = peak_kb();
        double np = (double)(sys->n / 3), ns = (double)ts_springs_of(sys)->ns;
        double q[4] = {1024.0 * (double)(k1 - k0) / np, 1024.0 * (double)(k2 - k1) / np,
                       ns / np, (double)st->last.newton_iters};
        if (write(fd[1], q, sizeof q) != (ssize_t)sizeof q)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    int status;
    ssize_t got = read(fd[0], r, 4 * sizeof *r);
    waitpid(pid, &status, 0);
    close(fd[0]);
    if (got != (ssize_t)(4 * sizeof *r) || status != 0) {
        fprintf(stderr, "bench: memory child failed\n");
        exit(1);
    }
}

/* peak resident memory (max RSS) of `tstep run <args> --out /dev/null`, a
 * whole process as /usr/bin/time reports it, in bytes */
static double process_peak(const char *args)
{
    pid_t pid = fork();
    if (pid == 0) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "exec build/tstep run %s --out /dev/null", args);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench: 'tstep run %s' failed\n", args);
        exit(1);
    }
    return 1024.0 * (double)ru.ru_maxrss;
}

/* The whole process's peak for one default backward-Euler step (dt 1/60) of
 * the 300^2 cloth, per particle, beside a forward-Euler step's. */
static void bench_process_memory(void)
{
    const double np = 300.0 * 300.0;
    double be = process_peak("--system cloth --param nx=300 --param ny=300 "
                             "--stepper backward-euler --dt 0.0166666666667 --steps 1");
    double fe = process_peak("--system cloth --param nx=300 --param ny=300 "
                             "--stepper forward-euler --dt 1e-5 --steps 1");
    report("process peak: default BE step", "300^2", be / np, "B/particle", 1600.0,
           be / np / 1600.0, "goal <= 1 (1600 B)");
    report("process peak: FE step (floor)", "300^2", fe / np, "B/particle", 1600.0,
           fe / np / 1600.0, "");
}

static void bench_memory(void)
{
    printf("memory: peak resident growth per particle, 300^2 cloth\n");
    double r[4], b[4], d[4];
    /* with Jacobi, the lean option: backward-euler-linear at cg-tol 1e-3
     * and dt 1/60; backward-euler (Newton) at dt 1e-3, where it converges
     * in a few Newton iterations that touch every vector of its scratch;
     * then backward-euler with the cloth's default solver (cg/amg) */
    memory_child(bench_stepper("backward-euler-linear"), 1.0 / 60.0, 1e-3, &ts_precond_jacobi, r);
    memory_child(bench_stepper("backward-euler"), 1e-3, 0.0, &ts_precond_jacobi, b);
    memory_child(bench_stepper("backward-euler"), 1e-3, 0.0, NULL, d);
    printf("  (%.2f springs per particle; backward-euler: %.0f Newton iterations with jacobi, "
           "%.0f with the default)\n",
           r[2], b[3], d[3]);
    report("system (springs+state+cache)", "300^2", r[0], "B/particle", 500.0, r[0] / 500.0,
           "");
    report("backward-euler-linear + 1 step", "300^2", r[1], "B/particle", 500.0,
           r[1] / 500.0, "");
    report("backward-euler + 1 step", "300^2", b[1], "B/particle", 500.0, b[1] / 500.0, "");
    report("implicit stepping total (linear)", "300^2", r[0] + r[1], "B/particle", 500.0,
           (r[0] + r[1]) / 500.0, "goal <= 1 (500 B)");
    report("implicit stepping total (Newton)", "300^2", b[0] + b[1], "B/particle", 500.0,
           (b[0] + b[1]) / 500.0, "goal <= 1 (500 B)");
    report("Newton total with the default amg", "300^2", d[0] + d[1], "B/particle", 500.0,
           (d[0] + d[1]) / 500.0, "(goal is for the lean path)");
}

/* bench_kernels [memory|product|threads|rk4|output]...: those figures only */
static int wanted(int argc, char **argv, const char *name)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (system("mkdir -p build/bench") != 0 ||
        !(csv = fopen(argc < 2 ? "build/bench/kernels.csv" : "build/bench/kernels.csv.part",
                      "w"))) {
        fprintf(stderr, "bench: cannot write build/bench/kernels.csv\n");
        return 1;
    }
    fprintf(csv, "figure,size,value,unit,baseline,ratio,goal\n");
    if (wanted(argc, argv, "memory")) {
        bench_process_memory();
        bench_memory();
    }
    ts_threads_set(1);
    if (wanted(argc, argv, "product")) {
        tri_n = (size_t)1 << 23; /* 3 x 64 MB */
        ta = malloc(tri_n * sizeof *ta), tb = malloc(tri_n * sizeof *tb);
        tc = malloc(tri_n * sizeof *tc);
        for (size_t i = 0; i < tri_n; i++)
            ta[i] = 0.0, tb[i] = 1.0, tc[i] = 2.0;
        bench_product();
        printf("  (triad %.2f GB/s)\n", 24.0 * (double)tri_n / triad_once() / 1e9);
        free(ta), free(tb), free(tc);
    }
    if (wanted(argc, argv, "threads"))
        bench_threads();
    if (wanted(argc, argv, "rk4"))
        bench_rk4();
    if (wanted(argc, argv, "output"))
        bench_output();
    fclose(csv);
    if (sink == 42.0)
        printf(" \n");
    return 0;
}

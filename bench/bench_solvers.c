/* make bench: the linear solvers and preconditioners on the cloth.
 *
 * 1. A backward-euler step (default options: Newton to 1e-8 with
 *    Eisenstat-Walker linear tolerances) on the 100 x 100 cloth at
 *    dt = 1/60, divided by one forward-euler step measured in the same run:
 *    the cost of an implicit step in explicit steps (goal: <= 15).  Once
 *    with the default solver, once with each solver / preconditioner; each
 *    as the first step of a fresh stepper (every setup, e.g. a multigrid
 *    hierarchy, included) and as the mean of the next RUN_STEPS steps of
 *    the same stepper (what a step costs in a simulation).
 * 2. Per grid size (32^2, 100^2, 300^2 and 1000^2 by default;
 *    TSTEP_BENCH_SIZES="32 100" to choose), per solver / preconditioner
 *    (at 1000^2 amg only: the others take minutes a step): wall time, CG
 *    iterations, Newton iterations, setup and solve time per step, and the
 *    cost per particle per step.
 * 1b. At 100^2, the default step as the mean step of a 60-step (1 s)
 *    simulation from rest (every setup included) against warm
 *    forward-euler steps timed through the same seconds (time_sim); its
 *    CSV row's step_over_fe is the median of the per-repeat ratios, not
 *    step_s / fe_step_s of the medians.
 * 3. With 100^2 and 1000^2 both run: amg's cost per particle per step at
 *    1000^2 against 100^2 (goal: <= 3), first step and in a run.
 *
 * Each step starts from the same state: the cloth hanging from its top
 * corners after 3 backward-euler steps from rest (moving, springs
 * stretched and some compressed), at the same warm start.  Figures are
 * medians of REPS repeats, interleaved across the solvers so that a slow
 * spell of a shared machine hits them all; 300^2 takes REPS_LARGE repeats,
 * 1000^2 REPS_HUGE (about four minutes and 3.7 GB).  Results to
 * build/bench/solvers.csv and stdout.
 * One thread; OPENBLAS_NUM_THREADS=1 is advisable (CHOLMOD's BLAS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"
#include "tstep/linsolve.h"
#include "tstep/springs.h"
#include "tstep/stepper.h"

#define REPS 5
#define REPS_LARGE 3
#define REPS_HUGE 1
#define DT (1.0 / 60.0)
#define FE_BATCH 20 /* forward-euler steps per timing */


typedef struct {
    const char *label;
    const ts_linsolve_type *solver;
    const ts_precond_type *precond;
    int max_nx; /* larger grids take minutes per step: skipped */
} config;

/* "default" is what ts_linsolve_choose picks (cg/amg on every cloth here,
 * printed per size); cg/jacobi was the default before */
static const config configs[] = {
    {"default", NULL, NULL, 300},
    {"cg/jacobi", &ts_linsolve_cg, &ts_precond_jacobi, 300},
    {"cg/block-jacobi", &ts_linsolve_cg, &ts_precond_block_jacobi, 100},
    {"cg/ic0", &ts_linsolve_cg, &ts_precond_ic0, 300},
    {"cg/amg", &ts_linsolve_cg, &ts_precond_amg, 1 << 30}, /* AMG_CONF below */
    {"direct", &ts_linsolve_direct, NULL, 100},
};
#define NCONF (int)(sizeof configs / sizeof *configs)
#define AMG_CONF 4 /* configs[AMG_CONF]: cg/amg, the scaling figure's */

static ts_system *make_cloth(int nx)
{
    ts_params p;
    ts_params_init(&p, ts_cloth.params);
    char buf[64];
    snprintf(buf, sizeof buf, "nx=%d", nx);
    ts_params_set_pair(&p, buf);
    snprintf(buf, sizeof buf, "ny=%d", nx);
    ts_params_set_pair(&p, buf);
    ts_system *sys = NULL;
    if (ts_system_new(&ts_cloth, &p, &sys)) {
        fprintf(stderr, "bench_solvers: cloth %d: %s\n", nx, ts_error_detail());
        exit(1);
    }
    return sys;
}

static ts_solver_options options(const config *c)
{
    ts_solver_options o = ts_default_solver_options();
    o.linear_solver = c->solver;
    o.precond = c->precond;
    return o;
}

/* Steps taken after the first with the same stepper ("in a run"). */
#define RUN_STEPS 3

static void stats_add(ts_step_stats *sum, const ts_step_stats *a)
{
    sum->linear_iters += a->linear_iters;
    sum->newton_iters += a->newton_iters;
    sum->setup_seconds += a->setup_seconds;
    sum->solve_seconds += a->solve_seconds;
}

/* One timed step of `type` from y0 with a fresh stepper (its statistics in
 * *st), then RUN_STEPS more with the same stepper: their mean time is
 * *run, their summed statistics *rst. */
static double time_step(const ts_stepper_type *type, const config *c, ts_system *sys,
                        const double *y0, ts_step_stats *st, double *run, ts_step_stats *rst)
{
    ts_solver_options o = options(c);
    ts_stepper *s;
    if (ts_stepper_new(type, sys, &o, &s)) {
        fprintf(stderr, "bench_solvers: %s: %s\n", c->label, ts_error_detail());
        exit(1);
    }
    ts_system_set_y(sys, y0);
    double t0 = bench_now();
    int rc = ts_stepper_step(s, sys, 3 * DT, DT);
    double t = bench_now() - t0;
    if (rc) {
        fprintf(stderr, "bench_solvers: %s step failed: %s\n", c->label, ts_error_detail());
        exit(1);
    }
    *st = s->last;
    *rst = (ts_step_stats){0};
    double t1 = bench_now();
    for (int k = 1; k <= RUN_STEPS; k++) {
        if (ts_stepper_step(s, sys, (3 + k) * DT, DT)) {
            fprintf(stderr, "bench_solvers: %s step failed: %s\n", c->label, ts_error_detail());
            exit(1);
        }
        stats_add(rst, &s->last);
    }
    *run = (bench_now() - t1) / RUN_STEPS;
    ts_stepper_free(s);
    return t;
}

/* A simulation: SIM_STEPS steps of the default backward-euler from the
 * cloth's initial state (hanging from its top corners, at rest) with a
 * fresh stepper, every setup included: the mean step, its statistics
 * summed in *sst.  After every SIM_FE_EVERY of its steps, FE_BATCH
 * forward-euler steps of a copy of the cloth (fe_sys, from fe_y) are
 * timed, after SIM_FE_WARM untimed ones (the copy's data back in cache, as
 * in a forward-euler run), so that the baseline is measured through the
 * same seconds as the steps it divides: *fe gets the median of those
 * batches' mean step. */
#define SIM_STEPS 60 /* one second at dt = 1/60 */
#define SIM_FE_EVERY 10
#define SIM_FE_WARM 2
static double time_sim(ts_system *sys, const double *yinit, ts_system *fe_sys,
                       const double *fe_y, ts_step_stats *sst, double *fe)
{
    ts_solver_options o = ts_default_solver_options();
    ts_stepper *s, *f;
    if (ts_stepper_new(bench_stepper("backward-euler"), sys, &o, &s) ||
        ts_stepper_new(&ts_forward_euler, fe_sys, NULL, &f))
        exit(1);
    ts_system_set_y(sys, yinit);
    *sst = (ts_step_stats){0};
    double total = 0.0, fes[SIM_STEPS / SIM_FE_EVERY];
    int nfe = 0;
    for (int k = 0; k < SIM_STEPS; k++) {
        double t0 = bench_now();
        if (ts_stepper_step(s, sys, k * DT, DT)) {
            fprintf(stderr, "bench_solvers: simulation step %d failed: %s\n", k + 1,
                    ts_error_detail());
            exit(1);
        }
        total += bench_now() - t0;
        stats_add(sst, &s->last);
        if ((k + 1) % SIM_FE_EVERY)
            continue;
        ts_system_set_y(fe_sys, fe_y);
        for (int j = 0; j < SIM_FE_WARM; j++)
            ts_stepper_step(f, fe_sys, 3 * DT, 1e-6); /* as time_fe */
        t0 = bench_now();
        for (int j = 0; j < FE_BATCH; j++)
            ts_stepper_step(f, fe_sys, 3 * DT, 1e-6);
        fes[nfe++] = (bench_now() - t0) / FE_BATCH;
    }
    *fe = bench_median(fes, nfe);
    ts_stepper_free(s);
    ts_stepper_free(f);
    return total / SIM_STEPS;
}

static double time_fe(ts_system *sys, const double *y0)
{
    ts_stepper *s;
    if (ts_stepper_new(&ts_forward_euler, sys, NULL, &s))
        exit(1);
    ts_system_set_y(sys, y0);
    double t0 = bench_now();
    for (int k = 0; k < FE_BATCH; k++)
        ts_stepper_step(s, sys, 3 * DT, 1e-6); /* a tiny step: the state stays sane */
    double t = (bench_now() - t0) / FE_BATCH;
    ts_stepper_free(s);
    return t;
}

/* the start: 3 backward-euler steps from rest (multigrid-preconditioned:
 * the same converged steps, in seconds rather than minutes at 1000^2) */
static double *start_state(ts_system *sys)
{
    double *y = malloc(2 * sys->n * sizeof *y);
    ts_stepper *s;
    ts_solver_options o = ts_default_solver_options();
    o.precond = &ts_precond_amg;
    if (!y || ts_stepper_new(bench_stepper("backward-euler"), sys, &o, &s))
        exit(1);
    for (int k = 0; k < 3; k++)
        if (ts_stepper_step(s, sys, k * DT, DT))
            exit(1);
    ts_system_get_y(sys, y);
    ts_stepper_free(s);
    return y;
}

int main(void)
{
    if (system("mkdir -p build/bench") != 0)
        return 1;
    /* one thread, as every figure of make bench unless it says otherwise
     * (OpenMP's default, one per core, spins on a shared machine) */
    ts_threads_set(1);
    if (configs[AMG_CONF].precond != &ts_precond_amg) {
        fprintf(stderr, "bench_solvers: AMG_CONF is not the cg/amg configuration\n");
        return 1;
    }
    FILE *csv = fopen("build/bench/solvers.csv", "w");
    if (!csv) {
        perror("build/bench/solvers.csv");
        return 1;
    }
    fprintf(csv, "nx,particles,solver,reps,step_s,fe_step_s,step_over_fe,linear_iters,"
                 "newton_iters,setup_s,solve_s,us_per_particle,run_step_s,run_step_over_fe,"
                 "run_linear_iters,run_newton_iters,run_us_per_particle\n");

    const char *env = getenv("TSTEP_BENCH_SIZES");
    char sizes[256];
    snprintf(sizes, sizeof sizes, "%s", env && *env ? env : "32 100 300 1000");
    printf("bench_solvers: backward-euler on the cloth at dt = 1/60, one step from a moving "
           "state;\nmedians of interleaved repeats\n");
    /* amg's microseconds per particle per step at 100^2 [0] and 1000^2 [1] */
    double amg_first[2] = {0.0, 0.0}, amg_run[2] = {0.0, 0.0};
    for (char *tok = strtok(sizes, " ,"); tok; tok = strtok(NULL, " ,")) {
        int nx = atoi(tok);
        if (nx < 3)
            continue;
        ts_system *sys = make_cloth(nx);
        double *yinit = malloc(2 * sys->n * sizeof *yinit);
        if (!yinit)
            return 1;
        ts_system_get_y(sys, yinit);
        double *y0 = start_state(sys);
        const ts_linsolve_type *dt;
        const ts_precond_type *dp;
        const char *why;
        ts_linsolve_choose(sys, NULL, &dt, &dp, &why);
        printf("  %dx%d: default %s%s%s (%s)\n", nx, nx, dt->name, dp ? "/" : "",
               dp ? dp->name : "", why);
        int reps = nx >= 1000 ? REPS_HUGE : nx >= 300 ? REPS_LARGE : REPS;
        double t[NCONF][REPS], tr[NCONF][REPS], fe[REPS], sim[REPS], sit[REPS], snw[REPS];
        double sfe[REPS], sratio[REPS];
        ts_system *fe_sys = nx == 100 ? make_cloth(nx) : NULL; /* the simulation's baseline */
        ts_step_stats st[NCONF][REPS], rst[NCONF][REPS];
        for (int r = 0; r < reps; r++) {
            fe[r] = time_fe(sys, y0);
            for (int c = 0; c < NCONF; c++)
                if (nx <= configs[c].max_nx)
                    t[c][r] = time_step(bench_stepper("backward-euler"), &configs[c], sys, y0, &st[c][r],
                                        &tr[c][r], &rst[c][r]);
            if (nx == 100) { /* the goal's size: a whole simulation too */
                ts_step_stats sst;
                sim[r] = time_sim(sys, yinit, fe_sys, y0, &sst, &sfe[r]);
                sratio[r] = sim[r] / sfe[r];
                sit[r] = (double)sst.linear_iters / SIM_STEPS;
                snw[r] = (double)sst.newton_iters / SIM_STEPS;
            }
        }
        double fe_med = bench_median(fe, reps);
        printf("\n%d x %d cloth (%d particles): forward-euler step %.3g ms\n", nx, nx, nx * nx,
               1e3 * fe_med);
        printf("  first step (a fresh stepper: every setup included); in a run (the mean of the "
               "%d steps after it)\n", RUN_STEPS);
        printf("  %-16s %10s %8s %8s %7s %9s %9s %10s | %9s %7s %7s %7s\n", "solver", "step ms",
               "BE/FE", "CG it", "Newton", "setup ms", "solve ms", "us/part.", "run ms", "BE/FE",
               "CG it", "Newton");
        for (int c = 0; c < NCONF; c++) {
            if (nx > configs[c].max_nx) {
                printf("  %-16s skipped above %d x %d\n", configs[c].label, configs[c].max_nx,
                       configs[c].max_nx);
                continue;
            }
            double it[REPS], nw[REPS], su[REPS], so[REPS], rit[REPS], rnw[REPS];
            for (int r = 0; r < reps; r++) {
                it[r] = (double)st[c][r].linear_iters;
                nw[r] = (double)st[c][r].newton_iters;
                su[r] = st[c][r].setup_seconds;
                so[r] = st[c][r].solve_seconds;
                rit[r] = (double)rst[c][r].linear_iters / RUN_STEPS;
                rnw[r] = (double)rst[c][r].newton_iters / RUN_STEPS;
            }
            double rtm = bench_median(tr[c], reps);
            double tm = bench_median(t[c], reps), itm = bench_median(it, reps), nwm = bench_median(nw, reps);
            double sum = bench_median(su, reps), som = bench_median(so, reps);
            double per = 1e6 * tm / (nx * nx);
            if (c == AMG_CONF && (nx == 100 || nx == 1000))
                amg_first[nx == 1000] = per, amg_run[nx == 1000] = 1e6 * rtm / (nx * nx);
            printf("  %-16s %10.2f %8.0f %8.0f %7.0f %9.2f %9.2f %10.2f | %9.2f %7.0f %7.1f %7.1f\n",
                   configs[c].label, 1e3 * tm, tm / fe_med, itm, nwm, 1e3 * sum, 1e3 * som, per,
                   1e3 * rtm, rtm / fe_med, bench_median(rit, reps), bench_median(rnw, reps));
            fprintf(csv, "%d,%d,%s,%d,%.6g,%.6g,%.6g,%.0f,%.0f,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n",
                    nx, nx * nx, configs[c].label, reps, tm, fe_med, tm / fe_med, itm, nwm, sum,
                    som, per, rtm, rtm / fe_med, bench_median(rit, reps), bench_median(rnw, reps),
                    1e6 * rtm / (nx * nx));
        }
        if (nx == 100) {
            double sm = bench_median(sim, reps), sf = bench_median(sfe, reps);
            double sr = bench_median(sratio, reps), lo = sratio[0], hi = sratio[0];
            for (int r = 1; r < reps; r++)
                lo = sratio[r] < lo ? sratio[r] : lo, hi = sratio[r] > hi ? sratio[r] : hi;
            printf("  default, a %d-step simulation from rest (1 s; a fresh stepper, every "
                   "setup included): %.2f ms a step, %.1f CG iterations and %.2f Newton "
                   "solves a step; against %d forward-euler steps timed after every %d of "
                   "its steps (%.3g ms a step): %.0f (repeats %.0f-%.0f)\n",
                   SIM_STEPS, 1e3 * sm, bench_median(sit, reps), bench_median(snw, reps),
                   FE_BATCH, SIM_FE_EVERY, 1e3 * sf, sr, lo, hi);
            fprintf(csv, "%d,%d,default (%d-step simulation),%d,%.6g,%.6g,%.6g,%.1f,%.2f,,,"
                         "%.6g,%.6g,%.6g,%.1f,%.2f,%.6g\n",
                    nx, nx * nx, SIM_STEPS, reps, sm, sf, sr, bench_median(sit, reps),
                    bench_median(snw, reps), 1e6 * sm / (nx * nx), sm, sr,
                    bench_median(sit, reps), bench_median(snw, reps), 1e6 * sm / (nx * nx));
            printf("  goal: default backward-euler step <= 15 forward-euler steps; measured "
                   "%.0f (first step), %.0f (in a run: steps 5-7 from rest), %.0f (the mean "
                   "step of the %d-step simulation)\n",
                   bench_median(t[0], reps) / fe_med, bench_median(tr[0], reps) / fe_med, sr,
                   SIM_STEPS);
            for (int c = 1; c < NCONF; c++)
                if (configs[c].precond == &ts_precond_amg ||
                    configs[c].precond == &ts_precond_jacobi)
                    printf("  with %s: %.0f (first step), %.0f (in a run)\n", configs[c].label,
                           bench_median(t[c], reps) / fe_med, bench_median(tr[c], reps) / fe_med);
        }
        free(y0);
        free(yinit);
        ts_system_free(fe_sys);
        ts_system_free(sys);
        fflush(stdout);
    }
    if (amg_first[0] > 0.0 && amg_first[1] > 0.0)
        printf("\namg's cost per particle per step, 1000^2 against 100^2 (goal <= 3): %.2f in a "
               "run (%.1f against %.1f us), %.2f as a first step (%.1f against %.1f us)\n",
               amg_run[1] / amg_run[0], amg_run[1], amg_run[0], amg_first[1] / amg_first[0],
               amg_first[1], amg_first[0]);
    fclose(csv);
    printf("\nwritten: build/bench/solvers.csv\n");
    return 0;
}

/* make bench: whole `tstep run` processes as a user meets them, wall time.
 *
 *   loaded  the default 100^2 cloth under backward Euler (dt 1/60, 10
 *           steps) while one other CPU-bound process (a spinning child)
 *           shares the machine: 2 threads / 1 thread.  Goal: <= 1.3 (threads
 *           must not slow a busy machine's run down).
 *   arriving  the 300^2 cloth, ten backward-Euler steps, with a spinning
 *           process that starts 0.3 s after tstep does: 2 threads / 1.  Goal:
 *           <= 1.3, as loaded (load that comes during a run).
 *   quiet   the 300^2 cloth, one backward-Euler step of dt 1/60 (the
 *           multigrid's serial setup is most of it), and ten steps, nothing
 *           else started: 1 thread / 2 threads, the speed-up.  Goal: >= 1.6.
 *   1000^2  one default backward-Euler step of the 1000^2 cloth from rest,
 *           dt 1/30, 1 thread, the whole run (the cloth built, the solver
 *           set up, the step), against the goal of 8 s; one run (3.5 GB,
 *           half a minute or more).  TSTEP_BENCH_SIZES without 1000 leaves
 *           it out, as bench_solvers does.
 *
 * Each figure is the ratio of the medians of REPS interleaved repeats
 * (1, 2, 1, 2, ...).  On a machine shared with other jobs "quiet" is only
 * as quiet as they let it be: the summary prints the load average.
 *
 * Results: build/bench/process.csv (figure, size, value, unit, baseline,
 * ratio, goal) and a summary on standard output. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

#ifndef TSTEP
#define TSTEP "build/tstep"
#endif
#define REPS 5

/* wall time of `tstep run <args> --threads th`, output to /dev/null, in a
 * user's environment: without the thread settings make bench gives its
 * own programs, so that the program makes its own choices (src/cli/main.c) */
static double run_wall(const char *args, int th)
{
    char cmd[640];
    snprintf(cmd, sizeof cmd,
             "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u OPENBLAS_NUM_THREADS "
             "%s run %s --threads %d --out /dev/null >/dev/null",
             TSTEP, args, th);
    double t0 = bench_now();
    int st = system(cmd);
    double t = bench_now() - t0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bench_process: '%s' failed\n", cmd);
        exit(1);
    }
    return t;
}

/* a child that spins until killed, after delay seconds: one other
 * CPU-bound process */
static pid_t spinner(double delay)
{
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        volatile unsigned long sink = 0;
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the bench, whatever happens */
        if (getppid() != parent)
            _exit(0);
        time_t whole = (time_t)delay;
        if (delay > 0.0)
            nanosleep(&(struct timespec){whole, (long)(1e9 * (delay - (double)whole))}, NULL);
        for (;;)
            sink++;
    }
    if (pid < 0)
        exit(1);
    return pid;
}

static void stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* medians of REPS interleaved runs with 1 and 2 threads; with a spinner
 * from `arrive` seconds after each run starts when arrive >= 0 */
static void pair_with(const char *args, double arrive, double *one, double *two)
{
    double t[2][REPS];
    for (int r = 0; r < REPS; r++)
        for (int th = 1; th <= 2; th++) {
            pid_t spin = arrive >= 0.0 ? spinner(arrive) : 0;
            t[th - 1][r] = run_wall(args, th);
            if (spin)
                stop(spin);
        }
    *one = bench_median(t[0], REPS), *two = bench_median(t[1], REPS);
}

static void pair(const char *args, double *one, double *two) { pair_with(args, -1.0, one, two); }

static void report(FILE *csv, const char *figure, const char *size, double value,
                   double baseline, double ratio, const char *goal)
{
    fprintf(csv, "%s,%s,%.6g,s,%.6g,%.4g,%s\n", figure, size, value, baseline, ratio, goal);
    printf("  %-34s %-7s %10.4g s         ratio %7.3f   %s\n", figure, size, value, ratio, goal);
    fflush(stdout);
}

int main(void)
{
    FILE *csv = system("mkdir -p build/bench") == 0 ? fopen("build/bench/process.csv", "w") : NULL;
    if (!csv) {
        fprintf(stderr, "bench_process: cannot write build/bench/process.csv\n");
        return 1;
    }
    fprintf(csv, "figure,size,value,unit,baseline,ratio,goal\n");
    double load[3] = {0, 0, 0};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la && fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
        load[0] = -1;
    if (la)
        fclose(la);
    printf("threads: tstep run with 2 threads against 1 (%ld cores, load average %.2f)\n",
           sysconf(_SC_NPROCESSORS_ONLN), load[0]);
    double one, two;
    pid_t spin = spinner(0.0);
    pair("--system cloth --param nx=100 --param ny=100 --stepper backward-euler "
         "--dt 0.0166666666667 --steps 10",
         &one, &two);
    stop(spin);
    report(csv, "loaded: 2 threads / 1 (BE 10 steps)", "100^2", two, one, two / one,
           "goal <= 1.3");
    pair_with("--system cloth --param nx=300 --param ny=300 --stepper backward-euler "
              "--dt 0.0166666666667 --steps 10",
              0.3, &one, &two);
    report(csv, "load arriving at 0.3 s: 2 threads / 1", "300^2", two, one, two / one,
           "goal <= 1.3");
    pair("--system cloth --param nx=300 --param ny=300 --stepper backward-euler "
         "--dt 0.0166666666667 --steps 1",
         &one, &two);
    report(csv, "quiet: 1 thread / 2 (BE 1 step)", "300^2", two, one, one / two,
           "goal >= 1.6 (speed-up)");
    pair("--system cloth --param nx=300 --param ny=300 --stepper backward-euler "
         "--dt 0.0166666666667 --steps 10",
         &one, &two);
    report(csv, "quiet: 1 thread / 2 (BE 10 steps)", "300^2", two, one, one / two,
           "goal >= 1.6 (speed-up)");
    const char *sizes = getenv("TSTEP_BENCH_SIZES");
    if (!sizes || strstr(sizes, "1000")) {
        printf("one default backward-euler step of the 1000^2 cloth from rest (1 thread)\n");
        double big = run_wall("--system cloth --param nx=1000 --param ny=1000 "
                              "--stepper backward-euler --dt 0.0333333333333 --steps 1",
                              1);
        report(csv, "BE step from rest / 8 s", "1000^2", big, 8.0, big / 8.0, "goal <= 1");
    }
    fclose(csv);
    return 0;
}

/* make bench: `tstep stability` against a plain run of the same length.
 *
 * For forward Euler on the default cloth (20 x 20), hair and the string:
 * the processor time of `tstep stability --system S --stepper forward-euler`
 * (the spectrum, the prediction and the measuring runs) against that of one
 * plain `tstep run` at 0.9 of the measured dt_crit over the same T, the run
 * a student would make to check the limit.  Processor time of the child
 * processes (getrusage), not wall time: on a shared machine wall time is
 * mostly the other jobs.  Goal: at most 15 plain runs.  The plain run must
 * also end cleanly (exit 0): 0.9 of a measured limit is stable over T.
 *
 * Results: build/bench/stability.csv (figure, size, value, unit, baseline,
 * ratio, goal) and a summary on standard output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#ifndef TSTEP
#define TSTEP "build/tstep"
#endif

/* processor time (user + system) of the children so far */
static double children_cpu(void)
{
    struct rusage r;
    getrusage(RUSAGE_CHILDREN, &r);
    return (double)r.ru_utime.tv_sec + 1e-6 * (double)r.ru_utime.tv_usec +
           (double)r.ru_stime.tv_sec + 1e-6 * (double)r.ru_stime.tv_usec;
}

/* run `cmd`; its exit status, and the processor time it took in *cpu */
static int timed(const char *cmd, double *cpu)
{
    double t0 = children_cpu();
    int st = system(cmd);
    *cpu = children_cpu() - t0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* dt_crit and t_end of the stepper's row in a stability csv */
static int read_row(const char *path, double *dt_crit, double *t_end)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int ok = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "forward-euler,", 14) == 0) {
            double v[8];
            ok = sscanf(line + 14, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3],
                        &v[4], &v[5], &v[6], &v[7]) == 8;
            *dt_crit = v[0], *t_end = v[7];
        }
    if (f)
        fclose(f);
    return ok;
}

static int bench_system(FILE *csv, const char *system_args, const char *label)
{
    char cmd[1024];
    double cpu_stab, cpu_run, dt_crit = 0.0, t_end = 0.0;
    snprintf(cmd, sizeof cmd,
             TSTEP " stability %s --stepper forward-euler --format csv "
                   "--out build/bench/stability-row.csv 2>/dev/null",
             system_args);
    const char *row = "build/bench/stability-row.csv";
    if (timed(cmd, &cpu_stab) != 0 || !read_row(row, &dt_crit, &t_end) || !(dt_crit > 0.0)) {
        fprintf(stderr, "bench_stability: %s: no measured limit\n", label);
        return 1;
    }
    snprintf(cmd, sizeof cmd,
             TSTEP " run %s --stepper forward-euler --dt %.9g --t-end %.9g --every 1000000000 "
                   "--out /dev/null 2>/dev/null",
             system_args, 0.9 * dt_crit, t_end);
    int clean = timed(cmd, &cpu_run) == 0;
    double ratio = cpu_stab / cpu_run;
    fprintf(csv, "stability,%s,%.4g,s,%.4g,%.4g,<= 15 plain runs%s\n", label, cpu_stab, cpu_run,
            ratio, clean ? "" : " (plain run at 0.9 dt_crit NOT clean)");
    printf("  %-14s stability %7.2f s CPU, plain run (0.9 dt_crit = %.4g, T = %.4g) %6.2f s: "
           "%.1f runs; plain run %s\n",
           label, cpu_stab, 0.9 * dt_crit, t_end, cpu_run, ratio, clean ? "clean" : "NOT clean");
    return !clean;
}

int main(void)
{
    FILE *csv = fopen("build/bench/stability.csv", "w");
    if (!csv) {
        perror("build/bench/stability.csv");
        return 1;
    }
    fprintf(csv, "figure,size,value,unit,baseline,ratio,goal\n");
    printf("stability (forward Euler) against one plain run of the same T, processor time:\n");
    int bad = bench_system(csv, "--system cloth", "cloth-20x20");
    bad |= bench_system(csv, "--system hair", "hair");
    bad |= bench_system(csv, "--system string", "string");
    fclose(csv);
    return bad;
}

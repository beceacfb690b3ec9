/* The test runner: every suite, each in its own SRunner, spread over worker
 * processes (one per core, at most 4; TSTEP_TEST_JOBS=N to choose).  Run
 * from the repository root (`make test`), since CLI tests call build/tstep.
 * Each worker takes the next suite not yet run when it comes free.
 *
 * Quiet on success: one line per suite (checks, failures, skips, seconds) and
 * a closing "tests: N passed, N failed, N skipped"; each failure is printed
 * with its file, line, test case and message, each suite's skips with their
 * reasons (tests/skip.c: a check that needs a skeleton stepper of a
 * hand-out, or one the build lacks, is skipped, not failed).  Check's environment still selects what runs:
 * CK_RUN_SUITE, CK_RUN_CASE, CK_INCLUDE_TAGS and CK_EXCLUDE_TAGS (`make test`
 * leaves out the tag "long", `make check-fast` also "slow").
 *
 * Check's per-test time limits only catch a test that hangs: they are
 * multiplied by 10 here (unless CK_TIMEOUT_MULTIPLIER is set), so a test never
 * fails because the machine is busy. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tests.h"
#include "tstep/linalg.h"

/* Ordered by their cost, the dearest first: the workers take them in this
 * order as they come free. */
static const struct {
    const char *name;
    Suite *(*make)(void);
} suites[] = {
    {"grade", grade_suite},         {"plots", plots_suite},
    {"options", options_suite},     {"robust", robust_suite},
    {"stability", stability_suite}, {"reference", reference_suite},
    {"spectrum", spectrum_suite},   {"plugins", plugins_suite},
    {"methods", methods_suite},     {"perf", perf_suite},
    {"cli", cli_suite},             {"linsolve", linsolve_suite},
    {"steppers", steppers_suite},   {"newton", newton_suite},
    {"springs", springs_suite},     {"butcher", butcher_suite},
    {"jacobian", jacobian_suite},   {"linalg", linalg_suite},
    {"backward-euler-opt", opt_suite}, {"memory", memory_suite},
    {"systems", systems_suite},     {"docs", docs_suite},
};
enum { NSUITES = sizeof suites / sizeof *suites };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_failures(SRunner *sr)
{
    TestResult **tr = srunner_failures(sr);
    for (int i = 0; i < srunner_ntests_failed(sr); i++)
        printf("  FAIL %s:%d: %s: %s\n", tr_lfile(tr[i]), tr_lno(tr[i]), tr_tcname(tr[i]),
               tr_msg(tr[i]));
    free(tr);
}

/* Run suite i; print its line; add its counts to run[0] (checks), run[1]
 * (failures) and run[2] (skips, which Check counted as passes). */
static void run_suite(int i, int run[3])
{
    Suite *s = suites[i].make();
    SRunner *sr = srunner_create(s);
    double t0 = now();
    tests_skip_suite(i);
    srunner_run_all(sr, CK_SILENT);
    const char *why = "";
    int n = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
    int skipped = tests_skipped(i, &why);
    if (n > 0) {
        printf("%-18s %4d checks, %d failed, ", suites[i].name, n, failed);
        if (skipped)
            printf("%d skipped, ", skipped);
        printf("%6.1f s\n", now() - t0);
        print_failures(sr);
        if (skipped)
            printf("  SKIP %s\n", why);
        fflush(stdout);
    }
    run[0] += n, run[1] += failed, run[2] += skipped;
    srunner_free(sr);
}

/* A worker: runs the suites whose indices it reads from `tasks` until none
 * is left (the dearest first, so the load balances); its counts go to fd. */
static void worker(int tasks, int fd)
{
    int run[3] = {0, 0, 0}, i;
    while (read(tasks, &i, sizeof i) == (ssize_t)sizeof i)
        run_suite(i, run);
    if (write(fd, run, sizeof run) != (ssize_t)sizeof run)
        _exit(3);
    _exit(0);
}

static int jobs(void)
{
    const char *e = getenv("TSTEP_TEST_JOBS");
    long n = e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

int main(void)
{
    if (!getenv("OMP_NUM_THREADS")) /* as the program: one thread unless asked */
        ts_threads_set(1);
    setenv("CK_TIMEOUT_MULTIPLIER", "10", 0);
    setvbuf(stdout, NULL, _IOLBF, 0);
    tests_skip_init(); /* before the forks: they share its counts */
    int nw = jobs(), fds[2], tasks[2], total[3] = {0, 0, 0}, lost = 0;
    if (pipe(fds) || pipe(tasks))
        return perror("pipe"), EXIT_FAILURE;
    for (int i = 0; i < NSUITES; i++) /* a few bytes: the pipe holds them all */
        if (write(tasks[1], &i, sizeof i) != (ssize_t)sizeof i)
            return perror("pipe"), EXIT_FAILURE;
    close(tasks[1]);
    double t0 = now();
    for (int w = 0; w < nw; w++)
        if (fork() == 0)
            worker(tasks[0], fds[1]);
    close(fds[1]);
    close(tasks[0]);
    for (int w = 0; w < nw; w++) {
        int run[3], status;
        if (read(fds[0], run, sizeof run) == (ssize_t)sizeof run)
            total[0] += run[0], total[1] += run[1], total[2] += run[2];
        wait(&status);
        lost += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    if (lost)
        printf("%d test worker(s) died\n", lost);
    grade_note_skeletons(); /* a hand-out's skeleton steppers, named */
    printf("%.0f s, %d worker(s)\ntests: %d passed, %d failed, %d skipped\n", now() - t0, nw,
           total[0] - total[1] - total[2], total[1], total[2]);
    return total[1] || lost ? EXIT_FAILURE : EXIT_SUCCESS;
}

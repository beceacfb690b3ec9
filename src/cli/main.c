/* tstep: the command-line program (tstep_main.c), with the grader's
 * allocation counter (alloc_counter.h).
 *
 * How the threads wait, and only tstep's own team computes.  libgomp's
 * workers spin at every barrier for a long while by default
 * (GOMP_SPINCOUNT 300000) before they sleep; on a machine where another
 * process wants a core, the spinning worker takes it and a 2-thread run of
 * the 100^2 cloth took 9 times as long as 1 thread (make bench,
 * bench/bench_process.c).  Sleeping at once (OMP_WAIT_POLICY=passive)
 * costs a system call to sleep and one to wake at every parallel region
 * instead, which on a quiet machine made ten backward-Euler steps of the
 * 300^2 cloth on 2 threads 10-12 % slower than a short spin (10,000
 * rounds) in the same minutes.  So the program looks at the machine as it
 * starts: with at least two processors free of other running tasks it
 * spins that briefly, else it waits passively (docs/performance.md,
 * Threads, with the figures and commands).  OpenBLAS (the coarse
 * multigrid level's Cholesky solve, the Ritz values) starts a thread a
 * core when it is loaded, and after every call those threads spin too: 10
 * backward-Euler steps of the 100^2 cloth on 2 threads used 0.74 s of
 * processor time against 0.65 s with OPENBLAS_NUM_THREADS=1, for matrices
 * far too small to share.  Both libraries read these settings once, when
 * they are loaded, before main: so unless the user chose them
 * (OMP_WAIT_POLICY or GOMP_SPINCOUNT; OPENBLAS_NUM_THREADS), the program
 * sets them, with TSTEP_WAIT_CHOICE saying why for run --stats, and
 * executes its own file again, once: a second start of the program and its
 * libraries (`tstep --version` takes 30 ms so, 15 ms with the variables
 * set; the same section).  Where that fails (no /proc) it goes on as it
 * is. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "alloc_counter.h"
#include "tstep/tstep.h"

#define SPIN_QUIET "10000" /* GOMP_SPINCOUNT with two processors free */

/* The first line of file, or "" */
static void first_line(const char *file, char *line, size_t size)
{
    FILE *f = fopen(file, "r");
    if (!f || !fgets(line, (int)size, f))
        line[0] = '\0';
    if (f)
        fclose(f);
}

/* This process's threads running or ready to run: OpenBLAS's, spinning
 * from its start, are not other work */
static long own_running(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long n = 0;
    while (d && (e = readdir(d))) {
        char path[300], line[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        first_line(path, line, sizeof line);
        const char *end = strrchr(line, ')'); /* the state follows the name */
        n += e->d_name[0] != '.' && end && end[1] == ' ' && end[2] == 'R';
    }
    if (d)
        closedir(d);
    return n;
}

/* The tasks running or ready to run on the machine besides this process's
 * (/proc/stat's procs_running counts every task), or -1 */
static long others_running_now(void)
{
    FILE *f = fopen("/proc/stat", "r");
    char line[256];
    long n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "procs_running %ld", &n) == 1)
            break;
    if (f)
        fclose(f);
    if (n < 0)
        return -1;
    n -= own_running();
    return n > 0 ? n : 0;
}

/* The fewest of five looks a millisecond apart: a process that keeps a
 * processor busy is in every one, one starting beside this (the other end
 * of a pipe) soon leaves */
static long others_running(void)
{
    long fewest = others_running_now();
    for (int k = 1; k < 5 && fewest > 0; k++) {
        nanosleep(&(struct timespec){0, 1000000}, NULL);
        long n = others_running_now();
        fewest = n >= 0 && n < fewest ? n : fewest;
    }
    return fewest;
}

/* The wait policy for the machine as it is now, set with the reason */
static int choose_waiting(void)
{
    long others = others_running(), cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char why[96];
    snprintf(why, sizeof why, "%ld other tasks running, %ld processors", others, cpus);
    int spin = others >= 0 && cpus - others >= 2;
    return (spin ? setenv("GOMP_SPINCOUNT", SPIN_QUIET, 1)
                 : setenv("OMP_WAIT_POLICY", "passive", 1)) == 0 &&
                   setenv("TSTEP_WAIT_CHOICE", why, 1) == 0
               ? 0
               : -1;
}

static void quiet_libraries(char **argv)
{
    char self[4096];
    int policy = !getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT");
    int blas = !getenv("OPENBLAS_NUM_THREADS");
    if (!policy && !blas)
        return;
    /* the file itself, not /proc/self/exe: the process keeps its name */
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || n >= (ssize_t)sizeof self - 1)
        return;
    self[n] = '\0';
    if ((!policy || choose_waiting() == 0) &&
        (!blas || setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0))
        execv(self, argv);
    /* still here: the libraries keep what they read at load, and the
     * environment (which run --stats reports) says so again */
    if (policy) {
        unsetenv("OMP_WAIT_POLICY");
        unsetenv("GOMP_SPINCOUNT");
        unsetenv("TSTEP_WAIT_CHOICE");
    }
    if (blas)
        unsetenv("OPENBLAS_NUM_THREADS");
}

int main(int argc, char **argv)
{
    quiet_libraries(argv);
    alloc_counter_install();
    return tstep_main(argc, argv, NULL, NULL);
}

/* tstep: the command-line program (tstep_main.c), with the grader's
 * allocation counter (alloc_counter.h).
 *
 * Threads wait passively, and only tstep's own team computes.  libgomp's
 * workers otherwise spin at every barrier for a long while (GOMP_SPINCOUNT
 * 300000) before they sleep; on a machine where another process wants a
 * core, the spinning worker takes it and a 2-thread run of the 100^2 cloth
 * took 9 times as long as 1 thread (make bench, bench/bench_process.c).
 * OpenBLAS (the coarse multigrid level's Cholesky solve, the Ritz values)
 * starts a thread a core when it is loaded, and after every call those
 * threads spin too: 10 backward-Euler steps of the 100^2 cloth on 2 threads
 * used 0.74 s of processor time against 0.65 s with OPENBLAS_NUM_THREADS=1
 * (docs/performance.md, Threads, with the command), for matrices far too
 * small to share.  Both libraries read these settings
 * once, when they are loaded, before main: so unless the user chose them
 * (OMP_WAIT_POLICY or GOMP_SPINCOUNT; OPENBLAS_NUM_THREADS), the program
 * sets OMP_WAIT_POLICY=passive and OPENBLAS_NUM_THREADS=1 and executes its
 * own file again, once: a second start of the program and its libraries
 * (`tstep --version` takes 30 ms so, 15 ms with both variables set; the
 * same section).
 * Where that fails (no /proc) it goes on as it is. */
#include <stdlib.h>
#include <unistd.h>
#include "alloc_counter.h"
#include "tstep/tstep.h"

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
    if ((!policy || setenv("OMP_WAIT_POLICY", "passive", 1) == 0) &&
        (!blas || setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0))
        execv(self, argv);
    /* still here: the libraries keep what they read at load, and the
     * environment (which run --stats reports) says so again */
    if (policy)
        unsetenv("OMP_WAIT_POLICY");
    if (blas)
        unsetenv("OPENBLAS_NUM_THREADS");
}

int main(int argc, char **argv)
{
    quiet_libraries(argv);
    alloc_counter_install();
    return tstep_main(argc, argv, NULL, NULL);
}

/* tstep: the command-line program (tstep_main.c), with the grader's
 * allocation counter (alloc_counter.h).
 *
 * How the threads wait, and only tstep's own team computes.  libgomp's
 * workers spin at every barrier for a long while by default
 * (GOMP_SPINCOUNT 300000) before they sleep; sleeping at once
 * (OMP_WAIT_POLICY=passive) costs a system call to sleep and one to wake at
 * every parallel region instead, which on a quiet machine made thirty
 * backward-Euler steps of the 100^2 cloth take 1.8-1.9 times as long on 2
 * threads as on one.
 * So the workers spin briefly (10,000 rounds) and then sleep, and the team
 * follows the machine's load (ts_threads_follow_load, src/ext/threads.c):
 * while other processes hold processors, a loop takes only as many threads
 * as processors are left over, so that no worker spins waiting for a
 * processor that is not free
 * (docs/performance.md, Threads, with the figures and commands).
 * TSTEP_FOLLOW_LOAD=0 keeps the threads asked for.  OpenBLAS (the coarse
 * multigrid level's Cholesky solve, the Ritz values) starts a thread a
 * core when it is loaded, and after every call those threads spin too: 10
 * backward-Euler steps of the 100^2 cloth on 2 threads used 0.74 s of
 * processor time against 0.65 s with OPENBLAS_NUM_THREADS=1, for matrices
 * far too small to share.  Both libraries read these settings once, when
 * they are loaded, before main: so unless the user chose them
 * (OMP_WAIT_POLICY or GOMP_SPINCOUNT; OPENBLAS_NUM_THREADS), the program
 * sets them and executes its own file again, once: a second start of the
 * program and its libraries (`tstep --version` takes 30 ms so, 15 ms with
 * the variables set; the same section).  Where that fails (no /proc) it
 * goes on as it is. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "alloc_counter.h"
#include "tstep/tstep.h"

#define SPIN "10000" /* GOMP_SPINCOUNT: rounds a worker spins before it sleeps */

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
    if ((!policy || setenv("GOMP_SPINCOUNT", SPIN, 1) == 0) &&
        (!blas || setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0))
        execv(self, argv);
    /* still here: the libraries keep what they read at load, and the
     * environment (which run --stats reports) says so again */
    if (policy)
        unsetenv("GOMP_SPINCOUNT");
    if (blas)
        unsetenv("OPENBLAS_NUM_THREADS");
}

int main(int argc, char **argv)
{
    quiet_libraries(argv);
    const char *follow = getenv("TSTEP_FOLLOW_LOAD");
    ts_threads_follow_load(!follow || strcmp(follow, "0") != 0);
    alloc_counter_install();
    return tstep_main(argc, argv, NULL, NULL);
}

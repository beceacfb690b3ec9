/* The thread team (core/parallel.h): OpenMP, the only file tstep compiles
 * with -fopenmp.  A loop's range [0, n) is cut as OpenMP's static schedule
 * cuts it, one contiguous piece a thread, the first n % threads pieces one
 * longer.
 *
 * Following the machine's load (ts_threads_follow_load; the tstep program
 * turns it on): every LOOK_EVERY seconds, at the start of a loop, the team
 * counts the tasks running or ready to run on the machine besides its own
 * threads (/proc/loadavg's running count less this process's threads in
 * state R), and a loop takes as many threads as that leaves of the
 * machine's processors, at most the processors it may run on (its
 * affinity) and the threads asked for, at least one; a change waits until
 * two looks in a row agree, so that a task passing by (the other end of a
 * pipe) does not move it.  A worker that waits for a processor another
 * process holds makes every loop wait for it: on a 2-core machine with one
 * other CPU-bound process, ten backward-Euler steps of the 100^2 cloth took
 * 0.43-0.55 s on 2 spinning threads against 0.25-0.26 s on one
 * (docs/performance.md, The team follows the load).  Every loop computes
 * the same bits on any number of threads, so the choice changes no
 * result. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "ext/ext.h"

/* The tasks running or ready to run besides this process's threads, from
 * the machine's count and this process's running threads, or -1.  When the
 * machine's count less the calling thread leaves asked processors free,
 * the threads need not be looked at.  Else the count is read between two
 * looks at the threads, until both find as many running: while the calling
 * thread looks, a worker can only go to sleep (its spin running out), never
 * wake, so equal looks are the threads the count saw, and a worker that
 * fell asleep during the look does not count as another task
 * (docs/performance.md, The team follows the load).  After 4 unequal pairs
 * (more than a worker a pair) the last look counts, erring towards fewer
 * threads. */
long ts_threads_others(long cpus, int asked, ts_count_fn machine, ts_count_fn own_fn, void *ctx)
{
    long running = machine(ctx);
    if (running < 0)
        return -1;
    if (running - 1 <= cpus - asked)
        return running > 1 ? running - 1 : 0;
    long own = own_fn(ctx);
    for (int pair = 0; pair < 4 && own >= 0; pair++) {
        long again;
        running = machine(ctx);
        if (running < 0 || (again = own_fn(ctx)) < 0)
            return -1;
        if (again == own)
            break;
        own = again;
    }
    return own < 0 ? -1 : running > own ? running - own : 0;
}

#ifdef _OPENMP /* built with OPENMP= (make's variable): no team, the core's loops serial */
#include <dirent.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOOK_EVERY 0.02 /* seconds between looks at the machine */

/* The team's state, kept by the thread that calls the loops (one at a
 * time, as every caller of the library's loops is) */
static struct {
    int asked;  /* threads asked for (set) */
    int active; /* threads the loops take now */
    int want;   /* the last look's choice */
    int follow; /* follow the load (ts_threads_follow_load) */
    long cpus;   /* processors this process may run on (its affinity) */
    long online; /* processors of the machine, whose load /proc/loadavg counts */
    double next_look;
    long loops, fewer; /* loops with more than one thread asked; of them, on fewer */
} team;

static long others_running(long cpus, int asked);
static ts_load_probe probe = others_running; /* ts_threads_load_probe */

/* this thread's piece of [0, n) */
static void piece(size_t n, size_t *i0, size_t *i1)
{
    size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
    size_t q = n / nt, r = n % nt;
    *i0 = t * q + (t < r ? t : r);
    *i1 = *i0 + q + (t < r);
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The first line of file into line; 0, or -1 */
static int first_line(const char *file, char *line, size_t size)
{
    FILE *f = fopen(file, "r");
    int ok = f && fgets(line, (int)size, f);
    if (f)
        fclose(f);
    return ok ? 0 : -1;
}

/* This process's threads running or ready to run, or -1 */
static long own_running(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    struct dirent *e;
    long n = 0;
    while ((e = readdir(d))) {
        char path[300], line[512];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        const char *end = first_line(path, line, sizeof line) ? NULL : strrchr(line, ')');
        n += end && end[1] == ' ' && end[2] == 'R'; /* the state follows the name */
    }
    closedir(d);
    return n;
}

/* /proc/loadavg's count of the machine's tasks running or ready to run,
 * or -1 */
static long machine_running(void *unused)
{
    char line[128];
    long running, total;
    (void)unused;
    if (first_line("/proc/loadavg", line, sizeof line) ||
        sscanf(line, "%*f %*f %*f %ld/%ld", &running, &total) != 2)
        return -1;
    return running;
}

static long own_running_of(void *unused)
{
    (void)unused;
    return own_running();
}

static long others_running(long cpus, int asked)
{
    return ts_threads_others(cpus, asked, machine_running, own_running_of, NULL);
}

/* The processors this process may run on */
static long usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* The threads the next loop takes; every LOOK_EVERY a look at the machine */
static int threads_now(void)
{
    int n = team.asked > 0 ? team.asked : omp_get_max_threads();
    if (n < 2)
        return n;
    int nt = n;
    if (team.follow) {
        double t = seconds();
        if (t >= team.next_look) {
            team.next_look = t + LOOK_EVERY;
            int w = ts_threads_for_load(n, team.online, probe(team.online, n));
            w = w < team.cpus ? w : (int)team.cpus;
            if (w == team.want)
                team.active = w;
            team.want = w;
        }
        nt = team.active > 0 && team.active < n ? team.active : n;
    }
    team.loops++;
    team.fewer += nt < n;
    return nt;
}

static void run_for(size_t n, ts_range_fn fn, void *ctx)
{
    int nt = omp_in_parallel() ? 1 : threads_now();
    if (nt < 2) { /* the one piece [0, n) */
        fn(ctx, 0, n);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        size_t i0, i1;
        piece(n, &i0, &i1);
        if (i0 < i1)
            fn(ctx, i0, i1);
    }
}

static void run_passes(int npass, const size_t *count, ts_pass_fn fn, void *ctx)
{
    int nt = omp_in_parallel() ? 1 : threads_now();
    if (nt < 2) {
        for (int p = 0; p < npass; p++)
            fn(ctx, p, 0, count[p]);
        return;
    }
#pragma omp parallel num_threads(nt)
    for (int p = 0; p < npass; p++) {
        size_t i0, i1;
        piece(count[p], &i0, &i1);
        if (i0 < i1)
            fn(ctx, p, i0, i1);
#pragma omp barrier
    }
}

/* a fresh start: every thread asked for, or one a processor when there are
 * fewer processors, until two looks agree on fewer */
static void restart(int n)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    team.cpus = usable_cpus();
    team.online = online > 0 ? online : team.cpus;
    team.asked = n;
    team.active = team.want = n < team.cpus ? n : (int)team.cpus;
    team.next_look = 0.0;
}

static void set(int n)
{
    omp_set_num_threads(n);
    restart(n);
    team.loops = team.fewer = 0;
}

static int get(void) { return omp_get_max_threads(); }

static void follow(int on)
{
    team.follow = on;
    restart(team.asked > 0 ? team.asked : omp_get_max_threads());
}

static void load_probe(ts_load_probe p) { probe = p ? p : others_running; }

static void usage(long *loops, long *fewer) { *loops = team.loops, *fewer = team.fewer; }

const ts_threads_ops ts_ext_threads = {.set = set,
                                       .get = get,
                                       .run_for = run_for,
                                       .run_passes = run_passes,
                                       .follow = follow,
                                       .usage = usage,
                                       .load_probe = load_probe};
#endif

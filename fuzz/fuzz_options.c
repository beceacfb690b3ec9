/* libFuzzer harness: the command dispatcher (tstep_main, src/cli/tstep_main.c)
 * and every command's option parsing, run as `tstep ARGS`.
 *
 * Input: the arguments after "tstep", separated by newline or NUL bytes
 * (fuzz/corpus/options/ has command lines from the README and the tests).
 * The harness runs in a fresh temporary directory (files the commands write
 * stay there), with standard output to /dev/null, no display, no gnuplot.
 * It keeps computations short without changing tstep: inputs with a path
 * ('/'), '..' or a number of four or more digits are skipped (a cloth of
 * 999 x 999 is the largest), and an interval timer sets ts_stop_signal
 * after 0.3 s, which stops run, sweep and stability as SIGINT would. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include "tstep/run.h"
#include "tstep/tstep.h"

static void on_alarm(int sig) { ts_stop_signal = sig; }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    char dir[] = "/tmp/tstep-fuzz-XXXXXX";
    if (!mkdtemp(dir) || chdir(dir) != 0)
        abort();
    setenv("GNUPLOT", "/nonexistent/gnuplot", 1);
    setenv("TSTEP_PROGRESS", "0", 1);
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    if (!freopen("/dev/null", "w", stdout))
        abort();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    return 0;
}

static int skipped(const char *arg)
{
    if (strchr(arg, '/') || strstr(arg, ".."))
        return 1;
    for (int digits = 0; *arg; arg++)
        if ((digits = *arg >= '0' && *arg <= '9' ? digits + 1 : 0) >= 4)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_ARGS = 64 };
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "tstep";
    for (size_t i = 0, start = 0; i <= size && argc <= MAX_ARGS; i++)
        if (i == size || buf[i] == '\n' || buf[i] == '\0') {
            buf[i] = '\0';
            argv[argc++] = buf + start;
            if (skipped(buf + start)) {
                free(buf);
                return 0;
            }
            start = i + 1;
        }
    argv[argc] = NULL;
    ts_stop_signal = 0;
    struct itimerval tv = {{0, 0}, {0, 300000}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &tv, NULL);
    tstep_main(argc, argv, NULL, NULL);
    setitimer(ITIMER_REAL, &off, NULL);
    ts_stop_signal = 0;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    fflush(stdout);
    free(buf);
    return 0;
}

/* The option tables (src/cli/cli.c, cli_options): unknown options, ambiguous
 * prefixes, missing values, values past their type, repeatable options kept
 * in order, the shared options accepted where declared; and a stop signal
 * during stability's spectrum (before anything is written). */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tests.h"
#include "json_valid.h"
#include "tstep/check.h"
#include "tstep/grade.h"
#include "tstep/phase.h"
#include "tstep/stability.h"

static char out[1 << 16], err[1 << 14];

/* --- the parser ------------------------------------------------------------------ */

static const struct {
    const char *args;
    int code;
    const char *needle; /* in stderr */
} parsed[] = {
    /* unknown, for each kind of command */
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --frobnicate 1", 2,
     "unrecognized option or missing value: '--frobnicate'"},
    {"phase --stepper rk4 --system test1d", 2, "unrecognized option or missing value: '--system'"},
    {"list --dt 1", 2, "unrecognized option or missing value: '--dt'"},
    {"grade --stepper rk4 --param k=1", 2, "unrecognized option or missing value: '--param'"},
    {"run -x", 2, "invalid option or missing value: '-x'"},
    /* ambiguous prefixes name every candidate */
    {"run --system test1d --stepper rk4 --dt 0.1 --step 2", 2,
     "ambiguous option '--step': it could be --stepper, --steps"},
    {"stability --system test1d --stepper rk4 --at 1", 2,
     "ambiguous option '--at': it could be --at-time, --at-dt, --at-stepper"},
    {"sweep --system test1d --stepper rk4 --dt-m 0.1", 2,
     "ambiguous option '--dt-m': it could be --dt-min, --dt-max"},
    /* an unambiguous prefix is the option */
    {"run --system test1d --stepper rk4 --dt 0.1 --ste 2", 2, "ambiguous option '--ste'"},
    {"run --sys test1d --stepp rk4 --dt 0.1 --t-e 0.2 --out /dev/null", 0, NULL},
    /* missing values, values given to flags */
    {"run --system test1d --stepper rk4 --steps 2 --dt", 2, "--dt needs a value"},
    {"stability --system test1d --stepper rk4 --newton-max", 2, "--newton-max needs a value"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 2 --plot=yes", 2,
     "--plot takes no value: '--plot=yes'"},
    /* ints against their type, on every command that takes them */
    {"run --system test1d --stepper backward-euler --dt 0.1 --steps 2 --newton-max 2147483648", 2,
     "--newton-max: '2147483648' is more than 2147483647"},
    {"stability --system test1d --stepper rk4 --newton-max 2147483648", 2,
     "--newton-max: '2147483648' is more than 2147483647"},
    {"phase --stepper rk4 --cg-max 2147483648", 2, "--cg-max: '2147483648' is more than 2147483647"},
    {"amplification --stepper rk4 --newton-max 0", 2, "--newton-max: '0' must be at least 1"},
    {"region --stepper rk4 --threads 4097", 2, "--threads: '4097' is more than 4096"},
    {"sweep --system test1d --stepper rk4 --levels 1x", 2, "--levels: '1x' is not a whole number"},
    {"grade --stepper rk4 --order 21", 2, "--order: '21' is more than 20"},
    {"check-system --system string --seed -1", 2, "--seed: '-1' must be at least 0"},
    /* numbers, choices and the checks of the shared options */
    {"run --system test1d --stepper rk4 --dt 1e999 --steps 1", 2, "--dt: '1e999' is not a finite number"},
    {"stability --system test1d --stepper rk4 --bound 0.5", 2, "--bound: '0.5' must be greater than 1"},
    {"stability --system test1d --stepper rk4 --bound -1", 2, "--bound: '-1' must be greater than 0"},
    {"stability --system test1d --stepper rk4 --eig qr", 2,
     "--eig: 'qr' is not one of auto, dense, arnoldi"},
    {"sweep --system test1d --norm l2", 2, "--norm: 'l2' is not scaled, state or positions"},
    {"region --stepper rk4 --plane w", 2, "--plane: 'w' is not one of z, oscillator"},
    {"list --format yaml", 2, "--format: 'yaml' is not text or json"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --cg-tol 1", 2,
     "--cg-tol must be below 1 (a relative residual), got '1'"},
    {"sweep --system test1d --precond none", 2, "--precond: unknown preconditioner 'none'"},
    /* tolerances that double precision cannot reach; numbers only as decimals */
    {"run --system test1d --stepper backward-euler --dt 0.1 --steps 1 --cg-tol 1e-17", 2,
     "--cg-tol: '1e-17' is below 2.22e-16, the unit roundoff of double precision"},
    {"sweep --system test1d --newton-tol 1e-320", 2,
     "--newton-tol: '1e-320' is below 2.22e-16, the unit roundoff of double precision"},
    {"run --system test1d --stepper backward-euler --dt 0.1 --steps 1 --newton-tol 2.3e-16", 0,
     NULL},
    {"run --system test1d --stepper rk4 --dt 0x1p-4 --steps 1 --out /dev/null", 0, NULL},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 0x10", 2,
     "--steps: '0x10' is not a whole number"},
    {"run --system test1d --stepper rk4 --dt ' 0.1' --steps 1", 2,
     "--dt: ' 0.1' is not a finite number"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps ' 1'", 2,
     "--steps: ' 1' is not a whole number"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --param 'k= 2'", 2,
     "parameter 'k': ' 2' is not a finite number"},
    {"run --system test1d --stepper rk4 --dt 1e-400 --steps 1", 2,
     "--dt: '1e-400' must be greater than 0"},
    {"run --system test1d --stepper rk4 --dt -1.5e-3 --steps 1", 2,
     "--dt: '-1.5e-3' must be greater than 0"},
    /* --precond with a solver that takes none, in either order */
    {"run --system test1d --stepper backward-euler --dt 0.1 --steps 1 --linear-solver direct "
     "--precond jacobi",
     2, "--precond jacobi: the linear solver 'direct' uses no preconditioner"},
    {"sweep --system test1d --precond amg --linear-solver direct", 2,
     "--precond amg: the linear solver 'direct' uses no preconditioner"},
    /* runs of more than 1e9 steps, whichever options make them */
    {"sweep --system oscillator --stepper forward-euler --levels 3 --dt-min 1e-300 --dt-max "
     "1e-3",
     2, "forward-euler: t_end 1 / dt 1e-300 is more than 1e9 steps"},
    {"sweep --system oscillator --stepper rk4 --t-end 1e9 --levels 2", 2,
     "rk4: t_end 1e+09 / dt 0.03125 is more than 1e9 steps"},
    {"sweep --system string --stepper rk4 --levels 2 --reference-dt 1e-300", 2,
     "--reference-dt 1e-300: t_end 0.0680096 / it is more than 1e9 steps"},
    {"sweep --system string --stepper rk4 --levels 2 --reference-dt 1", 2,
     "--reference-dt 1 is larger than t_end 0.0680096"},
    {"stability --system string --param n=5 --stepper rk4 --at-time 1e300 --at-dt 1e-3", 2,
     "--at-time 1e+300 / --at-dt 0.001 is more than 1e9 steps"},
    /* the run to --at-time diverges: no state to linearize at */
    {"stability --system string --param n=5 --stepper rk4 --at-time 2 --at-dt 0.02 "
     "--at-stepper forward-euler",
     1, "the run with forward-euler failed at step 17 (t = 0.32)"},
    /* region: each plane's options, not the other's (they were ignored) */
    {"region --stepper rk4 --hw-max 3", 2, "--hw-max/--zeta-min/--zeta-max are for --plane "
                                           "oscillator"},
    {"region --stepper rk4 --plane oscillator --im-max 2", 2,
     "--re-min/--re-max/--im-min/--im-max are for --plane z"},
    /* --at-stepper alone would be ignored */
    {"stability --system test1d --stepper rk4 --at-stepper midpoint", 2,
     "--at-stepper is only used with --at-time"},
    /* stepper lists: no empty names, no name twice */
    {"amplification --stepper rk4,,midpoint --points 2", 2,
     "--stepper: an empty name in 'rk4,,midpoint'"},
    {"sweep --system test1d --stepper rk4,", 2, "--stepper: an empty name in 'rk4,'"},
    {"stability --system test1d --stepper rk4,midpoint,rk4", 2, "--stepper: 'rk4' given twice"},
    /* a stepper that carries state: the map a run iterates is shown, said */
    {"amplification --stepper bdf2,rk4 --z-max 1 --points 2 --out /dev/null", 0,
     "note: bdf2 carries state between steps"},
    {"region --stepper bdf2 --re-min -0.5 --re-max 0 --im-min 0 --im-max 0.5 --step 0.5 "
     "--out /dev/null",
     0, "note: bdf2 carries state between steps"},
    /* an explicit stepper says that the solver's options do nothing */
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --cg-tol 1e-3 --out /dev/null", 0,
     "note: rk4 is explicit: the implicit solver's options"},
    /* --stats names what was chosen and why */
    {"run --system string --stepper backward-euler --dt 0.1 --steps 1 --linear-solver cg "
     "--stats --out /dev/null",
     0, "linear solver cg/jacobi (the solver as given, jacobi the default)"},
    {"phase --stepper rk4 --linear-solver lu", 2, "--linear-solver: unknown solver 'lu'"},
    {"phase --stepper rk4 --format frames", 2, "--format: phase writes dat, csv or json, not frames"},
    {"amplification --stepper rk4 --format frames", 2, "--format: amplification writes dat, csv or json, not frames"},
    {"region --stepper rk4 --format npy", 2, "--format: region writes dat, csv or json, not npy"},
    /* a single-valued option given twice: both values named, not the last kept */
    {"run --system test1d --stepper rk4 --dt 0.1 --dt 0.2 --steps 1", 2,
     "--dt given twice ('0.1' and '0.2')"},
    {"run --system test1d --system oscillator --stepper rk4 --dt 0.1 --steps 1", 2,
     "--system given twice ('test1d' and 'oscillator')"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --out o1 --out o2", 2,
     "--out given twice ('o1' and 'o2')"},
    {"run --system test1d --stepper rk4 --dt 0.1 --steps 1 --stats --stats --out /dev/null", 2,
     "--stats given twice"},
    {"--version extra", 2, "--version takes no argument ('extra')"},
    /* positional arguments */
    {"region --stepper rk4 extra", 2, "unexpected argument 'extra'"},
    {"list extra", 2, "unexpected argument 'extra'"},
    /* an option where a value belongs: the option missing its value named */
    {"run --system oscillator --stepper --dt 0.1 --t-end 1", 2,
     "--stepper needs a value (got the option '--dt')"},
    {"sweep --system --stepper rk4", 2, "--system needs a value (got the option '--stepper')"},
    /* --help and -h print the help and nothing else */
    {"check-system -h", 0, NULL},
};

START_TEST(option_table_parsing)
{
    EXPECT(parsed[_i].args, parsed[_i].code, parsed[_i].needle);
    if (parsed[_i].code == 2)
        ck_assert_msg(strstr(err, "Try 'tstep "), "tstep %s: %s", parsed[_i].args, err);
}
END_TEST

/* --param is repeatable and applied in order: the last of two values of one
 * key wins, whichever it is */
START_TEST(param_order_kept)
{
    EXPECT("run --system oscillator --param k=4 --param k=9 --stepper rk4 --dt 0.5 --steps 1 "
           "--format csv",
           0, NULL);
    char first[sizeof out];
    snprintf(first, sizeof first, "%s", out);
    EXPECT("run --system oscillator --param k=9 --stepper rk4 --dt 0.5 --steps 1 --format csv", 0,
           NULL);
    ck_assert_str_eq(first, out);
    EXPECT("run --system oscillator --param k=9 --param k=4 --stepper rk4 --dt 0.5 --steps 1 "
           "--format csv",
           0, NULL);
    ck_assert_str_ne(first, out);
    /* one step of rk4 on x'' = -k x from (1, 0), h = 1/2: x1 = 1 - z/2 + z^2/24 with
     * z = k h^2 (the Taylor polynomial of cos to degree 4 in w h) */
    double z = 4 * 0.25, x1 = 1 - z / 2 + z * z / 24;
    const char *row = strchr(out, '\n');
    ck_assert_ptr_nonnull(row);
    row = strchr(row + 1, '\n'); /* past the row at t = 0 */
    ck_assert_ptr_nonnull(row);
    double t, x;
    ck_assert_int_eq(sscanf(row + 1, "%lf,%lf", &t, &x), 2);
    ck_assert_msg(t == 0.5 && fabs(x - x1) < 1e-15, "t %g x %.17g, want %.17g", t, x, x1);
    /* too many */
    char args[8192] = "run --system oscillator --stepper rk4 --dt 0.5 --steps 1";
    for (int i = 0; i < 200; i++)
        strcat(args, " --param k=1");
    EXPECT(args, 2, "too many --param options");
}
END_TEST

/* the help texts are the commands' own: their first line */
static const struct {
    const char *cmd, *usage;
} helps[] = {
    {"run", "Usage: tstep run "},        {"sweep", "Usage: tstep sweep "},
    {"stability", "Usage: tstep stability "}, {"amplification", "Usage: tstep amplification "},
    {"region", "Usage: tstep region "},  {"phase", "Usage: tstep phase "},
    {"check-system", "Usage: tstep check-system"}, {"grade", "Usage: tstep grade"},
    {"list", "Usage: tstep list "},
};

START_TEST(help_from_the_table)
{
    char args[128];
    snprintf(args, sizeof args, "%s --help --no-such-option", helps[_i].cmd);
    EXPECT(args, 0, NULL); /* --help first: the help, whatever follows */
    ck_assert_msg(strncmp(out, helps[_i].usage, strlen(helps[_i].usage)) == 0, "%s", out);
    ck_assert_str_eq(err, "");
}
END_TEST

/* "--name" in text, not followed by more of an option name */
static int mentions(const char *text, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
        char c = p[len];
        if (!(c == '-' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return 1;
    }
    return 0;
}

/* Every option the command accepts is in its --help: each "--name" that any
 * command's help mentions is tried on this command alone, and where the
 * parser knows it (anything but "unrecognized" or "ambiguous": a missing
 * value, a missing --system, ...) this command's help must name it. */
START_TEST(help_lists_every_option)
{
    static char all[1 << 17];
    static char help[1 << 16];
    size_t used = 0;
    for (size_t c = 0; c < sizeof helps / sizeof *helps; c++) {
        char args[64];
        snprintf(args, sizeof args, "%s --help", helps[c].cmd);
        EXPECT(args, 0, NULL);
        size_t len = strlen(out);
        ck_assert_uint_lt(used + len + 1, sizeof all);
        memcpy(all + used, out, len + 1);
        used += len;
        if ((int)c == _i)
            snprintf(help, sizeof help, "%s", out);
    }
    int tried = 0;
    static char seen[1 << 14] = " ";
    for (const char *p = strstr(all, "--"); p; p = strstr(p + 2, "--")) {
        char name[64], key[68];
        size_t len = 2;
        while (len < sizeof name - 1 &&
               (p[len] == '-' || (p[len] >= 'a' && p[len] <= 'z') || (p[len] >= '0' && p[len] <= '9')))
            len++;
        if (len < 3 || p[2] < 'a' || p[2] > 'z')
            continue;
        memcpy(name, p, len);
        name[len] = '\0';
        snprintf(key, sizeof key, " %s ", name);
        if (strstr(seen, key))
            continue; /* tried already */
        ck_assert_uint_lt(strlen(seen) + len + 2, sizeof seen);
        strcat(seen, key + 1);
        char args[128];
        snprintf(args, sizeof args, "%s %s </dev/null", helps[_i].cmd, name);
        int rc = cli_run(args, out, sizeof out, err, sizeof err);
        tried++;
        if (strstr(err, "unrecognized option") || strstr(err, "ambiguous option"))
            continue;
        ck_assert_msg(mentions(help, name), "tstep %s accepts %s (exit %d: %s) but its --help does not list it",
                      helps[_i].cmd, name, rc, err);
    }
    ck_assert_int_gt(tried, 50);
}
END_TEST

/* The options section is written from the table: every line within 79
 * columns, each entry "  --name [ARG]" at the start of a line with its text
 * beside it or on the next line (24 columns in), every option once. */
START_TEST(help_options_section)
{
    char args[64];
    snprintf(args, sizeof args, "%s --help", helps[_i].cmd);
    EXPECT(args, 0, NULL);
    const char *opts = strstr(out, "\nOptions:\n");
    ck_assert_msg(opts, "tstep %s --help has no Options section", helps[_i].cmd);
    int entries = 0;
    for (const char *line = out; *line;) {
        size_t len = strcspn(line, "\n");
        ck_assert_msg(len <= 79, "tstep %s --help: a line of %zu columns: %.*s", helps[_i].cmd,
                      len, (int)len, line);
        const char *next = line + len + (line[len] == '\n');
        if (line > opts && strncmp(line, "  --", 4) == 0) {
            size_t name = strcspn(line + 2, " \n");
            char key[80];
            snprintf(key, sizeof key, "\n%.*s ", (int)(name + 2), line);
            ck_assert_msg(!strstr(next - 1, key), "tstep %s --help lists %s twice", helps[_i].cmd,
                          key + 1);
            int beside = len > 24 && line[23] == ' ' && line[24] != ' ';
            int below = strncmp(next, "                        ", 24) == 0 && next[24] != ' ';
            ck_assert_msg(beside || below, "tstep %s --help: %.*s has no text", helps[_i].cmd,
                          (int)len, line);
            entries++;
        }
        line = next;
    }
    ck_assert_int_ge(entries, 3);
}
END_TEST

/* The defaults the help states are the values the command starts from:
 * printed before any option is read, so a value given does not show. */
START_TEST(help_states_the_defaults)
{
    char want[128];
    ts_jacobian_check_options jc = ts_default_jacobian_check_options();
    EXPECT("check-system --samples 9 --tol 0.5 --help", 0, NULL);
    snprintf(want, sizeof want, "random states (default %d,", jc.samples);
    ck_assert_msg(strstr(out, want), "no '%s' in %s", want, out);
    ck_assert_msg(jc.tol == 1e-6 && strstr(out, "accepted (default 1e-6)"), "%s", out);
    EXPECT("phase --newton-tol 1e-3 --help", 0, NULL);
    ck_assert_msg(strstr(out, "(default 1e-13 here;"), "%s", out);
    ck_assert_msg(strstr(out, "(default: 1e-14 here)"), "%s", out);
    EXPECT("run --help", 0, NULL);
    snprintf(want, sizeof want, "Newton's iteration cap per step (default %d)",
             ts_default_solver_options().newton_max);
    ck_assert_msg(strstr(out, want), "no '%s' in %s", want, out);
    ck_assert_msg(strstr(out, "(default 1e-8; at least"), "%s", out);
    EXPECT("grade --help", 0, NULL);
    snprintf(want, sizeof want, "seconds per check (default %d)", TS_GRADE_TIME_LIMIT);
    ck_assert_msg(strstr(out, want), "no '%s' in %s", want, out);
    snprintf(want, sizeof want, "(default %d MB)", TS_GRADE_MEMORY_LIMIT);
    ck_assert_msg(strstr(out, want), "no '%s' in %s", want, out);
}
END_TEST

/* --- a stop signal during stability's spectrum -------------------------------------- */

/* 1 once process pid runs tstep and catches signal sig (its command name and
 * SigCgt mask in /proc): the forked child inherits the test's handlers
 * until it calls exec */
static int catches(pid_t pid, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    int tstep = 0, yes = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "Name:", 5) == 0)
            tstep = strcmp(line, "Name:\ttstep\n") == 0;
        if (strncmp(line, "SigCgt:", 7) == 0)
            yes = (strtoull(line + 7, NULL, 16) >> (sig - 1)) & 1;
    }
    if (f)
        fclose(f);
    return tstep && yes;
}

/* Once child pid runs tstep with its handler for sig installed, wait
 * `delay` more, send sig, reap the child and read its standard error (the
 * file errp) into err; returns the wait status */
static int signal_tstep(pid_t pid, int sig, struct timespec delay, const char *errp)
{
    struct timespec tick = {0, 1000000};
    for (int i = 0; i < 60000 && !catches(pid, sig); i++)
        nanosleep(&tick, NULL);
    nanosleep(&delay, NULL);
    kill(pid, sig);
    /* stopped within a minute, or killed and failed (not a hanging test) */
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 6000 && (done = waitpid(pid, &status, WNOHANG)) == 0; i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ck_abort_msg("tstep still running a minute after signal %d", sig);
    }
    ck_assert_int_eq(done, pid);
    FILE *f = fopen(errp, "r");
    size_t n = f ? fread(err, 1, sizeof err - 1, f) : 0;
    err[n] = '\0';
    if (f)
        fclose(f);
    return status;
}

/* Start `tstep ARGS...` (NULL-terminated) with its standard error in the
 * file errp and signal sig at its default action until tstep installs its
 * handler; returns the child's pid. */
static pid_t start_tstep(const char *errp, int sig, char *const argv[])
{
    char line[1024] = "";
    for (int i = 0; argv[i]; i++) /* the command line, for a hand-out's skips */
        snprintf(line + strlen(line), sizeof line - strlen(line), " %s", argv[i]);
    tests_check_command(line);
    int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        dup2(fd, STDERR_FILENO);
        signal(sig, SIG_DFL);
        execv(TSTEP_BIN, argv);
        _exit(127);
    }
    close(fd);
    return pid;
}

START_TEST(stability_stopped_in_the_spectrum)
{
    int sig = _i ? SIGTERM : SIGINT, want = 128 + sig;
    char errp[] = "/tmp/tstep-options-XXXXXX";
    int fd = mkstemp(errp);
    ck_assert_int_ge(fd, 0);
    close(fd);
    /* ARPACK on a 60 x 60 cloth: seconds of Jacobian products */
    char *argv[] = {"tstep", "stability", "--system", "cloth", "--param", "nx=60", "--param",
                    "ny=60", "--stepper", "rk4", "--eig", "arnoldi", "--out", "/dev/null", NULL};
    pid_t pid = start_tstep(errp, sig, argv);
    /* the signal once the handler is there (it is there before the spectrum) */
    int status = signal_tstep(pid, sig, (struct timespec){0, 0}, errp);
    remove(errp);
    ck_assert_msg(WIFEXITED(status), "ended by signal %d: %s", WTERMSIG(status), err);
    ck_assert_msg(WEXITSTATUS(status) == want, "exit %d, want %d: %s", WEXITSTATUS(status), want,
                  err);
    ck_assert_msg(strstr(err, sig == SIGINT ? "stopped by SIGINT" : "stopped by SIGTERM") &&
                      strstr(err, "before the measurements") && strstr(err, "nothing written"),
                  "%s", err);
}
END_TEST

/* A signal inside a step that would not end soon (Newton to a tolerance
 * it cannot reach, with a cap of two billion iterations; or one CG solve of
 * tens of thousands of iterations: Jacobi on the 300 x 300 cloth to 1e-12):
 * the step is abandoned, the outputs end at the step before it, and the
 * exit status is the signal's. */
START_TEST(run_stopped_inside_a_step)
{
    char dir[] = "/tmp/tstep-instep-XXXXXX", outp[256], errp[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(outp, sizeof outp, "%s/o.dat", dir);
    snprintf(errp, sizeof errp, "%s/err.txt", dir);
    char *newton[] = {"tstep", "run", "--system", "string", "--stepper", "backward-euler",
                      "--dt", "0.1", "--steps", "3", "--newton-tol", "3e-16", "--newton-max",
                      "2000000000", "--out", outp, NULL};
    char *cg[] = {"tstep", "run", "--system", "cloth", "--param", "nx=300", "--param",
                  "ny=300", "--stepper", "backward-euler-linear", "--dt", "0.1", "--steps",
                  "3", "--cg-tol", "1e-12", "--precond", "jacobi", "--out", outp, NULL};
    pid_t pid = start_tstep(errp, SIGTERM, _i == 0 ? newton : cg);
    int status = signal_tstep(pid, SIGTERM, (struct timespec){1, 0}, errp);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM, "status %d: %s",
                  status, err);
    ck_assert_msg(strstr(err, "stopped by SIGTERM; step 0 of 3, t = 0: every output ends there"),
                  "%s", err);
    /* the header and the row at t = 0, complete (lines of any length) */
    FILE *f = fopen(outp, "r");
    ck_assert_ptr_nonnull(f);
    int rows = 0, c, prev = '\n', second = 0;
    while ((c = fgetc(f)) != EOF) {
        if (prev == '\n' && c != '#') {
            rows++;
            ck_assert_int_eq(c, '0'); /* t = 0 */
            second = 1;
        } else if (second) {
            ck_assert_int_eq(c, ' ');
            second = 0;
        }
        prev = c;
    }
    fclose(f);
    ck_assert_int_eq(prev, '\n');
    ck_assert_int_eq(rows, 1);
    remove(outp);
    remove(errp);
    rmdir(dir);
}
END_TEST

/* a stop signal while sweep computes its reference (rk4 from 1e-9 on the
 * string: minutes): exit 143, nothing written */
START_TEST(sweep_stopped_in_its_reference)
{
    char errp[] = "/tmp/tstep-options-XXXXXX";
    int fd = mkstemp(errp);
    ck_assert_int_ge(fd, 0);
    close(fd);
    char *argv[] = {"tstep", "sweep", "--system", "string", "--levels", "3", "--stepper", "rk4",
                    "--reference-dt", "1e-9", "--out", "/dev/null", NULL};
    pid_t pid = start_tstep(errp, SIGTERM, argv);
    int status = signal_tstep(pid, SIGTERM, (struct timespec){0, 500000000}, errp);
    remove(errp);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM, "status %d: %s",
                  status, err);
    ck_assert_msg(strstr(err, "stopped by SIGTERM; while computing the reference solution"),
                  "%s", err);
}
END_TEST

/* a stop signal during region's grid: the rows computed so far, complete */
START_TEST(region_stopped_in_the_grid)
{
    char dir[] = "/tmp/tstep-region-XXXXXX", outp[256], errp[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(outp, sizeof outp, "%s/r.dat", dir);
    snprintf(errp, sizeof errp, "%s/err.txt", dir);
    /* every stepper on 1.6 million points: minutes */
    char *argv[] = {"tstep", "region", "--stepper", "all", "--re-min", "-60", "--re-max", "3",
                    "--im-min", "-60", "--im-max", "60", "--step", "0.06", "--out", outp, NULL};
    pid_t pid = start_tstep(errp, SIGINT, argv);
    /* some rows first */
    int status = signal_tstep(pid, SIGINT, (struct timespec){0, 300000000}, errp);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 130, "status %d: %s", status,
                  err);
    ck_assert_msg(strstr(err, "stopped by SIGINT") && strstr(err, "rows"), "%s", err);
    /* every line of the output complete: a name and three numbers, or blank, or a comment */
    FILE *f = fopen(outp, "r");
    ck_assert_ptr_nonnull(f);
    char line[256];
    long lines = 0;
    while (fgets(line, sizeof line, f)) {
        ck_assert_msg(strchr(line, '\n') != NULL, "cut line: %s", line);
        char name[64];
        double a, b, c;
        ck_assert_msg(line[0] == '#' || line[0] == '\n' ||
                          sscanf(line, "%63s %lf %lf %lf", name, &a, &b, &c) == 4,
                      "line %ld: %s", lines + 1, line);
        lines++;
    }
    fclose(f);
    ck_assert_int_gt(lines, 1);
    remove(outp);
    remove(errp);
    rmdir(dir);
}
END_TEST

/* Every command reports a failed write to standard output (exit 2); a
 * plugin is a file, never a library searched for; two outputs of one run
 * are two files. */
START_TEST(write_errors_plugins_and_outputs)
{
    static const char *const to_full[] = {"list", "check-system --system test1d", "--version",
                                          "--help", "list --format json"};
    char cmd[512], dir[] = "/tmp/tstep-check-out-XXXXXX";
    for (size_t i = 0; i < sizeof to_full / sizeof *to_full; i++) {
        snprintf(cmd, sizeof cmd, "%s %s >/dev/full 2>/dev/null", TSTEP_BIN, to_full[i]);
        int st = system(cmd);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "tstep %s >/dev/full: status %d",
                      to_full[i], st);
    }
    EXPECT("--plugin libm.so.6 list", 2, "libm.so.6: no such file here");
    /* grade opens its plugins in a worker: the same refusal, naming the file */
    EXPECT("grade --plugin ./tstep-no-such.so --stepper ralston --order 2", 2,
           "--plugin ./tstep-no-such.so: No such file");
    EXPECT("--plugin ./tstep-no-such.so grade --stepper ralston --order 2", 2,
           "--plugin ./tstep-no-such.so: No such file");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "run --system test1d --stepper rk4 --dt 0.1 --steps 2 --out %s/o1 --error %s/o1",
             dir, dir);
    EXPECT(cmd, 2, "the same file");
    snprintf(cmd, sizeof cmd,
             "run --system oscillator --stepper rk4 --dt 0.1 --steps 2 --out %s/a "
             "--diagnostics %s/b --error %s/b",
             dir, dir, dir);
    EXPECT(cmd, 2, "--diagnostics");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The text of the file dir/name (at most size - 1 bytes) into buf. */
static const char *file_text(const char *dir, const char *name, char *buf, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A table's format: --format's, else the extension of --out's file; json
 * numbers read back as exactly the computed ones. */
START_TEST(table_format_by_option_or_extension)
{
    char dir[] = "/tmp/tstep-check-table-XXXXXX", cmd[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    EXPECT("phase --stepper rk4 --points 3 --format json", 0, NULL);
    ck_assert_msg(json_valid(out, NULL), "not JSON: %s", out);
    const char *p = strstr(out, "\"rows\": [");
    ck_assert_ptr_nonnull(p);
    p += 9;
    for (int row = 1; row <= 3; row++) {
        double want[5], a, g, wh = (double)row;
        ck_assert_int_eq(ts_phase_response(&ts_rk4, NULL, wh, &a, &g), TS_OK);
        want[0] = wh, want[1] = a, want[2] = g, want[3] = g - wh, want[4] = a - 1.0;
        for (int c = 0; c < 5; c++) {
            p += strcspn(p, "-0123456789");
            char *end;
            double got = strtod(p, &end);
            ck_assert_msg(got == want[c], "row %d column %d: %.17g, want %.17g", row, c, got,
                          want[c]);
            p = end;
        }
    }
    /* amplification through the same writers: R(-z) of rk4 at z = 0, 2, 4 */
    EXPECT("amplification --stepper rk4 --points 3 --format json", 0, NULL);
    ck_assert_msg(json_valid(out, NULL), "not JSON: %s", out);
    p = strstr(out, "\"rows\": [");
    ck_assert_ptr_nonnull(p);
    p += 9;
    for (int row = 0; row < 3; row++) {
        double z = 2.0 * row, re, im;
        ck_assert_int_eq(ts_amplification(&ts_rk4, NULL, -z, 0.0, &re, &im), TS_OK);
        double want[4] = {z, re, im, hypot(re, im)};
        for (int c = 0; c < 4; c++) {
            p += strcspn(p, "-0123456789");
            char *end;
            double got = strtod(p, &end);
            ck_assert_msg(got == want[c], "amplification row %d column %d: %.17g, want %.17g",
                          row, c, got, want[c]);
            p = end;
        }
    }
    /* region through the same writers: |R(z)| of rk4 on the grid Re z in
     * {-2, 0}, Im z in {0, 2}, Re z the outer loop as in dat */
    EXPECT("region --stepper rk4 --re-min -2 --re-max 0 --im-min 0 --im-max 2 --step 2 "
           "--format json",
           0, NULL);
    ck_assert_msg(json_valid(out, NULL) && json_count(out, "\"command\": \"region\"") == 1,
                  "not region's JSON: %s", out);
    p = strstr(out, "\"rows\": [");
    ck_assert_ptr_nonnull(p);
    p += 9;
    for (int row = 0; row < 4; row++) {
        double re = -2.0 + 2.0 * (row / 2), im = 2.0 * (row % 2), rr, ri;
        ck_assert_int_eq(ts_amplification(&ts_rk4, NULL, re, im, &rr, &ri), TS_OK);
        double want[3] = {re, im, hypot(rr, ri)};
        for (int c = 0; c < 3; c++) {
            p += strcspn(p, "-0123456789");
            char *end;
            double got = strtod(p, &end);
            ck_assert_msg(fabs(got - want[c]) <= 1e-15 * fabs(want[c]),
                          "region row %d column %d: %.17g, want %.17g", row, c, got, want[c]);
            p = end;
        }
    }
    snprintf(cmd, sizeof cmd, "region --stepper rk4 --step 1 --out %s/r.csv", dir);
    EXPECT(cmd, 0, NULL);
    char text[1024];
    ck_assert_int_eq(strncmp(file_text(dir, "r.csv", text, sizeof text),
                             "stepper,re_z,im_z,abs_R\n", 24),
                     0);
    snprintf(cmd, sizeof cmd, "phase --stepper rk4 --points 2 --out %s/p.csv", dir);
    EXPECT(cmd, 0, NULL);
    const char *head = "stepper,wh,abs_R,arg_R,phase_error,amplitude_error\n";
    ck_assert_int_eq(strncmp(file_text(dir, "p.csv", text, sizeof text), head, strlen(head)), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* check-system --out and list --out: the report in the file, the same
 * bytes as on standard output; json there too */
START_TEST(check_system_out)
{
    char dir[] = "/tmp/tstep-check-out-XXXXXX", cmd[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    EXPECT("check-system --system string --param n=4 --samples 1", 0, NULL);
    char *stdout_text = strdup(out);
    snprintf(cmd, sizeof cmd, "check-system --system string --param n=4 --samples 1 --out %s/r",
             dir);
    EXPECT(cmd, 0, NULL);
    ck_assert_str_eq(out, "");
    static char text[1 << 14];
    ck_assert_str_eq(file_text(dir, "r", text, sizeof text), stdout_text);
    free(stdout_text);
    snprintf(cmd, sizeof cmd,
             "check-system --system string --param n=4 --samples 1 --format json --out %s/r", dir);
    EXPECT(cmd, 0, NULL);
    file_text(dir, "r", text, sizeof text);
    ck_assert_msg(json_valid(text, NULL), "not JSON: %s", text);
    ck_assert_int_eq(json_count(text, "\"passed\": true"), 1);
    EXPECT("check-system --system test1d --out /dev/full", 2, "error writing '/dev/full'");
    /* list too: the same bytes to --out as to standard output */
    EXPECT("list", 0, NULL);
    stdout_text = strdup(out);
    snprintf(cmd, sizeof cmd, "list --out %s/l", dir);
    EXPECT(cmd, 0, NULL);
    ck_assert_str_eq(file_text(dir, "l", text, sizeof text), stdout_text);
    free(stdout_text);
    EXPECT("list --out /dev/full", 2, "error writing '/dev/full'");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* run --format json: the trajectory's rows, number for number the csv's
 * (both write the shortest decimals that read back exactly; nan as null),
 * the columns in the same order; a --diagnostics FILE.json holds the csv
 * diagnostics' columns and rows (energies to their 15 printed digits). */
static int read_numbers(const char *p, double *v, int max)
{
    int n = 0;
    while (*p && n < max) {
        if (strncmp(p, "null", 4) == 0 || strncmp(p, "nan", 3) == 0) {
            v[n++] = NAN, p += *p == 'n' && p[1] == 'u' ? 4 : 3;
            continue;
        }
        if (isdigit((unsigned char)*p) || *p == '-') {
            char *end;
            v[n++] = strtod(p, &end);
            p = end;
            continue;
        }
        p++;
    }
    return n;
}

START_TEST(run_json_matches_csv)
{
    static char csv[1 << 14];
    char dir[] = "/tmp/tstep-check-runjson-XXXXXX", cmd[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *args = "run --system string --param n=3 --stepper verlet --dt 0.01 --steps 6 "
                       "--every 2 --stats";
    snprintf(cmd, sizeof cmd, "%s --format csv --diagnostics %s/d.csv", args, dir);
    EXPECT(cmd, 0, NULL);
    memcpy(csv, out, sizeof csv);
    snprintf(cmd, sizeof cmd, "%s --out %s/t.json --diagnostics %s/d.json", args, dir, dir);
    EXPECT(cmd, 0, NULL);
    /* the csv: its header row, then 4 rows of 25 columns (t, 9 x, 9 v, energy,
     * 5 statistics) */
    const char *body = strchr(csv, '\n') + 1;
    static double a[512], b[512];
    int na = read_numbers(body, a, 512);
    char path[600];
    snprintf(path, sizeof path, "%s/t.json", dir);
    static char js[1 << 15];
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t len = fread(js, 1, sizeof js - 1, f);
    fclose(f);
    js[len] = '\0';
    ck_assert_msg(json_valid(js, NULL) && json_count(js, "\"command\": \"run\"") == 1,
                  "not run's JSON: %s", js);
    /* the same columns, in order: the csv header's names in the json */
    char header[2048];
    snprintf(header, sizeof header, "%.*s", (int)(body - csv - 1), csv);
    const char *q = js;
    for (char *name = strtok(header, ","); name; name = strtok(NULL, ",")) {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\"", name);
        ck_assert_msg((q = strstr(q, quoted)) != NULL, "column %s missing or out of order", name);
    }
    int nb = read_numbers(strstr(js, "\"rows\""), b, 512);
    ck_assert_msg(na == nb && na == 4 * 25, "csv %d numbers, json %d", na, nb);
    for (int i = 0; i < na; i++)
        ck_assert_msg(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])), "number %d: %.17g and %.17g",
                      i, a[i], b[i]);
    /* the diagnostics */
    snprintf(path, sizeof path, "%s/d.json", dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    len = fread(js, 1, sizeof js - 1, f);
    fclose(f);
    js[len] = '\0';
    ck_assert_msg(json_valid(js, NULL) && strstr(js, "\"residual_max\""), "diagnostics: %s", js);
    snprintf(path, sizeof path, "%s/d.csv", dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    len = fread(csv, 1, sizeof csv - 1, f);
    fclose(f);
    csv[len] = '\0';
    na = read_numbers(strchr(csv, '\n') + 1, a, 512);
    nb = read_numbers(strstr(js, "\"rows\""), b, 512);
    ck_assert_msg(na == nb && na > 0, "diagnostics: csv %d numbers, json %d", na, nb);
    /* 17 columns: the csv's last three (residuals) have 4 digits, the rest 15 */
    ck_assert_int_eq(na % 17, 0);
    for (int i = 0; i < na; i++)
        ck_assert_msg(fabs(a[i] - b[i]) <= (i % 17 >= 14 ? 5e-4 : 1e-14) * fabs(b[i]) ||
                          (isnan(a[i]) && isnan(b[i])),
                      "diagnostics number %d: %.17g and %.17g", i, a[i], b[i]);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("parser");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, option_table_parsing, 0, (int)(sizeof parsed / sizeof *parsed));
    tcase_add_test(tc, param_order_kept);
    tcase_add_test(tc, write_errors_plugins_and_outputs);
    tcase_add_test(tc, table_format_by_option_or_extension);
    tcase_add_test(tc, check_system_out);
    tcase_add_test(tc, run_json_matches_csv);
    tcase_add_loop_test(tc, help_from_the_table, 0, (int)(sizeof helps / sizeof *helps));
    tcase_add_loop_test(tc, help_lists_every_option, 0, (int)(sizeof helps / sizeof *helps));
    tcase_add_loop_test(tc, help_options_section, 0, (int)(sizeof helps / sizeof *helps));
    tcase_add_test(tc, help_states_the_defaults);
    suite_add_tcase(s, tc);
    TCase *sg = tcase_create("signals");
    tcase_set_tags(sg, "slow");
    tcase_set_timeout(sg, 120);
    tcase_add_loop_test(sg, stability_stopped_in_the_spectrum, 0, 2);
    tcase_add_loop_test(sg, run_stopped_inside_a_step, 0, 2);
    tcase_add_test(sg, sweep_stopped_in_its_reference);
    tcase_add_test(sg, region_stopped_in_the_grid);
    suite_add_tcase(s, sg);
    return s;
}

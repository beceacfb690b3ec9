/* Skipped checks: a check that needs a built-in stepper which is a skeleton
 * (a hand-out's, tools/assignment.sh) or which this build lacks reports
 * itself skipped, with the reason, instead of failing.  Check has no skip:
 * the check's process (Check forks one per check) records the reason in
 * memory shared with the runner and ends with exit status 0, which Check
 * counts as a pass; the runner subtracts the skips (tests/check_main.c).
 *
 * Under CK_FORK=no there is no check's process to end: the check fails,
 * saying so.
 *
 * The ways in: tests_need("a,b") or tests_stepper("a") name the steppers a
 * check uses, tests_need_file an example it reads; tests_runs says whether a
 * `--stepper all` table has a stepper's row; creating a skeleton built-in in
 * the test program
 * (ts_stepper_new, wrapped by the linker: -Wl,--wrap=ts_stepper_new) skips
 * the check that does it; a command the check runs (system and popen,
 * wrapped likewise) that names a skeleton or a left-out stepper after
 * --stepper, --like or --stages is not run and the check is skipped; a
 * command of cli_run that says a built-in is a skeleton skips its check
 * too.  A hand-out lists the built-ins it leaves out (an assigned stepper's
 * method) in tests/left_out.txt, one name a line; a tree without
 * that file leaves nothing out.  A check whose point is that a skeleton
 * fails (the grader's) uses types that are not built-ins, so it still runs. */
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tests.h"
#include "tstep/stability.h"
#include "tstep/stepper.h"

enum { MAX_SUITES = 64, WHY_SIZE = 480 };
typedef struct {
    int count;
    char why[WHY_SIZE]; /* the distinct reasons, "; " apart */
} suite_skips;

static suite_skips *shared; /* MAX_SUITES slots, shared with every fork */
static int current = -1;    /* the suite this worker runs */
static pid_t worker_pid;    /* the worker's own process: not a check's fork */
enum { MAX_STEPPERS = 256 };
static unsigned char skeleton[MAX_STEPPERS]; /* by registry index, found once */
static int probing;                          /* inside probe(): create steppers freely */
static char left_out[1024];                  /* " a b c ": tests/left_out.txt's names */

/* A skeleton's step returns TS_ERR_NOT_IMPLEMENTED: one step on the test
 * equation (ts_amplification) tells. */
static int probe(const ts_stepper_type *t)
{
    double re, im;
    probing++;
    int s = ts_amplification(t, NULL, -0.1, 0.0, &re, &im);
    probing--;
    ts_error_clear();
    return s == TS_ERR_NOT_IMPLEMENTED;
}

void tests_skip_init(void)
{
    void *p = mmap(NULL, MAX_SUITES * sizeof *shared, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    shared = p == MAP_FAILED ? NULL : p;
    for (size_t i = 0; ts_stepper_at(i) && i < MAX_STEPPERS; i++)
        skeleton[i] = (unsigned char)probe(ts_stepper_at(i));
    FILE *f = fopen("tests/left_out.txt", "r");
    char name[64];
    size_t n = 1;
    left_out[0] = ' ';
    while (f && fscanf(f, "%63s", name) == 1 && n + strlen(name) + 2 < sizeof left_out)
        n += (size_t)snprintf(left_out + n, sizeof left_out - n, "%s ", name);
    if (f)
        fclose(f);
}

void tests_skip_suite(int i)
{
    current = i >= 0 && i < MAX_SUITES ? i : -1;
    worker_pid = getpid();
}

int tests_skipped(int i, const char **why)
{
    if (!shared || i < 0 || i >= MAX_SUITES)
        return 0;
    *why = shared[i].why;
    return shared[i].count;
}

void tests_skip(const char *why)
{
    if (getpid() == worker_pid)
        ck_abort_msg("skipped: %s (a skip needs Check's fork mode)", why);
    if (shared && current >= 0) {
        suite_skips *s = &shared[current];
        s->count++;
        size_t n = strlen(s->why);
        if (!strstr(s->why, why) && n + strlen(why) + 3 < WHY_SIZE)
            snprintf(s->why + n, WHY_SIZE - n, "%s%s", n ? "; " : "", why);
    }
    fflush(NULL);
    exit(0); /* the check's own process: Check counts the check as passed */
}

static int is_builtin(const ts_stepper_type *t)
{
    for (size_t i = 0; ts_stepper_at(i); i++)
        if (ts_stepper_at(i) == t)
            return 1;
    return 0;
}

int tests_is_skeleton(const ts_stepper_type *t)
{
    for (size_t i = 0; ts_stepper_at(i) && i < MAX_STEPPERS; i++)
        if (ts_stepper_at(i) == t)
            return skeleton[i];
    return probe(t); /* not a built-in: ask it */
}

/* Skip with "not implemented yet: NAME" or "not in this build: NAME". */
static int need_one(const char *name)
{
    char why[128];
    const ts_stepper_type *t = ts_stepper_find(name);
    if (t && !tests_is_skeleton(t))
        return 0;
    snprintf(why, sizeof why, "%s: %s", t ? "not implemented yet" : "not in this build", name);
    tests_skip(why);
    return 1;
}

const ts_stepper_type *tests_stepper(const char *name)
{
    need_one(name);
    return ts_stepper_find(name);
}

int tests_need(const char *names)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", names);
    for (char *save = NULL, *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save))
        need_one(n);
    return 0;
}

void tests_skip_if_skeleton_said(const char *err)
{
    const char *p = err;
    while ((p = strstr(p, "stepper '")) != NULL) {
        char name[64];
        p += strlen("stepper '");
        size_t n = strcspn(p, "'");
        if (n < sizeof name && strncmp(p + n, "' is a skeleton", 15) == 0) {
            memcpy(name, p, n);
            name[n] = '\0';
            const ts_stepper_type *t = ts_stepper_find(name);
            if (t && is_builtin(t))
                need_one(name);
        }
    }
}

void tests_need_file(const char *path)
{
    if (access(path, F_OK) != 0) {
        char why[512];
        snprintf(why, sizeof why, "left out of this hand-out: %s", path);
        tests_skip(why);
    }
}

int tests_runs(const char *name)
{
    const ts_stepper_type *t = ts_stepper_find(name);
    return t && !tests_is_skeleton(t);
}

void tests_check_command(const char *cmd)
{
    for (const char *p = cmd; (p = strstr(p, "examples/")) != NULL; p++) {
        char path[256];
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-");
        if (n < sizeof path && (p == cmd || p[-1] == ' ' || p[-1] == '\'' || p[-1] == '"')) {
            snprintf(path, sizeof path, "%.*s", (int)n, p);
            tests_need_file(path);
        }
    }
    static const char *const opts[] = {"--stepper", "--like", "--stages"};
    for (size_t k = 0; k < sizeof opts / sizeof *opts; k++)
        for (const char *p = cmd; (p = strstr(p, opts[k])) != NULL;) {
            p += strlen(opts[k]);
            if (*p != ' ' && *p != '=')
                continue;
            char list[256], key[72];
            size_t n = strcspn(++p, " \t\n'\";|&)");
            snprintf(list, sizeof list, "%.*s", (int)(n < sizeof list ? n : sizeof list - 1), p);
            for (char *save = NULL, *t = strtok_r(list, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                snprintf(key, sizeof key, " %s ", t);
                const ts_stepper_type *type = ts_stepper_find(t);
                if (type && is_builtin(type) && tests_is_skeleton(type))
                    need_one(t);
                if (strlen(t) < 64 && strstr(left_out, key)) {
                    char why[128];
                    snprintf(why, sizeof why, "left out of this hand-out: %s", t);
                    tests_skip(why);
                }
            }
        }
}

int __real_system(const char *cmd);
int __wrap_system(const char *cmd);
FILE *__real_popen(const char *cmd, const char *mode);
FILE *__wrap_popen(const char *cmd, const char *mode);

int __wrap_system(const char *cmd)
{
    if (cmd)
        tests_check_command(cmd);
    return __real_system(cmd);
}

FILE *__wrap_popen(const char *cmd, const char *mode)
{
    tests_check_command(cmd);
    return __real_popen(cmd, mode);
}

int __real_ts_stepper_new(const ts_stepper_type *type, const ts_system *sys,
                          const ts_solver_options *opt, ts_stepper **out);
int __wrap_ts_stepper_new(const ts_stepper_type *type, const ts_system *sys,
                          const ts_solver_options *opt, ts_stepper **out);

/* The test program's ts_stepper_new: a built-in skeleton skips the check. */
int __wrap_ts_stepper_new(const ts_stepper_type *type, const ts_system *sys,
                          const ts_solver_options *opt, ts_stepper **out)
{
    if (!probing && type && is_builtin(type) && tests_is_skeleton(type))
        need_one(type->name);
    return __real_ts_stepper_new(type, sys, opt, out);
}

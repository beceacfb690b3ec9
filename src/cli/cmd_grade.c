/* tstep grade: the grader's battery (tstep/grade.h) on one or more steppers
 * against expected values from the options or a spec file; a table or JSON
 * (schema in docs/grading.md).  Exit 0 when every check that ran passed,
 * 1 when one failed, 2 for usage errors. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"
#include "analysis/grade_worker.h"
#include "tstep/grade.h"
#include "tstep/stability.h"

static void help(const cli_opt *opts)
{
    printf(
        "Usage: tstep grade --stepper NAME [--order P] [--interval X] [--like REFERENCE]\n"
        "                   [--energy grows|decays|bounded|conserved]\n"
        "                   [--stages REFERENCE]\n"
        "                   [--plugin FILE] [--format text|json]\n"
        "       tstep grade --spec FILE [--stepper NAME] [--plugin FILE]\n"
        "                   [--format text|json]\n"
        "       tstep grade --submissions DIR --spec FILE [--out-dir D] [-j N]\n"
        "       tstep grade --write-spec --stepper A,B,...|all\n"
        "\n"
        "Run the grader's checks on a stepper and judge each against an EXPECTED value\n"
        "(the stepper's own declared order is never used):\n"
        "  implemented       one step on test1d does not return 'not implemented'\n"
        "                    (a skeleton fails it and every other check)\n"
        "  order-test1d      observed order on x' = -x, t_end 1, dt 0.1 to 0.001:\n"
        "                    P +- %g\n"
        "  order-oscillator  the same on the undamped oscillator x'' = -x\n"
        "  order-forced      the same on x'' = -x - x^3 + sin^3 t (x = sin t): nonlinear\n"
        "                    and driven in time (wrong stage times fail it)\n"
        "  local-order       one-step error |R(-h) - e^-h| ~ h^(P+1), h 0.2 to 0.0125\n"
        "  amplification     R(z) equals REFERENCE's to %g at 6 complex z (--like)\n"
        "  interval          stability interval on the negative real axis: X, %g\n"
        "                    relative (X may be inf)\n"
        "  energy            on x'' = -x, 400 steps of 0.5: grows, decays, bounded or\n"
        "                    conserved (definitions in docs/grading.md)\n"
        "  stage-states      forces evaluated at the stage states handed over, never\n"
        "                    again at the start-of-step (stored) state\n"
        "  failed-force      a failed force evaluation is returned unchanged, the state\n"
        "                    kept\n"
        "  pins              pinned degrees of freedom do not move\n"
        "  no-allocation     no malloc/calloc/realloc inside step\n"
        "  repeatable        the same run twice, and two instances side by side, agree\n"
        "                    bitwise (no hidden static state)\n"
        "  stages            one step on the probe evaluates the forces at the times and\n"
        "                    states of REFERENCE's step, to %g (--stages): the same\n"
        "                    method, not a sibling with the same R(z) and order\n"
        "  error-estimate    an adaptive stepper's embedded error estimate after one\n"
        "                    step on the oscillator goes as h^P (h halved 4 times)\n"
        "A check without its expected value is skipped.  A built-in stepper's checks run\n"
        "in child processes; a plugin (a submission) is never loaded into the grader: a\n"
        "worker process in a sandbox (bubblewrap: read-only files, no network, limits)\n"
        "loads it and runs only the steps the grader asks for, and every verdict is\n"
        "computed here.  A crash, a hang or a limit fails the check it happened in;\n"
        "when the first step crashes or hangs, the other checks fail with it (not run).\n",
        TS_GRADE_ORDER_TOL, TS_GRADE_AMPLIFICATION_TOL, TS_GRADE_INTERVAL_TOL,
        TS_GRADE_STAGES_TOL);
    cli_print_options(opts);
    printf("\nA spec FILE has one stepper per line, '#' starting a comment:\n"
           "  NAME [order=P] [interval=X] [energy=B] [like=REFERENCE] [stages=REFERENCE]\n"
           "       [flags=F]\n"
           "\n"
           "Exit status: 0 every check that ran passed, 1 a check failed, 2 usage error.\n");
}

static void print_text(FILE *f, const ts_grade_report *r)
{
    fprintf(f, "grade: %s (seed %lu)\n", r->type->name, r->seed);
    fprintf(f, "  %-17s %-5s %-36s %s\n", "check", "", "expected", "measured");
    for (int k = 0; k < TS_GRADE_CHECK_COUNT; k++) {
        const ts_grade_check *c = &r->check[k];
        char expected[96];
        if (isnan(c->tolerance) || c->outcome == TS_GRADE_SKIP)
            snprintf(expected, sizeof expected, "%s", c->expected);
        else
            snprintf(expected, sizeof expected, "%s (tol %g)", c->expected, c->tolerance);
        fprintf(f, "  %-17s %-5s %-36s %s\n", ts_grade_check_name(k),
                ts_grade_outcome_name(c->outcome), expected, c->measured);
        if (c->outcome != TS_GRADE_PASS && *c->hint)
            fprintf(f, "  %-17s %-5s %s\n", "", "", c->hint);
    }
    int ran = r->passed + r->failed;
    fprintf(f, "  score: %d of %d checks passed", r->passed, ran);
    if (r->skipped)
        fprintf(f, ", %d skipped", r->skipped);
    fprintf(f, "\n\n");
}

static void print_json_report(cli_json *j, const ts_grade_report *r)
{
    const ts_grade_expect *e = &r->expect;
    cli_json_object(j, NULL);
    cli_json_string(j, "stepper", r->type->name);
    cli_json_bool(j, "passed", r->failed == 0);
    cli_json_int(j, "score", r->passed);
    cli_json_int(j, "out_of", r->passed + r->failed);
    cli_json_int(j, "skipped", r->skipped);
    cli_json_number(j, "seed", (double)r->seed);
    cli_json_string(j, "output", r->output);
    cli_json_object(j, "expect");
    if (e->order > 0)
        cli_json_int(j, "order", e->order);
    else
        cli_json_null(j, "order");
    if (isnan(e->interval))
        cli_json_null(j, "interval");
    else if (isinf(e->interval))
        cli_json_string(j, "interval", "inf");
    else
        cli_json_number(j, "interval", e->interval);
    cli_json_string(j, "like", e->like ? e->like->name : NULL);
    cli_json_string(j, "energy", e->energy ? ts_energy_name(e->energy) : NULL);
    cli_json_string(j, "stages", e->stages ? e->stages->name : NULL);
    cli_json_close(j);
    cli_json_array(j, "checks");
    for (int k = 0; k < TS_GRADE_CHECK_COUNT; k++) {
        const ts_grade_check *c = &r->check[k];
        cli_json_object(j, NULL);
        cli_json_string(j, "name", ts_grade_check_name(k));
        cli_json_string(j, "result", c->outcome == TS_GRADE_PASS   ? "pass"
                                     : c->outcome == TS_GRADE_FAIL ? "fail"
                                                                   : "skip");
        cli_json_string(j, "expected", c->expected);
        cli_json_number(j, "expected_value", c->expected_value);
        cli_json_string(j, "measured", c->measured);
        cli_json_number(j, "measured_value", c->measured_value);
        cli_json_number(j, "tolerance", c->tolerance);
        cli_json_string(j, "hint", c->hint);
        cli_json_object(j, "details");
        for (int d = 0; d < c->ndetail; d++)
            cli_json_number(j, c->detail[d].name, c->detail[d].value);
        cli_json_close(j);
        cli_json_close(j);
    }
    cli_json_close(j);
    cli_json_close(j);
}

/* The largest spec file read. */
#define SPEC_BYTES_MAX (1 << 20)

/* What a path that is not a regular file is, for the message. */
static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

/* Read a whole spec file: a regular file of at most SPEC_BYTES_MAX bytes
 * (opened without blocking, so a FIFO is refused, not waited on); NULL
 * with a message on failure. */
static char *read_file(const char *cmd, const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0) {
        cli_usage_error(cmd, "--spec: cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > SPEC_BYTES_MAX) {
        if (S_ISREG(st.st_mode))
            cli_usage_error(cmd, "--spec: '%s' is larger than %d bytes", path, SPEC_BYTES_MAX);
        else
            cli_usage_error(cmd, "--spec: '%s' is %s, not a regular file", path,
                            file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    char *buf = malloc(SPEC_BYTES_MAX + 1);
    size_t len = 0;
    ssize_t r = 1;
    while (buf && len < SPEC_BYTES_MAX && (r = read(fd, buf + len, SPEC_BYTES_MAX - len)) > 0)
        len += (size_t)r;
    close(fd);
    if (!buf || r < 0) {
        fprintf(stderr, "tstep %s: cannot read '%s'\n", cmd, path);
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* The first other registered stepper with the same R(z) as `type` at
 * points of the amplification check (both run at four of them at least),
 * for like=; NULL when none. */
static const ts_stepper_type *same_amplification(const ts_stepper_type *type,
                                                 const ts_grade_options *opt)
{
    static const double z[][2] = {{-0.5, 0.0}, {-2.0, 0.0}, {-3.7, 0.0},
                                  {0.0, 1.0},  {-1.0, 1.0}, {-0.3, 2.0}};
    double r[6][2];
    int ok[6];
    for (int k = 0; k < 6; k++)
        ok[k] = !ts_amplification(type, &opt->solver, z[k][0], z[k][1], &r[k][0], &r[k][1]);
    for (size_t i = 0; ts_stepper_at(i); i++) {
        const ts_stepper_type *t = ts_stepper_at(i);
        int same = t != type, both = 0;
        for (int k = 0; k < 6 && same; k++) {
            double re, im;
            if (!ok[k] || ts_amplification(t, &opt->solver, z[k][0], z[k][1], &re, &im))
                continue;
            both++;
            same = hypot(re - r[k][0], im - r[k][1]) <=
                   TS_GRADE_AMPLIFICATION_TOL * fmax(1.0, hypot(r[k][0], r[k][1]));
        }
        if (same && both >= 4)
            return t;
    }
    return NULL;
}

/* --write-spec: a spec line per stepper from what it does. */
static int write_spec_lines(const char *cmd, const char *list, const ts_grade_options *opt)
{
    const ts_stepper_type *types[TS_GRADE_SPEC_MAX];
    int n;
    if (cli_find_steppers(cmd, list, types, TS_GRADE_SPEC_MAX, &n))
        return CLI_EXIT_USAGE;
    printf("# tstep grade spec: NAME order=P interval=X energy=B [like=REFERENCE] "
           "[stages=REFERENCE] flags=F (see docs/grading.md)\n");
    for (int i = 0; i < n; i++) {
        ts_grade_expect e;
        int s = ts_grade_measure(types[i], opt, &e);
        if (s)
            return cli_fail(cmd, s);
        const ts_stepper_type *like = same_amplification(types[i], opt);
        /* stages= itself for an explicit method (an implicit one's stages are
           Newton's iterates, which another correct solver need not repeat) */
        int explicit = !(types[i]->flags & TS_IMPLICIT);
        char flags[80];
        printf("%-22s order=%d interval=%.12g energy=%s%s%s%s%s flags=%s\n", types[i]->name,
               e.order, e.interval, ts_energy_name(e.energy), like ? " like=" : "",
               like ? like->name : "", explicit ? " stages=" : "",
               explicit ? types[i]->name : "",
               ts_grade_flags_name((int)types[i]->flags, flags, sizeof flags));
    }
    return 0;
}

static int parse_interval(const char *cmd, const char *arg, void *to)
{
    double *x = to;
    if (strcmp(arg, "inf") == 0) {
        *x = INFINITY;
        return 0;
    }
    if (cli_parse_real(cmd, "interval", arg, x))
        return CLI_EXIT_USAGE;
    if (*x < 0.0)
        return cli_usage_error(cmd, "--interval: '%s' must be at least 0 (or inf)", arg);
    return 0;
}

static int parse_energy(const char *cmd, const char *arg, void *to)
{
    if ((*(int *)to = ts_energy_parse(arg)) < 0)
        return cli_usage_error(cmd, "--energy: '%s' is not grows, decays, bounded or "
                                    "conserved", arg);
    return 0;
}

static int parse_flags(const char *cmd, const char *arg, void *to)
{
    if ((*(int *)to = ts_grade_flags_parse(arg)) < 0)
        return cli_usage_error(cmd, "--flags: '%s' is not a list of partitioned, symplectic, "
                                    "multistep, adaptive (or none)", arg);
    return 0;
}

/* Plugins named for grade (before or after the command, TSTEP_PLUGINS):
 * kept for its worker, never loaded here. */
#define DEFERRED_MAX 16
static char *deferred[DEFERRED_MAX];
static int ndeferred, nexplicit;

int cli_defer_plugin(const char *path, int from_env)
{
    nexplicit += !from_env;
    if (ndeferred == DEFERRED_MAX) {
        fprintf(stderr, "tstep: more than %d plugins\n", DEFERRED_MAX);
        return CLI_EXIT_USAGE;
    }
    size_t n = strlen(path) + 1;
    if (n == 1 || !(deferred[ndeferred] = malloc(n))) {
        fprintf(stderr, "tstep: --plugin: %s\n", n == 1 ? "'': empty file name" : "out of memory");
        return CLI_EXIT_USAGE;
    }
    memcpy(deferred[ndeferred++], path, n);
    return 0;
}

static int parse_plugin(const char *cmd, const char *arg, void *to)
{
    (void)cmd, (void)to;
    return cli_defer_plugin(arg, 0);
}

/* MB, or GB with a G suffix (M accepted too). */
static int parse_memory(const char *cmd, const char *arg, void *to)
{
    char *end;
    long v = strtol(arg, &end, 10), scale = 1;
    if (*end == 'G' || *end == 'g')
        scale = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        end++;
    if (end == arg || *end || v * scale < 256 || v > (1L << 30) / scale)
        return cli_usage_error(cmd, "--memory-limit: '%s' is not a size from 256 MB (e.g. 512 "
                                    "or 2G; the worker's own libraries need about 100 MB of "
                                    "address space)", arg);
    *(long *)to = v * scale;
    return 0;
}

static int parse_seed(const char *cmd, const char *arg, void *to)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(arg, &end, 10);
    if (end == arg || *end || errno || *arg == '-')
        return cli_usage_error(cmd, "--seed: '%s' is not a whole number >= 0", arg);
    *(unsigned long *)to = v;
    return 0;
}

/* What grade does: its options and the steppers with what each is
 * expected to do. */
typedef struct {
    const char *stepper, *like, *stages, *spec, *out;
    ts_grade_expect ex;
    ts_grade_options gopt;
    const char *results, *submissions, *out_dir;
    int jobs;
    int json, given, write_spec, no_isolate, no_sandbox, seeded, worker_failed;
    char worker_why[200];
    const ts_stepper_type *types[TS_GRADE_SPEC_MAX];
    ts_grade_expect expects[TS_GRADE_SPEC_MAX];
    int n;
} grade_job;

/* --submissions: each submission graded by a `tstep grade` of its own with
 * the same spec, seed and limits (src/cmd_grade_batch.c). */
static int grade_batch(const char *cmd, grade_job *g)
{
    static char seed[32], limit[32], memory[32];
    const char *pass[8];
    int n = 0;
    snprintf(seed, sizeof seed, "%lu", g->gopt.seed);
    snprintf(limit, sizeof limit, "%d", g->gopt.time_limit);
    snprintf(memory, sizeof memory, "%ld", g->gopt.memory_limit);
    pass[n++] = "--seed", pass[n++] = seed, pass[n++] = "--time-limit", pass[n++] = limit;
    pass[n++] = "--memory-limit", pass[n++] = memory;
    if (g->no_sandbox)
        pass[n++] = "--no-sandbox";
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cli_grade_batch b = {.submissions = g->submissions, .spec = g->spec,
                         .out_dir = g->out_dir ? g->out_dir : "grades",
                         .jobs = g->jobs ? g->jobs : cores > 0 ? (int)cores : 1,
                         .sandbox = !g->no_sandbox, .pass = pass, .npass = n};
    return cli_grade_batch_run(cmd, &b);
}

static int grade_mode(const char *cmd, grade_job *g, int *rc);

static int grade_options(const char *cmd, int argc, char **argv, grade_job *g, int *rc)
{
    static const char *const formats[] = {"text", "json", NULL};
    const cli_opt opts[] = {
        CLI_STRING("stepper", &g->stepper, "NAME",
                   "the stepper (see 'tstep list'); with --spec, only that one"),
        {.name = "order", .kind = CLI_OPT_INT, .to = &g->ex.order, .min = 1, .max = 20,
         .given = &g->given, .arg = "P", .doc = "expected order (whole number, 1 to 20)"},
        {.name = "interval", .kind = CLI_OPT_CUSTOM, .to = &g->ex.interval,
         .parse = parse_interval, .given = &g->given, .arg = "X",
         .doc = "expected stability interval on the negative real axis (may be inf)"},
        {.name = "like", .kind = CLI_OPT_STRING, .to = &g->like, .given = &g->given,
         .arg = "REFERENCE", .doc = "a stepper with the same one-step amplification factor R(z)"},
        {.name = "energy", .kind = CLI_OPT_CUSTOM, .to = &g->ex.energy, .parse = parse_energy,
         .given = &g->given, .arg = "B",
         .doc = "expected energy behaviour on the undamped oscillator: grows, decays, "
                "bounded or conserved"},
        {.name = "stages", .kind = CLI_OPT_STRING, .to = &g->stages, .given = &g->given,
         .arg = "REFERENCE", .doc = "the stepper whose stages it must have (the same method)"},
        {.name = "flags", .kind = CLI_OPT_CUSTOM, .to = &g->ex.flags, .parse = parse_flags,
         .given = &g->given, .arg = "F",
         .doc = "the method's flags (partitioned, symplectic, multistep, adaptive, or none; "
                "a submission's default: none)"},
        CLI_STRING("spec", &g->spec, "FILE", "expected values of several steppers (below)"),
        CLI_CHOICE("format", &g->json, formats, "text or json", "F", "text (default) or json"),
        CLI_STRING("out", &g->out, "FILE", "write the report there instead of standard output"),
        CLI_FLAG("no-isolate", &g->no_isolate,
                 "run a built-in's checks in this process (for a debugger)"),
        CLI_CUSTOM("plugin", NULL, parse_plugin, "FILE",
                   "the submission: a plugin, graded in the sandbox (also before 'grade', "
                   "and from TSTEP_PLUGINS)"),
        CLI_FLAG("no-sandbox", &g->no_sandbox,
                 "grade a plugin without bubblewrap (trusted code only; the grader refuses "
                 "a plugin where bwrap cannot run without it)"),
        {.name = "time-limit", .kind = CLI_OPT_INT, .to = &g->gopt.time_limit, .min = 1,
         .max = 86400, .arg = "S", .doc = "wall-clock seconds per check (default %D)"},
        {.name = "memory-limit", .kind = CLI_OPT_CUSTOM, .to = &g->gopt.memory_limit,
         .parse = parse_memory, .shows = CLI_OPT_COUNT, .arg = "M",
         .doc = "address space of the submission's process in MB, or with a G suffix in GB, "
                "at least 256 (default %D MB)"},
        {.name = "seed", .kind = CLI_OPT_CUSTOM, .to = &g->gopt.seed, .parse = parse_seed,
         .given = &g->seeded, .arg = "N",
         .doc = "the hidden test parameters' seed (default: drawn; the report prints it, "
                "and --seed N runs the same tests again)"},
        CLI_STRING("results", &g->results, "DIR",
                   "also write DIR/results.json (Gradescope), DIR/junit.xml and "
                   "DIR/summary.csv (a header and one row)"),
        CLI_STRING("submissions", &g->submissions, "DIR",
                   "grade every submission in DIR (with --spec): a FILE.c, a FILE.so, or a "
                   "folder of .so (else .c) files per student; a .c is compiled into a "
                   "plugin in the sandbox; each graded by its own process with the same seed "
                   "and limits, into --out-dir D/NAME/: report.txt, stderr.txt and the "
                   "--results files; D/summary.csv a row per student"),
        CLI_STRING("out-dir", &g->out_dir, "D", "where --submissions writes (default grades)"),
        {.name = "jobs", .kind = CLI_OPT_INT, .to = &g->jobs, .min = 1, .max = 256,
         .arg = "N", .doc = "submissions graded at once, also -j N (default: the core count)"},
        CLI_FLAG("write-spec", &g->write_spec,
                 "measure the steppers (trusted ones: an instructor's solution) and print a "
                 "spec line for each: the observed order on test1d rounded, the stability "
                 "interval, the energy behaviour, like= the first other stepper with the "
                 "same R(z), if any, and for an explicit stepper stages= itself"),
        CLI_HELP(help), CLI_END};
    return cli_options(cmd, argc, argv, opts, rc) || grade_mode(cmd, g, rc);
}

/* The options between themselves, and the modes that end here (a batch of
 * submissions, --write-spec): 1 with *rc to return, 0 to grade. */
static int grade_mode(const char *cmd, grade_job *g, int *rc)
{
    if (g->no_isolate)
        g->gopt.isolate = 0;
    g->gopt.sandbox = !g->no_sandbox;
    if (!g->seeded) /* a fresh draw each run, printed in the report */
        g->gopt.seed = ((unsigned long)time(NULL) * 2654435761UL ^ (unsigned long)getpid()) %
                       1000000000UL;
    if (g->spec && g->given)
        *rc = cli_usage_error(cmd, "--spec gives the expected values: --order, --interval, "
                                   "--like, --energy, --stages and --flags go in the spec file");
    else if (!g->spec && !g->stepper)
        *rc = cli_usage_error(cmd, "--stepper or --spec is required");
    else if (g->submissions)
        *rc = !g->spec || g->stepper || ndeferred || g->results || g->json || g->out
                  ? cli_usage_error(cmd, "--submissions takes --spec, and neither --stepper, "
                                         "--plugin, --results, --format nor --out")
                  : grade_batch(cmd, g);
    else if (g->write_spec)
        *rc = g->spec || g->given || g->json
                  ? cli_usage_error(cmd, "--write-spec takes --stepper only")
                  : write_spec_lines(cmd, g->stepper, &g->gopt);
    else
        return 0;
    return 1;
}

/* The spec's entries (those for --stepper, when given); 0 or 2. */
/* A stepper by name; when the submission's worker died before it said
 * which steppers it has, an unknown name is the submission's (a
 * placeholder whose checks fail with the worker's fate). */
static int find_graded(const char *cmd, grade_job *g, const char *name,
                       const ts_stepper_type **out)
{
    int got;
    if ((*out = ts_grade_worker_find(name)))
        return 0;
    /* with --plugin, a graded name is the submission's: never a built-in that
       would be graded in its place (its worker says it has no such stepper) */
    if (nexplicit && !g->worker_failed) {
        char has[512];
        fprintf(stderr, "tstep %s: the submission has no stepper '%s' (its steppers: %s); "
                        "graded as failing\n",
                cmd, name, *ts_grade_worker_names(has, sizeof has) ? has : "none");
    }
    if ((g->worker_failed || nexplicit) && (*out = ts_grade_worker_placeholder(name)))
        return 0;
    return cli_find_steppers(cmd, name, out, 1, &got);
}

/* A reference (like=, stages=): a built-in first, the trusted one, then
 * one the submission's worker says it has; any other name is a mistake in
 * the command or the spec (exit 2), unless the worker died before it said
 * (then its placeholder: the graded stepper fails with the worker's fate). */
static int find_reference(const char *cmd, grade_job *g, const char *name,
                          const ts_stepper_type **out)
{
    int got;
    if ((*out = ts_stepper_find(name)) || (*out = ts_grade_worker_find(name)))
        return 0;
    if (g->worker_failed && (*out = ts_grade_worker_placeholder(name)))
        return 0;
    return cli_find_steppers(cmd, name, out, 1, &got);
}

/* The submission's plugins: refused without a working sandbox (unless
 * --no-sandbox), their steppers registered as proxies of a worker. */
static int open_worker(const char *cmd, grade_job *g)
{
    char why[200];
    g->gopt.plugins = (const char *const *)deferred;
    g->gopt.nplugins = ndeferred;
    for (int i = 0; i < ndeferred; i++) /* a file not there: the command's mistake */
        if (access(deferred[i], R_OK) != 0) {
            fprintf(stderr, "tstep: --plugin %s: %s\n", deferred[i], strerror(errno));
            return CLI_EXIT_USAGE;
        }
    int s = ts_grade_worker_open(&g->gopt, why, sizeof why);
    /* a worker that did not start: the sandbox's fault, or the submission's */
    if (s == TS_ERR_IO && g->gopt.sandbox && !ts_sandbox_works(why, sizeof why))
        return cli_usage_error(cmd, "cannot sandbox the submission here (%s); --no-sandbox "
                                    "grades it without a sandbox (trusted code only)", why);
    /* the plugin did not load in the worker (not a plugin, a symbol it needs
       is not there: a reference stepper, say) or the worker stopped: the
       submission's failure, graded as such (every check fails, with why) */
    if (s == TS_ERR_INPUT || s == TS_ERR_IO) {
        g->worker_failed = 1;
        snprintf(g->worker_why, sizeof g->worker_why, "%s", why);
        fprintf(stderr, "tstep %s: %s: %s\n", cmd,
                s == TS_ERR_INPUT ? "the submission's plugin did not load"
                                  : "the submission's process stopped while loading its plugin",
                why);
    } else if (s) {
        return cli_fail(cmd, s);
    }
    return 0;
}

/* What a submission printed, on stderr: never in the report, each line
 * behind "  | ", so that none reads as the grader's own. */
static void print_output(const ts_grade_report *r)
{
    if (!*r->output)
        return;
    fprintf(stderr, "tstep grade: output of '%s' while graded:\n", r->type->name);
    for (const char *l = r->output; *l;) {
        size_t len = strcspn(l, "\n");
        fprintf(stderr, "  | %.*s\n", (int)len, l);
        l += len + (l[len] == '\n');
    }
}

static int read_spec(const char *cmd, grade_job *g)
{
    static ts_grade_spec_entry entries[TS_GRADE_SPEC_MAX];
    char *text = read_file(cmd, g->spec);
    if (!text)
        return CLI_EXIT_USAGE;
    int count, s = ts_grade_spec_parse(text, entries, TS_GRADE_SPEC_MAX, &count);
    free(text);
    if (s)
        return cli_usage_error(cmd, "--spec '%s': %s", g->spec, ts_error_detail());
    for (int i = 0; i < count; i++) {
        if (g->stepper && strcmp(g->stepper, entries[i].name) != 0)
            continue;
        if (find_graded(cmd, g, entries[i].name, &g->types[g->n]))
            return CLI_EXIT_USAGE;
        g->expects[g->n] = entries[i].expect;
        if (*entries[i].like && find_reference(cmd, g, entries[i].like, &g->expects[g->n].like))
            return CLI_EXIT_USAGE;
        if (*entries[i].stages &&
            find_reference(cmd, g, entries[i].stages, &g->expects[g->n].stages))
            return CLI_EXIT_USAGE;
        if (g->expects[g->n].like == g->types[g->n])
            return cli_usage_error(cmd, "--spec '%s': like=%s names the graded stepper itself "
                                        "(it would be compared with itself)", g->spec,
                                   entries[i].like);
        g->n++;
    }
    if (g->n == 0)
        return cli_usage_error(cmd, g->stepper ? "--spec '%s' has no line for stepper '%s'"
                                               : "--spec '%s' names no stepper",
                               g->spec, g->stepper);
    return 0;
}

/* What to grade: one stepper from the options, or the spec's entries. */
static int select_steppers(const char *cmd, grade_job *g)
{
    if (g->spec)
        return read_spec(cmd, g);
    if (strchr(g->stepper, ',') || strcmp(g->stepper, "all") == 0)
        return cli_usage_error(cmd, "--stepper: one name (several go in a --spec file)");
    if (find_graded(cmd, g, g->stepper, &g->types[0]))
        return CLI_EXIT_USAGE;
    if (g->like && find_reference(cmd, g, g->like, &g->ex.like))
        return CLI_EXIT_USAGE;
    if (g->stages && find_reference(cmd, g, g->stages, &g->ex.stages))
        return CLI_EXIT_USAGE;
    if (g->ex.like == g->types[0])
        return cli_usage_error(cmd, "--like %s names the graded stepper itself (it would be "
                                    "compared with itself)", g->like);
    g->expects[0] = g->ex;
    g->n = 1;
    return 0;
}

/* A submission's stepper (the worker's proxy) is judged by the method's
 * flags the instructor gives, never by those it declares, which decide
 * which checks apply: without flags= (--flags), those of its stages=
 * reference when that is a built-in (the same method), else none, said
 * when the stepper declares others. */
static void expected_flags(const char *cmd, grade_job *g)
{
    for (int i = 0; i < g->n; i++) {
        ts_grade_expect *e = &g->expects[i];
        const ts_stepper_type *t = g->types[i];
        if (e->flags >= 0 || !ts_grade_is_proxy(t))
            continue;
        e->flags = e->stages && !ts_grade_is_proxy(e->stages)
                       ? (int)(e->stages->flags & TS_GRADE_FLAGS)
                       : 0;
        char got[80], taken[80];
        if ((int)(t->flags & TS_GRADE_FLAGS) != e->flags)
            fprintf(stderr, "tstep %s: '%s' declares %s; with no flags= (--flags) the method "
                            "is taken as %s: give the method's flags if it has them\n",
                    cmd, t->name, ts_grade_flags_name((int)t->flags, got, sizeof got),
                    ts_grade_flags_name(e->flags, taken, sizeof taken));
    }
}

int cmd_grade(int argc, char **argv)
{
    const char *cmd = "grade";
    static grade_job g;
    memset(&g, 0, sizeof g);
    g.ex = ts_default_grade_expect();
    g.gopt = ts_default_grade_options();
    int rc;
    for (int i = 1; i < argc; i++) /* -j N, as make's */
        if (strcmp(argv[i], "-j") == 0)
            argv[i] = "--jobs";
    if (grade_options(cmd, argc, argv, &g, &rc))
        return rc;
    if (ndeferred && (rc = open_worker(cmd, &g)))
        return rc;
    if ((rc = select_steppers(cmd, &g)))
        return rc;
    expected_flags(cmd, &g);
    FILE *f;
    if ((rc = cli_open_output(cmd, g.out, &f)))
        return rc;
    cli_json j;
    if (g.json) {
        cli_json_init(&j, f);
        cli_json_object(&j, NULL);
        cli_json_string(&j, "command", "grade");
        cli_json_array(&j, "steppers");
    }
    int failed = 0, s = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    static ts_grade_report reps[TS_GRADE_SPEC_MAX];
    for (int i = 0; i < g.n && !s; i++) {
        ts_grade_report *r = &reps[i], rep;
        if ((s = ts_grade(g.types[i], &g.expects[i], &g.gopt, r)))
            break;
        rep = *r;
        failed += rep.failed > 0;
        print_output(&rep);
        if (g.json)
            print_json_report(&j, &rep);
        else
            print_text(f, &rep);
    }
    if (g.json && !s) {
        cli_json_close(&j);
        cli_json_bool(&j, "passed", failed == 0);
        cli_json_close(&j);
    }
    if (!g.json && !s && g.n > 1)
        fprintf(f, "grade: %d of %d steppers passed every check\n", g.n - failed, g.n);
    rc = cli_close_output(cmd, g.out, f);
    if (s)
        return cli_fail(cmd, s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (g.results && !rc)
        rc = cli_grade_write_results(cmd, g.results, reps, g.n, secs);
    if (failed)
        fprintf(stderr, "tstep %s: %d stepper%s failed a check\n", cmd, failed,
                failed == 1 ? "" : "s");
    return rc ? rc : failed ? 1 : 0;
}

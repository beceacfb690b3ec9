/* Command-line helpers: parsing, lookups with valid-name lists, errors. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "table.h"
#include "tstep/linalg.h"
#include "tstep/linsolve.h"
#include "tstep/stability.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "tstep %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'tstep %s --help'.\n", cmd);
    return CLI_EXIT_USAGE;
}

int cli_fail(const char *cmd, int status)
{
    const char *d = ts_error_detail();
    fprintf(stderr, "tstep %s: %s%s%s\n", cmd, ts_status_message(status), *d ? ": " : "", d);
    return ts_status_exit_code(status);
}

/* An unknown or malformed option from getopt_long's '?' return: a missing
 * value, a value given to a flag, an ambiguous prefix (naming the
 * candidates from the table `opts`) or an unknown option. */
static int bad_option(const char *cmd, int argc, char **argv, const struct option *opts)
{
    extern int optind, optopt;
    const char *arg = optind - 1 < argc && optind >= 1 ? argv[optind - 1] : "?";
    if (optopt && optopt < 256 && strchr(arg, '=') == NULL && arg[0] == '-' && arg[1] != '-')
        return cli_usage_error(cmd, "invalid option or missing value: '-%c'", optopt);
    if (arg[0] != '-' || arg[1] != '-' || !opts)
        return cli_usage_error(cmd, "unrecognized option or missing value: '%s'", arg);
    const char *name = arg + 2;
    size_t len = strcspn(name, "=");
    char cand[512] = "";
    int matches = 0;
    for (const struct option *o = opts; o->name; o++) {
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) {
            if (name[len] == '=' && o->has_arg == no_argument)
                return cli_usage_error(cmd, "--%s takes no value: '%s'", o->name, arg);
            return cli_usage_error(cmd, "--%s needs a value", o->name);
        }
        if (strncmp(o->name, name, len) == 0) {
            size_t used = strlen(cand);
            snprintf(cand + used, sizeof cand - used, "%s--%s", matches ? ", " : "", o->name);
            matches++;
        }
    }
    if (matches > 1)
        return cli_usage_error(cmd, "ambiguous option '%.*s': it could be %s", (int)len + 2,
                               arg, cand);
    return cli_usage_error(cmd, "unrecognized option or missing value: '%s'", arg);
}

int cli_parse_real(const char *cmd, const char *opt, const char *text, double *out)
{
    if (!ts_parse_real(text, out))
        return cli_usage_error(cmd, "--%s: '%s' is not a finite number", opt, text);
    return 0;
}

int cli_parse_positive(const char *cmd, const char *opt, const char *text, double *out)
{
    if (cli_parse_real(cmd, opt, text, out))
        return CLI_EXIT_USAGE;
    if (!(*out > 0.0))
        return cli_usage_error(cmd, "--%s: '%s' must be greater than 0", opt, text);
    return 0;
}

int cli_parse_count(const char *cmd, const char *opt, const char *text, long min, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(text, &end, 10);
    if (!ts_plain_number(text, 0))
        return cli_usage_error(cmd, "--%s: '%s' is not a whole number", opt, text);
    if (errno == ERANGE && end != text && *end == '\0')
        return cli_usage_error(cmd, "--%s: '%s' is out of range (at most %ld)", opt, text,
                               LONG_MAX);
    if (end == text || *end != '\0' || errno == ERANGE)
        return cli_usage_error(cmd, "--%s: '%s' is not a whole number", opt, text);
    if (x < min)
        return cli_usage_error(cmd, "--%s: '%s' must be at least %ld", opt, text, min);
    *out = x;
    return 0;
}

int cli_parse_format(const char *text, cli_format *out)
{
    if (strcmp(text, "dat") == 0)
        *out = CLI_FORMAT_DAT;
    else if (strcmp(text, "csv") == 0)
        *out = CLI_FORMAT_CSV;
    else if (strcmp(text, "frames") == 0)
        *out = CLI_FORMAT_FRAMES;
    else if (strcmp(text, "npy") == 0)
        *out = CLI_FORMAT_NPY;
    else if (strcmp(text, "json") == 0)
        *out = CLI_FORMAT_JSON;
    else
        return -1;
    return 0;
}

static void list_names(char *buf, size_t size, const char *const *names, size_t count)
{
    buf[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        if (i)
            strncat(buf, ", ", size - strlen(buf) - 1);
        strncat(buf, names[i], size - strlen(buf) - 1);
    }
}

int cli_find_system(const char *cmd, const char *name, const ts_system_type **out)
{
    if (!name)
        return cli_usage_error(cmd, "--system is required");
    *out = ts_system_find(name);
    if (*out)
        return 0;
    const char *names[64];
    size_t n = 0;
    for (; ts_system_at(n) && n < 64; n++)
        names[n] = ts_system_at(n)->name;
    char buf[1024];
    list_names(buf, sizeof buf, names, n);
    return cli_usage_error(cmd, "unknown system '%s' (valid: %s)", name, buf);
}

int cli_find_steppers(const char *cmd, const char *list, const ts_stepper_type **out, int max,
                      int *count)
{
    *count = 0;
    if (!list)
        return cli_usage_error(cmd, "--stepper is required");
    if (strcmp(list, "all") == 0) {
        for (size_t i = 0; ts_stepper_at(i) && *count < max; i++)
            out[(*count)++] = ts_stepper_at(i);
        return 0;
    }
    char buf[1024];
    if (strlen(list) >= sizeof buf)
        return cli_usage_error(cmd, "--stepper: a list longer than %zu characters",
                               sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        if (!*tok) /* "rk4,,midpoint", "rk4," */
            return cli_usage_error(cmd, "--stepper: an empty name in '%s'", list);
        const ts_stepper_type *t = ts_stepper_find(tok);
        if (!t) {
            const char *names[64];
            size_t n = 0;
            for (; ts_stepper_at(n) && n < 64; n++)
                names[n] = ts_stepper_at(n)->name;
            char valid[1024];
            list_names(valid, sizeof valid, names, n);
            return cli_usage_error(cmd, "unknown stepper '%s' (valid: %s%s)", tok, valid,
                                   max > 1 ? ", or all" : "");
        }
        for (int i = 0; i < *count; i++)
            if (out[i] == t) /* two blocks of the same name in the output */
                return cli_usage_error(cmd, "--stepper: '%s' given twice", tok);
        if (*count >= max)
            return cli_usage_error(cmd, "--stepper: more than %d steppers", max);
        out[(*count)++] = t;
    }
    return 0; /* at least one: an empty list is an empty name above */
}

int cli_add_param(const char *cmd, cli_param_list *l, const char *pair)
{
    if ((size_t)l->count >= sizeof l->pair / sizeof *l->pair)
        return cli_usage_error(cmd, "too many --param options");
    l->pair[l->count++] = pair;
    return 0;
}

int cli_apply_params(const char *cmd, const ts_system_type *type, const cli_param_list *l,
                     ts_params *p)
{
    ts_params_init(p, type->params);
    for (int i = 0; i < l->count; i++)
        if (ts_params_set_pair(p, l->pair[i]))
            return cli_usage_error(cmd, "--param %s: %s (system '%s')", l->pair[i],
                                   ts_error_detail(), type->name);
    return 0;
}

int cli_make_system(const char *cmd, const ts_system_type *type, const ts_params *p,
                    ts_system **out)
{
    int s = ts_system_new(type, p, out);
    if (!s)
        return 0;
    if (ts_status_exit_code(s) == CLI_EXIT_USAGE)
        return cli_usage_error(cmd, "system '%s': %s", type->name, ts_error_detail());
    return cli_fail(cmd, s);
}

int cli_open_output(const char *cmd, const char *path, FILE **out)
{
    return cli_open_output_for(cmd, "out", path, out);
}

int cli_open_output_for(const char *cmd, const char *opt, const char *path, FILE **out)
{
    if (!path || strcmp(path, "-") == 0) {
        *out = stdout;
        return 0;
    }
    *out = fopen(path, "w");
    if (!*out) {
        fprintf(stderr, "tstep %s: --%s: cannot write '%s': %s\n", cmd, opt, path,
                strerror(errno));
        return CLI_EXIT_USAGE;
    }
    return 0;
}

/* A path's identity: an existing regular file's (dev, ino); else, for a
 * file not there yet, its directory's (dev, ino) and its last component.
 * NULL or "-": standard output when it is a regular file.  0 if none. */
typedef struct {
    dev_t dev;
    ino_t ino;
    char name[256];
} file_id;

static int get_file_id(const char *path, file_id *id, int depth)
{
    struct stat sb;
    id->name[0] = '\0';
    if (!path || strcmp(path, "-") == 0) {
        if (fstat(STDOUT_FILENO, &sb) || !S_ISREG(sb.st_mode))
            return 0;
    } else if (stat(path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode))
            return 0;
    } else if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        /* a link to a file not there yet: the file it will create */
        char target[4096], full[8200];
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len <= 0 || depth >= 8)
            return 0;
        target[len] = '\0';
        const char *slash = strrchr(path, '/');
        if (target[0] == '/' || !slash)
            snprintf(full, sizeof full, "%s", target);
        else
            snprintf(full, sizeof full, "%.*s/%s", (int)(slash - path), path, target);
        return get_file_id(full, id, depth + 1);
    } else {
        const char *slash = strrchr(path, '/');
        char dir[4096];
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else
            snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
        if (stat(dir, &sb))
            return 0;
        snprintf(id->name, sizeof id->name, "%s", slash ? slash + 1 : path);
    }
    id->dev = sb.st_dev;
    id->ino = sb.st_ino;
    return 1;
}

int cli_same_file(const char *a, const char *b)
{
    file_id x, y;
    return get_file_id(a, &x, 0) && get_file_id(b, &y, 0) && x.dev == y.dev && x.ino == y.ino &&
           strcmp(x.name, y.name) == 0;
}

int cli_distinct_outputs(const char *cmd, const cli_output *outs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (outs[i].path && outs[j].path && cli_same_file(outs[i].path, outs[j].path))
                return cli_usage_error(cmd, "--%s %s and --%s %s: the same file; give two files",
                                       outs[i].opt, outs[i].path, outs[j].opt, outs[j].path);
    return 0;
}

static void on_stop_signal(int sig) { ts_stop_signal = sig; }

void cli_catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART | SA_RESETHAND; /* a second signal ends the process */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cli_stopped(const char *cmd, const char *fmt, ...)
{
    int sig = (int)ts_stop_signal;
    va_list ap;
    fprintf(stderr, "tstep %s: stopped by %s; ", cmd,
            sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 128 + sig;
}

int cli_close_output(const char *cmd, const char *path, FILE *f)
{
    int bad = ferror(f);
    bad |= f == stdout ? fflush(f) : fclose(f);
    if (bad) {
        fprintf(stderr, "tstep %s: error writing '%s'\n", cmd, path ? path : "standard output");
        return CLI_EXIT_USAGE;
    }
    return 0;
}

void cli_common_init(cli_common *o, int frames_ok)
{
    memset(o, 0, sizeof *o);
    o->format = CLI_FORMAT_DAT;
    o->frames_ok = frames_ok;
    o->solver = ts_default_solver_options();
}

int cli_common_resolve(const char *cmd, const cli_common *o, const cli_lookup *to)
{
    if (to->stype && (cli_find_system(cmd, o->system, to->stype) ||
                      cli_apply_params(cmd, *to->stype, &o->params, to->p)))
        return CLI_EXIT_USAGE;
    if (to->types && cli_find_steppers(cmd, o->steppers, to->types, to->max, to->ntypes))
        return CLI_EXIT_USAGE;
    return 0;
}

int cli_common_steppers(const char *cmd, const cli_common *o, const cli_lookup *to)
{
    if (cli_common_resolve(cmd, o, to))
        return CLI_EXIT_USAGE;
    return cli_drop_unimplemented(cmd, to->types, to->ntypes, strcmp(o->steppers, "all") == 0);
}

int cli_points_table(const char *cmd, const cli_common *o, long points, const cli_lookup *to,
                     FILE **out)
{
    int rc = cli_common_steppers(cmd, o, to);
    if (rc)
        return rc;
    if (points > 1000000)
        return cli_usage_error(cmd, "--points: %ld is more than 1000000", points);
    return cli_open_output(cmd, o->out, out);
}

void cli_write_particles(FILE *out, const ts_system *sys, size_t columns, int digits)
{
    size_t np = sys->n / sys->dim;
    char line[8 * (TS_NUM_MAX + 1) + 2];
    if (columns > 8)
        columns = 8;
    for (size_t i = 0; i < np; i++) {
        char *p = line;
        for (size_t k = 0; k < columns; k++) {
            if (k)
                *p++ = ' ';
            p += ts_format_double(p, k < sys->dim ? sys->x[i * sys->dim + k] : 0.0, digits);
        }
        *p++ = '\n';
        if (sys->frame_row && (i + 1) % sys->frame_row == 0 && i + 1 < np)
            *p++ = '\n';
        fwrite(line, 1, (size_t)(p - line), out);
    }
}

int cli_drop_unimplemented(const char *cmd, const ts_stepper_type **types, int *ntypes, int all)
{
    for (int i = 0; i < *ntypes; i++) {
        double re, im;
        ts_error_clear();
        int s = ts_amplification(types[i], NULL, -0.1, 0.0, &re, &im);
        if (s != TS_ERR_NOT_IMPLEMENTED)
            continue;
        if (!all)
            return cli_fail(cmd, s);
        fprintf(stderr, "tstep %s: skipping '%s': not implemented\n", cmd, types[i]->name);
        memmove(&types[i], &types[i + 1], (size_t)(*ntypes - i - 1) * sizeof *types);
        (*ntypes)--, i--;
    }
    if (*ntypes == 0) {
        fprintf(stderr, "tstep %s: not implemented: every stepper is a skeleton\n", cmd);
        return ts_status_exit_code(TS_ERR_NOT_IMPLEMENTED);
    }
    return 0;
}

/* --- option tables (cli.h) ------------------------------------------------------ */

int cli_parse_format_opt(const char *cmd, const char *arg, void *common)
{
    cli_common *o = common;
    /* the formats this command writes, for either message */
    const char *writes = o->frames_ok && o->json_ok ? "dat, csv, frames, npy or json"
                         : o->frames_ok             ? "dat, csv, frames or npy"
                         : o->json_ok               ? "dat, csv or json"
                                                    : "dat or csv";
    cli_format f;
    if (cli_parse_format(arg, &f))
        return cli_usage_error(cmd, "--format: '%s' is not a format; %s writes %s", arg, cmd,
                               writes);
    if (((f == CLI_FORMAT_FRAMES || f == CLI_FORMAT_NPY) && !o->frames_ok) ||
        (f == CLI_FORMAT_JSON && !o->json_ok))
        return cli_usage_error(cmd, "--format: %s writes %s, not %s", cmd, writes, arg);
    o->format = f;
    o->format_given = 1;
    return 0;
}

const cli_table_format *cli_common_table_format(const cli_common *o)
{
    static const char *const names[] = {[CLI_FORMAT_DAT] = "dat", [CLI_FORMAT_CSV] = "csv",
                                        [CLI_FORMAT_JSON] = "json"};
    const cli_table_format *f = NULL;
    if (o->format_given && (size_t)o->format < sizeof names / sizeof *names)
        f = cli_table_format_find(names[o->format]);
    else if (!o->format_given)
        f = cli_table_format_of_path(o->out);
    return f ? f : cli_table_formats[0];
}

/* A relative tolerance below the unit roundoff cannot be met in double
 * precision: the iteration would run to its cap (or, with a huge cap, on
 * and on) */
static int reachable_tol(const char *cmd, const char *opt, const char *arg, double *tol)
{
    if (cli_parse_positive(cmd, opt, arg, tol))
        return CLI_EXIT_USAGE;
    if (*tol < DBL_EPSILON)
        return cli_usage_error(cmd,
                               "--%s: '%s' is below %.3g, the unit roundoff of double "
                               "precision: it cannot be reached",
                               opt, arg, DBL_EPSILON);
    return 0;
}

int cli_parse_cg_tol(const char *cmd, const char *arg, void *solver)
{
    ts_solver_options *o = solver;
    if (reachable_tol(cmd, "cg-tol", arg, &o->cg_tol))
        return CLI_EXIT_USAGE;
    if (!(o->cg_tol < 1.0))
        return cli_usage_error(cmd, "--cg-tol must be below 1 (a relative residual), got '%s'",
                               arg);
    return 0;
}

int cli_parse_newton_tol(const char *cmd, const char *arg, void *solver)
{
    ts_solver_options *o = solver;
    return reachable_tol(cmd, "newton-tol", arg, &o->newton_tol);
}

int cli_parse_threads(const char *cmd, const char *arg, void *unused)
{
    long n;
    (void)unused;
    if (cli_parse_count(cmd, "threads", arg, 1, &n))
        return CLI_EXIT_USAGE;
    if (n > 4096)
        return cli_usage_error(cmd, "--threads: '%s' is more than 4096", arg);
    long procs = sysconf(_SC_NPROCESSORS_ONLN);
    if (procs > 0 && n > procs)
        fprintf(stderr, "tstep %s: note: --threads %ld is more than the %ld processors here: "
                        "at most %ld work at once (the results are the same)\n",
                cmd, n, procs, procs);
    int s = ts_threads_set((int)n); /* more than 1 without libtstep-ext: refused */
    return s ? cli_fail(cmd, s) : 0;
}

/* --precond with a solver that takes none, in either order: refused */
static int precond_applies(const char *cmd, const ts_solver_options *o)
{
    if (o->precond && o->linear_solver && !o->linear_solver->uses_precond)
        return cli_usage_error(cmd,
                               "--precond %s: the linear solver '%s' uses no preconditioner "
                               "(--precond is for cg)",
                               o->precond->name, o->linear_solver->name);
    return 0;
}

int cli_parse_precond(const char *cmd, const char *arg, void *solver)
{
    ts_solver_options *o = solver;
    if (!(o->precond = ts_precond_find(arg)))
        return cli_usage_error(cmd, "--precond: unknown preconditioner '%s' (see tstep list)",
                               arg);
    return precond_applies(cmd, o);
}

int cli_parse_linear_solver(const char *cmd, const char *arg, void *solver)
{
    ts_solver_options *o = solver;
    if (!(o->linear_solver = ts_linsolve_find(arg)))
        return cli_usage_error(cmd, "--linear-solver: unknown solver '%s' (see tstep list)",
                               arg);
    return precond_applies(cmd, o);
}

static int parse_choice(const char *cmd, const cli_opt *e, const char *arg)
{
    for (int k = 0; e->names[k]; k++)
        if (strcmp(arg, e->names[k]) == 0) {
            *(int *)e->to = e->values ? e->values[k] : k;
            return 0;
        }
    return cli_usage_error(cmd, "--%s: '%s' is not %s", e->name, arg, e->says);
}

/* One option's value into its field; 0, or the message printed and 2. */
static int parse_value(const char *cmd, const cli_opt *e, const char *arg)
{
    long n;
    switch (e->kind) {
    case CLI_OPT_FLAG: *(int *)e->to = 1; return 0;
    case CLI_OPT_STRING: *(const char **)e->to = arg; return 0;
    case CLI_OPT_REAL: return cli_parse_real(cmd, e->name, arg, e->to);
    case CLI_OPT_POSITIVE: return cli_parse_positive(cmd, e->name, arg, e->to);
    case CLI_OPT_COUNT:
        if (cli_parse_count(cmd, e->name, arg, e->min, &n))
            return CLI_EXIT_USAGE;
        if (e->max > 0 && n > e->max)
            return cli_usage_error(cmd, "--%s: '%s' is more than %ld", e->name, arg, e->max);
        *(long *)e->to = n;
        return 0;
    case CLI_OPT_INT:
        if (cli_parse_count(cmd, e->name, arg, e->min, &n))
            return CLI_EXIT_USAGE;
        if (n > (e->max > 0 ? e->max : INT_MAX))
            return cli_usage_error(cmd, "--%s: '%s' is more than %ld", e->name, arg,
                                   e->max > 0 ? e->max : (long)INT_MAX);
        *(int *)e->to = (int)n;
        return 0;
    case CLI_OPT_CHOICE: return parse_choice(cmd, e, arg);
    case CLI_OPT_PARAM: return cli_add_param(cmd, e->to, arg);
    case CLI_OPT_CUSTOM: return e->parse(cmd, arg, e->to);
    case CLI_OPT_HELP: case CLI_OPT_END: break;
    }
    return CLI_EXIT_USAGE;
}

/* A single-valued option given twice is refused, naming both values (the
 * second would silently win); --param and its kin collect every value. */
static int refuse_repeat(const char *cmd, const cli_opt *e, const char **seen, const char *arg)
{
    const char *value = arg ? arg : "";
    if (e->kind == CLI_OPT_PARAM)
        return 0;
    if (*seen) {
        if (e->kind == CLI_OPT_FLAG)
            return cli_usage_error(cmd, "--%s given twice", e->name);
        return cli_usage_error(cmd, "--%s given twice ('%s' and '%s'); give it once", e->name,
                               *seen, value);
    }
    *seen = value;
    return 0;
}

/* --help or -h anywhere before "--": the help, whatever else is given (its
 * texts show the defaults, so it is printed before any option is parsed). */
static int asks_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

int cli_options(const char *cmd, int argc, char **argv, const cli_opt *opts, int *rc)
{
    struct option lo[CLI_MAX_OPTS + 1];
    int n = 0, c, help = -1;
    for (; opts[n].kind != CLI_OPT_END && n < CLI_MAX_OPTS; n++) {
        int flag = opts[n].kind == CLI_OPT_FLAG || opts[n].kind == CLI_OPT_HELP;
        lo[n] = (struct option){opts[n].name, flag ? no_argument : required_argument, NULL,
                                256 + n}; /* above every short option */
        if (opts[n].kind == CLI_OPT_HELP)
            help = n;
    }
    if (opts[n].kind != CLI_OPT_END) { /* a table past CLI_MAX_OPTS: a bug in tstep */
        fprintf(stderr, "tstep %s: more than %d options in the table\n", cmd, CLI_MAX_OPTS);
        return *rc = 1, 1;
    }
    lo[n] = (struct option){0, 0, 0, 0};
    if (help >= 0 && asks_help(argc, argv)) { /* before any value changes a default shown */
        opts[help].help(opts);
        return *rc = 0, 1;
    }
    const char *seen[CLI_MAX_OPTS] = {0}; /* each option's first value */
    optind = 0;
    opterr = 0;
    *rc = 0;
    while ((c = getopt_long(argc, argv, help >= 0 ? "h" : "", lo, NULL)) != -1) {
        const cli_opt *e = c == 'h' && help >= 0 ? &opts[help]
                           : c >= 256 && c < 256 + n ? &opts[c - 256]
                                                     : NULL;
        if (!e)
            return *rc = bad_option(cmd, argc, argv, lo), 1;
        if (e->kind == CLI_OPT_HELP) {
            e->help(opts);
            return 1;
        }
        /* `--stepper --dt 0.1`: getopt takes the next option as the value */
        if (optarg && optarg[0] == '-' && optarg[1] == '-' && isalpha((unsigned char)optarg[2]))
            return *rc = cli_usage_error(cmd, "--%s needs a value (got the option '%s')",
                                         e->name, optarg),
                   1;
        if ((*rc = refuse_repeat(cmd, e, &seen[e - opts], optarg)))
            return 1;
        if ((*rc = parse_value(cmd, e, optarg)))
            return 1;
        if (e->given)
            *e->given = 1;
    }
    if (optind < argc)
        return *rc = cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]), 1;
    return 0;
}

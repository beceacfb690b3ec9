/* Command-line helpers shared by the tstep commands (src/cmd_*.c).  The CLI
 * is the only part of tstep that parses text or prints for users.  Every
 * helper that rejects input prints "tstep CMD: ..." naming the bad option or
 * value and returns exit status 2. */
#ifndef TSTEP_CLI_H
#define TSTEP_CLI_H

#include <stdio.h>
#include "tstep/grade.h"
#include "tstep/numfmt.h"
#include "tstep/run.h"

#define CLI_EXIT_USAGE 2

typedef enum {
    CLI_FORMAT_DAT, CLI_FORMAT_CSV, CLI_FORMAT_FRAMES, CLI_FORMAT_NPY, CLI_FORMAT_JSON
} cli_format;

/* A command: its name, one-line summary, entry point and help printer. */
typedef struct {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv);
} cli_command;

/* The command table (tstep_main.c, from commands.h), NULL-terminated. */
extern const cli_command cli_commands[];

/* Print "tstep CMD: <message>" and a pointer to --help; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Print "tstep CMD: <status message>: <detail>"; returns the exit code. */
int cli_fail(const char *cmd, int status);

/* Parsers; each returns 0 or prints and returns 2. */
int cli_parse_real(const char *cmd, const char *opt, const char *text, double *out);
int cli_parse_positive(const char *cmd, const char *opt, const char *text, double *out);
int cli_parse_count(const char *cmd, const char *opt, const char *text, long min, long *out);
/* The format named `text`: 0, or -1 for no format of that name (no message). */
int cli_parse_format(const char *text, cli_format *out);

/* Look up a system by name; an unknown name lists the valid ones. */
int cli_find_system(const char *cmd, const char *name, const ts_system_type **out);

/* Parse "a,b,c" or "all" into stepper types (at most `max`). */
int cli_find_steppers(const char *cmd, const char *list, const ts_stepper_type **out, int max,
                      int *count);

/* Skeleton steppers (one step of x' = -0.1 x returns TS_ERR_NOT_IMPLEMENTED):
 * with `all` (the list was "all") they are dropped from types[0..*ntypes)
 * with a note on stderr; named, they are an error: prints "tstep CMD: not
 * implemented: ..." and returns 1. */
int cli_drop_unimplemented(const char *cmd, const ts_stepper_type **types, int *ntypes,
                           int all);

/* Collected --param key=value pairs, applied once the system is known. */
typedef struct {
    const char *pair[TS_MAX_PARAMS * 2];
    int count;
} cli_param_list;

int cli_add_param(const char *cmd, cli_param_list *l, const char *pair);
int cli_apply_params(const char *cmd, const ts_system_type *type, const cli_param_list *l,
                     ts_params *p);

/* Create a system; on failure prints and returns the exit code. */
int cli_make_system(const char *cmd, const ts_system_type *type, const ts_params *p,
                    ts_system **out);

/* Open --out (NULL or "-" for stdout); prints and returns 2 on failure. */
int cli_open_output(const char *cmd, const char *path, FILE **out);
/* The same for an output named by another option (its name without "--"). */
int cli_open_output_for(const char *cmd, const char *opt, const char *path, FILE **out);
/* 1 when paths a and b (NULL or "-": standard output) name one regular
 * file, existing (same st_dev and st_ino) or about to be created. */
int cli_same_file(const char *a, const char *b);
/* An output of a command: its option (without "--") and path (NULL: not
 * written; "-": standard output). */
typedef struct {
    const char *opt, *path;
} cli_output;
/* 0 when no two of outs[0..n) name one file (cli_same_file); else prints
 * "tstep CMD: --A FILE and --B FILE: the same file; give two files", 2. */
int cli_distinct_outputs(const char *cmd, const cli_output *outs, size_t n);
/* Close an output opened by cli_open_output; returns 0 or prints and 2. */
int cli_close_output(const char *cmd, const char *path, FILE *f);

/* SIGINT and SIGTERM set ts_stop_signal (tstep/run.h), so a long
 * computation stops after the step under way; a second signal ends the
 * process at once.  cli_stopped prints "tstep CMD: stopped by SIGINT; ..."
 * and returns the exit status 128 + the signal (130 INT, 143 TERM). */
void cli_catch_stop_signals(void);
int cli_stopped(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A particle system's positions, a line per particle with `columns` (<= 8)
 * coordinates at `digits` significant digits (coordinates past sys->dim
 * written as 0), and a blank line after every frame_row particles of a grid,
 * so that gnuplot's splot draws it as a mesh. */
void cli_write_particles(FILE *out, const ts_system *sys, size_t columns, int digits);

/* The options most commands share, filled by the entries CLI_OPTS_* below. */
typedef struct {
    const char *system, *steppers, *out;
    cli_param_list params;
    cli_format format;
    int format_given; /* --format was given (else --out's extension chooses: run, tables) */
    int frames_ok; /* --format frames allowed for this command */
    int json_ok;   /* --format json allowed (set after cli_common_init) */
    int plot;
    ts_solver_options solver;
} cli_common;

void cli_common_init(cli_common *o, int frames_ok);
/* The table format (table.h) of a command's --out: --format's, else the
 * one its extension names, else dat. */
const struct cli_table_format *cli_common_table_format(const cli_common *o);
/* Where the lookups put what --system, --param and --stepper name: the
 * system and its parameters when `stype` is not NULL, the steppers (at most
 * max, their count in *ntypes) when `types` is not NULL. */
typedef struct {
    const ts_system_type **stype;
    ts_params *p;
    const ts_stepper_type **types;
    int max, *ntypes;
} cli_lookup;
/* Look up --system with its parameters and --stepper into `to`. */
int cli_common_resolve(const char *cmd, const cli_common *o, const cli_lookup *to);
/* The same, then the skeleton steppers dropped (cli_drop_unimplemented);
 * 0 or the exit status, printed. */
int cli_common_steppers(const char *cmd, const cli_common *o, const cli_lookup *to);
/* A table of --points rows per stepper (phase, amplification): the
 * steppers (cli_common_steppers), --points at most 1000000, --out opened. */
int cli_points_table(const char *cmd, const cli_common *o, long points, const cli_lookup *to,
                     FILE **out);

/* --- option tables ---------------------------------------------------------------
 * A command declares its options as a table of cli_opt, ended by CLI_END,
 * and hands it with argv to cli_options, which parses every option with
 * getopt_long (any unambiguous prefix, "--name value" or "--name=value") and
 * fills each entry's field `to` by its kind.  A bad value prints "tstep CMD:
 * --NAME: ..." naming the value and makes the command exit 2; so do unknown
 * options, ambiguous prefixes (the candidates named), missing values, values
 * given to flags and positional arguments.  The shared options are entries
 * defined once here (CLI_OPTS_SYSTEM, CLI_OPTS_SOLVER, ...): a command lists
 * those it accepts.
 *
 * The table is also the help: each entry names its value (`arg`, e.g. "H")
 * and says what it does (`doc`, where "%D" stands for the value the
 * option's field holds before parsing: its default; or `doc_fn`, where the
 * text depends on the command or a registry), and cli_print_options writes
 * the options section of --help from it, in the table's order.  A command's
 * help function prints its usage and description, cli_print_options(opts),
 * and whatever follows (columns, formats). */
typedef enum {
    CLI_OPT_END = 0,
    CLI_OPT_FLAG,     /* int: set to 1; takes no value */
    CLI_OPT_STRING,   /* const char *: the value as given */
    CLI_OPT_REAL,     /* double: a finite number */
    CLI_OPT_POSITIVE, /* double: a finite number > 0 */
    CLI_OPT_COUNT,    /* long: a whole number >= min (and <= max where max > 0) */
    CLI_OPT_INT,      /* int: a whole number >= min, <= max (max 0: INT_MAX) */
    CLI_OPT_CHOICE,   /* int: values[k] (or k) for the value equal to names[k] */
    CLI_OPT_PARAM,    /* cli_param_list: key=value appended; repeatable, order kept */
    CLI_OPT_CUSTOM,   /* parse(cmd, value, to) checks and stores the value */
    CLI_OPT_HELP,     /* help(table) prints, the command exits 0; also -h */
} cli_opt_kind;

typedef struct cli_opt cli_opt;
struct cli_opt {
    const char *name; /* without "--" */
    cli_opt_kind kind;
    void *to;         /* the field it fills (see the kinds) */
    long min, max;    /* COUNT and INT */
    const char *const *names; /* CHOICE: the accepted values, NULL-terminated */
    const int *values;        /* CHOICE: what each stores (NULL: its index) */
    const char *says;         /* CHOICE: the list in "--NAME: 'X' is not SAYS" */
    int (*parse)(const char *cmd, const char *arg, void *to); /* CUSTOM: 0, or prints and 2 */
    int *given;               /* set to 1 when the option is given (or NULL) */
    void (*help)(const cli_opt *opts); /* HELP: prints the help of this table */
    const char *arg;          /* the value's name in the help ("H", "FILE"); flags: NULL */
    const char *doc;          /* what the option does, for the help ('\n': a new line) */
    /* or the text written into buf (size n) when it depends on the command */
    void (*doc_fn)(const cli_opt *e, char *buf, size_t n);
    cli_opt_kind shows;       /* CUSTOM: the kind whose type `to` has, for "%D" */
};

/* Entries by kind (designated: the fields not named are 0), each with the
 * name of its value A and its help text D.  A field set when the option is
 * given, or another field, is added by writing the entry out:
 * {.name = "dt", .kind = CLI_OPT_POSITIVE, .to = &dt, .given = &have_dt, .arg = "H",
 *  .doc = ...}. */
#define CLI_FLAG(n, p, D) {.name = (n), .kind = CLI_OPT_FLAG, .to = (p), .doc = (D)}
#define CLI_STRING(n, p, A, D) {.name = (n), .kind = CLI_OPT_STRING, .to = (p), .arg = (A), .doc = (D)}
#define CLI_REAL(n, p, A, D) {.name = (n), .kind = CLI_OPT_REAL, .to = (p), .arg = (A), .doc = (D)}
#define CLI_POSITIVE(n, p, A, D)                                                          \
    {.name = (n), .kind = CLI_OPT_POSITIVE, .to = (p), .arg = (A), .doc = (D)}
#define CLI_COUNT(n, p, lo, A, D)                                                         \
    {.name = (n), .kind = CLI_OPT_COUNT, .to = (p), .min = (lo), .arg = (A), .doc = (D)}
#define CLI_INT(n, p, lo, A, D)                                                           \
    {.name = (n), .kind = CLI_OPT_INT, .to = (p), .min = (lo), .arg = (A), .doc = (D)}
#define CLI_CHOICE(n, p, list, text, A, D)                                                \
    {.name = (n), .kind = CLI_OPT_CHOICE, .to = (p), .names = (list), .says = (text),     \
     .arg = (A), .doc = (D)}
#define CLI_CUSTOM(n, p, fn, A, D)                                                        \
    {.name = (n), .kind = CLI_OPT_CUSTOM, .to = (p), .parse = (fn), .arg = (A), .doc = (D)}
/* --help and -h */
#define CLI_HELP(fn) {.name = "help", .kind = CLI_OPT_HELP, .help = (fn), .doc = "print this help"}
#define CLI_END {.kind = CLI_OPT_END}

int cli_parse_format_opt(const char *cmd, const char *arg, void *common);
int cli_parse_cg_tol(const char *cmd, const char *arg, void *solver);
int cli_parse_newton_tol(const char *cmd, const char *arg, void *solver);
int cli_parse_threads(const char *cmd, const char *arg, void *unused);
int cli_parse_precond(const char *cmd, const char *arg, void *solver);
int cli_parse_linear_solver(const char *cmd, const char *arg, void *solver);
/* The help texts that depend on the command (its formats, its solver
 * defaults) or on a registry (the linear solvers, the preconditioners). */
void cli_doc_format(const cli_opt *e, char *buf, size_t n);
void cli_doc_newton_tol(const cli_opt *e, char *buf, size_t n);
void cli_doc_cg_tol(const cli_opt *e, char *buf, size_t n);
void cli_doc_cg_max(const cli_opt *e, char *buf, size_t n);
void cli_doc_linear_solver(const cli_opt *e, char *buf, size_t n);
void cli_doc_precond(const cli_opt *e, char *buf, size_t n);

/* The shared options, each an entry (or entries) filling cli_common *o. */
#define CLI_OPTS_SYSTEM(o)                                                                \
    CLI_STRING("system", &(o)->system, "S", "the system (see 'tstep list')")
/* --stepper LIST; WHEN says "required" or what the default is */
#define CLI_OPTS_STEPPER(o, WHEN)                                                         \
    CLI_STRING("stepper", &(o)->steppers, "LIST",                                         \
               "steppers, comma-separated, or all (see 'tstep list'; " WHEN ")")
#define CLI_OPTS_PARAM(o)                                                                 \
    {.name = "param", .kind = CLI_OPT_PARAM, .to = &(o)->params, .arg = "key=value",      \
     .doc = "set a system parameter (repeatable; 'tstep list' shows each system's)"}
#define CLI_OPTS_OUT(o)                                                                   \
    CLI_STRING("out", &(o)->out, "FILE", "write to FILE (default: standard output)")
#define CLI_OPTS_FORMAT(o)                                                                \
    {.name = "format", .kind = CLI_OPT_CUSTOM, .to = (o), .parse = cli_parse_format_opt,  \
     .arg = "F", .doc_fn = cli_doc_format}
#define CLI_OPTS_PLOT(o)                                                                  \
    CLI_FLAG("plot", &(o)->plot, "draw the result in the terminal with gnuplot (dumb "    \
                                 "terminal); without --out the table is then not written")
/* --newton-tol, --newton-max, --cg-tol, --cg-max, --precond and
 * --linear-solver (names from tstep/linsolve.h's registries), and --threads
 * (which sets the thread count at once, ts_threads_set).  Their help gives
 * the command's defaults: the values in o->solver when the table is made. */
#define CLI_OPTS_SOLVER(o)                                                                \
    {.name = "newton-tol", .kind = CLI_OPT_CUSTOM, .to = &(o)->solver,                    \
     .parse = cli_parse_newton_tol, .arg = "X", .doc_fn = cli_doc_newton_tol},            \
        CLI_INT("newton-max", &(o)->solver.newton_max, 1, "N",                            \
                "Newton's iteration cap per step (default %D)"),                          \
        {.name = "cg-tol", .kind = CLI_OPT_CUSTOM, .to = &(o)->solver,                    \
         .parse = cli_parse_cg_tol, .arg = "X", .doc_fn = cli_doc_cg_tol},                \
        {.name = "cg-max", .kind = CLI_OPT_INT, .to = &(o)->solver.cg_max, .min = 1,      \
         .arg = "N", .doc_fn = cli_doc_cg_max},                                           \
        {.name = "linear-solver", .kind = CLI_OPT_CUSTOM, .to = &(o)->solver,             \
         .parse = cli_parse_linear_solver, .arg = "NAME", .doc_fn = cli_doc_linear_solver},\
        {.name = "precond", .kind = CLI_OPT_CUSTOM, .to = &(o)->solver,                   \
         .parse = cli_parse_precond, .arg = "NAME", .doc_fn = cli_doc_precond},           \
        CLI_CUSTOM("threads", NULL, cli_parse_threads, "N",                               \
                   "threads for forces, products and vector operations, 1 to 4096 "       \
                   "(default: OMP_NUM_THREADS, else 1); results identical for any N")

/* The options section of a command's help, from its table: one entry per
 * option in the table's order, "--name ARG" and its text wrapped to 79
 * columns. */
void cli_print_options(const cli_opt *opts);

/* Parse argv[1..argc) by the table `opts`.  Returns 0 when the command goes
 * on; else 1 with *rc the command's exit status (0 after --help, 2 after
 * an error, printed). */
int cli_options(const char *cmd, int argc, char **argv, const cli_opt *opts, int *rc);

/* Keep a plugin file for grade's worker instead of loading it here
 * (src/cmd_grade.c), from --plugin or TSTEP_PLUGINS (from_env); 0, or 2
 * with a message. */
int cli_defer_plugin(const char *path, int from_env);

/* grade's results and batch mode (src/cmd_grade_batch.c). */
int cli_grade_write_results(const char *cmd, const char *dir, const ts_grade_report *r, int n,
                            double seconds);
typedef struct {
    const char *submissions; /* a folder: a .c, a .so, or a folder of them per student */
    const char *spec, *out_dir;
    int jobs, sandbox;
    const char *const *pass; /* options handed to each submission's grade */
    int npass;
} cli_grade_batch;
int cli_grade_batch_run(const char *cmd, const cli_grade_batch *b);

/* Entries before CLI_END: at most CLI_MAX_OPTS (more: exit 1, a bug). */
#define CLI_MAX_OPTS 64

#endif

/* Command-line helpers shared by the tstep commands (src/cmd_*.c).  The CLI
 * is the only part of tstep that parses text or prints for users.  Every
 * helper that rejects input prints "tstep CMD: ..." naming the bad option or
 * value and returns exit status 2. */
#ifndef TSTEP_CLI_H
#define TSTEP_CLI_H

#include <getopt.h>
#include <stdio.h>
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

/* The command table (src/main.c), NULL-terminated. */
extern const cli_command cli_commands[];

/* Print "tstep CMD: <message>" and a pointer to --help; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Print "tstep CMD: <status message>: <detail>"; returns the exit code. */
int cli_fail(const char *cmd, int status);

/* Report an unknown or malformed option from getopt_long's '?' return:
 * a missing value, a value given to a flag, an ambiguous prefix (naming
 * the candidates from the table `opts`) or an unknown option.
 * cli_bad_option uses the calling command's table, which is named opts. */
int cli_bad_option_in(const char *cmd, int argc, char **argv, const struct option *opts);
#define cli_bad_option(cmd, argc, argv) cli_bad_option_in(cmd, argc, argv, opts)

/* Parsers; each returns 0 or prints and returns 2. */
int cli_parse_real(const char *cmd, const char *opt, const char *text, double *out);
int cli_parse_positive(const char *cmd, const char *opt, const char *text, double *out);
int cli_parse_count(const char *cmd, const char *opt, const char *text, long min, long *out);
/* A count stored in an int: min..INT_MAX. */
int cli_parse_int(const char *cmd, const char *opt, const char *text, int min, int *out);
int cli_parse_format(const char *cmd, const char *text, cli_format *out);

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

/* The options most commands share: --system, --stepper, --param, --out,
 * --format, --plot and the solver options.  A command's getopt loop hands
 * each option to cli_common_option first (their codes: 's', 'i', 'p', 'o',
 * 'f', 'P' and CLI_SOLVER_LONGOPTS), then handles its own. */
typedef struct {
    const char *system, *steppers, *out;
    cli_param_list params;
    cli_format format;
    int frames_ok; /* --format frames allowed for this command */
    int json_ok;   /* --format json allowed (set after cli_common_init) */
    int plot;
    ts_solver_options solver;
} cli_common;

void cli_common_init(cli_common *o, int frames_ok);
/* -1 when c is not a common option; else 0, or 2 after printing the error. */
int cli_common_option(const char *cmd, int c, const char *arg, cli_common *o);
/* Look up --system (when `stype` is not NULL) with its parameters into `p`,
 * and --stepper into types[0..max) (when `types` is not NULL). */
int cli_common_resolve(const char *cmd, const cli_common *o, const ts_system_type **stype,
                       ts_params *p, const ts_stepper_type **types, int max, int *ntypes);

/* Parse the solver options --newton-tol, --newton-max, --cg-tol, --cg-max,
 * --precond and --linear-solver (names from tstep/linsolve.h's registries), and
 * --threads (which sets the thread count at once, ts_threads_set). */
#define CLI_SOLVER_LONGOPTS                                                  \
    {"newton-tol", required_argument, 0, 1001},                              \
        {"newton-max", required_argument, 0, 1002},                          \
        {"cg-tol", required_argument, 0, 1003}, {"cg-max", required_argument, 0, 1004}, \
        {"precond", required_argument, 0, 1006},                             \
        {"linear-solver", required_argument, 0, 1007},                       \
        {"threads", required_argument, 0, 1005}
int cli_solver_option(const char *cmd, int code, const char *arg, ts_solver_options *o);
#define CLI_SOLVER_HELP                                                                   \
    "  --newton-tol X  Newton stops when the residual r of the implicit equation has\n"      \
    "                  |M^-1 r|_inf <= X max(1, |v|_inf) (order 1: |x|_inf), or a full\n"  \
    "                  update is that small (default 1e-8)\n"                              \
    "  --newton-max N  Newton iteration cap (default 20)\n"                                \
    "  --cg-tol X      linear solves: relative residual, 0 < X < 1 (default: automatic,\n" \
    "                  the Eisenstat-Walker rule in Newton, 1e-10 for a linearized step)\n" \
    "  --cg-max N      linear iteration cap (default 2 * dimension + 20)\n"                \
    "  --linear-solver NAME  cg (default) or direct (sparse Cholesky); see tstep list\n"  \
    "  --precond NAME  CG's preconditioner: jacobi (default), block-jacobi, ic0, amg\n"   \
    "  --threads N     threads for forces, products and vector operations (default:\n"     \
    "                  OMP_NUM_THREADS, else 1); results identical for any N\n"

#endif

/* tstep phase: phase and amplitude of each stepper on the undamped
 * oscillator against w h, measured by running it (see tstep/phase.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "table.h"
#include "tstep/phase.h"

#define MAX_STEPPERS 64

static void help(const cli_opt *opts)
{
    printf("Usage: tstep phase [--stepper A,B,...|all] [--wh-max X] [--points N]\n"
           "                   [--format dat|csv|json] [--out FILE]\n"
           "\n"
           "Phase and amplitude of each stepper on the undamped oscillator x'' = -w^2 x,\n"
           "measured by running it: one step of size h from (x, v) = (1, 0) and from\n"
           "(0, 1) gives the one-step matrix S, and its eigenvalue mu with Im mu >= 0 is\n"
           "what a step does to the oscillation.  For a stepper that treats (x, v) as one\n"
           "vector, mu = R(i w h), its amplification factor on the imaginary axis.\n"
           "Exact: |mu| = 1 and arg mu = w h.  Where S has real eigenvalues (no\n"
           "oscillation left) mu is the one of larger modulus and arg mu is 0 or pi.\n");
    cli_print_options(opts);
    printf("\n"
           "Columns: stepper, wh, abs_R (|mu|), arg_R (arg mu, radians), phase_error\n"
           "(arg mu - w h per step; negative: the numerical oscillation lags),\n"
           "amplitude_error (|mu| - 1 per step; negative: it decays).  csv: a header\n"
           "row; dat: a '#' header, then per stepper a block starting '# NAME', blocks\n"
           "two blank lines apart (gnuplot: index 'NAME'); json: the columns, then per\n"
           "stepper its rows (docs/formats.md).  A step that fails gives nan (json:\n"
           "null).\n");
}

int cmd_phase(int argc, char **argv)
{
    const char *cmd = "phase";
    double wh_max = 3.0;
    long points = 300;
    int rc;
    cli_common o;
    cli_common_init(&o, 0);
    o.json_ok = 1;
    o.solver.newton_tol = 1e-13;
    o.solver.cg_tol = 1e-14;
    const cli_opt opts[] = {
        CLI_OPTS_STEPPER(&o, "default all"),
        CLI_POSITIVE("wh-max", &wh_max, "X", "w h runs over (0, X] (default %D)"),
        CLI_COUNT("points", &points, 1, "N",
                  "values of w h, evenly spaced, the first X/N (default 300)"),
        CLI_OPTS_FORMAT(&o), CLI_OPTS_OUT(&o), CLI_OPTS_SOLVER(&o), CLI_HELP(help), CLI_END};
    if (cli_options(cmd, argc, argv, opts, &rc))
        return rc;
    if (!o.steppers)
        o.steppers = "all";
    const ts_stepper_type *types[MAX_STEPPERS];
    int ntypes;
    FILE *out;
    cli_lookup to = {.types = types, .max = MAX_STEPPERS, .ntypes = &ntypes};
    if ((rc = cli_points_table(cmd, &o, points, &to, &out)))
        return rc;
    static const char *const cols[] = {"wh", "abs_R", "arg_R", "phase_error",
                                       "amplitude_error"};
    static const int digits[] = {10, 15, 15, 15, 15};
    cli_table t = {.format = cli_common_table_format(&o), .out = out, .command = cmd,
                   .label = "stepper", .cols = cols, .digits = digits, .ncols = 5};
    cli_table_begin(&t);
    for (int i = 0; i < ntypes; i++) {
        cli_table_block(&t, types[i]->name);
        for (long j = 1; j <= points; j++) {
            double wh = wh_max * (double)j / (double)points, a, g;
            ts_phase_response(types[i], &o.solver, wh, &a, &g);
            cli_table_row(&t, (double[]){wh, a, g, g - wh, a - 1.0});
        }
    }
    cli_table_end(&t);
    return cli_close_output(cmd, o.out, out);
}

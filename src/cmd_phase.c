/* tstep phase: phase and amplitude of each stepper on the undamped
 * oscillator against w h, measured by running it (see tstep/phase.h). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "tstep/phase.h"

#define MAX_STEPPERS 64

static void help(void)
{
    printf("Usage: tstep phase --stepper A,B,...|all [--wh-max X] [--points N]\n"
           "                   [--format dat|csv] [--out FILE]\n"
           "\n"
           "Phase and amplitude of each stepper on the undamped oscillator x'' = -w^2 x,\n"
           "measured by running it: one step of size h from (x, v) = (1, 0) and from\n"
           "(0, 1) gives the one-step matrix S, and its eigenvalue mu with Im mu >= 0 is\n"
           "what a step does to the oscillation.  For a stepper that treats (x, v) as one\n"
           "vector, mu = R(i w h), its amplification factor on the imaginary axis.\n"
           "Exact: |mu| = 1 and arg mu = w h.  Where S has real eigenvalues (no\n"
           "oscillation left) mu is the one of larger modulus and arg mu is 0 or pi.\n"
           "\n"
           "  --stepper LIST   steppers, or all (default all)\n"
           "  --wh-max X       w h runs over (0, X] (default 3)\n"
           "  --points N       values of w h, evenly spaced, the first X/N (default 300)\n"
           "\n"
           "Columns: stepper, wh, abs_R (|mu|), arg_R (arg mu, radians), phase_error\n"
           "(arg mu - w h per step; negative: the numerical oscillation lags),\n"
           "amplitude_error (|mu| - 1 per step; negative: it decays).  csv: a header\n"
           "row; dat: a '#' header, then per stepper a block starting '# NAME', blocks\n"
           "two blank lines apart (gnuplot: index 'NAME').  A step that fails gives nan.\n"
           "Implicit steppers run with Newton and linear tolerances 1e-13 unless given.\n"
           CLI_SOLVER_HELP);
}

int cmd_phase(int argc, char **argv)
{
    static const struct option opts[] = {
        {"stepper", required_argument, 0, 'i'}, {"wh-max", required_argument, 0, 'z'},
        {"points", required_argument, 0, 'n'},  {"format", required_argument, 0, 'f'},
        {"out", required_argument, 0, 'o'},     {"help", no_argument, 0, 'h'},
        CLI_SOLVER_LONGOPTS,                    {0, 0, 0, 0}};
    const char *cmd = "phase";
    double wh_max = 3.0;
    long points = 300;
    int c;
    cli_common o;
    cli_common_init(&o, 0);
    o.solver.newton_tol = 1e-13;
    o.solver.cg_tol = 1e-14;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = cli_common_option(cmd, c, optarg, &o);
        if (bad < 0) {
            bad = 0;
            switch (c) {
            case 'z': bad = cli_parse_positive(cmd, "wh-max", optarg, &wh_max); break;
            case 'n': bad = cli_parse_count(cmd, "points", optarg, 1, &points); break;
            case 'h': help(); return 0;
            default: return cli_bad_option(cmd, argc, argv);
            }
        }
        if (bad)
            return bad;
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!o.steppers)
        o.steppers = "all";
    const ts_stepper_type *types[MAX_STEPPERS];
    int ntypes;
    if (cli_common_resolve(cmd, &o, NULL, NULL, types, MAX_STEPPERS, &ntypes))
        return CLI_EXIT_USAGE;
    int skeleton = cli_drop_unimplemented(cmd, types, &ntypes, strcmp(o.steppers, "all") == 0);
    if (skeleton)
        return skeleton;
    if (points > 1000000)
        return cli_usage_error(cmd, "--points: %ld is more than 1000000", points);

    FILE *out;
    int rc = cli_open_output(cmd, o.out, &out);
    if (rc)
        return rc;
    int csv = o.format == CLI_FORMAT_CSV;
    const char *sep = csv ? "," : " ";
    fputs(csv ? "stepper,wh,abs_R,arg_R,phase_error,amplitude_error\n"
              : "# stepper wh abs_R arg_R phase_error amplitude_error\n",
          out);
    for (int i = 0; i < ntypes; i++) {
        if (!csv)
            fprintf(out, "%s# %s\n", i ? "\n\n" : "", types[i]->name);
        for (long j = 1; j <= points; j++) {
            double wh = wh_max * (double)j / (double)points, a, g;
            ts_phase_response(types[i], &o.solver, wh, &a, &g);
            fprintf(out, "%s%s%.10g%s%.15g%s%.15g%s%.15g%s%.15g\n", types[i]->name, sep, wh,
                    sep, a, sep, g, sep, g - wh, sep, a - 1.0);
        }
    }
    return cli_close_output(cmd, o.out, out);
}

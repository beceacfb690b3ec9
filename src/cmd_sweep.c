/* tstep sweep: error at t_end against step size for one or more steppers,
 * and the observed order of each (least-squares slope of log error against
 * log dt over the points not excluded; see src/sweep.c for the rules). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "cli_gnuplot.h"
#include "cli_progress.h"

#define MAX_LEVELS 64
#define MAX_STEPPERS 64

static const char *excluded_name(int e)
{
    return e == 1 ? "round-off" : e == 2 ? "unstable" : "";
}

/* --plot: log-log error against dt, a line per stepper, its observed order
 * in the key. */
static int draw_plot(const char *cmd, FILE *data, const char *system, double t_end,
                     const ts_stepper_type *const *types, const double *order,
                     const int *used, int ntypes)
{
    FILE *gp;
    int rc = cli_gnuplot_dumb(cmd, &gp);
    if (rc)
        return rc;
    cli_gnuplot_datablock(gp, "sweep", data);
    char title[256];
    snprintf(title, sizeof title, "%s: max-norm error at t = %g against dt", system, t_end);
    fputs("set title ", gp);
    cli_gnuplot_quote(gp, title);
    fputs("\nset logscale xy\nset format xy '%.0e'\nset xlabel 'dt'\n"
          "set key below\nplot",
          gp);
    /* Only steppers with points in the fit have a block in `data`. */
    for (int i = 0, block = 0; i < ntypes; i++) {
        if (used[i] == 0)
            continue;
        char key[96];
        if (isnan(order[i]))
            snprintf(key, sizeof key, "%s", types[i]->name);
        else
            snprintf(key, sizeof key, "%s p=%.2f", types[i]->name, order[i]);
        fprintf(gp, "%s $sweep index %d using 1:2 with linespoints title ", block ? "," : "",
                block);
        block++;
        cli_gnuplot_quote(gp, key);
    }
    fputc('\n', gp);
    return cli_gnuplot_close(cmd, gp);
}

static void help(void)
{
    printf("Usage: tstep sweep --system S --stepper A,B,...|all --dt-min H0 --dt-max H1\n"
           "                   [--levels L] --t-end T [--param key=value]...\n"
           "                   [--format dat|csv] [--out FILE] [--plot]\n"
           "\n"
           "For each stepper, run to T with L step sizes spaced geometrically from H1\n"
           "down to H0, each adjusted to T/round(T/H) so a whole number of steps lands\n"
           "exactly on T, and record the max-norm error of the state (x and v) at T\n"
           "against the system's exact solution.\n"
           "\n"
           "  --levels L    number of step sizes (default 7, at most 64)\n"
           "  --plot        draw error against dt (log-log) in the terminal with gnuplot;\n"
           "                without --out the table is then not written\n"
           CLI_SOLVER_HELP
           "\n"
           "Output: csv columns\n"
           "  stepper,dt,steps,error,excluded,observed_order,force_evals,\n"
           "  jacobian_products,newton_iters,linear_iters,seconds\n"
           "dat the same columns under a '#' header, one gnuplot index block (two blank\n"
           "lines apart) per stepper.  'excluded' is empty (dat: '-'), 'round-off'\n"
           "(error within 100*steps*eps of the solution's size) or 'unstable' (run\n"
           "failed or relative error > 1).  observed_order is the stepper's fitted\n"
           "order over this sweep (the same on each of its rows; nan if fewer than two\n"
           "points remain).  force_evals .. linear_iters are the run's totals; seconds\n"
           "is the wall-clock time of its stepping (runs under 2 ms are repeated and\n"
           "the mean taken).\n"
           "Standard error gets a table of observed orders over the points not excluded,\n"
           "and a progress line while it works when it is a terminal.\n"
           "With --stepper all, steppers the system cannot run (an implicit stepper on a\n"
           "system without Jacobian products, an energy-minimizing one on a system without\n"
           "energy) are skipped with a note.\n");
}

int cmd_sweep(int argc, char **argv)
{
    static const struct option opts[] = {
        {"system", required_argument, 0, 's'}, {"stepper", required_argument, 0, 'i'},
        {"dt-min", required_argument, 0, 'a'}, {"dt-max", required_argument, 0, 'b'},
        {"levels", required_argument, 0, 'l'}, {"t-end", required_argument, 0, 'T'},
        {"param", required_argument, 0, 'p'},  {"format", required_argument, 0, 'f'},
        {"out", required_argument, 0, 'o'},    {"help", no_argument, 0, 'h'},
        {"plot", no_argument, 0, 'P'},
        CLI_SOLVER_LONGOPTS,                   {0, 0, 0, 0}};
    const char *cmd = "sweep";
    double dt_min = 0, dt_max = 0, t_end = 0;
    long levels = 7;
    int c;
    cli_common o;
    cli_common_init(&o, 0);

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = cli_common_option(cmd, c, optarg, &o);
        if (bad < 0) {
            bad = 0;
            switch (c) {
            case 'a': bad = cli_parse_positive(cmd, "dt-min", optarg, &dt_min); break;
            case 'b': bad = cli_parse_positive(cmd, "dt-max", optarg, &dt_max); break;
            case 'l': bad = cli_parse_count(cmd, "levels", optarg, 1, &levels); break;
            case 'T': bad = cli_parse_positive(cmd, "t-end", optarg, &t_end); break;
            case 'h': help(); return 0;
            default: return cli_bad_option(cmd, argc, argv);
            }
        }
        if (bad)
            return bad;
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    const ts_system_type *stype;
    const ts_stepper_type *types[MAX_STEPPERS];
    int ntypes;
    ts_params p;
    if (cli_common_resolve(cmd, &o, &stype, &p, types, MAX_STEPPERS, &ntypes))
        return CLI_EXIT_USAGE;
    if (dt_min == 0)
        return cli_usage_error(cmd, "--dt-min is required");
    if (dt_max == 0)
        return cli_usage_error(cmd, "--dt-max is required");
    if (t_end == 0)
        return cli_usage_error(cmd, "--t-end is required");
    if (dt_min > dt_max)
        return cli_usage_error(cmd, "--dt-min %g is larger than --dt-max %g", dt_min, dt_max);
    if (dt_max > t_end)
        return cli_usage_error(cmd, "--dt-max %g is larger than --t-end %g", dt_max, t_end);
    if (levels > MAX_LEVELS)
        return cli_usage_error(cmd, "--levels: %ld is more than %d", levels, MAX_LEVELS);
    if (t_end / dt_min > 1e9)
        return cli_usage_error(cmd, "--t-end / --dt-min is more than 1e9 steps");

    /* Probe the system once: it must exist with these parameters and have an
     * exact solution; implicit steppers need its Jacobian. */
    ts_system *probe;
    int rc = cli_make_system(cmd, stype, &p, &probe);
    if (rc)
        return rc;
    if (!probe->ops->exact) {
        ts_system_free(probe);
        return cli_usage_error(cmd, "system '%s' has no exact solution to measure error against",
                               stype->name);
    }
    /* a stepper the system cannot run (no Jacobian products, no energy, ...)
     * is refused by ts_stepper_new with TS_ERR_UNSUPPORTED */
    int all = strcmp(o.steppers, "all") == 0;
    for (int i = 0; i < ntypes; i++) {
        ts_stepper *trial;
        int s = ts_stepper_new(types[i], probe, &o.solver, &trial);
        ts_stepper_free(trial);
        if (s == TS_ERR_UNSUPPORTED) {
            if (!all) {
                ts_system_free(probe);
                return cli_usage_error(cmd, "%s", ts_error_detail());
            }
            fprintf(stderr, "tstep sweep: skipping '%s': %s\n", types[i]->name,
                    ts_error_detail());
            memmove(&types[i], &types[i + 1], (size_t)(ntypes - i - 1) * sizeof *types);
            ntypes--, i--;
        } else if (s) {
            ts_system_free(probe);
            return cli_fail(cmd, s);
        }
    }
    ts_system_free(probe);

    FILE *out = NULL, *plotdata = NULL;
    if ((o.out || !o.plot) && (rc = cli_open_output(cmd, o.out, &out)))
        return rc;
    if (o.plot && !(plotdata = tmpfile())) {
        if (out)
            cli_close_output(cmd, o.out, out);
        return cli_usage_error(cmd, "--plot: cannot make a temporary file");
    }
    int csv = o.format == CLI_FORMAT_CSV;
    if (out)
        fprintf(out, csv ? "stepper,dt,steps,error,excluded,observed_order,force_evals,"
                           "jacobian_products,newton_iters,linear_iters,seconds\n"
                         : "# stepper dt steps error excluded observed_order force_evals "
                           "jacobian_products newton_iters linear_iters seconds\n");
    double order[MAX_STEPPERS];
    int used[MAX_STEPPERS], nexcl[MAX_STEPPERS][3];
    ts_sweep_point pts[MAX_LEVELS];
    cli_progress prog;
    cli_progress_init(&prog, "tstep sweep");
    cli_catch_stop_signals();
    for (int i = 0; i < ntypes; i++) {
        cli_progress_update(&prog, (double)i / ntypes, "%s (%d of %d)", types[i]->name, i + 1,
                            ntypes);
        int s = ts_sweep(stype, &p, types[i], &o.solver, dt_min, dt_max, (int)levels, t_end, pts);
        if (s == TS_ERR_INTERRUPTED) { /* the finished steppers' rows are complete */
            cli_progress_done(&prog);
            rc = out ? cli_close_output(cmd, o.out, out) : 0;
            if (plotdata)
                fclose(plotdata);
            int r2 = cli_stopped(cmd, "during '%s': the output has the %d stepper%s finished "
                                      "before it",
                                 types[i]->name, i, i == 1 ? "" : "s");
            return rc ? rc : r2;
        }
        if (s) {
            cli_progress_done(&prog);
            if (out)
                cli_close_output(cmd, o.out, out);
            if (plotdata)
                fclose(plotdata);
            return cli_fail(cmd, s);
        }
        order[i] = ts_observed_order(pts, (int)levels, &used[i]);
        if (out && !csv && i > 0)
            fprintf(out, "\n\n");
        if (plotdata && i > 0 && used[i - 1] > 0)
            fprintf(plotdata, "\n\n");
        memset(nexcl[i], 0, sizeof nexcl[i]);
        for (long k = 0; k < levels; k++) {
            const ts_sweep_point *q = &pts[k];
            nexcl[i][q->excluded]++;
            if (plotdata && !q->excluded)
                fprintf(plotdata, "%.15g %.15g\n", q->dt, q->error);
            if (!out)
                continue;
            const char *sep = csv ? "," : " ";
            fprintf(out, "%s%s%.15g%s%ld%s%.15g%s%s%s%.6g%s%ld%s%ld%s%ld%s%ld%s%.6g\n",
                    types[i]->name, sep, q->dt, sep, q->steps, sep, q->error, sep,
                    csv ? excluded_name(q->excluded)
                        : (q->excluded ? excluded_name(q->excluded) : "-"),
                    sep, order[i], sep, q->stats.force_evals, sep, q->stats.jacobian_products,
                    sep, q->stats.newton_iters, sep, q->stats.linear_iters, sep, q->seconds);
        }
        if (out)
            fflush(out); /* a stepper's rows are complete: out there even if stopped */
    }
    cli_progress_done(&prog);
    if (out && (rc = cli_close_output(cmd, o.out, out))) {
        if (plotdata)
            fclose(plotdata);
        return rc;
    }

    fprintf(stderr, "observed order on %s, t_end = %g, dt from %g to %g:\n", stype->name, t_end,
            dt_max, dt_min);
    fprintf(stderr, "  %-22s %7s %8s %6s  %s\n", "stepper", "nominal", "observed", "points",
            "excluded");
    for (int i = 0; i < ntypes; i++) {
        char obs[16], excl[64] = "-";
        if (isnan(order[i]))
            snprintf(obs, sizeof obs, "n/a");
        else
            snprintf(obs, sizeof obs, "%.2f", order[i]);
        if (nexcl[i][1] || nexcl[i][2])
            snprintf(excl, sizeof excl, "%d round-off, %d unstable", nexcl[i][1], nexcl[i][2]);
        fprintf(stderr, "  %-22s %7d %8s %6d  %s\n", types[i]->name, types[i]->order, obs,
                used[i], excl);
    }
    if (plotdata) {
        fflush(stderr);
        rc = draw_plot(cmd, plotdata, stype->name, t_end, types, order, used, ntypes);
        fclose(plotdata);
    }
    return rc;
}

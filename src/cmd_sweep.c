/* tstep sweep: error at t_end against step size for one or more steppers,
 * and the observed order of each (least-squares slope of log error against
 * log dt over the points not excluded; see src/sweep.c for the rules),
 * against the exact solution or a computed reference (tstep/reference.h). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "cli_json.h"
#include "cli_gnuplot.h"
#include "cli_progress.h"

#define MAX_LEVELS 64
#define MAX_STEPPERS 64
#define SWEEP_NEWTON_TOL 1e-12
#define SWEEP_CG_TOL 1e-12

static const char *excluded_name(int e)
{
    return e == TS_SWEEP_ROUNDOFF    ? "round-off"
           : e == TS_SWEEP_UNSTABLE  ? "unstable"
           : e == TS_SWEEP_REFERENCE ? "reference"
                                     : "";
}

/* One line saying what the errors are measured against. */
static void describe_reference(FILE *f, const char *prefix, const ts_sweep_reference *r)
{
    if (r->m > r->n)
        fprintf(f, "%serror norm: %s, max(|x - x_ref|, w |v - v_ref|), w = %.6g\n", prefix,
                ts_error_norm_name(r->norm), r->weight);
    else
        fprintf(f, "%serror norm: |x - x_ref| (a first-order system)\n", prefix);
    if (!r->computed) {
        fprintf(f, "%sreference: the exact solution\n", prefix);
        return;
    }
    fprintf(f,
            "%sreference: %s at dt = %.6g (%ld steps), Richardson ratio %.4g (%s), "
            "estimated error %.3g\n",
            prefix, r->method->name, r->dt, r->steps, r->ratio,
            ts_reference_verdict_name((ts_reference_verdict)r->verdict), r->error);
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
    printf("Usage: tstep sweep --system S [--stepper A,B,...|all] [--dt-min H0 --dt-max H1]\n"
           "                   [--levels L] [--t-end T] [--param key=value]...\n"
           "                   [--norm scaled|state|positions] [--reference auto|computed]\n"
           "                   [--reference-dt H] [--tol-max E1 --tol-min E0]\n"
           "                   [--format dat|csv|json] [--out FILE] [--plot]\n"
           "\n"
           "For each stepper (default all), run to T with L step sizes spaced\n"
           "geometrically from H1 down to H0, each adjusted to T/round(T/H) so a whole\n"
           "number of steps lands exactly on T, and record the max-norm error, absolute,\n"
           "at T against the system's exact solution or, for a system without one, a\n"
           "computed reference (below).  See docs/sweep.md.\n"
           "\n"
           "  --levels L    number of step sizes (default 7, at most 64)\n"
           "  --t-end T     default min(1, 30/|lambda|), |lambda| the rate of the system's\n"
           "                stiffest mode at its initial state (power iteration)\n"
           "  --dt-min H0, --dt-max H1  both or neither; default per stepper of order p:\n"
           "                H1 = min(T/10, c_p/|lambda|), H0 = H1/16 (H1/4 for p >= 5),\n"
           "                c_p = 0.1, 0.2, 0.35, 0.5, 1 for p = 1, 2, 3, 4, >= 5 (the\n"
           "                asymptotic range on stiff systems, above rounding)\n"
           "  --norm N      the error norm, max(|x - x_ref|, w |v - v_ref|), max over\n"
           "                components: scaled (default): the whole state, w = 1/|lambda|\n"
           "                (velocities times the stiffest mode's time scale, so both\n"
           "                parts are lengths); state: w = 1; positions: w = 0.  A\n"
           "                first-order system has no v: all three are |x - x_ref|\n"
           "  --reference R auto (default): the exact solution where the system has one,\n"
           "                else computed; computed: always computed\n"
           "  --reference-dt H  the computed reference's first coarse step (default H0);\n"
           "                rk4 runs at H, H/2 and H/4, the finest is the reference and\n"
           "                Richardson's estimate from the two differences its error; H is\n"
           "                halved until the ratio of the differences is within a factor 2\n"
           "                of 2^4 (or they agree to rounding) and the estimate is below a\n"
           "                tenth of the sweep's smallest round-off level\n"
           "  --tol-max E1, --tol-min E0  tolerance mode: steppers with an error\n"
           "                estimate (dopri5) run at L tolerances rtol = atol from E1 down\n"
           "                to E0 instead of L fixed steps, each over [0, T] under error\n"
           "                control (as run --rtol); their rows give the accepted steps,\n"
           "                the mean step T/steps and a last column tol, and their\n"
           "                observed_order is the slope of log error against log tol\n"
           "                (1 when the error follows the tolerance).  The other\n"
           "                steppers sweep fixed steps as usual: together, error against\n"
           "                force_evals is a work-precision diagram\n"
           "  --plot        draw error against dt (log-log) in the terminal with gnuplot;\n"
           "                without --out the table is then not written\n"
           "  --newton-tol X, --cg-tol X  implicit steppers' tolerances (default 1e-12\n"
           "                here, so the solver's error stays below the truncation error)\n"
           "  --newton-max N, --cg-max N  caps (defaults 20, 2 * dimension + 20)\n"
           "\n");
    printf("Output: csv columns\n"
           "  stepper,dt,steps,error,excluded,observed_order,force_evals,\n"
           "  jacobian_products,newton_iters,linear_iters,seconds,reference_error\n"
           "dat the same columns under a '#' header (after a '# reference: ...' line),\n"
           "one gnuplot index block (two blank lines apart) per stepper.  'excluded' is\n"
           "empty (dat: '-') when the point is in the fit, else\n"
           "  unstable   the run failed, or its error exceeds the solution's size\n"
           "  round-off  error <= steps * eps * the solution's size\n"
           "  reference  error <= 10 * the reference's estimated error\n"
           "where the solution's size is max(|Y(0)|, |Y_ref(T)|) in the same norm.\n"
           "observed_order is the stepper's fitted order over this sweep (the same on\n"
           "each of its rows; nan if fewer than two points remain).  force_evals ..\n"
           "linear_iters are the run's totals; seconds is the wall-clock time of its\n"
           "stepping (runs under 2 ms are repeated and the mean taken).\n"
           "reference_error is the reference's estimated error (0 for an exact one).\n"
           "Standard error gets the reference and a table of observed orders over the\n"
           "points not excluded, and a progress line while it works when it is a\n"
           "terminal.  With --stepper all, steppers the system cannot run (an implicit\n"
           "stepper on a system without Jacobian products, an energy-minimizing one on a\n"
           "system without energy) are skipped with a note.\n");
}

int cmd_sweep(int argc, char **argv)
{
    static const struct option opts[] = {
        {"system", required_argument, 0, 's'}, {"stepper", required_argument, 0, 'i'},
        {"dt-min", required_argument, 0, 'a'}, {"dt-max", required_argument, 0, 'b'},
        {"levels", required_argument, 0, 'l'}, {"t-end", required_argument, 0, 'T'},
        {"param", required_argument, 0, 'p'},  {"format", required_argument, 0, 'f'},
        {"out", required_argument, 0, 'o'},    {"help", no_argument, 0, 'h'},
        {"plot", no_argument, 0, 'P'},         {"reference", required_argument, 0, 'r'},
        {"reference-dt", required_argument, 0, 'R'}, {"norm", required_argument, 0, 'N'},
        {"tol-max", required_argument, 0, 'X'}, {"tol-min", required_argument, 0, 'Y'},
        CLI_SOLVER_LONGOPTS,                   {0, 0, 0, 0}};
    const char *cmd = "sweep";
    double dt_min = 0, dt_max = 0, t_end = 0, ref_dt = 0, tol_min = 0, tol_max = 0;
    long levels = 7;
    int c, ref_computed = 0;
    ts_error_norm norm = TS_NORM_SCALED;
    cli_common o;
    cli_common_init(&o, 0);
    o.json_ok = 1;
    /* tight solver tolerances: the solver's error must not pollute the order */
    o.solver.newton_tol = SWEEP_NEWTON_TOL;
    o.solver.cg_tol = SWEEP_CG_TOL;

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
            case 'r':
                if (strcmp(optarg, "auto") == 0 || strcmp(optarg, "computed") == 0)
                    ref_computed = optarg[0] == 'c';
                else
                    bad = cli_usage_error(cmd, "--reference: '%s' is not auto or computed",
                                          optarg);
                break;
            case 'N':
                if (strcmp(optarg, "scaled") == 0)
                    norm = TS_NORM_SCALED;
                else if (strcmp(optarg, "state") == 0)
                    norm = TS_NORM_STATE;
                else if (strcmp(optarg, "positions") == 0)
                    norm = TS_NORM_POSITIONS;
                else
                    bad = cli_usage_error(cmd, "--norm: '%s' is not scaled, state or positions",
                                          optarg);
                break;
            case 'R': bad = cli_parse_positive(cmd, "reference-dt", optarg, &ref_dt); break;
            case 'X': bad = cli_parse_positive(cmd, "tol-max", optarg, &tol_max); break;
            case 'Y': bad = cli_parse_positive(cmd, "tol-min", optarg, &tol_min); break;
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
    const ts_system_type *stype;
    const ts_stepper_type *types[MAX_STEPPERS];
    int ntypes;
    ts_params p;
    if (cli_common_resolve(cmd, &o, &stype, &p, types, MAX_STEPPERS, &ntypes))
        return CLI_EXIT_USAGE;
    int skeleton = cli_drop_unimplemented(cmd, types, &ntypes, strcmp(o.steppers, "all") == 0);
    if (skeleton)
        return skeleton;
    if ((dt_min == 0) != (dt_max == 0))
        return cli_usage_error(cmd, "give both --dt-min and --dt-max, or neither (defaults "
                                    "per stepper, see --help)");
    if (dt_min > dt_max)
        return cli_usage_error(cmd, "--dt-min %g is larger than --dt-max %g", dt_min, dt_max);
    if (t_end > 0 && dt_max > t_end)
        return cli_usage_error(cmd, "--dt-max %g is larger than --t-end %g", dt_max, t_end);
    if ((tol_min == 0) != (tol_max == 0))
        return cli_usage_error(cmd, "give both --tol-min and --tol-max, or neither");
    if (tol_min > tol_max)
        return cli_usage_error(cmd, "--tol-min %g is larger than --tol-max %g", tol_min, tol_max);
    if (tol_max >= 1.0)
        return cli_usage_error(cmd, "--tol-max %g: a relative tolerance must be below 1", tol_max);
    int tolmode = tol_max > 0.0;
    if (levels > MAX_LEVELS)
        return cli_usage_error(cmd, "--levels: %ld is more than %d", levels, MAX_LEVELS);
    if (t_end > 0 && dt_min > 0 && t_end / dt_min > 1e9)
        return cli_usage_error(cmd, "--t-end / --dt-min is more than 1e9 steps");

    /* Probe the system once: it must exist with these parameters; implicit
     * steppers need its Jacobian. */
    ts_system *probe;
    int rc = cli_make_system(cmd, stype, &p, &probe);
    if (rc)
        return rc;
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

    /* default t_end and per-stepper ranges from the stiffest mode's rate */
    double rate = 0.0, lo[MAX_STEPPERS], hi[MAX_STEPPERS], lo_all = INFINITY;
    int defaults = dt_min == 0;
    if ((t_end == 0 || defaults) && (rc = ts_sweep_stiffness(stype, &p, &rate)))
        return cli_fail(cmd, rc);
    if (t_end == 0)
        t_end = ts_sweep_default_t_end(rate);
    if (dt_max > t_end)
        return cli_usage_error(cmd, "--dt-max %g is larger than the default t_end %g: give "
                                    "--t-end", dt_max, t_end);
    for (int i = 0; i < ntypes; i++) {
        if (defaults)
            ts_sweep_default_dt(rate, t_end, types[i]->order, &lo[i], &hi[i]);
        else
            lo[i] = dt_min, hi[i] = dt_max;
        lo_all = fmin(lo_all, lo[i]);
    }

    ts_sweep_reference ref;
    ts_sweep_reference_options ropt = ts_sweep_reference_options_for(lo_all, t_end);
    ropt.computed = ref_computed;
    ropt.norm = norm;
    if (ref_dt > 0.0)
        ropt.dt = ref_dt;
    cli_progress prog;
    cli_progress_init(&prog, "tstep sweep");
    cli_progress_update(&prog, 0.0, "reference solution");
    cli_catch_stop_signals();
    int s = ts_sweep_reference_compute(stype, &p, t_end, &ropt, &ref);
    if (s == TS_ERR_INTERRUPTED) {
        cli_progress_done(&prog);
        return cli_stopped(cmd, "while computing the reference solution: nothing written");
    }
    if (s) {
        cli_progress_done(&prog);
        return cli_fail(cmd, s);
    }

    FILE *out = NULL, *plotdata = NULL;
    if ((o.out || !o.plot) && (rc = cli_open_output(cmd, o.out, &out))) {
        cli_progress_done(&prog);
        ts_sweep_reference_release(&ref);
        return rc;
    }
    if (o.plot && !(plotdata = tmpfile())) {
        cli_progress_done(&prog);
        ts_sweep_reference_release(&ref);
        if (out)
            cli_close_output(cmd, o.out, out);
        return cli_usage_error(cmd, "--plot: cannot make a temporary file");
    }
    int csv = o.format == CLI_FORMAT_CSV, json = o.format == CLI_FORMAT_JSON;
    cli_json j;
    if (out && json) { /* one object: the rows' numbers per stepper (docs/grading.md) */
        cli_json_init(&j, out);
        cli_json_object(&j, NULL);
        cli_json_string(&j, "command", "sweep");
        cli_json_string(&j, "system", stype->name);
        cli_json_number(&j, "t_end", t_end);
        cli_json_number(&j, "reference_error", ref.error);
        cli_json_array(&j, "steppers");
    }
    if (out && !csv && !json)
        describe_reference(out, "# ", &ref);
    if (out && !json)
        fprintf(out, csv ? "stepper,dt,steps,error,excluded,observed_order,force_evals,"
                           "jacobian_products,newton_iters,linear_iters,seconds,"
                           "reference_error%s\n"
                         : "# stepper dt steps error excluded observed_order force_evals "
                           "jacobian_products newton_iters linear_iters seconds "
                           "reference_error%s\n",
                tolmode ? (csv ? ",tol" : " tol") : "");
    double order[MAX_STEPPERS];
    int used[MAX_STEPPERS], nexcl[MAX_STEPPERS][TS_SWEEP_EXCLUSIONS];
    ts_sweep_point pts[MAX_LEVELS];
    for (int i = 0; i < ntypes; i++) {
        cli_progress_update(&prog, (double)i / ntypes, "%s (%d of %d)", types[i]->name, i + 1,
                            ntypes);
        int by_tol = tolmode && (types[i]->flags & TS_ADAPTIVE);
        s = by_tol ? ts_sweep_tolerances(stype, &p, types[i], &o.solver, tol_min, tol_max,
                                         (int)levels, &ref, pts)
                   : ts_sweep_against(stype, &p, types[i], &o.solver, lo[i], hi[i], (int)levels,
                                      &ref, pts);
        if (s == TS_ERR_INTERRUPTED) { /* the finished steppers' rows are complete */
            cli_progress_done(&prog);
            ts_sweep_reference_release(&ref);
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
            ts_sweep_reference_release(&ref);
            if (out)
                cli_close_output(cmd, o.out, out);
            if (plotdata)
                fclose(plotdata);
            return cli_fail(cmd, s);
        }
        order[i] = by_tol ? ts_tolerance_slope(pts, (int)levels, &used[i])
                          : ts_observed_order(pts, (int)levels, &used[i]);
        if (out && !csv && !json && i > 0)
            fprintf(out, "\n\n");
        if (out && json) {
            cli_json_object(&j, NULL);
            cli_json_string(&j, "stepper", types[i]->name);
            cli_json_int(&j, "nominal_order", types[i]->order);
            cli_json_number(&j, "observed_order", order[i]);
            cli_json_int(&j, "points_used", used[i]);
            cli_json_string(&j, "slope_of", by_tol ? "tolerance" : "dt");
            cli_json_array(&j, "points");
        }
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
            if (json) {
                cli_json_object(&j, NULL);
                cli_json_number(&j, "dt", q->dt);
                cli_json_int(&j, "steps", q->steps);
                cli_json_number(&j, "error", q->error);
                cli_json_string(&j, "excluded", q->excluded ? excluded_name(q->excluded) : NULL);
                cli_json_int(&j, "force_evals", q->stats.force_evals);
                cli_json_int(&j, "jacobian_products", q->stats.jacobian_products);
                cli_json_int(&j, "newton_iters", q->stats.newton_iters);
                cli_json_int(&j, "linear_iters", q->stats.linear_iters);
                cli_json_number(&j, "seconds", q->seconds);
                if (tolmode)
                    cli_json_number(&j, "tol", q->tol);
                cli_json_close(&j);
                continue;
            }
            const char *sep = csv ? "," : " ";
            fprintf(out, "%s%s%.15g%s%ld%s%.15g%s%s%s%.6g%s%ld%s%ld%s%ld%s%ld%s%.6g%s%.3g",
                    types[i]->name, sep, q->dt, sep, q->steps, sep, q->error, sep,
                    csv ? excluded_name(q->excluded)
                        : (q->excluded ? excluded_name(q->excluded) : "-"),
                    sep, order[i], sep, q->stats.force_evals, sep, q->stats.jacobian_products,
                    sep, q->stats.newton_iters, sep, q->stats.linear_iters, sep, q->seconds,
                    sep, ref.error);
            if (tolmode)
                fprintf(out, "%s%.3g", sep, q->tol);
            fputc('\n', out);
        }
        if (out && !json)
            fflush(out); /* a stepper's rows are complete: out there even if stopped */
        if (out && json) {
            cli_json_close(&j);
            cli_json_object(&j, "excluded");
            cli_json_int(&j, "round_off", nexcl[i][TS_SWEEP_ROUNDOFF]);
            cli_json_int(&j, "unstable", nexcl[i][TS_SWEEP_UNSTABLE]);
            cli_json_int(&j, "reference", nexcl[i][TS_SWEEP_REFERENCE]);
            cli_json_close(&j);
            cli_json_close(&j);
        }
    }
    if (out && json) {
        cli_json_close(&j);
        cli_json_close(&j);
    }
    cli_progress_done(&prog);
    if (out && (rc = cli_close_output(cmd, o.out, out))) {
        if (plotdata)
            fclose(plotdata);
        ts_sweep_reference_release(&ref);
        return rc;
    }

    if (defaults)
        fprintf(stderr, "observed order on %s, t_end = %g, dt per stepper from c_p/|lambda| "
                        "down by %g (%g for p >= 5), |lambda| = %g:\n",
                stype->name, t_end, TS_SWEEP_RANGE_RATIO, TS_SWEEP_RANGE_RATIO_5, rate);
    else
        fprintf(stderr, "observed order on %s, t_end = %g, dt from %g to %g:\n", stype->name,
                t_end, dt_max, dt_min);
    describe_reference(stderr, "  ", &ref);
    ts_sweep_reference_release(&ref);
    fprintf(stderr, "  %-22s %7s %8s %6s  %-38s %s\n", "stepper", "nominal", "observed", "points",
            "excluded", defaults ? "dt from .. to" : "");
    for (int i = 0; i < ntypes; i++) {
        char obs[16], excl[64] = "-";
        if (isnan(order[i]))
            snprintf(obs, sizeof obs, "n/a");
        else
            snprintf(obs, sizeof obs, "%.2f", order[i]);
        if (nexcl[i][TS_SWEEP_REFERENCE])
            snprintf(excl, sizeof excl, "%d round-off, %d unstable, %d reference",
                     nexcl[i][TS_SWEEP_ROUNDOFF], nexcl[i][TS_SWEEP_UNSTABLE],
                     nexcl[i][TS_SWEEP_REFERENCE]);
        else if (nexcl[i][TS_SWEEP_ROUNDOFF] || nexcl[i][TS_SWEEP_UNSTABLE])
            snprintf(excl, sizeof excl, "%d round-off, %d unstable", nexcl[i][TS_SWEEP_ROUNDOFF],
                     nexcl[i][TS_SWEEP_UNSTABLE]);
        fprintf(stderr, "  %-22s %7d %8s %6d  ", types[i]->name, types[i]->order, obs, used[i]);
        if (tolmode && (types[i]->flags & TS_ADAPTIVE))
            fprintf(stderr, "%-38s tol %.3g .. %.3g: slope of log error vs log tol\n", excl,
                    tol_max, tol_min);
        else if (defaults)
            fprintf(stderr, "%-38s %.3g .. %.3g\n", excl, hi[i], lo[i]);
        else
            fprintf(stderr, "%s\n", excl);
    }
    if (plotdata) {
        fflush(stderr);
        rc = draw_plot(cmd, plotdata, stype->name, t_end, types, order, used, ntypes);
        fclose(plotdata);
    }
    return rc;
}

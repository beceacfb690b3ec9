/* tstep stability, tstep amplification, tstep region: the critical step of a
 * system measured against its prediction, the one-step amplification factor
 * on the test equation, and stability regions in the complex plane.  The
 * numerics are in src/stability.c (definitions in tstep/stability.h); this
 * file parses options and writes the data layouts documented in each
 * command's --help and in README.md. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "cli_gnuplot.h"
#include "tstep/stability.h"

#define MAX_STEPPERS 64

static const char *kind_name(ts_crit_kind k)
{
    switch (k) {
    case TS_CRIT_FOUND: return "found";
    case TS_CRIT_INF: return "inf";
    case TS_CRIT_BELOW_MIN: return "below-min";
    case TS_CRIT_T_LIMITED: return "t-limited";
    }
    return "?";
}

/* The result column: a bracket closed by a solver failure, not by growth,
 * is said as such. */
/* measured / predicted: 1 when both are inf, nan (written "nan", never
 * "-nan") where undefined, e.g. 0 / 0 */
static double crit_ratio(double measured, double predicted)
{
    if (isinf(measured) && isinf(predicted))
        return 1.0;
    double ratio = measured / predicted;
    return isnan(ratio) ? NAN : ratio;
}

static const char *result_name(const ts_stability_result *r)
{
    if (r->kind == TS_CRIT_FOUND &&
        (r->fail_status == TS_ERR_NEWTON || r->fail_status == TS_ERR_LINEAR ||
         r->fail_status == TS_ERR_INDEFINITE))
        return "solver-failed";
    return kind_name(r->kind);
}

/* Drop steppers needing Jacobian products the system lacks: a note with
 * --stepper all, an error naming them otherwise. */
static int drop_unrunnable(const char *cmd, const char *list, const ts_system_type *stype,
                           int has_jac, const ts_stepper_type **types, int *ntypes)
{
    int all = strcmp(list, "all") == 0;
    for (int i = 0; i < *ntypes; i++)
        if ((types[i]->flags & TS_NEEDS_JACOBIAN) && !has_jac) {
            if (!all)
                return cli_usage_error(cmd, "stepper '%s' needs Jacobian products, which "
                                            "system '%s' does not provide",
                                       types[i]->name, stype->name);
            fprintf(stderr, "tstep %s: skipping '%s': system '%s' has no Jacobian products\n",
                    cmd, types[i]->name, stype->name);
            memmove(&types[i], &types[i + 1], (size_t)(*ntypes - i - 1) * sizeof *types);
            (*ntypes)--, i--;
        }
    return 0;
}

/* --- tstep stability ------------------------------------------------------------ */

static void stability_help(void)
{
    printf(
        "Usage: tstep stability --system S --stepper A,B,...|all [--param key=value]...\n"
        "                       [--t-end T] [--bound C] [--format dat|csv] [--out FILE]\n"
        "                       [--plot]\n"
        "\n"
        "For each stepper, the critical step dt_crit measured by running the system,\n"
        "beside the prediction from the system's stiffest mode and the stepper's\n"
        "stability interval.\n"
        "\n"
        "Output (one row per stepper; csv with a header row, dat the same columns\n"
        "space-separated under a '#' header, one block):\n"
        "  stepper     stepper name\n"
        "  dt_crit     measured critical step (inf, or 0 when below dt_min = 1e-6 T)\n"
        "  dt_fail     the smallest dt found unbounded: the bracket is [dt_crit, dt_fail]\n"
        "  dt_pred     predicted critical step: interval / |lambda| (inf or 0 possible)\n"
        "  ratio       dt_crit / dt_pred (nan when undefined)\n"
        "  interval    the stepper's stability interval r along lambda's direction\n"
        "  lambda_re   the stiffest first-order eigenvalue lambda (same on every row)\n"
        "  lambda_im\n"
        "  t_end       T of the runs\n"
        "  steps       steps of the run at dt_crit\n"
        "  runs        runs the search made\n"
        "  result      found | inf | below-min | t-limited | solver-failed\n"
        "Standard error gets the same as a table, with the stiffest mode.\n"
        "\n"
        "Measured.  A run takes steps of exactly dt from the system's initial state\n"
        "plus delta = 1e-3 max(1, |x(0)|_inf) times the stiffest mode's vector\n"
        "(scaled to |.|_inf = 1; pinned coordinates untouched), the last step\n"
        "shortened to land on T: ceil(T/dt) steps.  It is bounded when every step\n"
        "succeeds and after every step:\n"
        "  |x|_inf <= C Sx and (second-order systems) |v|_inf <= C Sv, where\n"
        "    Sx = max(|x(0)|_inf, max of |x_exact|_inf over the step times when the\n"
        "    system has an exact solution) and Sv = max(|v(0)|_inf, max of\n"
        "    |v_exact|_inf, |lambda| Sx), each 1 if it is 0 (|lambda| Sx: the speed\n"
        "    of the stiffest mode at amplitude Sx, so a stable vibration is never\n"
        "    taken for growth);\n"
        "  and, where the system defines an energy E, E(t) <= E(0) + C S: with\n"
        "    E(x0 + s delta) ~ E(x0) + d1 s + d2 s^2 (E at s = -1, 0, 1), S is the\n"
        "    seed's energy |d2| plus the energy the initial state already holds in\n"
        "    the mode, d1^2 / (4 |d2|) (and the same along v): k x0^2/2 + k delta^2/2\n"
        "    on test1d, the seed's energy alone for springs at rest.  This catches a\n"
        "    mode that grows and then saturates inside the state bounds (the\n"
        "    string's stiff mode stops growing near the spring rest length).\n"
        "    Energy fed in by forcing (wind) counts as growth.\n"
        "dt_crit is the largest bounded dt:\n"
        "start at T/1000 (not at the prediction), double while bounded or halve\n"
        "while not, then bisect geometrically until the bracket is within 0.5 %%;\n"
        "dt_crit is its bounded end.\n"
        "inf: bounded at every dt tried up to dt = T (one step); below-min: not even\n"
        "at dt = 1e-6 T.  A slowly growing mode (|R| just above 1) needs about\n"
        "ln C / ln|R| steps to exceed the bound, so dt_crit overshoots a true limit by\n"
        "about ln C / (N s) relative (N = T/dt_crit, s = dln|R|/dln dt there: 2 for\n"
        "Euler), 0.2 %% at the default T.  t-limited: a run at 0.9 dt_crit to 4 T is\n"
        "not bounded, so dt_crit still moves with T and is only where the growth over\n"
        "T stays below C: either the stepper has no stable interval along lambda\n"
        "(forward Euler, midpoint and trapezoid on an undamped oscillator, where\n"
        "|R(iy)| > 1 for all y > 0: dt_crit shrinks as T grows, and Euler is\n"
        "below-min; dt_pred is 0 there) or |R| grows so slowly past the limit that T\n"
        "is too short to see it sharply (lightly damped modes; compare dt_pred).\n"
        "solver-failed: the run at dt_fail stopped because its Newton or linear solver\n"
        "did not converge, not because it grew: for an implicit stepper dt_crit is\n"
        "then where its solver gives up on this system, not a stability limit.\n"
        "\n");
    printf(
        "Predicted.  The stiffest mode by power iteration on Jacobian products at the\n"
        "initial state (forward differences of forces when the system has none):\n"
        "order 1, the eigenvalue lambda of M^-1 df/dx of largest modulus; order 2, the\n"
        "eigenvalue mu of M^-1 df/dx of largest modulus and the damping c = u^T df/dv u\n"
        "along its M-normalized eigenvector u, lambda the larger root of\n"
        "lambda^2 - c lambda - mu = 0 (+-i sqrt(-mu) for an undamped spring).  The\n"
        "interval r is found by running the stepper one step at a time on the\n"
        "complex test equation along lambda's direction (see 'tstep region --help');\n"
        "dt_pred = r / |lambda|.\n"
        "\n"
        "  --t-end T     end time of every run (default 1000 / |lambda|, or 10 when\n"
        "                lambda = 0)\n"
        "  --bound C     the bound factor C (default 10)\n"
        "  --plot        draw |R(dt lambda)| against dt along the stiffest mode, with\n"
        "                |R| = 1 and each measured dt_crit, in the terminal (gnuplot's\n"
        "                dumb terminal); without --out the table is then not written\n"
        CLI_SOLVER_HELP
        "\n"
        "Example: tstep stability --system test1d --param k=10 --stepper all --format csv\n"
        "measures dt_crit 0.2 for forward-euler, midpoint and trapezoid (predicted 0.2),\n"
        "0.2783 for rk4 (predicted 2.7853/k = 0.2785; the search stops within 0.5 %%)\n"
        "and inf for backward-euler, backward-euler-linear and backward-euler-opt.\n"
        "With --stepper all, steppers the system cannot run are skipped with a note.\n"
        "A progress line is shown on standard error when it is a terminal.\n");
}

typedef struct {
    const char *stepper;
    int index, count;
} progress_ctx;

static void show_progress(void *ctx, int run, double dt)
{
    const progress_ctx *p = ctx;
    fprintf(stderr, "\rtstep stability: %s (%d/%d), run %d, dt = %-12.6g", p->stepper,
            p->index, p->count, run, dt);
    fflush(stderr);
}

static void clear_progress(void)
{
    fprintf(stderr, "\r%-78s\r", "");
    fflush(stderr);
}

/* --plot: |R(dt lambda)| of each stepper against dt along the stiffest mode
 * lambda, the line |R| = 1, and the measured dt_crit marked on each curve
 * (where a bounded run ends, the curve should cross 1). */
static int draw_plot(const char *cmd, const char *system, const ts_stiff_mode *mode,
                     const ts_stepper_type *const *types, int ntypes,
                     const ts_stability_result *res, const ts_solver_options *sopt)
{
    double mag = hypot(mode->re, mode->im), dt_max = 0.0;
    for (int i = 0; i < ntypes; i++)
        if (isfinite(res[i].dt_crit))
            dt_max = fmax(dt_max, res[i].dt_crit);
    dt_max = dt_max > 0.0 ? 1.5 * dt_max : 3.0 / mag;
    FILE *data = tmpfile(), *gp;
    if (!data)
        return cli_usage_error(cmd, "--plot: cannot make a temporary file");
    enum { POINTS = 200 };
    for (int i = 0; i < ntypes; i++) {
        if (i)
            fputs("\n\n", data);
        for (int k = 0; k <= POINTS; k++) {
            double dt = dt_max * k / POINTS, rr, ri;
            int s = ts_amplification(types[i], sopt, dt * mode->re, dt * mode->im, &rr, &ri);
            fprintf(data, "%.8g %.8g\n", dt, s ? NAN : hypot(rr, ri));
        }
    }
    int rc = cli_gnuplot_dumb(cmd, &gp);
    if (rc) {
        fclose(data);
        return rc;
    }
    cli_gnuplot_datablock(gp, "amp", data);
    fclose(data);
    fprintf(gp, "set title '%s: |R(dt lambda)| along the stiffest mode, lambda = %.4g%+.4gi'\n"
                "set xlabel 'dt (o: measured dt_crit)'\nset key below\nset yrange [0:2]\n"
                "set xrange [0:%.8g]\nplot 1 with lines dt 2 notitle",
            system, mode->re, mode->im, dt_max);
    for (int i = 0; i < ntypes; i++) {
        char key[96];
        snprintf(key, sizeof key, "%s %.4g", types[i]->name, res[i].dt_crit);
        fprintf(gp, ", $amp index %d using 1:2 with lines title ", i);
        cli_gnuplot_quote(gp, key);
    }
    for (int i = 0; i < ntypes; i++)
        if (isfinite(res[i].dt_crit))
            fprintf(gp, ", '+' using (%.8g):(1) every ::0::0 with points pt 'o' notitle",
                    res[i].dt_crit);
    fputc('\n', gp);
    return cli_gnuplot_close(cmd, gp);
}

int cmd_stability(int argc, char **argv)
{
    static const struct option opts[] = {
        {"system", required_argument, 0, 's'}, {"stepper", required_argument, 0, 'i'},
        {"t-end", required_argument, 0, 'T'},  {"bound", required_argument, 0, 'C'},
        {"param", required_argument, 0, 'p'},  {"format", required_argument, 0, 'f'},
        {"out", required_argument, 0, 'o'},    {"help", no_argument, 0, 'h'},
        {"plot", no_argument, 0, 'P'},         CLI_SOLVER_LONGOPTS,
        {0, 0, 0, 0}};
    const char *cmd = "stability";
    double t_end = 0, bound = 10.0;
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
            case 'T': bad = cli_parse_positive(cmd, "t-end", optarg, &t_end); break;
            case 'C':
                bad = cli_parse_positive(cmd, "bound", optarg, &bound);
                if (!bad && !(bound > 1.0))
                    bad = cli_usage_error(cmd, "--bound: '%s' must be greater than 1", optarg);
                break;
            case 'h': stability_help(); return 0;
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

    /* the stiffest mode, at the initial state */
    ts_system *probe;
    int rc = cli_make_system(cmd, stype, &p, &probe);
    if (rc)
        return rc;
    int has_jac = ts_system_has_jacobian(probe);
    ts_stiff_mode mode;
    /* the mode's vector seeds every run (ts_stability_options.seed) */
    double *seed = malloc(probe->n * sizeof *seed);
    int ms = seed ? ts_stiffest_mode_vector(probe, &mode, seed)
                  : ts_error(TS_ERR_NOMEM, "stiffest mode");
    ts_system_free(probe);
    if (ms && ts_status_exit_code(ms) == CLI_EXIT_USAGE) {
        free(seed);
        return cli_fail(cmd, ms);
    }
    if (ms) {
        fprintf(stderr, "tstep stability: no prediction: %s%s%s\n", ts_status_message(ms),
                *ts_error_detail() ? ": " : "", ts_error_detail());
        mode.re = mode.im = NAN;
    }
    if ((rc = drop_unrunnable(cmd, o.steppers, stype, has_jac, types, &ntypes))) {
        free(seed);
        return rc;
    }
    double mag = hypot(mode.re, mode.im);
    if (t_end == 0)
        t_end = isfinite(mag) && mag > 0.0 ? 1000.0 / mag : 10.0;

    ts_stability_options so = ts_default_stability_options();
    so.t_end = t_end;
    so.seed = ms ? NULL : seed;
    so.bound = bound;
    so.rate = isfinite(mag) ? mag : 0.0;
    progress_ctx pc = {NULL, 0, ntypes};
    int tty = isatty(STDERR_FILENO);
    if (tty) {
        so.progress = show_progress;
        so.progress_ctx = &pc;
    }
    double r[MAX_STEPPERS], pred[MAX_STEPPERS];
    ts_stability_result res[MAX_STEPPERS];
    int stopped = 0; /* SIGINT/SIGTERM: the steppers measured so far are written */
    cli_catch_stop_signals();
    for (int i = 0; i < ntypes && !stopped; i++) {
        pc.stepper = types[i]->name;
        pc.index = i + 1;
        r[i] = pred[i] = NAN;
        if (!ms && mag > 0.0) {
            int s = ts_stability_interval(types[i], &o.solver, mode.re, mode.im, &r[i]);
            if (s == TS_ERR_UNSUPPORTED) { /* e.g. a minimization stepper: no energy */
                if (tty)
                    clear_progress();
                fprintf(stderr, "tstep stability: no prediction for '%s': the test equation "
                                "along lambda is refused: %s\n", types[i]->name,
                        ts_error_detail());
                r[i] = NAN;
            } else if (s) {
                if (tty)
                    clear_progress();
                free(seed);
                return cli_fail(cmd, s);
            } else {
                pred[i] = ts_stability_predict(&mode, r[i]);
            }
        } else if (!ms) {
            pred[i] = INFINITY; /* no stiffness at all */
        }
        /* start at T / 1000, independent of the prediction */
        int s = ts_stability_measure(stype, &p, types[i], &o.solver, &so, NAN, &res[i]);
        if (s == TS_ERR_INTERRUPTED) {
            stopped = 1;
            ntypes = i;
            break;
        }
        if (s) {
            if (tty)
                clear_progress();
            free(seed);
            return cli_fail(cmd, s);
        }
    }
    free(seed);
    if (tty)
        clear_progress();

    FILE *out;
    if (o.plot && !o.out) /* --plot without --out: the figure instead of the table */
        out = tmpfile();
    else if ((rc = cli_open_output(cmd, o.out, &out)))
        return rc;
    if (!out)
        return cli_usage_error(cmd, "--plot: cannot make a temporary file");
    int csv = o.format == CLI_FORMAT_CSV;
    const char *sep = csv ? "," : " ";
    fprintf(out, "%sstepper%sdt_crit%sdt_fail%sdt_pred%sratio%sinterval%slambda_re%slambda_im"
                 "%st_end%ssteps%sruns%sresult\n",
            csv ? "" : "# ", sep, sep, sep, sep, sep, sep, sep, sep, sep, sep, sep);
    for (int i = 0; i < ntypes; i++) {
        double ratio = crit_ratio(res[i].dt_crit, pred[i]);
        fprintf(out, "%s%s%.8g%s%.8g%s%.8g%s%.6g%s%.8g%s%.10g%s%.10g%s%.10g%s%ld%s%d%s%s\n",
                types[i]->name, sep, res[i].dt_crit, sep, res[i].dt_fail, sep, pred[i], sep,
                ratio, sep, r[i], sep,
                mode.re, sep, mode.im, sep, t_end, sep, res[i].steps, sep, res[i].runs, sep,
                result_name(&res[i]));
    }
    if (o.plot && !o.out)
        fclose(out);
    else if ((rc = cli_close_output(cmd, o.out, out)))
        return rc;

    fprintf(stderr, "stability on %s: stiffest mode lambda = %.6g %+.6gi", stype->name, mode.re,
            mode.im);
    if (!ms)
        fprintf(stderr, " (power iteration: %d iterations, residual %.2g%s%s)", mode.iterations,
                mode.residual, mode.converged ? "" : ", not converged",
                mode.finite_differences ? ", finite differences" : "");
    fprintf(stderr, "\nT = %g, bound C = %g, bisection to 0.5 %%\n", t_end, bound);
    fprintf(stderr, "  %-22s %12s %12s %8s %10s  %s\n", "stepper", "measured", "predicted",
            "ratio", "interval", "result");
    for (int i = 0; i < ntypes; i++) {
        double ratio = crit_ratio(res[i].dt_crit, pred[i]);
        fprintf(stderr, "  %-22s %12.6g %12.6g %8.4g %10.6g  %s\n", types[i]->name,
                res[i].dt_crit, pred[i], ratio, r[i], result_name(&res[i]));
    }
    if (stopped)
        return cli_stopped(cmd, "the output has the %d stepper%s measured before it", ntypes,
                           ntypes == 1 ? "" : "s");
    if (o.plot) {
        fflush(stderr);
        if (ms || !(mag > 0.0)) {
            fprintf(stderr, "tstep stability: --plot: no stiffest mode to draw |R| along\n");
            return 1;
        }
        return draw_plot(cmd, stype->name, &mode, types, ntypes, res, &o.solver);
    }
    return 0;
}

/* --- tstep amplification ---------------------------------------------------------- */

static void amplification_help(void)
{
    printf(
        "Usage: tstep amplification --stepper A,B,...|all [--z-max Z] [--points N]\n"
        "                           [--axis real|imag] [--format dat|csv] [--out FILE]\n"
        "\n"
        "The one-step amplification factor R = x1/x0 of each stepper on the test\n"
        "equation, computed by running the stepper: one step of size 1 on test1d\n"
        "from x0 = 1 with\n"
        "  --axis real (default): k = z, omega = 0, i.e. x' = -k x with z = hk, R(-z);\n"
        "  --axis imag:           k = 0, omega = z, i.e. x' = i omega x with z = h omega,\n"
        "                         R(iz) (an undamped oscillatory mode).\n"
        "z runs over N equally spaced values from 0 to Z.  |R| <= 1: the step does not\n"
        "grow; the crossing of |R| = 1 is the stepper's stability interval, so the\n"
        "critical step on x' = -k x is dt_crit = (crossing) / k.\n"
        "\n"
        "Output: columns stepper,z,re_R,im_R,abs_R (im_R is 0 on the real axis for\n"
        "real steppers); csv: a header row, then one row per z per stepper; dat: a\n"
        "'# stepper z re_R im_R abs_R' header line, then per stepper a block whose\n"
        "first line is the comment '# NAME' (so gnuplot's index \"NAME\" selects it),\n"
        "blocks two blank lines apart (index 0, 1, ... in --stepper order).  A step\n"
        "that fails (an implicit equation singular there) gives nan.\n"
        "\n"
        "  --z-max Z     largest z (default 4)\n"
        "  --points N    number of z values, at least 2 (default 401)\n"
        CLI_SOLVER_HELP
        "\n"
        "Example: tstep amplification --stepper all --out build/amplification.dat\n"
        "  gnuplot> plot 'build/amplification.dat' index 'rk4' using 2:5 with lines\n");
}

static void put_value(FILE *out, const char *sep, double x)
{
    fprintf(out, "%s%.15g", sep, x);
}

int cmd_amplification(int argc, char **argv)
{
    static const struct option opts[] = {
        {"stepper", required_argument, 0, 'i'}, {"z-max", required_argument, 0, 'z'},
        {"points", required_argument, 0, 'n'},  {"axis", required_argument, 0, 'a'},
        {"format", required_argument, 0, 'f'},  {"out", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},          CLI_SOLVER_LONGOPTS,
        {0, 0, 0, 0}};
    const char *cmd = "amplification";
    double z_max = 4.0;
    long points = 401;
    int c, imag = 0;
    cli_common o;
    cli_common_init(&o, 0);

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = cli_common_option(cmd, c, optarg, &o);
        if (bad < 0) {
            bad = 0;
            switch (c) {
            case 'z': bad = cli_parse_positive(cmd, "z-max", optarg, &z_max); break;
            case 'n': bad = cli_parse_count(cmd, "points", optarg, 2, &points); break;
            case 'a':
                if (strcmp(optarg, "real") == 0)
                    imag = 0;
                else if (strcmp(optarg, "imag") == 0)
                    imag = 1;
                else
                    bad = cli_usage_error(cmd, "--axis: '%s' is not one of real, imag", optarg);
                break;
            case 'h': amplification_help(); return 0;
            default: return cli_bad_option(cmd, argc, argv);
            }
        }
        if (bad)
            return bad;
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    const ts_stepper_type *types[MAX_STEPPERS];
    int ntypes;
    if (cli_common_resolve(cmd, &o, NULL, NULL, types, MAX_STEPPERS, &ntypes))
        return CLI_EXIT_USAGE;
    if (points > 1000000)
        return cli_usage_error(cmd, "--points: %ld is more than 1000000", points);

    FILE *out;
    int rc = cli_open_output(cmd, o.out, &out);
    if (rc)
        return rc;
    int csv = o.format == CLI_FORMAT_CSV;
    const char *sep = csv ? "," : " ";
    fputs(csv ? "stepper,z,re_R,im_R,abs_R\n" : "# stepper z re_R im_R abs_R\n", out);
    for (int i = 0; i < ntypes; i++) {
        if (!csv)
            fprintf(out, "%s# %s\n", i ? "\n\n" : "", types[i]->name);
        for (long j = 0; j < points; j++) {
            double z = z_max * (double)j / (double)(points - 1), re, im;
            int s = imag ? ts_amplification(types[i], &o.solver, 0.0, z, &re, &im)
                         : ts_amplification(types[i], &o.solver, -z, 0.0, &re, &im);
            if (s == TS_ERR_NOMEM) {
                cli_close_output(cmd, o.out, out);
                return cli_fail(cmd, s);
            }
            if (s)
                re = im = NAN;
            fputs(types[i]->name, out);
            put_value(out, sep, z);
            put_value(out, sep, re);
            put_value(out, sep, im);
            put_value(out, sep, hypot(re, im));
            fputc('\n', out);
        }
    }
    return cli_close_output(cmd, o.out, out);
}

/* --- tstep region ------------------------------------------------------------------ */

static void region_help(void)
{
    printf(
        "Usage: tstep region --stepper A,B,...|all [--re-min A] [--re-max B]\n"
        "                    [--im-min C] [--im-max D] [--step H] [--format dat|csv]\n"
        "                    [--out FILE]\n"
        "\n"
        "Stability regions: |R(z)| of each stepper on a grid of the complex plane,\n"
        "z = h(-k + i omega), computed by running the stepper: one step of size 1 on\n"
        "test1d with k = -Re z (negative k allowed: Re z > 0), omega = Im z, from\n"
        "x0 = 1; R = x1.  The stability region is where |R| <= 1: contour it at 1.\n"
        "\n"
        "Grid: Re z from A to B (default -4 to 1) and Im z from C to D (default -4 to\n"
        "4), spacing H (default 0.05; the last line is at the end when the range is\n"
        "a whole number of H): 101 x 161 points by default.\n"
        "\n"
        "Output: columns stepper,re_z,im_z,abs_R.  csv: a header row, then one row\n"
        "per point per stepper.  dat (for splot ... with pm3d, or contour at 1): a\n"
        "'# stepper re_z im_z abs_R' header line, then per stepper a block whose\n"
        "first line is the comment '# NAME' (gnuplot: index \"NAME\"), rows\n"
        "'NAME re_z im_z abs_R' with Re z fixed along each scan line and Im z\n"
        "increasing, one blank line after each scan line (a grid for splot), two\n"
        "blank lines between steppers (index 0, 1, ... in --stepper order).  A step\n"
        "that fails (backward Euler's equation is singular at z = 1) gives nan.\n"
        "\n"
        "  --re-min A, --re-max B, --im-min C, --im-max D   the window\n"
        "  --step H      grid spacing (default 0.05; at most 4 million points)\n"
        CLI_SOLVER_HELP
        "\n"
        "Example: tstep region --stepper all --out build/region.dat\n"
        "  gnuplot: set view map; set contour; set cntrparam levels discrete 1\n"
        "           splot 'build/region.dat' index 'rk4' using 2:3:4 with pm3d\n");
}

int cmd_region(int argc, char **argv)
{
    static const struct option opts[] = {
        {"stepper", required_argument, 0, 'i'}, {"re-min", required_argument, 0, 'a'},
        {"re-max", required_argument, 0, 'b'},  {"im-min", required_argument, 0, 'c'},
        {"im-max", required_argument, 0, 'd'},  {"step", required_argument, 0, 'H'},
        {"format", required_argument, 0, 'f'},  {"out", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},          CLI_SOLVER_LONGOPTS,
        {0, 0, 0, 0}};
    const char *cmd = "region";
    double lim[4] = {-4.0, 1.0, -4.0, 4.0}, step = 0.05;
    static const char *const lim_name[4] = {"re-min", "re-max", "im-min", "im-max"};
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
            case 'a': case 'b': case 'c': case 'd':
                bad = cli_parse_real(cmd, lim_name[c - 'a'], optarg, &lim[c - 'a']);
                break;
            case 'H': bad = cli_parse_positive(cmd, "step", optarg, &step); break;
            case 'h': region_help(); return 0;
            default: return cli_bad_option(cmd, argc, argv);
            }
        }
        if (bad)
            return bad;
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    const ts_stepper_type *types[MAX_STEPPERS];
    int ntypes;
    if (cli_common_resolve(cmd, &o, NULL, NULL, types, MAX_STEPPERS, &ntypes))
        return CLI_EXIT_USAGE;
    if (!(lim[0] < lim[1]))
        return cli_usage_error(cmd, "--re-min %g must be less than --re-max %g", lim[0], lim[1]);
    if (!(lim[2] < lim[3]))
        return cli_usage_error(cmd, "--im-min %g must be less than --im-max %g", lim[2], lim[3]);
    double nre = floor((lim[1] - lim[0]) / step + 1e-9) + 1.0,
           nim = floor((lim[3] - lim[2]) / step + 1e-9) + 1.0;
    if (nre * nim > 4e6)
        return cli_usage_error(cmd, "--step %g gives %.0f x %.0f points, more than 4 million",
                               step, nre, nim);

    FILE *out;
    int rc = cli_open_output(cmd, o.out, &out);
    if (rc)
        return rc;
    int csv = o.format == CLI_FORMAT_CSV;
    const char *sep = csv ? "," : " ";
    fputs(csv ? "stepper,re_z,im_z,abs_R\n" : "# stepper re_z im_z abs_R\n", out);
    for (int i = 0; i < ntypes; i++) {
        if (!csv)
            fprintf(out, "%s# %s\n", i ? "\n" : "", types[i]->name);
        for (long a = 0; a < (long)nre; a++) {
            double re = lim[0] + (double)a * step;
            for (long b = 0; b < (long)nim; b++) {
                double im = lim[2] + (double)b * step, rr, ri;
                int s = ts_amplification(types[i], &o.solver, re, im, &rr, &ri);
                if (s == TS_ERR_NOMEM) {
                    cli_close_output(cmd, o.out, out);
                    return cli_fail(cmd, s);
                }
                fputs(types[i]->name, out);
                put_value(out, sep, re);
                put_value(out, sep, im);
                put_value(out, sep, s ? NAN : hypot(rr, ri));
                fputc('\n', out);
            }
            if (!csv)
                fputc('\n', out);
        }
    }
    return cli_close_output(cmd, o.out, out);
}

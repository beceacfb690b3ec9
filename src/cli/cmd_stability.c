/* tstep stability, tstep amplification, tstep region: the critical step of a
 * system measured against its prediction, the one-step amplification factor
 * on the test equation, and stability regions in the complex plane.  The
 * numerics are in src/analysis/stability.c (definitions in tstep/stability.h); this
 * file parses options and writes the data layouts documented in each
 * command's --help and in README.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "table.h"
#include "cli_gnuplot.h"
#include "cli_json.h"
#include "tstep/linalg.h"
#include "tstep/stability.h"

#define MAX_STEPPERS 64

static const char *kind_name(ts_crit_kind k)
{
    switch (k) {
    case TS_CRIT_FOUND: return "found";
    case TS_CRIT_INF: return "inf";
    case TS_CRIT_BELOW_MIN: return "below-min";
    case TS_CRIT_T_LIMITED: return "t-limited";
    case TS_CRIT_FAILED: return "failed";
    }
    return "?";
}

/* The result column: a bracket closed by a solver failure, not by growth,
 * is said as such. */
/* measured / predicted: 1 when both are inf or both 0, nan (written "nan",
 * never "-nan") where undefined (no prediction) */
static double crit_ratio(double measured, double predicted)
{
    if ((isinf(measured) && isinf(predicted)) || (measured == 0.0 && predicted == 0.0))
        return 1.0; /* both: no limit, or both: no stable step */
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

static void stability_help_tail(void);
static void stability_help_output(void);
static void stability_help_measured(void);

static void stability_help(const cli_opt *opts)
{
    printf(
        "Usage: tstep stability --system S --stepper A,B,...|all [--param key=value]...\n"
        "                       [--t-end T] [--bound C] [--format dat|csv|json]\n"
        "                       [--out FILE]\n"
        "                       [--at-time T0 --at-dt H [--at-stepper I]]\n"
        "                       [--eig auto|dense|arnoldi] [--measure linearized|run]\n"
        "                       [--growth-at H] [--plot]\n"
        "\n"
        "For each stepper, the critical step predicted from the whole spectrum of the\n"
        "system's linearization, beside the critical step measured by running the\n"
        "stepper.  Definitions and examples: docs/stability.md.\n"
        "\n"
        "State.  The linearization is taken at the system's initial state, or with\n"
        "--at-time T0 at the state a run reaches at T0 (stepper --at-stepper, default\n"
        "rk4, steps of --at-dt H, the last one shortened to land on T0).\n"
        "\n"
        "Spectrum.  The first-order matrix A = [0 I; M^-1 df/dx  M^-1 df/dv] (order 1:\n"
        "M^-1 df/dx) on the free degrees of freedom, built column by column from the\n"
        "system's Jacobian products (central differences of forces without them).\n"
        "--eig dense: all its eigenvalues by LAPACK (dgeev); arnoldi: the 64 of largest\n"
        "modulus by ARPACK on the products alone; auto (default): dense up to 1500\n"
        "free degrees of freedom.  Modes with |lambda| <= 1e-6 max |lambda| are taken as\n"
        "rigid and left out.\n"
        "\n"
        "Predicted.  dt_pred = min over the modes of r / |lambda|, r the stepper's\n"
        "stability radius along lambda's direction: the first s where one step of size\n"
        "s on x' = (lambda/|lambda|) x grows (|R| > 1 + 1e-14; 1e-9 for implicit\n"
        "steppers), found by running the stepper (1 %% scan from s = 0.001, then\n"
        "bisection; inf when no growth up to s = 1000).  A partitioned stepper\n"
        "(symplectic Euler, Verlet) on a second-order system is run instead on\n"
        "x'' = -w^2 x - 2 zeta w x' with w = |lambda|, zeta = -Re lambda / |lambda|:\n"
        "r is the first hw where the spectral radius of its one-step 2x2 map exceeds\n"
        "1.  On a dense spectrum a real lambda binding there is taken as the overdamped\n"
        "oscillator it is a root of (w^2 the Rayleigh quotient of its shape with\n"
        "M^-1 df/dx, zeta > 1), and dt = r / w.  The minimizing mode is the binding\n"
        "mode; it need not be the stiffest (a less damped mode binds forward Euler\n"
        "and midpoint on cloth and hair).\n"
        "A stepper that carries state between steps (Verlet's reused force with\n"
        "damping, BDF2's history) is judged by the map its runs iterate (Verlet: 3x3\n"
        "in x, v and the kept force; BDF2: the companion matrix of its recurrence),\n"
        "whose eigenvalues are found from a short run on the test equation.\n"
        "With arnoldi, modes below the smallest |lambda| found are unseen; the output\n"
        "says for which damping ratios such a mode could still bind.\n"
        "\n");
    stability_help_measured();
    cli_print_options(opts);
    stability_help_output();
}

/* The help's account of the measurement. */
static void stability_help_measured(void)
{
    printf(
        "Measured.  A run is stable at dt when, over T, a perturbation seeded along\n"
        "the binding mode (its real eigenvector, x and v parts, size 1e-6 max(1,\n"
        "|x0|_inf), on the linearization 2^20 times that) does not grow: with\n"
        "--measure linearized (default) the stepper runs on the linearization at the\n"
        "state, M x'' = df/dx x + df/dv v, so prediction and measurement are about the\n"
        "same state; with --measure run on the system itself, a perturbed run against\n"
        "an unperturbed one from the state (the state moves during T: cloth sags and\n"
        "stiffens, so the limit may differ).  The size\n"
        "|d| = sqrt(sum m (w^2 dx^2 + dv^2)), w the binding mode's |lambda|.  Unstable:\n"
        "a step fails or the state is non-finite; |d| exceeds C |d(0)| (blow-up, or a\n"
        "mode grown until it saturates); or growth is sustained: of 16 equal windows of\n"
        "the run, ln(window max |d|) rises over the second half (least squares) and the\n"
        "last window's max exceeds 1.01 times the smallest first-half window's (not\n"
        "below 1e-3 |d(0)|; on the system itself 1.001 times the largest and |d(0)|),\n"
        "unless the last 24 states follow a linear recurrence of order at most 6\n"
        "(Prony's method on 4 fixed functionals of them) whose roots would grow |d|\n"
        "by less than that margin over the run and are no repeated root on the unit\n"
        "circle: a beat, not growth (symplectic Euler just below h w = 2, whose orbit\n"
        "is a long thin ellipse; at h w = 2, a double root, it grows).  So a transient\n"
        "that decays again (forward Euler on a critically damped oscillator just\n"
        "below h = 2/w) is not instability, and a mode that starts small under a\n"
        "decaying seed (Verlet's parasitic root) is.  Modes with Re lambda > 0 (the\n"
        "state's own instability, e.g. buckling cloth) are left out of dt_pred, and\n"
        "on a dense spectrum's linearization each step of a run removes its part in\n"
        "their span, for a stepper judged on the scalar test equation that carries\n"
        "no state (its map keeps that span and the other modes' apart); a note\n"
        "names the steppers whose runs keep it.  T (default) is\n");
    printf(
        "the larger of 32 periods of the binding mode and 4 / g, g its growth rate\n"
        "ln|R| / h at h = 1.05 dt_pred, capped at 2e5 steps of dt_pred (1000 / max\n"
        "|lambda| without a finite nonzero prediction); on the system itself at most\n"
        "the 32 periods, before the flow's own separation of nearby runs (a swinging\n"
        "string, buckling cloth) overtakes the seed.  With --measure run each stepper\n"
        "is also predicted at 8 states along a run of its own (0.9 dt_crit, over T;\n"
        "2 states above 1000 eigenvalues), and standard error says the range, where\n"
        "it is lowest, and whether that mode has no stable step (true limit 0).\n"
        "The search's bracket starts as [1 - q, 1 + q] dt_pred with q = 0.245 %%, so\n"
        "a prediction that holds costs two runs; else the factor is widened (squared,\n"
        "up to 2) until the bracket holds, then bisected geometrically to 0.5 %%; both\n"
        "ends of the bracket are runs.\n"
        "dt_crit is the stable end.  t-limited (the growth over T sets what runs\n"
        "measure: no true limit, or growth past it too slow to show over T) is one\n"
        "rule: dt_pred is 0 (no stable step on the binding mode, e.g. forward Euler\n"
        "or midpoint on an undamped mode; dt_crit is then the largest step bounded\n"
        "over T, 0 when none down to 1e-6 T), or a run to 2 T is unstable, at dt_crit\n"
        "on the linearization, at 0.9 dt_crit on the system itself (made unless the\n"
        "runs are on the linearization and the bracket holds a finite nonzero\n"
        "dt_pred), or bounded up to dt = T with\n"
        "a finite limit predicted but no run above the start of 16 steps or more (T\n"
        "too short to show growth: dt_crit inf is then no verdict).\n");
}

/* The help's end: the output's columns and an example. */
static void stability_help_output(void)
{
    printf(
        "\n"
        "Output (one row per stepper; csv with a header row, dat the same columns\n"
        "space-separated under a '#' header, one block):\n"
        "  stepper     stepper name\n"
        "  dt_crit     measured critical step (inf, or 0 when below dt_min = 1e-6 T)\n"
        "  dt_fail     the smallest dt found unstable: the bracket is [dt_crit, dt_fail]\n"
        "              (inf with dt_crit inf)\n"
        "  dt_pred     predicted critical step (inf or 0 possible)\n"
        "  ratio       dt_crit / dt_pred (1 when both are inf or both 0; nan only\n"
        "              without a prediction)\n"
        "  interval    the radius r of the binding mode, in h w (dt_pred = r / w)\n"
        "  lambda_re   the binding mode's eigenvalue lambda (im >= 0); nan with no\n"
        "  lambda_im   binding mode (a zero spectrum, or only modes that grow on\n"
        "              their own: Re lambda > 0)\n"
        "  t_end       T of the runs\n"
        "  steps       steps of the run at dt_crit\n"
        "  runs        runs the search made\n"
        "  result      found | inf | below-min | t-limited | solver-failed | failed\n"
        "              (failed: the stepper's study stopped with an error, named on\n"
        "              standard error; the other rows are kept, exit status 1)\n"
        "  stiffest    yes when the binding mode has the largest |lambda| ('-': none)\n"
        "  equation    scalar | second-order: the test equation the radius comes from\n"
        "  w, zeta     the binding mode as the oscillator x'' = -w^2 x - 2 zeta w x':\n"
        "              w = |lambda|, zeta = -Re lambda / |lambda|, except a real lambda\n"
        "              of a second-order system, taken as a root of the overdamped\n"
        "              oscillator of its shape (zeta > 1; a note names it); nan with\n"
        "              no binding mode\n"
        "Standard error gets the state, the spectrum's method and size, and the same\n"
        "as a table, and the notes.  --format json writes one object with the state,\n"
        "the spectrum and, per stepper, these columns (docs/grading.md); the notes\n"
        "stay on standard error.\n");
    stability_help_tail();
}

/* The help's example. */
static void stability_help_tail(void)
{
    printf("\n"
        "Example: tstep stability --system oscillator --param k=100 --param c=20\n"
        "         --stepper forward-euler,rk4 --format csv\n"
        "gives dt_pred 0.2 (= 2/w, the critically damped limit) for forward-euler and\n"
        "0.2785 for rk4, with measured brackets around them.\n"
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

/* A stability study: its options, and what it measured. */
typedef struct study {
    cli_common o;
    double t_end, bound, at_time, at_dt;
    const char *at_stepper;
    int eig, linearized;
    const ts_stepper_type *at_type;
    const ts_system_type *stype;
    ts_params p;
    const ts_stepper_type *types[MAX_STEPPERS];
    int ntypes;
    ts_system *probe;
    ts_spectrum sp;
    double pred[MAX_STEPPERS], tend[MAX_STEPPERS];
    ts_binding bind[MAX_STEPPERS];
    ts_stability_result res[MAX_STEPPERS];
    int removed[MAX_STEPPERS]; /* the growing modes' span left out of its runs */
    ts_stability_along along[MAX_STEPPERS]; /* --measure run: the prediction along the runs */
    int along_samples;
    int failed; /* steppers whose study stopped with an error (rows kept) */
    double growth_at; /* --growth-at H: the fastest growth at step H (0: not asked) */
} study;

/* --plot: |R(dt lambda)| of each stepper against dt along its binding mode
 * lambda, the line |R| = 1, and the measured dt_crit marked on each curve
 * (where a bounded run ends, the curve should cross 1). */
static int draw_plot(const char *cmd, const study *st)
{
    const ts_binding *b = st->bind;
    const ts_stepper_type *const *types = st->types;
    const ts_stability_result *res = st->res;
    const char *system = st->stype->name;
    int ntypes = st->ntypes;
    double dt_max = 0.0, mag_max = 0.0;
    int all_stiffest = 1;
    for (int i = 0; i < ntypes; i++) {
        if (isfinite(res[i].dt_crit))
            dt_max = fmax(dt_max, res[i].dt_crit);
        mag_max = fmax(mag_max, hypot(b[i].re, b[i].im));
        all_stiffest = all_stiffest && b[i].stiffest;
    }
    dt_max = dt_max > 0.0 ? 1.5 * dt_max : 3.0 / mag_max;
    FILE *data = tmpfile(), *gp;
    if (!data)
        return cli_usage_error(cmd, "--plot: cannot make a temporary file");
    enum { POINTS = 200 };
    for (int i = 0; i < ntypes; i++) {
        if (i)
            fputs("\n\n", data);
        for (int k = 0; k <= POINTS; k++) {
            double dt = dt_max * k / POINTS, rr, ri;
            ts_mode_test test = {types[i], &st->o.solver, b[i].second_order};
            int s = ts_binding_amplification(&test, &b[i], dt, &rr, &ri);
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
    if (all_stiffest)
        fprintf(gp, "set title '%s: |R(dt lambda)| along the stiffest mode, lambda = %.4g%+.4gi'\n",
                system, b[0].re, b[0].im);
    else
        fprintf(gp, "set title '%s: |R(dt lambda)| along each stepper''s binding mode'\n",
                system);
    fprintf(gp, "set xlabel 'dt (o: measured dt_crit)'\nset key below\nset yrange [0:2]\n"
                "set xrange [0:%.8g]\nplot 1 with lines dt 2 notitle",
            dt_max);
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

/* --at-time: advance the system from its initial state to T0 with the given
 * stepper and step (ceil(T0/h) steps, the last one shortened). */
static int advance_to(const char *cmd, ts_system *sys, const ts_stepper_type *type,
                      const ts_solver_options *sopt, double t0, double h)
{
    ts_stepper *st;
    int s = ts_stepper_new(type, sys, sopt, &st);
    if (s)
        return cli_fail(cmd, s);
    /* ts_run: its divergence test (a blown-up state is no state to
     * linearize at) and its stop on a signal */
    ts_run_options ro = ts_default_run_options();
    /* ceil(T0/h) steps, the last one shortened to land on T0 (as --help says) */
    long n = (long)ceil(t0 / h - 1e-9);
    ro.dt = h, ro.t_end = t0, ro.steps = n < 1 ? 1 : n, ro.every = ro.steps;
    ts_run_result res;
    s = ts_run(sys, st, &ro, NULL, NULL, &res);
    ts_stepper_free(st);
    if (s == TS_ERR_INTERRUPTED) /* the spectrum's own check then reports the stop */
        return 0;
    if (s)
        fprintf(stderr, "tstep %s: --at-time: the run with %s failed at step %ld (t = %g)\n",
                cmd, type->name, res.failed_step, res.failed_time);
    return s ? cli_fail(cmd, s) : 0;
}

static const char *yes_no(int b) { return b ? "yes" : "no"; }

/* --measure run: the prediction along the runs (null where not made) */
static void json_along(cli_json *j, const ts_stability_along *a)
{
    if (a->samples_done < 1) {
        cli_json_null(j, "along");
        return;
    }
    int mode = a->binding.mode != (size_t)-1;
    cli_json_object(j, "along");
    cli_json_int(j, "states", a->samples_done);
    cli_json_number(j, "dt_pred_min", a->dt_pred_min);
    cli_json_number(j, "dt_pred_max", a->dt_pred_max);
    cli_json_number(j, "t_min", a->t_min);
    if (mode) {
        cli_json_number(j, "lambda_re", a->binding.re);
        cli_json_number(j, "lambda_im", a->binding.im);
    } else {
        cli_json_null(j, "lambda_re");
        cli_json_null(j, "lambda_im");
    }
    cli_json_close(j);
}

/* Stepper i's row as a JSON object: null where the row says nan or inf, and
 * for the binding mode's fields when no mode binds. */
static void json_stepper(cli_json *j, const study *st, int i)
{
    const ts_stability_result *res = &st->res[i];
    const ts_binding *b = &st->bind[i];
    int mode = b->mode != (size_t)-1;
    cli_json_object(j, NULL);
    cli_json_string(j, "stepper", st->types[i]->name);
    cli_json_number(j, "dt_crit", res->dt_crit); /* inf: null */
    cli_json_number(j, "dt_fail", res->dt_fail);
    cli_json_number(j, "dt_pred", st->pred[i]);
    cli_json_number(j, "ratio", crit_ratio(res->dt_crit, st->pred[i]));
    cli_json_number(j, "interval", b->r);
    cli_json_number(j, "lambda_re", mode ? b->re : NAN);
    cli_json_number(j, "lambda_im", mode ? b->im : NAN);
    cli_json_number(j, "t_end", st->tend[i]);
    cli_json_int(j, "steps", res->steps);
    cli_json_int(j, "runs", res->runs);
    cli_json_string(j, "result", result_name(res));
    if (mode)
        cli_json_bool(j, "stiffest", b->stiffest);
    else
        cli_json_null(j, "stiffest");
    cli_json_string(j, "equation", b->second_order ? "second-order" : "scalar");
    cli_json_number(j, "w", mode ? b->w : NAN);
    cli_json_number(j, "zeta", mode ? b->zeta : NAN);
    if (mode)
        cli_json_bool(j, "overdamped", b->overdamped);
    else
        cli_json_null(j, "overdamped");
    cli_json_bool(j, "carries_state", b->carries_state);
    if (!st->linearized)
        json_along(j, &st->along[i]);
    cli_json_array(j, "zeta_ranges"); /* arnoldi: where an unseen mode could bind */
    for (int k = 0; k < b->zeta_ranges; k++) {
        cli_json_array(j, NULL);
        cli_json_number(j, NULL, b->zeta_lo[k]);
        cli_json_number(j, NULL, b->zeta_hi[k]);
        cli_json_close(j);
    }
    cli_json_close(j); /* zeta_ranges */
    cli_json_close(j);
}

/* --format json: the rows, and the numbers of the table on standard error. */
static void write_json(FILE *out, const study *st)
{
    const ts_spectrum *sp = &st->sp;
    const ts_binding *bind = st->bind;
    double at_time = st->at_time;
    int ntypes = st->ntypes;
    cli_json j;
    cli_json_init(&j, out);
    cli_json_object(&j, NULL);
    cli_json_string(&j, "command", "stability");
    cli_json_string(&j, "system", st->stype->name);
    cli_json_number(&j, "at_time", at_time);
    cli_json_string(&j, "at_stepper", at_time > 0.0 ? st->at_type->name : NULL);
    if (at_time > 0.0)
        cli_json_number(&j, "at_dt", st->at_dt);
    else
        cli_json_null(&j, "at_dt");
    cli_json_object(&j, "spectrum");
    cli_json_string(&j, "method", ts_eig_method_name(sp->method));
    cli_json_int(&j, "eigenvalues", (long)sp->count);
    cli_json_int(&j, "dimension", (long)sp->dim);
    cli_json_bool(&j, "finite_differences", sp->finite_differences);
    cli_json_number(&j, "lambda_max", sp->lambda_max);
    if (sp->method == TS_EIG_ARNOLDI)
        cli_json_number(&j, "lambda_floor", sp->lambda_floor);
    cli_json_int(&j, "unstable_modes", ntypes > 0 ? bind[0].unstable : 0);
    cli_json_close(&j);
    cli_json_string(&j, "measured_on", st->linearized ? "linearization" : "run");
    cli_json_number(&j, "bound", st->bound);
    cli_json_array(&j, "steppers");
    for (int i = 0; i < ntypes; i++)
        json_stepper(&j, st, i);
    cli_json_close(&j);
    cli_json_close(&j);
}

static int parse_bound(const char *cmd, const char *arg, void *to)
{
    if (cli_parse_positive(cmd, "bound", arg, to))
        return CLI_EXIT_USAGE;
    if (!(*(double *)to > 1.0))
        return cli_usage_error(cmd, "--bound: '%s' must be greater than 1", arg);
    return 0;
}

static int stability_options(const char *cmd, int argc, char **argv, study *st, int *rc)
{
    static const char *const eigs[] = {"auto", "dense", "arnoldi", NULL};
    static const char *const measures[] = {"linearized", "run", NULL};
    static const int measure_values[] = {1, 0};
    static const int eig_values[] = {TS_EIG_AUTO, TS_EIG_DENSE, TS_EIG_ARNOLDI};
    cli_common *o = &st->o;
    const cli_opt opts[] = {
        CLI_OPTS_SYSTEM(o),
        CLI_OPTS_STEPPER(o, "required"),
        CLI_OPTS_PARAM(o),
        CLI_POSITIVE("t-end", &st->t_end, "T",
                     "end time of every run (default: chosen per stepper, above)"),
        {.name = "bound", .kind = CLI_OPT_CUSTOM, .to = &st->bound, .parse = parse_bound,
         .shows = CLI_OPT_REAL, .arg = "C",
         .doc = "growth cap C of the perturbation, > 1 (default %D)"},
        CLI_POSITIVE("at-time", &st->at_time, "T0",
                     "linearize (and measure) at the state of a run at T0"),
        CLI_POSITIVE("at-dt", &st->at_dt, "H", "the step of that run (required with --at-time)"),
        CLI_STRING("at-stepper", &st->at_stepper, "I", "the stepper of that run (default rk4)"),
        {.name = "eig", .kind = CLI_OPT_CHOICE, .to = &st->eig, .names = eigs,
         .values = eig_values, .says = "one of auto, dense, arnoldi", .arg = "M",
         .doc = "auto, dense or arnoldi: how the spectrum is found (above; default auto)"},
        {.name = "measure", .kind = CLI_OPT_CHOICE, .to = &st->linearized, .names = measures,
         .values = measure_values, .says = "one of linearized, run", .arg = "M",
         .doc = "linearized or run: what the runs step (above; default linearized)"},
        CLI_POSITIVE("growth-at", &st->growth_at, "H",
                     "also say, per stepper, what a run at step H shows: the fastest-growing "
                     "mode's growth per step and per second, its e-folding time, and the "
                     "factor over the stepper's T"),
        CLI_OPTS_FORMAT(o), CLI_OPTS_OUT(o),
        CLI_FLAG("plot", &o->plot,
                 "draw |R(dt lambda)| against dt along each stepper's binding mode, with "
                 "|R| = 1 and each measured dt_crit, in the terminal (gnuplot's dumb "
                 "terminal); without --out the table is then not written"),
        CLI_OPTS_SOLVER(o), CLI_HELP(stability_help), CLI_END};
    if (cli_options(cmd, argc, argv, opts, rc))
        return 1;
    if (st->at_time > 0.0 && !(st->at_dt > 0.0))
        *rc = cli_usage_error(cmd, "--at-time needs --at-dt (the step of the run to it)");
    else if (st->at_dt > 0.0 && !(st->at_time > 0.0))
        *rc = cli_usage_error(cmd, "--at-dt is only used with --at-time");
    else if (st->at_stepper && !(st->at_time > 0.0))
        *rc = cli_usage_error(cmd, "--at-stepper is only used with --at-time");
    else if (st->at_time > 0.0 && !(st->at_time / st->at_dt <= 1e9))
        *rc = cli_usage_error(cmd, "--at-time %g / --at-dt %g is more than 1e9 steps",
                              st->at_time, st->at_dt);
    else if (!(st->at_type = ts_stepper_find(st->at_stepper ? st->at_stepper : "rk4")))
        *rc = cli_usage_error(cmd, "--at-stepper: unknown stepper '%s'", st->at_stepper);
    else
        *rc = cli_common_steppers(
            cmd, o, &(cli_lookup){&st->stype, &st->p, st->types, MAX_STEPPERS, &st->ntypes});
    return *rc != 0;
}

/* The state (initial, or the run's at T0) and its spectrum into st->probe
 * and st->sp; 0, or the exit status with nothing left to free. */
static int prepare_state(const char *cmd, study *st)
{
    int rc = cli_make_system(cmd, st->stype, &st->p, &st->probe);
    if (rc)
        return rc;
    if (st->at_time > 0.0 &&
        (rc = advance_to(cmd, st->probe, st->at_type, &st->o.solver, st->at_time, st->at_dt)))
        goto fail;
    int has_jac = ts_system_has_jacobian(st->probe);
    if ((rc = drop_unrunnable(cmd, st->o.steppers, st->stype, has_jac, st->types, &st->ntypes)))
        goto fail;
    int ms = ts_spectrum_compute(st->probe, st->at_time, (ts_eig_method)st->eig, &st->sp);
    if (ts_stop_signal) {
        if (!ms)
            ts_spectrum_free(&st->sp);
        rc = cli_stopped(cmd, "before the measurements (the state and its spectrum): "
                              "nothing written");
        goto fail;
    }
    if (ms)
        rc = cli_fail(cmd, ms);
    if (!rc)
        return 0;
fail:
    ts_system_free(st->probe);
    st->probe = NULL;
    return rc;
}

/* Each stepper's study; a stop signal keeps the steppers measured before it
 * (*stopped set, st->ntypes cut).  0 or a status. */
static int measure_all(study *st, int *stopped)
{
    ts_stability_options so = ts_default_stability_options();
    so.bound = st->bound;
    so.t0 = st->at_time;
    so.t_end = st->t_end;
    so.linearized = st->linearized;
    progress_ctx pc = {NULL, 0, st->ntypes};
    int tty = isatty(STDERR_FILENO), fail = 0;
    if (tty) {
        so.progress = show_progress;
        so.progress_ctx = &pc;
    }
    for (int i = 0; i < st->ntypes && !fail; i++) {
        pc.stepper = st->types[i]->name;
        pc.index = i + 1;
        ts_stability_study_result r;
        ts_stability_problem pb = {st->stype, &st->p, st->types[i], &st->o.solver};
        fail = ts_stability_study(&pb, &so, st->probe, &st->sp, &r);
        /* a signal inside one of its implicit steps fails that step, which the
         * study may read as growth: this stepper's row is not kept either */
        if (fail == TS_ERR_INTERRUPTED || (!fail && ts_stop_signal)) {
            fail = 0;
            *stopped = 1;
            st->ntypes = i;
            break;
        }
        if (fail == TS_ERR_NOMEM)
            break;
        if (fail) { /* this stepper's row says failed; the others are kept */
            if (tty)
                clear_progress();
            fprintf(stderr, "tstep stability: %s failed: %s%s%s; its row says failed\n",
                    st->types[i]->name, ts_status_message(fail), *ts_error_detail() ? ": " : "",
                    ts_error_detail());
            r.binding = (ts_binding){.dt_pred = NAN, .mode = (size_t)-1, .r = NAN, .re = NAN,
                                     .im = NAN};
            r.result = (ts_stability_result){.dt_crit = NAN, .dt_fail = NAN,
                                             .kind = TS_CRIT_FAILED};
            r.t_end = NAN;
            r.no_prediction = 0;
            r.grow_removed = 0;
            st->failed++;
            fail = 0;
        }
        if (r.no_prediction) {
            if (tty)
                clear_progress();
            fprintf(stderr, "tstep stability: no prediction for '%s': the test equation is "
                            "refused: %s\n", st->types[i]->name, ts_error_detail());
        }
        st->bind[i] = r.binding;
        st->pred[i] = r.binding.dt_pred;
        st->res[i] = r.result;
        st->tend[i] = r.t_end;
        st->removed[i] = r.grow_removed;
    }
    if (tty)
        clear_progress();
    return fail;
}

/* The note on the modes that grow by themselves: which steppers' runs left
 * their span out, and which kept it (growth along them can then close a
 * bracket below the other modes' limit). */
static void note_unstable(const study *st)
{
    int u = st->bind[0].unstable, kept = 0;
    fprintf(stderr, "note: %d mode%s with Re lambda > 0 left out of dt_pred: the state itself is "
                    "unstable along %s (the exact solution grows there too)",
            u, u > 1 ? "s" : "", u > 1 ? "them" : "it");
    for (int i = 0; i < st->ntypes; i++)
        kept += st->res[i].kind != TS_CRIT_FAILED && st->removed[i] == 0;
    if (kept < st->ntypes)
        fprintf(stderr, "; %s runs leave their span out", kept ? "the other steppers'" : "the");
    if (kept > 0) {
        fprintf(stderr, "; the runs of");
        for (int i = 0, k = 0; i < st->ntypes; i++)
            if (st->res[i].kind != TS_CRIT_FAILED && st->removed[i] == 0)
                fprintf(stderr, "%s %s", k++ ? "," : "", st->types[i]->name);
        fprintf(stderr, " keep it (%s): growth there can end a bracket below the other "
                        "modes' limit",
                st->linearized ? "partitioned or carrying state, arnoldi, a span not found "
                                 "whole, or no other mode to seed"
                               : "runs on the system itself");
    }
    fputc('\n', stderr);
}

/* The table (or json) to --out, or to a temporary file with --plot alone. */
static int write_table(const char *cmd, const study *st)
{
    FILE *out = NULL;
    int rc = 0;
    const cli_common *o = &st->o;
    if (o->plot && !o->out) /* --plot without --out: the figure instead of the table */
        out = tmpfile();
    else
        rc = cli_open_output(cmd, o->out, &out);
    if (!rc && !out)
        rc = cli_usage_error(cmd, "--plot: cannot make a temporary file");
    if (rc)
        return rc;
    int csv = o->format == CLI_FORMAT_CSV;
    const char *sep = csv ? "," : " ";
    if (o->format == CLI_FORMAT_JSON)
        write_json(out, st);
    else
        fprintf(out, "%sstepper%sdt_crit%sdt_fail%sdt_pred%sratio%sinterval%slambda_re%slambda_im"
                 "%st_end%ssteps%sruns%sresult%sstiffest%sequation%sw%szeta\n",
            csv ? "" : "# ", sep, sep, sep, sep, sep, sep, sep, sep, sep, sep, sep, sep, sep, sep,
            sep);
    for (int i = 0; i < st->ntypes && o->format != CLI_FORMAT_JSON; i++) {
        const ts_stability_result *r = &st->res[i];
        const ts_binding *b = &st->bind[i];
        double ratio = crit_ratio(r->dt_crit, st->pred[i]);
        int mode = b->mode != (size_t)-1; /* else no mode binds: nan and '-', as in JSON's null */
        fprintf(out,
                "%s%s%.8g%s%.8g%s%.8g%s%.6g%s%.8g%s%.10g%s%.10g%s%.10g%s%ld%s%d%s%s%s%s%s%s%s%.10g%s"
                "%.10g\n",
                st->types[i]->name, sep, r->dt_crit, sep, r->dt_fail, sep, st->pred[i], sep,
                ratio, sep, b->r, sep, mode ? b->re : NAN, sep, mode ? b->im : NAN, sep,
                st->tend[i], sep, r->steps, sep, r->runs, sep, result_name(r), sep,
                mode ? yes_no(b->stiffest) : "-", sep,
                b->second_order ? "second-order" : "scalar", sep, mode ? b->w : NAN, sep,
                mode ? b->zeta : NAN);
    }
    if (o->plot && !o->out) {
        fclose(out);
        return 0;
    }
    return cli_close_output(cmd, o->out, out);
}

/* --measure run: each stepper's prediction at states along a run of its own
 * at 0.9 of the limit measured (else predicted) over its T; none where
 * neither is finite and nonzero (along[i].samples_done 0). */
static int predict_along(study *st)
{
    /* one spectrum per sample: 8 on a small system, 2 where dgeev takes seconds */
    int samples = st->sp.dim <= 1000 ? 8 : 2;
    for (int i = 0; i < st->ntypes; i++) {
        double c = st->res[i].dt_crit, p = st->pred[i];
        double h = 0.9 * (isfinite(c) && c > 0.0 ? c : isfinite(p) && p > 0.0 ? p : NAN);
        st->along[i] = (ts_stability_along){.samples_done = 0};
        if (!(h > 0.0) || !(st->tend[i] > 0.0))
            continue;
        ts_stability_problem pb = {st->stype, &st->p, st->types[i], &st->o.solver};
        ts_stability_along_options ao = {.t0 = st->at_time, .h = h, .T = st->tend[i],
                                         .samples = samples, .method = (ts_eig_method)st->eig};
        int s = ts_stability_along_run(&pb, st->probe, &ao, &st->along[i]);
        st->along_samples = samples;
        if (s)
            return s;
    }
    return TS_OK;
}

/* A limit measured above the lowest prediction along the runs: how fast
 * that mode grows at the measured limit (slowly, or the runs would show it) */
static void report_slow_mode(const study *st, int i)
{
    const ts_stability_along *a = &st->along[i];
    double h = st->res[i].dt_crit, rho;
    ts_mode_test test = {st->types[i], &st->o.solver, a->binding.second_order};
    if (a->binding.mode == (size_t)-1 || !(isfinite(h) && h > a->dt_pred_min * 1.005) ||
        ts_binding_growth(&test, &a->binding, h, &rho) || !(rho > 1.0))
        return;
    double rate = log(rho) / h;
    fprintf(stderr, "; at the measured limit it grows %.4g per second (e-folding time %.4g s, a "
                    "factor %.4g over T), so runs of length T do not show it",
            rate, 1.0 / rate, exp(rate * st->tend[i]));
}

static void report_along(const study *st)
{
    for (int i = 0; i < st->ntypes; i++) {
        const ts_stability_along *a = &st->along[i];
        const char *name = st->types[i]->name;
        if (a->samples_done < 1)
            continue;
        fprintf(stderr, "along the runs: %s's prediction at %d states to t = %.4g: %.6g to %.6g",
                name, a->samples_done, st->at_time + st->tend[i] * a->samples_done /
                st->along_samples, a->dt_pred_min, a->dt_pred_max);
        if (a->binding.mode != (size_t)-1 && isfinite(a->dt_pred_min))
            fprintf(stderr, ", lowest at t = %.4g (mode %.6g%+.6gi)", a->t_min, a->binding.re,
                    a->binding.im);
        if (a->dt_pred_min == 0.0 && a->binding.re == 0.0)
            fprintf(stderr, ": that mode is undamped and %s has no stable step on it, so its "
                            "true limit there is 0 and runs longer than T grow at every step",
                    name);
        else if (a->dt_pred_min == 0.0 && a->binding.mode != (size_t)-1)
            fprintf(stderr, ": that mode's damping ratio is %.3g, and a stable interval, if "
                            "it has one, is below the radius scan's first point (s = %g)",
                    a->binding.zeta, TS_STABILITY_S_MIN);
        if (!(a->dt_pred_min == 0.0 && a->binding.re == 0.0))
            report_slow_mode(st, i);
        fputc('\n', stderr);
    }
}

/* Standard error: the state, the spectrum, the table and the notes. */
static void report(const study *st)
{
    const ts_spectrum *sp = &st->sp;
    const ts_binding *bind = st->bind;
    int ntypes = st->ntypes;
    if (st->at_time > 0.0)
        fprintf(stderr, "stability on %s, linearized at t = %g (after %s with dt = %g)\n",
                st->stype->name, st->at_time, st->at_type->name, st->at_dt);
    else
        fprintf(stderr, "stability on %s, linearized at the initial state\n", st->stype->name);
    fprintf(stderr, "spectrum: %s, %zu of %zu eigenvalues%s, largest |lambda| = %.6g\n",
            ts_eig_method_name(sp->method), sp->count, sp->dim,
            sp->finite_differences ? " (Jacobian by central differences)" : "",
            sp->lambda_max);
    fprintf(stderr, "measured on %s, bisection to 0.5 %%, perturbation growth bound C = %g\n",
            st->linearized ? "the linearization at that state"
                           : "runs of the system from that state",
            st->bound);
    fprintf(stderr, "  %-22s %12s %12s %8s %10s  %-26s %-8s %s\n", "stepper", "measured",
            "predicted", "ratio", "radius", "binding lambda", "stiffest", "result");
    for (int i = 0; i < ntypes; i++) {
        double ratio = crit_ratio(st->res[i].dt_crit, st->pred[i]);
        char lam[64];
        if (bind[i].mode == (size_t)-1)
            snprintf(lam, sizeof lam, "-");
        else
            snprintf(lam, sizeof lam, "%.6g%+.6gi%s", bind[i].re, bind[i].im,
                     bind[i].second_order ? " (2nd)" : "");
        fprintf(stderr, "  %-22s %12.6g %12.6g %8.4g %10.6g  %-26s %-8s %s\n",
                st->types[i]->name, st->res[i].dt_crit, st->pred[i], ratio, bind[i].r, lam,
                bind[i].mode == (size_t)-1 ? "-" : yes_no(bind[i].stiffest),
                result_name(&st->res[i]));
    }
    for (int i = 0; i < ntypes; i++)
        if (bind[i].carries_state && bind[i].mode != (size_t)-1)
            fprintf(stderr, "note: %s carries state between steps (a reused force or a "
                            "multistep history): its radius is that of the map a run "
                            "iterates (eigenvalues from a run on the test equation), not "
                            "of one step from a fresh start\n", st->types[i]->name);
    for (int i = 0; i < ntypes; i++)
        if (bind[i].overdamped && bind[i].mode != (size_t)-1)
            fprintf(stderr, "note: %s's binding lambda is real, a root of the overdamped "
                            "oscillator w = %.6g, zeta = %.6g (from its shape): the radius is "
                            "in h w of that oscillator, and predicted = radius / w\n",
                    st->types[i]->name, bind[i].w, bind[i].zeta);
    report_along(st);
    if (ntypes > 0 && bind[0].unstable > 0)
        note_unstable(st);
    if (sp->method != TS_EIG_ARNOLDI)
        return;
    fprintf(stderr, "arnoldi: the %zu modes of largest |lambda| (down to %.6g) were seen;\n",
            sp->count, sp->lambda_floor);
    for (int i = 0; i < ntypes; i++)
        if (bind[i].zeta_ranges > 0) {
            fprintf(stderr, "  %s: a slower mode could bind instead only if its damping "
                            "ratio is in", st->types[i]->name);
            for (int j = 0; j < bind[i].zeta_ranges; j++)
                fprintf(stderr, "%s [%.2f, %.2f]", j ? " or" : "", bind[i].zeta_lo[j],
                        bind[i].zeta_hi[j]);
            fputc('\n', stderr);
        } else if (isfinite(st->pred[i]) && st->pred[i] > 0.0) {
            fprintf(stderr, "  %s: no slower mode can bind\n", st->types[i]->name);
        }
}

/* The mode that grows fastest at step h for one stepper: its growth per
 * step rho (|R(h lambda)|, or the map's spectral radius), *rate =
 * ln(rho) / h per second; modes with Re lambda > 0 (the state's own
 * instabilities) and rigid ones are left out, as in the prediction. */
static int fastest_growth(const study *st, int i, double h, size_t *mode, double *rho,
                          double *rate)
{
    const ts_spectrum *sp = &st->sp;
    ts_mode_test test = {st->types[i], &st->o.solver, st->bind[i].second_order};
    double cut = TS_RIGID_CUT * sp->lambda_max, recut = TS_REAL_ROUNDOFF * sp->lambda_max;
    *mode = (size_t)-1, *rho = 0.0, *rate = -INFINITY;
    for (size_t k = 0; k < sp->count; k++) {
        double re = sp->re[k], im = sp->im[k], g;
        if (im < 0.0 || !(hypot(re, im) > cut))
            continue;
        if (fabs(re) <= recut)
            re = 0.0;
        if (re > 0.0)
            continue;
        int s = ts_mode_growth(&test, h * re, h * im, &g);
        if (s == TS_ERR_NOMEM)
            return s;
        if (s)
            g = INFINITY;
        if (g > *rho)
            *rho = g, *mode = k, *rate = log(g) / h;
    }
    return TS_OK;
}

/* --growth-at H: for each stepper, what a run at step H shows: the fastest
 * growing mode's growth per step and per second, its e-folding time, and
 * the factor over the stepper's T (so a clean-looking run just past the
 * limit, of a weakly damped mode that grows slowly, is explained). */
static int report_growth(const study *st)
{
    double h = st->growth_at;
    for (int i = 0; i < st->ntypes; i++) {
        size_t k;
        double rho, rate;
        int s = fastest_growth(st, i, h, &k, &rho, &rate);
        if (s)
            return s;
        const char *name = st->types[i]->name;
        if (k == (size_t)-1) {
            fprintf(stderr, "at dt = %g: %s: no mode to judge\n", h, name);
        } else if (!(rho > 1.0)) {
            fprintf(stderr, "at dt = %g: %s: every mode decays or is neutral (largest growth per "
                            "step %.9g, mode %.6g%+.6gi)\n",
                    h, name, rho, st->sp.re[k], st->sp.im[k]);
        } else {
            double T = st->tend[i];
            fprintf(stderr, "at dt = %g: %s: mode %.6g%+.6gi grows %.9g per step, %.4g per "
                            "second (e-folding time %.4g s); over T = %.4g s a factor %.4g%s\n",
                    h, name, st->sp.re[k], st->sp.im[k], rho, rate, 1.0 / rate, T,
                    exp(rate * T),
                    exp(rate * T) < 1.01 ? " (a run of that length looks clean)" : "");
        }
    }
    return TS_OK;
}

int cmd_stability(int argc, char **argv)
{
    const char *cmd = "stability";
    static study st; /* large: the results of up to MAX_STEPPERS steppers */
    memset(&st, 0, sizeof st);
    st.bound = 1e4;
    st.at_stepper = NULL; /* rk4 unless given (and given only with --at-time) */
    st.eig = TS_EIG_AUTO;
    st.linearized = 1;
    cli_common_init(&st.o, 0);
    st.o.json_ok = 1;
    int rc, stopped = 0;
    if (stability_options(cmd, argc, argv, &st, &rc))
        return rc;
    /* SIGINT/SIGTERM from here on: the state and the spectrum stop early,
     * the measurements after the stepper under way */
    cli_catch_stop_signals();
    if ((rc = prepare_state(cmd, &st)))
        return rc;
    int fail = measure_all(&st, &stopped);
    if (!fail && !stopped && !st.linearized)
        fail = predict_along(&st);
    if (fail)
        rc = cli_fail(cmd, fail);
    else if (!(rc = write_table(cmd, &st)))
        report(&st);
    if (!rc && st.growth_at > 0.0 && (fail = report_growth(&st)))
        rc = cli_fail(cmd, fail);
    if (!rc && st.failed) { /* the table holds every row; the run failed for some */
        fflush(stderr);
        fprintf(stderr, "tstep stability: %d stepper%s failed (rows marked failed)\n", st.failed,
                st.failed == 1 ? "" : "s");
        rc = 1;
    } else if (!rc && stopped)
        rc = cli_stopped(cmd, "the output has the %d stepper%s measured before it", st.ntypes,
                         st.ntypes == 1 ? "" : "s");
    else if (!rc && st.o.plot && !(st.sp.lambda_max > 0.0)) {
        fflush(stderr);
        fprintf(stderr, "tstep stability: --plot: no mode to draw |R| along\n");
        rc = 1;
    } else if (!rc && st.o.plot) {
        fflush(stderr);
        rc = draw_plot(cmd, &st);
    }
    ts_spectrum_free(&st.sp);
    ts_system_free(st.probe);
    return rc;
}

/* --- tstep amplification ---------------------------------------------------------- */

static void amplification_help(const cli_opt *opts)
{
    printf(
        "Usage: tstep amplification --stepper A,B,...|all [--z-max Z] [--points N]\n"
        "                           [--axis real|imag] [--format dat|csv|json]\n"
        "                           [--out FILE]\n"
        "\n"
        "The one-step amplification factor R = x1/x0 of each stepper on the test\n"
        "equation, computed by running the stepper: one step of size 1 on test1d\n"
        "from x0 = 1 with\n"
        "  --axis real (default): k = z, omega = 0, i.e. x' = -k x with z = hk, R(-z);\n"
        "  --axis imag:           k = 0, omega = z, i.e. x' = i omega x with\n"
        "                         z = h omega, R(iz) (an undamped oscillatory mode).\n"
        "A partitioned stepper (one that treats x and v differently, e.g. symplectic\n"
        "Euler) is run instead on the second-order test equation\n"
        "x'' = -w^2 x - 2 zeta w x' (one particle, unit mass), whose one-step map is\n"
        "the 2x2 matrix of two steps from (x, v) = (1, 0) and (0, 1): R is its\n"
        "eigenvalue of largest modulus at hw = z, with zeta = 1 (--axis real: the\n"
        "critically damped oscillator, the pair lambda = -w) or zeta = 0 (--axis imag:\n"
        "lambda = +-iw).\n"
        "z runs over N equally spaced values from 0 to Z.  |R| <= 1: the step does not\n"
        "grow; the crossing of |R| = 1 is the stepper's stability interval, so the\n"
        "critical step on x' = -k x is dt_crit = (crossing) / k.\n"
        "\n"
        "Output: columns stepper,z,re_R,im_R,abs_R (im_R is 0 on the real axis for\n"
        "real steppers); csv: a header row, then one row per z per stepper; dat: a\n"
        "'# stepper z re_R im_R abs_R' header line, then per stepper a block whose\n"
        "first line is the comment '# NAME' (so gnuplot's index \"NAME\" selects it),\n"
        "blocks two blank lines apart (index 0, 1, ... in --stepper order); json:\n"
        "the columns, then per stepper its rows (docs/formats.md).  Without --format,\n"
        "FILE's extension (.dat, .csv, .json) chooses.  A step that fails (an\n"
        "implicit equation singular there) gives nan (json: null).\n");
    cli_print_options(opts);
    printf("\n"
        "Example: tstep amplification --stepper all --out build/amplification.dat\n"
        "  gnuplot> plot 'build/amplification.dat' index 'rk4' using 2:5 with lines\n");
}

static void put_value(FILE *out, const char *sep, double x)
{
    fprintf(out, "%s%.15g", sep, x);
}

/* Which map is shown: a note for each stepper that carries state between
 * steps (Verlet's kept force with damping, BDF2's history), whose values
 * here are those of the map a run iterates, not of one step after a fresh
 * start. */
static void note_run_map(const char *cmd, const ts_stepper_type *const *types, int ntypes,
                         const ts_solver_options *opt)
{
    for (int i = 0; i < ntypes; i++) {
        int memoryless = 1;
        if (ts_stepper_memoryless(types[i], opt, &memoryless) || memoryless)
            continue;
        fprintf(stderr,
                "tstep %s: note: %s carries state between steps (a reused force or a multistep "
                "history): shown is the map a run iterates (its eigenvalue of largest modulus, "
                "from a run on the test equation), not one step after a fresh start\n",
                cmd, types[i]->name);
    }
}

/* R at z for the amplification table: one step, or, for a stepper that
 * carries state, the run map's eigenvalue of largest modulus (im >= 0) */
static int table_factor(const ts_mode_test *test, int carries, double re, double im, double *r_re,
                        double *r_im)
{
    if (!carries)
        return ts_mode_amplification(test, re, im, r_re, r_im);
    ts_run_map m;
    int s = ts_mode_run_map(test, re, im, &m);
    if (s || m.degree == 0) {
        *r_re = *r_im = m.degree == 0 ? INFINITY : NAN;
        return s;
    }
    int k = 0; /* the largest modulus; of a conjugate pair, the one with im >= 0 */
    for (int j = 1; j < m.degree; j++) {
        double a = hypot(m.re[j], m.im[j]), b = hypot(m.re[k], m.im[k]);
        if (a > b * (1.0 + 1e-12) || (a >= b * (1.0 - 1e-12) && m.im[j] > m.im[k]))
            k = j;
    }
    *r_re = m.re[k], *r_im = m.im[k];
    return TS_OK;
}

int cmd_amplification(int argc, char **argv)
{
    static const char *const axes[] = {"real", "imag", NULL};
    const char *cmd = "amplification";
    double z_max = 4.0;
    long points = 401;
    int rc, imag = 0;
    cli_common o;
    cli_common_init(&o, 0);
    o.json_ok = 1;
    const cli_opt opts[] = {
        CLI_OPTS_STEPPER(&o, "required"),
        CLI_CHOICE("axis", &imag, axes, "one of real, imag", "A",
                   "real (default) or imag: the axis z runs along (above)"),
        CLI_POSITIVE("z-max", &z_max, "Z", "largest z (default %D)"),
        CLI_COUNT("points", &points, 2, "N", "number of z values, at least 2 (default %D)"),
        CLI_OPTS_FORMAT(&o), CLI_OPTS_OUT(&o), CLI_OPTS_SOLVER(&o),
        CLI_HELP(amplification_help), CLI_END};
    if (cli_options(cmd, argc, argv, opts, &rc))
        return rc;
    const ts_stepper_type *types[MAX_STEPPERS];
    int ntypes;
    FILE *out;
    cli_lookup to = {.types = types, .max = MAX_STEPPERS, .ntypes = &ntypes};
    if ((rc = cli_points_table(cmd, &o, points, &to, &out)))
        return rc;
    static const char *const cols[] = {"z", "re_R", "im_R", "abs_R"};
    static const int digits[] = {15, 15, 15, 15};
    cli_table t = {.format = cli_common_table_format(&o), .out = out, .command = cmd,
                   .label = "stepper", .cols = cols, .digits = digits, .ncols = 4};
    cli_table_begin(&t);
    for (int i = 0; i < ntypes; i++) {
        int memoryless = 1;
        if (ts_stepper_memoryless(types[i], &o.solver, &memoryless))
            memoryless = 1;
        ts_mode_test test = {types[i], &o.solver, ts_stability_second_order(types[i], NULL)};
        cli_table_block(&t, types[i]->name);
        for (long j = 0; j < points; j++) {
            double z = z_max * (double)j / (double)(points - 1), re, im;
            int s = table_factor(&test, !memoryless, imag ? 0.0 : -z, imag ? z : 0.0, &re, &im);
            if (s == TS_ERR_NOMEM) {
                cli_close_output(cmd, o.out, out);
                return cli_fail(cmd, s);
            }
            if (s)
                re = im = NAN;
            cli_table_row(&t, (double[]){z, re, im, hypot(re, im)});
        }
    }
    cli_table_end(&t);
    note_run_map(cmd, types, ntypes, &o.solver);
    return cli_close_output(cmd, o.out, out);
}

/* --- tstep region ------------------------------------------------------------------ */

static void region_help(const cli_opt *opts)
{
    printf(
        "Usage: tstep region --stepper A,B,...|all [--re-min A] [--re-max B]\n"
        "                    [--im-min C] [--im-max D] [--step H]\n"
        "                    [--format dat|csv|json]\n"
        "                    [--out FILE] [--plane z|oscillator] [--hw-max W]\n"
        "                    [--zeta-min A] [--zeta-max B]\n"
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
        "blank lines between steppers (index 0, 1, ... in --stepper order).  json:\n"
        "{\"command\": \"region\", \"columns\": [...], \"blocks\": [{\"name\": STEPPER,\n"
        "\"rows\": [[re_z, im_z, abs_R], ...]}, ...]} (docs/formats.md).  Without\n"
        "--format, FILE's extension (.dat, .csv, .json) chooses.  A step that fails\n"
        "(backward Euler's equation is singular at z = 1) gives nan (json: null).\n"
        "\n"
        "A partitioned stepper (one that treats x and v differently, e.g. symplectic\n"
        "Euler) is judged on the second-order test equation x'' = -w^2 x - 2 zeta w x'\n"
        "instead: at z it is run on that equation with hw = |z| and\n"
        "zeta = -Re z / |z| (the pair z, conj z of one mode) and |R| is the spectral\n"
        "radius of its one-step 2x2 map (two steps from (x, v) = (1, 0) and (0, 1)).\n"
        "A stepper that carries state between steps (Verlet's reused force with\n"
        "damping, BDF2's history) gives instead the spectral radius of the map its\n"
        "runs iterate (for BDF2 the largest root of its recurrence: the root locus),\n"
        "found from a short run on the test equation; a note on stderr says so.\n"
        "\n"
        "--plane oscillator: the (hw, zeta) plane instead, for every stepper: hw from\n"
        "0 to --hw-max (default 4), zeta from --zeta-min to --zeta-max (default 0 to\n"
        "1), spacing H; columns stepper,hw,zeta,rho with rho the spectral radius of\n"
        "the stepper's one-step map on x'' = -w^2 x - 2 zeta w x' (for a stepper that\n"
        "is not partitioned, max |R(h lambda)| over the pair's roots).  Stable where\n"
        "rho <= 1.\n");
    cli_print_options(opts);
    printf("\n"
        "Example: tstep region --stepper all --out build/region.dat\n"
        "  gnuplot: set view map; set contour; set cntrparam levels discrete 1\n"
        "           splot 'build/region.dat' index 'rk4' using 2:3:4 with pm3d\n");
}

/* region's grid: re (or hw) from lim[0] in nre steps of step, im (or zeta)
 * from lim[2] in nim steps; oscillator: the (hw, zeta) plane */
typedef struct {
    double lim[4], step;
    long nre, nim;
    int oscillator;
} region_grid;

/* Where region's values go: text (dat: a scan line per re, a blank line
 * after each, for splot; csv: rows), or json through the table writers. */
typedef struct {
    FILE *out;
    int csv;
    cli_table *json; /* NULL: dat or csv */
} region_out;

static void region_begin(region_out *o, int oscillator)
{
    if (o->json)
        cli_table_begin(o->json);
    else if (oscillator)
        fputs(o->csv ? "stepper,hw,zeta,rho\n" : "# stepper hw zeta rho\n", o->out);
    else
        fputs(o->csv ? "stepper,re_z,im_z,abs_R\n" : "# stepper re_z im_z abs_R\n", o->out);
}

static void region_block(region_out *o, int first, const char *name)
{
    if (o->json)
        cli_table_block(o->json, name);
    else if (!o->csv)
        fprintf(o->out, "%s# %s\n", first ? "" : "\n", name);
}

/* one scan line (re fixed) of values */
static void region_scan(region_out *o, const char *name, const region_grid *g, double re,
                        const double *row)
{
    const char *sep = o->csv ? "," : " ";
    for (long b = 0; b < g->nim; b++) {
        double im = g->lim[2] + (double)b * g->step;
        if (o->json) {
            cli_table_row(o->json, (double[]){re, im, row[b]});
            continue;
        }
        fputs(name, o->out);
        put_value(o->out, sep, re);
        put_value(o->out, sep, im);
        put_value(o->out, sep, row[b]);
        fputc('\n', o->out);
    }
    if (!o->csv && !o->json)
        fputc('\n', o->out);
}

/* The grid's rows, stepper by stepper; 0 or TS_ERR_NOMEM.  A stop signal
 * ends it after the row under way: *rows_done then counts the complete rows
 * written (of ntypes * nre). */
static int write_region(region_out *o, const region_grid *g, const ts_stepper_type *const *types,
                        int ntypes, const ts_solver_options *solver, long *rows_done)
{
    *rows_done = 0;
    region_begin(o, g->oscillator);
    /* a row is computed whole before it is written: a signal inside an
     * implicit step fails that point, and the row is then left out */
    double *row = malloc((size_t)g->nim * sizeof *row);
    if (!row)
        return ts_error(TS_ERR_NOMEM, "region: a row of %ld points", g->nim);
    int s = TS_OK;
    for (int i = 0; i < ntypes && !s; i++) {
        ts_mode_test test = {types[i], solver, ts_stability_second_order(types[i], NULL)};
        region_block(o, i == 0, types[i]->name);
        for (long a = 0; a < g->nre && !s; a++) {
            double re = g->lim[0] + (double)a * g->step;
            for (long b = 0; b < g->nim && !s; b++) {
                double im = g->lim[2] + (double)b * g->step, rho;
                int e = g->oscillator ? ts_oscillator_growth(types[i], solver, re, im, &rho)
                                      : ts_mode_growth(&test, re, im, &rho);
                if (e == TS_ERR_NOMEM)
                    s = e;
                row[b] = e || isinf(rho) ? NAN : rho;
            }
            if (s || ts_stop_signal)
                break;
            region_scan(o, types[i]->name, g, re, row);
            ++*rows_done;
        }
        if (ts_stop_signal)
            break;
    }
    if (o->json)
        cli_table_end(o->json);
    free(row);
    return s;
}

/* region's table to --out in its format; the exit status (a stop signal
 * keeps the complete rows before it) */
static int region_output(const char *cmd, const cli_common *o, const region_grid *g,
                         const ts_stepper_type *const *types, int ntypes)
{
    FILE *out;
    int rc;
    if ((rc = cli_open_output(cmd, o->out, &out)))
        return rc;
    cli_catch_stop_signals();
    long done;
    static const char *const zcols[] = {"re_z", "im_z", "abs_R"}, *const ocols[] = {"hw", "zeta",
                                                                                  "rho"};
    static const int digits[] = {15, 15, 15};
    /* the format --format names, else --out's extension (dat, csv, json), else dat */
    const cli_table_format *tf = cli_common_table_format(o);
    cli_table t = {.format = tf, .out = out, .command = cmd, .label = "stepper",
                   .cols = g->oscillator ? ocols : zcols, .digits = digits, .ncols = 3};
    region_out ro = {out, strcmp(tf->name, "csv") == 0, strcmp(tf->name, "json") ? NULL : &t};
    if ((rc = write_region(&ro, g, types, ntypes, &o->solver, &done))) {
        cli_close_output(cmd, o->out, out);
        return cli_fail(cmd, rc);
    }
    rc = cli_close_output(cmd, o->out, out);
    note_run_map(cmd, types, ntypes, &o->solver);
    if (ts_stop_signal && done < ntypes * g->nre)
        return cli_stopped(cmd, "after %ld of %ld rows (%ld points each): the output holds the "
                                "rows before it, complete",
                           done, ntypes * g->nre, g->nim);
    return rc;
}

int cmd_region(int argc, char **argv)
{
    static const char *const planes[] = {"z", "oscillator", NULL};
    const char *cmd = "region";
    int rc, oscillator = 0;
    /* NAN: not given (each plane refuses the other's options) */
    double hw_max = NAN, zeta_lim[2] = {NAN, NAN};
    double lim[4] = {NAN, NAN, NAN, NAN}, step = 0.05;
    cli_common o;
    cli_common_init(&o, 0);
    o.json_ok = 1;
    const cli_opt opts[] = {
        CLI_OPTS_STEPPER(&o, "required"),
        CLI_CHOICE("plane", &oscillator, planes, "one of z, oscillator", "P",
                   "z (default) or oscillator: the plane of the grid (above)"),
        CLI_REAL("re-min", &lim[0], "A", "the window's least Re z (--plane z; default -4)"),
        CLI_REAL("re-max", &lim[1], "B", "its largest Re z (default 1)"),
        CLI_REAL("im-min", &lim[2], "C", "its least Im z (default -4)"),
        CLI_REAL("im-max", &lim[3], "D", "its largest Im z (default 4)"),
        CLI_POSITIVE("hw-max", &hw_max, "W", "--plane oscillator: hw from 0 to W (default 4)"),
        CLI_REAL("zeta-min", &zeta_lim[0], "A", "--plane oscillator: least zeta (default 0)"),
        CLI_REAL("zeta-max", &zeta_lim[1], "B", "--plane oscillator: largest zeta (default 1)"),
        CLI_POSITIVE("step", &step, "H", "grid spacing (default %D; at most 4 million points)"),
        CLI_OPTS_FORMAT(&o), CLI_OPTS_OUT(&o), CLI_OPTS_SOLVER(&o), CLI_HELP(region_help),
        CLI_END};
    if (cli_options(cmd, argc, argv, opts, &rc))
        return rc;
    const ts_stepper_type *types[MAX_STEPPERS];
    int ntypes;
    if ((rc = cli_common_steppers(
             cmd, &o, &(cli_lookup){.types = types, .max = MAX_STEPPERS, .ntypes = &ntypes})))
        return rc;
    int z_given = !isnan(lim[0]) || !isnan(lim[1]) || !isnan(lim[2]) || !isnan(lim[3]);
    int osc_given = !isnan(hw_max) || !isnan(zeta_lim[0]) || !isnan(zeta_lim[1]);
    if (oscillator && z_given)
        return cli_usage_error(cmd, "--re-min/--re-max/--im-min/--im-max are for --plane z; "
                                    "the oscillator plane takes --hw-max, --zeta-min, --zeta-max");
    if (!oscillator && osc_given)
        return cli_usage_error(cmd, "--hw-max/--zeta-min/--zeta-max are for --plane oscillator");
    static const double z_default[4] = {-4.0, 1.0, -4.0, 4.0};
    for (int k = 0; k < 4; k++)
        if (isnan(lim[k]))
            lim[k] = z_default[k];
    if (isnan(hw_max))
        hw_max = 4.0;
    if (isnan(zeta_lim[0]))
        zeta_lim[0] = 0.0;
    if (isnan(zeta_lim[1]))
        zeta_lim[1] = 1.0;
    if (oscillator) { /* the (hw, zeta) plane: hw from 0 to hw_max, zeta as given */
        if (!(zeta_lim[0] < zeta_lim[1]))
            return cli_usage_error(cmd, "--zeta-min %g must be less than --zeta-max %g",
                                   zeta_lim[0], zeta_lim[1]);
        lim[0] = 0.0, lim[1] = hw_max, lim[2] = zeta_lim[0], lim[3] = zeta_lim[1];
    }
    if (!(lim[0] < lim[1]))
        return cli_usage_error(cmd, "--re-min %g must be less than --re-max %g", lim[0], lim[1]);
    if (!(lim[2] < lim[3]))
        return cli_usage_error(cmd, "--im-min %g must be less than --im-max %g", lim[2], lim[3]);
    double nre = floor((lim[1] - lim[0]) / step + 1e-9) + 1.0,
           nim = floor((lim[3] - lim[2]) / step + 1e-9) + 1.0;
    if (nre * nim > 4e6)
        return cli_usage_error(cmd, "--step %g gives %.0f x %.0f points, more than 4 million",
                               step, nre, nim);

    region_grid g = {{lim[0], lim[1], lim[2], lim[3]}, step, (long)nre, (long)nim, oscillator};
    return region_output(cmd, &o, &g, types, ntypes);
}

/* tstep run: integrate one system with one stepper and write the trajectory.
 *
 * Columns: t, x0..x{n-1}, then v0..v{n-1} for second-order systems, then
 * energy (total) where the system defines it, then with --stats the last
 * step's force_evals, newton_iters, linear_iters (and accepted, rejected
 * sub-steps with --adaptive).  CSV has a header row; dat has the same
 * columns, space-separated, under a '#' header. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

typedef struct {
    FILE *out;
    cli_format format;
    int stats, adaptive;
} writer;

static void put(const writer *w, int first, const char *text)
{
    if (!first)
        fputc(w->format == CLI_FORMAT_CSV ? ',' : ' ', w->out);
    fputs(text, w->out);
}

static void put_num(const writer *w, int first, double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", x);
    put(w, first, buf);
}

/* frames: one gnuplot index block per output time (blocks two blank lines
 * apart), a line "x y z" per particle, and for grids a blank line after
 * every frame_row particles so that splot draws the surface as a mesh. */
static int write_frame(const writer *w, const ts_system *sys, long step, double t)
{
    if (step > 0)
        fputs("\n\n", w->out);
    fprintf(w->out, "# t = %.15g step %ld\n", t, step);
    size_t np = sys->n / sys->dim;
    for (size_t i = 0; i < np; i++) {
        for (size_t d = 0; d < sys->dim; d++)
            fprintf(w->out, d ? " %.10g" : "%.10g", sys->x[i * sys->dim + d]);
        fputc('\n', w->out);
        if (sys->frame_row && (i + 1) % sys->frame_row == 0 && i + 1 < np)
            fputc('\n', w->out);
    }
    return ferror(w->out) ? ts_error(TS_ERR_IO, "writing the frames") : TS_OK;
}

static void write_header(const writer *w, const ts_system *sys)
{
    char name[32];
    if (w->format == CLI_FORMAT_FRAMES) {
        fprintf(w->out, "# %s: %zu particles, one block per frame: x y z per particle\n",
                sys->type ? sys->type->name : "system", sys->n / sys->dim);
        return;
    }
    if (w->format == CLI_FORMAT_DAT)
        fputs("# ", w->out);
    put(w, 1, "t");
    for (size_t i = 0; i < sys->n; i++) {
        snprintf(name, sizeof name, "x%zu", i);
        put(w, 0, name);
    }
    for (size_t i = 0; sys->order == 2 && i < sys->n; i++) {
        snprintf(name, sizeof name, "v%zu", i);
        put(w, 0, name);
    }
    if (sys->ops->energy)
        put(w, 0, "energy");
    if (w->stats) {
        put(w, 0, "force_evals");
        put(w, 0, "newton_iters");
        put(w, 0, "linear_iters");
    }
    if (w->stats && w->adaptive) {
        put(w, 0, "accepted");
        put(w, 0, "rejected");
    }
    fputc('\n', w->out);
}

static int write_row(void *ctx, ts_system *sys, const ts_stepper *st, long step, double t)
{
    const writer *w = ctx;
    if (w->format == CLI_FORMAT_FRAMES)
        return write_frame(w, sys, step, t);
    put_num(w, 1, t);
    for (size_t i = 0; i < sys->n; i++)
        put_num(w, 0, sys->x[i]);
    for (size_t i = 0; sys->order == 2 && i < sys->n; i++)
        put_num(w, 0, sys->v[i]);
    if (sys->ops->energy) {
        double ke = 0, pe = 0;
        int s = ts_system_energy(sys, t, &ke, &pe);
        if (s)
            return s;
        put_num(w, 0, ke + pe);
    }
    if (w->stats) {
        const ts_step_stats *l = &st->last;
        fprintf(w->out, w->format == CLI_FORMAT_CSV ? ",%ld,%ld,%ld" : " %ld %ld %ld",
                l->force_evals, l->newton_iters, l->linear_iters);
    }
    if (w->stats && w->adaptive)
        fprintf(w->out, w->format == CLI_FORMAT_CSV ? ",%ld,%ld" : " %ld %ld",
                st->total.accepted, st->total.rejected);
    fputc('\n', w->out);
    return ferror(w->out) ? ts_error(TS_ERR_IO, "writing the trajectory") : TS_OK;
}

static void help(void)
{
    printf("Usage: tstep run --system S --stepper I --dt H (--t-end T | --steps N)\n"
           "                 [--param key=value]... [--out FILE] [--every N]\n"
           "                 [--format dat|csv|frames] [--stats] [--adaptive [--strain-limit X]]\n"
           "\n"
           "Integrate system S with stepper I from t = 0 and write the trajectory.\n"
           "\n"
           "  --system S        a system (see 'tstep list')\n"
           "  --stepper I       a stepper (see 'tstep list')\n"
           "  --dt H            step size, > 0\n"
           "  --t-end T         run ceil(T/H) steps of exactly H (ends at or just past T)\n"
           "  --steps N         run N steps\n"
           "  --param key=value set a system parameter (repeatable)\n"
           "  --out FILE        write to FILE (default: standard output)\n"
           "  --every N         write every N-th step (default 1; the last step always)\n"
           "  --format dat|csv  dat: space-separated under a '#' header (default);\n"
           "                    csv: comma-separated with a header row\n"
           "  --format frames   particle systems: one gnuplot index block per output time\n"
           "                    ('# t = T step K', then 'x y z' per particle; grids have a\n"
           "                    blank line after each row so splot draws a mesh)\n"
           "  --stats           add the last step's force_evals, newton_iters, linear_iters\n"
           "                    columns, and print totals on standard error\n"
           "  --adaptive        strain-rule adaptive sub-steps (spring systems): halve\n"
           "                    when a spring's length changes by more than the limit\n"
           "  --strain-limit X  relative length change allowed per sub-step (default 0.1)\n"
           CLI_SOLVER_HELP
           "\n"
           "Columns: t, x0..x(n-1), v0..v(n-1) (second-order systems), energy (where\n"
           "defined), then the --stats columns (accepted, rejected with --adaptive).\n"
           "A run that diverges stops at that step with exit status 1; the rows\n"
           "written before it are complete.\n");
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"system", required_argument, 0, 's'}, {"stepper", required_argument, 0, 'i'},
        {"dt", required_argument, 0, 'd'},     {"t-end", required_argument, 0, 'T'},
        {"steps", required_argument, 0, 'n'},  {"param", required_argument, 0, 'p'},
        {"out", required_argument, 0, 'o'},    {"every", required_argument, 0, 'e'},
        {"format", required_argument, 0, 'f'}, {"stats", no_argument, 0, 'S'},
        {"adaptive", no_argument, 0, 'a'},     {"strain-limit", required_argument, 0, 'L'},
        {"help", no_argument, 0, 'h'},         CLI_SOLVER_LONGOPTS,
        {0, 0, 0, 0}};
    const char *cmd = "run", *sysname = NULL, *stepname = NULL, *outpath = NULL;
    double dt = 0, t_end = 0;
    long steps = 0, every = 1;
    int have_dt = 0, have_tend = 0, have_steps = 0, c;
    cli_param_list params = {0};
    ts_solver_options sopt = ts_default_solver_options();
    ts_run_options ropt = ts_default_run_options();
    writer w = {.format = CLI_FORMAT_DAT};

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 's': sysname = optarg; break;
        case 'i': stepname = optarg; break;
        case 'd': bad = cli_parse_positive(cmd, "dt", optarg, &dt), have_dt = 1; break;
        case 'T': bad = cli_parse_positive(cmd, "t-end", optarg, &t_end), have_tend = 1; break;
        case 'n': bad = cli_parse_count(cmd, "steps", optarg, 1, &steps), have_steps = 1; break;
        case 'p': bad = cli_add_param(cmd, &params, optarg); break;
        case 'o': outpath = optarg; break;
        case 'e': bad = cli_parse_count(cmd, "every", optarg, 1, &every); break;
        case 'f': bad = cli_parse_format(cmd, optarg, &w.format); break;
        case 'S': w.stats = 1; break;
        case 'a': ropt.adaptive = 1; break;
        case 'L': bad = cli_parse_positive(cmd, "strain-limit", optarg, &ropt.strain_limit); break;
        case 'h': help(); return 0;
        case 1001: case 1002: case 1003: case 1004:
            bad = cli_solver_option(cmd, c, optarg, &sopt);
            break;
        default: return cli_bad_option(cmd, argc, argv);
        }
        if (bad)
            return bad;
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    const ts_system_type *stype;
    const ts_stepper_type *itype;
    int count;
    ts_params p;
    if (stepname && (strchr(stepname, ',') || strcmp(stepname, "all") == 0))
        return cli_usage_error(cmd, "--stepper: run takes one stepper, not '%s'", stepname);
    if (cli_find_system(cmd, sysname, &stype) ||
        cli_find_steppers(cmd, stepname, &itype, 1, &count) ||
        cli_apply_params(cmd, stype, &params, &p))
        return CLI_EXIT_USAGE;
    if (!have_dt)
        return cli_usage_error(cmd, "--dt is required");
    if (have_tend == have_steps)
        return cli_usage_error(cmd, "give exactly one of --t-end and --steps");
    if (have_tend) {
        double s = ceil(t_end / dt - 1e-9);
        if (s > 1e12)
            return cli_usage_error(cmd, "--t-end %g / --dt %g is more than 1e12 steps", t_end, dt);
        steps = s < 1 ? 1 : (long)s;
    }
    ropt.dt = dt;
    ropt.steps = steps;
    ropt.every = every;
    w.adaptive = ropt.adaptive;

    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    int rc = cli_make_system(cmd, stype, &p, &sys);
    if (rc)
        return rc;
    int s = ts_stepper_new(itype, sys, &sopt, &st);
    if (s) {
        rc = cli_fail(cmd, s);
        ts_system_free(sys);
        return rc;
    }
    if (ropt.adaptive && !sys->ops->max_strain_change) {
        rc = cli_usage_error(cmd, "--adaptive needs a system with springs; '%s' has none",
                             stype->name);
        goto done;
    }
    if (w.format == CLI_FORMAT_FRAMES && sys->dim == 0) {
        rc = cli_usage_error(cmd, "--format frames needs a particle system; '%s' is not one",
                             stype->name);
        goto done;
    }
    if ((rc = cli_open_output(cmd, outpath, &w.out)))
        goto done;
    write_header(&w, sys);
    ts_run_result res;
    s = ts_run(sys, st, &ropt, write_row, &w, &res);
    rc = cli_close_output(cmd, outpath, w.out);
    if (s) {
        const char *d = ts_error_detail();
        if (res.failed_step)
            fprintf(stderr, "tstep run: %s at step %ld (t = %g to %g)%s%s\n",
                    ts_status_message(s), res.failed_step, res.failed_time,
                    res.failed_time + dt, *d ? ": " : "", d);
        else
            cli_fail(cmd, s);
        rc = ts_status_exit_code(s);
    }
    if (w.stats) {
        const ts_step_stats *tot = &st->total;
        fprintf(stderr,
                "tstep run: %ld steps to t = %g; force evaluations %ld, Jacobian products %ld, "
                "Newton iterations %ld, linear iterations %ld, accepted %ld, rejected %ld\n",
                res.steps_done, res.t, tot->force_evals, tot->jacobian_products,
                tot->newton_iters, tot->linear_iters, tot->accepted, tot->rejected);
    }
done:
    ts_stepper_free(st);
    ts_system_free(sys);
    return rc;
}

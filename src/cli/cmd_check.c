/* tstep check-system: a system's Jacobian products against finite
 * differences of its forces, the Taylor-test slope and symmetry, and its
 * energy against its forces and masses (see tstep/check.h), printed as a table; exit 0 when every check is within
 * tolerance, 1 naming the worst check and particle otherwise. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "cli_json.h"
#include "tstep/check.h"

static void help(const cli_opt *opts)
{
    printf("Usage: tstep check-system --system S [--param key=value]... [--samples N]\n"
           "                          [--seed N] [--tol X] [--min-slope X]\n"
           "                          [--perturb-x X] [--perturb-v X] [--format text|json]\n"
           "                          [--out FILE]\n"
           "\n"
           "Check system S's Jacobian products at N random states near its initial state\n"
           "along random directions u:\n"
           "  df/dx u and df/dv u against central differences of the forces,\n"
           "    relative error |J u - D u| / |J u|;\n"
           "  the Taylor test: r(e) = |f(x + e u) - f(x) - e J u| shrinks like e^2 when\n"
           "    J is the derivative (observed slope about 2) and like e when it is wrong\n"
           "    (slope about 1); a force linear in x or v leaves r at round-off ('linear');\n"
           "  symmetry w.(J u) = u.(J w), where the system declares its Jacobian symmetric;\n"
           "  the fast path (linearize + jacobian_mul, jacobian_diag) against the products;\n"
           "  where the system defines an energy: at v = 0 the potential energy's central\n"
           "    difference along u equals -f.u (f = -grad U), its Taylor remainder\n"
           "    |U(x + e u) - U(x) + e f.u| shrinks like e^2 (slope about 2; a wrong sign\n"
           "    or scale gives slope 1), and the kinetic energy equals 1/2 v^T M v.\n"
           "Symmetry and the fast path are checked at v = 0 (a symmetric fast path may\n"
           "leave out non-symmetric velocity terms, such as spring damping's).  Pinned\n"
           "degrees of freedom are checked like the others.  A fast path the system\n"
           "declares approximate (spring systems clamp compressed springs by default)\n"
           "has its error reported, not judged: check it exactly with --param clamp=0.\n"
           "\n"
           "Forcing that is not conservative at v = 0 (wind acting through drag) fails\n"
           "the energy gradient check: such a force is not -grad U.\n");
    cli_print_options(opts);
    printf("\n"
           "Exit status: 0 every check within tolerance, 1 a check failed (the worst\n"
           "check and particle are named), 2 usage error or a system without Jacobian\n"
           "products.\n");
}

static void print_where(FILE *out, const ts_system *sys, size_t comp)
{
    if (sys->dim)
        fprintf(out, "particle %zu (component %zu)%s", comp / sys->dim, comp,
               sys->pinned && sys->pinned[comp] ? ", pinned" : "");
    else
        fprintf(out, "component %zu%s", comp, sys->pinned && sys->pinned[comp] ? ", pinned" : "");
}

static void print_report(FILE *out, const ts_system *sys, const ts_jacobian_check_options *opt,
                         const ts_jacobian_report *rep)
{
    fprintf(out, "check-system: %s, %zu degree%s of freedom", sys->type ? sys->type->name : "?",
           rep->dofs, rep->dofs == 1 ? "" : "s");
    if (sys->dim)
        fprintf(out, " (%zu particle%s in %zu-D)", rep->dofs / sys->dim,
               rep->dofs / sys->dim == 1 ? "" : "s", sys->dim);
    fprintf(out, ", %zu pinned, order %d\n", rep->pinned, sys->order);
    fprintf(out, "  %d samples, seed %lu, tol %g, min slope %g\n\n", opt->samples, opt->seed, opt->tol,
           opt->min_slope);
    fprintf(out, "  %-22s %-5s %-26s %s\n", "check", "", "result", "worst at");
    for (int k = 0; k < TS_JCHECK_COUNT; k++) {
        const ts_jcheck_result *r = &rep->check[k];
        char result[64];
        if (!r->done) {
            const char *why =
                sys->order == 1 && (k == TS_JCHECK_DFDV || k == TS_JCHECK_TAYLOR_V ||
                                    k == TS_JCHECK_SYMMETRY_V || k == TS_JCHECK_KINETIC)
                    ? "(first-order system: no v)"
                : k >= TS_JCHECK_ENERGY_GRADIENT
                    ? "(the system defines no energy)"
                : k == TS_JCHECK_SYMMETRY_X || k == TS_JCHECK_SYMMETRY_V
                    ? "(Jacobian not declared symmetric)"
                : k == TS_JCHECK_FAST_PATH
                    ? (sys->ops->linearize ? "(the fast path is the only product)"
                                           : "(no linearize/jacobian_mul)")
                    : "(no jacobian_diag)";
            fprintf(out, "  %-22s %-5s %s\n", ts_jcheck_name(k), "n/a", why);
            continue;
        }
        if (k == TS_JCHECK_TAYLOR_X || k == TS_JCHECK_TAYLOR_V || k == TS_JCHECK_ENERGY_TAYLOR) {
            if (r->linear)
                snprintf(result, sizeof result, "linear (r at round-off)");
            else
                snprintf(result, sizeof result, "slope %.2f", r->slope);
        } else {
            snprintf(result, sizeof result, "relative error %.2e", r->error);
        }
        int approx = k == TS_JCHECK_FAST_PATH && sys->fast_path_approximate;
        fprintf(out, "  %-22s %-5s %-26s ", ts_jcheck_name(k),
               approx ? "info" : r->passed ? "ok" : "FAIL", result);
        if (r->linear || k == TS_JCHECK_KINETIC)
            fprintf(out, "-");
        else
            print_where(out, sys, r->component);
        fprintf(out, "\n");
    }
    if (rep->check[TS_JCHECK_FAST_PATH].done && sys->fast_path_approximate)
        fprintf(out, "  (info: this system's fast path approximates the Jacobian on purpose,\n"
               "   e.g. clamped compressed springs; --param clamp=0 checks it exactly)\n");
    fprintf(out, "\n");
}

/* Why check k was not done (the text table's n/a reason). */
static const char *not_done_reason(const ts_system *sys, int k)
{
    return sys->order == 1 && (k == TS_JCHECK_DFDV || k == TS_JCHECK_TAYLOR_V ||
                               k == TS_JCHECK_SYMMETRY_V)
               ? "first-order system: no v"
           : k == TS_JCHECK_SYMMETRY_X || k == TS_JCHECK_SYMMETRY_V
               ? "Jacobian not declared symmetric"
           : k == TS_JCHECK_FAST_PATH
               ? (sys->ops->linearize ? "the fast path is the only product"
                                      : "no linearize/jacobian_mul")
               : "no jacobian_diag";
}

static void print_json(FILE *out, const ts_system *sys, const ts_jacobian_check_options *opt,
                       const ts_jacobian_report *rep)
{
    cli_json j;
    cli_json_init(&j, out);
    cli_json_object(&j, NULL);
    cli_json_string(&j, "command", "check-system");
    cli_json_string(&j, "system", sys->type ? sys->type->name : NULL);
    cli_json_int(&j, "dofs", (long)rep->dofs);
    cli_json_int(&j, "dim", (long)sys->dim);
    if (sys->dim)
        cli_json_int(&j, "particles", (long)(rep->dofs / sys->dim));
    else
        cli_json_null(&j, "particles");
    cli_json_int(&j, "pinned", (long)rep->pinned);
    cli_json_int(&j, "order", sys->order);
    cli_json_int(&j, "samples", opt->samples);
    cli_json_int(&j, "seed", (long)opt->seed);
    cli_json_number(&j, "tol", opt->tol);
    cli_json_number(&j, "min_slope", opt->min_slope);
    cli_json_array(&j, "checks");
    for (int k = 0; k < TS_JCHECK_COUNT; k++) {
        const ts_jcheck_result *r = &rep->check[k];
        int taylor = k == TS_JCHECK_TAYLOR_X || k == TS_JCHECK_TAYLOR_V;
        int approx = k == TS_JCHECK_FAST_PATH && sys->fast_path_approximate;
        cli_json_object(&j, NULL);
        cli_json_string(&j, "name", ts_jcheck_name(k));
        cli_json_string(&j, "result", !r->done  ? "n/a"
                                      : approx  ? "info"
                                      : r->passed ? "ok"
                                                  : "fail");
        if (!r->done) {
            cli_json_string(&j, "reason", not_done_reason(sys, k));
            cli_json_close(&j);
            continue;
        }
        if (taylor) {
            cli_json_number(&j, "slope", r->linear ? NAN : r->slope);
            cli_json_bool(&j, "linear", r->linear);
        } else {
            cli_json_number(&j, "relative_error", r->error);
        }
        if (r->linear) {
            cli_json_null(&j, "component");
        } else {
            cli_json_int(&j, "component", (long)r->component);
            if (sys->dim)
                cli_json_int(&j, "particle", (long)(r->component / sys->dim));
            cli_json_bool(&j, "component_pinned", sys->pinned && sys->pinned[r->component]);
        }
        cli_json_int(&j, "sample", r->sample);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    cli_json_bool(&j, "passed", rep->passed);
    if (rep->passed)
        cli_json_null(&j, "worst");
    else
        cli_json_string(&j, "worst", ts_jcheck_name(rep->worst));
    cli_json_close(&j);
}

/* The text report's last lines: pass, or the worst check and where. */
static void print_verdict(FILE *out, const char *cmd, const ts_system *sys, const ts_system_type *stype,
                          const ts_jacobian_check_options *opt, const ts_jacobian_report *rep)
{
    if (rep->passed) {
        fprintf(out, "result: pass (every check within tolerance)\n");
    } else {
        const ts_jcheck_result *w = &rep->check[rep->worst];
        fprintf(out, "result: FAIL: %s", ts_jcheck_name(rep->worst));
        int energy = rep->worst >= TS_JCHECK_ENERGY_GRADIENT;
        if (rep->worst == TS_JCHECK_TAYLOR_X || rep->worst == TS_JCHECK_TAYLOR_V ||
            rep->worst == TS_JCHECK_ENERGY_TAYLOR)
            fprintf(out, " (slope %.2f < %g)", w->slope, opt->min_slope);
        else
            fprintf(out, " (relative error %.2e > tol %g)", w->error, opt->tol);
        if (rep->worst != TS_JCHECK_KINETIC) {
            fprintf(out, ", worst at ");
            print_where(out, sys, rep->component);
        }
        fprintf(out, ", sample %d\n", w->sample);
        if (rep->worst == TS_JCHECK_ENERGY_GRADIENT || rep->worst == TS_JCHECK_ENERGY_TAYLOR)
            fprintf(out, "  (the forces at v = 0 are not -grad of the potential energy: a wrong sign\n"
                   "   or scale of the energy or of a force, or forcing that is not conservative,\n"
                   "   such as wind)\n");
        else if (rep->worst == TS_JCHECK_KINETIC)
            fprintf(out, "  (the kinetic energy is not 1/2 v^T M v with the system's masses)\n");
        fprintf(stderr, "tstep %s: system '%s' failed the %s check (%s)\n", cmd, stype->name,
                energy ? "energy" : "Jacobian", ts_jcheck_name(rep->worst));
    }
}

static int parse_perturb_v(const char *cmd, const char *arg, void *to)
{
    if (cli_parse_real(cmd, "perturb-v", arg, to))
        return CLI_EXIT_USAGE;
    if (*(double *)to < 0.0)
        return cli_usage_error(cmd, "--perturb-v: '%s' must be at least 0", arg);
    return 0;
}

int cmd_check(int argc, char **argv)
{
    static const char *const formats[] = {"text", "json", NULL};
    const char *cmd = "check-system";
    int json = 0, rc;
    cli_common o;
    cli_common_init(&o, 0);
    ts_jacobian_check_options opt = ts_default_jacobian_check_options();
    long samples = opt.samples, seed = (long)opt.seed;
    const cli_opt opts[] = {
        CLI_OPTS_SYSTEM(&o), CLI_OPTS_PARAM(&o),
        CLI_COUNT("samples", &samples, 1, "N", "random states (default %D, at most 10000)"),
        CLI_COUNT("seed", &seed, 0, "N", "random seed (default %D): the same seed, the same "
                                         "states"),
        CLI_POSITIVE("tol", &opt.tol, "X", "largest relative error accepted (default %D)"),
        CLI_POSITIVE("min-slope", &opt.min_slope, "X",
                     "smallest Taylor slope accepted (default %D)"),
        CLI_POSITIVE("perturb-x", &opt.perturb_x, "X",
                     "position perturbation, relative to max(1, |x|_inf), > 0 (default %D)"),
        {.name = "perturb-v", .kind = CLI_OPT_CUSTOM, .to = &opt.perturb_v,
         .parse = parse_perturb_v, .shows = CLI_OPT_REAL, .arg = "X",
         .doc = "velocity perturbation, relative to max(1, |v|_inf), at least 0 (default %D)"},
        CLI_CHOICE("format", &json, formats, "text or json", "F",
                   "text (default) or json (the same numbers; docs/grading.md)"),
        CLI_STRING("out", &o.out, "FILE", "write the report to FILE (default: standard output)"),
        CLI_HELP(help), CLI_END};
    if (cli_options(cmd, argc, argv, opts, &rc))
        return rc;
    if (samples > 10000)
        return cli_usage_error(cmd, "--samples: %ld is more than 10000", samples);
    opt.samples = (int)samples;
    opt.seed = (unsigned long)seed;

    const ts_system_type *stype;
    ts_params p;
    if (cli_common_resolve(cmd, &o, &(cli_lookup){.stype = &stype, .p = &p}))
        return CLI_EXIT_USAGE;
    ts_system *sys;
    if ((rc = cli_make_system(cmd, stype, &p, &sys)))
        return rc;
    if (!ts_system_has_jacobian(sys)) {
        ts_system_free(sys);
        fprintf(stderr,
                "tstep %s: system '%s' has no Jacobian products (dfdx_mul/dfdv_mul or "
                "linearize/jacobian_mul) to check\n",
                cmd, stype->name);
        return CLI_EXIT_USAGE;
    }
    ts_jacobian_report rep;
    int s = ts_jacobian_check(sys, &opt, &rep);
    FILE *out = NULL;
    if (s || (rc = cli_open_output(cmd, o.out, &out))) {
        rc = s ? cli_fail(cmd, s) : rc;
        ts_system_free(sys);
        return rc;
    }
    if (json) {
        print_json(out, sys, &opt, &rep);
        if (!rep.passed)
            fprintf(stderr, "tstep %s: system '%s' failed the Jacobian check (%s)\n", cmd,
                    stype->name, ts_jcheck_name(rep.worst));
    } else {
        print_report(out, sys, &opt, &rep);
        print_verdict(out, cmd, sys, stype, &opt, &rep);
    }
    ts_system_free(sys);
    rc = cli_close_output(cmd, o.out, out);
    return rc ? rc : rep.passed ? 0 : 1;
}

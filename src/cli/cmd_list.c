/* tstep list: every registered stepper and system, with parameters. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "cli_json.h"
#include "tstep/linsolve.h"
#include "tstep/springs.h"

static const char *kind_name(ts_param_kind k)
{
    return k == TS_PARAM_REAL ? "real" : k == TS_PARAM_INT ? "int" : "text";
}

/* The rules of ts_linsolve_choose, in words, with its limits. */
static const char *default_solver(char *buf, size_t size)
{
    snprintf(buf, size,
             "direct for a spring network with\na banded Jacobian (half-bandwidth <= %d "
             "unknowns: string, hair) unless a --cg-*\noption is given; else cg with amg for "
             "a spring network of >= %d unknowns that\nis not banded (cloth from 19 x 19), "
             "jacobi otherwise",
             TS_BANDED_MAX, TS_AMG_MIN);
    return buf;
}

static void print_json(FILE *out)
{
    cli_json j;
    cli_json_init(&j, out);
    cli_json_object(&j, NULL);
    cli_json_string(&j, "command", "list");
    cli_json_array(&j, "steppers");
    for (size_t i = 0; ts_stepper_at(i); i++) {
        const ts_stepper_type *t = ts_stepper_at(i);
        cli_json_object(&j, NULL);
        cli_json_string(&j, "name", t->name);
        cli_json_int(&j, "order", t->order);
        cli_json_string(&j, "kind", t->flags & TS_IMPLICIT ? "implicit" : "explicit");
        cli_json_bool(&j, "symplectic", (t->flags & TS_SYMPLECTIC) != 0);
        cli_json_bool(&j, "needs_jacobian", (t->flags & TS_NEEDS_JACOBIAN) != 0);
        cli_json_bool(&j, "needs_energy", (t->flags & TS_NEEDS_ENERGY) != 0);
        cli_json_bool(&j, "partitioned", (t->flags & TS_PARTITIONED) != 0);
        cli_json_bool(&j, "linearized", (t->flags & TS_LINEARIZED) != 0);
        cli_json_bool(&j, "multistep", (t->flags & TS_MULTISTEP) != 0);
        cli_json_bool(&j, "adaptive", (t->flags & TS_ADAPTIVE) != 0);
        cli_json_string(&j, "summary", t->summary);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    cli_json_array(&j, "linear_solvers");
    for (size_t i = 0; ts_linsolve_registry[i]; i++) {
        cli_json_object(&j, NULL);
        cli_json_string(&j, "name", ts_linsolve_registry[i]->name);
        cli_json_string(&j, "summary", ts_linsolve_registry[i]->summary);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    cli_json_array(&j, "preconditioners");
    for (size_t i = 0; ts_precond_registry[i]; i++) {
        cli_json_object(&j, NULL);
        cli_json_string(&j, "name", ts_precond_registry[i]->name);
        cli_json_string(&j, "summary", ts_precond_registry[i]->summary);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    char def[512];
    default_solver(def, sizeof def);
    for (char *c = def; *c; c++) /* one line in JSON */
        if (*c == '\n')
            *c = ' ';
    cli_json_string(&j, "default_solver", def);
    cli_json_array(&j, "systems");
    for (size_t i = 0; ts_system_at(i); i++) {
        const ts_system_type *s = ts_system_at(i);
        cli_json_object(&j, NULL);
        cli_json_string(&j, "name", s->name);
        cli_json_string(&j, "summary", s->summary);
        cli_json_array(&j, "params");
        for (const ts_param_def *d = s->params; d && d->name; d++) {
            cli_json_object(&j, NULL);
            cli_json_string(&j, "name", d->name);
            cli_json_string(&j, "kind", kind_name(d->kind));
            cli_json_string(&j, "default", d->def);
            cli_json_string(&j, "summary", d->summary);
            cli_json_close(&j);
        }
        cli_json_close(&j);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    cli_json_close(&j);
}

static void list_help(const cli_opt *opts)
{
    printf("Usage: tstep list [--format text|json] [--out FILE]\n\nPrint every stepper (name, "
           "nominal order, kind, summary), every linear solver\nand preconditioner, the "
           "rule choosing the default solver, and every system\n(name, summary, parameters "
           "with kind, default and meaning).\n");
    cli_print_options(opts);
}

static void print_text(FILE *out)
{
    fprintf(out, "Steppers:\n");
    for (size_t i = 0; ts_stepper_at(i); i++) {
        const ts_stepper_type *t = ts_stepper_at(i);
        fprintf(out, "  %-22s order %d  %-8s  %s\n", t->name, t->order,
               t->flags & TS_IMPLICIT ? "implicit" : "explicit", t->summary);
    }
    fprintf(out, "\nLinear solvers (--linear-solver):\n");
    for (size_t i = 0; ts_linsolve_registry[i]; i++)
        fprintf(out, "  %-22s %s\n", ts_linsolve_registry[i]->name, ts_linsolve_registry[i]->summary);
    fprintf(out, "\nPreconditioners (--precond, for cg):\n");
    for (size_t i = 0; ts_precond_registry[i]; i++)
        fprintf(out, "  %-22s %s\n", ts_precond_registry[i]->name, ts_precond_registry[i]->summary);
    char def[512];
    fprintf(out, "\nDefault solver, when neither option is given: %s\n", default_solver(def, sizeof def));
    fprintf(out, "\nSystems:\n");
    for (size_t i = 0; ts_system_at(i); i++) {
        const ts_system_type *s = ts_system_at(i);
        fprintf(out, "  %-12s %s\n", s->name, s->summary);
        for (const ts_param_def *d = s->params; d && d->name; d++)
            fprintf(out, "      %-16s %-4s = %-12s %s\n", d->name, kind_name(d->kind),
                   *d->def ? d->def : "\"\"", d->summary);
    }
    /* a grid particle has about 6 springs (structural, shear, flexion) */
    double mem = ts_memory_physical(), per = ts_springs_memory_estimate(1, 6);
    fprintf(out, "\nLimits:\n"
           "  memory        this machine has %.3g GB; spring systems take about %.0f bytes a\n"
           "                particle with its springs, so a cloth grid of up to about %.3g\n"
           "                particles (nx = ny = %.0f); larger systems are refused with the\n"
           "                estimate\n"
           "  run           refuses, before it starts, more than 1 GB of output or an\n"
           "                estimated hour (--allow-large lifts both)\n",
           mem / 1e9, per, mem / per, floor(sqrt(mem / per)));
}

int cmd_list(int argc, char **argv)
{
    static const char *const formats[] = {"text", "json", NULL};
    const char *path = NULL;
    int json = 0, rc;
    FILE *out;
    const cli_opt opts[] = {
        CLI_CHOICE("format", &json, formats, "text or json", "F",
                   "text (default) or json: the same as one JSON object (docs/grading.md)"),
        CLI_STRING("out", &path, "FILE", "write to FILE (default: standard output)"),
        CLI_HELP(list_help), CLI_END};
    if (cli_options("list", argc, argv, opts, &rc))
        return rc;
    if ((rc = cli_open_output("list", path, &out)))
        return rc;
    if (json)
        print_json(out);
    else
        print_text(out);
    return cli_close_output("list", path, out);
}

/* The options section of a command's --help, written from its option table
 * (cli.h): each entry's "--name ARG" and its text, wrapped.  The texts that
 * depend on the command (its formats, its solver defaults) or on a registry
 * (linear solvers, preconditioners) are written here by the entries' doc_fn. */
#include <string.h>
#include "cli.h"
#include "tstep/linsolve.h"
#include "tstep/numfmt.h"

#define HELP_WIDTH 79 /* the last column a help line may use */
#define HELP_TEXT 24  /* the column an option's text starts in */

/* Write `text` from column `col` (the cursor's) wrapped at HELP_WIDTH, every
 * continuation line indented to HELP_TEXT; '\n' in the text starts a new
 * line.  Words longer than a line are written whole. */
static void wrap(const char *text, int col)
{
    const char *p = text;
    while (*p) {
        if (*p == '\n') {
            printf("\n%*s", HELP_TEXT, "");
            col = HELP_TEXT;
            p++;
            continue;
        }
        if (*p == ' ') {
            p++;
            continue;
        }
        size_t len = strcspn(p, " \n");
        int first = col == HELP_TEXT;
        if (!first && col + 1 + (int)len > HELP_WIDTH) {
            printf("\n%*s", HELP_TEXT, "");
            col = HELP_TEXT;
            first = 1;
        }
        printf("%s%.*s", first ? "" : " ", (int)len, p);
        col += (int)len + !first;
        p += len;
    }
    putchar('\n');
}

/* x as the help writes numbers: the shortest decimal that reads back,
 * without an exponent's sign or leading zeros ("1e-8", "1e4"). */
static void help_number(char *buf, double x)
{
    char tmp[TS_NUM_MAX], *e;
    ts_format_double(tmp, x, 0);
    if (!(e = strchr(tmp, 'e'))) {
        memcpy(buf, tmp, strlen(tmp) + 1);
        return;
    }
    const char *d = e + 1;
    int neg = *d == '-';
    d += *d == '-' || *d == '+';
    while (*d == '0' && d[1])
        d++;
    snprintf(buf, TS_NUM_MAX, "%.*se%s%s", (int)(e - tmp), tmp, neg ? "-" : "", d);
}

/* The value in `to` of a number-valued entry, as the help's default. */
static void value_text(const cli_opt *e, char *buf)
{
    switch (e->kind == CLI_OPT_CUSTOM ? e->shows : e->kind) {
    case CLI_OPT_REAL: case CLI_OPT_POSITIVE:
        help_number(buf, *(const double *)e->to);
        break;
    case CLI_OPT_COUNT: snprintf(buf, TS_NUM_MAX, "%ld", *(const long *)e->to); break;
    case CLI_OPT_INT: snprintf(buf, TS_NUM_MAX, "%d", *(const int *)e->to); break;
    default: snprintf(buf, TS_NUM_MAX, "?"); break;
    }
}

/* The entry's text into buf, "%D" replaced by its value now (the default,
 * since the help is printed before any option is parsed). */
static const char *entry_text(const cli_opt *e, char *buf, size_t n)
{
    if (e->doc_fn) {
        e->doc_fn(e, buf, n);
        return buf;
    }
    const char *d = e->doc ? e->doc : "", *mark = strstr(d, "%D");
    if (!mark)
        return d;
    char value[TS_NUM_MAX];
    value_text(e, value);
    snprintf(buf, n, "%.*s%s%s", (int)(mark - d), d, value, mark + 2);
    return buf;
}

void cli_print_options(const cli_opt *opts)
{
    printf("\nOptions:\n");
    for (const cli_opt *e = opts; e->kind != CLI_OPT_END; e++) {
        char head[64], buf[1024];
        int col = snprintf(head, sizeof head, "  --%s%s%s", e->name, e->arg ? " " : "",
                           e->arg ? e->arg : "");
        const char *text = entry_text(e, buf, sizeof buf);
        printf("%s", head);
        if (col + 2 > HELP_TEXT) {
            printf("\n%*s", HELP_TEXT, "");
        } else {
            printf("%*s", HELP_TEXT - col, "");
        }
        wrap(text, HELP_TEXT);
    }
}

/* --- the texts that depend on the command or a registry ------------------------- */

void cli_doc_format(const cli_opt *e, char *buf, size_t n)
{
    const cli_common *o = e->to;
    snprintf(buf, n, "the output's format: %s; without it, FILE's extension chooses (.csv, "
                     ".json%s), else dat",
             o->frames_ok && o->json_ok ? "dat, csv, json, npy or frames (below)"
             : o->frames_ok             ? "dat, csv, npy or frames (below)"
             : o->json_ok               ? "dat, csv or json"
                                        : "dat or csv",
             o->frames_ok ? ", .npy" : "");
}

/* " here" when the command's default differs from the library's */
static const char *here(double value, double library)
{
    return value != library ? " here" : "";
}

void cli_doc_newton_tol(const cli_opt *e, char *buf, size_t n)
{
    const ts_solver_options *so = e->to;
    char tol[TS_NUM_MAX];
    help_number(tol, so->newton_tol);
    snprintf(buf, n, "implicit steppers: Newton stops when the residual r of the implicit "
                     "equation has |M^-1 r|_inf <= X max(1, |v|_inf) (order 1: |x|_inf), or "
                     "a full update is that small, or the error estimated to be left after "
                     "it (from Newton's contraction and the solve's residual) is a tenth of "
                     "that (default %s%s; at least 2.22e-16)",
             tol, here(so->newton_tol, ts_default_solver_options().newton_tol));
}

void cli_doc_cg_tol(const cli_opt *e, char *buf, size_t n)
{
    const ts_solver_options *so = e->to;
    char dflt[96];
    if (so->cg_tol > 0.0) {
        help_number(dflt, so->cg_tol);
        strcat(dflt, " here");
    } else {
        snprintf(dflt, sizeof dflt, "automatic: the Eisenstat-Walker rule in Newton, 1e-10 "
                                    "for a linearized step");
    }
    snprintf(buf, n, "linear solves: relative residual, 2.22e-16 <= X < 1 (default: %s)",
             dflt);
}

void cli_doc_cg_max(const cli_opt *e, char *buf, size_t n)
{
    int cg_max = *(const int *)e->to;
    if (cg_max > 0)
        snprintf(buf, n, "linear iteration cap per solve (default %d)", cg_max);
    else
        snprintf(buf, n, "linear iteration cap per solve (default 2 * the state's length + 20, "
                         "the state being positions and velocities)");
}

/* "a, b, c" (or "a or b" with `or`) of a registry's names into buf */
static void registry_names(char *buf, size_t size, const char *(*name_at)(size_t), int or)
{
    size_t len = 0, n = 0;
    while (name_at(n))
        n++;
    buf[0] = '\0';
    for (size_t i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s",
                                i == 0 ? "" : i + 1 < n || !or ? ", " : " or ", name_at(i));
}

static const char *linsolve_name(size_t i)
{
    return ts_linsolve_registry[i] ? ts_linsolve_registry[i]->name : NULL;
}

static const char *precond_name(size_t i)
{
    return ts_precond_registry[i] ? ts_precond_registry[i]->name : NULL;
}

void cli_doc_linear_solver(const cli_opt *e, char *buf, size_t n)
{
    char names[256];
    (void)e;
    registry_names(names, sizeof names, linsolve_name, 1);
    snprintf(buf, n, "the implicit steppers' linear solver: %s (see tstep list); default, by the "
                     "system: direct for a banded spring network (string, hair, cloth at most "
                     "5 wide; cg with jacobi if --cg-tol or --cg-max is given), cg with amg for "
                     "other spring networks of 1000 unknowns or more (cloth from 19 x 19), cg "
                     "with jacobi otherwise (docs/solvers.md)",
             names);
}

void cli_doc_precond(const cli_opt *e, char *buf, size_t n)
{
    char names[256];
    (void)e;
    registry_names(names, sizeof names, precond_name, 0);
    snprintf(buf, n, "CG's preconditioner: %s (not with --linear-solver direct); given alone, "
                     "it makes the solver cg; default: as --linear-solver says",
             names);
}

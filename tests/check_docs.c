/* The figures the docs quote from tstep, checked against tstep.
 *
 * A figure in README.md or a Markdown file of docs/ is paired with the command that prints
 * it by a check block, an HTML comment (invisible when rendered) placed after
 * the text that quotes it:
 *
 *   <!-- check: build/tstep stability --system test1d --stepper heun3
 *   heun3 | 2.513 found
 *   heun3 | dt_pred=2.51275 result=found
 *   -->
 *
 * The command runs from the repository root (standard output and error
 * together).  Each following line is `PATTERN | FIGURE FIGURE ...`: some line
 * of the output that starts with PATTERN (after its indentation; `*`: any
 * line) must hold every FIGURE.
 * A numeric figure is held when a number on that line, rounded to the
 * figure's printed precision (its last written digit), equals it: 2.513
 * holds 2.51275, 4.435e-3 holds 0.00443523, 733 holds 733; anything else is
 * a word that must appear as written (a result such as `found`).
 * A column figure NAME=FIGURE is held by a line starting with PATTERN whose
 * whitespace-separated token in column NAME equals FIGURE (a number within
 * its printed precision, a word as written): the column is NAME's place
 * among the tokens of the nearest line above that line in the output that
 * has NAME as a token (a header; its leading `#` token, if any, is dropped
 * before counting), counted from the line's first token.  With
 * `# stepper dt_crit dt_fail` above `verlet 1.98535 1.9951`, dt_fail=1.9951
 * holds and dt_crit=1.9951 does not.  NAME is letters, digits, `_`, `-` and
 * `.`; a word with `=` after such a name is read as a column figure.
 * Use a column figure wherever the number could also stand in another
 * column of the line (an integer, a bracket's other end).
 * Each numeric figure (of a column figure, the part after `=`) must also be
 * written in the document within the TS_DOCS_WINDOW lines above the block,
 * as a number of its own (2 is not written by 12, 0.25 or 2.5e-3; -2.5 may
 * be written with the minus sign U+2212, −2.5), so the text a reader sees
 * is the text checked. */
#define _GNU_SOURCE
#include <ctype.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

#define TS_DOCS_WINDOW 60 /* lines above a block where its figures must be written */
#define TS_DOCS_OUT (1 << 20)

/* Half a unit in the last written digit of a numeric figure (0 when the
 * text is not a number): "2.513" -> 5e-4, "4.435e-3" -> 5e-7, "733" -> 0.5. */
static double figure_half_ulp(const char *fig, double *value)
{
    char *end;
    *value = strtod(fig, &end);
    if (end == fig || *end != '\0' || !isfinite(*value))
        return 0.0;
    const char *dot = strchr(fig, '.'), *e = strpbrk(fig, "eE");
    int decimals = 0;
    if (dot)
        decimals = (int)((e ? e : fig + strlen(fig)) - dot - 1);
    int exponent = e ? atoi(e + 1) : 0;
    return 0.5 * pow(10.0, exponent - decimals);
}

/* 1 when `line` holds `fig` (a number within its precision, or a word) */
static int line_holds(const char *line, const char *fig)
{
    double want, got;
    double half = figure_half_ulp(fig, &want);
    if (!(half > 0.0)) {
        const char *p = strstr(line, fig);
        return p != NULL;
    }
    for (const char *p = line; *p; p++) {
        if (!(isdigit((unsigned char)*p) || ((*p == '-' || *p == '+' || *p == '.') &&
                                             isdigit((unsigned char)p[1]))))
            continue;
        if (p > line && (isalnum((unsigned char)p[-1]) || p[-1] == '.'))
            continue; /* inside a word or a number already read */
        char *end;
        got = strtod(p, &end);
        if (end > p && fabs(got - want) <= half * (1.0 + 1e-9))
            return 1;
        if (end > p)
            p = end - 1;
    }
    return 0;
}

#define TS_DOCS_TOKENS 64

/* The whitespace-separated tokens of line[] (changed in place), at most
 * TS_DOCS_TOKENS; with drop_hash a leading "#" token is dropped. */
static int line_tokens(char *line, int drop_hash, char **tok)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && n < TS_DOCS_TOKENS;
         t = strtok_r(NULL, " \t\r\n", &save))
        if (!(drop_hash && n == 0 && strcmp(t, "#") == 0))
            tok[n++] = t;
    return n;
}

/* NAME's column in a header line (its leading "#" token dropped), or -1 */
static int header_column(const char *line, const char *name)
{
    char copy[2048], *tok[TS_DOCS_TOKENS];
    snprintf(copy, sizeof copy, "%s", line);
    int n = line_tokens(copy, 1, tok);
    for (int k = 0; k < n; k++)
        if (strcmp(tok[k], name) == 0)
            return k;
    return -1;
}

/* 1 when the token equals fig (a number within fig's precision, or the word) */
static int token_holds(const char *tok, const char *fig)
{
    double want;
    double half = figure_half_ulp(fig, &want);
    if (!(half > 0.0))
        return strcmp(tok, fig) == 0;
    char *end;
    double got = strtod(tok, &end);
    return end > tok && *end == '\0' && fabs(got - want) <= half * (1.0 + 1e-9);
}

/* 1 when fig is a column figure NAME=FIGURE: name[] and the FIGURE part set */
static int column_figure(const char *fig, char *name, size_t size, const char **value)
{
    const char *eq = strchr(fig, '=');
    if (!eq || eq == fig || (size_t)(eq - fig) >= size || eq[1] == '\0')
        return 0;
    for (const char *c = fig; c < eq; c++)
        if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.'))
            return 0;
    snprintf(name, size, "%.*s", (int)(eq - fig), fig);
    *value = eq + 1;
    return 1;
}

/* 1 when line k of lines[] holds the column figure name=value: its token in
 * the column that the nearest line above naming `name` gives */
static int column_holds(char **lines, int k, const char *name, const char *value)
{
    int col = -1;
    for (int j = k - 1; j >= 0 && col < 0; j--)
        col = header_column(lines[j], name);
    if (col < 0)
        return 0;
    char copy[2048], *tok[TS_DOCS_TOKENS];
    snprintf(copy, sizeof copy, "%s", lines[k]);
    int n = line_tokens(copy, 0, tok);
    return col < n && token_holds(tok[col], value);
}

/* The output's lines: copies in one buffer, pointers in lines[]; the count */
static int split_lines(const char *out, char *buf, size_t size, char **lines, int max)
{
    int n = 0;
    snprintf(buf, size, "%s", out);
    for (char *l = buf; *l && n < max;) {
        char *nl = strchr(l, '\n');
        lines[n++] = l;
        if (!nl)
            break;
        *nl = '\0';
        l = nl + 1;
    }
    return n;
}

/* Check one expectation line against the output; 0, or 1 with msg. */
static int check_expect(const char *out, char *expect, char *msg, size_t size)
{
    static char buf[TS_DOCS_OUT];
    static char *lines[TS_DOCS_OUT / 8];
    char *bar = strchr(expect, '|');
    if (!bar)
        return snprintf(msg, size, "no '|' in \"%s\"", expect), 1;
    *bar = '\0';
    char pattern[256];
    sscanf(expect, " %255[^\n]", pattern);
    for (size_t n = strlen(pattern); n > 0 && pattern[n - 1] == ' ';)
        pattern[--n] = '\0';
    int any = strcmp(pattern, "*") == 0;
    int nlines = split_lines(out, buf, sizeof buf, lines, (int)(sizeof lines / sizeof lines[0]));
    char figs[1024];
    snprintf(figs, sizeof figs, "%s", bar + 1);
    char *save = NULL;
    for (char *fig = strtok_r(figs, " \t\n", &save); fig; fig = strtok_r(NULL, " \t\n", &save)) {
        char name[128];
        const char *value = NULL;
        int column = column_figure(fig, name, sizeof name, &value), found = 0;
        for (int k = 0; k < nlines && !found; k++) {
            char line[2048];
            snprintf(line, sizeof line, "%s", lines[k]);
            const char *start = line + strspn(line, " \t");
            if (!any && strncmp(start, pattern, strlen(pattern)) != 0)
                continue;
            found = column ? column_holds(lines, k, name, value) : line_holds(line, fig);
        }
        if (!found)
            return snprintf(msg, size, "no output line starting \"%s\" holds %s", pattern, fig), 1;
    }
    return 0;
}

/* 1 when text[] holds fig as a number of its own: not inside a longer
 * number or a word ("2" is not in "12", "0.25", "x2" or "2.5e-3") */
static int number_written(const char *text, const char *fig)
{
    size_t n = strlen(fig);
    for (const char *p = strstr(text, fig); p; p = strstr(p + 1, fig)) {
        const char *e = p + n;
        int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '.' ||
                                  ((p[-1] == '-' || p[-1] == '+') && p - 1 > text &&
                                   (p[-2] == 'e' || p[-2] == 'E')));
        int after = isdigit((unsigned char)e[0]) ||
                    (e[0] == '.' && isdigit((unsigned char)e[1])) ||
                    ((e[0] == 'e' || e[0] == 'E') &&
                     (isdigit((unsigned char)e[1]) ||
                      ((e[1] == '-' || e[1] == '+') && isdigit((unsigned char)e[2]))));
        if (!before && !after)
            return 1;
    }
    return 0;
}

/* 1 when every numeric figure of an expectation line is written in text[] */
static int figures_written(const char *text, const char *expect, char *msg, size_t size)
{
    const char *bar = strchr(expect, '|');
    char figs[1024];
    snprintf(figs, sizeof figs, "%s", bar ? bar + 1 : "");
    char *save = NULL;
    double value;
    for (char *fig = strtok_r(figs, " \t\n", &save); fig; fig = strtok_r(NULL, " \t\n", &save)) {
        char name[128];
        const char *shown = fig;
        column_figure(fig, name, sizeof name, &shown);
        char minus[160]; /* a negative figure may be written with U+2212, the minus sign */
        snprintf(minus, sizeof minus, "\xe2\x88\x92%s", shown + (shown[0] == '-'));
        if (figure_half_ulp(shown, &value) > 0.0 && !number_written(text, shown) &&
            !(shown[0] == '-' && number_written(text, minus)))
            return snprintf(msg, size, "%s is checked but not written above the block", shown), 0;
    }
    return 1;
}

static int run_command(const char *cmd, char *out, size_t size)
{
    char full[4200];
    snprintf(full, sizeof full, "TSTEP_PROGRESS=0 timeout 600 %s 2>&1 </dev/null", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    return pclose(p);
}

/* The lines before a block, outside comments, kept as a ring of
 * TS_DOCS_WINDOW lines. */
typedef struct {
    char lines[TS_DOCS_WINDOW][1024];
    int next;
} text_window;

static void window_text(const text_window *w, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int k = 0; k < TS_DOCS_WINDOW; k++)
        strncat(buf, w->lines[(w->next + k) % TS_DOCS_WINDOW], size - strlen(buf) - 1);
}

/* Check one block: command line, then expectation lines to "-->". */
static int check_block(FILE *f, const char *path, int *lineno, const char *cmd,
                       const text_window *w, char *msg, size_t size)
{
    static char out[TS_DOCS_OUT], text[TS_DOCS_WINDOW * 1024];
    int start = *lineno, code = run_command(cmd, out, sizeof out);
    window_text(w, text, sizeof text);
    char line[1024], why[512];
    int bad = 0;
    if (code != 0) {
        snprintf(msg, size, "%s:%d: %s: exit %d: %.300s", path, start, cmd, code, out);
        bad = 1;
    }
    while (fgets(line, sizeof line, f)) {
        (*lineno)++;
        if (strstr(line, "-->"))
            return bad;
        if (bad || strspn(line, " \t\n") == strlen(line))
            continue;
        if (!figures_written(text, line, why, sizeof why) ||
            check_expect(out, line, why, sizeof why)) {
            snprintf(msg, size, "%s:%d: %s: %s", path, *lineno, cmd, why);
            bad = 1;
        }
    }
    snprintf(msg, size, "%s:%d: check block never closed", path, start);
    return 1;
}

/* Every check block of one file; 0, or 1 with the first failure in msg. */
static int check_file(const char *path, int *blocks, char *msg, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    static text_window w;
    memset(&w, 0, sizeof w);
    char line[1024];
    int lineno = 0, bad = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        const char *c = strstr(line, "<!-- check:");
        if (!c) {
            snprintf(w.lines[w.next], sizeof w.lines[0], "%s", line);
            w.next = (w.next + 1) % TS_DOCS_WINDOW;
            continue;
        }
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s", c + strlen("<!-- check:"));
        cmd[strcspn(cmd, "\n")] = '\0';
        bad = check_block(f, path, &lineno, cmd, &w, msg, size);
        (*blocks)++;
    }
    fclose(f);
    return bad;
}

/* the comparison itself: within the printed precision, not beyond it */
START_TEST(docs_figure_precision)
{
    ck_assert(line_holds("  heun3   0.251191  0.251275  2.51275  found", "2.513"));
    ck_assert(!line_holds("  heun3   0.251191  0.251275  2.51275  found", "2.511"));
    ck_assert(line_holds("verlet 0.00443523 x", "4.435e-3"));
    ck_assert(!line_holds("verlet 0.00443523 x", "4.436e-3"));
    ck_assert(line_holds("733 force evaluations", "733"));
    ck_assert(!line_holds("733 force evaluations", "852"));
    ck_assert(!line_holds("ssprk3 7", "3")); /* digits inside a word are no number */
    ck_assert(line_holds("result t-limited", "t-limited"));
    ck_assert(line_holds("x -0.5 y", "-0.50"));
    /* written as a number of its own, not inside a longer one */
    ck_assert(number_written("stable up to 2; measured", "2"));
    ck_assert(number_written("the bracket [1.98535, 1.9951].", "1.9951"));
    ck_assert(!number_written("in 12 steps", "2"));
    ck_assert(!number_written("a step of 0.25", "2"));
    ck_assert(!number_written("a step of 2.5e-3 or 1e-2", "2"));
    ck_assert(!number_written("measures 1.99513", "1.9951"));
    /* a column figure: the token under the nearest header naming it */
    char out[] = "# stepper dt_crit dt_fail dt_pred\nverlet 1.98535 1.9951 2\n"
                 "  stepper measured predicted\n  verlet 1.98535 2\n";
    char *lines[8];
    static char buf[256];
    int n = split_lines(out, buf, sizeof buf, lines, 8);
    ck_assert_int_eq(n, 4);
    ck_assert(column_holds(lines, 1, "dt_fail", "1.9951"));
    ck_assert(column_holds(lines, 1, "dt_crit", "1.985"));
    ck_assert(!column_holds(lines, 1, "dt_crit", "1.9951")); /* another column's figure */
    ck_assert(!column_holds(lines, 1, "dt_pred", "1.9951"));
    ck_assert(column_holds(lines, 3, "predicted", "2.00"));
    ck_assert(!column_holds(lines, 3, "measured", "2.00"));
    /* the nearest line naming dt_fail is the first: its column 2 */
    ck_assert(column_holds(lines, 3, "dt_fail", "2"));
    ck_assert(!column_holds(lines, 3, "dt_fail", "1.9951"));
    ck_assert(!column_holds(lines, 0, "stepper", "#"));     /* no header above the first line */
}
END_TEST

/* a block whose figure changed fails; the same block with the true figure
 * passes; a figure checked but not written in the text fails */
START_TEST(docs_check_fails_on_changed_figure)
{
    static const struct {
        const char *text;
        int bad;
    } cases[] = {
        {"# T\n\nThe limit is 2.513.\n\n"
         "<!-- check: printf 'heun3 2.51275\\n'\nheun3 | 2.513\n-->\n",
         0},
        {"# T\n\nThe limit is 2.511.\n\n"
         "<!-- check: printf 'heun3 2.51275\\n'\nheun3 | 2.511\n-->\n",
         1},
        {"# T\n\nThe limit is 2.5.\n\n<!-- check: printf 'heun3 2.51275\\n'\nheun3 | 2.513\n-->\n",
         1},
        {"# T\n\n<!-- check: false\n* | x\n-->\n", 1},
        /* a column figure: in its column it holds, in another column it fails */
        {"# T\n\nMeasured 1.98535, failed at 1.9951.\n\n"
         "<!-- check: printf '# stepper dt_crit dt_fail\\nverlet 1.98535 1.9951\\n'\n"
         "verlet | dt_crit=1.98535 dt_fail=1.9951\n-->\n",
         0},
        {"# T\n\nMeasured 1.9951.\n\n"
         "<!-- check: printf '# stepper dt_crit dt_fail\\nverlet 1.98535 1.9951\\n'\n"
         "verlet | dt_crit=1.9951\n-->\n",
         1},
        /* "2" inside "12" or "0.25" is not the figure 2 written */
        {"# T\n\nIn 12 steps, 0.25 apart.\n\n"
         "<!-- check: printf 'rk4 2 found\\n'\nrk4 | 2 found\n-->\n",
         1},
        {"# T\n\nIn 2 steps.\n\n<!-- check: printf 'rk4 2 found\\n'\nrk4 | 2 found\n-->\n", 0},
        {"# T\n\nThe energy is \xe2\x88\x92" "2.4525 J.\n\n"
         "<!-- check: printf 'E -2.4525\\n'\nE | -2.4525\n-->\n",
         0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char path[] = "/tmp/tstep_docs_XXXXXX";
        int fd = mkstemp(path);
        ck_assert(fd >= 0);
        FILE *f = fdopen(fd, "w");
        fputs(cases[k].text, f);
        fclose(f);
        char msg[1024] = "";
        int blocks = 0, bad = check_file(path, &blocks, msg, sizeof msg);
        remove(path);
        ck_assert_msg(blocks == 1 && bad == cases[k].bad, "case %zu: %s", k, msg);
    }
}
END_TEST

/* every check block of the README and docs/ */
START_TEST(docs_figures_match_tstep)
{
    char msg[2048] = "";
    int blocks = 0;
    ck_assert_msg(!check_file("README.md", &blocks, msg, sizeof msg), "%s", msg);
    glob_t g;
    if (glob("docs/*.md", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            ck_assert_msg(!check_file(g.gl_pathv[i], &blocks, msg, sizeof msg), "%s", msg);
        globfree(&g);
    }
    ck_assert_msg(blocks > 0, "no check blocks found in README.md and docs/*.md");
}
END_TEST

/* Every option of every command is named in docs/commands.md.
 *
 * The commands are those of `tstep --help`'s "Commands:" section; a
 * command's options are the lines "  --NAME" of `tstep CMD --help`'s
 * "Options:" section.  A command's part of docs/commands.md runs from the
 * heading that holds "`tstep CMD`" to the next heading of the same or a
 * higher level; every option but --help must be named there as --NAME (the
 * whole name).  The implicit solver options may instead be named once, in
 * the section whose heading holds "Implicit solver options", when the
 * command's part says it takes "the implicit solver options". */
#define TS_DOCS_COMMANDS "docs/commands.md"
#define TS_DOCS_HELP (1 << 16)

static const char *const solver_options[] = {"newton-tol",    "newton-max", "cg-tol", "cg-max",
                                             "linear-solver", "precond",    "threads"};

/* The names in a --help section: the lines after `title` (a whole line,
 * "\nOptions:\n") up to the next blank line; with `dashes`, those starting
 * "  --NAME" (NAME stored without the dashes), else those starting
 * "  NAME".  Returns the count. */
static int help_names(const char *help, const char *title, int dashes, char names[][64], int max)
{
    const char *p = strstr(help, title);
    if (!p)
        return 0;
    int n = 0;
    for (const char *l = p + strlen(title); *l && *l != '\n';
         l = strchr(l, '\n'), l = l ? l + 1 : "") {
        const char *start = l + 2;
        if (strncmp(l, "  ", 2) != 0 || (dashes && strncmp(start, "--", 2) != 0) ||
            (!dashes && !islower((unsigned char)*start)))
            continue;
        if (dashes)
            start += 2;
        size_t len = strspn(start, "abcdefghijklmnopqrstuvwxyz0123456789-");
        if (len > 0 && len < 64 && n < max)
            snprintf(names[n++], 64, "%.*s", (int)len, start);
    }
    return n;
}

/* The level of a Markdown heading line (1 for "# ", ...), 0 for any other */
static int heading_level(const char *line)
{
    int level = (int)strspn(line, "#");
    return level > 0 && level <= 6 && line[level] == ' ' ? level : 0;
}

/* A copy of the part of doc[] under the first heading holding `key` (to
 * the next heading of the same or a higher level, outside ``` fences), or
 * NULL.  The caller frees it. */
static char *doc_part(const char *doc, const char *key)
{
    const char *start = NULL;
    int level = 0, fence = 0;
    for (const char *l = doc; *l; l = strchr(l, '\n'), l = l ? l + 1 : "") {
        size_t len = strcspn(l, "\n");
        if (strncmp(l, "```", 3) == 0)
            fence = !fence;
        int h = fence ? 0 : heading_level(l);
        if (start && h > 0 && h <= level)
            return strndup(start, (size_t)(l - start));
        if (!start && h > 0) {
            char *line = strndup(l, len);
            if (strstr(line, key))
                start = l, level = h;
            free(line);
        }
    }
    return start ? strdup(start) : NULL;
}

/* 1 when text names the option --NAME whole (not --NAME-more, not --moreNAME) */
static int names_option(const char *text, const char *name)
{
    char want[80];
    snprintf(want, sizeof want, "--%s", name);
    size_t n = strlen(want);
    for (const char *p = strstr(text, want); p; p = strstr(p + 1, want)) {
        int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-');
        int after = isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '_';
        if (!before && !after)
            return 1;
    }
    return 0;
}

/* 1 when text holds phrase, ignoring case, any run of white space (a line
 * break) matching a space */
static int says(const char *text, const char *phrase)
{
    for (const char *t = text; *t; t++) {
        const char *p = phrase, *q = t;
        while (*p && *q) {
            if (*p == ' ' && isspace((unsigned char)*q)) {
                while (isspace((unsigned char)*q))
                    q++;
                p++;
            } else if (tolower((unsigned char)*p) == tolower((unsigned char)*q)) {
                p++, q++;
            } else {
                break;
            }
        }
        if (!*p)
            return 1;
    }
    return 0;
}

/* The options of `cmd` (its --help text) that its part of doc[] does not
 * name, appended to missing[] as " CMD --NAME"; returns their count (1 for
 * a command without a part or without options). */
static int options_missing(const char *doc, const char *cmd, const char *help, char *missing,
                           size_t size)
{
    char key[96], names[128][64];
    snprintf(key, sizeof key, "`tstep %s`", cmd);
    char *part = doc_part(doc, key), *solver = doc_part(doc, "Implicit solver options");
    int n = help_names(help, "\nOptions:\n", 1, names, 128), bad = 0;
    if (!part || n == 0) {
        snprintf(missing + strlen(missing), size - strlen(missing), " %s: %s", cmd,
                 part ? "no options in its --help" : "no heading holds it");
        bad = 1;
    }
    int takes_solver = part && solver && says(part, "implicit solver options");
    for (int k = 0; part && k < n; k++) {
        if (strcmp(names[k], "help") == 0 || names_option(part, names[k]))
            continue;
        int is_solver = 0;
        for (size_t j = 0; j < sizeof solver_options / sizeof solver_options[0]; j++)
            is_solver |= strcmp(names[k], solver_options[j]) == 0;
        if (is_solver && takes_solver && names_option(solver, names[k]))
            continue;
        snprintf(missing + strlen(missing), size - strlen(missing), " %s --%s", cmd, names[k]);
        bad++;
    }
    free(part);
    free(solver);
    return bad;
}

/* the checker itself: a missing option, a name that is only a prefix of
 * the option's, a missing heading are caught; the solver options count when
 * the part says it takes them and the solver section names them */
START_TEST(docs_options_checker)
{
    static const char help[] = "Usage: tstep demo\n\nOptions:\n"
                               "  --dt H                step size\n"
                               "                        (--not-an-option)\n"
                               "  --dt-min H            least step\n"
                               "  --cg-tol X            linear tolerance\n"
                               "  --help                print this help\n\nMore text.\n";
    static const struct {
        const char *doc, *missing;
    } cases[] = {
        {"# R\n\n## `tstep demo`\n\n`--dt H`, `--dt-min`; the implicit solver options.\n\n"
         "## Implicit solver options\n\n`--cg-tol X`\n",
         ""},
        {"# R\n\n## `tstep demo`\n\n`--dt-min`; the implicit solver options.\n\n"
         "## Implicit solver options\n\n`--cg-tol X`\n",
         " demo --dt"},
        {"# R\n\n## `tstep demo`\n\n`--dt`, `--dt-min`.\n\n"
         "## Implicit solver options\n\n`--cg-tol X`\n",
         " demo --cg-tol"},
        {"# R\n\n## `tstep demo`\n\n`--dt-min`, `--dt`; the Implicit solver\noptions.\n\n"
         "## Implicit solver options\n\n`--cg-tol X`\n",
         ""},
        {"# R\n\n## `tstep demo`\n\n`--dt`; implicit solver options.\n\n### Sub\n\n--dt-min\n\n"
         "## Next\n\n--cg-tol\n",
         " demo --cg-tol"},
        {"# R\n\n## `tstep demo`\n\n`--dt`\n\n## Other\n\n`--dt-min` `--cg-tol`\n",
         " demo --dt-min demo --cg-tol"},
        {"# R\n\n## `tstep other`\n\n--dt --dt-min --cg-tol\n", " demo: no heading holds it"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char missing[1024] = "";
        int bad = options_missing(cases[k].doc, "demo", help, missing, sizeof missing);
        ck_assert_msg((bad == 0) == (cases[k].missing[0] == '\0') &&
                          strncmp(missing, cases[k].missing, strlen(cases[k].missing)) == 0,
                      "case %zu: missing \"%s\", want \"%s\"", k, missing, cases[k].missing);
    }
}
END_TEST

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *text = malloc(1 << 20);
    size_t n = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
    if (text)
        text[n] = '\0';
    fclose(f);
    return text;
}

/* every option of every command of `tstep --help` in docs/commands.md */
START_TEST(docs_commands_name_every_option)
{
    static char out[TS_DOCS_HELP], err[TS_DOCS_HELP], missing[8192];
    char *doc = read_text(TS_DOCS_COMMANDS);
    ck_assert_msg(doc != NULL, "cannot read %s", TS_DOCS_COMMANDS);
    EXPECT("--help", 0, NULL);
    char commands[64][64];
    int n = help_names(out, "\nCommands:\n", 0, commands, 64), bad = 0;
    ck_assert_msg(n >= 9, "tstep --help lists %d commands", n);
    missing[0] = '\0';
    for (int k = 0; k < n; k++) {
        char args[128];
        snprintf(args, sizeof args, "%.63s --help", commands[k]);
        EXPECT(args, 0, NULL);
        bad += options_missing(doc, commands[k], out, missing, sizeof missing);
    }
    free(doc);
    ck_assert_msg(bad == 0, "%s does not name these options in their command's part:%s",
                  TS_DOCS_COMMANDS, missing);
}
END_TEST

Suite *docs_suite(void)
{
    Suite *s = suite_create("docs");
    TCase *tc = tcase_create("figures");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 1800);
    tcase_add_test(tc, docs_figure_precision);
    tcase_add_test(tc, docs_check_fails_on_changed_figure);
    tcase_add_test(tc, docs_figures_match_tstep);
    suite_add_tcase(s, tc);
    TCase *options = tcase_create("options"); /* fast: in make check-fast too */
    tcase_add_test(options, docs_options_checker);
    tcase_add_test(options, docs_commands_name_every_option);
    suite_add_tcase(s, options);
    return s;
}

/* The figures the docs quote from tstep, checked against tstep.
 *
 * A figure in README.md or a Markdown file of docs/ is paired with the command that prints
 * it by a check block, an HTML comment (invisible when rendered) placed after
 * the text that quotes it:
 *
 *   <!-- check: build/tstep stability --system test1d --stepper heun3
 *   heun3 | 2.513 found
 *   -->
 *
 * The command runs from the repository root (standard output and error
 * together).  Each following line is `PATTERN | FIGURE FIGURE ...`: some line
 * of the output that starts with PATTERN (after its indentation; `*`: any
 * line) must hold every FIGURE.
 * A numeric figure is held when a number on that line, rounded to the
 * figure's printed precision (its last written digit), equals it: 2.513
 * holds 2.51275, 4.435e-3 holds 0.00443523, 733 holds 733; anything else is
 * a word that must appear as written (a result such as `found`).  Each
 * numeric figure must also be written in the document within the
 * TS_DOCS_WINDOW lines above the block, so the text a reader sees is the
 * text checked. */
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

/* Check one expectation line against the output; 0, or 1 with msg. */
static int check_expect(const char *out, char *expect, char *msg, size_t size)
{
    char *bar = strchr(expect, '|');
    if (!bar)
        return snprintf(msg, size, "no '|' in \"%s\"", expect), 1;
    *bar = '\0';
    char pattern[256];
    sscanf(expect, " %255[^\n]", pattern);
    for (size_t n = strlen(pattern); n > 0 && pattern[n - 1] == ' ';)
        pattern[--n] = '\0';
    int any = strcmp(pattern, "*") == 0;
    char figs[1024];
    snprintf(figs, sizeof figs, "%s", bar + 1);
    char *save = NULL;
    for (char *fig = strtok_r(figs, " \t\n", &save); fig; fig = strtok_r(NULL, " \t\n", &save)) {
        int found = 0;
        for (const char *l = out; *l && !found; l = strchr(l, '\n'), l = l ? l + 1 : "") {
            size_t len = strcspn(l, "\n");
            char line[2048];
            snprintf(line, sizeof line, "%.*s", (int)(len < 2047 ? len : 2047), l);
            const char *start = line + strspn(line, " \t");
            if ((any || strncmp(start, pattern, strlen(pattern)) == 0) && line_holds(line, fig))
                found = 1;
        }
        if (!found)
            return snprintf(msg, size, "no output line starting \"%s\" holds %s", pattern, fig), 1;
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
    for (char *fig = strtok_r(figs, " \t\n", &save); fig; fig = strtok_r(NULL, " \t\n", &save))
        if (figure_half_ulp(fig, &value) > 0.0 && !strstr(text, fig))
            return snprintf(msg, size, "%s is checked but not written above the block", fig), 0;
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
    };
    for (int k = 0; k < 4; k++) {
        char path[] = "/tmp/tstep_docs_XXXXXX";
        int fd = mkstemp(path);
        ck_assert(fd >= 0);
        FILE *f = fdopen(fd, "w");
        fputs(cases[k].text, f);
        fclose(f);
        char msg[1024] = "";
        int blocks = 0, bad = check_file(path, &blocks, msg, sizeof msg);
        remove(path);
        ck_assert_msg(blocks == 1 && bad == cases[k].bad, "case %d: %s", k, msg);
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
    return s;
}

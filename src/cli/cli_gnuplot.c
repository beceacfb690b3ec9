/* gnuplot pipes for --plot and --live (see cli_gnuplot.h). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cli_gnuplot.h"
#include "cli_progress.h"

const char *cli_gnuplot_program(void)
{
    const char *g = getenv("GNUPLOT");
    return g && *g ? g : "gnuplot";
}

/* Is the program there?  (popen would start a shell that only then fails.) */
static int gnuplot_found(void)
{
    const char *g = cli_gnuplot_program();
    if (strchr(g, '/'))
        return access(g, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char dir[4096];
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, ":");
        snprintf(dir, sizeof dir, "%.*s/%s", (int)len, len ? p : ".", g);
        if (access(dir, X_OK) == 0)
            return 1;
        p += len;
        if (*p == ':')
            p++;
    }
    return 0;
}

static FILE *gnuplot_start(const char *cmd, const char *args)
{
    if (!gnuplot_found()) {
        fprintf(stderr,
                "tstep %s: gnuplot not found (program '%s'); 'make deps' installs it, or "
                "set GNUPLOT to its path\n",
                cmd, cli_gnuplot_program());
        return NULL;
    }
    char line[4200];
    snprintf(line, sizeof line, "'%s'%s", cli_gnuplot_program(), args);
    /* A gnuplot that dies must not kill tstep with SIGPIPE: writes fail instead. */
    signal(SIGPIPE, SIG_IGN);
    fflush(stdout);
    FILE *gp = popen(line, "w");
    if (!gp)
        fprintf(stderr, "tstep %s: cannot start gnuplot ('%s')\n", cmd, line);
    return gp;
}

int cli_gnuplot_dumb(const char *cmd, FILE **gp)
{
    long cols = 0, rows = 0;
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        cols = ws.ws_col, rows = ws.ws_row;
    if (cols <= 0) {
        const char *c = getenv("COLUMNS"), *l = getenv("LINES");
        cols = c ? strtol(c, NULL, 10) : 0;
        rows = l ? strtol(l, NULL, 10) : 0;
    }
    if (cols < 40 || cols > 400)
        cols = 80;
    if (rows < 15 || rows > 200)
        rows = 25;
    *gp = gnuplot_start(cmd, "");
    if (!*gp)
        return 2;
    fprintf(*gp, "set terminal dumb size %ld,%ld\nset output\n", cols, rows - 1);
    return 0;
}

int cli_gnuplot_close(const char *cmd, FILE *gp)
{
    fputs("exit\n", gp);
    int st = pclose(gp);
    fflush(stdout);
    if (st == -1) {
        fprintf(stderr, "tstep %s: gnuplot: %s\n", cmd, strerror(errno));
        return 1;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
        fprintf(stderr, "tstep %s: gnuplot failed with exit status %d (its message is above)\n",
                cmd, WEXITSTATUS(st));
        return 1;
    }
    if (WIFSIGNALED(st)) {
        fprintf(stderr, "tstep %s: gnuplot was killed by signal %d\n", cmd, WTERMSIG(st));
        return 1;
    }
    return 0;
}

void cli_gnuplot_datablock(FILE *gp, const char *name, FILE *data)
{
    char buf[8192];
    size_t got;
    fflush(data);
    rewind(data);
    fprintf(gp, "$%s << EOD\n", name);
    while ((got = fread(buf, 1, sizeof buf, data)) > 0)
        fwrite(buf, 1, got, gp);
    fputs("EOD\n", gp);
}

void cli_gnuplot_quote(FILE *gp, const char *text)
{
    fputc('\'', gp);
    for (; *text; text++) {
        if (*text == '\'')
            fputc('\'', gp);
        if (*text != '\n')
            fputc(*text, gp);
    }
    fputc('\'', gp);
}

/* --- the live window --------------------------------------------------- */

/* The first interactive terminal this gnuplot lists, or NULL. */
static const char *interactive_terminal(void)
{
    static const char *const wanted[] = {"qt", "wxt", "x11"};
    static char found[3];
    char cmdline[4200], line[256];
    snprintf(cmdline, sizeof cmdline, "'%s' -e 'set terminal' 2>&1 </dev/null",
             cli_gnuplot_program());
    FILE *p = popen(cmdline, "r");
    if (!p)
        return NULL;
    memset(found, 0, sizeof found);
    while (fgets(line, sizeof line, p)) {
        char name[32];
        if (sscanf(line, " %31s", name) != 1)
            continue;
        for (int i = 0; i < 3; i++)
            if (strcmp(name, wanted[i]) == 0)
                found[i] = 1;
    }
    pclose(p);
    for (int i = 0; i < 3; i++)
        if (found[i])
            return wanted[i];
    return NULL;
}

int cli_live_open(const char *cmd, const ts_system *sys, const char *title, double speed,
                  double t_end, cli_live *lv)
{
    memset(lv, 0, sizeof *lv);
    const char *d = getenv("DISPLAY"), *wd = getenv("WAYLAND_DISPLAY");
    if (!(d && *d) && !(wd && *wd)) {
        fprintf(stderr,
                "tstep %s: --live needs a graphical display, and $DISPLAY is not set; over "
                "SSH use 'ssh -X', or draw in the terminal with --plot, or write "
                "--format frames and render with plots/\n",
                cmd);
        return 2;
    }
    if (!gnuplot_found()) {
        fprintf(stderr, "tstep %s: --live needs gnuplot, and '%s' was not found\n", cmd,
                cli_gnuplot_program());
        return 2;
    }
    const char *term = interactive_terminal();
    if (!term) {
        fprintf(stderr,
                "tstep %s: --live needs an interactive gnuplot terminal (qt, wxt or x11), "
                "and '%s' has none (a headless build such as gnuplot-nox?); install "
                "gnuplot-qt or gnuplot-x11\n",
                cmd, cli_gnuplot_program());
        return 2;
    }
    lv->gp = gnuplot_start(cmd, " -persist");
    if (!lv->gp)
        return 2;
    lv->particles = sys->dim > 0;
    lv->speed = speed;
    lv->title = title;
    fprintf(lv->gp, "set terminal %s noraise title 'tstep run --live'\n", term);
    if (lv->particles) {
        /* y up, as in plots/ (gravity is along -y): gnuplot's axes x, y, z
         * show the system's x, z, y */
        fputs("set view 62, 28, 1.1\nset view equal xyz\nset xyplane 0\nset key off\n"
              "set xlabel 'x'\nset ylabel 'z'\nset zlabel 'y (up)' rotate parallel\n",
              lv->gp);
    } else {
        lv->columns = sys->n * (size_t)sys->order;
        if (lv->columns > 6)
            lv->columns = 6;
        fprintf(lv->gp, "set xrange [0:%.17g]\nset xlabel 't'\nset key outside right\n"
                        "undefine $live\nset print $live append\n",
                t_end);
    }
    fflush(lv->gp);
    lv->wall0 = cli_now();
    lv->last_sent = -1.0;
    return 0;
}

static void grow_box(cli_live *lv, const ts_system *sys)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    size_t dim = sys->dim < 3 ? sys->dim : 3, np = sys->n / sys->dim;
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < dim; k++) {
            double q = sys->x[i * sys->dim + k];
            lo[k] = fmin(lo[k], q), hi[k] = fmax(hi[k], q);
        }
    for (size_t k = dim; k < 3; k++)
        lo[k] = hi[k] = 0.0;
    int grow = !lv->have_box;
    for (int k = 0; k < 3; k++)
        grow |= lo[k] < lv->lo[k] || hi[k] > lv->hi[k];
    if (!grow)
        return;
    double ext = 0.0;
    for (int k = 0; k < 3; k++) {
        if (lv->have_box)
            lo[k] = fmin(lo[k], lv->lo[k]), hi[k] = fmax(hi[k], lv->hi[k]);
        ext = fmax(ext, hi[k] - lo[k]);
    }
    double pad = fmax(0.25 * ext, 0.1);
    for (int k = 0; k < 3; k++)
        lv->lo[k] = lo[k] - pad, lv->hi[k] = hi[k] + pad;
    lv->have_box = 1;
    fprintf(lv->gp, "set xrange [%g:%g]\nset yrange [%g:%g]\nset zrange [%g:%g]\n", lv->lo[0],
            lv->hi[0], lv->lo[2], lv->hi[2], lv->lo[1], lv->hi[1]);
}

int cli_live_frame(cli_live *lv, const ts_system *sys, double t, int last)
{
    FILE *gp = lv->gp;
    if (!lv->particles) {
        /* Every observed row joins the datablock; the window redraws below. */
        fprintf(gp, "print '%.10g", t);
        for (size_t i = 0; i < lv->columns; i++)
            fprintf(gp, " %.10g", i < sys->n ? sys->x[i] : sys->v[i - sys->n]);
        fputs("'\n", gp);
    }
    /* Pace: simulated time t shows at wall time t / speed. */
    double due = lv->wall0 + t / lv->speed, now = cli_now();
    if (due > now) {
        struct timespec ts = {(time_t)(due - now), (long)(1e9 * fmod(due - now, 1.0))};
        nanosleep(&ts, NULL);
        now = cli_now();
    }
    if (!last && lv->last_sent >= 0.0 && now - lv->last_sent < 1.0 / 30.0)
        return ferror(gp) ? ts_error(TS_ERR_IO, "the live window's gnuplot has gone") : TS_OK;
    lv->last_sent = now;
    fputs("set title ", gp);
    char title[256];
    snprintf(title, sizeof title, "%s   t = %.3f", lv->title, t);
    cli_gnuplot_quote(gp, title);
    fputc('\n', gp);
    if (lv->particles) {
        grow_box(lv, sys);
        fputs("splot '-' using 1:3:2 with linespoints pt 7 ps 0.4 lc rgb '#1f5fa0'\n", gp);
        cli_write_particles(gp, sys, 3, 8);
        fputs("e\n", gp);
    } else {
        fputs("plot", gp);
        for (size_t i = 0; i < lv->columns; i++)
            fprintf(gp, "%s $live using 1:%zu with lines lw 2 title '%c%zu'", i ? "," : "",
                    i + 2, i < sys->n ? 'x' : 'v', i < sys->n ? i : i - sys->n);
        fputc('\n', gp);
    }
    fflush(gp);
    return ferror(gp) ? ts_error(TS_ERR_IO, "the live window's gnuplot has gone") : TS_OK;
}

int cli_live_close(const char *cmd, cli_live *lv)
{
    if (!lv->gp)
        return 0;
    int rc = cli_gnuplot_close(cmd, lv->gp);
    lv->gp = NULL;
    return rc;
}

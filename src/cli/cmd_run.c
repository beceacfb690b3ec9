/* tstep run: integrate one system with one stepper and write the trajectory.
 *
 * Columns: t, x0..x{n-1}, then v0..v{n-1} for second-order systems, then
 * energy (total) where the system defines it, then with --stats the last
 * step's force_evals, newton_iters, linear_iters (and accepted, rejected
 * sub-steps with --adaptive).  CSV has a header row; dat has the same
 * columns, space-separated, under a '#' header.
 *
 * --diagnostics FILE writes, at the same output steps, the energies,
 * momentum and the stepper's cumulative statistics (see help()); --plot
 * draws the run in the terminal, --live in a gnuplot window as it runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "cli_error.h"
#include "cli_gnuplot.h"
#include "cli_progress.h"
#include "table.h"
#include "core/parallel.h"
#include "tstep/linalg.h"
#include "tstep/linsolve.h"

typedef struct {
    FILE *out;
    cli_format format;
    double *vals;   /* one trajectory row as numbers (cols), allocated once */
    char *line;     /* the same row as text, written in chunks (ROW_CHUNK) */
    char *blocks;   /* a long row's blocks formatted on the thread team, or NULL */
    size_t cols;
    long rows, planned; /* rows written, and rows the run will write (npy header) */
    int stats, adaptive;
    FILE *diag;     /* --diagnostics, or NULL */
    int diag_csv;   /* the diagnostics file is CSV (name ends in .csv) */
    FILE *plot;     /* --plot: rows for the terminal figure, or NULL */
    cli_live *live; /* --live, or NULL */
    long steps;     /* steps of the whole run */
    cli_progress progress;
    int have_energy;         /* energy seen at the first output row */
    double e0, emin, e_last; /* total energy: first, lowest, last output row */
    double pe0, swing;       /* potential at the start; energy in motion (below) */
    const ts_params *params; /* the system's parameters, for the frames header */
    const char *stepper;
    double dt;
    long every;
    cli_error_log *error; /* --error, or NULL */
    int flush_rows;       /* a plugin's stepper or system: every row flushed */
    /* --format json (the trajectory) and a --diagnostics FILE.json: the table
     * writers of table.h, one block named after the system; NULL otherwise */
    cli_table *json, *diag_json;
    cli_table json_t, diag_t;
    const char **names, **diag_names; /* their column names */
} writer;

static void put(const writer *w, int first, const char *text)
{
    if (!first)
        fputc(w->format == CLI_FORMAT_CSV ? ',' : ' ', w->out);
    fputs(text, w->out);
}

/* Columns of a trajectory row (see the file's header comment). */
static size_t row_columns(const writer *w, const ts_system *sys)
{
    return 1 + sys->n * (size_t)sys->order + (sys->ops->energy ? 1 : 0) +
           (w->stats ? 5 : 0) + (w->stats && w->adaptive ? 2 : 0);
}

/* .npy v1.0 (NumPy's format, numpy.lib.format): magic, version 1.0, a
 * little-endian 16-bit header length, and a Python dict literal padded with
 * spaces to 118 bytes and a newline, so the data start at byte 128; then
 * the rows as little-endian float64, C order.  The header is written first
 * with the rows the run plans and rewritten at the end with the rows
 * written, when the output is a file (seekable). */
static void write_npy_header(const writer *w, long rows)
{
    char h[128];
    memset(h, ' ', sizeof h);
    memcpy(h, "\x93NUMPY\x01\x00\x76\x00", 10);
    int len = snprintf(h + 10, 118, "{'descr': '<f8', 'fortran_order': False, 'shape': (%ld, %zu), }",
                       rows, w->cols);
    h[10 + len] = ' ';
    h[127] = '\n';
    fwrite(h, 1, sizeof h, w->out);
}

static int little_endian(void)
{
    const unsigned one = 1;
    return *(const unsigned char *)&one == 1;
}

/* frames: one gnuplot index block per output time (blocks two blank lines
 * apart), a line "x y z" per particle, and for grids a blank line after
 * every frame_row particles so that splot draws the surface as a mesh. */
static int write_frame(const writer *w, const ts_system *sys, long step, double t)
{
    if (step > 0)
        fputs("\n\n", w->out);
    fprintf(w->out, "# t = %.15g step %ld\n", t, step);
    cli_write_particles(w->out, sys, sys->dim, 10);
    return ferror(w->out) ? ts_error(TS_ERR_IO, "writing the frames") : TS_OK;
}

/* The trajectory's column names, as the dat header: an array of cols
 * pointers and the names' text after it, in one allocation (free it). */
static const char **traj_names(const writer *w, const ts_system *sys)
{
    static const char *const stats[] = {"force_evals", "newton_iters", "linear_iters",
                                        "residual", "linear_residual", "accepted", "rejected"};
    size_t cols = row_columns(w, sys), c = 0;
    const char **names = malloc(cols * (sizeof *names + 24));
    if (!names)
        return NULL;
    char *p = (char *)(names + cols);
    names[c++] = "t";
    for (size_t i = 0; i < sys->n; i++)
        names[c++] = p, p += sprintf(p, "x%zu", i) + 1;
    for (size_t i = 0; sys->order == 2 && i < sys->n; i++)
        names[c++] = p, p += sprintf(p, "v%zu", i) + 1;
    if (sys->ops->energy)
        names[c++] = "energy";
    for (int k = 0; w->stats && k < (w->adaptive ? 7 : 5); k++)
        names[c++] = stats[k];
    return names;
}

/* The diagnostics' column names (write_diag_header's), into names[]; their count. */
static int diag_names(const ts_system *sys, const char **names)
{
    static const char *const energy[] = {"kinetic", "potential", "energy"},
                             *const momentum[] = {"px", "py", "pz"},
                             *const stats[] = {"force_evals", "jacobian_products",
                                               "newton_iters", "linear_iters", "accepted",
                                               "rejected", "residual", "residual_max",
                                               "linear_residual"};
    int c = 0;
    names[c++] = "t", names[c++] = "step";
    for (int k = 0; sys->ops->energy && k < 3; k++)
        names[c++] = energy[k];
    for (int k = 0; sys->ops->momentum && k < 3; k++)
        names[c++] = momentum[k];
    for (int k = 0; k < 9; k++)
        names[c++] = stats[k];
    return c;
}

/* json: a table with one block named after the system */
static void json_table_begin(cli_table *t, FILE *out, const char *const *cols, int ncols,
                             const ts_system *sys)
{
    *t = (cli_table){.format = cli_table_format_find("json"), .out = out, .command = "run",
                     .label = "system", .cols = cols, .ncols = ncols};
    cli_table_begin(t);
    cli_table_block(t, sys->type ? sys->type->name : "system");
}

/* The columns prefix0 .. prefix{n-1}, each after its separator, formed in
 * a buffer and written a block at a time: a large system's header has
 * millions of names, and a formatting call and two stdio calls a name
 * cost 0.1 s at 300 x 300.  The index is kept in decimal and counted up
 * digit by digit (digits[first ..] holds it). */
static void put_indexed(const writer *w, char prefix, size_t n)
{
    char buf[8192], digits[24];
    size_t len = 0, first = sizeof digits - 1;
    char sep = w->format == CLI_FORMAT_CSV ? ',' : ' ';
    digits[first] = '0';
    for (size_t i = 0; i < n; i++) {
        if (len > sizeof buf - sizeof digits - 2) {
            fwrite(buf, 1, len, w->out);
            len = 0;
        }
        buf[len++] = sep;
        buf[len++] = prefix;
        memcpy(buf + len, digits + first, sizeof digits - first);
        len += sizeof digits - first;
        /* the next index: one added, carried over the nines (a size_t has
         * at most 20 digits, so k stays above 0) */
        size_t k = sizeof digits - 1;
        while (k >= first && digits[k] == '9')
            digits[k--] = '0';
        if (k < first)
            digits[first = k] = '1';
        else
            digits[k]++;
    }
    fwrite(buf, 1, len, w->out);
}

static void write_header(const writer *w, const ts_system *sys)
{
    if (w->format == CLI_FORMAT_NPY) {
        write_npy_header(w, w->planned);
        return;
    }
    if (w->json) {
        json_table_begin(w->json, w->out, w->names, (int)w->cols, sys);
        return;
    }
    if (w->format == CLI_FORMAT_FRAMES) {
        size_t np = sys->n / sys->dim;
        fprintf(w->out, "# %s: %zu particle%s, one block per frame: x y z per particle\n",
                sys->type ? sys->type->name : "system", np, np == 1 ? "" : "s");
        /* what a figure needs to draw the run as it was simulated */
        fprintf(w->out, "# stepper %s\n# dt %.17g\n# every %ld\n# frame_row %zu\n",
                w->stepper, w->dt, w->every, sys->frame_row);
        for (size_t i = 0; w->params && i < w->params->count; i++)
            fprintf(w->out, "# param %s %s\n", w->params->defs[i].name, w->params->value[i]);
        return;
    }
    if (w->format == CLI_FORMAT_DAT)
        fputs("# ", w->out);
    put(w, 1, "t");
    put_indexed(w, 'x', sys->n);
    if (sys->order == 2)
        put_indexed(w, 'v', sys->n);
    if (sys->ops->energy)
        put(w, 0, "energy");
    if (w->stats) {
        put(w, 0, "force_evals");
        put(w, 0, "newton_iters");
        put(w, 0, "linear_iters");
        put(w, 0, "residual");
        put(w, 0, "linear_residual");
    }
    if (w->stats && w->adaptive) {
        put(w, 0, "accepted");
        put(w, 0, "rejected");
    }
    fputc('\n', w->out);
}

/* Diagnostics: t, step, [kinetic, potential, energy], [px, py, pz], then the
 * stepper's statistics summed from t = 0 to this row. */
static void write_diag_header(const writer *w, const ts_system *sys)
{
    if (w->diag_json) {
        json_table_begin(w->diag_json, w->diag, w->diag_names, diag_names(sys, w->diag_names),
                         sys);
        return;
    }
    const char *sep = w->diag_csv ? "," : " ";
    fputs(w->diag_csv ? "t,step" : "# t step", w->diag);
    if (sys->ops->energy)
        fprintf(w->diag, "%skinetic%spotential%senergy", sep, sep, sep);
    if (sys->ops->momentum)
        fprintf(w->diag, "%spx%spy%spz", sep, sep, sep);
    fprintf(w->diag, "%sforce_evals%sjacobian_products%snewton_iters%slinear_iters%saccepted%s"
                     "rejected%sresidual%sresidual_max%slinear_residual\n",
            sep, sep, sep, sep, sep, sep, sep, sep, sep);
}

/* A diagnostics row to its json table: the columns of write_diag_row */
static int diag_json_row(const writer *w, ts_system *sys, const ts_stepper *st, long step,
                         double t)
{
    double v[17], ke = 0, pe = 0, p[3] = {0, 0, 0};
    int c = 0, s;
    v[c++] = t, v[c++] = (double)step;
    if (sys->ops->energy && (s = ts_system_energy(sys, t, &ke, &pe)))
        return s;
    if (sys->ops->energy)
        v[c++] = ke, v[c++] = pe, v[c++] = ke + pe;
    if (sys->ops->momentum && (s = sys->ops->momentum(sys, sys->x, sys->v, p)))
        return s;
    if (sys->ops->momentum)
        v[c++] = p[0], v[c++] = p[1], v[c++] = p[2];
    const ts_step_stats *k = &st->total;
    double tail[9] = {(double)k->force_evals, (double)k->jacobian_products,
                      (double)k->newton_iters, (double)k->linear_iters, (double)k->accepted,
                      (double)k->rejected, st->last.residual, k->residual,
                      st->last.linear_residual};
    memcpy(v + c, tail, sizeof tail);
    cli_table_row(w->diag_json, v);
    return ferror(w->diag) ? ts_error(TS_ERR_IO, "writing the diagnostics") : TS_OK;
}

static int write_diag_row(const writer *w, ts_system *sys, const ts_stepper *st, long step,
                          double t)
{
    if (w->diag_json)
        return diag_json_row(w, sys, st, step, t);
    const char *sep = w->diag_csv ? "," : " ";
    fprintf(w->diag, "%.15g%s%ld", t, sep, step);
    if (sys->ops->energy) {
        double ke = 0, pe = 0;
        int s = ts_system_energy(sys, t, &ke, &pe);
        if (s)
            return s;
        fprintf(w->diag, "%s%.15g%s%.15g%s%.15g", sep, ke, sep, pe, sep, ke + pe);
    }
    if (sys->ops->momentum) {
        double p[3] = {0, 0, 0};
        int s = sys->ops->momentum(sys, sys->x, sys->v, p);
        if (s)
            return s;
        fprintf(w->diag, "%s%.15g%s%.15g%s%.15g", sep, p[0], sep, p[1], sep, p[2]);
    }
    const ts_step_stats *c = &st->total;
    fprintf(w->diag, "%s%ld%s%ld%s%ld%s%ld%s%ld%s%ld%s%.3e%s%.3e%s%.3e\n", sep, c->force_evals,
            sep, c->jacobian_products, sep, c->newton_iters, sep, c->linear_iters, sep,
            c->accepted, sep, c->rejected, sep, st->last.residual, sep, c->residual, sep,
            st->last.linear_residual);
    return ferror(w->diag) ? ts_error(TS_ERR_IO, "writing the diagnostics") : TS_OK;
}

/* --plot keeps "t energy x0 x1 .. v0 .." (energy NaN where undefined; the
 * state columns only for systems that are not particle systems). */
static int keep_plot_row(const writer *w, ts_system *sys, double t)
{
    double e = NAN;
    if (sys->ops->energy) {
        double ke = 0, pe = 0;
        int s = ts_system_energy(sys, t, &ke, &pe);
        if (s)
            return s;
        e = ke + pe;
    }
    fprintf(w->plot, "%.10g %.10g", t, e);
    for (size_t i = 0; sys->dim == 0 && i < sys->n; i++)
        fprintf(w->plot, " %.10g", sys->x[i]);
    for (size_t i = 0; sys->dim == 0 && sys->order == 2 && i < sys->n; i++)
        fprintf(w->plot, " %.10g", sys->v[i]);
    fputc('\n', w->plot);
    return ferror(w->plot) ? ts_error(TS_ERR_IO, "keeping data for --plot") : TS_OK;
}

/* the text writer's buffer: rows go out in writes of at most this many
 * bytes, so that a row of a large system needs no buffer of its size */
#define ROW_CHUNK 65536
/* With more than one thread, a row of at least ts_threads_min() numbers is
 * formatted ROW_BLOCKS blocks of ROW_BLOCK numbers at a time, a block a
 * task on the thread team, each into its own slice of w->blocks, and the
 * slices written in order: the same bytes as one thread's chunks. */
#define ROW_BLOCK 4096
#define ROW_BLOCKS 16
#define ROW_SLICE (ROW_BLOCK * (TS_NUM_MAX + 1))

typedef struct {
    const double *r;
    size_t c, first; /* the row's numbers, and the group's first */
    char sep;
    char *buf;
    size_t len[ROW_BLOCKS];
} row_group;

/* blocks [b0, b1) of the group: each number after the row's first
 * preceded by the separator */
static void format_blocks(void *ctx, size_t b0, size_t b1)
{
    row_group *g = ctx;
    for (size_t b = b0; b < b1; b++) {
        size_t i0 = g->first + b * ROW_BLOCK, i1 = i0 + ROW_BLOCK < g->c ? i0 + ROW_BLOCK : g->c;
        char *p0 = g->buf + b * ROW_SLICE, *p = p0;
        for (size_t i = i0; i < i1; i++) {
            if (i)
                *p++ = g->sep;
            p += ts_format_double(p, g->r[i], 0);
        }
        g->len[b] = (size_t)(p - p0);
    }
}

/* The text row r[0 .. c) and its newline, in blocks on the thread team. */
static void write_text_blocks(writer *w, const double *r, size_t c, char sep)
{
    row_group g = {.r = r, .c = c, .sep = sep, .buf = w->blocks};
    for (; g.first < c; g.first += (size_t)ROW_BLOCK * ROW_BLOCKS) {
        size_t left = c - g.first, nb = (left + ROW_BLOCK - 1) / ROW_BLOCK;
        nb = nb < ROW_BLOCKS ? nb : ROW_BLOCKS;
        ts_parallel_for(nb, format_blocks, &g);
        for (size_t b = 0; b < nb; b++)
            fwrite(g.buf + b * ROW_SLICE, 1, g.len[b], w->out);
    }
    fputc('\n', w->out);
}

static int write_traj_row(writer *w, ts_system *sys, const ts_stepper *st, long step,
                          double t);

/* Total energy at the output rows, for the warning at the end of a run
 * whose energy grew far beyond its start (see energy_warning). */
static int track_energy(writer *w, ts_system *sys, long step, double t)
{
    double ke = 0, pe = 0;
    int s = ts_system_energy(sys, t, &ke, &pe);
    if (s)
        return s;
    double e = ke + pe;
    if (!w->have_energy)
        w->e0 = w->emin = e, w->pe0 = pe, w->have_energy = 1;
    w->emin = fmin(w->emin, e);
    w->e_last = e;
    if (2 * step <= w->steps) /* energy in motion over the first half */
        w->swing = fmax(w->swing, fmax(fabs(ke), fabs(pe - w->pe0)));
    return TS_OK;
}

/* Energy at the end above its start by more than 10 times its scale: the
 * largest of |E(0)|, the energy dissipated (E(0) - min E) and the energy
 * in motion over the first half of the run (kinetic, and potential
 * exchanged).  A step past the stability limit is the usual cause. */
static void energy_warning(const writer *w)
{
    double scale = fmax(fmax(fabs(w->e0), w->e0 - w->emin), w->swing);
    if (w->have_energy && w->e_last - w->e0 > fmax(10.0 * scale, 1e-9))
        fprintf(stderr, "tstep run: warning: energy grew from %.6g to %.6g: the step is probably "
                        "past the stability limit; see tstep stability\n",
                w->e0, w->e_last);
}

static int write_row(void *ctx, ts_system *sys, const ts_stepper *st, long step, double t)
{
    writer *w = ctx;
    int s = TS_OK;
    if (sys->ops->energy && (s = track_energy(w, sys, step, t)))
        return s;
    if (w->diag && (s = write_diag_row(w, sys, st, step, t)))
        return s;
    if (w->error && (s = cli_error_row(w->error, sys, step, t)))
        return s;
    if (w->plot && (s = keep_plot_row(w, sys, t)))
        return s;
    if (w->live && (s = cli_live_frame(w->live, sys, t, step == w->steps)))
        return s;
    if (w->out && (s = write_traj_row(w, sys, st, step, t)))
        return s;
    if (w->flush_rows) { /* a crash in the plugin's code keeps the rows before it */
        if (w->out)
            fflush(w->out);
        if (w->diag)
            fflush(w->diag);
        if (w->error)
            cli_error_flush(w->error);
    }
    return TS_OK;
}

/* Is the type one of tstep's own (tstep/builtins.h), not a plugin's? */
static int builtin_type(const void *type)
{
#define TS_STEPPER(t) if (type == (const void *)&t) return 1;
#define TS_SYSTEM(t) if (type == (const void *)&t) return 1;
#include "tstep/builtins.h"
#undef TS_STEPPER
#undef TS_SYSTEM
    return 0;
}

static void show_progress(void *ctx, long step, long steps, double t)
{
    writer *w = ctx;
    cli_progress_update(&w->progress, (double)step / (double)steps, "step %ld of %ld, t = %g",
                        step, steps, t);
}

static int write_traj_row(writer *w, ts_system *sys, const ts_stepper *st, long step,
                          double t)
{
    if (w->format == CLI_FORMAT_FRAMES)
        return write_frame(w, sys, step, t);
    double *r = w->vals;
    size_t c = 0, n = sys->n;
    r[c++] = t;
    memcpy(r + c, sys->x, n * sizeof *r), c += n;
    if (sys->order == 2)
        memcpy(r + c, sys->v, n * sizeof *r), c += n;
    if (sys->ops->energy) {
        double ke = 0, pe = 0;
        int s = ts_system_energy(sys, t, &ke, &pe);
        if (s)
            return s;
        r[c++] = ke + pe;
    }
    if (w->stats) {
        const ts_step_stats *l = &st->last;
        r[c++] = (double)l->force_evals;
        r[c++] = (double)l->newton_iters;
        r[c++] = (double)l->linear_iters;
        r[c++] = l->residual;
        r[c++] = l->linear_residual;
    }
    if (w->stats && w->adaptive) {
        r[c++] = (double)st->total.accepted;
        r[c++] = (double)st->total.rejected;
    }
    if (w->json) {
        cli_table_row(w->json, r);
    } else if (w->format == CLI_FORMAT_NPY) {
        if (!little_endian()) /* '<f8': swap on a big-endian machine */
            for (size_t i = 0; i < c; i++) {
                unsigned char *b = (unsigned char *)(r + i);
                for (int k = 0; k < 4; k++) {
                    unsigned char tmp = b[k];
                    b[k] = b[7 - k], b[7 - k] = tmp;
                }
            }
        fwrite(r, sizeof *r, c, w->out);
    } else if (w->blocks) { /* a long row and more than one thread (writer set-up) */
        write_text_blocks(w, r, c, w->format == CLI_FORMAT_CSV ? ',' : ' ');
    } else { /* shortest decimals that read back exactly, written in chunks */
        char *p = w->line, *end = w->line + ROW_CHUNK;
        char sep = w->format == CLI_FORMAT_CSV ? ',' : ' ';
        for (size_t i = 0; i < c; i++) {
            if (end - p < TS_NUM_MAX + 2) {
                fwrite(w->line, 1, (size_t)(p - w->line), w->out);
                p = w->line;
            }
            if (i)
                *p++ = sep;
            p += ts_format_double(p, r[i], 0);
        }
        *p++ = '\n';
        fwrite(w->line, 1, (size_t)(p - w->line), w->out);
    }
    w->rows++;
    return ferror(w->out) ? ts_error(TS_ERR_IO, "writing the trajectory") : TS_OK;
}

/* --plot: the run in the terminal.  Systems that are not particle systems:
 * the state against t; particle systems: the last frame in 3-D.  Then the
 * total energy against t where the system defines it. */
static int draw_plot(const char *cmd, const writer *w, const ts_system *sys,
                     const char *stepper, double dt)
{
    FILE *gp;
    int rc = cli_gnuplot_dumb(cmd, &gp);
    if (rc)
        return rc;
    cli_gnuplot_datablock(gp, "run", w->plot);
    char title[256];
    const char *name = sys->type ? sys->type->name : "system";
    fputs("set key outside right\n", gp);
    if (sys->dim == 0) {
        size_t cols = sys->n * (size_t)sys->order;
        snprintf(title, sizeof title, "%s, %s, dt = %g: state against t", name, stepper, dt);
        fputs("set title ", gp);
        cli_gnuplot_quote(gp, title);
        fputs("\nset xlabel 't'\nplot", gp);
        for (size_t i = 0; i < cols && i < 6; i++)
            fprintf(gp, "%s $run using 1:%zu with lines title '%c%zu'", i ? "," : "", i + 3,
                    i < sys->n ? 'x' : 'v', i < sys->n ? i : i - sys->n);
        fputc('\n', gp);
    } else {
        fputs("$frame << EOD\n", gp);
        cli_write_particles(gp, sys, 3, 8);
        fputs("EOD\n", gp);
        snprintf(title, sizeof title, "%s, %s, dt = %g: the last frame", name, stepper, dt);
        fputs("set title ", gp);
        cli_gnuplot_quote(gp, title);
        /* y up, as in plots/ and the live view (gravity is along -y) */
        fputs("\nset view 62, 28\nset key off\nset xlabel 'x'\nset ylabel 'z'\n"
              "set zlabel 'y (up)'\nsplot $frame using 1:3:2 with lines\n",
              gp);
    }
    if (sys->ops->energy) {
        snprintf(title, sizeof title, "%s, %s, dt = %g: total energy against t", name, stepper,
                 dt);
        fputs("set title ", gp);
        cli_gnuplot_quote(gp, title);
        /* a label of its own: the frame's 'z' must not carry over (a
         * one-letter label, which the terminal's dumb output has room for) */
        fputs("\nset xlabel 't'\nset ylabel 'E'\nset key off\nplot $run using 1:2 with lines\n",
              gp);
    }
    return cli_gnuplot_close(cmd, gp);
}

/* The limits of a run without --allow-large (documented in help()). */
#define RUN_MAX_OUTPUT_BYTES 1e9
#define RUN_MAX_SECONDS 3600.0
#define RUN_PROBE_FROM_STEPS 10000

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds per step from a few steps taken and undone (state and counters
 * restored); NAN if they could not be taken. */
static double probe_step_seconds(ts_system *sys, ts_stepper *st, double dt)
{
    size_t m = ts_system_ydim(sys);
    double *y = malloc(m * sizeof *y);
    if (!y)
        return NAN;
    ts_system_get_y(sys, y);
    ts_step_stats total = st->total, last = st->last;
    double t0 = wall_seconds(), t1 = t0;
    int k = 0;
    while (k < 20 && t1 - t0 < 0.2) {
        if (ts_stepper_step(st, sys, (double)k * dt, dt))
            break;
        k++;
        t1 = wall_seconds();
    }
    ts_system_set_y(sys, y);
    st->total = total, st->last = last;
    free(y);
    return k ? (t1 - t0) / k : NAN;
}

/* A run: its options and what it opened. */
typedef struct run_job {
    cli_common o;
    const char *diagpath, *errorpath;
    double dt, t_end, live_speed;
    long steps, every;
    int have_dt, have_tend, have_steps, live, allow_large, traj;
    ts_run_options ropt;
    const ts_system_type *stype;
    const ts_stepper_type *itype;
    ts_params p;
    writer w;
    cli_live lv;
    ts_system *sys;
    ts_stepper *st;
} run_job;

/* Refuse, before it starts, a run that would write more than
 * RUN_MAX_OUTPUT_BYTES or take more than RUN_MAX_SECONDS (estimated). */
static int check_limits(const char *cmd, const run_job *r)
{
    ts_system *sys = r->sys;
    const writer *w = &r->w;
    const ts_run_options *ro = &r->ropt;
    int diag = r->diagpath != NULL, traj = r->traj;
    double rows = floor((double)ro->steps / (double)ro->every) + 2.0;
    double cols = 1.0 + (double)sys->n * sys->order + (sys->ops->energy ? 1 : 0) +
                  (w->stats ? 5 : 0);
    double row_bytes = w->format == CLI_FORMAT_FRAMES ? 40.0 + 36.0 * (double)(sys->n / sys->dim)
                                                      : 22.0 * cols;
    double bytes = (traj ? rows * row_bytes : 0.0) + (diag ? rows * 22.0 * 16.0 : 0.0);
    if (bytes > RUN_MAX_OUTPUT_BYTES)
        return cli_usage_error(cmd, "this run would write about %.3g GB (%.0f rows of about %.0f "
                                    "bytes%s), more than the limit of %.0f GB: write fewer rows "
                                    "(--every N), or give --allow-large",
                               bytes / 1e9, rows, row_bytes, diag ? ", and the diagnostics" : "",
                               RUN_MAX_OUTPUT_BYTES / 1e9);
    if (ro->steps >= RUN_PROBE_FROM_STEPS) {
        double sec = probe_step_seconds(sys, r->st, ro->dt) * (double)ro->steps;
        if (sec > RUN_MAX_SECONDS)
            return cli_usage_error(cmd, "this run would take about %.3g hours (%ld steps, timed "
                                        "from a few), more than the limit of %.0f hour: give a "
                                        "larger --dt or shorter run, or --allow-large",
                                   sec / 3600.0, ro->steps, RUN_MAX_SECONDS / 3600.0);
    }
    return 0;
}

static void help_columns(void);

static void help(const cli_opt *opts)
{
    printf("Usage: tstep run --system S --stepper I --dt H (--t-end T | --steps N)\n"
           "                 [--param key=value]... [--out FILE] [--every N]\n"
           "                 [--format dat|csv|json|frames|npy] [--stats]\n"
           "                 [--adaptive [--strain-limit X]]\n"
           "                 [--rtol X [--atol Y]]\n"
           "                 [--diagnostics FILE] [--error FILE] [--plot]\n"
           "                 [--live [--live-speed X]] [--allow-large]\n"
           "\n"
           "Integrate system S with stepper I from t = 0 and write the trajectory.\n");
    cli_print_options(opts);
    printf("\n"
           "Formats: dat: space-separated under a '#' header (the default); csv:\n"
           "comma-separated with a header row; json: {\"command\": \"run\", \"block\":\n"
           "\"system\", \"columns\": [...], \"blocks\": [{\"name\": SYSTEM, \"rows\": [...]}]}:\n"
           "the same columns, numbers that read back exactly, nan as null; npy: binary\n"
           "NumPy .npy v1.0, '<f8', shape (rows, columns), the same columns as dat, data\n"
           "from byte 128 (numpy.load(FILE); gnuplot: binary skip=128, see\n"
           "docs/performance.md); frames (particle systems): one gnuplot index block per\n"
           "output time ('# t = T step K', then 'x y z' per particle at 10 digits; grids\n"
           "have a blank line after each row so splot draws a mesh); its header has\n"
           "'# stepper S', '# dt H', '# every N', '# frame_row N' (0: no grid) and\n"
           "'# param NAME VALUE' for every system parameter.  --error writes csv when its\n"
           "FILE ends in .csv, else dat.\n");
    help_columns();
}

/* The second half of the help: what the outputs hold, and the limits. */
static void help_columns(void)
{
    printf("\n"
           "Columns: t, x0..x(n-1), v0..v(n-1) (second-order systems), energy (where\n"
           "defined), then the --stats columns (accepted, rejected with --adaptive or\n"
           "--rtol: steps so far).\n"
           "dat and csv write each number as the shortest decimal that reads back as\n"
           "exactly the computed double.\n"
           "With --plot or --live and no --out, the trajectory is not written.\n"
           "\n"
           "Diagnostics file: CSV with a header row when FILE ends in .csv, json (as\n"
           "--format json) when it ends in .json, else dat (space-separated under a\n"
           "'#' header).  Columns, one row per output step:\n"
           "  t, step                           time and steps taken\n"
           "  kinetic, potential, energy        where the system defines energy\n"
           "                                    (energy = kinetic + potential)\n"
           "  px, py, pz                        total linear momentum, where defined\n"
           "  force_evals, jacobian_products,   the stepper's statistics summed from\n"
           "  newton_iters, linear_iters,       t = 0 to this row (accepted/rejected:\n"
           "  accepted, rejected                steps, or sub-steps with --adaptive)\n"
           "  residual, residual_max            Newton's stop measure |M^-1 r|_inf /\n"
           "                                    max(1, |v|_inf) at the last step's\n"
           "                                    accepted iterate (or the update test's,\n"
           "                                    the last full update or the error\n"
           "                                    estimated to be left after it over 0.1,\n"
           "                                    when that stopped Newton and is\n"
           "                                    smaller), and the worst so far\n"
           "  linear_residual                   relative residual |r|/|b| of the last\n"
           "                                    linear solve, r the solver's updated\n"
           "                                    b - Ax (nan: not computed, e.g. explicit\n"
           "                                    steppers, or the row at t = 0)\n"
           "A run that diverges stops at that step with exit status 1; the rows\n"
           "written before it (trajectory and diagnostics) are complete.\n"
           "When standard error is a terminal, a long run shows a progress line there\n"
           "(TSTEP_PROGRESS=0 turns it off).  A run whose energy ends far above its\n"
           "start warns on standard error (probably a step past the stability limit).\n"
           "\n"
           "SIGINT (Ctrl-C) or SIGTERM stop the run after the step under way: every\n"
           "output gets a complete row for that step and ends there, standard error\n"
           "says where it stopped, and the exit status is 130 (INT) or 143 (TERM).\n"
           "\n"
           "Limits: before it starts, a run estimates the size of what it writes and,\n"
           "for more than 10000 steps, its time (from a few timed steps); it refuses\n"
           "more than 1 GB of output or 1 hour with the estimates, unless --allow-large.\n");
}



/* The checks between options, and the run's and the writer's settings. */
static int check_run_options(const char *cmd, run_job *r)
{
    const cli_common *o = &r->o;
    ts_run_options *ro = &r->ropt;
    const char *diag = r->diagpath;
    if (diag && strcmp(diag, "-") == 0 && (!o->out || strcmp(o->out, "-") == 0) && !o->plot &&
        !r->live)
        return cli_usage_error(cmd, "--diagnostics -: standard output already gets the "
                                    "trajectory; give --out FILE");
    if (ro->atol > 0.0 && !(ro->rtol > 0.0))
        return cli_usage_error(cmd, "--atol needs --rtol");
    ts_solver_options d = ts_default_solver_options();
    const ts_solver_options *so = &o->solver;
    if (!(r->itype->flags & TS_IMPLICIT) &&
        (so->newton_tol != d.newton_tol || so->newton_max != d.newton_max ||
         so->cg_tol != d.cg_tol || so->cg_max != d.cg_max || so->precond || so->linear_solver))
        fprintf(stderr, "tstep %s: note: %s is explicit: the implicit solver's options "
                        "(--newton-*, --cg-*, --precond, --linear-solver) have no effect\n",
                cmd, r->itype->name);
    if (ro->rtol > 0.0 && !(r->itype->flags & TS_ADAPTIVE))
        return cli_usage_error(cmd, "--rtol: stepper '%s' has no error estimate (dopri5 has)",
                               r->itype->name);
    if (ro->rtol > 0.0 && ro->adaptive)
        return cli_usage_error(cmd, "give at most one of --rtol and --adaptive");
    if (ro->rtol > 0.0 && !(ro->atol > 0.0))
        ro->atol = ro->rtol;
    const cli_output outs[] = {{"out", r->traj ? (o->out ? o->out : "-") : NULL},
                               {"diagnostics", diag}, {"error", r->errorpath}};
    if (cli_distinct_outputs(cmd, outs, sizeof outs / sizeof *outs))
        return CLI_EXIT_USAGE;
    ro->dt = r->dt;
    ro->steps = r->steps;
    ro->every = r->every;
    ro->progress = show_progress;
    ro->progress_ctx = &r->w;
    writer *w = &r->w;
    w->format = o->format;
    w->adaptive = ro->adaptive || ro->rtol > 0.0;
    w->steps = r->steps;
    w->params = &r->p;
    w->stepper = r->itype->name;
    w->flush_rows = !builtin_type(r->itype) || !builtin_type(r->stype);
    w->dt = r->dt;
    w->every = r->every;
    cli_progress_init(&w->progress, "tstep run");
    return 0;
}

static int resolve_run_options(const char *cmd, run_job *r);

/* The options and the checks that need no system; 1 with *rc to return. */
static int run_options(const char *cmd, int argc, char **argv, run_job *r, int *rc)
{
    cli_common *o = &r->o;
    ts_run_options *ro = &r->ropt;
    const cli_opt opts[] = {
        CLI_OPTS_SYSTEM(o),
        CLI_STRING("stepper", &o->steppers, "I", "the stepper (see 'tstep list')"),
        {.name = "dt", .kind = CLI_OPT_POSITIVE, .to = &r->dt, .given = &r->have_dt, .arg = "H",
         .doc = "step size, > 0"},
        {.name = "t-end", .kind = CLI_OPT_POSITIVE, .to = &r->t_end, .given = &r->have_tend,
         .arg = "T", .doc = "run ceil(T/H) steps: steps of H and a last, shorter one that ends "
                            "exactly at T (when H does not divide T)"},
        {.name = "steps", .kind = CLI_OPT_COUNT, .to = &r->steps, .min = 1,
         .given = &r->have_steps, .arg = "N", .doc = "run N steps"},
        CLI_OPTS_PARAM(o), CLI_OPTS_OUT(o),
        CLI_COUNT("every", &r->every, 1, "N",
                  "write every N-th step (default %D; the last step always)"),
        CLI_OPTS_FORMAT(o),
        CLI_FLAG("stats", &r->w.stats,
                 "add the last step's force_evals, newton_iters, linear_iters, residual, "
                 "linear_residual columns (below), and print totals, the achieved accuracy "
                 "and the linear solver's setup and solve times on standard error"),
        CLI_FLAG("adaptive", &ro->adaptive,
                 "strain-rule adaptive sub-steps (spring systems): halve when a spring's "
                 "length changes by more than the limit"),
        CLI_POSITIVE("strain-limit", &ro->strain_limit, "X",
                     "relative length change allowed per sub-step (default %D)"),
        CLI_POSITIVE("rtol", &ro->rtol, "X",
                     "error control (steppers with an error estimate: dopri5): H is then the "
                     "output interval and the first trial step; steps inside it are chosen "
                     "by a PI controller so that the local error estimate e has "
                     "sqrt(mean((e_i / (atol + X |y_i|))^2)) <= 1, and land exactly on "
                     "every output time"),
        CLI_POSITIVE("atol", &ro->atol, "Y", "absolute tolerance of the error control "
                                             "(default: X)"),
        CLI_STRING("diagnostics", &r->diagpath, "FILE",
                   "also write, at every output step, the energies, momentum and the "
                   "stepper's statistics to FILE (below)"),
        CLI_STRING("error", &r->errorpath, "FILE",
                   "also write, at every output step, the error against the exact solution, "
                   "or a computed reference where there is none, with the reference's "
                   "estimated error (see docs/sweep.md): t, step, error_x, error_v, error, "
                   "reference_error"),
        CLI_FLAG("plot", &o->plot,
                 "draw the run in the terminal with gnuplot (dumb terminal): the state "
                 "against t, or a particle system's last frame, and the total energy against "
                 "t where defined"),
        CLI_FLAG("live", &r->live,
                 "draw the state in a gnuplot window as the run goes (needs $DISPLAY and a "
                 "gnuplot with the qt, wxt or x11 terminal; exit status 2 with the reason "
                 "otherwise)"),
        CLI_POSITIVE("live-speed", &r->live_speed, "X",
                     "with --live, simulated time runs at X times wall-clock time "
                     "(default %D)"),
        CLI_FLAG("allow-large", &r->allow_large, "run even above the output and time limits "
                                                 "(below)"),
        CLI_OPTS_SOLVER(o), CLI_HELP(help), CLI_END};
    if (cli_options(cmd, argc, argv, opts, rc))
        return 1;
    return (*rc = resolve_run_options(cmd, r)) != 0;
}

/* The system and stepper named, the steps, the output's format, and the
 * checks between options; 0 or the exit status. */
static int resolve_run_options(const char *cmd, run_job *r)
{
    cli_common *o = &r->o;
    int count;
    if (o->steppers && (strchr(o->steppers, ',') || strcmp(o->steppers, "all") == 0))
        return cli_usage_error(cmd, "--stepper: run takes one stepper, not '%s'",
                                o->steppers);
    if (cli_common_resolve(cmd, o, &(cli_lookup){&r->stype, &r->p, &r->itype, 1, &count}))
        return CLI_EXIT_USAGE;
    if (!r->have_dt)
        return cli_usage_error(cmd, "--dt is required");
    if (r->have_tend == r->have_steps)
        return cli_usage_error(cmd, "give exactly one of --t-end and --steps");
    if (r->have_tend) {
        double s = ceil(r->t_end / r->dt - 1e-9);
        if (s > 1e12)
            return cli_usage_error(cmd, "--t-end %g / --dt %g is more than 1e12 steps",
                                  r->t_end, r->dt);
        r->steps = s < 1 ? 1 : (long)s;
        r->ropt.t_end = r->t_end;
    }
    /* one rule with --diagnostics and --error: without --format, the output
     * follows its file's extension (.csv, .npy, .json; else dat) */
    size_t len = o->out ? strlen(o->out) : 0;
    if (!o->format_given && len >= 4 && strcmp(o->out + len - 4, ".csv") == 0)
        o->format = CLI_FORMAT_CSV;
    else if (!o->format_given && len >= 4 && strcmp(o->out + len - 4, ".npy") == 0)
        o->format = CLI_FORMAT_NPY;
    else if (!o->format_given && len >= 5 && strcmp(o->out + len - 5, ".json") == 0)
        o->format = CLI_FORMAT_JSON;
    r->traj = o->out || (!o->plot && !r->live); /* the trajectory is written */
    return check_run_options(cmd, r);
}

/* The system, the stepper, the limits and every output; 0 or the exit
 * status (what was opened is closed by close_run). */
static int open_run(const char *cmd, run_job *r)
{
    writer *w = &r->w;
    const cli_common *o = &r->o;
    int rc = cli_make_system(cmd, r->stype, &r->p, &r->sys);
    if (rc)
        return rc;
    int s = ts_stepper_new(r->itype, r->sys, &o->solver, &r->st);
    if (s)
        return cli_fail(cmd, s);
    if (r->ropt.adaptive && !r->sys->ops->max_strain_change)
        return cli_usage_error(cmd, "--adaptive needs a system with springs; '%s' has none",
                               r->stype->name);
    if (w->format == CLI_FORMAT_FRAMES && r->sys->dim == 0)
        return cli_usage_error(cmd, "--format frames needs a particle system; '%s' is not one",
                               r->stype->name);
    if (!r->allow_large && (rc = check_limits(cmd, r)))
        return rc;
    char title[256];
    snprintf(title, sizeof title, "%s, %s, dt = %g", r->stype->name, r->itype->name, r->dt);
    if (r->live) {
        if ((rc = cli_live_open(cmd, r->sys, title, r->live_speed, (double)r->steps * r->dt,
                                &r->lv)))
            return rc;
        w->live = &r->lv;
    }
    if (o->plot && !(w->plot = tmpfile()))
        return cli_usage_error(cmd, "--plot: cannot make a temporary file");
    if (r->diagpath) {
        size_t len = strlen(r->diagpath);
        w->diag_csv = len >= 4 && strcmp(r->diagpath + len - 4, ".csv") == 0;
        if (len >= 5 && strcmp(r->diagpath + len - 5, ".json") == 0) {
            w->diag_json = &w->diag_t;
            if (!(w->diag_names = malloc(17 * sizeof *w->diag_names)))
                return cli_fail(cmd, ts_error(TS_ERR_NOMEM, "the diagnostics' columns"));
        }
        if ((rc = cli_open_output_for(cmd, "diagnostics", r->diagpath, &w->diag)))
            return rc;
        write_diag_header(w, r->sys);
    }
    w->cols = row_columns(w, r->sys);
    w->planned = 1 + r->steps / r->every + (r->steps % r->every != 0);
    w->vals = malloc(w->cols * sizeof *w->vals);
    ts_parallel_touch(w->vals, w->cols * sizeof *w->vals); /* each row fills it serially */
    w->line = malloc(ROW_CHUNK);
    int text = w->format == CLI_FORMAT_DAT || w->format == CLI_FORMAT_CSV;
    if (text && w->cols >= ts_threads_min() && ts_threads_get() > 1) /* NULL: in chunks */
        w->blocks = malloc((size_t)ROW_BLOCKS * ROW_SLICE);
    if (w->format == CLI_FORMAT_JSON && (w->names = traj_names(w, r->sys)))
        w->json = &w->json_t;
    if (!w->vals || !w->line || (w->format == CLI_FORMAT_JSON && !w->names))
        return cli_fail(cmd, ts_error(TS_ERR_NOMEM, "a row of %zu columns", w->cols));
    if (r->errorpath &&
        (rc = cli_error_open(cmd, r->errorpath,
                             &(cli_error_run){r->stype, &r->p, r->sys, r->dt}, &w->error)))
        return rc;
    if (r->traj && (rc = cli_open_output(cmd, o->out, &w->out)))
        return rc;
    if (w->out)
        write_header(w, r->sys);
    return 0;
}

/* --stats: the run's totals on standard error. */
static void print_totals(const run_job *r, const ts_run_result *res)
{
    const ts_step_stats *tot = &r->st->total;
    fprintf(stderr,
            "tstep run: %ld steps to t = %g; force evaluations %ld, Jacobian products %ld, "
            "Newton iterations %ld, linear iterations %ld, accepted %ld, rejected %ld\n",
            res->steps_done, res->t, tot->force_evals, tot->jacobian_products,
            tot->newton_iters, tot->linear_iters, tot->accepted, tot->rejected);
    if (ts_threads_get() > 1) {
        const char *policy = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
        const char *blas = getenv("OPENBLAS_NUM_THREADS");
        long loops, fewer;
        ts_threads_usage(&loops, &fewer);
        fprintf(stderr, "tstep run: threads %d, waiting %s%s%s; on fewer threads, the "
                        "processors busy or too few: %ld of %ld loops; OpenBLAS threads %s%s\n",
                ts_threads_get(), policy ? policy : spin ? "GOMP_SPINCOUNT " : "libgomp's default",
                !policy && spin ? spin : "", policy ? " (OMP_WAIT_POLICY)" : "", fewer, loops,
                blas ? blas : "OpenBLAS's default", blas ? " (OPENBLAS_NUM_THREADS)" : "");
    }
    if (!(r->itype->flags & TS_IMPLICIT))
        return;
    fprintf(stderr,
            "tstep run: achieved accuracy: Newton residual last %.3g, worst %.3g "
            "(or the update test's, where that stopped Newton; newton-tol %g); linear relative "
            "residual last %.3g, worst %.3g\n",
            r->st->last.residual, tot->residual, r->st->opt.newton_tol,
            r->st->last.linear_residual, tot->linear_residual);
    const ts_linsolve_type *lt;
    const ts_precond_type *pt;
    const char *why;
    ts_linsolve_choose(r->sys, &r->st->opt, &lt, &pt, &why);
    fprintf(stderr, "tstep run: linear solver %s%s%s (%s): setup %.3g s, solve %.3g s\n",
            lt->name, pt ? "/" : "", pt ? pt->name : "", why, tot->setup_seconds,
            tot->solve_seconds);
    const double *b = tot->linear_bytes;
    fprintf(stderr,
            "tstep run: linear solver memory: %.1f MB, %.0f B an unknown (vectors and matrix %.1f "
            "MB; preconditioner: operators %.1f MB, prolongators %.1f MB, work %.1f MB)\n",
            (b[0] + b[1] + b[2] + b[3]) / 1e6, (b[0] + b[1] + b[2] + b[3]) / (double)r->sys->n,
            b[0] / 1e6, b[1] / 1e6, b[2] / 1e6, b[3] / 1e6);
}

/* Tolerance mode: what was asked and what was reached.  Against the exact
 * solution, where the system has one, the error at the end in units of the
 * tolerance asked for, max_i |y_i - exact_i| / (atol + rtol |exact_i|): 1 is
 * exactly what was requested, above 1 more error than requested (the
 * controller bounds each step's local error estimate, not the global error). */
static void print_tolerance(const run_job *r, const ts_run_result *res)
{
    const ts_step_stats *tot = &r->st->total;
    double rtol = r->ropt.rtol, atol = r->ropt.atol;
    fprintf(stderr, "tstep run: tolerance rtol %g, atol %g: accepted %ld, rejected %ld steps, "
                    "force evaluations %ld\n",
            rtol, atol, tot->accepted, tot->rejected, tot->force_evals);
    size_t n = ts_system_ydim(r->sys);
    double *y = malloc(2 * n * sizeof *y), err = 0.0, ratio = 0.0;
    if (!y)
        return;
    ts_system_get_y(r->sys, y);
    if (ts_system_exact_y(r->sys, res->t, y + n) == TS_OK) {
        for (size_t i = 0; i < n; i++) {
            double e = fabs(y[i] - y[n + i]);
            err = fmax(err, e);
            ratio = fmax(ratio, e / (atol + rtol * fabs(y[n + i])));
        }
        fprintf(stderr, "tstep run: achieved accuracy at t = %g against the exact solution: "
                        "max error %.3g, achieved/requested %.3g%s\n",
                res->t, err, ratio, ratio > 1.0 ? " (above the tolerance asked for)" : "");
    } else {
        fprintf(stderr, "tstep run: achieved accuracy: no exact solution for this system "
                        "(tstep sweep and --error FILE compare with a computed reference)\n");
    }
    free(y);
}

/* After ts_run (status s): the outputs closed, where it stopped or failed,
 * the warnings, totals and figure; the exit status. */
static int finish_run(const char *cmd, run_job *r, int s, const ts_run_result *res)
{
    writer *w = &r->w;
    int rc = 0;
    cli_progress_done(&w->progress);
    /* npy: a run that stopped early rewrites the row count, where it can */
    if (w->out && w->format == CLI_FORMAT_NPY && w->rows != w->planned &&
        fseek(w->out, 0, SEEK_SET) == 0)
        write_npy_header(w, w->rows);
    if (w->out && w->json)
        cli_table_end(w->json);
    if (w->out)
        rc = cli_close_output(cmd, r->o.out, w->out);
    w->out = NULL;
    if (w->diag && w->diag_json)
        cli_table_end(w->diag_json);
    if (w->diag) {
        int r2 = cli_close_output(cmd, r->diagpath, w->diag);
        rc = rc ? rc : r2;
        w->diag = NULL;
    }
    if (w->error) {
        int r2 = cli_error_close(cmd, w->error);
        rc = rc ? rc : r2;
        w->error = NULL;
    }
    if (s == TS_ERR_INTERRUPTED) {
        rc = cli_stopped(cmd, "step %ld of %ld, t = %.15g: every output ends there",
                         res->steps_done, r->steps, res->t);
    } else if (s) {
        const char *d = ts_error_detail();
        if (res->failed_step)
            fprintf(stderr, "tstep run: %s at step %ld (t = %g to %g)%s%s\n",
                    ts_status_message(s), res->failed_step, res->failed_time,
                    res->failed_time + res->failed_dt, *d ? ": " : "", d);
        else
            cli_fail(cmd, s);
        rc = ts_status_exit_code(s);
    } else if (rc == 0) {
        energy_warning(w);
    }
    if (w->stats)
        print_totals(r, res);
    if (r->ropt.rtol > 0.0 && s == TS_OK)
        print_tolerance(r, res);
    if (w->plot && (rc == 0 || s != TS_OK)) { /* a failed run: what it did */
        int r2 = draw_plot(cmd, w, r->sys, r->itype->name, r->dt);
        rc = rc ? rc : r2;
    }
    return rc;
}

/* Close and free what open_run opened; returns rc, or the live view's error. */
static int close_run(const char *cmd, run_job *r, int rc)
{
    writer *w = &r->w;
    if (w->live) {
        int r2 = cli_live_close(cmd, w->live);
        rc = rc ? rc : r2;
    }
    if (w->out)
        cli_close_output(cmd, r->o.out, w->out);
    if (w->diag)
        cli_close_output(cmd, r->diagpath, w->diag);
    if (w->plot)
        fclose(w->plot);
    free(w->vals);
    free(w->line);
    free(w->blocks);
    free(w->names);
    free(w->diag_names);
    cli_error_close(cmd, w->error);
    ts_stepper_free(r->st);
    ts_system_free(r->sys);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    const char *cmd = "run";
    run_job r = {.live_speed = 1.0, .every = 1, .w = {.format = CLI_FORMAT_DAT}};
    int rc;
    cli_common_init(&r.o, 1);
    r.o.json_ok = 1;
    r.ropt = ts_default_run_options();
    if (run_options(cmd, argc, argv, &r, &rc))
        return rc;
    if (!(rc = open_run(cmd, &r))) {
        ts_run_result res;
        cli_catch_stop_signals();
        int s = ts_run(r.sys, r.st, &r.ropt, write_row, &r.w, &res);
        rc = finish_run(cmd, &r, s, &res);
    }
    return close_run(cmd, &r, rc);
}

/* gnuplot from the command line: figures in the terminal (--plot, gnuplot's
 * dumb terminal) and the live window of `tstep run --live`.
 *
 * gnuplot is run through a pipe (popen); the program is $GNUPLOT when set,
 * else "gnuplot" on PATH.  Data go inline as datablocks ($name << EOD), so
 * no temporary files are left behind.  Everything here is CLI-level: it
 * prints for users and returns command-line exit statuses. */
#ifndef TSTEP_CLI_GNUPLOT_H
#define TSTEP_CLI_GNUPLOT_H

#include <stdio.h>
#include "tstep/system.h"

/* The gnuplot program to run. */
const char *cli_gnuplot_program(void);

/* Start gnuplot drawing into the terminal (dumb, sized to standard output's
 * window, else $COLUMNS x $LINES, else 80 x 25).  Prints and returns 2 when
 * gnuplot cannot be found or started. */
int cli_gnuplot_dumb(const char *cmd, FILE **gp);

/* Finish: "exit" to gnuplot, wait; prints and returns 1 if gnuplot failed. */
int cli_gnuplot_close(const char *cmd, FILE *gp);

/* Copy everything written so far to `data` (rewound) into a datablock. */
void cli_gnuplot_datablock(FILE *gp, const char *name, FILE *data);

/* gnuplot string literal: single-quoted, quotes doubled. */
void cli_gnuplot_quote(FILE *gp, const char *text);

/* --- the live window --------------------------------------------------- */

typedef struct {
    FILE *gp;
    int particles;       /* 3-D frames of a particle system, else a time series */
    size_t columns;      /* time series: state columns kept (x, then v) */
    double speed;        /* simulated seconds per wall-clock second */
    double wall0;        /* wall clock at t = 0 */
    double last_sent;    /* wall clock of the last frame drawn */
    double lo[3], hi[3]; /* particle view box, grown as needed */
    int have_box;
    const char *title;
} cli_live;

/* Open a window on an interactive terminal (qt, wxt or x11, the first this
 * gnuplot has).  Without $DISPLAY (or $WAYLAND_DISPLAY), or without such a
 * terminal, prints why and returns 2. */
int cli_live_open(const char *cmd, const ts_system *sys, const char *title, double speed,
                  double t_end, cli_live *lv);

/* Draw the state at time t.  Paced so simulated time runs at `speed` times
 * wall-clock time, and at most 30 redraws a second (the last always). */
int cli_live_frame(cli_live *lv, const ts_system *sys, double t, int last);

/* Leave the window open (gnuplot -persist) and let gnuplot go. */
int cli_live_close(const char *cmd, cli_live *lv);

#endif

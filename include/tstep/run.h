/* tstep/run.h - the run loop and the experiments built on it.
 *
 * ts_run integrates a system with a stepper over fixed steps, calling an
 * observer on the initial state, every `every` steps and on the last one.
 * A step that fails, or leaves a non-finite or exploding state, ends the
 * run with that status; the state stays as it was before that step.
 *
 * "Exploding" means |Y|_inf > TS_DIVERGENCE_FACTOR * max(1, |Y(0)|_inf). */
#ifndef TSTEP_RUN_H
#define TSTEP_RUN_H

#include <signal.h>
#include "tstep/stepper.h"

#define TS_DIVERGENCE_FACTOR 1e8

typedef struct {
    double dt;        /* requested step, > 0 */
    long steps;       /* number of steps */
    long every;       /* observe every this many steps (>= 1) */
    double t_end;     /* > 0: the last step is shortened to end exactly at t_end
                         (steps = ceil(t_end / dt)); 0: every step is dt */
    int adaptive;     /* strain-rule adaptive stepping (systems with springs) */
    double strain_limit; /* adaptive: largest relative spring length change per step */
    /* Error control (TS_ADAPTIVE steppers, e.g. dopri5) when rtol > 0: dt is the
     * output interval and the first trial step; inside it steps are chosen by
     * a PI controller on the embedded error estimate, err <= 1 in the norm
     * sqrt(mean((e_i / (atol + rtol max(|y0_i|, |y1_i|)))^2)), and land
     * exactly on every output time.  Accepted and rejected steps are counted
     * in the stepper's statistics. */
    double rtol, atol;
    /* Optional, for progress displays: called after every completed step. */
    void (*progress)(void *ctx, long step, long steps, double t);
    void *progress_ctx;
} ts_run_options;

/* dt 0.01, steps 100, t_end 0, every 1, adaptive off, strain_limit 0.1,
 * rtol = atol = 0 (no error control), no progress. */
ts_run_options ts_default_run_options(void);

/* Called with the state at time t after `step` steps; nonzero stops the run
 * with that status. */
typedef int (*ts_observer_fn)(void *ctx, ts_system *sys, const ts_stepper *st,
                              long step, double t);

typedef struct {
    long steps_done;   /* steps completed */
    double t;          /* time reached */
    long failed_step;  /* the step (1-based) that failed, or 0 */
    double failed_time;/* the time that step started from */
    double failed_dt;  /* and its size */
} ts_run_result;

/* Nonzero (the number of the signal, set by a handler) asks ts_run and the
 * other long loops (sweep, stability runs) to stop after the step under way:
 * ts_run then observes the last finished step if it was not observed yet,
 * so every output ends in the same complete row, and returns
 * TS_ERR_INTERRUPTED with res->steps_done and res->t at that step. */
extern volatile sig_atomic_t ts_stop_signal;

/* Run from t = 0.  Returns a status; res may be NULL. */
int ts_run(ts_system *sys, ts_stepper *st, const ts_run_options *opt,
           ts_observer_fn observe, void *ctx, ts_run_result *res);

/* Number of whole steps of about `dt` that land exactly on t_end (>= 1). */
long ts_steps_for(double t_end, double dt);

/* --- convergence sweep ------------------------------------------------------ */

typedef struct {
    double dt;
    long steps;
    double error;   /* max-norm error of Y at t_end against the exact solution */
    int status;     /* TS_OK, or why the run failed */
    int excluded;   /* 0 used in the order fit; 1 round-off; 2 unstable */
    ts_step_stats stats; /* the stepper's statistics over the run */
    double seconds; /* wall-clock time of the run (stepping only; mean of repeats) */
} ts_sweep_point;

/* Run `type` on a fresh system from `stype`/`params` to t_end with
 * `levels` step sizes spaced geometrically from dt_max down to dt_min. */
int ts_sweep(const ts_system_type *stype, const ts_params *params,
             const ts_stepper_type *type, const ts_solver_options *opt,
             double dt_min, double dt_max, int levels, double t_end,
             ts_sweep_point *points);

/* Least-squares slope of log(error) against log(dt) over the points not
 * excluded; NAN when fewer than two remain.  *used gets their count. */
double ts_observed_order(const ts_sweep_point *points, int n, int *used);

#endif

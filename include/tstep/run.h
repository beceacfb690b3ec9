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
#include "tstep/reference.h"
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

/* A stop request (ts_stop_signal, tstep/status.h) ends ts_run after the step
 * under way: it then observes the last finished step if it was not observed
 * yet, so every output ends in the same complete row, and returns
 * TS_ERR_INTERRUPTED with res->steps_done and res->t at that step.  The
 * loops inside a step (Newton's, the Krylov solvers') check it too
 * (ts_stop_check), so a step that would not end soon (an unreachable
 * tolerance with a huge iteration cap) fails with TS_ERR_INTERRUPTED and
 * leaves the state of the step's start; with --adaptive or error control,
 * sub-steps of that step may have moved the state, and ts_run then gives
 * the last step observed in res->steps_done and res->t. */

/* Run from t = 0.  Returns a status; res may be NULL. */
int ts_run(ts_system *sys, ts_stepper *st, const ts_run_options *opt,
           ts_observer_fn observe, void *ctx, ts_run_result *res);

/* Number of whole steps of about `dt` that land exactly on t_end (>= 1). */
long ts_steps_for(double t_end, double dt);

/* --- convergence sweep ------------------------------------------------------ */

/* Why a point is left out of the order fit (ts_sweep_point.excluded). */
enum {
    TS_SWEEP_USED = 0,
    TS_SWEEP_ROUNDOFF = 1,  /* error <= TS_ROUNDOFF_FACTOR * steps * eps * scale */
    TS_SWEEP_UNSTABLE = 2,  /* the run failed, or error > scale */
    TS_SWEEP_REFERENCE = 3, /* error <= TS_SWEEP_REFERENCE_FACTOR * the reference's error */
    TS_SWEEP_REPEAT = 4,    /* the same number of steps as the level before: a copy of that
                               point, not run again (ts_sweep_against) */
    TS_SWEEP_EXCLUSIONS
};

/* A point is measured against the reference only when its error is at
 * least this many times the reference's estimated error. */
#define TS_SWEEP_REFERENCE_FACTOR 10.0

/* The solution a sweep measures against: the system's exact solution, or a
 * computed one (tstep/reference.h: rk4 at h, h/2, h/4, the finest taken,
 * its error estimated by Richardson; h halved until the estimate holds). */
typedef struct {
    int computed;      /* 0: exact solution; 1: computed */
    ts_error_norm norm; /* the components errors are measured over */
    size_t m;          /* length of Y */
    size_t n;          /* positions: the first n entries of Y */
    double weight;     /* the norm's velocity weight (ts_error_norm_weight) */
    double rate;       /* |lambda| of the stiffest mode (TS_NORM_SCALED), else 0 */
    double t_end;
    double *y;         /* Y(t_end), m doubles (owned) */
    double scale;      /* the solution's size: max(|Y(0)|, |Y(t_end)|) in the norm */
    double error;      /* estimated error of y in the norm; 0 for the exact solution */
    /* computed only: */
    const ts_stepper_type *method;
    double dt;         /* the finest run's step */
    long steps;        /* the finest run's steps */
    int halvings;      /* times the first step was halved before the estimate held */
    double ratio;      /* Richardson ratio d1/d2 (2^p in the asymptotic range) */
    int verdict;       /* ts_reference_verdict: round-off or asymptotic */
} ts_sweep_reference;

/* How the reference is chosen: the exact solution when the system has one
 * (unless computed is set), else computed with `method` (NULL: rk4) from a
 * first coarse step dt (the finest run at dt/4), halved up to max_halvings
 * times while the runs fail, the estimate is unresolved, or the estimated
 * error is above target * scale.  The coarsest step that passes is kept
 * (a finer one only adds rounding). */
typedef struct {
    int computed;
    ts_error_norm norm; /* default TS_NORM_SCALED */
    const ts_stepper_type *method;
    double dt;
    double target;    /* relative to the solution's size; default inf */
    int max_halvings; /* default 10 */
} ts_sweep_reference_options;

ts_sweep_reference_options ts_default_sweep_reference_options(void);

/* The options of a sweep down to dt_min over t_end: first step dt_min and
 * target (TS_ROUNDOFF_FACTOR / TS_SWEEP_REFERENCE_FACTOR) (t_end / dt_min)
 * eps, a tenth of the smallest round-off level of the sweep's runs, so that
 * a point the round-off rule keeps is above the reference exclusion too. */
ts_sweep_reference_options ts_sweep_reference_options_for(double dt_min, double t_end);

/* Fill ref (release with ts_sweep_reference_release).  Fails with
 * TS_ERR_REJECTED when no step gave a trusted estimate. */
int ts_sweep_reference_compute(const ts_system_type *stype, const ts_params *params,
                               double t_end, const ts_sweep_reference_options *opt,
                               ts_sweep_reference *ref);
void ts_sweep_reference_release(ts_sweep_reference *ref);

typedef struct {
    double dt;
    long steps;
    double error;   /* max-norm error at t_end against the reference (ref->norm) */
    int status;     /* TS_OK, or why the run failed */
    int excluded;   /* TS_SWEEP_USED, _ROUNDOFF, _UNSTABLE, _REFERENCE or _REPEAT */
    ts_step_stats stats; /* the stepper's statistics over the run */
    double seconds; /* wall-clock time of the run (stepping only; mean of repeats) */
    double tol;     /* tolerance mode: rtol = atol of the run (dt, steps: the mean step and
                       the accepted steps error control took); 0 at a fixed step */
} ts_sweep_point;

/* A sweep: the stepper `type` (solver options opt, NULL: defaults) on a
 * fresh system from stype and params (NULL: defaults) for each run, at
 * `levels` values spaced geometrically from the largest down to the
 * smallest: step sizes dt_max .. dt_min, or in tolerance mode
 * (ts_sweep_tolerances) tolerances tol_max .. tol_min.  One level: the
 * largest alone. */
typedef struct {
    const ts_system_type *stype;
    const ts_params *params;
    const ts_stepper_type *type;
    const ts_solver_options *opt;
    double dt_min, dt_max;
    double tol_min, tol_max;
    int levels;
} ts_sweep_request;

/* Run the sweep rq to ref->t_end at its step sizes and measure each run
 * against ref into points[0 .. levels).  A level whose step size rounds to
 * the number of steps of the level before (ts_steps_for) is not run again:
 * its point is a copy of that one marked TS_SWEEP_REPEAT, out of the order
 * fit, so every number of steps weighs once. */
int ts_sweep_against(const ts_sweep_request *rq, const ts_sweep_reference *ref,
                     ts_sweep_point *points);

/* Tolerance mode, for steppers with an error estimate (TS_ADAPTIVE): the
 * sweep's tolerances rtol = atol, each run as one output interval
 * [0, ref->t_end] under error control (tstep/run.h: ts_run_options.rtol),
 * measured against ref like a fixed-step point.  TS_ERR_UNSUPPORTED for a
 * stepper without an estimate. */
int ts_sweep_tolerances(const ts_sweep_request *rq, const ts_sweep_reference *ref,
                        ts_sweep_point *points);

/* Least-squares slope of log error against log tolerance over the points
 * not excluded (tolerance proportionality: 1 when the error follows the
 * tolerance); NAN with fewer than two. */
double ts_tolerance_slope(const ts_sweep_point *points, int n, int *used);

/* ts_sweep_against over [0, t_end] against the default reference: the
 * exact solution, or one computed from rq->dt_min / 4. */
int ts_sweep(const ts_sweep_request *rq, double t_end, ts_sweep_point *points);

/* Default ranges, from the rate |lambda| of the system's stiffest mode
 * (tstep/stability.h, at the initial state):
 *   t_end  = min(1, TS_SWEEP_RATE_TIMES / |lambda|)   (1 when lambda = 0)
 *   dt_max = min(t_end / 10, c_p / |lambda|),  dt_min = dt_max / R_p,
 * with c_p = 0.1, 0.2, 0.35, 0.5, 1 for nominal order p = 1, 2, 3, 4, >= 5
 * and R_p = 16 (TS_SWEEP_RANGE_RATIO) for p <= 4, 4 (TS_SWEEP_RANGE_RATIO_5)
 * for p >= 5.  Why: a step must resolve the stiffest mode for the error to
 * be in its asymptotic range (explicit steppers grow it otherwise), and a
 * stepper of higher order reaches rounding (and the reference's own error)
 * at larger steps, so its range starts higher; a fifth-order method's
 * error falls by 16^5 = 1e6 over a range of 16, from about 1e-11 into
 * rounding, so its range is 4 (1e3) starting at |z| = 1.  docs/sweep.md
 * has the orders measured on string, hair, cloth and mesh cloth. */
#define TS_SWEEP_RATE_TIMES 30.0
#define TS_SWEEP_RANGE_RATIO_5 4.0
#define TS_SWEEP_RANGE_RATIO 16.0
int ts_sweep_stiffness(const ts_system_type *stype, const ts_params *params, double *rate);
double ts_sweep_default_t_end(double rate);
void ts_sweep_default_dt(double rate, double t_end, int order, double *dt_min, double *dt_max);

/* Least-squares slope of log(error) against log(dt) over the points not
 * excluded; NAN when fewer than two remain.  *used gets their count. */
double ts_observed_order(const ts_sweep_point *points, int n, int *used);

/* --- the reliability of an error estimate (src/analysis/estimator.c) --------- */

/* One step of an adaptive stepper (TS_ADAPTIVE) at step dt from the
 * system's initial state: its embedded estimate and the true local error,
 * both in the RMS norm sqrt(1/m sum_i e_i^2) over Y = [x; v] (the
 * stepper's error norm with atol = 1, rtol = 0); the truth against the
 * exact solution at dt, or rk4 in substeps refined until it settles.
 * status: the step's (estimated and truth NAN when it failed). */
typedef struct {
    double dt, estimated, truth;
    int status;
} ts_estimator_point;

/* At the sweep's step sizes (rq->levels from rq->dt_max down to
 * rq->dt_min; the tolerances are not used), into points[0 .. levels).
 * TS_ERR_UNSUPPORTED for a stepper without an estimate. */
int ts_estimator_sweep(const ts_sweep_request *rq, ts_estimator_point *points);
/* The least-squares slope of log(estimated) (truth 0) or log(true error)
 * (truth 1) against log(dt) over the points with a positive finite value:
 * the estimator's order and the local error's; NAN with fewer than two. */
double ts_estimator_slope(const ts_estimator_point *points, int n, int truth);

#endif

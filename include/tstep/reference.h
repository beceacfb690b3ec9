/* tstep/reference.h - reference solutions for systems without an exact one.
 *
 * Errors are weighted max norms, absolute, over the whole state Y = [x; v]:
 * max(|x|, w |v|), w = 1/|lambda| (TS_NORM_SCALED), 1 (TS_NORM_STATE) or 0
 * (TS_NORM_POSITIONS; for a first-order system x is the whole state).
 *
 * A reference is the system integrated by a high-order stepper (rk4 unless
 * told otherwise, order p) at three steps h, h/2 and h/4, each on a fresh
 * system from the same type and parameters, side by side.  The finest run
 * is the reference; the two differences
 *
 *     d1 = |Y_h - Y_{h/2}|,   d2 = |Y_{h/2} - Y_{h/4}|
 *
 * (in the chosen norm) say how good it is.  In the
 * asymptotic range d1 / d2 = 2^p, and Richardson's argument gives the error
 * of the finest run as d2 / (2^p - 1).  The estimate is trusted
 * ("asymptotic") when 2^p / 2 <= d1 / d2 <= 2^p * 2; it is then
 * d2 / (min(d1/d2, 2^p) - 1).  When d2 is at the round-off level of the
 * finest run (TS_ROUNDOFF_FACTOR * steps * eps * scale, scale = the larger
 * norm of that run's initial and current state) the runs agree to
 * rounding ("round-off") and the estimate is d2 itself.  Otherwise the
 * step is too large for the estimate to mean anything ("unresolved").
 *
 * Richardson, Phil. Trans. R. Soc. A 210 (1911); Hairer, Norsett & Wanner,
 * Solving ODEs I, II.4 (error estimation by extrapolation). */
#ifndef TSTEP_REFERENCE_H
#define TSTEP_REFERENCE_H

#include "tstep/stepper.h"

/* Rounding over N steps is counted as up to TS_ROUNDOFF_FACTOR * N * eps
 * times the solution's size (the sweep's round-off rule uses the same). */
#define TS_ROUNDOFF_FACTOR 1.0

/* Which components an error norm covers, and how.  Every norm is
 *     |Y|_w = max(|x|_inf, w |v|_inf)
 * with a weight w on the velocities (a first-order system has no v). */
typedef enum {
    TS_NORM_SCALED,    /* the whole state, w = 1/|lambda|: v in units of
                        * length per stiffest time scale (sweep's default) */
    TS_NORM_STATE,     /* the whole state, w = 1 (mixes units) */
    TS_NORM_POSITIONS  /* x only, w = 0 */
} ts_error_norm;

/* The velocity weight w of a norm; rate = |lambda|, the rate of the
 * system's stiffest mode (TS_NORM_SCALED: 1/rate, or 1 when rate is 0). */
double ts_error_norm_weight(ts_error_norm norm, double rate);
/* "scaled", "state" or "positions" */
const char *ts_error_norm_name(ts_error_norm norm);
/* |a - b|_w over Y = [x; v] of length m whose first n entries are x (b
 * NULL: |a|_w). */
double ts_error_dist(size_t n, size_t m, double w, const double *a, const double *b);

typedef enum {
    TS_REF_ROUNDOFF,   /* the runs agree to rounding: error about d2 */
    TS_REF_ASYMPTOTIC, /* d1/d2 within a factor 2 of 2^p: error d2 / (2^p - 1) */
    TS_REF_UNRESOLVED  /* neither: h is too large for an estimate */
} ts_reference_verdict;

typedef struct {
    double error;    /* estimated max-norm error of the finest run */
    double d1, d2;   /* |Y_h - Y_h/2|_inf, |Y_h/2 - Y_h/4|_inf */
    double ratio;    /* d1 / d2 (NAN when both are 0) */
    double roundoff; /* the finest run's round-off level */
    double scale;    /* max(|Y(0)|, |Y(t)|) of the finest run, same norm */
    ts_reference_verdict verdict;
} ts_reference_estimate;

typedef struct ts_reference ts_reference;

/* Three runs of `method` (NULL: rk4) at steps h, h/2, h/4 on fresh systems
 * from stype and params, at t = 0.  opt: solver options for an implicit
 * method (NULL: defaults).  ts_reference_free accepts NULL. */
int ts_reference_new(const ts_system_type *stype, const ts_params *params,
                     const ts_stepper_type *method, const ts_solver_options *opt, double h,
                     ts_reference **out);
void ts_reference_free(ts_reference *ref);

/* Advance to t = n h (the runs take n, 2n and 4n steps in all); n must not
 * be below the steps already taken.  A failed step or a state beyond
 * TS_DIVERGENCE_FACTOR times the start's returns that status. */
int ts_reference_advance(ts_reference *ref, long n);

/* The finest run's state Y (ts_system_ydim long) at the current time. */
const double *ts_reference_state(const ts_reference *ref);
/* The coarse run's step h. */
double ts_reference_step(const ts_reference *ref);
const ts_stepper_type *ts_reference_method(const ts_reference *ref);

/* The Richardson estimate at the current time, in the norm of velocity
 * weight w (ts_error_norm_weight). */
void ts_reference_estimate_error(const ts_reference *ref, double w,
                                 ts_reference_estimate *est);

/* "round-off", "asymptotic", "unresolved" */
const char *ts_reference_verdict_name(ts_reference_verdict v);

#endif

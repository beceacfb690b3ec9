/* tstep/stability.h - linear stability of steppers, measured and predicted.
 *
 * Three questions, each answered by running the steppers themselves (never
 * from a table of known formulas), so a stepper a student adds is measured
 * exactly like the built-in ones, implicit ones included:
 *
 * 1. The one-step amplification factor R(z).  On the complex test equation
 *    x' = lambda x (test1d with k = -Re lambda, omega = Im lambda), one step
 *    of size h from x0 = 1 gives x1 = R(z), z = h lambda.  ts_amplification
 *    creates test1d with k = -Re z, omega = Im z and takes one step of size 1.
 *    Dahlquist's convention here is z = h lambda, so the decaying test
 *    equation x' = -k x sits on the negative real axis, z = -hk; the
 *    command line's amplification curve is written against hk >= 0.
 *
 * 2. The stability interval along a ray.  For a direction d (|d| = 1),
 *    r(d) = sup { r : |R(s d)| <= 1 + tol for 0 < s <= r } (tol below).
 *    Forward Euler: r(-1) = 2, r(i) = 0; rk4: r(-1) = 2.7853, r(i) = 2 sqrt 2;
 *    backward Euler: r = inf on both.  Hairer & Wanner, Solving Ordinary
 *    Differential Equations II, IV.2 (stability functions and domains).
 *
 * 3. The critical step of a system, predicted and measured.
 *    Predicted: the stiffest mode by power iteration on Jacobian products
 *    (ts_stiffest_mode: order 1, the largest |eigenvalue| lambda of
 *    M^-1 df/dx; order 2, the largest |eigenvalue| mu of M^-1 df/dx, with
 *    the damping c = <u, M^-1 df/dv u>_M / <u, u>_M along its eigenvector u,
 *    giving the first-order pair lambda^2 - c lambda - mu = 0, e.g.
 *    lambda = +-i sqrt(-mu) for an undamped spring), then
 *    dt_pred = r(lambda / |lambda|) / |lambda|.
 *    Measured: ts_stability_measure, the largest dt for which a run to T is
 *    "bounded" (defined at ts_stability_bounded), by bracketing and
 *    bisection.  Golub & Van Loan, Matrix Computations, 7.3 (power method).
 *
 * Depends on the stepper and system interfaces and on test1d. */
#ifndef TSTEP_STABILITY_H
#define TSTEP_STABILITY_H

#include "tstep/stepper.h"

/* A step "does not grow" when |R| <= 1 + tol: tol covers round-off for an
 * explicit stepper and the solver tolerance for an implicit one. */
#define TS_STABILITY_GROWTH_TOL 1e-14
#define TS_STABILITY_GROWTH_TOL_IMPLICIT 1e-9
/* The ray scan of ts_stability_interval starts at s = TS_STABILITY_S_MIN
 * (a stepper already growing there has interval 0) and gives up at
 * s = TS_STABILITY_S_MAX (interval inf).  Growth that starts only at order
 * s^6 or higher is seen from about s = 0.005 on (tol 1e-14). */
#define TS_STABILITY_S_MIN 1e-3
#define TS_STABILITY_S_MAX 1000.0

/* One step of size 1 on x' = z x (test1d, k = -re, omega = im, x0 = 1):
 * R(z) = x1 into *r_re, *r_im.  opt may be NULL (defaults).  Returns the
 * step's status (e.g. TS_ERR_LINEAR where an implicit equation is singular). */
int ts_amplification(const ts_stepper_type *type, const ts_solver_options *opt, double re,
                     double im, double *r_re, double *r_im);

/* The stability interval r along the direction (dir_re, dir_im) (normalized
 * here): 0 if |R| grows already at s = TS_STABILITY_S_MIN, INFINITY if it
 * never grows up to TS_STABILITY_S_MAX, else the first growth point found
 * on a 1 % geometric scan, refined by bisection to 1e-12 relative.  One
 * test1d system and one stepper for the whole ray, z = s d with step s.
 * A step that fails (solver) counts as growth. */
int ts_stability_interval(const ts_stepper_type *type, const ts_solver_options *opt,
                          double dir_re, double dir_im, double *r);

/* The stiffest mode of a system, linearized at its stored state, t = 0. */
typedef struct {
    double re, im;    /* first-order eigenvalue lambda of largest modulus, im >= 0 */
    double mu_re, mu_im; /* order 2: eigenvalue of M^-1 df/dx; order 1: = lambda */
    double damping;   /* order 2: <u, M^-1 df/dv u>_M / <u, u>_M; order 1: 0 */
    int iterations;   /* power iterations (two products each) */
    double residual;  /* relative residual of the eigen-relation at the end */
    int converged;    /* residual <= tolerance within the iteration cap */
    int finite_differences; /* products came from differences of forces */
} ts_stiff_mode;

#define TS_POWER_TOL 1e-8
#define TS_POWER_MAX_ITER 5000

/* Power iteration on A = M^-1 df/dx (pinned degrees of freedom filtered),
 * two products per iteration, M-weighted inner products.  Stops when the
 * real eigen-relation A u = mu u holds to TS_POWER_TOL (relative), or the
 * two-step relation A^2 u = p A u + q u does (a complex pair, or two
 * eigenvalues of equal modulus: mu = roots of mu^2 - p mu - q), or after
 * TS_POWER_MAX_ITER iterations with the best estimate (for a symmetric
 * Jacobian the Rayleigh quotient, accurate even for clustered spectra).
 * Uses the system's Jacobian products, or forward differences of forces
 * when it has none.  Deterministic start vector. */
int ts_stiffest_mode(ts_system *sys, ts_stiff_mode *mode);
/* The same, and the mode's vector (n doubles, |vector|_M = 1) when vector
 * is not NULL. */
int ts_stiffest_mode_vector(ts_system *sys, ts_stiff_mode *mode, double *vector);

/* --- measured critical step ------------------------------------------------ */

typedef struct {
    double t_end;   /* T: every run ends exactly here */
    double bound;   /* C in the bounded test (default 10) */
    double dt_min;  /* smallest dt tried (default T * 1e-6); below: dt_crit 0 */
    double dt_max;  /* largest dt tried (default T, one step); bounded there: inf */
    double rel_tol; /* bisection stops when hi / lo <= 1 + rel_tol (default 0.005) */
    double recheck; /* run 0.9 dt_crit to recheck * T to flag T-limited results (4) */
    double rate;    /* |lambda| of the stiffest mode, for the velocity scale (0: none) */
    /* optional: each run starts from x(0) + delta, delta = seed_size
     * max(1, |x(0)|_inf) seed / |seed|_inf (pinned DOFs untouched).  With
     * seed the stiffest mode's vector, the mode the prediction is about is
     * present from the start (a state without it shows an instability only
     * once round-off has grown into it), and, where the system defines an
     * energy, the energy test of ts_stability_bounded applies. */
    const double *seed;
    double seed_size; /* default 1e-3 */
    /* optional: called before each run (for a progress line) */
    void (*progress)(void *ctx, int run, double dt);
    void *progress_ctx;
} ts_stability_options;

/* t_end 0 (the caller must set it), bound 10, dt_min 0 and dt_max 0
 * (meaning T * 1e-6 and T), rel_tol 0.005, recheck 4, rate 0. */
ts_stability_options ts_default_stability_options(void);

/* How a measurement ended. */
typedef enum {
    TS_CRIT_FOUND,     /* bracketed and bisected */
    TS_CRIT_INF,       /* bounded at every dt tried, up to dt_max */
    TS_CRIT_BELOW_MIN, /* unbounded even at dt_min: dt_crit reported as 0 */
    TS_CRIT_T_LIMITED  /* found, but a run at dt_crit to recheck * T is not
                          bounded: the limit moves with T (slow growth, no
                          true stable interval, e.g. forward Euler on an
                          undamped oscillator) */
} ts_crit_kind;

typedef struct {
    double dt_crit;   /* largest dt found bounded; INFINITY or 0 per kind */
    double dt_fail;   /* smallest dt found unbounded (the bracket's other end;
                         NAN for inf) */
    ts_crit_kind kind;
    int runs;         /* runs made */
    long steps;       /* steps of the run at dt_crit */
    int fail_status;  /* status of the run at dt_fail: TS_ERR_DIVERGED when
                         it exceeded the bound, or the stepper's failure */
} ts_stability_result;

/* One run of `type` on a fresh system from (stype, params) with steps of
 * exactly dt, the last one shortened to land on T: N = ceil(T/dt) steps
 * (a remainder below 1e-9 dt is dropped).  Bounded means: every step
 * succeeds and, after every step,
 *     |x|_inf <= C * Sx   and (order 2)   |v|_inf <= C * Sv,
 *   Sx = max(|x(0)|_inf, max over the step times t_n of |x_exact(t_n)|_inf),
 *   Sv = max(|v(0)|_inf, max of |v_exact(t_n)|_inf, rate * Sx),
 * the exact terms when the system has an exact solution, rate = opt->rate
 * (the stiffest mode's |lambda|: a velocity that mode reaches at amplitude
 * Sx), and Sx or Sv taken as 1 where they come out 0; and, when the run is
 * seeded (opt->seed) and the system defines an energy E,
 *     E(t_n) <= E(0) + C * S,   S = E_seed + E_mode,
 *   E(0) the seeded initial state's energy; along the seed delta, with
 *   E(x0 + s delta) ~ E(x0) + d1 s + d2 s^2 (from E at s = -1, 0, 1),
 *   E_seed = |d2|, the energy the seed adds (k delta^2 / 2 on test1d,
 *   delta^T (-df/dx) delta / 2 on a spring system), and
 *   E_mode = d1^2 / (4 |d2|),
 *   the energy the initial state already holds in that mode (what E would
 *   release relaxing along it: k x0^2 / 2 on test1d, 0 for springs at rest),
 *   plus the same along v for order 2 (m v0^2 / 2 on the oscillator).
 *   For a linear system S is the mode's energy at the start, and the test
 *   allows its energy to grow by about 1 + C.
 * C = opt->bound.  The energy test is what catches a mode that grows and then
 * saturates: on the string the stiff longitudinal mode, past the limit,
 * grows until its amplitude nears the spring rest length and stops there,
 * far inside the state bounds, but with its energy up a hundredfold and
 * more.  A passive system cannot gain energy; energy fed in by forcing
 * (wind, gusts) or by a projection (collisions) counts as growth, and a
 * stepper that adds energy without blowing up (backward-euler-linear's
 * linearized step at large dt on the string) is not bounded by this test.
 * *bounded gets 1 or 0, *status the failing status (TS_ERR_DIVERGED for
 * exceeding a bound) and *steps the steps N.  Returns nonzero only when
 * the run could not be set up (e.g. out of memory, bad parameters). */
int ts_stability_bounded(const ts_system_type *stype, const ts_params *params,
                         const ts_stepper_type *type, const ts_solver_options *sopt,
                         const ts_stability_options *opt, double t_end, double dt,
                         int *bounded, int *status, long *steps);

/* The critical step: start at dt_start (clamped to [dt_min, dt_max]; e.g.
 * the prediction), double while bounded (up to dt_max, then inf) or halve
 * while not (down to dt_min, then 0), then bisect geometrically until
 * hi / lo <= 1 + rel_tol and report lo; finally run 0.9 lo to recheck * T
 * to flag T-limited results (a true limit holds for longer runs a little
 * below it).  Assumes the bounded dt form one interval.  dt_start NAN: T/1000. */
int ts_stability_measure(const ts_system_type *stype, const ts_params *params,
                         const ts_stepper_type *type, const ts_solver_options *sopt,
                         const ts_stability_options *opt, double dt_start,
                         ts_stability_result *res);

/* dt_pred = r / |lambda| for a stepper with interval r along lambda's
 * direction (INFINITY when |lambda| = 0 or r = inf). */
double ts_stability_predict(const ts_stiff_mode *mode, double r);

#endif

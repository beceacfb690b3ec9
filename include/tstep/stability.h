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
 * 3. The critical step of a system, predicted and measured (definitions in
 *    docs/stability.md).
 *    Predicted: over the whole spectrum of the linearization at a state
 *    (tstep/spectrum.h: LAPACK dense, ARPACK for large systems),
 *    dt_pred = min over the modes of r(lambda) / |lambda| (ts_stability_binding),
 *    r along lambda's direction on the scalar test equation, or on the
 *    second-order one x'' = -w^2 x - 2 zeta w x' for a partitioned stepper
 *    (ts_stability_radius).  The older single-mode estimate by power
 *    iteration (ts_stiffest_mode; Golub & Van Loan, Matrix Computations, 7.3)
 *    remains for callers that want only the stiffest mode.
 *    Measured: ts_stability_measure, the largest dt for which a seeded
 *    perturbation does not grow over T ("bounded", ts_stability_bounded), by
 *    bracketing and bisection; ts_stability_study does both as the command.
 *
 * Depends on the stepper and system interfaces and on test1d. */
#ifndef TSTEP_STABILITY_H
#define TSTEP_STABILITY_H

#include "tstep/spectrum.h"
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

/* A stepper on the test equation of a mode: the stepper, its solver
 * options (NULL: defaults), and which test equation it is judged on, the
 * scalar one (second_order 0) or the second-order one (second_order 1;
 * ts_stability_second_order says which for a system).  The functions that
 * take it answer for the mode of eigenvalue lambda = re + i im. */
typedef struct {
    const ts_stepper_type *type;
    const ts_solver_options *opt;
    int second_order;
} ts_mode_test;

/* The stability radius along lambda's direction, for a stepper judged on
 * the scalar test equation (second_order 0: ts_stability_interval along
 * lambda / |lambda|) or on the second-order test equation (second_order 1):
 *     x'' = -w^2 x - 2 zeta w x',   w = |lambda|, zeta = -Re lambda / |lambda|
 * (the first-order pair lambda, conj lambda of one mode), whose one-step map
 * is the 2x2 matrix found by running the stepper two steps of size h from
 * (x, v) = (1, 0) and (0, 1); r is then the first hw where its spectral
 * radius exceeds 1 + tol, found on the same scan.  Either way dt = r / |lambda|.
 * A real lambda < 0 gives zeta = 1 (the critically damped oscillator).
 * A partitioned stepper (TS_PARTITIONED: symplectic Euler, Verlet) on a
 * second-order system must be judged on the second-order equation: on the
 * scalar one it degenerates into the underlying one-stage method. */
int ts_stability_radius(const ts_mode_test *test, double re, double im, double *r);
/* *memoryless = 1 when two steps in a row of `type` equal its one-step map
 * from a fresh start applied twice (on x'' = -x - 0.6 x', h = 0.5; on x' =
 * (-0.3 + i) x when the stepper refuses second-order systems) and it is not
 * flagged TS_MULTISTEP: it carries no state between steps that the map does
 * not see.  Velocity Verlet's reused force with velocity-dependent forces,
 * or a multistep history, makes it 0. */
int ts_stepper_memoryless(const ts_stepper_type *type, const ts_solver_options *opt,
                          int *memoryless);
/* 1 when `type` is judged on the second-order test equation on `sys`
 * (partitioned and sys of order 2; sys NULL: partitioned). */
int ts_stability_second_order(const ts_stepper_type *type, const ts_system *sys);
/* The one-step map of x'' = -x - 2 zeta x' with step hw (column-major
 * [x1 from (1,0), v1 from (1,0), x1 from (0,1), v1 from (0,1)]) and its
 * eigenvalue of largest modulus (im >= 0). */
int ts_oscillator_map(const ts_stepper_type *type, const ts_solver_options *opt, double hw,
                      double zeta, double map[4]);
int ts_oscillator_amplification(const ts_stepper_type *type, const ts_solver_options *opt,
                                double hw, double zeta, double *r_re, double *r_im);
/* The amplification of a mode with eigenvalue z = h lambda: R(z) on the
 * scalar equation, or the map's dominant eigenvalue at hw = |z|,
 * zeta = -Re z / |z| on the second-order one. */
int ts_mode_amplification(const ts_mode_test *test, double re, double im, double *r_re,
                          double *r_im);

/* The map a run iterates.  A stepper that carries state between steps
 * (ts_stepper_memoryless 0: Verlet's kept force with damping, BDF2's
 * history) applies, after its start, one linear map to the state and what it
 * keeps (Verlet on x'' = -w^2 x - 2 zeta w x': 3 x 3 in (x, v, a); BDF2 on
 * y' = lambda y: the 2 x 2 companion matrix of its recurrence).  Its
 * eigenvalues are found from a short run on the test equation at z = h
 * lambda (scalar, or the second-order one at hw = |z|, zeta = -Re z / |z|)
 * by Prony's method: the smallest d whose recurrence
 * y_{n+d} + c_{d-1} y_{n+d-1} + ... + c_0 y_n = 0 fits the run's observed
 * states to round-off (1e-9 relative; 1e-6 for implicit steppers), and its
 * roots.  rho is their largest modulus; a run that fails or overflows gives
 * degree 0 and rho INFINITY. */
#define TS_RUN_MAP_MAX 6
#define TS_RUN_MAP_GROWTH_TOL 1e-13 /* explicit steppers: growth is rho > 1 + this */
typedef struct {
    int degree;                                /* eigenvalues found (d) */
    double rho;                                /* their largest modulus */
    double re[TS_RUN_MAP_MAX], im[TS_RUN_MAP_MAX];
} ts_run_map;
int ts_mode_run_map(const ts_mode_test *test, double re, double im, ts_run_map *m);

/* The growth per step the prediction judges by: for z = h lambda, |R(z)|
 * (scalar) or the spectral radius of the one-step map at hw = |z|,
 * zeta = -Re z / |z| (second_order), or, for a stepper that carries state
 * between steps (ts_stepper_memoryless 0), the spectral radius of the map
 * its runs iterate (ts_mode_run_map).  A failed step gives INFINITY.
 * ts_oscillator_growth: the same at (hw, zeta) directly. */
int ts_mode_growth(const ts_mode_test *test, double re, double im, double *rho);
int ts_oscillator_growth(const ts_stepper_type *type, const ts_solver_options *opt, double hw,
                         double zeta, double *rho);

/* --- the binding mode: the prediction over the whole spectrum -------------- */

/* Modes with |lambda| <= TS_RIGID_CUT lambda_max are taken as rigid (zero
 * modes, which round-off moves by about sqrt(eps) |A|): they are left out.
 * |Re lambda| <= TS_REAL_ROUNDOFF lambda_max is taken as 0 (round-off of an
 * undamped mode). */
#define TS_RIGID_CUT 1e-6
#define TS_REAL_ROUNDOFF 1e-12

#define TS_ZETA_RANGES 4

typedef struct {
    double dt_pred;   /* min over the modes of r / |lambda| (INFINITY: no limit) */
    size_t mode;      /* index of the binding mode in the spectrum ((size_t)-1: none) */
    double re, im;    /* its eigenvalue (im >= 0) */
    double r;         /* its radius (ts_stability_radius; overdamped: in h w) */
    /* the mode as the second-order test equation takes it, x'' = -w^2 x -
     * 2 zeta w x': w = |lambda| and zeta = -Re lambda / |lambda|, unless
     * overdamped: a real eigenvalue of a second-order system (dense
     * spectrum) taken as the overdamped oscillator it is a root of, w^2
     * the Rayleigh quotient of its shape with M^-1 df/dx and zeta > 1 from
     * lambda^2 + 2 zeta w lambda + w^2 = 0; dt_pred is then r / w */
    double w, zeta;
    int overdamped;
    int stiffest;     /* the binding mode has the largest |lambda| */
    int second_order; /* judged on the second-order test equation */
    int radii;        /* radii computed exactly */
    int unstable;     /* modes left out with Re lambda > 0 (beyond round-off): the state
                         itself is unstable along them (e.g. compressed springs buckling),
                         the exact solution grows there too, and no step makes them decay */
    int carries_state; /* the stepper carries state between steps (a reused force
                          that depends on an earlier step, a multistep history): its
                          radius is that of the one-step map from a fresh start, and
                          dt_pred only approximates the limit of a long run */
    /* arnoldi only: a mode below the spectrum's lambda_floor can bind only if
     * its damping ratio zeta = -Re lambda / |lambda| lies in one of these
     * ranges [zeta_lo, zeta_hi] (found on a 0.01 grid, widened by a step);
     * none: no unseen mode can bind */
    int zeta_ranges;
    double zeta_lo[TS_ZETA_RANGES], zeta_hi[TS_ZETA_RANGES];
} ts_binding;

/* The growth per step (ts_mode_growth) and the amplification
 * (ts_mode_amplification) of a binding mode at step h: at h lambda, or on
 * its own oscillator at (h w, zeta) when overdamped. */
int ts_binding_growth(const ts_mode_test *test, const ts_binding *b, double h, double *rho);
int ts_binding_amplification(const ts_mode_test *test, const ts_binding *b, double h,
                             double *r_re, double *r_im);

/* dt_pred = min over the modes (im >= 0, not rigid, Re lambda <= 0) of
 * r(lambda) / |lambda|.
 * The radius is computed exactly for four candidates (the stiffest mode, the
 * mode with forward Euler's smallest 2|Re lambda| / |lambda|^2, the largest
 * |Im lambda|, the largest -Re lambda); every other mode is then run one
 * step at s = dt_pred |lambda| and, if it grows there, its radius is
 * computed and dt_pred lowered.  Exact when the stable set along each ray is
 * an interval starting at 0 (as the radius's definition assumes). */
int ts_stability_binding(const ts_mode_test *test, const ts_spectrum *sp, ts_binding *b);

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

/* What a measurement runs: a stepper (its solver options sopt, NULL:
 * defaults) on a system, a fresh one made from stype and params (NULL:
 * defaults) for every run. */
typedef struct {
    const ts_system_type *stype;
    const ts_params *params;
    const ts_stepper_type *type;
    const ts_solver_options *sopt;
} ts_stability_problem;

typedef struct {
    double t_end;   /* T: every run ends exactly here (at t0 + T) */
    double bound;   /* C: the perturbation may grow at most C-fold (default 1e4) */
    double dt_min;  /* smallest dt tried (default T * 1e-6); below: dt_crit 0 */
    double dt_max;  /* largest dt tried (default T, one step); bounded there: inf */
    double rel_tol; /* bisection stops when hi / lo <= 1 + rel_tol (default 0.005) */
    double recheck; /* run to recheck * T at dt_crit (on the system itself at 0.9
                       dt_crit) to flag T-limited results (2; ts_stability_study
                       makes that run itself, only where needed) */
    double first_step; /* the bracket's first factor from dt_start (default 2); squared
                          after each try, up to 2 (from a prediction: just under
                          1 + rel_tol, so a true prediction closes the search) */
    double growth_tol; /* the sustained-growth test's margin (0: 1 %; ts_stability_study
                          uses 0.1 % on the system itself, where T is short) */
    double rate;    /* w of the perturbation norm (the binding mode's |lambda|; 0: 1) */
    /* the seed: the perturbed run starts from (x0, v0) + a (seed, seed_v),
     * a = seed_size max(1, |x0|_inf) / |seed|_inf (pinned DOFs untouched;
     * on the linearization 2^20 times that: the run is linear in the seed,
     * and an implicit stepper's absolute Newton stop then lies far below it);
     * the binding mode's real vector, so the mode the prediction is about
     * is there from the first step.  NULL: a fixed pseudo-random direction. */
    const double *seed, *seed_v;
    double seed_size; /* default 1e-6 */
    /* optional start state (n entries each) and time; NULL: the system's initial state */
    const double *x0, *v0;
    double t0;
    /* 1: run on the linearization at the start state, M x'' = Kx x + Kv v
     * (the deviation is the perturbation; no base run), where the prediction
     * is made; 0: on the system itself (the state moves during T) */
    int linearized;
    /* optional: called before each run (for a progress line) */
    void (*progress)(void *ctx, int run, double dt);
    void *progress_ctx;
    /* linearized only, optional: grow_count vectors (2 n entries each, x
     * then v parts) spanning the invariant subspace of the state's own
     * growing modes (Re lambda > 0).  Every step the run's part in their
     * span (orthogonal, in the norm of |d|) is removed: the state's own
     * instability, which every run shows, is not the stepper's.  Exact for
     * a stepper whose map on a linear system is a function of its matrix
     * and that carries no state between steps (a stepper judged on the
     * scalar test equation, memoryless), which keeps the subspace and its
     * complement: the complement's part of the run is unchanged.  Vectors
     * that do not span grow_count dimensions (a repeated eigenvalue's
     * vector found twice) are not removed at all.  NULL: none. */
    const double *grow_basis;
    int grow_count;
} ts_stability_options;

/* windows of the sustained-growth test; cap on steps at dt_pred of the chosen T */
#define TS_STABILITY_WINDOWS 16
#define TS_STABILITY_MAX_STEPS 2e5
/* the sustained-growth test's default margin; on the system itself (runs of
 * 32 binding periods) ts_stability_study uses the finer one */
#define TS_STABILITY_GROWTH_WINDOW_TOL 0.01
#define TS_STABILITY_GROWTH_RUN_TOL 0.001
/* on the linearization, growth is judged from the first half's smallest
 * window, but not from below this fraction of |d(0)| (a decayed seed at an
 * implicit solver's tolerance is noise, not a mode) */
#define TS_STABILITY_TROUGH_FLOOR 1e-3

/* t_end 0 (the caller must set it), bound 1e4, dt_min 0 and dt_max 0
 * (meaning T * 1e-6 and T), rel_tol 0.005, recheck 2, rate 0, seed_size 1e-6,
 * no seed, the system's initial state at t0 = 0, linearized 1. */
ts_stability_options ts_default_stability_options(void);

/* How a measurement ended. */
typedef enum {
    TS_CRIT_FOUND,     /* bracketed and bisected */
    TS_CRIT_INF,       /* bounded at every dt tried, up to dt_max */
    TS_CRIT_BELOW_MIN, /* unbounded even at dt_min: dt_crit reported as 0 */
    TS_CRIT_T_LIMITED, /* found, but a run at dt_crit to recheck * T is not
                          bounded: the limit moves with T (slow growth, no
                          true stable interval, e.g. forward Euler on an
                          undamped oscillator); or, with a finite limit
                          predicted (dt_start), bounded up to dt_max where no
                          run above dt_start had as many steps as the growth
                          test's windows (T too short to show growth: dt_crit
                          inf is then no verdict); always when the prediction
                          is 0 (ts_stability_study) */
    TS_CRIT_FAILED     /* the study of this stepper stopped with an error
                          (the command keeps the other steppers' rows) */
} ts_crit_kind;

/* The verdict of one run of ts_stability_bounded. */
typedef struct {
    int bounded; /* 1: bounded; 0: not */
    int status;  /* why not: TS_ERR_DIVERGED for growth, or the failing step's status;
                    TS_OK when bounded */
    long steps;  /* the run's steps N */
} ts_stability_verdict;

typedef struct {
    double dt_crit;   /* largest dt found bounded; INFINITY or 0 per kind */
    double dt_fail;   /* smallest dt found unbounded (the bracket's other end;
                         INFINITY for inf) */
    ts_crit_kind kind;
    int runs;         /* runs made */
    long steps;       /* steps of the run at dt_crit */
    int fail_status;  /* status of the run at dt_fail: TS_ERR_DIVERGED when
                         it exceeded the bound, or the stepper's failure */
} ts_stability_result;

/* Whether the stepper is stable at step dt on the system of pb over T
 * (t_end), judged on two runs in lockstep with steps of exactly dt, the
 * last one shortened to land on t0 + T (N = ceil(T/dt) steps; a remainder
 * below 1e-9 dt is dropped): a base run from the start state Y0 and a
 * perturbed run from Y0 + a seed.  Their difference d(t) is the seed's
 * perturbation carried by the linearization along the base run; its size is
 *     |d| = sqrt(sum over free dofs of m_i (w^2 dx_i^2 + dv_i^2))
 * (order 1: sqrt(sum m_i dx_i^2)), w = opt->rate.  The run is bounded
 * unless
 *   - a step fails (solver) or the state is non-finite, or
 *   - |d(t_n)| > C |d(0)| at some step (C = opt->bound, default 1e4: blow-up,
 *     or a mode grown until it saturates), or
 *   - the growth is sustained: of TS_STABILITY_WINDOWS equal windows of the
 *     run, ln(window max of |d|) has a positive least-squares slope over the
 *     second half, and the last window's max is more than 1 + growth_tol
 *     times a reference: on the linearization the smallest window max of
 *     the first half, at least TS_STABILITY_TROUGH_FLOOR |d(0)| (a mode that
 *     starts small under a decaying seed, such as Verlet's parasitic root,
 *     counts once it grows), on the system
 *     itself the largest of the first half's and |d(0)|; unless the run's
 *     last TS_RECURRENCE_SAMPLES states of dt follow a linear recurrence
 *     (Prony's method on a few fixed functionals of them; src/analysis/
 *     recurrence.h) whose roots would grow |d| by at most 1 + growth_tol
 *     over the run: then the rise is a beat of a bounded orbit (a
 *     non-normal run map with its eigenvalues on the unit circle, e.g.
 *     symplectic Euler on x'' = -w^2 x just below h w = 2).
 * So a transient (a defective or non-normal mode's growth that then decays,
 * e.g. forward Euler on a critically damped oscillator below h = 2/w) is
 * not instability, while a mode growing by any steady factor is, once T is
 * long enough to show it (ts_stability_choose_t).
 * The verdict into *v.  Returns nonzero only when the run could not be set
 * up (e.g. out of memory, bad parameters, zero seed). */
int ts_stability_bounded(const ts_stability_problem *pb, const ts_stability_options *opt,
                         double t_end, double dt, ts_stability_verdict *v);

/* The critical step: start at dt_start (clamped to [dt_min, dt_max]; e.g.
 * the prediction), double while bounded (up to dt_max, then inf) or halve
 * while not (down to dt_min, then 0), then bisect geometrically until
 * hi / lo <= 1 + rel_tol and report lo; finally run lo (on the system
 * itself 0.9 lo) to recheck * T to flag T-limited results (a true limit
 * holds for longer runs at it, or a little below it on a moving state).  Assumes the bounded dt form one interval.  dt_start NAN: T/1000. */
int ts_stability_measure(const ts_stability_problem *pb, const ts_stability_options *opt,
                         double dt_start, ts_stability_result *res);

/* T for the runs of a stepper with binding mode b: the larger of 32
 * periods of the mode (64 pi / |lambda|) and 4 / g, g the mode's growth rate
 * ln|R(h lambda)| / h at h = 1.05 dt_pred (so 5 % past the limit it grows
 * e^4-fold over T), capped at TS_STABILITY_MAX_STEPS steps of dt_pred;
 * 1000 / lambda_max without a finite nonzero prediction. */
double ts_stability_choose_t(const ts_stepper_type *type, const ts_solver_options *opt,
                             const ts_binding *b, double lambda_max);

/* Prediction and measurement of one stepper, as `tstep stability` makes
 * them: the binding mode over the spectrum sp (computed at `state`, the
 * system's state at time opt->t0), then ts_stability_measure from `state`
 * (opt->x0 and v0 are set from it), seeded with the binding mode's real
 * vector (x and v parts; the stiffest mode when none binds), rate = its
 * |lambda|, T = opt->t_end or ts_stability_choose_t when that is 0 (on the
 * system itself, opt->linearized 0, at most 32 periods of the binding mode,
 * with growth_tol TS_STABILITY_GROWTH_RUN_TOL unless set), the
 * search's bracket starting as [1 - q, 1 + q] dt_pred, q = 0.49 rel_tol, so
 * that a prediction that holds costs two runs (T / 1000 and factor 2
 * without a finite nonzero prediction); the verdict by one t-limited rule
 * (prediction 0, or a failed run to recheck * T at dt_crit, on the system
 * itself at 0.9 dt_crit, skipped on the linearization when the bracket holds
 * the prediction).  A stepper whose test
 * equation is refused (TS_ERR_UNSUPPORTED) gets no_prediction = 1, dt_pred
 * NAN, and is still measured.  On the linearization at a state with modes
 * that grow by themselves (Re lambda > 0), the runs of a memoryless stepper
 * judged on the scalar test equation leave those modes' span out
 * (grow_basis): the
 * bracket is then the other modes' limit, which dt_pred predicts. */
typedef struct {
    ts_binding binding;
    ts_stability_result result;
    double t_end;
    int no_prediction;
    /* vectors spanning the state's own growing modes that the runs left out
     * (ts_stability_options.grow_basis): on the linearization of a dense
     * spectrum with binding.unstable > 0, for a memoryless stepper judged
     * on the scalar test equation, when their vectors span as many
     * dimensions as the modes have; 0 when none were */
    int grow_removed;
} ts_stability_study_result;

int ts_stability_study(const ts_stability_problem *pb, const ts_stability_options *opt,
                       ts_system *state, const ts_spectrum *sp, ts_stability_study_result *out);

/* The prediction along a run, for a measurement on the system itself (the
 * state moves during T, so the limit the runs meet is that of the states
 * they pass through): from `state` (a system of pb's type) at time t0, a
 * run of the stepper of pb with steps of h (the last one shortened) to
 * t0 + k T / samples for k = 1..samples; at each, the spectrum (method) and
 * ts_stability_binding.  dt_pred_min and
 * t_min: the lowest prediction and where; binding: its binding mode
 * (re = 0: undamped, a stepper without a stable step on the imaginary axis
 * has none there); dt_pred_max the highest.  samples_done < samples when the
 * run failed or diverged on the way (the rest is not judged). */
typedef struct {
    double t0;            /* the start state's time */
    double h;             /* the run's step */
    double T;             /* its length */
    int samples;          /* predictions at t0 + k T / samples, k = 1..samples (>= 1) */
    ts_eig_method method; /* each one's spectrum */
} ts_stability_along_options;

typedef struct {
    double dt_pred_min, dt_pred_max, t_min;
    ts_binding binding;
    int samples_done;
} ts_stability_along;

int ts_stability_along_run(const ts_stability_problem *pb, const ts_system *state,
                           const ts_stability_along_options *ao, ts_stability_along *out);

/* dt_pred = r / |lambda| for a stepper with interval r along lambda's
 * direction (INFINITY when |lambda| = 0 or r = inf). */
double ts_stability_predict(const ts_stiff_mode *mode, double r);

#endif

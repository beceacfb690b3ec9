/* tstep/check.h - checking a system's Jacobian products against its forces.
 *
 * At `samples` random states near the system's stored state (x and v
 * perturbed, seeded so a run is reproducible) and random directions u, the
 * checker compares:
 *
 *   df/dx u  with  D(e) = (f(x + e u, v) - f(x - e u, v)) / 2e   central differences
 *   df/dv u  with  D(e) = (f(x, v + e u) - f(x, v - e u)) / 2e   (second order only)
 *
 * (one Richardson step, (4 D(e/2) - D(e)) / 3, takes the truncation error
 * to O(e^4)) by the relative error |J u - D|_2 / max(|J u|, |D|, noise/tol),
 * where e = cbrt(machine epsilon) * max(1, |x|_inf) and `noise` is the
 * round-off level of the quotient, so differences at round-off pass.  The Taylor
 * test evaluates the remainder
 *
 *   r(e) = |f(x + e u) - f(x) - e (df/dx) u|_2
 *
 * for e halving over 12 levels: it shrinks like e^2 when the product is the
 * derivative, like e when it is wrong.  The observed slope is the
 * least-squares slope of log r against log e over the levels where r is
 * above round-off; a system linear in x (or v) leaves r at round-off
 * everywhere and is reported as linear.  Where sys->jacobian_symmetric is
 * set, w . (J u) = u . (J w) is checked for df/dx and df/dv.  A system with
 * the fast path has linearize + jacobian_mul compared with
 * alpha df/dx u + beta df/dv u, and jacobian_diag with the diagonal of the
 * fast path's matrix.  Symmetry and the fast path are checked at v = 0,
 * where a symmetric fast path may leave out non-symmetric velocity terms.
 * A system that declares its fast path approximate on purpose
 * (sys->fast_path_approximate, e.g. clamping compressed springs) has the
 * fast-path error reported but not judged; create it with the
 * approximation off (clamp=0 for springs) to check the fast path exactly.
 * Pinned degrees of freedom are perturbed and checked like the others: their
 * forces are still forces, even if the implicit solvers filter them out.
 *
 * Energy consistency, where the system defines an energy E = K + U: at the
 * sample x with v = 0 (order 2; order 1 has no v), the potential's central
 * difference along u, D(e) = (U(x + e u) - U(x - e u)) / 2e (with the same
 * Richardson step), must equal -f . u (f = -grad U: a conservative force),
 * relative error |D + f.u| / max(|D|, |f.u|, noise/tol); the Taylor
 * remainder r(e) = |U(x + e u) - U(x) + e f.u| must shrink like e^2
 * (slope 2; a wrong sign or scale of U leaves r ~ e, slope 1); and, for
 * order 2, the kinetic energy at a random v must equal 1/2 v^T M v with the
 * system's masses, relative error at most tol.  The worst degree of freedom
 * of the gradient check is the one with the largest |dU/dx_i + f_i| over up
 * to 128 coordinate directions.  Forcing that is not conservative at v = 0
 * (wind acting through drag) fails the gradient check, as it should: such a
 * force is not -grad U.
 *
 * References: the finite-difference gradient check (Nocedal & Wright,
 * Numerical Optimization, 2nd ed., sec. 8.1); the Taylor remainder test as
 * used by dolfin-adjoint (Farrell, Ham, Funke & Rognes, SIAM J. Sci. Comput.
 * 35, 2013, sec. 4). */
#ifndef TSTEP_CHECK_H
#define TSTEP_CHECK_H

#include <stddef.h>
#include "tstep/system.h"

typedef enum {
    TS_JCHECK_DFDX,       /* df/dx u against central differences in x */
    TS_JCHECK_DFDV,       /* df/dv u against central differences in v */
    TS_JCHECK_TAYLOR_X,   /* Taylor remainder slope in x (expected 2) */
    TS_JCHECK_TAYLOR_V,   /* Taylor remainder slope in v (expected 2) */
    TS_JCHECK_SYMMETRY_X, /* w . (df/dx u) = u . (df/dx w) */
    TS_JCHECK_SYMMETRY_V, /* w . (df/dv u) = u . (df/dv w) */
    TS_JCHECK_FAST_PATH,  /* linearize + jacobian_mul = alpha df/dx + beta df/dv */
    TS_JCHECK_DIAGONAL,   /* jacobian_diag = diagonal of the fast path's matrix */
    TS_JCHECK_ENERGY_GRADIENT, /* dU/du by central differences = -f . u at v = 0 */
    TS_JCHECK_ENERGY_TAYLOR,   /* Taylor remainder of U with -f as gradient (expected 2) */
    TS_JCHECK_KINETIC,         /* kinetic energy = 1/2 v^T M v */
    TS_JCHECK_COUNT
} ts_jcheck_kind;

typedef struct {
    int samples;        /* random states, >= 1 (default 3) */
    unsigned long seed; /* random seed (default 1) */
    double tol;         /* largest relative error accepted (default 1e-6) */
    double min_slope;   /* smallest Taylor slope accepted (default 1.8) */
    double perturb_x;   /* x perturbation, relative to max(1, |x|_inf) (default 1e-3) */
    double perturb_v;   /* v perturbation, relative to max(1, |v|_inf) (default 0.1) */
} ts_jacobian_check_options;

ts_jacobian_check_options ts_default_jacobian_check_options(void);

/* The outcome of one check over all samples. */
typedef struct {
    int done;         /* 0: not applicable to this system */
    int passed;
    double error;     /* largest relative error (Taylor checks: 0) */
    double slope;     /* Taylor checks: smallest observed slope (NaN when linear) */
    int linear;       /* Taylor checks: remainder at round-off in every sample */
    size_t component; /* degree of freedom with the largest error, worst sample */
    int sample;       /* the worst sample (0-based) */
} ts_jcheck_result;

typedef struct {
    ts_jcheck_result check[TS_JCHECK_COUNT];
    int passed;              /* every check that was done passed */
    int worst;               /* the worst check (a failing one if any), or -1 */
    size_t component;        /* its worst degree of freedom */
    size_t particle;         /* component / sys->dim for particle systems, else component */
    int component_pinned;    /* that degree of freedom is pinned */
    size_t dofs, pinned;     /* degrees of freedom, and how many of them are pinned */
    int samples;
} ts_jacobian_report;

/* Run every applicable check on `sys` (its stored state is left unchanged).
 * Returns TS_OK when the checks ran (rep->passed says how they went),
 * TS_ERR_UNSUPPORTED for a system without Jacobian products, TS_ERR_INPUT
 * for bad options, or a failure of the system's callbacks.  opt may be NULL. */
int ts_jacobian_check(ts_system *sys, const ts_jacobian_check_options *opt,
                      ts_jacobian_report *rep);

/* A short name of a check ("df/dx vs differences", ...). */
const char *ts_jcheck_name(int kind);

#endif

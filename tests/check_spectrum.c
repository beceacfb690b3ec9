/* The prediction over the whole spectrum, and the measurement that finds the
 * same limit, against references computed here:
 *
 * - a dense reference: the first-order Jacobian [0 I; M^-1 df/dx M^-1 df/dv]
 *   of a small cloth and of hair (straight and curly) by central differences
 *   of the forces (not the systems' Jacobian products), its eigenvalues by
 *   LAPACK, and per stepper the minimum over the modes of r(theta) / |lambda|
 *   with r from the closed-form stability polynomials (forward Euler 1 + z,
 *   midpoint 1 + z + z^2/2, rk4 the degree-4 Taylor polynomial of e^z;
 *   Hairer & Wanner, Solving ODEs II, IV.2) scanned along each ray here;
 * - exact limits: the critically damped oscillator (forward Euler 2/w), the
 *   complex test equation x' = (-0.1 + 3i) x (forward Euler
 *   2 |Re lambda| / |lambda|^2 = 0.2 / 9.01);
 * - the second-order test equation with a partitioned symplectic-Euler
 *   stepper written here: its one-step map [1 - h^2, h(1 - 2 zeta h);
 *   -h, 1 - 2 zeta h] (w = 1) has determinant 1 - 2 zeta h and trace
 *   2 - 2 zeta h - h^2, so by the Jury conditions it is stable up to
 *   hw = 2 (sqrt(1 + zeta^2) - zeta): 2/w on the undamped oscillator;
 * - arnoldi (ARPACK) against dense (LAPACK) on the same system. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>
#include "tests.h"
#include "tstep/linalg.h"
#include "tstep/spectrum.h"
#include "tstep/stability.h"

static ts_system *make(const ts_system_type *type, const char *const *pairs, ts_params *p)
{
    ts_params_init(p, type->params);
    for (size_t i = 0; pairs && pairs[i]; i++)
        ck_assert_int_eq(ts_params_set_pair(p, pairs[i]), TS_OK);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(type, p, &sys), TS_OK);
    return sys;
}

/* --- the dense reference ------------------------------------------------------ */

/* Eigenvalues of the first-order Jacobian on the free dofs, by central
 * differences of forces (step 1e-6) and LAPACK.  Returns the count. */
static size_t reference_spectrum(ts_system *sys, double **re, double **im)
{
    size_t n = sys->n, m = 0;
    size_t *fr = malloc(n * sizeof *fr);
    for (size_t i = 0; i < n; i++)
        if (!sys->pinned || !sys->pinned[i])
            fr[m++] = i;
    int o2 = sys->order == 2;
    size_t dim = o2 ? 2 * m : m;
    double *a = calloc(dim * dim, sizeof *a), *x = malloc(n * sizeof *x),
           *v = calloc(n, sizeof *v), *fp = malloc(n * sizeof *fp), *fm = malloc(n * sizeof *fm);
    ts_vec_copy(n, sys->x, x);
    if (o2)
        ts_vec_copy(n, sys->v, v);
    const double eps = 1e-6;
    for (int which = 0; which < (o2 ? 2 : 1); which++)
        for (size_t j = 0; j < m; j++) {
            double *z = which ? v : x, z0 = z[fr[j]];
            z[fr[j]] = z0 + eps;
            ck_assert_int_eq(ts_system_forces(sys, 0.0, x, o2 ? v : NULL, fp), TS_OK);
            z[fr[j]] = z0 - eps;
            ck_assert_int_eq(ts_system_forces(sys, 0.0, x, o2 ? v : NULL, fm), TS_OK);
            z[fr[j]] = z0;
            size_t col = o2 ? (which ? m + j : j) : j;
            for (size_t i = 0; i < m; i++)
                a[col * dim + (o2 ? m : 0) + i] =
                    (fp[fr[i]] - fm[fr[i]]) / (2.0 * eps) / sys->mass[fr[i]];
        }
    if (o2)
        for (size_t j = 0; j < m; j++)
            a[(m + j) * dim + j] = 1.0;
    *re = malloc(dim * sizeof **re);
    *im = malloc(dim * sizeof **im);
    ck_assert_int_eq(LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', 'N', (lapack_int)dim, a,
                                   (lapack_int)dim, *re, *im, NULL, 1, NULL, 1),
                     0);
    free(a), free(x), free(v), free(fp), free(fm), free(fr);
    return dim;
}

/* closed-form stability polynomials */
static double complex poly_r(int which, double complex z)
{
    switch (which) {
    case 0: return 1.0 + z;
    case 1: return 1.0 + z + z * z / 2.0;
    default: return 1.0 + z + z * z / 2.0 + z * z * z / 6.0 + z * z * z * z / 24.0;
    }
}
static const char *const poly_name[] = {"forward-euler", "midpoint", "rk4"};

/* first growth point along the ray theta (|R| > 1 + 1e-14): scan by 0.1 %
 * from s = 1e-3, then bisection */
static double poly_radius(int which, double complex dir)
{
    double lo = 1e-3, hi;
    if (cabs(poly_r(which, lo * dir)) > 1.0 + 1e-14)
        return 0.0;
    for (;;) {
        hi = lo * 1.001;
        if (hi > 100.0)
            return INFINITY;
        if (cabs(poly_r(which, hi * dir)) > 1.0 + 1e-14)
            break;
        lo = hi;
    }
    for (int k = 0; k < 60; k++) {
        double mid = 0.5 * (lo + hi);
        if (cabs(poly_r(which, mid * dir)) > 1.0 + 1e-14)
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

/* min over the modes of r / |lambda| (im >= 0, not rigid) */
static double reference_dt(int which, const double *re, const double *im, size_t count)
{
    double lmax = 0.0, best = INFINITY;
    for (size_t k = 0; k < count; k++)
        lmax = fmax(lmax, hypot(re[k], im[k]));
    for (size_t k = 0; k < count; k++) {
        double mag = hypot(re[k], im[k]);
        if (im[k] < 0.0 || mag <= TS_RIGID_CUT * lmax)
            continue;
        double r = fabs(re[k]) <= TS_REAL_ROUNDOFF * lmax ? 0.0 : re[k];
        double dt = poly_radius(which, (r + I * im[k]) / mag) / mag;
        best = fmin(best, dt);
    }
    return best;
}

static const struct {
    const ts_system_type *type;
    const char *pairs[4];
} dense_cases[] = {
    {&ts_cloth, {"nx=4", "ny=4", NULL}},
    {&ts_hair, {"n=8", NULL}},
    {&ts_hair, {"n=12", "curl=3", NULL}},
};

/* tstep's dt_pred within 1 % of the reference, for every closed-form
 * stepper; the measured dt_crit (linearized, as the command) within 5 % where
 * found, its bracket around the reference within the 0.5 % bisection. */
START_TEST(dense_reference)
{
    ts_params p;
    ts_system *sys = make(dense_cases[_i].type, dense_cases[_i].pairs, &p);
    double *re, *im;
    size_t count = reference_spectrum(sys, &re, &im);
    ts_spectrum sp;
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_DENSE, &sp), TS_OK);
    ck_assert_uint_eq(sp.count, count);
    for (int w = 0; w < 3; w++) {
        const ts_stepper_type *type = tests_stepper(poly_name[w]);
        double ref = reference_dt(w, re, im, count);
        ck_assert(isfinite(ref) && ref > 0.0);
        ts_stability_options o = ts_default_stability_options();
        ts_stability_study_result r;
        ts_stability_problem pb = {dense_cases[_i].type, &p, type, NULL};
        ck_assert_int_eq(ts_stability_study(&pb, &o, sys, &sp, &r), TS_OK);
        ck_assert_msg(fabs(r.binding.dt_pred / ref - 1.0) <= 0.01,
                      "%s on %s %s: dt_pred %g, reference %g", type->name,
                      dense_cases[_i].type->name, dense_cases[_i].pairs[1] ? "curl" : "",
                      r.binding.dt_pred, ref);
        if (r.result.kind == TS_CRIT_FOUND)
            ck_assert_msg(fabs(r.result.dt_crit / ref - 1.0) <= 0.05 &&
                              r.result.dt_crit <= ref * 1.001 &&
                              r.result.dt_fail >= ref * 0.999,
                          "%s: measured [%g, %g], reference %g", type->name, r.result.dt_crit,
                          r.result.dt_fail, ref);
        else
            ck_abort_msg("%s: measurement not found (kind %d)", type->name, r.result.kind);
    }
    ts_spectrum_free(&sp);
    free(re), free(im);
    ts_system_free(sys);
}
END_TEST

/* The binding mode is not the stiffest one for forward Euler on the cloth
 * (a less damped mode binds), and the stiffest mode's own r / |lambda| is
 * larger than dt_pred there: the minimum over the spectrum matters. */
START_TEST(binding_mode_is_not_the_stiffest_on_cloth)
{
    static const char *const pairs[] = {"nx=4", "ny=4", NULL};
    ts_params p;
    ts_system *sys = make(&ts_cloth, pairs, &p);
    ts_spectrum sp;
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_AUTO, &sp), TS_OK);
    ck_assert_int_eq(sp.method, TS_EIG_DENSE);
    ts_binding b;
    ck_assert_int_eq(ts_stability_binding(&(ts_mode_test){&ts_forward_euler, NULL, 0}, &sp, &b),
                     TS_OK);
    ck_assert(!b.stiffest);
    size_t stiff = 0;
    for (size_t k = 0; k < sp.count; k++)
        if (hypot(sp.re[k], sp.im[k]) > hypot(sp.re[stiff], sp.im[stiff]))
            stiff = k;
    double mag = hypot(sp.re[stiff], sp.im[stiff]);
    double stiff_dt = 2.0 * fabs(sp.re[stiff]) / (mag * mag);
    ck_assert_msg(stiff_dt > 1.05 * b.dt_pred, "stiffest %g, binding %g", stiff_dt, b.dt_pred);
    /* forward Euler's closed form at the binding mode */
    double bm = hypot(b.re, b.im);
    ck_assert_double_eq_tol(b.dt_pred, 2.0 * fabs(b.re) / (bm * bm), 1e-9 * b.dt_pred);
    ts_spectrum_free(&sp);
    ts_system_free(sys);
}
END_TEST

/* The mode vector: (A - lambda) [x; v] = 0 for the binding mode, checked
 * with the system's own products on the real and imaginary parts; dense
 * (inverse iteration, _i = 0) and arnoldi (Ritz vectors, _i = 1). */
START_TEST(mode_vector_is_an_eigenvector)
{
    static const char *const pairs[] = {"n=30", NULL};
    ts_params p;
    ts_system *sys = make(&ts_hair, pairs, &p);
    size_t n = sys->n;
    ts_spectrum sp;
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, _i ? TS_EIG_ARNOLDI : TS_EIG_DENSE, &sp),
                     TS_OK);
    ts_binding b;
    ts_mode_test midpoint = {tests_stepper("midpoint"), NULL, 0};
    ck_assert_int_eq(ts_stability_binding(&midpoint, &sp, &b), TS_OK);
    /* the real mode x(t) = Re(u e^{lambda t}): x = Re u, v = Re(lambda u); then
     * v' = Re(lambda^2 u) = M^-1 (Kx Re u + Kv Re(lambda u)) and, with
     * w = Im-part mode (phase shifted by a quarter), the same; check x'' for
     * the real part: M^-1 (Kx x + Kv v) = Re(lambda^2 u) = Re(lambda) v' ... by
     * linearity: Re(lambda^2 u) = 2 Re(lambda) Re(lambda u) - |lambda|^2 Re u. */
    double *x = calloc(n, sizeof *x), *v = calloc(n, sizeof *v), *f1 = calloc(n, sizeof *f1),
           *f2 = calloc(n, sizeof *f2);
    ck_assert_int_eq(ts_spectrum_mode(sys, &sp, b.mode, x, v), TS_OK);
    ck_assert_int_eq(ts_system_dfdx_mul(sys, 0.0, sys->x, sys->v, x, f1), TS_OK);
    ck_assert_int_eq(ts_system_dfdv_mul(sys, 0.0, sys->x, sys->v, v, f2), TS_OK);
    double l2 = b.re * b.re + b.im * b.im, err = 0.0, scale = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (sys->pinned && sys->pinned[i])
            continue;
        double lhs = (f1[i] + f2[i]) / sys->mass[i], rhs = 2.0 * b.re * v[i] - l2 * x[i];
        err = fmax(err, fabs(lhs - rhs));
        scale = fmax(scale, fabs(rhs));
    }
    ck_assert_msg(err <= 1e-6 * scale, "residual %g of %g", err, scale);
    free(x), free(v), free(f1), free(f2);
    ts_spectrum_free(&sp);
    ts_system_free(sys);
}
END_TEST

/* --- exact limits ------------------------------------------------------------------ */

static ts_stability_study_result study(const ts_system_type *type, const char *const *pairs,
                                       const ts_stepper_type *st)
{
    ts_params p;
    ts_system *sys = make(type, pairs, &p);
    ts_spectrum sp;
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_AUTO, &sp), TS_OK);
    ts_stability_options o = ts_default_stability_options();
    ts_stability_study_result r;
    ts_stability_problem pb = {type, &p, st, NULL};
    ck_assert_int_eq(ts_stability_study(&pb, &o, sys, &sp, &r), TS_OK);
    ts_spectrum_free(&sp);
    ts_system_free(sys);
    return r;
}

START_TEST(critically_damped_oscillator)
{
    static const char *const pairs[] = {"k=100", "c=20", NULL};
    ts_stability_study_result r = study(&ts_oscillator, pairs, &ts_forward_euler);
    ck_assert_double_eq_tol(r.binding.dt_pred, 0.2, 1e-9);
    ck_assert_int_eq(r.result.kind, TS_CRIT_FOUND);
    ck_assert_msg(fabs(r.result.dt_crit / 0.2 - 1.0) <= 0.02, "measured %g", r.result.dt_crit);
}
END_TEST

/* through the command: the bracket [dt_crit, dt_fail] holds the exact limit */
START_TEST(complex_test1d_bracket_contains_exact)
{
    FILE *f = popen(TSTEP_BIN " stability --system test1d --param k=0.1 --param omega=3 "
                              "--stepper forward-euler --format csv 2>/dev/null",
                    "r");
    ck_assert_ptr_nonnull(f);
    char line[1024];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f)); /* header */
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_int_eq(pclose(f), 0);
    double crit, fail, pred;
    ck_assert_int_eq(sscanf(line, "forward-euler,%lf,%lf,%lf,", &crit, &fail, &pred), 3);
    const double exact = 0.2 / 9.01;
    ck_assert_double_eq_tol(pred, exact, 1e-9);
    ck_assert_msg(crit <= exact && exact <= fail, "[%g, %g] against %.7g", crit, fail, exact);
    ck_assert_ptr_nonnull(strstr(line, ",found,yes,scalar"));
}
END_TEST

/* --- the second-order test equation, a partitioned stepper ---------------------- */

/* symplectic Euler: v += h M^-1 f(x, v); x += h v (order 1: forward Euler) */
static int se_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_scratch_vectors(sys, 1, scratch);
}

static int se_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    (void)stats;
    double *f = scratch;
    size_t n = sys->n;
    int s = ts_system_forces(sys, t, sys->x, sys->v, f);
    if (s)
        return s;
    for (size_t i = 0; i < n; i++) {
        if (sys->pinned && sys->pinned[i])
            continue;
        if (sys->order == 2) {
            sys->v[i] += h * f[i] / sys->mass[i];
            sys->x[i] += h * sys->v[i];
        } else {
            sys->x[i] += h * f[i] / sys->mass[i];
        }
    }
    return TS_OK;
}

static const ts_stepper_type symplectic_euler_probe = {
    .name = "symplectic-euler-probe", .summary = "semi-implicit Euler (test)", .order = 1,
    .flags = TS_PARTITIONED | TS_SYMPLECTIC, .alloc = se_alloc, .step = se_step, .free = free};

START_TEST(oscillator_map_of_symplectic_euler)
{
    for (double hw = 0.25; hw < 3.0; hw += 0.5) {
        double map[4];
        ck_assert_int_eq(ts_oscillator_map(&symplectic_euler_probe, NULL, hw, 0.0, map), TS_OK);
        double det = map[0] * map[3] - map[2] * map[1], tr = map[0] + map[3];
        ck_assert_double_eq_tol(det, 1.0, 1e-13);
        ck_assert_double_eq_tol(tr, 2.0 - hw * hw, 1e-13);
    }
    /* on the second-order test equation, and on the scalar one */
    ts_mode_test second = {&symplectic_euler_probe, NULL, 1};
    ts_mode_test scalar = {&symplectic_euler_probe, NULL, 0};
    for (double zeta = 0.0; zeta <= 1.0; zeta += 0.25) {
        double r, want = 2.0 * (sqrt(1.0 + zeta * zeta) - zeta);
        ck_assert_int_eq(ts_stability_radius(&second, -zeta, sqrt(1.0 - zeta * zeta), &r), TS_OK);
        ck_assert_msg(fabs(r / want - 1.0) <= 1e-9, "zeta %g: r %g, want %g", zeta, r, want);
    }
    /* the scalar equation would call it forward Euler: no interval on the
     * imaginary axis */
    double r;
    ck_assert_int_eq(ts_stability_radius(&scalar, 0.0, 1.0, &r), TS_OK);
    ck_assert(r == 0.0);
    /* undamped, below 2: |R| = 1 (the map's eigenvalues on the unit circle) */
    double rr, ri;
    ck_assert_int_eq(ts_mode_amplification(&second, 0.0, 1.5, &rr, &ri), TS_OK);
    ck_assert_double_eq_tol(hypot(rr, ri), 1.0, 1e-13);
}
END_TEST

START_TEST(partitioned_prediction_on_oscillator)
{
    static const char *const pairs[] = {"k=100", NULL};
    ts_stability_study_result r = study(&ts_oscillator, pairs, &symplectic_euler_probe);
    ck_assert(r.binding.second_order);
    ck_assert_msg(fabs(r.binding.dt_pred / 0.2 - 1.0) <= 0.01, "dt_pred %g", r.binding.dt_pred);
    ck_assert_int_eq(r.result.kind, TS_CRIT_FOUND);
    ck_assert_msg(fabs(r.result.dt_crit / 0.2 - 1.0) <= 0.01, "measured %g", r.result.dt_crit);
    /* forward Euler on the same oscillator keeps its scalar prediction: 0 */
    r = study(&ts_oscillator, pairs, &ts_forward_euler);
    ck_assert(!r.binding.second_order && r.binding.dt_pred == 0.0);
    /* a first-order system: the scalar equation (symplectic Euler is forward Euler) */
    static const char *const k10[] = {"k=10", NULL};
    r = study(&ts_test1d, k10, &symplectic_euler_probe);
    ck_assert(!r.binding.second_order);
    ck_assert_double_eq_tol(r.binding.dt_pred, 0.2, 1e-9);
}
END_TEST

/* Every registered stepper on a lightly damped oscillator (k = 100, c = 2:
 * zeta = 0.1), one mode, so the prediction is exact (the scalar R(h lambda),
 * the 2x2 map of a partitioned stepper, or for an explicit stepper that
 * carries state between steps, velocity Verlet with its reused force, the
 * growth of runs on the test equation) and the measured bracket must contain
 * it; no nan anywhere. */
START_TEST(every_stepper_bracket_contains_prediction)
{
    const ts_stepper_type *type = ts_stepper_at((size_t)_i);
    if (strcmp(type->name, "verlet") == 0) { /* the one that carries state: detected */
        int memoryless;
        ck_assert_int_eq(ts_stepper_memoryless(type, NULL, &memoryless), TS_OK);
        ck_assert(!memoryless);
    }
    static const char *const pairs[] = {"k=100", "c=2", NULL};
    ts_stability_study_result r = study(&ts_oscillator, pairs, type);
    double pred = r.binding.dt_pred;
    ck_assert_msg(!isnan(pred) && !isnan(r.result.dt_crit) && !isnan(r.result.dt_fail),
                  "%s: nan (%g, %g, %g)", type->name, pred, r.result.dt_crit, r.result.dt_fail);
    ck_assert_int_eq(r.binding.second_order, (type->flags & TS_PARTITIONED) != 0);
    if (isinf(pred)) {
        ck_assert_msg(r.result.kind == TS_CRIT_INF, "%s: predicted inf, kind %d", type->name,
                      r.result.kind);
    } else if (r.binding.carries_state && (type->flags & TS_IMPLICIT)) {
        /* an implicit multistep method's fresh-start map is its starting
         * step: only approximate (none is finite among the built-in ones) */
        ck_assert_msg(pred > 0.0 && r.result.kind == TS_CRIT_FOUND &&
                          fabs(r.result.dt_crit / pred - 1.0) <= 0.15,
                      "%s: measured %g, predicted %g", type->name, r.result.dt_crit, pred);
    } else {
        ck_assert_msg(pred > 0.0, "%s: dt_pred %g", type->name, pred);
        ck_assert_msg(r.result.kind == TS_CRIT_FOUND && r.result.dt_crit <= pred * (1 + 1e-9) &&
                          r.result.dt_fail >= pred * (1 - 1e-9),
                      "%s: [%g, %g] (kind %d) against %g", type->name, r.result.dt_crit,
                      r.result.dt_fail, r.result.kind, pred);
    }
}
END_TEST

/* region --plane oscillator through the command: forward Euler's map on
 * x'' = -x - 2 zeta x' has eigenvalues 1 + h lambda, lambda = -zeta +- i
 * sqrt(1 - zeta^2), so rho = sqrt(1 - 2 zeta h + h^2); symplectic Euler's is
 * the 2x2 matrix of the header comment. */
START_TEST(region_oscillator_plane)
{
    FILE *f = popen(TSTEP_BIN " region --stepper forward-euler,symplectic-euler --plane "
                              "oscillator --hw-max 2.5 --zeta-max 1 --step 0.25 --format csv",
                    "r");
    ck_assert_ptr_nonnull(f);
    char line[256], name[64];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "stepper,hw,zeta,rho\n");
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        double h, z, rho;
        ck_assert_int_eq(sscanf(line, "%63[^,],%lf,%lf,%lf", name, &h, &z, &rho), 4);
        double want;
        if (strcmp(name, "forward-euler") == 0) {
            want = sqrt(fmax(0.0, 1.0 - 2.0 * z * h + h * h));
        } else {
            double a = 1.0 - h * h, b = h * (1.0 - 2.0 * z * h), c = -h, d = 1.0 - 2.0 * z * h;
            double tr = a + d, det = a * d - b * c, disc = tr * tr / 4.0 - det;
            want = disc >= 0.0 ? fabs(tr) / 2.0 + sqrt(disc) : sqrt(det);
        }
        ck_assert_msg(fabs(rho - want) <= 1e-12 * fmax(1.0, want), "%s at (%g, %g): %g, want %g",
                      name, h, z, rho, want);
        rows++;
    }
    ck_assert_int_eq(pclose(f), 0);
    ck_assert_int_eq(rows, 2 * 11 * 5);
}
END_TEST

/* --- arnoldi against dense ---------------------------------------------------------- */

START_TEST(arnoldi_matches_dense)
{
    static const char *const pairs[] = {"n=40", NULL};
    ts_params p;
    ts_system *sys = make(&ts_hair, pairs, &p);
    ts_spectrum d, a;
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_DENSE, &d), TS_OK);
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_ARNOLDI, &a), TS_OK);
    ck_assert_int_eq(a.method, TS_EIG_ARNOLDI);
    ck_assert(a.count >= TS_ARNOLDI_NEV / 2 && a.lambda_floor > 0.0);
    ck_assert_double_eq_tol(a.lambda_max, d.lambda_max, 1e-8 * d.lambda_max);
    /* every Ritz value is a dense eigenvalue */
    for (size_t k = 0; k < a.count; k++) {
        double best = INFINITY;
        for (size_t j = 0; j < d.count; j++)
            best = fmin(best, hypot(a.re[k] - d.re[j], a.im[k] - d.im[j]));
        ck_assert_msg(best <= 1e-7 * d.lambda_max, "Ritz value %zu off by %g", k, best);
    }
    /* rk4 binds at the stiffest mode, which arnoldi sees: the same dt_pred */
    ts_binding bd, ba;
    ts_mode_test rk4 = {&ts_rk4, NULL, 0};
    ck_assert_int_eq(ts_stability_binding(&rk4, &d, &bd), TS_OK);
    ck_assert_int_eq(ts_stability_binding(&rk4, &a, &ba), TS_OK);
    ck_assert_double_eq_tol(ba.dt_pred, bd.dt_pred, 1e-6 * bd.dt_pred);
    ts_spectrum_free(&d);
    ts_spectrum_free(&a);
    ts_system_free(sys);
}
END_TEST

/* --- the state of the linearization -------------------------------------------------- */

/* --at-time: the command's dt_pred equals the binding over the spectrum at
 * the state an rk4 run reaches (computed here), and differs from the
 * initial state's */
START_TEST(at_time_linearizes_later_state)
{
    static const char *const pairs[] = {"nx=4", "ny=4", NULL};
    ts_params p;
    ts_system *sys = make(&ts_cloth, pairs, &p);
    ts_spectrum sp;
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.0, TS_EIG_DENSE, &sp), TS_OK);
    ts_binding b0, b1;
    ts_mode_test rk4 = {&ts_rk4, NULL, 0};
    ck_assert_int_eq(ts_stability_binding(&rk4, &sp, &b0), TS_OK);
    ts_spectrum_free(&sp);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(&ts_rk4, sys, NULL, &st), TS_OK);
    for (int k = 0; k < 300; k++)
        ck_assert_int_eq(ts_stepper_step(st, sys, k * 1e-3, 1e-3), TS_OK);
    ts_stepper_free(st);
    ck_assert_int_eq(ts_spectrum_compute(sys, 0.3, TS_EIG_DENSE, &sp), TS_OK);
    ck_assert_int_eq(ts_stability_binding(&rk4, &sp, &b1), TS_OK);
    ts_spectrum_free(&sp);
    ts_system_free(sys);
    ck_assert_msg(b1.dt_pred != b0.dt_pred, "%g vs %g", b1.dt_pred,
                  b0.dt_pred);

    FILE *f = popen(TSTEP_BIN " stability --system cloth --param nx=4 --param ny=4 --stepper rk4 "
                              "--at-time 0.3 --at-dt 1e-3 --format csv 2>&1",
                    "r");
    ck_assert_ptr_nonnull(f);
    char text[4096];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    ck_assert_int_eq(pclose(f), 0);
    const char *row = strstr(text, "\nrk4,");
    ck_assert_ptr_nonnull(row);
    double crit, fail, pred;
    ck_assert_int_eq(sscanf(row, "\nrk4,%lf,%lf,%lf,", &crit, &fail, &pred), 3);
    ck_assert_msg(fabs(pred / b1.dt_pred - 1.0) <= 1e-7, "%g vs %g", pred, b1.dt_pred);
    ck_assert_ptr_nonnull(strstr(text, "linearized at t = 0.3 (after rk4 with dt = 0.001)"));
    ck_assert_ptr_nonnull(strstr(text, "spectrum: dense (LAPACK dgeev)"));
}
END_TEST

Suite *spectrum_suite(void)
{
    Suite *s = suite_create("spectrum");
    TCase *tc = tcase_create("prediction over the spectrum");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, dense_reference, 0,
                        (int)(sizeof dense_cases / sizeof *dense_cases));
    tcase_add_test(tc, binding_mode_is_not_the_stiffest_on_cloth);
    tcase_add_loop_test(tc, mode_vector_is_an_eigenvector, 0, 2);
    tcase_add_test(tc, critically_damped_oscillator);
    tcase_add_test(tc, complex_test1d_bracket_contains_exact);
    tcase_add_test(tc, oscillator_map_of_symplectic_euler);
    tcase_add_test(tc, partitioned_prediction_on_oscillator);
    int nsteppers = 0;
    while (ts_stepper_at((size_t)nsteppers))
        nsteppers++;
    tcase_add_loop_test(tc, every_stepper_bracket_contains_prediction, 0, nsteppers);
    tcase_add_test(tc, region_oscillator_plane);
    tcase_add_test(tc, arnoldi_matches_dense);
    tcase_add_test(tc, at_time_linearizes_later_state);
    suite_add_tcase(s, tc);
    return s;
}

/* Linear stability: one-step amplification factors, stability intervals
 * along rays, the stiffest mode of a system, and the measured critical step.
 * The definitions are in tstep/stability.h.
 *
 * Everything about a stepper is found by running it: R(z) is one step on the
 * complex test equation x' = lambda x (Dahlquist 1963; Hairer & Wanner,
 * Solving Ordinary Differential Equations II, IV.2), so the code knows no
 * stepper's formula.  The stiffest mode is the power method (Golub & Van
 * Loan, Matrix Computations, 7.3) on M^-1 df/dx; "the step size is limited
 * by the largest eigenvalue of the Jacobian" is the stiffness argument of
 * the Witkin-Baraff course notes (Euler's and the midpoint method's speed
 * limits on x' = -k x). */
#include <complex.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/linalg.h"
#include "tstep/run.h"
#include "tstep/stability.h"
#include "tstep/spectrum.h"
#include "core/ext.h"
#include "core/lapack.h"
#include "analysis/recurrence.h"

/* --- the test equation ------------------------------------------------------- */

/* test1d with x' = (-k + i omega) x; omega = 0 gives the real, 1-D system. */
static int make_test1d(double k, double omega, ts_system **out)
{
    ts_params p;
    char buf[64];
    ts_params_init(&p, ts_test1d.params);
    snprintf(buf, sizeof buf, "%.17g", k);
    int s = ts_params_set(&p, "k", buf);
    snprintf(buf, sizeof buf, "%.17g", omega);
    if (!s)
        s = ts_params_set(&p, "omega", buf);
    return s ? s : ts_system_new(&ts_test1d, &p, out);
}

/* One step of size h from x0 = 1 on an existing test1d system. */
static int one_step(ts_stepper *st, ts_system *sys, double h, double *r_re, double *r_im)
{
    double y0[2] = {1.0, 0.0};
    ts_system_set_y(sys, y0);
    ts_stepper_reset(st); /* a fresh start: no history or cached force of an earlier step */
    int s = ts_stepper_step(st, sys, 0.0, h);
    if (s)
        return s;
    *r_re = sys->x[0];
    *r_im = sys->n > 1 ? sys->x[1] : 0.0;
    return TS_OK;
}

int ts_amplification(const ts_stepper_type *type, const ts_solver_options *opt, double re,
                     double im, double *r_re, double *r_im)
{
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    int s = make_test1d(-re, im, &sys);
    if (!s)
        s = ts_stepper_new(type, sys, opt, &st);
    if (!s)
        s = one_step(st, sys, 1.0, r_re, r_im);
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

/* --- the second-order test equation ------------------------------------------ */

/* x'' = -k x - c v, unit mass, one degree of freedom: k = w^2, c = 2 zeta w.
 * Its own small system (negative c allowed, for modes with Re lambda > 0). */
typedef struct {
    ts_system base;
    double k, c;
} osc2;

static void osc2_destroy(ts_system *sys)
{
    ts_system_release(sys);
    free(sys);
}

static int osc2_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    const osc2 *o = (const osc2 *)sys;
    (void)t;
    f[0] = -o->k * x[0] - o->c * v[0];
    return TS_OK;
}

static int osc2_dfdx(ts_system *sys, double t, const double *x, const double *v,
                     const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    out[0] = -((const osc2 *)sys)->k * u[0];
    return TS_OK;
}

static int osc2_dfdv(ts_system *sys, double t, const double *x, const double *v,
                     const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    out[0] = -((const osc2 *)sys)->c * u[0];
    return TS_OK;
}

static int osc2_energy(ts_system *sys, double t, const double *x, const double *v,
                       double *kinetic, double *potential)
{
    (void)t;
    *kinetic = 0.5 * v[0] * v[0];
    *potential = 0.5 * ((const osc2 *)sys)->k * x[0] * x[0];
    return TS_OK;
}

static const ts_system_ops osc2_ops = {.destroy = osc2_destroy, .forces = osc2_forces,
                                       .dfdx_mul = osc2_dfdx, .dfdv_mul = osc2_dfdv,
                                       .energy = osc2_energy};
static const ts_param_def osc2_params[] = {{NULL, 0, NULL, NULL}};
static const ts_system_type osc2_type = {"second-order-test",
                                         "x'' = -w^2 x - 2 zeta w x' (stability analysis)",
                                         osc2_params, NULL};

static int make_osc2(double w, double zeta, ts_system **out)
{
    osc2 *o = calloc(1, sizeof *o);
    if (!o)
        return ts_error(TS_ERR_NOMEM, "second-order test equation");
    int s = ts_system_init(&o->base, &osc2_ops, &osc2_type, 2, 1);
    if (s) {
        free(o);
        return s;
    }
    o->k = w * w;
    o->c = 2.0 * zeta * w;
    *out = &o->base;
    return TS_OK;
}

/* The two numbers of a test problem's state: (x, v) of the oscillator,
 * (Re, Im) of test1d. */
static void put2(ts_system *sys, const double y[2])
{
    sys->x[0] = y[0];
    if (sys->order == 2)
        sys->v[0] = y[1];
    else
        sys->x[1] = y[1];
}

static void get2(const ts_system *sys, double y[2])
{
    y[0] = sys->x[0];
    y[1] = sys->order == 2 ? sys->v[0] : sys->x[1];
}

/* The one-step map of a test problem (x'' = -x - 2 zeta x' with step hw, or
 * test1d), column-major: columns from (1, 0) and (0, 1). */
static int osc2_map(ts_stepper *st, ts_system *sys, double hw, double map[4])
{
    for (int j = 0; j < 2; j++) {
        put2(sys, (const double[2]){j == 0, j == 1});
        ts_stepper_reset(st); /* no history or cached force of the other column */
        int s = ts_stepper_step(st, sys, 0.0, hw);
        if (s)
            return s;
        get2(sys, map + 2 * j);
    }
    return TS_OK;
}

/* eigenvalue of largest modulus of the column-major 2x2 map */
static void map_eig(const double map[4], double *re, double *im)
{
    double tr = map[0] + map[3], det = map[0] * map[3] - map[2] * map[1];
    double disc = 0.25 * tr * tr - det;
    if (disc >= 0.0) {
        double sq = sqrt(disc);
        *re = tr >= 0.0 ? 0.5 * tr + sq : 0.5 * tr - sq;
        *im = 0.0;
    } else {
        *re = 0.5 * tr;
        *im = sqrt(-disc);
    }
}

int ts_oscillator_map(const ts_stepper_type *type, const ts_solver_options *opt, double hw,
                      double zeta, double map[4])
{
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    int s = make_osc2(1.0, zeta, &sys);
    if (!s)
        s = ts_stepper_new(type, sys, opt, &st);
    if (!s)
        s = osc2_map(st, sys, hw, map);
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

int ts_oscillator_amplification(const ts_stepper_type *type, const ts_solver_options *opt,
                                double hw, double zeta, double *r_re, double *r_im)
{
    double map[4];
    int s = ts_oscillator_map(type, opt, hw, zeta, map);
    if (!s)
        map_eig(map, r_re, r_im);
    return s;
}

int ts_stepper_memoryless(const ts_stepper_type *type, const ts_solver_options *opt,
                          int *memoryless)
{
    /* on x'' = -x - 0.6 x' with h = 0.5 (x' = (-0.3 + i) x for a stepper of
     * first-order systems only): two steps in a row against the fresh
     * one-step map applied twice */
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    double map[4], y[2] = {1.0, 0.3}, z[2];
    int s = make_osc2(1.0, 0.3, &sys);
    if (!s)
        s = ts_stepper_new(type, sys, opt, &st);
    if (s == TS_ERR_UNSUPPORTED) {
        ts_system_free(sys);
        sys = NULL;
        s = make_test1d(0.3, 1.0, &sys);
        if (!s)
            s = ts_stepper_new(type, sys, opt, &st);
    }
    if (!s)
        s = osc2_map(st, sys, 0.5, map);
    for (int k = 0; !s && k < 2; k++) {
        z[0] = map[0] * y[0] + map[2] * y[1];
        z[1] = map[1] * y[0] + map[3] * y[1];
        y[0] = z[0], y[1] = z[1];
    }
    if (!s) {
        put2(sys, (const double[2]){1.0, 0.3});
        ts_stepper_reset(st);
        s = ts_stepper_step(st, sys, 0.0, 0.5);
        if (!s)
            s = ts_stepper_step(st, sys, 0.5, 0.5);
    }
    if (!s) {
        double tol = 1e-10 * fmax(1.0, fmax(fabs(y[0]), fabs(y[1]))), got[2];
        get2(sys, got);
        *memoryless = fabs(got[0] - y[0]) <= tol && fabs(got[1] - y[1]) <= tol &&
                      !(type->flags & TS_MULTISTEP);
    }
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

int ts_stability_second_order(const ts_stepper_type *type, const ts_system *sys)
{
    return (type->flags & TS_PARTITIONED) && (!sys || sys->order == 2);
}

int ts_mode_amplification(const ts_mode_test *test, double re, double im, double *r_re,
                          double *r_im)
{
    if (!test->second_order)
        return ts_amplification(test->type, test->opt, re, im, r_re, r_im);
    double w = hypot(re, im);
    if (!(w > 0.0)) {
        *r_re = 1.0, *r_im = 0.0;
        return TS_OK;
    }
    return ts_oscillator_amplification(test->type, test->opt, w, -re / w, r_re, r_im);
}

/* --- stability along a ray ------------------------------------------------------ */

/* A mode as a test takes it: its eigenvalue (a real part within the
 * round-off cut taken as 0) and, on the second-order equation, x'' = -w^2 x
 * - 2 zeta w x' with w = |lambda|, zeta = -Re lambda / |lambda|, unless
 * own: then w and zeta are given (the overdamped oscillator a real lambda
 * is a root of), and the eigenvalue is not used. */
typedef struct {
    double re, im;
    int own;
    double w, zeta;
} mode_view;

/* The rate that turns the mode's radius (in |lambda| h, or h w when own)
 * into a step. */
static double view_rate(const mode_view *v)
{
    return v->own ? v->w : hypot(v->re, v->im);
}

/* One mode's test problem: the scalar test equation along the direction
 * d = lambda / |lambda| (R(s d) after one step of size s), or the
 * second-order one with w = 1 and zeta = -Re d (spectral radius of the map
 * at hw = s).  One system and stepper, reused for every s. */
typedef struct {
    ts_system *sys;
    ts_stepper *st;
    int second;
    int run;      /* carries state: judged by the map a run iterates */
    int implicit;
    double limit; /* growth means |R| > limit */
} mode_probe;

static void probe_close(mode_probe *p)
{
    ts_stepper_free(p->st);
    ts_system_free(p->sys);
    p->st = NULL, p->sys = NULL;
}

/* The probe of x'' = -x - 2 zeta x' (second_order), or of x' = (-zeta +
 * i omega) x */
static int probe_start(const ts_mode_test *test, int carries_state, double zeta, double omega,
                       mode_probe *p)
{
    int implicit = (test->type->flags & TS_IMPLICIT) != 0, second = test->second_order;
    *p = (mode_probe){NULL, NULL, second, carries_state, implicit,
                      1.0 + (implicit        ? TS_STABILITY_GROWTH_TOL_IMPLICIT
                             : carries_state ? TS_RUN_MAP_GROWTH_TOL
                                             : TS_STABILITY_GROWTH_TOL)};
    int s = second ? make_osc2(1.0, zeta, &p->sys) : make_test1d(zeta, omega, &p->sys);
    if (!s)
        s = ts_stepper_new(test->type, p->sys, test->opt, &p->st);
    if (s)
        probe_close(p);
    return s;
}

static int probe_open(const ts_mode_test *test, int carries_state, double dir_re, double dir_im,
                      mode_probe *p)
{
    double norm = hypot(dir_re, dir_im);
    if (!(norm > 0.0))
        return ts_error(TS_ERR_INPUT, "stability interval: direction is zero");
    dir_re /= norm, dir_im /= norm;
    /* on an axis, make the other part exactly zero (omega = 0: the real system) */
    if (fabs(dir_re) < 1e-14)
        dir_re = 0.0;
    if (fabs(dir_im) < 1e-14)
        dir_im = 0.0;
    return probe_start(test, carries_state, -dir_re, dir_im, p);
}

/* The probe of mode v (carries_state: by the map a run iterates) */
static int probe_view(const ts_mode_test *test, int carries_state, const mode_view *v,
                      mode_probe *p)
{
    return v->own ? probe_start(test, carries_state, v->zeta, 0.0, p)
                  : probe_open(test, carries_state, v->re, v->im, p);
}

/* The probe of mode v, judged as a run of the stepper is: by the map a run
 * iterates when the stepper carries state */
static int probe_for(const ts_mode_test *test, const mode_view *v, mode_probe *p)
{
    int memoryless = 1, s = ts_stepper_memoryless(test->type, test->opt, &memoryless);
    if (s && s != TS_ERR_UNSUPPORTED)
        return s;
    return probe_view(test, !memoryless, v, p);
}

/* --- the map a run iterates ------------------------------------------------------ */

/* A stepper that carries state between steps (Verlet's kept force, BDF2's
 * history) iterates, after its start, one linear map A on the observed state
 * (x, v; or Re y, Im y) together with what it keeps.  Its eigenvalues are
 * found from a run alone (Prony's method): after TS_RUN_START steps the
 * observed sequence y_n satisfies A's minimal polynomial,
 *     y_{n+d} + c_{d-1} y_{n+d-1} + ... + c_0 y_n = 0,
 * fitted by least squares over TS_RUN_STEPS steps for d = 1, 2, ... up to
 * TS_RUN_MAP_MAX; the smallest d that leaves a relative residual below the
 * tolerance is A's degree as the run sees it, and the polynomial's roots
 * (the eigenvalues of its companion matrix, LAPACK dgeev) are the run map's
 * eigenvalues: exact up to round-off and the solver's tolerance, with no
 * knowledge of the stepper's formula. */
#define TS_RUN_START 2
#define TS_RUN_STEPS (3 * TS_RUN_MAP_MAX + 4)

/* observed components of the probe system after a step */
static int observed(const ts_system *sys, int second, double y[2])
{
    y[0] = sys->x[0];
    y[1] = second ? sys->v[0] : (sys->n > 1 ? sys->x[1] : 0.0);
    return second || sys->n > 1 ? 2 : 1;
}

/* least-squares fit of degree d to seq (ncomp components, len steps);
 * relative residual returned, coefficients c[0..d-1].  The equations are
 * not scaled one by one: an implicit stepper's error is about its solver's
 * tolerance times max(1, |y|), so the largest terms are the most accurate. */
static double prony_fit(const ts_lapack *la, const double *seq, int ncomp, int len, int d, double *c)
{
    int rows = 0;
    double a[TS_RUN_STEPS * 2 * TS_RUN_MAP_MAX], rhs[TS_RUN_STEPS * 2], norm = 0.0;
    for (int n = 0; n + d < len; n++) {
        for (int i = 0; i < ncomp; i++, rows++) {
            for (int j = 0; j < d; j++) /* column-major, leading dimension TS_RUN_STEPS * 2 */
                a[j * TS_RUN_STEPS * 2 + rows] = seq[(n + j) * 2 + i];
            rhs[rows] = -seq[(n + d) * 2 + i];
            norm += rhs[rows] * rhs[rows];
        }
    }
    if (rows < d + 1 || !(norm > 0.0))
        return rows == 0 ? 0.0 : INFINITY;
    double a0[TS_RUN_STEPS * 2 * TS_RUN_MAP_MAX], b0[TS_RUN_STEPS * 2];
    memcpy(a0, a, sizeof a), memcpy(b0, rhs, sizeof rhs);
    if (la->dgels(TS_LAPACK_COL_MAJOR, 'N', rows, d, 1, a, TS_RUN_STEPS * 2, rhs,
                  TS_RUN_STEPS * 2))
        return INFINITY;
    double res = 0.0;
    for (int r = 0; r < rows; r++) {
        double e = -b0[r];
        for (int j = 0; j < d; j++)
            e += a0[j * TS_RUN_STEPS * 2 + r] * rhs[j];
        res += e * e;
    }
    memcpy(c, rhs, (size_t)d * sizeof *c);
    return sqrt(res / norm);
}

/* roots of x^d + c[d-1] x^{d-1} + ... + c[0]: the companion matrix's eigenvalues */
static int poly_roots(const ts_lapack *la, const double *c, int d, ts_run_map *m)
{
    double comp[TS_RUN_MAP_MAX * TS_RUN_MAP_MAX] = {0};
    for (int i = 0; i < d; i++) {
        comp[(d - 1) * d + i] = -c[i]; /* last column (column-major) */
        if (i > 0)
            comp[(i - 1) * d + i] = 1.0;
    }
    if (la->dgeev(TS_LAPACK_COL_MAJOR, 'N', 'N', d, comp, d, m->re, m->im, NULL, 1, NULL, 1))
        return ts_error(TS_ERR_LINEAR, "run map: eigenvalues of a degree-%d companion matrix", d);
    m->degree = d;
    m->rho = 0.0;
    for (int i = 0; i < d; i++)
        m->rho = fmax(m->rho, hypot(m->re[i], m->im[i]));
    return TS_OK;
}

/* the run map of the probe at step s (see above); a failed or non-finite
 * run gives rho = INFINITY with degree 0 */
static int probe_run_map(mode_probe *p, double s, ts_run_map *m)
{
    double seq[(TS_RUN_START + TS_RUN_STEPS) * 2], y0[2] = {1.0, 0.37}, c[TS_RUN_MAP_MAX];
    int ncomp = 1;
    const ts_lapack *la = ts_ext_need("lapack", "the run map", "LAPACK");
    *m = (ts_run_map){.degree = 0, .rho = INFINITY};
    if (!la)
        return TS_ERR_UNSUPPORTED;
    ts_system_set_y(p->sys, y0);
    ts_stepper_reset(p->st);
    for (int k = 0; k < TS_RUN_START + TS_RUN_STEPS; k++) {
        if (ts_stepper_step(p->st, p->sys, (double)k * s, s))
            return TS_OK;
        ncomp = observed(p->sys, p->second, &seq[2 * k]);
        if (!isfinite(seq[2 * k]) || !isfinite(seq[2 * k + 1]))
            return TS_OK;
    }
    const double *run = seq + 2 * TS_RUN_START;
    double best = INFINITY, tol = p->implicit ? 1e-6 : 1e-9;
    int best_d = 1;
    for (int d = 1; d <= TS_RUN_MAP_MAX; d++) {
        double res = prony_fit(la, run, ncomp, TS_RUN_STEPS, d, c);
        if (res == 0.0) { /* the run is exactly zero: every root is 0 */
            *m = (ts_run_map){.degree = 1, .rho = 0.0};
            return TS_OK;
        }
        if (res < best)
            best = res, best_d = d;
        if (res <= tol)
            break;
    }
    prony_fit(la, run, ncomp, TS_RUN_STEPS, best_d, c);
    return poly_roots(la, c, best_d, m);
}

/* |R(s d)| or the map's spectral radius at hw = s; a failed step is growth. */
static double probe_growth(mode_probe *p, double s)
{
    double re, im;
    if (p->run) {
        ts_run_map m;
        return probe_run_map(p, s, &m) ? INFINITY : m.rho;
    }
    if (p->second) {
        double map[4];
        if (osc2_map(p->st, p->sys, s, map))
            return INFINITY;
        map_eig(map, &re, &im);
    } else if (one_step(p->st, p->sys, s, &re, &im)) {
        return INFINITY;
    }
    double g = hypot(re, im);
    return isnan(g) ? INFINITY : g;
}

int ts_oscillator_growth(const ts_stepper_type *type, const ts_solver_options *opt, double hw,
                         double zeta, double *rho)
{
    mode_probe p;
    const mode_view own = {.own = 1, .w = 1.0, .zeta = zeta};
    int s = probe_for(&(ts_mode_test){type, opt, 1}, &own, &p);
    if (s)
        return s;
    *rho = probe_growth(&p, hw);
    probe_close(&p);
    return TS_OK;
}

int ts_mode_growth(const ts_mode_test *test, double re, double im, double *rho)
{
    double mag = hypot(re, im);
    if (!(mag > 0.0)) {
        *rho = 1.0;
        return TS_OK;
    }
    if (test->second_order)
        return ts_oscillator_growth(test->type, test->opt, mag, -re / mag, rho);
    mode_probe p;
    int s = probe_for(test, &(mode_view){re, im, 0, 0.0, 0.0}, &p);
    if (s)
        return s;
    *rho = probe_growth(&p, mag);
    probe_close(&p);
    return TS_OK;
}

int ts_mode_run_map(const ts_mode_test *test, double re, double im, ts_run_map *m)
{
    double mag = hypot(re, im);
    *m = (ts_run_map){.degree = 1, .rho = 1.0, .re = {1.0}};
    if (!(mag > 0.0))
        return TS_OK;
    mode_probe p;
    int s = probe_open(test, 1, re, im, &p);
    if (s)
        return s;
    s = probe_run_map(&p, mag, m);
    probe_close(&p);
    return s;
}

/* the first growth point along the ray: a 1 % geometric scan from
 * TS_STABILITY_S_MIN, then bisection to 1e-12 relative */
static double probe_interval(mode_probe *p)
{
    double lo = TS_STABILITY_S_MIN, hi;
    if (probe_growth(p, lo) > p->limit)
        return 0.0;
    for (;;) {
        hi = lo * 1.01;
        if (hi > TS_STABILITY_S_MAX)
            return INFINITY;
        if (probe_growth(p, hi) > p->limit)
            break;
        lo = hi;
    }
    while (hi - lo > 1e-12 * hi) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi)
            break;
        if (probe_growth(p, mid) > p->limit)
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

int ts_stability_interval(const ts_stepper_type *type, const ts_solver_options *opt,
                          double dir_re, double dir_im, double *r)
{
    return ts_stability_radius(&(ts_mode_test){type, opt, 0}, dir_re, dir_im, r);
}

/* Mode v's radius */
static int view_radius(const ts_mode_test *test, const mode_view *v, double *r)
{
    mode_probe p;
    int s = probe_for(test, v, &p);
    if (s)
        return s;
    *r = probe_interval(&p);
    probe_close(&p);
    return TS_OK;
}

int ts_stability_radius(const ts_mode_test *test, double re, double im, double *r)
{
    return view_radius(test, &(mode_view){re, im, 0, 0.0, 0.0}, r);
}

/* --- the binding mode of a spectrum -------------------------------------------- */

/* The real eigenvalues of a second-order system that binding_overdamped
 * has taken as their own oscillators: the modes, w and zeta */
#define OVERDAMPED_MAX 8
typedef struct {
    int count;
    size_t mode[OVERDAMPED_MAX];
    double w[OVERDAMPED_MAX], zeta[OVERDAMPED_MAX];
} overdamped_list;

static mode_view view_of(const ts_spectrum *sp, size_t k, double recut, const overdamped_list *od)
{
    mode_view v = {sp->re[k], sp->im[k], 0, 0.0, 0.0};
    if (fabs(v.re) <= recut)
        v.re = 0.0;
    double mag = hypot(v.re, v.im);
    v.w = mag, v.zeta = mag > 0.0 ? 0.0 - v.re / mag : 0.0; /* +0 when undamped */
    for (int i = 0; od && i < od->count; i++)
        if (od->mode[i] == k)
            v.own = 1, v.w = od->w[i], v.zeta = od->zeta[i];
    return v;
}


/* Mode v's radius and the step it allows, r / |lambda| (r / w on its own
 * oscillator) */
static int mode_dt(const ts_mode_test *test, const mode_view *v, double *dt, double *r)
{
    int s = view_radius(test, v, r);
    if (!s)
        *dt = isinf(*r) ? INFINITY : *r / view_rate(v);
    return s;
}

/* mode k (viewed as v) binds at dt with radius r */
static void bind(ts_binding *b, size_t k, const mode_view *v, double dt, double r)
{
    b->dt_pred = dt, b->r = r, b->mode = k, b->re = v->re, b->im = v->im;
    b->overdamped = v->own, b->w = v->w, b->zeta = v->zeta;
}

/* The candidates for the binding mode among the modes above the rigid cut
 * (cand[4]: the stiffest; forward Euler's 2|Re|/|lambda|^2 smallest; the
 * largest |Im|; the largest -Re); modes growing by themselves are counted
 * in b->unstable, since no step makes them decay. */
static void binding_candidates(const ts_spectrum *sp, double cut, double recut, ts_binding *b,
                               size_t cand[4])
{
    double best[4] = {-1.0, -1.0, -1.0, -1.0};
    for (int c = 0; c < 4; c++)
        cand[c] = (size_t)-1;
    for (size_t k = 0; k < sp->count; k++) {
        double re = sp->re[k], im = sp->im[k], mag = hypot(re, im);
        if (im < 0.0 || !(mag > cut))
            continue;
        if (fabs(re) <= recut)
            re = 0.0;
        if (re > 0.0) {
            b->unstable++;
            continue;
        }
        double key[4] = {mag, re < 0.0 ? mag * mag / (-2.0 * re) : INFINITY, fabs(im), -re};
        for (int c = 0; c < 4; c++)
            if (key[c] > best[c])
                best[c] = key[c], cand[c] = k;
    }
}

/* Every other mode: one step at the current best; growing there means its
 * own radius is smaller (the stable set along a ray is taken to be an
 * interval from 0, as the radius's definition assumes). */
static int binding_others(const ts_mode_test *test, const ts_spectrum *sp, double cut, double recut,
                          const overdamped_list *od, ts_binding *b)
{
    int s;
    for (size_t k = 0; k < sp->count && b->dt_pred > 0.0; k++) {
        double mag = hypot(sp->re[k], sp->im[k]);
        if (sp->im[k] < 0.0 || !(mag > cut) || k == b->mode)
            continue;
        mode_view v = view_of(sp, k, recut, od);
        if (v.re > 0.0)
            continue;
        mode_probe p;
        if ((s = probe_view(test, b->carries_state, &v, &p)))
            return s;
        double at = fmin(b->dt_pred * view_rate(&v), TS_STABILITY_S_MAX);
        int grows = probe_growth(&p, at) > p.limit;
        probe_close(&p);
        if (!grows)
            continue;
        double dt, r;
        if ((s = mode_dt(test, &v, &dt, &r)))
            return s;
        b->radii++;
        if (dt < b->dt_pred)
            bind(b, k, &v, dt, r);
    }
    return TS_OK;
}

/* The oscillator x'' = -w^2 x - 2 zeta w x' that the real eigenvalue
 * lambda < 0 of mode k belongs to: w^2 the Rayleigh quotient of its shape
 * phi (the eigenvector's x part) with M^-1 df/dx, and zeta from lambda^2 +
 * 2 zeta w lambda + w^2 = 0, so that lambda is one of the oscillator's
 * roots; exact for a mode that decouples (proportional damping).  *found 1
 * when that oscillator is overdamped (zeta > 1). */
static int real_oscillator(const ts_spectrum *sp, size_t k, double *w, double *zeta, int *found)
{
    size_t n = sp->n, m = sp->m;
    double lambda = sp->re[k], *x = malloc((2 * n + 1) * sizeof *x), num = 0.0, den = 0.0;
    *found = 0;
    if (!x)
        return ts_error(TS_ERR_NOMEM, "an overdamped mode");
    int s = ts_spectrum_mode(NULL, sp, k, x, x + n);
    for (size_t j = 0; j < m && !s; j++) {
        double pj = x[sp->free_[j]], kp = 0.0; /* (M^-1 df/dx phi)_j, row j */
        for (size_t i = 0; i < m; i++)
            kp += sp->kx_[i * m + j] * x[sp->free_[i]];
        num += pj * kp, den += pj * pj;
    }
    free(x);
    double w2 = den > 0.0 ? -num / den : 0.0;
    if (!s && w2 > 0.0 && lambda < 0.0) {
        *w = sqrt(w2);
        *zeta = -(lambda * lambda + w2) / (2.0 * *w * lambda);
        *found = *zeta > 1.0;
    }
    return s;
}

/* On the second-order equation a real eigenvalue taken as a critically
 * damped oscillator of w = |lambda| predicts below the limit of the
 * overdamped mode it belongs to (its two real roots lambda_1 lambda_2 =
 * w^2): while the binding mode is such an eigenvalue, its own oscillator
 * (real_oscillator; dense spectra, where M^-1 df/dx is at hand) replaces
 * it, and the other modes are scanned again at the larger dt_pred. */
static int binding_overdamped(const ts_mode_test *test, const ts_spectrum *sp, double cut,
                              double recut, ts_binding *b)
{
    overdamped_list od = {0};
    while (b->mode != (size_t)-1 && b->im == 0.0 && b->re < 0.0 && !b->overdamped &&
           od.count < OVERDAMPED_MAX) {
        int found, s;
        double w, zeta, dt, r;
        if ((s = real_oscillator(sp, b->mode, &w, &zeta, &found)) || !found)
            return s;
        od.mode[od.count] = b->mode, od.w[od.count] = w, od.zeta[od.count++] = zeta;
        mode_view v = view_of(sp, b->mode, recut, &od);
        if ((s = mode_dt(test, &v, &dt, &r)))
            return s;
        b->radii++;
        bind(b, b->mode, &v, dt, r);
        if ((s = binding_others(test, sp, cut, recut, &od, b)))
            return s;
    }
    return TS_OK;
}

/* Arnoldi: an unseen mode (|lambda| < floor) binds only if its radius is
 * below dt_pred * floor; the ranges of zeta (on a 0.01 grid, widened by
 * one grid step) where that can be. */
static int binding_unseen(const ts_mode_test *test, const ts_spectrum *sp, ts_binding *b)
{
    double q = b->dt_pred * sp->lambda_floor;
    int open = 0, s;
    for (int j = 0; j <= 100; j++) {
        double zeta = j / 100.0, r;
        if ((s = ts_stability_radius(test, -zeta, sqrt(fmax(0.0, 1.0 - zeta * zeta)), &r)))
            return s;
        int can = r < q;
        if (can && !open) {
            if (b->zeta_ranges == TS_ZETA_RANGES) { /* too many: one to the end */
                b->zeta_hi[TS_ZETA_RANGES - 1] = 1.0;
                break;
            }
            b->zeta_lo[b->zeta_ranges] = fmax(0.0, zeta - 0.01);
            b->zeta_hi[b->zeta_ranges++] = 1.0;
            open = 1;
        } else if (!can && open) {
            b->zeta_hi[b->zeta_ranges - 1] = zeta;
            open = 0;
        }
    }
    return TS_OK;
}

int ts_stability_binding(const ts_mode_test *test, const ts_spectrum *sp, ts_binding *b)
{
    *b = (ts_binding){.dt_pred = INFINITY, .mode = (size_t)-1, .r = INFINITY,
                      .second_order = test->second_order};
    double lmax = sp->lambda_max;
    if (!(lmax > 0.0))
        return TS_OK; /* nothing moves, or no stiffness: no limit */
    double cut = TS_RIGID_CUT * lmax, recut = TS_REAL_ROUNDOFF * lmax;
    size_t cand[4];
    binding_candidates(sp, cut, recut, b, cand);
    int memoryless = 1, s = ts_stepper_memoryless(test->type, test->opt, &memoryless);
    if (s && s != TS_ERR_UNSUPPORTED)
        return s;
    b->carries_state = !memoryless;
    for (int c = 0; c < 4; c++) {
        if (cand[c] == (size_t)-1)
            continue;
        size_t k = cand[c];
        mode_view v = view_of(sp, k, recut, NULL);
        double dt, r;
        if ((s = mode_dt(test, &v, &dt, &r)))
            return s;
        b->radii++;
        if (dt < b->dt_pred || b->mode == (size_t)-1)
            bind(b, k, &v, dt, r);
    }
    if ((s = binding_others(test, sp, cut, recut, NULL, b)))
        return s;
    if (test->second_order && sp->method == TS_EIG_DENSE && sp->order == 2 &&
        (s = binding_overdamped(test, sp, cut, recut, b)))
        return s;
    b->stiffest = b->mode != (size_t)-1 && hypot(b->re, b->im) >= (1.0 - 1e-9) * lmax;
    if (sp->method == TS_EIG_ARNOLDI && sp->lambda_floor > 0.0 && b->dt_pred > 0.0 &&
        isfinite(b->dt_pred))
        return binding_unseen(test, sp, b);
    return TS_OK;
}

int ts_binding_growth(const ts_mode_test *test, const ts_binding *b, double h, double *rho)
{
    if (b->overdamped)
        return ts_oscillator_growth(test->type, test->opt, h * b->w, b->zeta, rho);
    return ts_mode_growth(test, h * b->re, h * b->im, rho);
}

int ts_binding_amplification(const ts_mode_test *test, const ts_binding *b, double h,
                             double *r_re, double *r_im)
{
    if (b->overdamped)
        return ts_oscillator_amplification(test->type, test->opt, h * b->w, b->zeta, r_re, r_im);
    return ts_mode_amplification(test, h * b->re, h * b->im, r_re, r_im);
}

double ts_stability_predict(const ts_stiff_mode *mode, double r)
{
    double mag = hypot(mode->re, mode->im);
    if (!(mag > 0.0) || isinf(r))
        return INFINITY;
    return r / mag;
}

/* --- the stiffest mode --------------------------------------------------------- */

/* out = S M^-1 (df/dx) u (which = 0) or S M^-1 (df/dv) u (which = 1) at the
 * linearization point, S the pin filter. */
typedef struct {
    ts_system *sys;
    const double *x, *v; /* linearization point (copies owned by the caller) */
    int fd;              /* forward differences of forces */
    double *f0, *xp, *fp; /* n each, for differences */
} jac_op;

static int jac_apply(jac_op *op, int which, const double *u, double *out)
{
    ts_system *sys = op->sys;
    size_t n = sys->n;
    int s;
    if (!op->fd) {
        s = ts_system_jacobian_mul(sys, u, out);
    } else {
        /* (f(x + eps u) - f(x)) / eps, eps ~ sqrt(machine eps) relative */
        double un = ts_vec_norm_inf(n, u);
        if (un == 0.0) {
            ts_vec_zero(n, out);
            return TS_OK;
        }
        const double *base = which ? op->v : op->x;
        double eps = sqrt(DBL_EPSILON) * fmax(1.0, ts_vec_norm_inf(n, base)) / un;
        ts_vec_copy(n, base, op->xp);
        ts_vec_axpy(n, eps, u, op->xp);
        s = which ? ts_system_forces(sys, 0.0, op->x, op->xp, op->fp)
                  : ts_system_forces(sys, 0.0, op->xp, op->v, op->fp);
        if (s)
            return s;
        for (size_t i = 0; i < n; i++)
            out[i] = (op->fp[i] - op->f0[i]) / eps;
    }
    if (s)
        return s;
    for (size_t i = 0; i < n; i++)
        out[i] /= sys->mass[i];
    ts_system_filter(sys, out);
    return TS_OK;
}

static double mdot(const ts_system *sys, const double *a, const double *b)
{
    double d = 0.0;
    for (size_t i = 0; i < sys->n; i++)
        d += sys->mass[i] * a[i] * b[i];
    return d;
}

/* |a - p b - q c|_M */
static double mresid(const ts_system *sys, const double *a, double p, const double *b,
                     double q, const double *c)
{
    double d = 0.0;
    for (size_t i = 0; i < sys->n; i++) {
        double e = a[i] - p * b[i] - (c ? q * c[i] : 0.0);
        d += sys->mass[i] * e * e;
    }
    return sqrt(d);
}

/* The root of largest modulus of mu^2 - p mu - q = 0, with im >= 0. */
static double complex dominant_root(double complex p, double complex q)
{
    double complex d = csqrt(p * p / 4.0 + q);
    double complex a = p / 2.0 + d, b = p / 2.0 - d;
    double complex r = cabs(a) >= cabs(b) ? a : b;
    return cimag(r) < 0.0 ? conj(r) : r;
}

/* One power iteration: u (|u|_M = 1), w1 = A u and w2 = A^2 u, and the M
 * norms n1, n2 of w1 and w2. */
typedef struct {
    const double *u, *w1, *w2;
    double n1, n2;
} power_step;

/* The iteration's estimates of the dominant eigenvalue, each kept in *mu
 * when its relative residual beats *best: real, A u = mu u (the Rayleigh
 * quotient); or a complex pair, A^2 u = p A u + q u by least squares in
 * the M norm, mu its root of largest modulus. */
static void power_estimate(const ts_system *sys, const power_step *ps, double *best,
                           double complex *mu)
{
    const double *u = ps->u, *w1 = ps->w1, *w2 = ps->w2;
    double n1 = ps->n1, n2 = ps->n2;
    double rq = mdot(sys, u, w1);
    double res = mresid(sys, w1, rq, u, 0.0, NULL) / n1;
    if (res < *best)
        *best = res, *mu = rq;
    double g11 = n1 * n1, g12 = mdot(sys, w1, u), g22 = 1.0;
    double det = g11 * g22 - g12 * g12;
    if (res > TS_POWER_TOL && det > 1e-10 * g11 * g22 && n2 > 0.0) {
        double b1 = mdot(sys, w1, w2), b2 = mdot(sys, u, w2);
        double p = (b1 * g22 - g12 * b2) / det, q = (g11 * b2 - g12 * b1) / det;
        double res2 = mresid(sys, w2, p, w1, q, u) / n2;
        if (res2 < *best)
            *best = res2, *mu = dominant_root(p, q);
    }
}

int ts_stiffest_mode(ts_system *sys, ts_stiff_mode *mode)
{
    return ts_stiffest_mode_vector(sys, mode, NULL);
}

int ts_stiffest_mode_vector(ts_system *sys, ts_stiff_mode *mode, double *vector)
{
    size_t n = sys->n;
    *mode = (ts_stiff_mode){0};
    double *block = calloc(8 * n, sizeof *block);
    if (!block)
        return ts_error(TS_ERR_NOMEM, "power iteration");
    double *x = block, *v = block + n, *u = block + 2 * n, *w1 = block + 3 * n,
           *w2 = block + 4 * n;
    jac_op op = {sys, x, sys->order == 2 ? v : NULL, !ts_system_has_jacobian(sys),
                 block + 5 * n, block + 6 * n, block + 7 * n};
    ts_vec_copy(n, sys->x, x);
    if (sys->order == 2)
        ts_vec_copy(n, sys->v, v);
    mode->finite_differences = op.fd;
    int s = op.fd ? ts_system_forces(sys, 0.0, x, op.v, op.f0)
                  : ts_system_linearize(sys, 0.0, x, op.v, 1.0, 0.0);
    if (s)
        goto done;

    ts_fill_pseudo_random(n, 12345u, u); /* deterministic start */
    ts_system_filter(sys, u);
    double un = sqrt(mdot(sys, u, u));
    if (!(un > 0.0)) { /* everything pinned: nothing moves */
        mode->converged = 1;
        goto done;
    }
    ts_vec_scale(n, 1.0 / un, u);

    double complex mu = 0.0;
    double best = INFINITY;
    for (int it = 1; it <= TS_POWER_MAX_ITER; it++) {
        mode->iterations = it;
        if ((s = jac_apply(&op, 0, u, w1)) || (s = jac_apply(&op, 0, w1, w2)))
            goto done;
        double n1 = sqrt(mdot(sys, w1, w1)), n2 = sqrt(mdot(sys, w2, w2));
        if (!(n1 > 0.0)) { /* A u = 0: no stiffness seen */
            mu = 0.0, best = 0.0;
            break;
        }
        if (!isfinite(n1) || !isfinite(n2)) {
            s = ts_error(TS_ERR_DIVERGED, "power iteration: non-finite Jacobian product at "
                                          "the initial state (|J u| = %g, |J^2 u| = %g): "
                                          "the system's stiffness, set by its parameters, is "
                                          "beyond double precision's range", n1, n2);
            goto done;
        }
        power_estimate(sys, &(power_step){u, w1, w2, n1, n2}, &best, &mu);
        if (best <= TS_POWER_TOL)
            break;
        if (!(n2 > 0.0))
            break;
        for (size_t i = 0; i < n; i++)
            u[i] = w2[i] / n2;
        /* keep |u|_M = 1 exactly */
        ts_vec_scale(n, 1.0 / sqrt(mdot(sys, u, u)), u);
    }
    mode->residual = best;
    mode->converged = best <= TS_POWER_TOL;
    mode->mu_re = creal(mu), mode->mu_im = cimag(mu);

    double complex lambda = mu;
    if (sys->order == 2) {
        /* damping along the mode: c = <u, M^-1 df/dv u>_M = u^T df/dv u */
        if (!op.fd && (s = ts_system_linearize(sys, 0.0, x, v, 0.0, 1.0)))
            goto done;
        if ((s = jac_apply(&op, 1, u, w1)))
            goto done;
        mode->damping = mdot(sys, u, w1);
        /* x'' = mu x + c x'  =>  lambda^2 - c lambda - mu = 0 */
        lambda = dominant_root(mode->damping, mu);
    }
    mode->re = creal(lambda), mode->im = cimag(lambda);
    if (vector)
        ts_vec_copy(n, u, vector);
done:
    free(block);
    return s;
}

/* --- the measured critical step ------------------------------------------------ */

ts_stability_options ts_default_stability_options(void)
{
    return (ts_stability_options){.t_end = 0.0, .bound = 1e4, .dt_min = 0.0, .dt_max = 0.0,
                                  .rel_tol = 0.005, .recheck = 2.0, .rate = 0.0,
                                  .first_step = 2.0, .growth_tol = 0.0,
                                  .seed = NULL, .seed_v = NULL, .seed_size = 1e-6,
                                  .x0 = NULL, .v0 = NULL, .t0 = 0.0, .linearized = 1};
}

/* The linearization at a state (x*, v*, t*) as a system of its own:
 *     M x'' = Kx x + Kv v   (order 1: M x' = Kx x),
 * Kx = df/dx and Kv = df/dv at the state, x and v the deviations from it.
 * Forces and products are the underlying system's Jacobian products at the
 * fixed state (central differences without them). */
typedef struct {
    ts_system base;
    ts_system *under;
    ts_system *under_v;  /* fast path: a second instance linearized for df/dv */
    double *xs, *vs, ts; /* the state of the linearization (n each) */
    int fd;
    double *tmp, *work;  /* n and 3n doubles */
} lin_sys;

static void lin_destroy(ts_system *sys)
{
    lin_sys *l = (lin_sys *)sys;
    ts_system_free(l->under);
    ts_system_free(l->under_v);
    free(l->xs);
    ts_system_release(sys);
    free(l);
}

static int lin_mul(ts_system *sys, int which, const double *u, double *out)
{
    lin_sys *l = (lin_sys *)sys;
    if (l->under_v) /* the fast path: df/dx and df/dv cached once, at the fixed state */
        return ts_system_jacobian_mul(which ? l->under_v : l->under, u, out);
    ts_linearization at = {l->under, l->ts, l->xs, l->under->order == 2 ? l->vs : NULL, l->fd,
                           l->work};
    return ts_linearization_mul(&at, which, u, out);
}

static int lin_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    (void)t;
    lin_sys *l = (lin_sys *)sys;
    int s = lin_mul(sys, 0, x, f);
    if (!s && sys->order == 2 && !(s = lin_mul(sys, 1, v, l->tmp)))
        ts_vec_axpy(sys->n, 1.0, l->tmp, f);
    return s;
}

static int lin_dfdx(ts_system *sys, double t, const double *x, const double *v,
                    const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    return lin_mul(sys, 0, u, out);
}

static int lin_dfdv(ts_system *sys, double t, const double *x, const double *v,
                    const double *u, double *out)
{
    (void)t, (void)x, (void)v;
    return lin_mul(sys, 1, u, out);
}

/* the quadratic energy of the linearization: v^T M v / 2 - x^T Kx x / 2
 * (exact for a symmetric Kx, as springs have at rest) */
static int lin_energy(ts_system *sys, double t, const double *x, const double *v,
                      double *kinetic, double *potential)
{
    (void)t;
    lin_sys *l = (lin_sys *)sys;
    size_t n = sys->n;
    int s = lin_mul(sys, 0, x, l->tmp);
    if (s)
        return s;
    *potential = -0.5 * ts_vec_dot(n, x, l->tmp);
    *kinetic = 0.0;
    if (sys->order == 2)
        for (size_t i = 0; i < n; i++)
            *kinetic += 0.5 * sys->mass[i] * v[i] * v[i];
    return TS_OK;
}

static const ts_system_ops lin_ops = {.destroy = lin_destroy, .forces = lin_forces,
                                      .dfdx_mul = lin_dfdx, .dfdv_mul = lin_dfdv,
                                      .energy = lin_energy};
static const ts_param_def lin_params[] = {{NULL, 0, NULL, NULL}};
static const ts_system_type lin_type = {"linearization",
                                        "M x'' = df/dx x + df/dv v at a fixed state",
                                        lin_params, NULL};

/* Wrap `under` (taken over) at its stored state, time t; zero deviation. */
static int make_linearized(ts_system *under, double t, ts_system **out)
{
    size_t n = under->n;
    lin_sys *l = calloc(1, sizeof *l);
    if (!l) {
        ts_system_free(under);
        return ts_error(TS_ERR_NOMEM, "linearized system");
    }
    int s = ts_system_init(&l->base, &lin_ops, &lin_type, under->order, n);
    if (s) {
        free(l);
        ts_system_free(under);
        return s;
    }
    l->under = under;
    l->ts = t;
    l->fd = !ts_system_has_jacobian(under);
    l->xs = calloc(6 * n + 1, sizeof *l->xs);
    if (!l->xs || (under->pinned && ts_system_alloc_pins(&l->base))) {
        lin_destroy(&l->base);
        return ts_error(TS_ERR_NOMEM, "linearized system");
    }
    l->vs = l->xs + n, l->tmp = l->xs + 2 * n, l->work = l->xs + 3 * n;
    ts_vec_copy(n, under->x, l->xs);
    int moving = 0;
    if (under->order == 2) {
        ts_vec_copy(n, under->v, l->vs);
        moving = ts_vec_norm_inf(n, under->v) > 0.0;
    }
    ts_vec_copy(n, under->mass, l->base.mass);
    if (under->pinned)
        memcpy(l->base.pinned, under->pinned, n);
    l->base.dim = under->dim;
    l->base.frame_row = under->frame_row;
    /* spring damping's position derivative is not symmetric where v != 0 */
    l->base.jacobian_symmetric = under->jacobian_symmetric && !moving && !l->fd;
    *out = &l->base;
    return TS_OK;
}

/* A system with the fast path (linearize once, then products from cached
 * blocks: a spring network's per-spring 3x3 blocks) answers the
 * linearization's products from two instances linearized once, one for
 * df/dx and one for df/dv, not from the generic products that rebuild the
 * blocks each time (on the 20 x 20 cloth a linearized run's step then costs
 * about a plain step's force evaluation, not several). */
static int linearized_fast_path(lin_sys *l, const ts_system_type *stype, const ts_params *params)
{
    ts_system *u = l->under;
    if (l->fd || !(u->ops->linearize && u->ops->jacobian_mul))
        return TS_OK;
    int s = ts_system_new(stype, params, &l->under_v);
    if (s)
        return s;
    const double *v = u->order == 2 ? l->vs : NULL;
    s = ts_system_linearize(u, l->ts, l->xs, v, 1.0, 0.0);
    if (!s)
        s = ts_system_linearize(l->under_v, l->ts, l->xs, v, 0.0, 1.0);
    if (s) {
        ts_system_free(l->under_v);
        l->under_v = NULL;
    }
    return s;
}

/* ||[dx; dv]|| / w: sqrt(sum over free dofs of m (dx^2 + (dv / w)^2)), the
 * documented sqrt(sum m (w^2 dx^2 + dv^2)) over w; order 1: sqrt(sum m dx^2).
 * With sketch, also the TS_RECURRENCE_WIDTH fixed linear functionals of
 * [dx; dv / w] that beats_only fits a recurrence to. */
static double pert_norm(const ts_system *a, const ts_system *b, double w, double *sketch)
{
    double d = 0.0;
    if (sketch)
        for (int c = 0; c < TS_RECURRENCE_WIDTH; c++)
            sketch[c] = 0.0;
    for (size_t i = 0; i < a->n; i++) {
        if (a->pinned && a->pinned[i])
            continue;
        /* |d| / w: the same verdicts as |d| (only ratios are compared), and
         * no overflow of w^2 for a very stiff mode */
        double dx = a->x[i] - (b ? b->x[i] : 0.0), e = dx * dx, dv = 0.0;
        if (a->order == 2) {
            dv = (a->v[i] - (b ? b->v[i] : 0.0)) / w;
            e += dv * dv;
        }
        d += a->mass[i] * e;
        if (sketch) /* linear functionals of d: entries x_i and v_i of y */
            for (int c = 0; c < TS_RECURRENCE_WIDTH; c++)
                sketch[c] += ts_recurrence_weight(c, i) * dx +
                             ts_recurrence_weight(c, a->n + i) * dv;
    }
    return sqrt(d);
}

/* one of the two runs: a fresh system at the start state, a stepper */
static int open_run(const ts_stability_problem *pb, const ts_stability_options *opt,
                    ts_system **sys, ts_stepper **st)
{
    int s = ts_system_new(pb->stype, pb->params, sys);
    if (s)
        return s;
    if (opt->x0)
        ts_vec_copy((*sys)->n, opt->x0, (*sys)->x);
    if (opt->v0 && (*sys)->order == 2)
        ts_vec_copy((*sys)->n, opt->v0, (*sys)->v);
    if (opt->linearized && (s = make_linearized(*sys, opt->t0, sys))) {
        *sys = NULL;
        return s;
    }
    if (opt->linearized && (s = linearized_fast_path((lin_sys *)*sys, pb->stype, pb->params))) {
        ts_system_free(*sys);
        *sys = NULL;
        return s;
    }
    return ts_stepper_new(pb->type, *sys, pb->sopt, st);
}

/* least-squares slope of y over 0..n-1 */
static double ls_slope(const double *y, int n)
{
    double mx = 0.5 * (n - 1), sxy = 0.0, sxx = 0.0;
    for (int j = 0; j < n; j++)
        sxy += (j - mx) * y[j], sxx += (j - mx) * (j - mx);
    return sxx > 0.0 ? sxy / sxx : 0.0;
}

/* Add the seed to pert's free degrees of freedom: the given mode (x and v
 * parts), or a fixed pseudo-random direction, scaled to opt->seed_size *
 * max(1, |x|_inf) in |x|_inf, on the linearization LINEAR_SEED_GAIN times
 * that.  dir: 2n + 1 doubles of scratch.
 * A run on the linearization is linear in its seed, so the seed's size
 * changes no verdict of an explicit stepper (a power of two scales every
 * rounding exactly); it sets where an implicit stepper's Newton stop lies,
 * which is absolute below |v| = 1 (ts_newton_scale): at 1e-6 the stop's
 * 1e-8 is 1 % of the seed, and a decayed run is left at that level. */
#define LINEAR_SEED_GAIN 0x1p20
static void seed_perturbation(ts_system *pert, const ts_stability_options *opt, double *dir)
{
    size_t n = pert->n;
    int order2 = pert->order == 2;
    if (opt->seed) {
        ts_vec_copy(n, opt->seed, dir);
        if (opt->seed_v && order2)
            ts_vec_copy(n, opt->seed_v, dir + n);
    } else {
        ts_fill_pseudo_random(n, 777u, dir);
    }
    double sn = ts_vec_norm_inf(n, dir);
    if (!(sn > 0.0) && order2)
        sn = ts_vec_norm_inf(n, dir + n) / fmax(opt->rate, 1.0);
    double size = opt->linearized ? LINEAR_SEED_GAIN * opt->seed_size : opt->seed_size;
    double a = sn > 0.0 ? size * fmax(1.0, ts_vec_norm_inf(n, pert->x)) / sn : 0.0;
    for (size_t i = 0; i < n; i++)
        if (!pert->pinned || !pert->pinned[i]) {
            pert->x[i] += a * dir[i];
            if (order2)
                pert->v[i] += a * dir[n + i];
        }
}

/* Sustained growth over the windows' maxima: ln(window max) rising over
 * the second half (least squares), and the last window above a reference by
 * more than tol.  On the linearization the reference is the smallest window
 * of the first half, or TS_STABILITY_TROUGH_FLOOR |d(0)| if larger: a
 * growing mode that starts small under a decaying seed (Verlet's parasitic
 * root of its 3x3 run map, excited at about 0.008 |d(0)|) counts as soon as
 * it grows.
 * On the system itself it is the largest window of the first half and
 * |d(0)|: the moving state's own small changes of |d| after the seed has
 * decayed are not the stepper's growth. */
static int sustained_growth(const double *wmax, int nw, double d0, int linearized, double tol)
{
    double ref = linearized ? INFINITY : d0, lg[TS_STABILITY_WINDOWS / 2];
    for (int j = 0; j < nw / 2; j++)
        ref = linearized ? fmin(ref, wmax[j]) : fmax(ref, wmax[j]);
    for (int j = 0; j < nw / 2; j++)
        lg[j] = log(wmax[nw / 2 + j]);
    if (linearized) /* below that, an implicit solver's tolerance, not a mode */
        ref = fmax(ref, TS_STABILITY_TROUGH_FLOOR * d0);
    return wmax[nw - 1] > (1.0 + tol) * ref && ls_slope(lg, nw / 2) > 0.0;
}

/* w of the norm of |d|: opt->rate, or 1 */
static double stability_rate(const ts_stability_options *opt)
{
    return opt->rate > 0.0 && isfinite(opt->rate) ? opt->rate : 1.0;
}

/* <a, b> in the norm of |d| (pert_norm): the mass-weighted sum over the
 * free degrees of freedom of x parts and v parts / w; a as its parts ax,
 * av (av unread on order 1), b as one vector of 2 n, x then v */
static double pert_dot(const ts_system *sys, double w, const double *ax, const double *av,
                       const double *b)
{
    size_t n = sys->n;
    double z = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (sys->pinned && sys->pinned[i])
            continue;
        double e = ax[i] * b[i];
        if (sys->order == 2)
            e += av[i] * b[n + i] / (w * w);
        z += sys->mass[i] * e;
    }
    return z;
}

/* The count vectors of v (2 n each) made orthonormal in pert_dot into q
 * (Gram-Schmidt, twice; a vector left below 1e-8 of its size is dropped):
 * how many q holds. */
static int orthonormal_basis(const ts_system *sys, double w, const double *v, int count,
                             double *q)
{
    size_t len = 2 * sys->n;
    int kept = 0;
    for (int j = 0; j < count; j++) {
        double *u = q + (size_t)kept * len;
        ts_vec_copy(len, v + (size_t)j * len, u);
        double size = sqrt(pert_dot(sys, w, u, u + sys->n, u));
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < kept; i++) {
                const double *qi = q + (size_t)i * len;
                ts_vec_axpy(len, -pert_dot(sys, w, u, u + sys->n, qi), qi, u);
            }
        double left = sqrt(pert_dot(sys, w, u, u + sys->n, u));
        if (!(left > 1e-8 * size))
            continue;
        ts_vec_scale(len, 1.0 / left, u);
        kept++;
    }
    return kept;
}

/* d -= its part in the span of the orthonormal q (count vectors), with d
 * the run's state (x, v) on the linearization */
static void remove_span(ts_system *pert, double w, const double *q, int count)
{
    size_t n = pert->n, len = 2 * n;
    int order2 = pert->order == 2;
    for (int j = 0; j < count; j++) {
        const double *u = q + (size_t)j * len;
        double c = pert_dot(pert, w, pert->x, pert->v, u);
        for (size_t i = 0; i < n; i++) {
            pert->x[i] -= c * u[i];
            if (order2)
                pert->v[i] -= c * u[n + i];
        }
    }
}

/* The two runs of a bounded test in lockstep: the base run (none on the
 * linearization, where the deviation itself is the perturbation) and the
 * perturbed one, nsteps steps of dt to t0 + t_end; |d| in the norm of rate
 * w, d0 = |d(0)|, and the window maxima of |d|.  grow: opt->grow_basis
 * made orthonormal in that norm (ngrow vectors), removed from d every
 * step. */
typedef struct {
    ts_system *base, *pert;
    ts_stepper *sb, *sq;
    double *grow;
    int ngrow;
    const ts_stability_options *opt;
    double t_end, dt;
    long nsteps;
    double w, d0;
    double wmax[TS_STABILITY_WINDOWS];
    /* functionals of d at the last steps (at most TS_RECURRENCE_SAMPLES) */
    double sketch[TS_RECURRENCE_SAMPLES * TS_RECURRENCE_WIDTH];
    int sketches;
} lockstep;

/* Run the pair: the window maxima of |d| into r->wmax; *status the failing
 * status (a step's, or TS_ERR_DIVERGED past the bound).  Returns nonzero
 * only when stopped. */
static int run_windows(lockstep *r, int *status)
{
    const ts_stability_options *opt = r->opt;
    long nsteps = r->nsteps;
    int nw = TS_STABILITY_WINDOWS;
    for (long k = 1; k <= nsteps; k++) {
        double t = opt->t0 + (double)(k - 1) * r->dt,
               h = k == nsteps ? opt->t0 + r->t_end - t : r->dt;
        if (ts_stop_signal) /* see tstep/run.h */
            return ts_error(TS_ERR_INTERRUPTED, "stopped by signal %d", (int)ts_stop_signal);
        int s = r->base ? ts_stepper_step(r->sb, r->base, t, h) : TS_OK;
        if (!s)
            s = ts_stepper_step(r->sq, r->pert, t, h);
        if (!s && r->ngrow > 0)
            remove_span(r->pert, r->w, r->grow, r->ngrow);
        if (s == TS_ERR_INTERRUPTED) /* stopped inside a step: no verdict */
            return s;
        /* the last steps of dt (not a shortened last one: one map) */
        double *sk = nsteps - k < TS_RECURRENCE_SAMPLES && h == r->dt
                         ? r->sketch + (size_t)r->sketches * TS_RECURRENCE_WIDTH
                         : NULL;
        double d = s ? NAN : pert_norm(r->pert, r->base, r->w, sk);
        r->sketches += sk != NULL;
        if (!s && !(d <= opt->bound * r->d0)) /* also catches non-finite states */
            s = TS_ERR_DIVERGED;
        if (s) {
            *status = s;
            return TS_OK;
        }
        int j = (int)((k - 1) * nw / nsteps);
        r->wmax[j] = fmax(r->wmax[j], d);
    }
    return TS_OK;
}

/* Whether the window maxima's rise is a beat, not growth: the run's last
 * states follow a linear recurrence (tolerance RECURRENCE_TOL) whose roots
 * would grow |d| by at most 1 + tol over the whole run, and whose powers
 * over four run lengths peak at most twice as high as over one.  A run map
 * with eigenvalues on the unit circle and nearly parallel eigenvectors (the
 * partitioned steppers on an undamped mode just below their limit) swings
 * |d| between a small and a large axis of its orbit, slowly enough that
 * the windows can catch a rise; the swing is complete within the run, so
 * the longer run peaks no higher.  A repeated root on the unit circle (the
 * same steppers at their limit, h w = 2) grows |d| like the step count: its
 * peak over four run lengths is about four times that over one, and the
 * windows' verdict stands, as it does for a pair of roots too close to
 * finish a swing within the run (the peaks read at most
 * RECURRENCE_PEAK_STEPS steps: a longer swing is taken as growth).  A run
 * whose states follow no low-order recurrence (many modes, a nonlinear run,
 * an implicit solver's tolerance) keeps the windows' verdict. */
#define RECURRENCE_TOL 1e-8
#define RECURRENCE_LONGER 4 /* run lengths of the longer run */
#define RECURRENCE_PEAK_RISE 2.0
#define RECURRENCE_PEAK_STEPS (1L << 20) /* the run length the peaks read, at most */
static int beats_only(const lockstep *r, double tol)
{
    ts_recurrence rc;
    if (!ts_recurrence_fit(r->sketch, r->sketches, TS_RECURRENCE_WIDTH,
                           TS_RECURRENCE_MAX_ORDER, RECURRENCE_TOL, &rc))
        return 0;
    if ((double)r->nsteps * log(ts_recurrence_radius(&rc)) > log1p(tol))
        return 0;
    long n = r->nsteps < RECURRENCE_PEAK_STEPS ? r->nsteps : RECURRENCE_PEAK_STEPS;
    return ts_recurrence_peak(&rc, RECURRENCE_LONGER * n) <=
           RECURRENCE_PEAK_RISE * ts_recurrence_peak(&rc, n);
}

int ts_stability_bounded(const ts_stability_problem *pb, const ts_stability_options *opt,
                         double t_end, double dt, ts_stability_verdict *v)
{
    lockstep r = {.opt = opt, .t_end = t_end, .dt = dt};
    double *dir = NULL;
    *v = (ts_stability_verdict){.bounded = 0, .status = TS_OK, .steps = 0};
    if (!(dt > 0.0) || !(t_end > 0.0))
        return ts_error(TS_ERR_INPUT, "stability run: dt %g and T %g must be > 0", dt, t_end);
    double q = t_end / dt;
    if (q > 1e9)
        return ts_error(TS_ERR_INPUT, "stability run: T / dt = %g is more than 1e9 steps", q);
    r.nsteps = (long)ceil(q - 1e-9);
    if (r.nsteps < 1)
        r.nsteps = 1;
    v->steps = r.nsteps;
    /* linearized: the deviation itself is the perturbation, no base run */
    int s = opt->linearized ? TS_OK : open_run(pb, opt, &r.base, &r.sb);
    if (!s)
        s = open_run(pb, opt, &r.pert, &r.sq);
    if (!s && opt->linearized && opt->grow_basis && opt->grow_count > 0 &&
        !(r.grow = malloc((size_t)opt->grow_count * 2 * r.pert->n * sizeof *r.grow)))
        s = ts_error(TS_ERR_NOMEM, "stability run");
    if (!s && !(dir = calloc(2 * r.pert->n + 1, sizeof *dir)))
        s = ts_error(TS_ERR_NOMEM, "stability run");
    if (s)
        goto done;
    seed_perturbation(r.pert, opt, dir);
    r.w = stability_rate(opt);
    if (r.grow) { /* |d(0)| is the seed that runs: its part outside the span */
        r.ngrow = orthonormal_basis(r.pert, r.w, opt->grow_basis, opt->grow_count, r.grow);
        if (r.ngrow < opt->grow_count) /* the span not whole: removing part of it is no use */
            r.ngrow = 0;
        remove_span(r.pert, r.w, r.grow, r.ngrow);
    }
    r.d0 = pert_norm(r.pert, r.base, r.w, NULL);
    if (!(r.d0 > 0.0)) {
        s = ts_error(TS_ERR_INPUT, "stability run: the seed is zero on the free degrees of "
                                   "freedom%s", r.ngrow ? " outside the growing modes' span" : "");
        goto done;
    }
    s = run_windows(&r, &v->status);
    if (s || v->status)
        goto done;
    double tol = opt->growth_tol > 0.0 ? opt->growth_tol : TS_STABILITY_GROWTH_WINDOW_TOL;
    if (r.nsteps >= TS_STABILITY_WINDOWS &&
        sustained_growth(r.wmax, TS_STABILITY_WINDOWS, r.d0, opt->linearized, tol) &&
        !beats_only(&r, tol))
        v->status = TS_ERR_DIVERGED;
    else
        v->bounded = 1;
done:
    free(dir);
    ts_stepper_free(r.sb);
    ts_stepper_free(r.sq);
    ts_system_free(r.base);
    ts_system_free(r.pert);
    free(r.grow);
    return s;
}

/* T from the binding mode: long enough that its growth 5 % past the limit
 * multiplies it by e^4, and at least 32 of its periods (2 pi / |lambda|);
 * without a finite nonzero prediction, 1000 / |lambda| */
double ts_stability_choose_t(const ts_stepper_type *type, const ts_solver_options *opt,
                             const ts_binding *b, double lambda_max)
{
    double mag = hypot(b->re, b->im);
    if (!(b->dt_pred > 0.0) || !isfinite(b->dt_pred) || !(mag > 0.0))
        return lambda_max > 0.0 ? 1000.0 / lambda_max : 10.0;
    double h = 1.05 * b->dt_pred, rho, T = 64.0 * 3.14159265358979323846 / mag;
    /* the growth a run sees: for a stepper that carries state, its run map's */
    ts_mode_test test = {type, opt, b->second_order};
    if (!ts_binding_growth(&test, b, h, &rho)) {
        double g = log(rho) / h;
        if (g > 0.0 && isfinite(g))
            T = fmax(T, 4.0 / g);
    }
    return fmin(T, TS_STABILITY_MAX_STEPS * b->dt_pred);
}

/* A search for the critical step (ts_stability_measure): what it runs, its
 * options and T, the range of dt and where it started, the result it fills
 * (runs counted), and the bracket: lo bounded (its run's steps lo_steps),
 * hi not (its run's status hi_status). */
typedef struct {
    const ts_stability_problem *pb;
    const ts_stability_options *opt;
    double T, dt_min, dt_max, dt_start;
    ts_stability_result *res;
    double lo, hi;
    long lo_steps;
    int hi_status;
} search;

/* One run of the search, to t_end at dt, counted and reported. */
static int trial(const search *q, double t_end, double dt, ts_stability_verdict *v)
{
    q->res->runs++;
    if (q->opt->progress)
        q->opt->progress(q->opt->progress_ctx, q->res->runs, dt);
    return ts_stability_bounded(q->pb, q->opt, t_end, dt, v);
}

/* From a bounded start lo: multiply by f (squared each time, up to 2) until
 * a run is not bounded (hi); *done when the search ended at dt_max instead
 * (the result filled: inf, or t-limited where a finite limit was predicted
 * but no run above the start was long enough to show growth). */
static int bracket_up(search *q, double f, int *done)
{
    double lo_long = q->lo_steps >= TS_STABILITY_WINDOWS ? q->lo : 0.0; /* long enough */
    ts_stability_verdict v;
    int s;
    *done = 0;
    for (;;) {
        if (q->lo >= q->dt_max) {
            ts_stability_result *res = q->res;
            int predicted = isfinite(q->dt_start) && q->dt_start > 0.0;
            res->kind = predicted && !(lo_long > q->dt_start) ? TS_CRIT_T_LIMITED : TS_CRIT_INF;
            res->dt_crit = res->dt_fail = INFINITY;
            res->steps = q->lo_steps;
            *done = 1;
            return TS_OK;
        }
        q->hi = fmin(f * q->lo, q->dt_max);
        f = fmin(f * f, 2.0);
        if ((s = trial(q, q->T, q->hi, &v)))
            return s;
        q->hi_status = v.status;
        if (!v.bounded)
            return TS_OK;
        q->lo = q->hi, q->lo_steps = v.steps;
        if (v.steps >= TS_STABILITY_WINDOWS)
            lo_long = q->hi;
    }
}

/* From an unbounded start hi: divide by f (squared each time, up to 2)
 * until a run is bounded (lo); *done when none is down to dt_min
 * (below-min, dt_crit 0). */
static int bracket_down(search *q, double f, int *done)
{
    *done = 0;
    for (;;) {
        if (q->hi <= q->dt_min) {
            ts_stability_result *res = q->res;
            res->kind = TS_CRIT_BELOW_MIN;
            res->dt_crit = 0.0;
            res->dt_fail = q->hi;
            res->fail_status = q->hi_status;
            *done = 1;
            return TS_OK;
        }
        q->lo = fmax(q->hi / f, q->dt_min);
        f = fmin(f * f, 2.0);
        ts_stability_verdict v;
        int s;
        if ((s = trial(q, q->T, q->lo, &v)))
            return s;
        if (v.bounded) {
            q->lo_steps = v.steps;
            return TS_OK;
        }
        q->hi = q->lo, q->hi_status = v.status;
    }
}

int ts_stability_measure(const ts_stability_problem *pb, const ts_stability_options *opt,
                         double dt_start, ts_stability_result *res)
{
    search q = {.pb = pb, .opt = opt, .T = opt->t_end,
                .dt_min = opt->dt_min > 0.0 ? opt->dt_min : 1e-6 * opt->t_end,
                .dt_max = opt->dt_max > 0.0 ? opt->dt_max : opt->t_end,
                .dt_start = dt_start, .res = res};
    *res = (ts_stability_result){.dt_crit = NAN, .dt_fail = NAN, .kind = TS_CRIT_FOUND};
    if (!(q.T > 0.0) || !(q.dt_min <= q.dt_max) || !(opt->bound > 0.0) || !(opt->rel_tol > 0.0))
        return ts_error(TS_ERR_INPUT, "stability: need T > 0, bound > 0, rel_tol > 0 and "
                                      "dt_min <= dt_max");
    double dt = isfinite(dt_start) && dt_start > 0.0 ? dt_start : 1e-3 * q.T;
    dt = fmin(fmax(dt, q.dt_min), q.dt_max);
    q.lo = q.hi = dt;
    ts_stability_verdict v;
    int s, done;
    /* the bracket's first factor (opt->first_step), squared after each try up to 2 */
    double f = opt->first_step > 1.0 ? fmin(opt->first_step, 2.0) : 2.0;
    if ((s = trial(&q, q.T, dt, &v)))
        return s;
    q.hi_status = v.status;
    if (v.bounded)
        q.lo_steps = v.steps, s = bracket_up(&q, f, &done);
    else
        s = bracket_down(&q, f, &done);
    if (s || done)
        return s;
    res->fail_status = q.hi_status;
    while (q.hi > q.lo * (1.0 + opt->rel_tol)) {
        double mid = q.lo * sqrt(q.hi / q.lo); /* not sqrt(lo * hi): underflows below 1e-154 */
        if ((s = trial(&q, q.T, mid, &v)))
            return s;
        if (v.bounded)
            q.lo = mid, q.lo_steps = v.steps;
        else
            q.hi = mid, res->fail_status = v.status;
    }
    res->dt_crit = q.lo;
    res->dt_fail = q.hi;
    res->steps = q.lo_steps;
    if (opt->recheck > 1.0) {
        /* a true limit holds for longer runs at it (on the linearization,
         * whose map is fixed) or a little below it (on the system itself,
         * whose longer run reaches other states); a T-limited one moves */
        if ((s = trial(&q, opt->recheck * q.T, opt->linearized ? q.lo : 0.9 * q.lo, &v)))
            return s;
        if (!v.bounded)
            res->kind = TS_CRIT_T_LIMITED;
    }
    return TS_OK;
}

/* --- prediction and measurement of one stepper ------------------------------------- */

/* The bracket's upper end (1 + p) dt_pred: p = q, unless the binding mode
 * would grow less than e^0.15 over T there (a weakly damped mode whose T is
 * capped: the sustained-growth test could not see it, and a bounded run
 * past the limit would push the bracket above it); then p is doubled until
 * it would, up to 10 %. */
static double upper_excess(const ts_stability_problem *pb, const ts_binding *b, double T, double q)
{
    double p = q;
    if (!(isfinite(b->dt_pred) && b->dt_pred > 0.0))
        return p;
    ts_mode_test test = {pb->type, pb->sopt, b->second_order};
    for (; p < 0.1; p *= 2.0) {
        double h = (1.0 + p) * b->dt_pred, rho;
        if (ts_binding_growth(&test, b, h, &rho) || !(log(rho) / h * T < 0.15))
            break;
    }
    return fmin(p, 0.1);
}

/* The verdict of a study, one rule for every stepper:
 * - t-limited: no true stable step exists, the limit measured is set by T.
 *   That is so when the prediction is 0 (no stable step on the binding mode:
 *   forward Euler, midpoint on an undamped mode), whether runs found a
 *   bounded dt over T (dt_crit > 0) or not even at dt_min (dt_crit 0); on
 *   the system itself (not the linearization) when no step down to dt_min
 *   is bounded; and when a longer run, over recheck * T, is not bounded: at
 *   dt_crit itself on the linearization (its map is fixed, so dt_crit is
 *   then past the true limit, where growth is too slow to show over T: a
 *   weakly damped mode), at 0.9 dt_crit on the system itself (whose longer
 *   run reaches other states).
 * That longer run is skipped where it cannot change the verdict: runs on the
 *   linearization (the prediction's own equation) whose bracket holds a
 *   finite nonzero prediction, which is then a true limit of that equation. */
static int study_verdict(const ts_stability_problem *pb, const ts_stability_options *so,
                         double recheck, const ts_binding *b, ts_stability_result *res)
{
    if (b->dt_pred == 0.0 && (res->kind == TS_CRIT_BELOW_MIN || res->kind == TS_CRIT_FOUND)) {
        res->kind = TS_CRIT_T_LIMITED;
        return TS_OK;
    }
    /* on the system itself the state moves away from the prediction's: no
     * bounded step over T down to dt_min means modes it reaches have no
     * stable step for this stepper (forward Euler on the swinging string's
     * undamped transverse modes); a shorter T finds the early limit */
    if (!so->linearized && res->kind == TS_CRIT_BELOW_MIN) {
        res->kind = TS_CRIT_T_LIMITED;
        return TS_OK;
    }
    if (res->kind != TS_CRIT_FOUND || !(recheck > 1.0))
        return TS_OK;
    int holds = so->linearized && isfinite(b->dt_pred) && b->dt_pred > 0.0 &&
                res->dt_crit <= b->dt_pred * (1.0 + 1e-9) &&
                b->dt_pred <= res->dt_fail * (1.0 + so->rel_tol);
    if (holds)
        return TS_OK;
    ts_stability_verdict v;
    double at = so->linearized ? res->dt_crit : 0.9 * res->dt_crit;
    res->runs++;
    if (so->progress)
        so->progress(so->progress_ctx, res->runs, at);
    int s = ts_stability_bounded(pb, so, recheck * so->t_end, at, &v);
    if (!s && !v.bounded)
        res->kind = TS_CRIT_T_LIMITED;
    return s;
}

/* T of a study: opt->t_end, else ts_stability_choose_t.  On the system
 * itself at most 32 periods of the binding mode: the state moves away from
 * the prediction's, and the flow's own separation of nearby runs overtakes
 * the seed (the swinging string's perturbation grows 10^4-fold by t = 2.5 to
 * 4.7 s at every step tried, the 8 x 8 cloth's by t = 4.1 s), so runs as long
 * as 4 / g (8.2 s and 4.5 s for forward Euler there) find no bounded step.
 * The growth test's margin is then the finer TS_STABILITY_GROWTH_RUN_TOL,
 * so that growth 0.25 % past the limit still shows within that T. */
static double study_t_end(const ts_stability_problem *pb, const ts_stability_options *opt,
                          const ts_binding *b, double lambda_max, double *growth_tol)
{
    if (opt->t_end > 0.0)
        return opt->t_end;
    double T = ts_stability_choose_t(pb->type, pb->sopt, b, lambda_max), mag = hypot(b->re, b->im);
    if (!opt->linearized && mag > 0.0 && isfinite(mag)) {
        T = fmin(T, 64.0 * 3.14159265358979323846 / mag);
        if (!(opt->growth_tol > 0.0))
            *growth_tol = TS_STABILITY_GROWTH_RUN_TOL;
    }
    return T;
}

/* Whether eigenvalue k grows by itself (Re lambda > 0 beyond round-off,
 * above the rigid cut: as b->unstable counts them), and how many vectors
 * span its real invariant space (1 real, 2 a complex pair; 0 when not). */
static int grows_by_itself(const ts_spectrum *sp, size_t k)
{
    double cut = TS_RIGID_CUT * sp->lambda_max, recut = TS_REAL_ROUNDOFF * sp->lambda_max;
    if (sp->im[k] < 0.0 || !(hypot(sp->re[k], sp->im[k]) > cut) || !(sp->re[k] > recut))
        return 0;
    return sp->im[k] > 0.0 ? 2 : 1;
}

/* out = J y for J = [0 I; K_x K_v] on the free degrees of freedom (K = M^-1
 * df, the dense spectrum's; order 1: J = K_x), y and out 2 n, x then v */
static void jacobian_mul(const ts_spectrum *sp, const double *y, double *out)
{
    size_t n = sp->n, m = sp->m;
    int order2 = sp->order == 2;
    const double *yv = y + n;
    double *to = order2 ? out + n : out;
    ts_vec_zero(2 * n, out);
    if (order2)
        ts_vec_copy(n, yv, out);
    for (size_t j = 0; j < m; j++) {
        double a = 0.0; /* row j; column i of K at K + i m */
        for (size_t i = 0; i < m; i++) {
            a += sp->kx_[i * m + j] * y[sp->free_[i]];
            if (order2)
                a += sp->kv_[i * m + j] * yv[sp->free_[i]];
        }
        to[sp->free_[j]] = a;
    }
}

/* An orthonormal basis (in the norm of |d| with rate w) of the span of the
 * modes that grow by themselves (*g, malloc'd, *count vectors of 2 n, x
 * then v), from a real mode's real vector y and a complex one's y and J y,
 * which span its real invariant plane.  *count 0 on a spectrum that is not
 * dense (J is not at hand), and when the vectors span fewer dimensions than
 * the modes have (a repeated eigenvalue: the same vector found twice). */
static int grow_basis(ts_system *state, const ts_spectrum *sp, double w, double **g, int *count)
{
    size_t n = state->n, len = 2 * n, total = 0;
    *g = NULL, *count = 0;
    if (sp->method != TS_EIG_DENSE || !sp->kx_)
        return TS_OK;
    for (size_t k = 0; k < sp->count; k++)
        total += (size_t)grows_by_itself(sp, k);
    if (total == 0 || total > (size_t)INT_MAX)
        return TS_OK;
    double *v = calloc(total * len, sizeof *v), *q = malloc(total * len * sizeof *q);
    int found = 0;
    if (!v || !q) {
        free(v), free(q);
        return ts_error(TS_ERR_NOMEM, "the growing modes' span");
    }
    for (size_t k = 0; k < sp->count; k++) {
        int dim = grows_by_itself(sp, k);
        double *y = v + (size_t)found * len;
        if (dim == 0 || ts_spectrum_mode(state, sp, k, y, y + n))
            continue;
        if (dim == 2)
            jacobian_mul(sp, y, y + len);
        found += dim;
    }
    if ((size_t)found == total && orthonormal_basis(state, w, v, found, q) == found)
        *g = q, *count = found, q = NULL;
    free(v), free(q);
    return TS_OK;
}

int ts_stability_study(const ts_stability_problem *pb, const ts_stability_options *opt,
                       ts_system *state, const ts_spectrum *sp, ts_stability_study_result *out)
{
    size_t n = state->n;
    int second = ts_stability_second_order(pb->type, state);
    int s = ts_stability_binding(&(ts_mode_test){pb->type, pb->sopt, second}, sp, &out->binding);
    out->no_prediction = 0;
    if (s == TS_ERR_UNSUPPORTED) { /* the test equation refused (e.g. no energy) */
        out->no_prediction = 1;
        out->binding = (ts_binding){.dt_pred = NAN, .mode = (size_t)-1, .r = NAN,
                                    .re = NAN, .im = NAN, .second_order = second};
    } else if (s) {
        return s;
    }
    const ts_binding *b = &out->binding;
    double *seed = calloc(2 * n + 1, sizeof *seed), *grow = NULL;
    if (!seed)
        return ts_error(TS_ERR_NOMEM, "stability study");
    ts_stability_options so = *opt;
    so.x0 = state->x;
    so.v0 = state->order == 2 ? state->v : NULL;
    /* the seed: the binding mode's real vector (the stiffest mode when none binds) */
    size_t mode = b->mode;
    if (mode == (size_t)-1)
        for (size_t k = 0; k < sp->count; k++)
            if (sp->im[k] >= 0.0 && hypot(sp->re[k], sp->im[k]) >= sp->lambda_max * (1.0 - 1e-12))
                mode = k;
    so.seed = so.seed_v = NULL;
    so.rate = sp->lambda_max;
    if (mode != (size_t)-1 && !ts_spectrum_mode(state, sp, mode, seed, seed + n)) {
        so.seed = seed, so.seed_v = seed + n;
        so.rate = hypot(sp->re[mode], sp->im[mode]);
    }
    /* the growing modes' span out of the runs: where the stepper's map keeps
     * it (scalar test equation, no state carried) and the seed is not in it */
    so.grow_basis = NULL, so.grow_count = 0;
    if (so.linearized && !second && !b->carries_state && b->unstable > 0 &&
        !(mode != (size_t)-1 && grows_by_itself(sp, mode)) &&
        (s = grow_basis(state, sp, stability_rate(&so), &grow, &so.grow_count))) {
        free(seed);
        return s;
    }
    so.grow_basis = grow;
    out->grow_removed = so.grow_count;
    out->t_end = study_t_end(pb, opt, b, sp->lambda_max, &so.growth_tol);
    so.t_end = out->t_end;
    /* the bracket starts as [1 - q, 1 + q] dt_pred, q just under half the
     * bisection tolerance: when the prediction holds, its two runs are the
     * whole search; otherwise the factor is widened (squared) until the
     * bracket holds, and bisected.  Both ends are runs, whatever the
     * prediction; T / 1000 with factor 2 without a finite nonzero one. */
    int start = isfinite(b->dt_pred) && b->dt_pred > 0.0;
    double q = 0.49 * so.rel_tol;
    so.first_step = start ? (1.0 + upper_excess(pb, b, so.t_end, q)) / (1.0 - q) : 2.0;
    so.recheck = 0.0; /* study_verdict decides whether the longer run is needed */
    s = ts_stability_measure(pb, &so, start ? (1.0 - q) * b->dt_pred : NAN, &out->result);
    if (!s)
        s = study_verdict(pb, &so, opt->recheck, b, &out->result);
    free(seed);
    free(grow);
    return s;
}

/* --- the prediction along a run -------------------------------------------------- */

/* sys from t to t + span with steps of h (the last one shortened); a failed
 * step, or a state grown past TS_DIVERGENCE_FACTOR times its start, stops */
static int advance(ts_system *sys, ts_stepper *st, double t, double span, double h)
{
    double size = fmax(1.0, ts_vec_norm_inf(sys->n, sys->x));
    long n = (long)ceil(span / h - 1e-9);
    for (long k = 1; k <= n; k++) {
        int s = ts_stepper_step(st, sys, t + (double)(k - 1) * h,
                                k == n ? span - (double)(k - 1) * h : h);
        if (s)
            return s;
        if (ts_stop_signal)
            return ts_error(TS_ERR_INTERRUPTED, "stopped by signal %d", (int)ts_stop_signal);
    }
    return ts_vec_norm_inf(sys->n, sys->x) <= TS_DIVERGENCE_FACTOR * size ? TS_OK
                                                                           : TS_ERR_DIVERGED;
}

/* one sample: the binding mode of the state sys at time t */
static int along_sample(const ts_stability_problem *pb, ts_system *sys, double t,
                        ts_eig_method method, ts_binding *b)
{
    ts_spectrum sp;
    int s = ts_spectrum_compute(sys, t, method, &sp);
    if (s)
        return s;
    ts_mode_test test = {pb->type, pb->sopt, ts_stability_second_order(pb->type, sys)};
    s = ts_stability_binding(&test, &sp, b);
    ts_spectrum_free(&sp);
    return s;
}

int ts_stability_along_run(const ts_stability_problem *pb, const ts_system *state,
                           const ts_stability_along_options *ao, ts_stability_along *out)
{
    double h = ao->h, T = ao->T;
    int samples = ao->samples;
    *out = (ts_stability_along){.dt_pred_min = INFINITY, .dt_pred_max = 0.0, .t_min = NAN};
    out->binding.mode = (size_t)-1;
    if (!(h > 0.0) || !(T > 0.0) || samples < 1 || !(T / h <= 1e9))
        return ts_error(TS_ERR_INPUT, "along the run: need h > 0, T > 0 and samples >= 1");
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    int s = ts_system_new(pb->stype, pb->params, &sys);
    if (!s) {
        ts_vec_copy(sys->n, state->x, sys->x);
        if (sys->order == 2)
            ts_vec_copy(sys->n, state->v, sys->v);
        s = ts_stepper_new(pb->type, sys, pb->sopt, &st);
    }
    for (int k = 1; k <= samples && !s; k++) {
        double t = ao->t0 + T * (double)(k - 1) / samples, span = T / samples;
        ts_binding b;
        if (advance(sys, st, t, span, fmin(h, span)))
            break; /* a failed or diverged run: the samples so far stand */
        if ((s = along_sample(pb, sys, t + span, ao->method, &b)))
            break;
        out->samples_done = k;
        out->dt_pred_max = fmax(out->dt_pred_max, b.dt_pred);
        if (k == 1 || b.dt_pred < out->dt_pred_min)
            out->dt_pred_min = b.dt_pred, out->t_min = t + span, out->binding = b;
    }
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

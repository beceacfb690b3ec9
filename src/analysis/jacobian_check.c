/* Jacobian checking: a system's df/dx and df/dv products (and its fast
 * path) against central finite differences of its forces, the Taylor
 * remainder slope, and symmetry.  See tstep/check.h for the checks and the
 * error measures.
 *
 * References: Nocedal & Wright, Numerical Optimization (2nd ed., 2006),
 * sec. 8.1, for central differences and the choice e ~ eps^(1/3); Farrell,
 * Ham, Funke & Rognes, "Automated derivation of the adjoint of high-level
 * transient finite element programs", SIAM J. Sci. Comput. 35 (2013), for
 * the Taylor remainder test (first-order remainder O(e), second-order
 * O(e^2) when the derivative is right). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "tstep/check.h"
#include "tstep/linalg.h"

#define TAYLOR_LEVELS 12  /* e0, e0/2, ..., e0/2^11 */
#define TAYLOR_E0 1e-3    /* first Taylor step, relative to the state's scale */
#define DIAG_PROBES 128   /* diagonal entries checked per sample */

ts_jacobian_check_options ts_default_jacobian_check_options(void)
{
    return (ts_jacobian_check_options){.samples = 3, .seed = 1, .tol = 1e-6, .min_slope = 1.8,
                                       .perturb_x = 1e-3, .perturb_v = 0.1};
}

const char *ts_jcheck_name(int kind)
{
    static const char *const names[TS_JCHECK_COUNT] = {
        "df/dx vs differences", "df/dv vs differences", "Taylor slope in x",
        "Taylor slope in v",    "df/dx symmetry",       "df/dv symmetry",
        "fast path vs products", "fast-path diagonal", "energy gradient = -f",
        "energy Taylor slope", "kinetic = v.Mv/2",
    };
    return kind >= 0 && kind < TS_JCHECK_COUNT ? names[kind] : "?";
}

typedef struct {
    ts_system *sys;
    const ts_jacobian_check_options *opt;
    size_t n;
    int order2;
    uint64_t rng;
    /* the sample state (x, v), directions u and w, and work vectors */
    double *x, *v, *u, *w, *fp, *fm, *f0, *ju, *jw, *d, *xe, *ve;
} checker;

/* splitmix64 (Steele, Lea & Flood 2014): small, seedable, reproducible */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* uniform in [-1, 1) */
static double rng_uniform(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1p-52 - 1.0; }

static void random_vector(checker *c, double *u)
{
    for (size_t i = 0; i < c->n; i++)
        u[i] = rng_uniform(&c->rng);
}

/* out = (df/dx) u (which 0) or (df/dv) u (which 1) at the sample state; from
 * the fast path when the system has no separate product. */
static int jac_mul(checker *c, int which, const double *u, double *out)
{
    ts_system *sys = c->sys;
    const double *v = c->order2 ? c->v : NULL;
    if (which == 0 && sys->ops->dfdx_mul)
        return ts_system_dfdx_mul(sys, 0.0, c->x, v, u, out);
    if (which == 1 && sys->ops->dfdv_mul)
        return ts_system_dfdv_mul(sys, 0.0, c->x, v, u, out);
    int s = ts_system_linearize(sys, 0.0, c->x, v, which == 0, which == 1);
    return s ? s : ts_system_jacobian_mul(sys, u, out);
}

/* out = f at the sample state moved by e u in x (which 0) or v (which 1) */
static int forces_moved(checker *c, int which, double e, const double *u, double *out)
{
    const double *x = c->x, *v = c->order2 ? c->v : NULL;
    if (which == 0) {
        ts_vec_copy(c->n, c->x, c->xe);
        ts_vec_axpy(c->n, e, u, c->xe);
        x = c->xe;
    } else {
        ts_vec_copy(c->n, c->v, c->ve);
        ts_vec_axpy(c->n, e, u, c->ve);
        v = c->ve;
    }
    return ts_system_forces(c->sys, 0.0, x, v, out);
}

static size_t argmax_abs(size_t n, const double *d)
{
    size_t k = 0;
    for (size_t i = 1; i < n; i++)
        if (fabs(d[i]) > fabs(d[k]) || (d[i] != d[i] && d[k] == d[k]))
            k = i;
    return k;
}

static void record(ts_jcheck_result *r, double err, size_t comp, int sample)
{
    if (!r->done || err > r->error || (err != err && r->error == r->error)) {
        r->error = err;
        r->component = comp;
        r->sample = sample;
    }
    r->done = 1;
}

/* the scale of the state a check moves: max(1, |y|_inf) */
static double state_scale(const checker *c, int which)
{
    return fmax(1.0, ts_vec_norm_inf(c->n, which == 0 ? c->x : c->v));
}

/* J u against the central difference D(e) = (f(+e) - f(-e)) / 2e, improved
 * by one Richardson extrapolation, (4 D(e/2) - D(e)) / 3, so the truncation
 * error is O(e^4) and small springs (short rest lengths against the state's
 * scale) do not need a tolerance of their own.  Differences at the round-off
 * level of the quotients, eps (|f(+e)| + |f(-e)|) / e, count as zero: the
 * relative error's denominator is at least that level divided by the
 * tolerance. */
static int check_differences(checker *c, int which, int sample, ts_jcheck_result *r)
{
    size_t n = c->n;
    double e = cbrt(DBL_EPSILON) * state_scale(c, which);
    double *hp = c->f0, *hm = c->jw; /* f at +-e/2 */
    int s;
    if ((s = forces_moved(c, which, e, c->u, c->fp)) ||
        (s = forces_moved(c, which, -e, c->u, c->fm)) ||
        (s = forces_moved(c, which, 0.5 * e, c->u, hp)) ||
        (s = forces_moved(c, which, -0.5 * e, c->u, hm)) || (s = jac_mul(c, which, c->u, c->ju)))
        return s;
    double nfd = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d1 = (c->fp[i] - c->fm[i]) / (2.0 * e), d2 = (hp[i] - hm[i]) / e;
        double q = (4.0 * d2 - d1) / 3.0;
        c->d[i] = c->ju[i] - q;
        nfd += q * q;
    }
    nfd = sqrt(nfd);
    double noise = 16.0 * DBL_EPSILON * (ts_vec_norm2(n, c->fp) + ts_vec_norm2(n, c->fm)) / e;
    double den = fmax(fmax(ts_vec_norm2(n, c->ju), nfd), noise / c->opt->tol);
    double num = ts_vec_norm2(n, c->d);
    record(r, den > 0.0 ? num / den : (num == 0.0 ? 0.0 : INFINITY), argmax_abs(n, c->d), sample);
    return TS_OK;
}

/* A Taylor test's points: of its levels, those above round-off (log e,
 * log remainder; kept of them), the component it names, and whether a
 * remainder was not finite. */
typedef struct {
    double le[TAYLOR_LEVELS], lr[TAYLOR_LEVELS];
    int kept;
    size_t comp;
    int nonfinite;
} taylor_points;

/* A Taylor test's result from its points: the least-squares slope, the
 * worst (smallest) over samples; with fewer than three points above
 * round-off the map is linear along u. */
static void record_slope(ts_jcheck_result *r, const taylor_points *tp, int sample)
{
    const double *le = tp->le, *lr = tp->lr;
    int kept = tp->kept;
    size_t comp = tp->comp;
    if (tp->nonfinite) { /* a NaN or an infinity in the remainders: no slope, and it sticks */
        r->slope = NAN;
        r->linear = 0;
        r->component = comp;
        r->sample = sample;
        r->done = 1;
        return;
    }
    if (r->done && !r->linear && isnan(r->slope))
        return;
    if (kept < 3) {
        if (!r->done) {
            r->linear = 1;
            r->slope = NAN;
        }
        r->done = 1;
        return;
    }
    double me = 0.0, mr = 0.0, see = 0.0, ser = 0.0;
    for (int k = 0; k < kept; k++)
        me += le[k] / kept, mr += lr[k] / kept;
    for (int k = 0; k < kept; k++) {
        see += (le[k] - me) * (le[k] - me);
        ser += (le[k] - me) * (lr[k] - mr);
    }
    double slope = ser / see;
    if (!r->done || r->linear || slope < r->slope) {
        r->slope = slope;
        r->component = comp;
        r->sample = sample;
    }
    r->linear = 0;
    r->done = 1;
}

/* Taylor remainder r(e) = |f(+e u) - f - e J u| over halving e; least-squares
 * slope of log r against log e over the levels above round-off. */
static int check_taylor(checker *c, int which, int sample, ts_jcheck_result *r)
{
    size_t n = c->n;
    double scale = state_scale(c, which), e0 = TAYLOR_E0 * scale;
    taylor_points tp = {.kept = 0, .comp = 0, .nonfinite = 0};
    int s;
    const double *v = c->order2 ? c->v : NULL;
    if ((s = ts_system_forces(c->sys, 0.0, c->x, v, c->f0)) || (s = jac_mul(c, which, c->u, c->ju)))
        return s;
    double nf0 = ts_vec_norm2(n, c->f0), nju = ts_vec_norm2(n, c->ju);
    /* round-off in f: its size, and the cancellation in a force that is a
     * difference of large terms (|J| |x| per component) */
    double jscale = nju / fmax(ts_vec_norm2(n, c->u), DBL_MIN) * scale * sqrt((double)n);
    for (int k = 0; k < TAYLOR_LEVELS; k++) {
        double e = ldexp(e0, -k);
        if ((s = forces_moved(c, which, e, c->u, c->fp)))
            return s;
        for (size_t i = 0; i < n; i++)
            c->d[i] = c->fp[i] - c->f0[i] - e * c->ju[i];
        double rem = ts_vec_norm2(n, c->d);
        double noise = 64.0 * DBL_EPSILON * (ts_vec_norm2(n, c->fp) + nf0 + e * nju + jscale);
        if (!isfinite(rem)) {
            tp.nonfinite = 1;
        } else if (rem > noise) {
            tp.le[tp.kept] = log(e);
            tp.lr[tp.kept] = log(rem);
            tp.kept++;
            tp.comp = argmax_abs(n, c->d);
        }
    }
    record_slope(r, &tp, sample);
    return TS_OK;
}

/* w . (J u) against u . (J w), relative to |w||Ju| + |u||Jw|; the component
 * named is where w_i (Ju)_i - u_i (Jw)_i is largest. */
static int check_symmetry(checker *c, int which, int sample, ts_jcheck_result *r)
{
    size_t n = c->n;
    int s;
    if ((s = jac_mul(c, which, c->u, c->ju)) || (s = jac_mul(c, which, c->w, c->jw)))
        return s;
    double a = ts_vec_dot(n, c->w, c->ju), b = ts_vec_dot(n, c->u, c->jw);
    double den = ts_vec_norm2(n, c->w) * ts_vec_norm2(n, c->ju) +
                 ts_vec_norm2(n, c->u) * ts_vec_norm2(n, c->jw);
    for (size_t i = 0; i < n; i++)
        c->d[i] = c->w[i] * c->ju[i] - c->u[i] * c->jw[i];
    double err = den > 0.0 ? fabs(a - b) / den : (a == b ? 0.0 : INFINITY);
    record(r, err, argmax_abs(n, c->d), sample);
    return TS_OK;
}

/* linearize(alpha, beta) + jacobian_mul against alpha df/dx u + beta df/dv u */
static int check_fast_path(checker *c, int sample, ts_jcheck_result *r)
{
    ts_system *sys = c->sys;
    size_t n = c->n;
    double alpha = 1.0 + 0.5 * rng_uniform(&c->rng);
    double beta = c->order2 ? 1.0 + 0.5 * rng_uniform(&c->rng) : 0.0;
    int s;
    if ((s = jac_mul(c, 0, c->u, c->ju)))
        return s;
    ts_vec_scale(n, alpha, c->ju);
    if (c->order2) {
        if ((s = jac_mul(c, 1, c->u, c->jw)))
            return s;
        ts_vec_axpy(n, beta, c->jw, c->ju);
    }
    if ((s = ts_system_linearize(sys, 0.0, c->x, c->order2 ? c->v : NULL, alpha, beta)) ||
        (s = ts_system_jacobian_mul(sys, c->u, c->fp)))
        return s;
    for (size_t i = 0; i < n; i++)
        c->d[i] = c->fp[i] - c->ju[i];
    double den = fmax(ts_vec_norm2(n, c->fp), ts_vec_norm2(n, c->ju));
    double num = ts_vec_norm2(n, c->d);
    record(r, den > 0.0 ? num / den : (num == 0.0 ? 0.0 : INFINITY), argmax_abs(n, c->d), sample);
    return TS_OK;
}

/* jacobian_diag against (J e_i)_i from the fast path, on up to DIAG_PROBES
 * components (all of them for small systems), relative to the largest |J_ii|. */
static int check_diagonal(checker *c, int sample, ts_jcheck_result *r)
{
    ts_system *sys = c->sys;
    size_t n = c->n, probes = n <= DIAG_PROBES ? n : DIAG_PROBES;
    double alpha = 1.0 + 0.5 * rng_uniform(&c->rng);
    double beta = c->order2 ? 1.0 + 0.5 * rng_uniform(&c->rng) : 0.0;
    double worst = 0.0, big = 0.0;
    size_t comp = 0;
    int s;
    if ((s = ts_system_linearize(sys, 0.0, c->x, c->order2 ? c->v : NULL, alpha, beta)) ||
        (s = sys->ops->jacobian_diag(sys, c->jw)))
        return s;
    ts_vec_zero(n, c->w);
    for (size_t p = 0; p < probes; p++) {
        size_t i = probes == n ? p : (size_t)(rng_next(&c->rng) % n);
        c->w[i] = 1.0;
        s = ts_system_jacobian_mul(sys, c->w, c->fp);
        c->w[i] = 0.0;
        if (s)
            return s;
        double diff = fabs(c->jw[i] - c->fp[i]);
        big = fmax(big, fabs(c->fp[i]));
        if (diff > worst || diff != diff)
            worst = diff, comp = i;
    }
    record(r, big > 0.0 ? worst / big : (worst == 0.0 ? 0.0 : INFINITY), comp, sample);
    return TS_OK;
}

/* U at x + e u (v = 0 for order 2) */
static int potential_moved(checker *c, double e, const double *u, double *pot)
{
    double ke;
    ts_vec_copy(c->n, c->x, c->xe);
    ts_vec_axpy(c->n, e, u, c->xe);
    return c->sys->ops->energy(c->sys, 0.0, c->xe, c->order2 ? c->v : NULL, &ke, pot);
}

/* Central difference of U along u, improved by one Richardson step. */
static int potential_slope(checker *c, double e, const double *u, double *slope, double *noise)
{
    double up, um, hp, hm;
    int s;
    if ((s = potential_moved(c, e, u, &up)) || (s = potential_moved(c, -e, u, &um)) ||
        (s = potential_moved(c, 0.5 * e, u, &hp)) || (s = potential_moved(c, -0.5 * e, u, &hm)))
        return s;
    double d1 = (up - um) / (2.0 * e), d2 = (hp - hm) / e;
    *slope = (4.0 * d2 - d1) / 3.0;
    *noise = 16.0 * DBL_EPSILON * (fabs(up) + fabs(um)) / e;
    return TS_OK;
}

/* The energy checks at the sample x with v = 0 (c->v is zero here), see
 * tstep/check.h. */
static int check_energy(checker *c, int sample, ts_jacobian_report *rep)
{
    size_t n = c->n;
    double e = cbrt(DBL_EPSILON) * state_scale(c, 0), d, noise, u0, ke;
    int s;
    if ((s = ts_system_forces(c->sys, 0.0, c->x, c->order2 ? c->v : NULL, c->f0)) ||
        (s = potential_slope(c, e, c->u, &d, &noise)))
        return s;
    double g = -ts_vec_dot(n, c->f0, c->u); /* dU/du if f = -grad U */
    double den = fmax(fmax(fabs(d), fabs(g)), noise / c->opt->tol);
    /* the worst coordinate direction, for the report */
    size_t probes = n <= DIAG_PROBES ? n : DIAG_PROBES, comp = 0;
    double worst = -1.0;
    ts_vec_zero(n, c->w);
    for (size_t p = 0; p < probes; p++) {
        size_t i = probes == n ? p : (size_t)(rng_next(&c->rng) % n);
        double di, ni;
        c->w[i] = 1.0;
        s = potential_slope(c, e, c->w, &di, &ni);
        c->w[i] = 0.0;
        if (s)
            return s;
        double mis = fabs(di + c->f0[i]);
        if (mis > worst || mis != mis)
            worst = mis, comp = i;
    }
    record(&rep->check[TS_JCHECK_ENERGY_GRADIENT],
           den > 0.0 ? fabs(d - g) / den : (d == g ? 0.0 : INFINITY), comp, sample);

    /* Taylor remainder of U with -f as its gradient */
    ts_jcheck_result *r = &rep->check[TS_JCHECK_ENERGY_TAYLOR];
    double e0 = TAYLOR_E0 * state_scale(c, 0);
    taylor_points tp = {.kept = 0, .comp = comp, .nonfinite = !isfinite(g)};
    if ((s = potential_moved(c, 0.0, c->u, &u0)))
        return s;
    for (int k = 0; k < TAYLOR_LEVELS; k++) {
        double ek = ldexp(e0, -k), uk;
        if ((s = potential_moved(c, ek, c->u, &uk)))
            return s;
        double rem = fabs(uk - u0 - ek * g);
        double floor = 64.0 * DBL_EPSILON * (fabs(uk) + fabs(u0) + ek * fabs(g));
        if (!isfinite(rem)) {
            tp.nonfinite = 1;
        } else if (rem > floor) {
            tp.le[tp.kept] = log(ek);
            tp.lr[tp.kept] = log(rem);
            tp.kept++;
        }
    }
    /* fewer than 3 points: U linear along u (gravity alone) */
    record_slope(r, &tp, sample);

    /* kinetic energy at a random v against 1/2 v^T M v */
    if (!c->order2)
        return TS_OK;
    double sv = c->opt->perturb_v > 0.0 ? c->opt->perturb_v : 0.1, kref = 0.0, pot;
    for (size_t i = 0; i < n; i++) {
        c->ve[i] = sv * rng_uniform(&c->rng);
        kref += 0.5 * c->sys->mass[i] * c->ve[i] * c->ve[i];
    }
    if ((s = c->sys->ops->energy(c->sys, 0.0, c->x, c->ve, &ke, &pot)))
        return s;
    double kd = fmax(fabs(ke), fabs(kref));
    record(&rep->check[TS_JCHECK_KINETIC],
           kd > 0.0 ? fabs(ke - kref) / kd : (ke == kref ? 0.0 : INFINITY), 0, sample);
    return TS_OK;
}

static int run_checks(checker *c, const double *bx, const double *bv, ts_jacobian_report *rep)
{
    ts_system *sys = c->sys;
    const ts_system_ops *o = sys->ops;
    const ts_jacobian_check_options *opt = c->opt;
    size_t n = c->n;
    int fast = o->linearize && o->jacobian_mul;
    /* the fast path is checked against separate products when there are any */
    int fast_vs_products = fast && o->dfdx_mul && (!c->order2 || o->dfdv_mul);
    double sx = opt->perturb_x * fmax(1.0, ts_vec_norm_inf(n, bx));
    double sv = c->order2 ? opt->perturb_v * fmax(1.0, ts_vec_norm_inf(n, bv)) : 0.0;
    int s;
    for (int k = 0; k < opt->samples; k++) {
        for (size_t i = 0; i < n; i++) {
            c->x[i] = bx[i] + sx * rng_uniform(&c->rng);
            if (c->order2)
                c->v[i] = bv[i] + sv * rng_uniform(&c->rng);
        }
        random_vector(c, c->u);
        random_vector(c, c->w);
        ts_jcheck_result *r = rep->check;
        if ((s = check_differences(c, 0, k, &r[TS_JCHECK_DFDX])) ||
            (s = check_taylor(c, 0, k, &r[TS_JCHECK_TAYLOR_X])))
            return s;
        if (c->order2 && ((s = check_differences(c, 1, k, &r[TS_JCHECK_DFDV])) ||
                          (s = check_taylor(c, 1, k, &r[TS_JCHECK_TAYLOR_V]))))
            return s;
        /* Symmetry and the fast path at v = 0: a symmetric fast path may drop
         * velocity-dependent terms of the exact Jacobian that are not
         * symmetric (Baraff & Witkin 1998, sec. 5.2, for spring damping). */
        if (c->order2)
            ts_vec_zero(n, c->v);
        if (sys->jacobian_symmetric) {
            if ((s = check_symmetry(c, 0, k, &r[TS_JCHECK_SYMMETRY_X])))
                return s;
            if (c->order2 && (s = check_symmetry(c, 1, k, &r[TS_JCHECK_SYMMETRY_V])))
                return s;
        }
        if (fast_vs_products && (s = check_fast_path(c, k, &r[TS_JCHECK_FAST_PATH])))
            return s;
        if (fast && o->jacobian_diag && (s = check_diagonal(c, k, &r[TS_JCHECK_DIAGONAL])))
            return s;
        if (o->energy && (s = check_energy(c, k, rep)))
            return s;
    }
    return TS_OK;
}

static int is_taylor(int kind)
{
    return kind == TS_JCHECK_TAYLOR_X || kind == TS_JCHECK_TAYLOR_V ||
           kind == TS_JCHECK_ENERGY_TAYLOR;
}

/* Pass/fail per check; the worst check is the failing error check with the
 * largest error / tol, else a failing Taylor check, else the largest error. */
static void summarize(const ts_system *sys, const ts_jacobian_check_options *opt,
                      ts_jacobian_report *rep)
{
    double worst_ratio = -1.0;
    int worst_failing = 0;
    rep->passed = 1;
    rep->worst = -1;
    for (int k = 0; k < TS_JCHECK_COUNT; k++) {
        ts_jcheck_result *r = &rep->check[k];
        if (!r->done)
            continue;
        if (is_taylor(k))
            r->passed = r->linear || r->slope >= opt->min_slope;
        else if (k == TS_JCHECK_FAST_PATH && sys->fast_path_approximate)
            r->passed = 1; /* reported, not judged: an approximation by design */
        else
            r->passed = r->error <= opt->tol;
        rep->passed &= r->passed;
        double ratio = is_taylor(k) ? (r->passed ? -1.0 : 0.0) : r->error / opt->tol;
        if (ratio != ratio)
            ratio = INFINITY;
        int failing = !r->passed;
        if ((failing && !worst_failing) || (failing == worst_failing && ratio > worst_ratio)) {
            rep->worst = k;
            worst_ratio = ratio;
            worst_failing = failing;
        }
    }
    if (rep->worst >= 0) {
        rep->component = rep->check[rep->worst].component;
        rep->particle = sys->dim ? rep->component / sys->dim : rep->component;
        rep->component_pinned = sys->pinned && sys->pinned[rep->component];
    }
}

int ts_jacobian_check(ts_system *sys, const ts_jacobian_check_options *opt,
                      ts_jacobian_report *rep)
{
    ts_jacobian_check_options defaults = ts_default_jacobian_check_options();
    if (!opt)
        opt = &defaults;
    *rep = (ts_jacobian_report){.worst = -1, .dofs = sys->n, .samples = opt->samples};
    if (opt->samples < 1 || !(opt->tol > 0.0) || !(opt->perturb_x >= 0.0) ||
        !(opt->perturb_v >= 0.0) || !(opt->min_slope > 0.0))
        return ts_error(TS_ERR_INPUT, "Jacobian check: samples >= 1, tol > 0, min_slope > 0 "
                                      "and perturbations >= 0 required");
    if (!ts_system_has_jacobian(sys))
        return ts_error(TS_ERR_UNSUPPORTED, "system '%s' has no Jacobian products to check",
                        sys->type ? sys->type->name : "?");
    for (size_t i = 0; sys->pinned && i < sys->n; i++)
        rep->pinned += sys->pinned[i] != 0;

    size_t n = sys->n;
    enum { NVEC = 14 };
    double *block = calloc(NVEC * n + 1, sizeof *block);
    if (!block)
        return ts_error(TS_ERR_NOMEM, "Jacobian check of %zu degrees of freedom", n);
    checker c = {.sys = sys, .opt = opt, .n = n, .order2 = sys->order == 2,
                 .rng = (uint64_t)opt->seed};
    double *bx = block, *bv = block + n;
    double **vecs[] = {&c.x, &c.v, &c.u, &c.w, &c.fp, &c.fm, &c.f0, &c.ju, &c.jw, &c.d, &c.xe, &c.ve};
    for (size_t i = 0; i < sizeof vecs / sizeof *vecs; i++)
        *vecs[i] = block + (2 + i) * n;
    /* work on copies: the stored state is never written */
    ts_vec_copy(n, sys->x, bx);
    if (c.order2)
        ts_vec_copy(n, sys->v, bv);
    int s = run_checks(&c, bx, bv, rep);
    free(block);
    if (s)
        return s;
    summarize(sys, opt, rep);
    return TS_OK;
}

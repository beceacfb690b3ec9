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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "tstep/linalg.h"
#include "tstep/run.h"
#include "tstep/stability.h"

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

/* |R(s d)| for the ray's system (k = -d_re, omega = d_im, step s); a failed
 * step counts as growth. */
static double ray_growth(ts_stepper *st, ts_system *sys, double s)
{
    double re, im;
    return one_step(st, sys, s, &re, &im) ? INFINITY : hypot(re, im);
}

int ts_stability_interval(const ts_stepper_type *type, const ts_solver_options *opt,
                          double dir_re, double dir_im, double *r)
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
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    int s = make_test1d(-dir_re, dir_im, &sys);
    if (!s)
        s = ts_stepper_new(type, sys, opt, &st);
    if (s)
        goto done;
    const double limit = 1.0 + ((type->flags & TS_IMPLICIT) ? TS_STABILITY_GROWTH_TOL_IMPLICIT
                                                              : TS_STABILITY_GROWTH_TOL);
    double lo = TS_STABILITY_S_MIN, hi;
    if (ray_growth(st, sys, lo) > limit) {
        *r = 0.0;
        goto done;
    }
    for (;;) {
        hi = lo * 1.01;
        if (hi > TS_STABILITY_S_MAX) {
            *r = INFINITY;
            goto done;
        }
        if (ray_growth(st, sys, hi) > limit)
            break;
        lo = hi;
    }
    while (hi - lo > 1e-12 * hi) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi)
            break;
        if (ray_growth(st, sys, mid) > limit)
            hi = mid;
        else
            lo = mid;
    }
    *r = lo;
done:
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
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

    /* deterministic start: a linear congruential sequence in [-1, 1] */
    unsigned long seed = 12345u;
    for (size_t i = 0; i < n; i++) {
        seed = (seed * 1103515245u + 12345u) & 0x7fffffffu;
        u[i] = 2.0 * (double)seed / 2147483647.0 - 1.0;
    }
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
            s = ts_error(TS_ERR_DIVERGED, "power iteration: non-finite Jacobian product");
            goto done;
        }
        /* real: A u = mu u (Rayleigh quotient, |u|_M = 1) */
        double rq = mdot(sys, u, w1);
        double res = mresid(sys, w1, rq, u, 0.0, NULL) / n1;
        if (res < best)
            best = res, mu = rq;
        /* pair: A^2 u = p A u + q u, least squares in the M norm */
        double g11 = n1 * n1, g12 = mdot(sys, w1, u), g22 = 1.0;
        double det = g11 * g22 - g12 * g12;
        if (res > TS_POWER_TOL && det > 1e-10 * g11 * g22 && n2 > 0.0) {
            double b1 = mdot(sys, w1, w2), b2 = mdot(sys, u, w2);
            double p = (b1 * g22 - g12 * b2) / det, q = (g11 * b2 - g12 * b1) / det;
            double res2 = mresid(sys, w2, p, w1, q, u) / n2;
            if (res2 < best)
                best = res2, mu = dominant_root(p, q);
        }
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
    return (ts_stability_options){.t_end = 0.0, .bound = 10.0, .dt_min = 0.0, .dt_max = 0.0,
                                  .rel_tol = 0.005, .recheck = 4.0, .rate = 0.0,
                                  .seed = NULL, .seed_size = 1e-3};
}

/* z += a dir on the free (unpinned) degrees of freedom (z = x or v) */
static void shift_free(double *z, const ts_system *sys, double a, const double *dir)
{
    for (size_t i = 0; i < sys->n; i++)
        if (!sys->pinned || !sys->pinned[i])
            z[i] += a * dir[i];
}

/* kinetic + potential energy at the stored state */
static int total_energy(ts_system *sys, double *e)
{
    double ke, pe;
    int s = ts_system_energy(sys, 0.0, &ke, &pe);
    *e = ke + pe;
    return s;
}

/* Along z -> z + s a dir (z = x or v), E's quadratic model from E at
 * s = -1, 0, 1: first-order part d1 = (E+ - E-) / 2, second-order part
 * d2 = (E+ + E-) / 2 - E0.  z is left as it was. */
static int energy_along(ts_system *sys, double *z, double a, const double *dir, double *d1,
                        double *d2)
{
    double e0, em = 0.0, ep = 0.0;
    int s = total_energy(sys, &e0);
    shift_free(z, sys, -a, dir);
    if (!s)
        s = total_energy(sys, &em);
    shift_free(z, sys, 2.0 * a, dir);
    if (!s)
        s = total_energy(sys, &ep);
    shift_free(z, sys, -a, dir);
    *d1 = 0.5 * (ep - em);
    *d2 = fabs(0.5 * (ep + em) - e0);
    return s;
}

/* The energy scale S of the energy test: the seed's energy E_seed (the
 * second-order part along x, k delta^2 / 2 on test1d) plus the energy the
 * initial state already holds in the seeded mode, d1^2 / (4 d2) along x and
 * (order 2) along v: what E would release relaxing to its minimum along
 * the mode (the quadratic model), 0 when the state has none of it. */
static int mode_energy(ts_system *sys, double a, const double *dir, double *scale)
{
    double d1, d2;
    int s = energy_along(sys, sys->x, a, dir, &d1, &d2);
    if (s)
        return s;
    *scale = d2 > 0.0 ? d2 + d1 * d1 / (4.0 * d2) : 0.0;
    if (sys->order == 2) {
        if ((s = energy_along(sys, sys->v, a, dir, &d1, &d2)))
            return s;
        if (d2 > 0.0)
            *scale += d1 * d1 / (4.0 * d2);
    }
    if (!isfinite(*scale))
        *scale = 0.0;
    return TS_OK;
}

int ts_stability_bounded(const ts_system_type *stype, const ts_params *params,
                         const ts_stepper_type *type, const ts_solver_options *sopt,
                         const ts_stability_options *opt, double t_end, double dt,
                         int *bounded, int *status, long *steps)
{
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    double *ye = NULL;
    *bounded = 0;
    *status = TS_OK;
    if (!(dt > 0.0) || !(t_end > 0.0))
        return ts_error(TS_ERR_INPUT, "stability run: dt %g and T %g must be > 0", dt, t_end);
    double q = t_end / dt;
    if (q > 1e9)
        return ts_error(TS_ERR_INPUT, "stability run: T / dt = %g is more than 1e9 steps", q);
    long nsteps = (long)ceil(q - 1e-9);
    if (nsteps < 1)
        nsteps = 1;
    *steps = nsteps;
    int s = ts_system_new(stype, params, &sys);
    if (s)
        return s;
    if ((s = ts_stepper_new(type, sys, sopt, &st)))
        goto done;
    size_t n = sys->n;
    int order2 = sys->order == 2;
    double sx = ts_vec_norm_inf(n, sys->x), sv = order2 ? ts_vec_norm_inf(n, sys->v) : 0.0;
    if (sys->ops->exact) {
        if (!(ye = malloc(ts_system_ydim(sys) * sizeof *ye))) {
            s = ts_error(TS_ERR_NOMEM, "stability run");
            goto done;
        }
        for (long k = 0; k <= nsteps; k++) {
            if ((s = ts_system_exact_y(sys, fmin((double)k * dt, t_end), ye)))
                goto done;
            sx = fmax(sx, ts_vec_norm_inf(n, ye));
            if (order2)
                sv = fmax(sv, ts_vec_norm_inf(n, ye + n));
        }
    }
    /* the energy test, E(t) <= E(0) + C S (see tstep/stability.h) */
    int use_energy = 0;
    double elim = 0.0;
    if (opt->seed && opt->seed_size > 0.0) {
        /* delta = seed_size max(1, |x(0)|) seed / |seed|: the stiffest mode
         * present from the start */
        double sn = ts_vec_norm_inf(n, opt->seed);
        double a = sn > 0.0 ? opt->seed_size * fmax(1.0, ts_vec_norm_inf(n, sys->x)) / sn : 0.0;
        use_energy = sys->ops->energy != NULL && a > 0.0;
        double scale = 0.0;
        if (use_energy && (s = mode_energy(sys, a, opt->seed, &scale)))
            goto done;
        shift_free(sys->x, sys, a, opt->seed); /* x0 + delta: where the run starts */
        double e0 = 0.0;
        if (use_energy && (s = total_energy(sys, &e0)))
            goto done;
        use_energy = use_energy && isfinite(e0) && scale > 0.0;
        elim = e0 + opt->bound * scale;
    }
    if (!(sx > 0.0))
        sx = 1.0;
    if (opt->rate > 0.0 && isfinite(opt->rate))
        sv = fmax(sv, opt->rate * sx);
    if (!(sv > 0.0))
        sv = 1.0;
    double xlim = opt->bound * sx, vlim = opt->bound * sv;
    for (long k = 1; k <= nsteps; k++) {
        double t = (double)(k - 1) * dt, h = k == nsteps ? t_end - t : dt;
        if (ts_stop_signal) { /* see tstep/run.h */
            s = ts_error(TS_ERR_INTERRUPTED, "stopped by signal %d", (int)ts_stop_signal);
            goto done;
        }
        int r = ts_stepper_step(st, sys, t, h);
        if (!r && !(ts_vec_norm_inf(n, sys->x) <= xlim &&
                    (!order2 || ts_vec_norm_inf(n, sys->v) <= vlim)))
            r = TS_ERR_DIVERGED;
        if (!r && use_energy) {
            double ke, pe;
            if ((s = ts_system_energy(sys, t + h, &ke, &pe)))
                goto done;
            if (!(ke + pe <= elim))
                r = TS_ERR_DIVERGED;
        }
        if (r) {
            *status = r;
            goto done;
        }
    }
    *bounded = 1;
done:
    free(ye);
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

/* One trial of the search, counted and reported. */
static int trial(const ts_system_type *stype, const ts_params *params,
                 const ts_stepper_type *type, const ts_solver_options *sopt,
                 const ts_stability_options *opt, double t_end, double dt,
                 ts_stability_result *res, int *bounded, int *status, long *steps)
{
    res->runs++;
    if (opt->progress)
        opt->progress(opt->progress_ctx, res->runs, dt);
    return ts_stability_bounded(stype, params, type, sopt, opt, t_end, dt, bounded, status,
                                steps);
}

int ts_stability_measure(const ts_system_type *stype, const ts_params *params,
                         const ts_stepper_type *type, const ts_solver_options *sopt,
                         const ts_stability_options *opt, double dt_start,
                         ts_stability_result *res)
{
    double T = opt->t_end;
    double dt_min = opt->dt_min > 0.0 ? opt->dt_min : 1e-6 * T;
    double dt_max = opt->dt_max > 0.0 ? opt->dt_max : T;
    *res = (ts_stability_result){.dt_crit = NAN, .dt_fail = NAN, .kind = TS_CRIT_FOUND};
    if (!(T > 0.0) || !(dt_min <= dt_max) || !(opt->bound > 0.0) || !(opt->rel_tol > 0.0))
        return ts_error(TS_ERR_INPUT, "stability: need T > 0, bound > 0, rel_tol > 0 and "
                                      "dt_min <= dt_max");
    double dt = isfinite(dt_start) && dt_start > 0.0 ? dt_start : 1e-3 * T;
    dt = fmin(fmax(dt, dt_min), dt_max);
    double lo, hi;
    long steps, lo_steps = 0;
    int b, st, s;
    if ((s = trial(stype, params, type, sopt, opt, T, dt, res, &b, &st, &steps)))
        return s;
    if (b) { /* bracket upward */
        lo = dt, lo_steps = steps;
        for (;;) {
            if (lo >= dt_max) {
                res->kind = TS_CRIT_INF;
                res->dt_crit = INFINITY;
                res->steps = lo_steps;
                return TS_OK;
            }
            hi = fmin(2.0 * lo, dt_max);
            if ((s = trial(stype, params, type, sopt, opt, T, hi, res, &b, &st, &steps)))
                return s;
            if (!b)
                break;
            lo = hi, lo_steps = steps;
        }
    } else { /* bracket downward */
        hi = dt;
        for (;;) {
            if (hi <= dt_min) {
                res->kind = TS_CRIT_BELOW_MIN;
                res->dt_crit = 0.0;
                res->dt_fail = hi;
                res->fail_status = st;
                return TS_OK;
            }
            lo = fmax(0.5 * hi, dt_min);
            int lb, lst;
            if ((s = trial(stype, params, type, sopt, opt, T, lo, res, &lb, &lst, &steps)))
                return s;
            if (lb) {
                lo_steps = steps;
                break;
            }
            hi = lo, st = lst;
        }
    }
    res->fail_status = st;
    while (hi > lo * (1.0 + opt->rel_tol)) {
        double mid = sqrt(lo * hi);
        int mst;
        if ((s = trial(stype, params, type, sopt, opt, T, mid, res, &b, &mst, &steps)))
            return s;
        if (b)
            lo = mid, lo_steps = steps;
        else
            hi = mid, res->fail_status = mst;
    }
    res->dt_crit = lo;
    res->dt_fail = hi;
    res->steps = lo_steps;
    if (opt->recheck > 1.0) {
        /* a true limit holds for longer runs a little below it; a T-limited one moves */
        if ((s = trial(stype, params, type, sopt, opt, opt->recheck * T, 0.9 * lo, res, &b, &st,
                       &steps)))
            return s;
        if (!b)
            res->kind = TS_CRIT_T_LIMITED;
    }
    return TS_OK;
}

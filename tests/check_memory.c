/* Memory: what makes implicit stepping and the Runge-Kutta engine lean
 * must not change their answers.
 *
 * Oracles: a spring network whose kinds share one stiffness and damping
 * keeps them per kind (no per-spring arrays), one that mixes values in a
 * kind keeps them per spring, and both give the forces of a plain loop over
 * the values the test passed (1e-14 relative) and fast-path products equal
 * to central differences of those forces (kd = 0, no clamp: the fast path
 * is then the exact Jacobian); a fast-path product equals the one built in
 * the test from the blocks ts_springs_block reports (bit for bit, the same
 * arithmetic); an implicit step that fails leaves the stored state as it
 * was, bit for bit (the Newton driver reads the start state in place); a
 * method with c0 != 0 is refused by scratch allocated without f0 and
 * matches the crank-nicolson stepper bit for bit with it; rk4 equals the
 * textbook formula evaluated here in the tableau's order, bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "tstep/implicit.h"
#include "tstep/linalg.h"
#include "tstep/springs.h"
#include "tstep/stepper.h"

/* A network of 6 particles at fixed, non-degenerate positions: a chain
 * (stretch), every second pair (bend) and a few cross springs (shear). */
#define NP 6
static const int edges[][3] = {{0, 1, TS_SPRING_STRETCH}, {1, 2, TS_SPRING_STRETCH},
                               {2, 3, TS_SPRING_STRETCH}, {3, 4, TS_SPRING_STRETCH},
                               {4, 5, TS_SPRING_STRETCH}, {0, 2, TS_SPRING_BEND},
                               {1, 3, TS_SPRING_BEND},    {2, 4, TS_SPRING_BEND},
                               {0, 3, TS_SPRING_SHEAR},   {2, 5, TS_SPRING_SHEAR}};
#define NE (sizeof edges / sizeof *edges)

static double k_of(size_t e, int mixed)
{
    double base = 100.0 * (1.0 + edges[e][2]);
    return mixed ? base * (1.0 + 0.25 * (double)(e % 3)) : base;
}

static double kd_of(size_t e, int mixed, int damped)
{
    return damped ? (mixed ? 0.1 + 0.05 * (double)e : 0.2) : 0.0;
}

static ts_springs *network(int mixed, int damped)
{
    ts_springs_options o = {.gravity = 9.81, .clamp = TS_SPRINGS_CLAMP_NEVER};
    ts_springs *s;
    ck_assert_int_eq(ts_springs_new(&ts_string, NP, &o, &s), TS_OK);
    for (size_t p = 0; p < NP; p++) {
        s->base.x[3 * p] = 0.3 * (double)p + 0.01 * (double)(p * p);
        s->base.x[3 * p + 1] = 0.1 * sin((double)p);
        s->base.x[3 * p + 2] = 0.05 * cos(2.0 * (double)p);
        ts_springs_set_mass(s, p, 0.1 + 0.01 * (double)p);
    }
    for (size_t e = 0; e < NE; e++)
        ck_assert_int_eq(ts_springs_add(s, (size_t)edges[e][0], (size_t)edges[e][1], k_of(e, mixed),
                                        kd_of(e, mixed, damped), edges[e][2]),
                         TS_OK);
    ck_assert_int_eq(ts_springs_finish(s), TS_OK);
    /* move off the rest state: stretched and compressed springs, velocities */
    for (size_t q = 0; q < 3 * NP; q++) {
        s->base.x[q] *= 1.0 + 0.03 * sin(1.7 * (double)q);
        s->base.v[q] = 0.2 * cos(0.9 * (double)q);
    }
    return s;
}

/* f = gravity + sum of -[k (l - L) + kd (n . u)] n, rest lengths from the
 * positions the network was built at */
static void plain_forces(int mixed, int damped, const ts_springs *s, const double *x,
                         const double *v, double *f)
{
    ts_springs *ref = network(mixed, damped); /* only for its rest lengths */
    for (size_t q = 0; q < 3 * NP; q++)
        f[q] = q % 3 == 1 ? -9.81 * s->base.mass[q] : 0.0;
    for (size_t e = 0; e < NE; e++) {
        size_t i = (size_t)edges[e][0], j = (size_t)edges[e][1];
        double rest = 0.0, d[3], u[3], l = 0.0, nu = 0.0;
        for (size_t m = 0; m < ref->ns; m++)
            if (ref->si[m] == i && ref->sj[m] == j)
                rest = ref->rest[m];
        for (int a = 0; a < 3; a++) {
            d[a] = x[3 * i + a] - x[3 * j + a];
            u[a] = v[3 * i + a] - v[3 * j + a];
            l += d[a] * d[a];
        }
        l = sqrt(l);
        for (int a = 0; a < 3; a++)
            nu += d[a] / l * u[a];
        double mag = -k_of(e, mixed) * (l - rest) - kd_of(e, mixed, damped) * nu;
        for (int a = 0; a < 3; a++) {
            f[3 * i + a] += mag * d[a] / l;
            f[3 * j + a] -= mag * d[a] / l;
        }
    }
    ts_system_free(&ref->base);
}

static double rel_diff(size_t n, const double *a, const double *b)
{
    double d = 0.0, m = 0.0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        m = fmax(m, fabs(b[i]));
    }
    return m > 0.0 ? d / m : d;
}

START_TEST(stiffness_per_kind_or_per_spring)
{
    for (int mixed = 0; mixed < 2; mixed++) {
        ts_springs *s = network(mixed, 1);
        ts_system *sys = &s->base;
        size_t n = sys->n;
        ck_assert_msg((s->k != NULL) == mixed, "mixed %d: per-spring arrays %s", mixed,
                      s->k ? "kept" : "dropped");
        ck_assert((s->kd != NULL) == mixed);
        for (size_t m = 0; m < s->ns; m++) /* each spring reads back its own values */
            for (size_t e = 0; e < NE; e++)
                if (s->si[m] == (uint32_t)edges[e][0] && s->sj[m] == (uint32_t)edges[e][1]) {
                    ck_assert(ts_springs_k(s, m) == k_of(e, mixed));
                    ck_assert(ts_springs_kd(s, m) == kd_of(e, mixed, 1));
                }
        double f[3 * NP], g[3 * NP];
        ck_assert_int_eq(ts_system_forces(sys, 0.0, sys->x, sys->v, f), TS_OK);
        plain_forces(mixed, 1, s, sys->x, sys->v, g);
        ck_assert_msg(rel_diff(n, f, g) < 1e-14, "mixed %d: forces off by %g", mixed,
                      rel_diff(n, f, g));
        ts_system_free(sys);
    }
}
END_TEST

/* Undamped, unclamped: the fast path's product at (alpha, 0) is alpha df/dx,
 * checked against central differences of the plain forces. */
START_TEST(fast_path_products_match_force_differences)
{
    for (int mixed = 0; mixed < 2; mixed++) {
        ts_springs *s = network(mixed, 0);
        ts_system *sys = &s->base;
        size_t n = sys->n;
        double u[3 * NP], out[3 * NP], fd[3 * NP], xp[3 * NP], xm[3 * NP], fp[3 * NP],
            fm[3 * NP];
        for (size_t q = 0; q < n; q++)
            u[q] = sin(2.3 * (double)q + 0.4);
        double alpha = 0.7, eps = 1e-6;
        ck_assert_int_eq(ts_system_linearize(sys, 0.0, sys->x, sys->v, alpha, 0.0), TS_OK);
        ck_assert_int_eq(ts_system_jacobian_mul(sys, u, out), TS_OK);
        for (size_t q = 0; q < n; q++)
            xp[q] = sys->x[q] + eps * u[q], xm[q] = sys->x[q] - eps * u[q];
        plain_forces(mixed, 0, s, xp, sys->v, fp);
        plain_forces(mixed, 0, s, xm, sys->v, fm);
        for (size_t q = 0; q < n; q++)
            fd[q] = alpha * (fp[q] - fm[q]) / (2.0 * eps);
        ck_assert_msg(rel_diff(n, out, fd) < 1e-7, "mixed %d: product off by %g", mixed,
                      rel_diff(n, out, fd));
        /* the product from the blocks the network reports, summed here */
        double ref[3 * NP] = {0};
        for (size_t e = 0; e < s->ns; e++) {
            double b[6];
            ts_springs_block(s, e, b);
            double B[3][3] = {{b[0], b[1], b[2]}, {b[1], b[3], b[4]}, {b[2], b[4], b[5]}};
            size_t i = 3 * (size_t)s->si[e], j = 3 * (size_t)s->sj[e];
            for (int r = 0; r < 3; r++) {
                double y = 0.0;
                for (int c = 0; c < 3; c++)
                    y += B[r][c] * (u[i + c] - u[j + c]);
                ref[i + r] -= y;
                ref[j + r] += y;
            }
        }
        ck_assert_msg(rel_diff(n, out, ref) < 1e-14, "mixed %d: blocks off by %g", mixed,
                      rel_diff(n, out, ref));
        ts_system_free(sys);
    }
}
END_TEST

/* the default cloth with an nx x ny grid */
static ts_system *grid_cloth(int nx, int ny)
{
    ts_params p;
    char v[32];
    ts_params_init(&p, ts_cloth.params);
    snprintf(v, sizeof v, "nx=%d", nx);
    ck_assert_int_eq(ts_params_set_pair(&p, v), TS_OK);
    snprintf(v, sizeof v, "ny=%d", ny);
    ck_assert_int_eq(ts_params_set_pair(&p, v), TS_OK);
    ts_system *sys = NULL;
    ck_assert_int_eq(ts_system_new(&ts_cloth, &p, &sys), TS_OK);
    return sys;
}

/* The blocks' cache, wide (q, w) and narrow (q, g), and the blocks formed
 * in each product: the same bits (product, shifted product and diagonal),
 * on a deformed moving cloth, with and without the
 * definiteness fix's clamping, for coefficients alpha, beta of one sign
 * (either) and of opposite signs (each spring's p then has its own sign:
 * another path, checked to be taken). */
START_TEST(block_cache_same_bits)
{
    ts_system *sys = grid_cloth(7, 6);
    ts_springs *s = ts_springs_of(sys);
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(s->lin_coef);
    ck_assert_ptr_null(s->lin_inv);
    size_t n = sys->n;
    double *x = malloc(n * sizeof *x), *u = malloc(n * sizeof *u), *o1 = malloc(n * sizeof *o1),
           *o2 = malloc(n * sizeof *o2), *d1 = malloc(n * sizeof *d1), *d2 = malloc(n * sizeof *d2),
           *m1 = malloc(n * sizeof *m1), *m2 = malloc(n * sizeof *m2);
    for (size_t q = 0; q < n; q++) {
        x[q] = sys->x[q] * (q % 5 == 0 ? 0.97 : 1.02) + 0.01 * sin(0.7 * (double)q);
        sys->v[q] = 0.3 * cos(0.3 * (double)q);
        u[q] = sin(1.9 * (double)q + 0.2);
    }
    /* (alpha, beta) and the sign every spring's p is expected to share (0: both) */
    static const double ab[][3] = {{1e-3, 0.03, 1}, {-1e-3, -0.03, -1}, {1e-5, -0.03, 0}};
    for (int c = 0; c < 3; c++)
        for (int fix = 0; fix < 2; fix++) {
            sys->definite_fix = fix;
            ck_assert_int_eq(ts_system_linearize(sys, 0.0, x, sys->v, ab[c][0], ab[c][1]), TS_OK);
            ck_assert_int_eq(s->lin_sign, (int)ab[c][2]);
            ck_assert_int_eq(ts_system_jacobian_mul(sys, u, o1), TS_OK);
            ck_assert_int_eq(sys->ops->jacobian_diag(sys, d1), TS_OK);
            ck_assert_int_eq(ts_springs_shifted_mul(sys, u, m1), TS_OK);
            int pos = 0, neg = 0; /* the springs' p = B's eigenvalue along the spring - q */
            for (size_t e = 0; e < s->ns; e++) {
                double b[6], dd[3], l2 = 0.0;
                ts_springs_block(s, e, b);
                for (int a = 0; a < 3; a++) {
                    dd[a] = x[3 * s->si[e] + a] - x[3 * s->sj[e] + a];
                    l2 += dd[a] * dd[a];
                }
                /* d^T B d / l^2 - q = p, q the eigenvalue across: B e = q e for e _|_ d */
                double bd0 = b[0] * dd[0] + b[1] * dd[1] + b[2] * dd[2];
                double bd1 = b[1] * dd[0] + b[3] * dd[1] + b[4] * dd[2];
                double bd2 = b[2] * dd[0] + b[4] * dd[1] + b[5] * dd[2];
                double along = (dd[0] * bd0 + dd[1] * bd1 + dd[2] * bd2) / l2;
                double across[3] = {dd[1], -dd[0], 0.0}; /* _|_ d (d is never along z here) */
                double q = (across[0] * (b[0] * across[0] + b[1] * across[1]) +
                            across[1] * (b[1] * across[0] + b[3] * across[1])) /
                           (across[0] * across[0] + across[1] * across[1]);
                if (along - q > 1e-12)
                    pos++;
                else if (along - q < -1e-12)
                    neg++;
            }
            if (ab[c][2] > 0)
                ck_assert(neg == 0 && pos > 0);
            else if (ab[c][2] < 0)
                ck_assert(pos == 0 && neg > 0);
            else
                ck_assert_msg(pos > 0 && neg > 0, "opposite signs: p > 0 on %d springs, < 0 on %d",
                              pos, neg);
            if (!fix) {
                /* unclamped: alpha df/dx + beta df/dv by central differences,
                 * df/dx at v = 0 (the fast path leaves out the damping force's
                 * dependence on x through its direction; it vanishes there) */
                double eps = 1e-6, *fp = malloc(n * sizeof *fp), *fm = malloc(n * sizeof *fm),
                       *xv = malloc(n * sizeof *xv), *fd = malloc(n * sizeof *fd),
                       *zero = calloc(n, sizeof *zero);
                for (int wrt = 0; wrt < 2; wrt++) {
                    const double *base = wrt ? zero : x;
                    for (int sgn = 1; sgn >= -1; sgn -= 2) {
                        for (size_t q = 0; q < n; q++)
                            xv[q] = base[q] + sgn * eps * u[q];
                        ck_assert_int_eq(ts_system_forces(sys, 0.0, wrt ? x : xv, wrt ? xv : zero,
                                                          sgn > 0 ? fp : fm),
                                         TS_OK);
                    }
                    for (size_t q = 0; q < n; q++) {
                        double dq = ab[c][wrt] * (fp[q] - fm[q]) / (2.0 * eps);
                        fd[q] = wrt ? fd[q] + dq : dq;
                    }
                }
                for (size_t q = 0; q < n; q++) /* pinned: no term in the product */
                    if (sys->pinned[q])
                        fd[q] = o1[q];
                ck_assert_msg(rel_diff(n, o1, fd) < 1e-6, "alpha %g beta %g: product off by %g",
                              ab[c][0], ab[c][1], rel_diff(n, o1, fd));
                free(fp), free(fm), free(xv), free(fd), free(zero);
            }
            /* as without the cache: 1/l kept, (q, g) formed in each product */
            double *keep = s->lin_coef;
            s->lin_coef = NULL;
            s->lin_inv = malloc(s->ns * sizeof *s->lin_inv);
            ck_assert_int_eq(ts_system_linearize(sys, 0.0, x, sys->v, ab[c][0], ab[c][1]), TS_OK);
            ck_assert_int_eq(ts_system_jacobian_mul(sys, u, o2), TS_OK);
            ck_assert_int_eq(sys->ops->jacobian_diag(sys, d2), TS_OK);
            ck_assert_int_eq(ts_springs_shifted_mul(sys, u, m2), TS_OK);
            free(s->lin_inv);
            s->lin_inv = NULL;
            s->lin_coef = keep;
            ck_assert(memcmp(o1, o2, n * sizeof *o1) == 0);
            ck_assert(memcmp(d1, d2, n * sizeof *d1) == 0);
            ck_assert(memcmp(m1, m2, n * sizeof *m1) == 0);
            /* the narrow cache of large networks: q and g, w formed in each product */
            ck_assert_int_eq(s->lin_wide, 1);
            s->lin_wide = 0;
            for (size_t e = 2 * s->ns; e < 4 * s->ns; e++) /* what it must not touch */
                s->lin_coef[e] = NAN;
            ck_assert_int_eq(ts_system_linearize(sys, 0.0, x, sys->v, ab[c][0], ab[c][1]), TS_OK);
            ck_assert_int_eq(s->lin_wcache, 0);
            for (size_t e = 0; e < 4 * s->ns; e++) /* 2 numbers a spring, those of the blocks */
                ck_assert(e < 2 * s->ns ? isfinite(s->lin_coef[e]) : isnan(s->lin_coef[e]));
            ck_assert_int_eq(ts_system_jacobian_mul(sys, u, o2), TS_OK);
            ck_assert_int_eq(sys->ops->jacobian_diag(sys, d2), TS_OK);
            ck_assert_int_eq(ts_springs_shifted_mul(sys, u, m2), TS_OK);
            s->lin_wide = 1;
            ck_assert(memcmp(o1, o2, n * sizeof *o1) == 0);
            ck_assert(memcmp(d1, d2, n * sizeof *d1) == 0);
            ck_assert(memcmp(m1, m2, n * sizeof *m1) == 0);
            /* and back: the wide cache holds w exactly when every p has one sign */
            ck_assert_int_eq(ts_system_linearize(sys, 0.0, x, sys->v, ab[c][0], ab[c][1]), TS_OK);
            ck_assert_int_eq(s->lin_wcache, ab[c][2] != 0);
        }
    sys->definite_fix = 0;
    free(x), free(u), free(o1), free(o2), free(d1), free(d2), free(m1), free(m2);
    ts_system_free(sys);
}
END_TEST

static ts_system *small_cloth(void)
{
    ts_system *sys = grid_cloth(6, 5);
    for (size_t i = 0; i < sys->n; i++)
        sys->v[i] = 0.3 * sin(1.1 * (double)i);
    return sys;
}

/* The cache's width follows the network's size: wide (q and w) up to
 * TS_SPRINGS_WIDE_MAX springs, narrow (q and g) beyond, 16 B a spring less;
 * the narrow one's products are those formed without a cache, bit for bit. */
START_TEST(large_networks_keep_the_narrow_cache)
{
    static const int sizes[] = {100, 150};
    for (int z = 0; z < 2; z++) {
        ts_system *sys = grid_cloth(sizes[z], sizes[z]);
        ts_springs *s = ts_springs_of(sys);
        size_t n = sys->n;
        ck_assert_int_eq(s->ns > TS_SPRINGS_WIDE_MAX, z == 1);
        ck_assert_int_eq(s->lin_wide, z == 0);
        double *u = malloc(n * sizeof *u), *o1 = malloc(n * sizeof *o1),
               *o2 = malloc(n * sizeof *o2);
        for (size_t q = 0; q < n; q++) {
            sys->x[q] *= q % 3 ? 1.01 : 0.98;
            u[q] = cos(0.37 * (double)q);
        }
        ck_assert_int_eq(ts_system_linearize(sys, 0.0, sys->x, sys->v, 1e-4, 1e-2), TS_OK);
        ck_assert_int_eq(s->lin_wcache, z == 0);
        ck_assert_int_eq(ts_springs_shifted_mul(sys, u, o1), TS_OK);
        double *keep = s->lin_coef;
        s->lin_coef = NULL;
        s->lin_inv = malloc(s->ns * sizeof *s->lin_inv);
        ck_assert_int_eq(ts_system_linearize(sys, 0.0, sys->x, sys->v, 1e-4, 1e-2), TS_OK);
        ck_assert_int_eq(ts_springs_shifted_mul(sys, u, o2), TS_OK);
        free(s->lin_inv);
        s->lin_inv = NULL;
        s->lin_coef = keep;
        ck_assert(memcmp(o1, o2, n * sizeof *o1) == 0);
        free(u), free(o1), free(o2);
        ts_system_free(sys);
    }
}
END_TEST

/* Newton stopped after one iteration: TS_ERR_NEWTON, the state untouched. */
START_TEST(failed_implicit_step_leaves_the_state)
{
    ts_system *sys = small_cloth();
    size_t n = sys->n;
    ts_solver_options o = ts_default_solver_options();
    o.newton_max = 1;
    o.newton_tol = 1e-15;
    void *scratch;
    ck_assert_int_eq(ts_implicit_alloc(sys, &o, &scratch), TS_OK);
    double *x = malloc(n * sizeof *x), *v = malloc(n * sizeof *v);
    memcpy(x, sys->x, n * sizeof *x);
    memcpy(v, sys->v, n * sizeof *v);
    ts_step_stats stats = {0};
    ck_assert_int_eq(ts_implicit_euler_step(scratch, sys, 0.0, 0.05, 0, &stats), TS_ERR_NEWTON);
    ck_assert(memcmp(x, sys->x, n * sizeof *x) == 0);
    ck_assert(memcmp(v, sys->v, n * sizeof *v) == 0);
    ts_error_clear();
    ts_implicit_free(scratch);
    free(x), free(v);
    ts_system_free(sys);
}
END_TEST

static int refusing_post_step(ts_system *sys, double t, double *x, double *v)
{
    (void)sys, (void)t, (void)v;
    x[0] += 1.0; /* a projection that fails half-way */
    return ts_error(TS_ERR_DIVERGED, "test: projection refused");
}

/* The implicit steppers that keep their start (TS_KEEPS_START) take no copy
 * of the state, yet restore it bit for bit when the step is refused after
 * they wrote the end state (here by a failing post-step projection), give
 * the start positions after a step and undo it; and a step is the same
 * bits as a step of a stepper that copied the state (the flag cleared). */
START_TEST(kept_start_restores_the_state)
{
    const ts_stepper_type *types[] = {tests_stepper("backward-euler"), tests_stepper("backward-euler-linear"),
                                      tests_stepper("implicit-midpoint"), tests_stepper("crank-nicolson")};
    for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
        ck_assert(types[k]->flags & TS_KEEPS_START);
        ts_system *sys = small_cloth();
        size_t n = sys->n;
        double *x = malloc(n * sizeof *x), *v = malloc(n * sizeof *v);
        double *x1 = malloc(n * sizeof *x1), *v1 = malloc(n * sizeof *v1);
        memcpy(x, sys->x, n * sizeof *x);
        memcpy(v, sys->v, n * sizeof *v);
        ts_stepper *st, *ref;
        ck_assert_int_eq(ts_stepper_new(types[k], sys, NULL, &st), TS_OK);
        ck_assert_ptr_null(st->backup_);
        /* the same method with a copy of the state, as every other stepper */
        ts_stepper_type copying = *types[k];
        copying.flags &= ~(unsigned)TS_KEEPS_START;
        ck_assert_int_eq(ts_stepper_new(&copying, sys, NULL, &ref), TS_OK);
        ck_assert_ptr_nonnull(ref->backup_);

        /* refused after the end state was written: the start back */
        const ts_system_ops *ops = sys->ops;
        ts_system_ops refusing = *ops;
        refusing.post_step = refusing_post_step;
        sys->ops = &refusing;
        ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, 0.05), TS_ERR_DIVERGED);
        ts_error_clear();
        sys->ops = ops;
        ck_assert(memcmp(x, sys->x, n * sizeof *x) == 0);
        ck_assert(memcmp(v, sys->v, n * sizeof *v) == 0);
        ck_assert_int_eq(st->last.rejected, 1);

        /* accepted: the start positions, then undone */
        ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, 0.05), TS_OK);
        ck_assert(memcmp(x, ts_stepper_start_x(st), n * sizeof *x) == 0);
        ck_assert(memcmp(x, sys->x, n * sizeof *x) != 0);
        memcpy(x1, sys->x, n * sizeof *x1);
        memcpy(v1, sys->v, n * sizeof *v1);
        long accepted = st->total.accepted, rejected = st->total.rejected;
        ts_stepper_undo(st, sys);
        ck_assert(memcmp(x, sys->x, n * sizeof *x) == 0);
        ck_assert(memcmp(v, sys->v, n * sizeof *v) == 0);
        ck_assert_int_eq(st->total.accepted, accepted - 1);
        ck_assert_int_eq(st->total.rejected, rejected + 1);

        /* the stepper that copies the state: the same end state */
        ck_assert_int_eq(ts_stepper_step(ref, sys, 0.0, 0.05), TS_OK);
        ck_assert(memcmp(x1, sys->x, n * sizeof *x1) == 0);
        ck_assert(memcmp(v1, sys->v, n * sizeof *v1) == 0);
        ts_stepper_free(st);
        ts_stepper_free(ref);
        free(x), free(v), free(x1), free(v1);
        ts_system_free(sys);
    }
}
END_TEST

/* Crank-Nicolson's description run by hand: refused without f0, and with
 * it the same bits as the crank-nicolson stepper. */
START_TEST(reused_f0_needs_its_vector)
{
    ts_system *a = small_cloth(), *b = small_cloth();
    size_t n = a->n;
    double h = 0.02;
    ts_implicit_method m = {.gamma = 0.5 * h, .c0 = 0.5 * h, .ts = 0.0, .tf = h, .cv = 1.0,
                            .px = h, .cx = 0.5 * h, .qx = h, .ex = 0.5 * h, .at_start = 1};
    ts_solver_options o = ts_default_solver_options();
    void *lean, *full;
    ts_step_stats stats = {0};
    ck_assert_int_eq(ts_implicit_alloc(a, &o, &lean), TS_OK);
    ck_assert_int_eq(ts_implicit_newton(lean, a, &m, 0, &stats), TS_ERR_UNSUPPORTED);
    ts_error_clear();
    ck_assert_int_eq(ts_implicit_alloc_with(a, &o, 1, &full), TS_OK);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("crank-nicolson"), b, &o, &st), TS_OK);
    for (int k = 0; k < 3; k++) {
        m.ts = k * h, m.tf = (k + 1) * h;
        ck_assert_int_eq(ts_implicit_newton(full, a, &m, 0, &stats), TS_OK);
        ck_assert_int_eq(ts_stepper_step(st, b, k * h, h), TS_OK);
        ck_assert(memcmp(a->x, b->x, n * sizeof *a->x) == 0);
        ck_assert(memcmp(a->v, b->v, n * sizeof *a->v) == 0);
    }
    ts_stepper_free(st);
    ts_implicit_free(lean);
    ts_implicit_free(full);
    ts_system_free(a);
    ts_system_free(b);
}
END_TEST

/* ANSWER-BEGIN(rk4): rk4's update in code */
/* rk4 on the first-order view, written out: Y_i = Y + (h a_i,i-1) k_{i-1},
 * Y1 = ((((Y + (h/6) k1) + (h/3) k2) + (h/3) k3) + (h/6) k4), the order in
 * which the engine adds (one product per weight, no fused multiply-add). */
START_TEST(rk4_equals_the_formula)
{
    ts_system *sys = small_cloth();
    size_t m = ts_system_ydim(sys);
    double h = 1e-3, *y = malloc(m * sizeof *y), *ys = malloc(m * sizeof *ys);
    double *k[4];
    for (int i = 0; i < 4; i++)
        k[i] = malloc(m * sizeof *k[i]);
    static const double c[4] = {0.0, 0.5, 0.5, 1.0}, w[4] = {1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0,
                                                              1.0 / 6.0};
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(&ts_rk4, sys, NULL, &st), TS_OK);
    for (int step = 0; step < 3; step++) {
        double t = step * h;
        ts_system_get_y(sys, y);
        ck_assert_int_eq(ts_system_deriv(sys, t, y, k[0]), TS_OK);
        for (int i = 1; i < 4; i++) {
            double a = h * c[i];
            for (size_t q = 0; q < m; q++)
                ys[q] = y[q] + a * k[i - 1][q];
            ck_assert_int_eq(ts_system_deriv(sys, t + c[i] * h, ys, k[i]), TS_OK);
        }
        for (size_t q = 0; q < m; q++) {
            double z = y[q];
            for (int i = 0; i < 4; i++)
                z += (h * w[i]) * k[i][q];
            y[q] = z;
        }
        ck_assert_int_eq(ts_stepper_step(st, sys, t, h), TS_OK);
        double *got = malloc(m * sizeof *got);
        ts_system_get_y(sys, got);
        ck_assert_msg(memcmp(got, y, m * sizeof *y) == 0, "step %d: rk4 differs by %g", step,
                      rel_diff(m, got, y));
        free(got);
    }
    ts_stepper_free(st);
    for (int i = 0; i < 4; i++)
        free(k[i]);
    free(y), free(ys);
    ts_system_free(sys);
}
END_TEST
/* ANSWER-END */

Suite *memory_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("lean");
    tcase_add_test(tc, stiffness_per_kind_or_per_spring);
    tcase_add_test(tc, fast_path_products_match_force_differences);
    tcase_add_test(tc, block_cache_same_bits);
    tcase_add_test(tc, large_networks_keep_the_narrow_cache);
    tcase_add_test(tc, failed_implicit_step_leaves_the_state);
    tcase_add_test(tc, kept_start_restores_the_state);
    tcase_add_test(tc, reused_f0_needs_its_vector);
    tcase_add_test(tc, rk4_equals_the_formula); /* ANSWER-LINE(rk4) */
    suite_add_tcase(s, tc);
    return s;
}

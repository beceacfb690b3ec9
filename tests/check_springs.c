/* Spring networks (string, hair, cloth, mesh cloth) and the OBJ reader.
 *
 * Oracles: pinned particles are bit-for-bit still under every registered
 * stepper; internal spring forces cancel and a free cloth keeps its
 * momentum to round-off under the explicit steppers; forces are minus the
 * central-difference gradient of the potential; dfdx_mul and dfdv_mul are
 * the central differences of the forces; the cached fast path equals
 * alpha dfdx + beta dfdv (clamp off) and is definite with the clamp on;
 * backward Euler keeps a 30 x 30 cloth bounded at dt = 1/30 where forward
 * Euler diverges; curly hair holds its helix; the OBJ reader rejects a
 * table of bad files naming the line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests.h"
#include "tstep/linalg.h"
#include "tstep/obj.h"
#include "tstep/run.h"
#include "tstep/springs.h"
#include "tstep/stepper.h"
#include "springs/springs.h"

#define SHIPPED_OBJ "data/cloth.obj"

/* Create a system of `type` from "key=value" pairs (NULL-terminated). */
static ts_system *make(const ts_system_type *type, const char *const *pairs)
{
    ts_params p;
    ts_params_init(&p, type->params);
    for (; pairs && *pairs; pairs++)
        ck_assert_msg(ts_params_set_pair(&p, *pairs) == TS_OK, "%s: %s", *pairs,
                      ts_error_detail());
    ts_system *sys = NULL;
    int s = ts_system_new(type, &p, &sys);
    ck_assert_msg(s == TS_OK, "%s: %s", type->name, ts_error_detail());
    return sys;
}

/* deterministic pseudo-random numbers in [-1, 1) */
static double rnd(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (double)(*state >> 8) / 8388608.0 - 1.0;
}

static void rnd_vec(unsigned *state, size_t n, double scale, double *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = scale * rnd(state);
}

/* The systems every generic test runs on, small enough to be quick. */
typedef struct {
    const char *label;
    const ts_system_type *type;
    const char *pairs[8];
} case_def;

static const case_def cases[] = {
    {"string", &ts_string, {NULL}},
    {"string-both", &ts_string, {"pin=both", NULL}},
    {"hair-curly", &ts_hair, {"n=12", "curl=2", NULL}},
    {"hair-straight", &ts_hair, {"n=8", NULL}},
    {"cloth", &ts_cloth, {"nx=5", "ny=4", NULL}},
    {"cloth-flat-edge", &ts_cloth, {"nx=4", "ny=4", "plane=xz", "pin=top-edge", NULL}},
    {"mesh-cloth", &ts_cloth, {"mesh=" SHIPPED_OBJ, NULL}},
};
enum { NCASES = sizeof cases / sizeof *cases };

static ts_system *make_case(int c, const char *extra1, const char *extra2)
{
    const char *pairs[12];
    int k = 0;
    for (const char *const *p = cases[c].pairs; *p; p++)
        pairs[k++] = *p;
    if (extra1)
        pairs[k++] = extra1;
    if (extra2)
        pairs[k++] = extra2;
    pairs[k] = NULL;
    return make(cases[c].type, pairs);
}

/* Move the stored state off its rest configuration: positions by up to
 * `dx` (pinned too, so pins do not hide errors), velocities by up to `dv`. */
static void perturb(ts_system *sys, unsigned seed, double dx, double dv)
{
    unsigned st = seed;
    for (size_t i = 0; i < sys->n; i++) {
        sys->x[i] += dx * rnd(&st);
        sys->v[i] = dv * rnd(&st);
    }
}

/* --- pins ---------------------------------------------------------------------- */

START_TEST(pinned_particles_never_move)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    for (int c = 0; c < NCASES; c++) {
        ts_system *sys = make_case(c, "wind_z=3", "gust=1");
        ck_assert_ptr_nonnull(sys->pinned);
        size_t n = sys->n;
        double *x0 = malloc(n * sizeof *x0);
        ck_assert_ptr_nonnull(x0);
        memcpy(x0, sys->x, n * sizeof *x0);
        ts_stepper *st;
        ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
        for (int k = 0; k < 20; k++) {
            int s = ts_stepper_step(st, sys, 1e-3 * k, 1e-3);
            ck_assert_msg(s == TS_OK, "%s on %s, step %d: %s", type->name, cases[c].label, k,
                          ts_error_detail());
        }
        size_t moved = 0;
        for (size_t i = 0; i < n; i++) {
            if (sys->pinned[i])
                ck_assert_msg(sys->x[i] == x0[i] && sys->v[i] == 0.0,
                              "%s on %s: pinned dof %zu moved", type->name, cases[c].label, i);
            else
                moved += sys->x[i] != x0[i];
        }
        ck_assert_msg(moved > 0, "%s on %s: nothing moved", type->name, cases[c].label);
        ts_stepper_free(st);
        ts_system_free(sys);
        free(x0);
    }
}
END_TEST

/* --- momentum -------------------------------------------------------------------- */

START_TEST(internal_forces_sum_to_zero)
{
    for (int c = 0; c < NCASES; c++) {
        ts_system *sys = make_case(c, "gravity=0", "drag=0");
        perturb(sys, 7u + (unsigned)c, 0.02, 1.0);
        double *f = malloc(sys->n * sizeof *f), sum[3] = {0, 0, 0}, mag = 0.0;
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(ts_system_forces(sys, 0.0, sys->x, sys->v, f), TS_OK);
        for (size_t i = 0; i < sys->n; i++)
            sum[i % 3] += f[i], mag += fabs(f[i]);
        ck_assert_double_gt(mag, 1e-3);
        for (int a = 0; a < 3; a++)
            ck_assert_msg(fabs(sum[a]) <= 1e-13 * mag, "%s: net force %g of %g",
                          cases[c].label, sum[a], mag);
        free(f);
        ts_system_free(sys);
    }
}
END_TEST

START_TEST(free_cloth_keeps_momentum_explicit)
{
    const ts_stepper_type *type = ts_stepper_at(_i);
    if (type->flags & TS_IMPLICIT)
        return;
    static const char *const pairs[] = {"nx=6", "ny=5", "pin=none", "gravity=0", "drag=0",
                                        "damping=0.05", NULL};
    ts_system *sys = make(&ts_cloth, pairs);
    perturb(sys, 3u, 0.01, 0.5);
    double p0[3], p1[3], scale = 0.0;
    sys->ops->momentum(sys, sys->x, sys->v, p0);
    for (size_t i = 0; i < sys->n; i++)
        scale += sys->mass[i] * fabs(sys->v[i]);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    for (int k = 0; k < 200; k++)
        ck_assert_int_eq(ts_stepper_step(st, sys, 1e-4 * k, 1e-4), TS_OK);
    sys->ops->momentum(sys, sys->x, sys->v, p1);
    for (int a = 0; a < 3; a++)
        ck_assert_msg(fabs(p1[a] - p0[a]) <= 1e-13 * scale, "%s: momentum %d drifted %g",
                      type->name, a, p1[a] - p0[a]);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* --- derivatives against finite differences ---------------------------------------- */

/* max |a - b| / max |b| */
static double rel_err(size_t n, const double *a, const double *b)
{
    double e = ts_vec_dist_inf(n, a, b), m = ts_vec_norm_inf(n, b);
    return m > 0.0 ? e / m : e;
}

START_TEST(forces_are_minus_energy_gradient)
{
    for (int c = 0; c < NCASES; c++) {
        /* conservative: no drag, no wind; damping acts only at v != 0, and v = 0 here */
        ts_system *sys = make_case(c, "drag=0", NULL);
        perturb(sys, 11u + (unsigned)c, 0.03, 0.0);
        size_t n = sys->n;
        double *f = malloc(3 * n * sizeof *f), *u = f + n, *xp = u + n;
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(ts_system_forces(sys, 0.0, sys->x, sys->v, f), TS_OK);
        unsigned st = 5u;
        for (int dir = 0; dir < 5; dir++) {
            rnd_vec(&st, n, 1.0, u);
            double h = 1e-6, ke, ep, em, fu = ts_vec_dot(n, f, u);
            ts_vec_copy(n, sys->x, xp);
            ts_vec_axpy(n, h, u, xp);
            sys->ops->energy(sys, 0.0, xp, sys->v, &ke, &ep);
            ts_vec_copy(n, sys->x, xp);
            ts_vec_axpy(n, -h, u, xp);
            sys->ops->energy(sys, 0.0, xp, sys->v, &ke, &em);
            double fd = -(ep - em) / (2.0 * h);
            double scale = 0.0;
            for (size_t i = 0; i < n; i++)
                scale += fabs(f[i] * u[i]);
            ck_assert_msg(fabs(fu - fd) <= 1e-6 * scale, "%s: f.u %.12g, -dE/dx.u %.12g",
                          cases[c].label, fu, fd);
        }
        free(f);
        ts_system_free(sys);
    }
}
END_TEST

START_TEST(jacobian_products_match_force_differences)
{
    for (int c = 0; c < NCASES; c++) {
        /* everything on: damping (its position derivative too), drag, wind */
        ts_system *sys = make_case(c, "drag=0.7", "wind_x=1");
        perturb(sys, 13u + (unsigned)c, 0.03, 1.0);
        size_t n = sys->n;
        double *u = malloc(5 * n * sizeof *u), *fp = u + n, *fm = fp + n, *j = fm + n,
               *y = j + n;
        ck_assert_ptr_nonnull(u);
        unsigned st = 17u;
        double h = 1e-6;
        for (int dir = 0; dir < 3; dir++) {
            rnd_vec(&st, n, 1.0, u);
            /* df/dx u */
            ts_vec_copy(n, sys->x, y);
            ts_vec_axpy(n, h, u, y);
            ts_system_forces(sys, 0.3, y, sys->v, fp);
            ts_vec_copy(n, sys->x, y);
            ts_vec_axpy(n, -h, u, y);
            ts_system_forces(sys, 0.3, y, sys->v, fm);
            ts_vec_axpby(n, -1.0 / (2.0 * h), fm, 1.0 / (2.0 * h), fp);
            ck_assert_int_eq(ts_system_dfdx_mul(sys, 0.3, sys->x, sys->v, u, j), TS_OK);
            ck_assert_msg(rel_err(n, j, fp) < 1e-6, "%s: dfdx_mul off by %g", cases[c].label,
                          rel_err(n, j, fp));
            /* df/dv u */
            ts_vec_copy(n, sys->v, y);
            ts_vec_axpy(n, h, u, y);
            ts_system_forces(sys, 0.3, sys->x, y, fp);
            ts_vec_copy(n, sys->v, y);
            ts_vec_axpy(n, -h, u, y);
            ts_system_forces(sys, 0.3, sys->x, y, fm);
            ts_vec_axpby(n, -1.0 / (2.0 * h), fm, 1.0 / (2.0 * h), fp);
            ck_assert_int_eq(ts_system_dfdv_mul(sys, 0.3, sys->x, sys->v, u, j), TS_OK);
            ck_assert_msg(rel_err(n, j, fp) < 1e-6, "%s: dfdv_mul off by %g", cases[c].label,
                          rel_err(n, j, fp));
        }
        free(u);
        ts_system_free(sys);
    }
}
END_TEST

/* jacobian_mul vs alpha dfdx_mul + beta dfdv_mul with clamp off; the fast
 * path drops the damping's position derivative, so either kd = 0 with
 * random velocities, or kd > 0 with v = 0 (where that term vanishes). */
static void check_fast_path(int c, const char *damping, double dv)
{
    ts_system *sys = make_case(c, "clamp=0", damping);
    perturb(sys, 19u + (unsigned)c, 0.05, dv);
    size_t n = sys->n;
    double *u = malloc(5 * n * sizeof *u), *a = u + n, *b = a + n, *fast = b + n, *d = fast + n;
    ck_assert_ptr_nonnull(u);
    const double alpha = 0.37, beta = 0.011;
    unsigned st = 23u;
    ck_assert_int_eq(ts_system_linearize(sys, 0.0, sys->x, sys->v, alpha, beta), TS_OK);
    for (int dir = 0; dir < 3; dir++) {
        rnd_vec(&st, n, 1.0, u);
        ts_system_dfdx_mul(sys, 0.0, sys->x, sys->v, u, a);
        ts_system_dfdv_mul(sys, 0.0, sys->x, sys->v, u, b);
        ts_vec_axpby(n, beta, b, alpha, a); /* a = alpha dfdx u + beta dfdv u */
        ck_assert_int_eq(ts_system_jacobian_mul(sys, u, fast), TS_OK);
        ck_assert_msg(rel_err(n, fast, a) < 1e-10, "%s (%s): fast path off by %g",
                      cases[c].label, damping, rel_err(n, fast, a));
    }
    /* jacobian_diag is the diagonal of the same operator */
    ck_assert_int_eq(sys->ops->jacobian_diag(sys, d), TS_OK);
    for (size_t i = 0; i < n; i++) {
        ts_vec_zero(n, u);
        u[i] = 1.0;
        ts_system_jacobian_mul(sys, u, fast);
        ck_assert_msg(fabs(fast[i] - d[i]) <= 1e-12 * fmax(1.0, fabs(d[i])),
                      "%s: diag[%zu] %g, product %g", cases[c].label, i, d[i], fast[i]);
    }
    free(u);
    ts_system_free(sys);
}

START_TEST(fast_path_equals_exact_products)
{
    for (int c = 0; c < NCASES; c++) {
        check_fast_path(c, "damping=0", 1.0);
        check_fast_path(c, "damping=0.3", 0.0);
    }
}
END_TEST

/* The linear solvers' product M u - J u (ts_springs_shifted_mul), one pass
 * less than J u and then M u minus it: equal to that to rounding, with
 * positive, negative and mixed signs of (alpha, beta) (the product's three
 * loops), counted as one Jacobian product; M u bit for bit before any
 * linearization; the same bits on 1 and 2 threads (a 40x40 cloth). */
START_TEST(shifted_product_is_mass_minus_jacobian)
{
    static const double coef[][2] = {{-0.37, -0.011}, {0.37, 0.011}, {-0.37, 0.011}};
    static const char *const large[] = {"nx=40", "ny=40", NULL};
    for (int c = 0; c <= NCASES; c++) {
        ts_system *sys =
            c < NCASES ? make_case(c, "damping=0.3", NULL) : make(&ts_cloth, large);
        perturb(sys, 31u + (unsigned)c, 0.05, 0.2);
        size_t n = sys->n;
        double *u = malloc(4 * n * sizeof *u), *jv = u + n, *sh = jv + n, *sh2 = sh + n;
        ck_assert_ptr_nonnull(u);
        unsigned st = 29u;
        rnd_vec(&st, n, 1.0, u);
        ck_assert_int_eq(ts_springs_shifted_mul(sys, u, sh), TS_OK);
        for (size_t i = 0; i < n; i++)
            ck_assert(sh[i] == sys->mass[i] * u[i]);
        for (int k = 0; k < 3; k++) {
            ck_assert_int_eq(
                ts_system_linearize(sys, 0.0, sys->x, sys->v, coef[k][0], coef[k][1]), TS_OK);
            ck_assert_int_eq(ts_system_jacobian_mul(sys, u, jv), TS_OK);
            long products = sys->jacobian_products;
            ck_assert_int_eq(ts_springs_shifted_mul(sys, u, sh), TS_OK);
            ck_assert_int_eq(sys->jacobian_products, products + 1);
            double scale = 0.0;
            for (size_t i = 0; i < n; i++)
                scale = fmax(scale, fabs(sys->mass[i] * u[i]) + fabs(jv[i]));
            for (size_t i = 0; i < n; i++)
                ck_assert_msg(fabs(sh[i] - (sys->mass[i] * u[i] - jv[i])) <= 1e-14 * scale,
                              "case %d, signs %d, entry %zu: %.17g against %.17g", c, k, i,
                              sh[i], sys->mass[i] * u[i] - jv[i]);
            ts_threads_set_min(1);
            ts_threads_set(2);
            ck_assert_int_eq(ts_springs_shifted_mul(sys, u, sh2), TS_OK);
            ts_threads_set(1);
            ts_threads_set_min(TS_PAR_MIN);
            ck_assert(memcmp(sh, sh2, n * sizeof *sh) == 0);
        }
        free(u);
        ts_system_free(sys);
    }
}
END_TEST

/* Springs e0..e1 - 1 of reference_product: per spring, with q and g of
 * the narrow cache (qg), w = |g| (x_i - x_j), d = u_i - u_j and
 * y = q d + (sign(g) (w . d)) w; the first particle's sum of -y (neg: +y)
 * added after its springs, +y (neg: -y) to the second particle's entry at
 * once. */
static void reference_springs(const ts_springs *s, size_t e0, size_t e1, const double *qg,
                              const double *x, const double *u, int neg, double *out)
{
    for (size_t e = e0; e < e1;) {
        size_t i = 3 * (size_t)s->si[e];
        double acc[3] = {0.0, 0.0, 0.0};
        for (; e < e1 && 3 * (size_t)s->si[e] == i; e++) {
            size_t j = 3 * (size_t)s->sj[e];
            double q = qg[2 * e], g = qg[2 * e + 1], w[3], d[3];
            for (int c = 0; c < 3; c++)
                w[c] = fabs(g) * (x[i + c] - x[j + c]), d[c] = u[i + c] - u[j + c];
            double c = copysign(1.0, g) * ((w[0] * d[0] + w[1] * d[1]) + w[2] * d[2]);
            for (int k = 0; k < 3; k++) {
                double y = q * d[k] + c * w[k];
                acc[k] = neg ? acc[k] + y : acc[k] - y;
                out[j + k] = neg ? out[j + k] - y : out[j + k] + y;
            }
        }
        for (int k = 0; k < 3; k++)
            out[i + k] += acc[k];
    }
}

/* M u - J u (neg) or J u as a plain loop: the mass and drag term, then the
 * springs in the order of the threads' chunks (tstep/springs.h): those of
 * the even chunks, then those of the odd ones */
static void reference_product(const ts_springs *s, const double *qg, const double *x,
                              const double *u, int neg, double *out)
{
    const double *m = s->base.mass;
    double wd = s->lin_wdrag;
    for (size_t k = 0; k < s->base.n; k++)
        out[k] = neg ? m[k] * u[k] + wd * m[k] * u[k] : -wd * m[k] * u[k];
    for (size_t odd = 0; odd < 2; odd++)
        for (size_t c = odd; c < s->nchunk; c += 2)
            reference_springs(s, s->chunk_first[c], s->chunk_first[c + 1], qg, x, u, neg, out);
}

/* The fast path's products, J u and M u - J u, bit for bit those of the
 * plain loop above, on every path: the wide cache (q, w), the narrow one
 * (q, g), none (1/l), each with every g of one sign (either) or of both,
 * clamped or not, on 1 and 2 threads; on networks long enough for the
 * product's vector loop and its edges (springs ending at the last
 * particle). */
START_TEST(fast_products_equal_plain_loop)
{
    static const char *const cloth[] = {"nx=40", "ny=30", "damping=0.3", NULL};
    static const char *const hair[] = {"n=300", "curl=2", NULL};
    static const double ab[][2] = {{1e-3, 0.03}, {-1e-3, -0.03}, {1e-5, -0.03}};
    for (int sysno = 0; sysno < 3; sysno++) {
        ts_system *sys = sysno == 0   ? make(&ts_cloth, cloth)
                         : sysno == 1 ? make(&ts_hair, hair)
                                      : make_case(6, "damping=0.3", NULL);
        ts_springs *s = ts_springs_of(sys);
        perturb(sys, 7u + (unsigned)sysno, 0.05, 0.2);
        size_t n = sys->n;
        double *u = malloc(4 * n * sizeof *u), *ref = u + n, *got = ref + n, *got2 = got + n;
        double *qg = malloc(2 * s->ns * sizeof *qg), *keep = s->lin_coef;
        unsigned st = 3u;
        rnd_vec(&st, n, 1.0, u);
        for (int c = 0; c < 3; c++)
            for (int fix = 0; fix < 2; fix++) {
                sys->definite_fix = fix;
                s->lin_wide = 0; /* q and g from the narrow cache */
                ck_assert_int_eq(
                    ts_system_linearize(sys, 0.0, sys->x, sys->v, ab[c][0], ab[c][1]), TS_OK);
                memcpy(qg, s->lin_coef, 2 * s->ns * sizeof *qg);
                for (int path = 0; path < 3; path++) { /* narrow, wide, none */
                    s->lin_wide = path == 1;
                    s->lin_coef = path == 2 ? NULL : keep;
                    s->lin_inv = path == 2 ? malloc(s->ns * sizeof *s->lin_inv) : NULL;
                    ck_assert_int_eq(
                        ts_system_linearize(sys, 0.0, sys->x, sys->v, ab[c][0], ab[c][1]),
                        TS_OK);
                    ck_assert_int_eq(s->lin_wcache, path == 1 && c < 2);
                    for (int neg = 0; neg < 2; neg++) {
                        reference_product(s, qg, sys->x, u, neg, ref);
                        for (int th = 1; th <= 2; th++) {
                            ts_threads_set_min(1);
                            ts_threads_set(th);
                            double *o = th == 1 ? got : got2;
                            ck_assert_int_eq(neg ? ts_springs_shifted_mul(sys, u, o)
                                                 : ts_system_jacobian_mul(sys, u, o),
                                             TS_OK);
                            ts_threads_set(1);
                            ts_threads_set_min(TS_PAR_MIN);
                            for (size_t k = 0; k < n; k++)
                                ck_assert_msg(memcmp(&o[k], &ref[k], sizeof *o) == 0,
                                              "system %d, signs %d, fix %d, path %d, neg %d, "
                                              "threads %d, entry %zu: %.17g, plain loop %.17g",
                                              sysno, c, fix, path, neg, th, k, o[k], ref[k]);
                        }
                    }
                    free(s->lin_inv);
                    s->lin_inv = NULL;
                }
                s->lin_coef = keep;
            }
        s->lin_wide = 1;
        free(u), free(qg);
        ts_system_free(sys);
    }
}
END_TEST

/* The linearization four springs at a time (ts_springs_lanes(1), where the
 * processor has AVX2; without AVX2 both are the one-at-a-time loop)
 * against one at a time: the cache's numbers bit for bit, wide (q, w) and
 * narrow (q, g), for g of either sign and of both, clamped or not, on 1 and
 * 2 threads (chunks of springs starting anywhere), on networks whose length
 * is not a multiple of four, with a spring of length zero (no term) and
 * one compressed. */
static void lanes_against_one(ts_system *sys, int sysno, double *one)
{
    static const double ab[][2] = {{1e-3, 0.03}, {-1e-3, -0.03}, {1e-5, -0.03}};
    ts_springs *s = ts_springs_of(sys);
    int wide0 = s->lin_wide;
    for (int c = 0; c < 3; c++)
        for (int fix = 0; fix < 2; fix++)
            for (int wide = 0; wide < 2 && wide <= wide0; wide++)
                for (int th = 1; th <= 2; th++) {
                    sys->definite_fix = fix;
                    s->lin_wide = wide;
                    size_t len = (wide && c < 2 ? 4 : 2) * s->ns;
                    ts_springs_lanes(0);
                    ck_assert_int_eq(
                        ts_system_linearize(sys, 0.0, sys->x, sys->v, ab[c][0], ab[c][1]), TS_OK);
                    memcpy(one, s->lin_coef, len * sizeof *one);
                    ts_springs_lanes(1);
                    ts_threads_set_min(1);
                    ts_threads_set(th);
                    int st = ts_system_linearize(sys, 0.0, sys->x, sys->v, ab[c][0], ab[c][1]);
                    ts_threads_set(1);
                    ts_threads_set_min(TS_PAR_MIN);
                    ts_springs_lanes(-1);
                    s->lin_wide = wide0;
                    ck_assert_int_eq(st, TS_OK);
                    for (size_t k = 0; k < len; k++)
                        ck_assert_msg(memcmp(&one[k], &s->lin_coef[k], sizeof *one) == 0,
                                      "system %d, signs %d, fix %d, wide %d, threads %d, number "
                                      "%zu: %.17g four at a time, %.17g one at a time",
                                      sysno, c, fix, wide, th, k, s->lin_coef[k], one[k]);
                }
}

START_TEST(linearize_lanes_same_bits)
{
    static const char *const cloth[] = {"nx=41", "ny=30", "damping=0.3", NULL};
    static const char *const hair[] = {"n=301", "curl=2", NULL};
    for (int sysno = 0; sysno < 2; sysno++) {
        ts_system *sys = sysno == 0 ? make(&ts_cloth, cloth) : make(&ts_hair, hair);
        ts_springs *s = ts_springs_of(sys);
        ck_assert_msg(!s->k && !s->kd && s->ns % 4 != 0 && s->lin_wide, "system %d: %zu springs",
                      sysno, s->ns);
        perturb(sys, 11u + (unsigned)sysno, 0.05, 0.2);
        size_t a = 3 * (size_t)s->si[5], b = 3 * (size_t)s->sj[5];
        memcpy(sys->x + b, sys->x + a, 3 * sizeof *sys->x); /* spring 5: length zero */
        size_t a9 = 3 * (size_t)s->si[9], b9 = 3 * (size_t)s->sj[9];
        for (int q = 0; q < 3; q++) /* spring 9: compressed to a tenth */
            sys->x[b9 + q] = sys->x[a9 + q] + 0.1 * (sys->x[b9 + q] - sys->x[a9 + q]);
        double *one = malloc(4 * s->ns * sizeof *one);
        ck_assert_ptr_nonnull(one);
        lanes_against_one(sys, sysno, one);
        free(one);
        ts_system_free(sys);
    }
}
END_TEST

/* Two particles, one spring compressed to half its length, a transverse
 * direction u: u^T J u is positive (indefinite M - h^2 J for large h)
 * without the clamp, and zero with it. */
START_TEST(clamp_makes_compressed_springs_definite)
{
    for (int clamp = 0; clamp <= 1; clamp++) {
        static const char *pairs[] = {"n=2", "pin=none", "damping=0", NULL, NULL};
        pairs[3] = clamp ? "clamp=1" : "clamp=0";
        ts_system *sys = make(&ts_string, pairs);
        sys->x[3] *= 0.5; /* compress */
        double u[6] = {0, 0, 0, 0, 1, 0}, out[6];
        ts_system_linearize(sys, 0.0, sys->x, sys->v, 1.0, 0.0);
        ts_system_jacobian_mul(sys, u, out);
        double q = ts_vec_dot(6, u, out); /* u^T (df/dx) u = -k (1 - L/l) */
        if (clamp)
            ck_assert_double_eq(q, 0.0);
        else
            ck_assert_double_eq_tol(q, 500.0, 1e-9); /* k = 500, 1 - L/l = -1 */
        ts_system_free(sys);
    }
    /* and on a random crumpled cloth, -J is positive semidefinite with the clamp */
    static const char *const cloth[] = {"nx=5", "ny=5", "clamp=1", NULL};
    ts_system *sys = make(&ts_cloth, cloth);
    perturb(sys, 29u, 0.1, 1.0);
    for (size_t i = 0; i < sys->n; i++)
        sys->x[i] *= 0.8; /* many springs compressed */
    double u[75], out[75];
    unsigned st = 31u;
    ts_system_linearize(sys, 0.0, sys->x, sys->v, 1.0, 1.0);
    for (int k = 0; k < 20; k++) {
        rnd_vec(&st, 75, 1.0, u);
        ts_system_jacobian_mul(sys, u, out);
        ck_assert_double_le(ts_vec_dot(75, u, out), 1e-12);
    }
    ts_system_free(sys);
}
END_TEST

/* --- stability at cloth scale ----------------------------------------------------- */

static int cloth_run(const ts_stepper_type *type, ts_run_result *res, double *max_dev)
{
    static const char *const pairs[] = {"nx=30", "ny=30", NULL};
    ts_system *sys = make(&ts_cloth, pairs);
    size_t n = sys->n;
    double *x0 = malloc(n * sizeof *x0);
    ck_assert_ptr_nonnull(x0);
    memcpy(x0, sys->x, n * sizeof *x0);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    ts_run_options opt = ts_default_run_options();
    opt.dt = 1.0 / 30.0;
    opt.steps = 150; /* 5 s */
    int s = ts_run(sys, st, &opt, NULL, NULL, res);
    *max_dev = ts_vec_all_finite(n, sys->x) ? ts_vec_dist_inf(n, sys->x, x0) : INFINITY;
    ts_stepper_free(st);
    ts_system_free(sys);
    free(x0);
    return s;
}

START_TEST(cloth_30x30_backward_euler_bounded_forward_euler_diverges)
{
    ts_run_result res;
    double dev;
    int s = cloth_run(tests_stepper("backward-euler"), &res, &dev);
    ck_assert_msg(s == TS_OK, "backward-euler: %s", ts_error_detail());
    ck_assert_int_eq(res.steps_done, 150);
    /* a 1 m cloth hanging from two corners moves, but stays within a metre */
    ck_assert_double_gt(dev, 1e-3);
    ck_assert_double_lt(dev, 1.0);
    s = cloth_run(&ts_forward_euler, &res, &dev);
    ck_assert_int_eq(s, TS_ERR_DIVERGED);
    ck_assert_int_gt(res.failed_step, 0);
    ck_assert_int_lt(res.failed_step, 150);
}
END_TEST

/* --- hair ------------------------------------------------------------------------- */

/* radius of the circle through three points (inf when collinear) */
static double circumradius(const double *a, const double *b, const double *c)
{
    double ab = 0, bc = 0, ca = 0, e1[3], e2[3];
    for (int k = 0; k < 3; k++) {
        ab += (a[k] - b[k]) * (a[k] - b[k]);
        bc += (b[k] - c[k]) * (b[k] - c[k]);
        ca += (c[k] - a[k]) * (c[k] - a[k]);
        e1[k] = b[k] - a[k], e2[k] = c[k] - a[k];
    }
    double cr[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                    e1[0] * e2[1] - e1[1] * e2[0]};
    double area2 = sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
    return area2 > 0 ? sqrt(ab * bc * ca) / (2.0 * area2) : INFINITY;
}

START_TEST(curly_hair_holds_its_helix_at_rest)
{
    static const char *const pairs[] = {"curl=3", "gravity=0", NULL};
    ts_system *sys = make(&ts_hair, pairs);
    double x0[60];
    memcpy(x0, sys->x, sizeof x0);
    /* the helix: every particle at curl_radius from the axis y = 0.01, z = 0.01 */
    for (size_t p = 0; p < 20; p++) {
        double dy = x0[3 * p + 1], dz = x0[3 * p + 2] - 0.01;
        ck_assert_double_eq_tol(sqrt(dy * dy + dz * dz), 0.01, 1e-12);
    }
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler"), sys, NULL, &st), TS_OK);
    for (int k = 0; k < 100; k++)
        ck_assert_int_eq(ts_stepper_step(st, sys, 0.01 * k, 0.01), TS_OK);
    ck_assert_double_le(ts_vec_dist_inf(60, sys->x, x0), 1e-12);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

START_TEST(curly_hair_keeps_its_curl_under_gravity)
{
    static const char *const pairs[] = {"curl=3", NULL};
    ts_system *sys = make(&ts_hair, pairs);
    double r0 = circumradius(sys->x, sys->x + 3, sys->x + 6), tip0 = sys->x[3 * 19 + 1];
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler-linear"), sys, NULL, &st), TS_OK);
    for (int k = 0; k < 300; k++) /* 3 s: the strand swings and settles */
        ck_assert_int_eq(ts_stepper_step(st, sys, 0.01 * k, 0.01), TS_OK);
    /* it sags ... */
    ck_assert_double_lt(sys->x[3 * 19 + 1], tip0 - 0.1);
    /* ... but every triple of neighbours keeps its curl radius within 20 %,
     * and on average within 10 % */
    double mean = 0.0;
    for (size_t p = 0; p + 2 < 20; p++) {
        double r = circumradius(sys->x + 3 * p, sys->x + 3 * p + 3, sys->x + 3 * p + 6);
        ck_assert_msg(fabs(r / r0 - 1.0) < 0.2, "triple %zu: radius %g, rest %g", p, r, r0);
        mean += r / 18.0;
    }
    ck_assert_double_lt(fabs(mean / r0 - 1.0), 0.1);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

/* --- cloth topology, mesh, projections -------------------------------------------- */

START_TEST(grid_cloth_spring_counts)
{
    static const char *const pairs[] = {"nx=5", "ny=4", NULL};
    ts_system *sys = make(&ts_cloth, pairs);
    ts_springs *s = ts_springs_of(sys);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(ts_springs_count(s, TS_SPRING_STRETCH), 4 * 4 + 5 * 3);
    ck_assert_uint_eq(ts_springs_count(s, TS_SPRING_SHEAR), 2 * 4 * 3);
    ck_assert_uint_eq(ts_springs_count(s, TS_SPRING_BEND), 3 * 4 + 5 * 2);
    ck_assert_uint_eq(sys->frame_row, 5);
    ck_assert_uint_eq(sys->dim, 3);
    /* sorted by first particle, then second, first < second */
    for (size_t e = 0; e < s->ns; e++) {
        ck_assert_uint_lt(s->si[e], s->sj[e]);
        if (e)
            ck_assert(s->si[e - 1] < s->si[e] ||
                      (s->si[e - 1] == s->si[e] && s->sj[e - 1] < s->sj[e]));
    }
    /* top corners: particles 0 and 4 */
    for (size_t p = 0; p < 20; p++)
        ck_assert_int_eq(sys->pinned[3 * p], p == 0 || p == 4);
    ts_system_free(sys);
}
END_TEST

/* ts_springs_reserve: the grid cloth reserves exactly its springs, so no
 * array grows past them; a network reserved ahead holds the same springs,
 * bit for bit, as one whose arrays grew as springs were added, on 1 and 2
 * threads (reserved, the arrays' pages are first touched on the team), with
 * springs added before the reserve and stiffnesses per spring; a smaller
 * reserve changes nothing, one whose bytes overflow is refused. */
START_TEST(springs_reserve_same_network)
{
    static const char *const pairs[] = {"nx=120", "ny=90", NULL};
    ts_system *sys = make(&ts_cloth, pairs);
    ts_springs *g = ts_springs_of(sys);
    ck_assert_uint_eq(g->cap, g->ns);
    for (int threads = 1; threads <= 2; threads++) {
        ck_assert_int_eq(ts_threads_set(threads), TS_OK);
        ts_threads_set_min(threads > 1 ? 1 : TS_PAR_MIN);
        ts_springs *s[2];
        for (int r = 0; r < 2; r++) {
            ck_assert_int_eq(ts_springs_new(&ts_string, g->np, NULL, &s[r]), TS_OK);
            memcpy(s[r]->base.x, g->base.x, sys->n * sizeof *sys->x);
            for (size_t e = 0; e < g->ns; e++) {
                if (r && e == 100) /* reserved with springs already there */
                    ck_assert_int_eq(ts_springs_reserve(s[r], g->ns), TS_OK);
                ck_assert_int_eq(ts_springs_add(s[r], g->si[e], g->sj[e],
                                                ts_springs_k(g, e) * (double)(1 + e % 3),
                                                ts_springs_kd(g, e), g->kind[e]),
                                 TS_OK);
            }
            if (r) {
                ck_assert_uint_eq(s[r]->cap, g->ns);
                ck_assert_int_eq(ts_springs_reserve(s[r], 10), TS_OK);
                /* a count whose bytes do not fit in a size_t: refused, nothing lost */
                ck_assert_int_eq(ts_springs_reserve(s[r], SIZE_MAX / 4), TS_ERR_NOMEM);
                ck_assert_uint_eq(s[r]->cap, g->ns);
            }
            ck_assert_int_eq(ts_springs_finish(s[r]), TS_OK);
        }
        ck_assert_uint_eq(s[0]->ns, g->ns);
        ck_assert_uint_eq(s[1]->ns, g->ns);
        ck_assert_ptr_nonnull(s[1]->k);
        ck_assert(memcmp(s[0]->si, s[1]->si, g->ns * sizeof *g->si) == 0);
        ck_assert(memcmp(s[0]->sj, s[1]->sj, g->ns * sizeof *g->sj) == 0);
        ck_assert(memcmp(s[0]->rest, s[1]->rest, g->ns * sizeof *g->rest) == 0);
        ck_assert(memcmp(s[0]->kind, s[1]->kind, g->ns) == 0);
        ck_assert(memcmp(s[0]->k, s[1]->k, g->ns * sizeof *s[0]->k) == 0);
        ck_assert(memcmp(s[0]->kd, s[1]->kd, g->ns * sizeof *s[0]->kd) == 0);
        ck_assert(memcmp(s[0]->rest, g->rest, g->ns * sizeof *g->rest) == 0);
        ts_system_free(&s[0]->base);
        ts_system_free(&s[1]->base);
    }
    ts_threads_set(1);
    ts_threads_set_min(TS_PAR_MIN);
    ts_system_free(sys);
}
END_TEST

/* ts_springs_finish orders springs added in any order by (first, second)
 * particle, the springs of one pair in the order added, each with its own
 * rest length, stiffness and kind; springs added in that order stay so. */
START_TEST(springs_finish_orders_any_input)
{
    static const struct {
        size_t i, j;
        double k;
        int kind;
    } add[] = {{4, 5, 1.0, TS_SPRING_STRETCH}, {3, 0, 2.0, TS_SPRING_BEND},
               {2, 1, 3.0, TS_SPRING_STRETCH}, {0, 1, 4.0, TS_SPRING_SHEAR},
               {0, 3, 5.0, TS_SPRING_BEND},    {1, 4, 6.0, TS_SPRING_STRETCH}};
    /* the order wanted: indices into add[] */
    static const size_t want[] = {3, 1, 4, 2, 5, 0};
    for (int sorted = 0; sorted < 2; sorted++) {
        ts_springs *s;
        ck_assert_int_eq(ts_springs_new(&ts_string, 6, NULL, &s), TS_OK);
        for (size_t p = 0; p < 6; p++) /* on a parabola: every spring's own length */
            s->base.x[3 * p] = (double)p, s->base.x[3 * p + 1] = (double)(p * p);
        for (size_t a = 0; a < 6; a++) {
            size_t m = sorted ? want[a] : a;
            ck_assert_int_eq(ts_springs_add(s, add[m].i, add[m].j, add[m].k, 0.5, add[m].kind),
                             TS_OK);
        }
        ck_assert_int_eq(ts_springs_finish(s), TS_OK);
        for (size_t e = 0; e < 6; e++) {
            size_t m = want[e], lo = add[m].i < add[m].j ? add[m].i : add[m].j;
            size_t hi = add[m].i ^ add[m].j ^ lo;
            double dx = (double)hi - (double)lo, dy = (double)(hi * hi) - (double)(lo * lo);
            ck_assert_uint_eq(s->si[e], lo);
            ck_assert_uint_eq(s->sj[e], hi);
            ck_assert_double_eq(ts_springs_k(s, e), add[m].k);
            ck_assert_int_eq(s->kind[e], add[m].kind);
            ck_assert_double_eq_tol(s->rest[e], sqrt(dx * dx + dy * dy), 1e-12);
        }
        ts_system_free(&s->base);
    }
}
END_TEST

/* Springs added in (first, second) order stay in it, each with its own
 * stiffness; added with the first particles in order but a second one
 * out of it, they are sorted by the second too. */
START_TEST(springs_finish_sorts_by_second_particle)
{
    static const size_t pair[5][2] = {{0, 1}, {0, 3}, {1, 2}, {1, 4}, {4, 5}};
    static const size_t orders[2][5] = {{0, 1, 2, 3, 4}, {1, 0, 3, 2, 4}};
    for (int o = 0; o < 2; o++) {
        ts_springs *s;
        ck_assert_int_eq(ts_springs_new(&ts_string, 6, NULL, &s), TS_OK);
        for (size_t p = 0; p < 6; p++)
            s->base.x[3 * p] = (double)p;
        for (size_t a = 0; a < 5; a++) {
            size_t m = orders[o][a];
            ck_assert_int_eq(ts_springs_add(s, pair[m][0], pair[m][1], 10.0 + (double)m, 0.5,
                                            TS_SPRING_STRETCH),
                             TS_OK);
        }
        ck_assert_int_eq(ts_springs_finish(s), TS_OK);
        for (size_t e = 0; e < 5; e++) {
            ck_assert_uint_eq(s->si[e], pair[e][0]);
            ck_assert_uint_eq(s->sj[e], pair[e][1]);
            ck_assert_double_eq(ts_springs_k(s, e), 10.0 + (double)e);
            ck_assert_double_eq(s->rest[e], (double)(pair[e][1] - pair[e][0]));
        }
        ts_system_free(&s->base);
    }
}
END_TEST

START_TEST(mesh_cloth_from_shipped_obj)
{
    ts_obj_mesh *m;
    ck_assert_int_eq(ts_obj_load(SHIPPED_OBJ, &m), TS_OK);
    ck_assert_uint_eq(m->nverts, 64);
    ck_assert_uint_eq(m->ntris, 98);
    ts_obj_free(m);
    static const char *const pairs[] = {"mesh=" SHIPPED_OBJ, "mass=0.64", NULL};
    ts_system *sys = make(&ts_cloth, pairs);
    ts_springs *s = ts_springs_of(sys);
    ck_assert_uint_eq(s->np, 64);
    /* 8 x 8 vertices as quads split once: 56 + 56 + 49 edges, 161 - 28 interior */
    ck_assert_uint_eq(ts_springs_count(s, TS_SPRING_STRETCH), 161);
    ck_assert_uint_eq(ts_springs_count(s, TS_SPRING_BEND), 133);
    ck_assert_uint_eq(ts_springs_count(s, TS_SPRING_SHEAR), 0);
    size_t pins = 0;
    for (size_t p = 0; p < 64; p++) {
        ck_assert_double_eq_tol(sys->mass[3 * p], 0.01, 1e-15);
        pins += sys->pinned[3 * p];
    }
    ck_assert_uint_eq(pins, 2);
    ck_assert(sys->pinned[0] && sys->pinned[3 * 7]);
    ts_system_free(sys);
}
END_TEST

typedef struct {
    const char *name, *text;
    int line; /* expected line in the message; 0: none */
} bad_obj;

static const bad_obj bad_objs[] = {
    {"short-vertex", "v 0 0 0\nv 1 0\n", 2},
    {"bad-number", "# c\nv 0 0 0\nv 1 zero 0\n", 3},
    {"bad-corner", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n", 4},
    {"bad-corner-slashes", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3/1/1/1\n", 4},
    {"two-corners", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", 4},
    {"index-too-big", "v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2 4\n", 5},
    {"index-zero", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", 4},
    {"negative-too-far", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n", 4},
    {"forward-reference", "v 0 0 0\nv 1 0 0\nf 1 2 3\nv 0 1 0\n", 3},
    {"repeated-vertex", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 2\n", 4},
    {"zero-area", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", 4},
    {"degenerate-in-quad", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 2 2 0\nf 1 2 3 4\n", 5},
    {"no-faces", "v 0 0 0\nv 1 0 0\nv 0 1 0\n", 3},
};
enum { NBAD = sizeof bad_objs / sizeof *bad_objs };

static char tmpdir[64];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tstep-obj-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(obj_loader_rejects_bad_files)
{
    const bad_obj *b = &bad_objs[_i];
    char path[128], want[160];
    make_tmpdir();
    snprintf(path, sizeof path, "%s/%s.obj", tmpdir, b->name);
    write_file(path, b->text);
    ts_obj_mesh *m = (ts_obj_mesh *)1;
    ts_error_clear();
    ck_assert_int_eq(ts_obj_load(path, &m), TS_ERR_INPUT);
    ck_assert_ptr_null(m);
    snprintf(want, sizeof want, "%s:%d:", path, b->line);
    ck_assert_msg(strstr(ts_error_detail(), want), "%s: detail '%s' lacks '%s'", b->name,
                  ts_error_detail(), want);
    /* the cloth system passes the error up unchanged */
    char pair[160];
    snprintf(pair, sizeof pair, "mesh=%s", path);
    ts_params p;
    ts_params_init(&p, ts_cloth.params);
    ck_assert_int_eq(ts_params_set_pair(&p, pair), TS_OK);
    ts_system *sys = NULL;
    ck_assert_int_eq(ts_system_new(&ts_cloth, &p, &sys), TS_ERR_INPUT);
    ck_assert_ptr_null(sys);
    ck_assert_ptr_nonnull(strstr(ts_error_detail(), want));
    remove(path);
    rmdir(tmpdir);
}
END_TEST

START_TEST(obj_loader_missing_file_and_cli_exit_2)
{
    ts_obj_mesh *m;
    ck_assert_int_eq(ts_obj_load("/nonexistent/cloth.obj", &m), TS_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(ts_error_detail(), "/nonexistent/cloth.obj"));
    char path[128], cmd[512];
    make_tmpdir();
    snprintf(path, sizeof path, "%s/bad.obj", tmpdir);
    write_file(path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n");
    snprintf(cmd, sizeof cmd,
             TSTEP_BIN " run --system cloth --param mesh=%s --stepper rk4 --dt 0.01 "
                       "--steps 1 >/dev/null 2>&1",
             path);
    int rc = system(cmd);
    ck_assert(WIFEXITED(rc));
    ck_assert_int_eq(WEXITSTATUS(rc), 2);
    remove(path);
    rmdir(tmpdir);
}
END_TEST

START_TEST(obj_loader_reads_polygons_and_index_forms)
{
    char path[128];
    make_tmpdir();
    snprintf(path, sizeof path, "%s/good.obj", tmpdir);
    write_file(path, "# a square and a triangle\r\n"
                     "mtllib none.mtl\no thing\n"
                     "v 0 0 0\nv 1 0 0 1.0\nv 1 1 0\n  v 0 1 0 0.5 0.5 0.5\nv 2 0 0\n"
                     "vt 0 0\nvn 0 0 1\ng part\ns 1\n"
                     "f 1/1/1 2/1/1 3/1/1 4/1/1\r\n"
                     "f -4//1 -1//1 -3/1\n");
    ts_obj_mesh *m;
    ck_assert_msg(ts_obj_load(path, &m) == TS_OK, "%s", ts_error_detail());
    ck_assert_uint_eq(m->nverts, 5);
    ck_assert_uint_eq(m->ntris, 3);
    static const size_t want[9] = {0, 1, 2, 0, 2, 3, 1, 4, 2};
    for (int k = 0; k < 9; k++)
        ck_assert_uint_eq(m->tris[k], want[k]);
    ck_assert_double_eq(m->verts[3 * 3 + 1], 1.0);
    ts_obj_free(m);
    ts_obj_free(NULL);
    remove(path);
    rmdir(tmpdir);
}
END_TEST

START_TEST(provot_limit_and_sphere_projection)
{
    /* strain limit: a free cloth stretched by 30 % comes back within 10 %
     * (stretch and shear springs), keeping its momentum */
    static const char *const pairs[] = {"nx=6", "ny=6", "pin=none", "provot=1", NULL};
    ts_system *sys = make(&ts_cloth, pairs);
    ts_springs *s = ts_springs_of(sys);
    unsigned st = 37u;
    for (size_t i = 0; i < sys->n; i++)
        sys->x[i] = 1.3 * sys->x[i] + 0.01 * rnd(&st), sys->v[i] = rnd(&st);
    double p0[3], p1[3];
    sys->ops->momentum(sys, sys->x, sys->v, p0);
    ck_assert_int_eq(sys->ops->post_step(sys, 0.0, sys->x, sys->v), TS_OK);
    sys->ops->momentum(sys, sys->x, sys->v, p1);
    for (int a = 0; a < 3; a++)
        ck_assert_double_eq_tol(p1[a], p0[a], 1e-12);
    for (size_t e = 0; e < s->ns; e++) {
        if (s->kind[e] == TS_SPRING_BEND)
            continue;
        double d[3];
        for (int a = 0; a < 3; a++)
            d[a] = sys->x[3 * s->si[e] + a] - sys->x[3 * s->sj[e] + a];
        double l = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        ck_assert_msg(l <= 1.1 * s->rest[e] * (1.0 + 1e-6), "ratio %.12g", l / s->rest[e]);
    }
    ts_system_free(sys);

    /* sphere: a flat cloth dropped on a ball ends on its surface, not inside */
    static const char *const ball[] = {"nx=8", "ny=8", "plane=xz", "pin=none",
                                       "sphere_r=0.3", NULL};
    sys = make(&ts_cloth, ball);
    ts_stepper *stp;
    ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler-linear"), sys, NULL, &stp), TS_OK);
    for (int k = 0; k < 100; k++)
        ck_assert_int_eq(ts_stepper_step(stp, sys, 0.01 * k, 0.01), TS_OK);
    size_t touching = 0;
    for (size_t p = 0; p < 64; p++) {
        double d[3] = {sys->x[3 * p] - 0.5, sys->x[3 * p + 1] + 0.5, sys->x[3 * p + 2] - 0.5};
        double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        ck_assert_double_ge(r, 0.3 * (1.0 - 1e-12));
        touching += r < 0.3 * 1.001;
    }
    ck_assert_uint_gt(touching, 0);
    ts_stepper_free(stp);
    ts_system_free(sys);
}
END_TEST

START_TEST(energy_and_strain_measure)
{
    /* undamped string under rk4: energy conserved to integration accuracy */
    static const char *const pairs[] = {"damping=0", NULL};
    ts_system *sys = make(&ts_string, pairs);
    double ke, pe, e0, e1;
    ts_system_energy(sys, 0.0, &ke, &pe);
    e0 = ke + pe;
    ck_assert_double_eq(e0, 0.0); /* at rest, unstretched, at y = 0 */
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(&ts_rk4, sys, NULL, &st), TS_OK);
    for (int k = 0; k < 1000; k++)
        ck_assert_int_eq(ts_stepper_step(st, sys, 1e-3 * k, 1e-3), TS_OK);
    ts_system_energy(sys, 1.0, &ke, &pe);
    e1 = ke + pe;
    ck_assert_double_gt(ke, 0.005); /* it swings: the end has fallen */
    ck_assert_double_lt(fabs(e1 - e0), 1e-3 * ke);
    /* strain measure: scaling the state by 1.05 changes each length by 5 %
     * of its current length, measured against the rest length */
    ts_springs *s = ts_springs_of(sys);
    double x1[30], x2[30], worst = 0.0;
    for (int i = 0; i < 30; i++)
        x1[i] = sys->x[i], x2[i] = 1.05 * sys->x[i];
    for (size_t e = 0; e < s->ns; e++) {
        double l = 0.0;
        for (int a = 0; a < 3; a++) {
            double d = x1[3 * s->si[e] + a] - x1[3 * s->sj[e] + a];
            l += d * d;
        }
        worst = fmax(worst, 0.05 * sqrt(l) / s->rest[e]);
    }
    ck_assert_double_eq_tol(sys->ops->max_strain_change(sys, x1, x2), worst, 1e-12);
    ts_stepper_free(st);
    ts_system_free(sys);
}
END_TEST

typedef struct {
    const ts_system_type *type;
    const char *pair, *names;
} bad_param;

static const bad_param bad_params[] = {
    {&ts_string, "pin=middle", "'pin'"},       {&ts_string, "n=1", "'n'"},
    {&ts_string, "clamp=3", "'clamp'"},        {&ts_string, "drag=-1", "'drag'"},
    {&ts_hair, "curl=9", "'curl'"},            {&ts_hair, "k_bend=-1", "'k_bend'"},
    {&ts_cloth, "pin=left", "'pin'"},          {&ts_cloth, "nx=2", "'nx'"},
    {&ts_cloth, "plane=yz", "'plane'"},        {&ts_cloth, "provot=3", "'provot'"},
    {&ts_cloth, "sphere_r=-1", "'sphere_r'"},  {&ts_cloth, "mass=0", "'mass'"},
};

START_TEST(bad_parameters_are_input_errors)
{
    const bad_param *b = &bad_params[_i];
    ts_params p;
    ts_params_init(&p, b->type->params);
    ck_assert_int_eq(ts_params_set_pair(&p, b->pair), TS_OK);
    ts_system *sys = NULL;
    ck_assert_int_eq(ts_system_new(b->type, &p, &sys), TS_ERR_INPUT);
    ck_assert_ptr_null(sys);
    ck_assert_msg(strstr(ts_error_detail(), b->names), "%s: '%s'", b->pair, ts_error_detail());
}
END_TEST

Suite *springs_suite(void)
{
    Suite *s = suite_create("springs");
    int nsteppers = 0;
    while (ts_stepper_at(nsteppers))
        nsteppers++;
    TCase *tc = tcase_create("pins and momentum");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, pinned_particles_never_move, 0, nsteppers);
    tcase_add_test(tc, internal_forces_sum_to_zero);
    tcase_add_loop_test(tc, free_cloth_keeps_momentum_explicit, 0, nsteppers);
    suite_add_tcase(s, tc);

    tc = tcase_create("derivatives");
    tcase_add_test(tc, forces_are_minus_energy_gradient);
    tcase_add_test(tc, jacobian_products_match_force_differences);
    tcase_add_test(tc, fast_path_equals_exact_products);
    tcase_add_test(tc, shifted_product_is_mass_minus_jacobian);
    tcase_add_test(tc, fast_products_equal_plain_loop);
    tcase_add_test(tc, linearize_lanes_same_bits);
    tcase_add_test(tc, clamp_makes_compressed_springs_definite);
    suite_add_tcase(s, tc);

    tc = tcase_create("dynamics");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cloth_30x30_backward_euler_bounded_forward_euler_diverges);
    tcase_add_test(tc, curly_hair_holds_its_helix_at_rest);
    tcase_add_test(tc, curly_hair_keeps_its_curl_under_gravity);
    tcase_add_test(tc, energy_and_strain_measure);
    tcase_add_test(tc, provot_limit_and_sphere_projection);
    suite_add_tcase(s, tc);

    tc = tcase_create("topology and input");
    tcase_add_test(tc, grid_cloth_spring_counts);
    tcase_add_test(tc, springs_reserve_same_network);
    tcase_add_test(tc, springs_finish_orders_any_input);
    tcase_add_test(tc, springs_finish_sorts_by_second_particle);
    tcase_add_test(tc, mesh_cloth_from_shipped_obj);
    tcase_add_loop_test(tc, obj_loader_rejects_bad_files, 0, NBAD);
    tcase_add_test(tc, obj_loader_missing_file_and_cli_exit_2);
    tcase_add_test(tc, obj_loader_reads_polygons_and_index_forms);
    tcase_add_loop_test(tc, bad_parameters_are_input_errors, 0,
                        (int)(sizeof bad_params / sizeof *bad_params));
    suite_add_tcase(s, tc);
    return s;
}

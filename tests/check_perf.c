/* Threads and output: what makes tstep fast must not change its answers.
 *
 * Oracles: the threaded spring forces, fast-path products, diagonal and
 * exact products give the same bits with 1, 2 and 3 threads (memcmp), and
 * equal a plain serial loop written here to 1e-13 relative; ten
 * backward-euler-linear steps of a 20 x 20 cloth give the same bits with 1,
 * 2 and 3 threads; the vector reductions are bit-identical across thread
 * counts and agree with a long-double sum; the fast formatter writes
 * exactly printf's "%.Ng" at fixed digits and, at digits 0, a decimal that
 * strtod reads back as the same double (no longer than %.17g), byte for
 * byte what the exact path (core/numfmt.h) writes, on 250,000 doubles of
 * every kind and the edges (4 million more in make test-long); run --format
 * npy has a valid .npy v1.0 header and holds bit for bit the numbers that
 * the dat output prints, and rewrites its row count when a run stops
 * early. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT, nice */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli_run.h"
#include "core/numfmt.h"
#include "core/parallel.h"
#include "ext/ext.h"
#include "json_valid.h"
#include "tests.h"
#include "tstep/linsolve.h"
#include "tstep/linalg.h"
#include "tstep/numfmt.h"
#include "tstep/springs.h"
#include "tstep/stepper.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static double uniform(void) { return (double)(next() >> 11) * 0x1p-53 - 0.5; }

/* A 20 x 20 cloth with wind and drag, its state shaken so that no spring is
 * at rest and velocities are nonzero. */
static ts_system *shaken_cloth(void)
{
    ts_params p;
    ts_params_init(&p, ts_cloth.params);
    ck_assert_int_eq(ts_params_set_pair(&p, "drag=0.3"), TS_OK);
    ck_assert_int_eq(ts_params_set_pair(&p, "wind_x=0.7"), TS_OK);
    ck_assert_int_eq(ts_params_set_pair(&p, "gust=0.5"), TS_OK);
    ts_system *sys = NULL;
    ck_assert_int_eq(ts_system_new(&ts_cloth, &p, &sys), TS_OK);
    rng = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sys->n; i++) {
        sys->x[i] += 0.01 * uniform();
        sys->v[i] = uniform();
    }
    return sys;
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

/* the serial reference: f = gravity + drag + a plain loop over springs */
static void ref_forces(const ts_springs *s, double t, const double *x, const double *v,
                       double *f)
{
    double w[3];
    ts_springs_wind(s, t, w);
    for (size_t q = 0; q < s->base.n; q++)
        f[q] = -s->opt.drag * s->base.mass[q] * (v[q] - w[q % 3]) -
               (q % 3 == 1 ? s->opt.gravity * s->base.mass[q] : 0.0);
    for (size_t e = 0; e < s->ns; e++) {
        const double *xi = x + 3 * s->si[e], *xj = x + 3 * s->sj[e];
        const double *vi = v + 3 * s->si[e], *vj = v + 3 * s->sj[e];
        double d[3], u[3], l = 0.0, nu = 0.0;
        for (int a = 0; a < 3; a++)
            d[a] = xi[a] - xj[a], u[a] = vi[a] - vj[a], l += d[a] * d[a];
        l = sqrt(l);
        for (int a = 0; a < 3; a++)
            nu += d[a] / l * u[a];
        double mag = -ts_springs_k(s, e) * (l - s->rest[e]) - ts_springs_kd(s, e) * nu;
        for (int a = 0; a < 3; a++) {
            f[3 * s->si[e] + a] += mag * d[a] / l;
            f[3 * s->sj[e] + a] -= mag * d[a] / l;
        }
    }
}

/* the serial reference product from the linearization's blocks */
static void ref_product(const ts_springs *s, const double *u, double *out)
{
    for (size_t q = 0; q < s->base.n; q++)
        out[q] = -s->lin_wdrag * s->base.mass[q] * u[q];
    for (size_t e = 0; e < s->ns; e++) {
        double b[6];
        ts_springs_block(s, e, b);
        double B[3][3] = {{b[0], b[1], b[2]}, {b[1], b[3], b[4]}, {b[2], b[4], b[5]}};
        for (int r = 0; r < 3; r++) {
            double y = 0.0;
            for (int c = 0; c < 3; c++)
                y += B[r][c] * (u[3 * s->si[e] + c] - u[3 * s->sj[e] + c]);
            out[3 * s->si[e] + r] -= y;
            out[3 * s->sj[e] + r] += y;
        }
    }
}

enum { F_FORCES, F_PRODUCT, F_DIAG, F_DFDX, F_DFDV, F_KINDS };

/* Every threaded spring loop, bit-identical for 1, 2, 3 threads. */
START_TEST(springs_same_bits_any_threads)
{
    ts_system *sys = shaken_cloth();
    ts_springs *s = ts_springs_of(sys);
    size_t n = sys->n;
    ck_assert_uint_gt(s->nchunk, 4); /* several chunks, so threads share the work */
    double *u = malloc(n * sizeof *u), *got[4][F_KINDS];
    for (size_t i = 0; i < n; i++)
        u[i] = uniform();
    ts_threads_set_min(1);
    for (int th = 1; th <= 3; th++) {
        ck_assert_int_eq(ts_threads_set(th), TS_OK);
        for (int k = 0; k < F_KINDS; k++)
            got[th][k] = malloc(n * sizeof **got);
        ck_assert_int_eq(ts_system_forces(sys, 0.3, sys->x, sys->v, got[th][F_FORCES]), TS_OK);
        ck_assert_int_eq(ts_system_linearize(sys, 0.3, sys->x, sys->v, -1e-3, -0.03), TS_OK);
        ck_assert_int_eq(ts_system_jacobian_mul(sys, u, got[th][F_PRODUCT]), TS_OK);
        ck_assert_int_eq(sys->ops->jacobian_diag(sys, got[th][F_DIAG]), TS_OK);
        ck_assert_int_eq(ts_system_dfdx_mul(sys, 0.3, sys->x, sys->v, u, got[th][F_DFDX]),
                         TS_OK);
        ck_assert_int_eq(ts_system_dfdv_mul(sys, 0.3, sys->x, sys->v, u, got[th][F_DFDV]),
                         TS_OK);
    }
    for (int th = 2; th <= 3; th++)
        for (int k = 0; k < F_KINDS; k++)
            ck_assert_msg(memcmp(got[1][k], got[th][k], n * sizeof(double)) == 0,
                          "loop %d differs with %d threads", k, th);
    double *ref = malloc(n * sizeof *ref);
    ref_forces(s, 0.3, sys->x, sys->v, ref);
    ck_assert_double_le(rel_diff(n, got[2][F_FORCES], ref), 1e-13);
    ref_product(s, u, ref);
    ck_assert_double_le(rel_diff(n, got[2][F_PRODUCT], ref), 1e-13);
    for (size_t q = 0; q < n; q++) /* the diagonal: products with unit vectors */
        if (q % 97 == 0) {
            double *eq = calloc(n, sizeof *eq), *col = malloc(n * sizeof *col);
            eq[q] = 1.0;
            ref_product(s, eq, col);
            ck_assert_double_eq_tol(got[2][F_DIAG][q], col[q], 1e-13 * fabs(col[q]));
            free(eq), free(col);
        }
    ts_threads_set_min(TS_PAR_MIN);
    for (int th = 1; th <= 3; th++)
        for (int k = 0; k < F_KINDS; k++)
            free(got[th][k]);
    free(ref), free(u);
    ts_system_free(sys);
}
END_TEST

/* Ten backward-euler-linear steps of the 20 x 20 cloth falling from rest:
 * the same state, bit for bit, with 1, 2 and 3 threads; with the Jacobi
 * preconditioner (_i = 0) and the multigrid one (_i = 1). */
START_TEST(implicit_run_same_bits_any_threads)
{
    double *x[4], *v[4];
    ts_threads_set_min(1);
    for (int th = 1; th <= 3; th++) {
        ck_assert_int_eq(ts_threads_set(th), TS_OK);
        ts_system *sys = NULL;
        ck_assert_int_eq(ts_system_new(&ts_cloth, NULL, &sys), TS_OK);
        ts_solver_options o = ts_default_solver_options();
        o.cg_tol = 1e-4; /* fewer iterations: each is a dozen thread barriers, slow on a
                            machine whose cores are busy */
        o.precond = _i ? &ts_precond_amg : &ts_precond_jacobi;
        ts_stepper *st = NULL;
        ck_assert_int_eq(ts_stepper_new(tests_stepper("backward-euler-linear"), sys, &o, &st), TS_OK);
        for (int k = 0; k < 10; k++)
            ck_assert_int_eq(ts_stepper_step(st, sys, k / 60.0, 1.0 / 60.0), TS_OK);
        ck_assert_int_gt(st->total.linear_iters, 10 - 5 * _i);
        x[th] = malloc(sys->n * sizeof(double)), v[th] = malloc(sys->n * sizeof(double));
        memcpy(x[th], sys->x, sys->n * sizeof(double));
        memcpy(v[th], sys->v, sys->n * sizeof(double));
        size_t n = sys->n;
        ts_stepper_free(st);
        ts_system_free(sys);
        if (th > 1) {
            ck_assert_msg(memcmp(x[1], x[th], n * sizeof(double)) == 0, "x, %d threads", th);
            ck_assert_msg(memcmp(v[1], v[th], n * sizeof(double)) == 0, "v, %d threads", th);
        }
    }
    ts_threads_set_min(TS_PAR_MIN);
    for (int th = 1; th <= 3; th++)
        free(x[th]), free(v[th]);
}
END_TEST

/* Reductions in fixed chunks: same bits for any thread count, and a long
 * double sum as the reference. */
START_TEST(reductions_same_bits_any_threads)
{
    size_t n = 300001;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    long double ref = 0.0L;
    double big = 0.0;
    for (size_t i = 0; i < n; i++) {
        a[i] = uniform(), b[i] = uniform();
        ref += (long double)a[i] * b[i];
        big = fmax(big, fabs(a[i] - b[i]));
    }
    double dot[4], n2[4], ninf[4], dinf[4];
    for (int th = 1; th <= 3; th++) {
        ts_threads_set(th);
        dot[th] = ts_vec_dot(n, a, b);
        n2[th] = ts_vec_norm2(n, a);
        ninf[th] = ts_vec_norm_inf(n, a);
        dinf[th] = ts_vec_dist_inf(n, a, b);
    }
    for (int th = 2; th <= 3; th++) {
        ck_assert(memcmp(&dot[1], &dot[th], sizeof(double)) == 0);
        ck_assert(memcmp(&n2[1], &n2[th], sizeof(double)) == 0);
        ck_assert(ninf[1] == ninf[th] && dinf[1] == dinf[th]);
    }
    /* sum of |a_i b_i| is about n/12: a relative 1e-13 of it bounds the rounding */
    ck_assert_double_le(fabs(dot[1] - (double)ref), 1e-13 * (double)n / 12.0);
    ck_assert_double_eq(dinf[1], big);
    a[n / 2] = NAN;
    ck_assert(isnan(ts_vec_norm_inf(n, a)));
    ck_assert(!ts_vec_all_finite(n, a));
    a[n / 2] = INFINITY;
    ck_assert(!ts_vec_all_finite(n, a));
    a[n / 2] = 0.0;
    ck_assert(ts_vec_all_finite(n, a));
    ts_threads_set(2);
    free(a), free(b);
}
END_TEST

/* The first touches on the team: ts_parallel_touch zeroes exactly its
 * range on more than one thread (the bytes beside it kept) and leaves it
 * alone on one; ts_calloc_team's memory is zero on any thread count, also
 * past the last whole block; ts_vec_mask zeroes the masked entries only. */
START_TEST(first_touch_on_the_team)
{
    size_t bytes = 3 * 65536 + 1000, n = 200003;
    unsigned char *buf = malloc(bytes + 64);
    ts_threads_set_min(1);
    for (int th = 1; th <= 2; th++) {
        ck_assert_int_eq(ts_threads_set(th), TS_OK);
        memset(buf, 0xAA, bytes + 64);
        ts_parallel_touch(buf + 32, bytes);
        for (size_t i = 0; i < bytes + 64; i++)
            ck_assert_msg(buf[i] == (i >= 32 && i < 32 + bytes && th > 1 ? 0 : 0xAA),
                          "%d threads, byte %zu: %d", th, i, buf[i]);
        /* a block written and freed first, so that the heap may hand it back */
        double *used = malloc(n * sizeof *used);
        ck_assert_ptr_nonnull(used);
        memset(used, 0xAA, n * sizeof *used);
        free(used);
        double *z = ts_calloc_team(n, sizeof *z);
        ck_assert_ptr_nonnull(z);
        for (size_t i = 0; i < n; i++)
            ck_assert(z[i] == 0.0 && !signbit(z[i]));
        unsigned char *mask = calloc(n, 1);
        for (size_t i = 0; i < n; i++)
            z[i] = 1.0 + (double)i, mask[i] = i % 9973 == 5 || i == n - 1;
        ts_vec_mask(n, mask, z);
        for (size_t i = 0; i < n; i++)
            ck_assert(z[i] == (mask[i] ? 0.0 : 1.0 + (double)i));
        free(mask);
        free(z);
    }
    ts_threads_set_min(TS_PAR_MIN);
    ts_threads_set(2);
    free(buf);
}
END_TEST

/* The fewest significant digits p for which printf's correctly rounded
 * %.{p-1}e of x reads back as x. */
static int printf_shortest(double x)
{
    char e[40];
    for (int p = 1; p < 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, x);
        if (strtod(e, NULL) == x)
            return p;
    }
    return 17;
}

/* significant digits of a %g-laid-out decimal (trailing zeros of an
 * integer are places, not digits) */
static int significant_digits(const char *s)
{
    int n = 0, zeros = 0, lead = 1;
    for (; *s && *s != 'e'; s++) {
        if (*s < '0' || *s > '9' || (lead && *s == '0'))
            continue;
        lead = 0;
        if (*s == '0')
            zeros++;
        else
            n += zeros + 1, zeros = 0;
    }
    return n;
}

/* The formatter: printf's bytes at fixed digits; at 0, exact round trip
 * with as few digits as printf's shortest (fewer only at a power of two,
 * where the interval below is narrower and the nearest p-digit decimal may
 * fall outside it while another inside), over every range of exponents:
 * any bits, moderate, below 1e-15 (multi-word powers of five) and
 * subnormals. */
START_TEST(formatter_exact)
{
    char fast[TS_NUM_MAX], ref[64];
    for (long i = 0; i < 36000; i++) {
        double x;
        uint64_t r = next();
        switch (i % 6) {
        case 0: memcpy(&x, &r, sizeof x); break; /* any bits: any exponent, NaN, inf */
        case 1: x = uniform() * pow(10.0, (double)(int)(next() % 30) - 12); break;
        case 2: x = (double)(long)(next() % 2000001 - 1000000) / 1000.0; break;
        case 3: x = uniform() * pow(10.0, -15.0 - (double)(next() % 293)); break;
        case 4: r &= (1ull << 52) - 1, memcpy(&x, &r, sizeof x); break; /* subnormal */
        default: x = ldexp(1.0, (int)(next() % 120) - 60); break;
        }
        for (int d = 1; d <= 17; d++) {
            ts_format_double(fast, x, d);
            snprintf(ref, sizeof ref, "%.*g", d, x);
            ck_assert_msg(strcmp(fast, ref) == 0, "%%.%dg of %a: %s, printf %s", d, x, fast,
                          ref);
        }
        size_t len = ts_format_double(fast, x, 0);
        ck_assert_uint_eq(len, strlen(fast));
        snprintf(ref, sizeof ref, "%.17g", x);
        if (x != x)
            continue;
        double back = strtod(fast, NULL);
        ck_assert_msg(memcmp(&back, &x, sizeof x) == 0, "%s reads back as %a, not %a", fast,
                      back, x);
        ck_assert_msg(strtod(ref, NULL) == back, "%s and %%.17g %s differ", fast, ref);
        ck_assert_uint_le(len, strlen(ref));
        if (isfinite(x) && x != 0.0) {
            uint64_t bits;
            memcpy(&bits, &x, sizeof bits);
            int sig = significant_digits(fast), want = printf_shortest(x);
            if (bits & ((1ull << 52) - 1))
                ck_assert_msg(sig == want, "%a: %s has %d digits, printf's shortest %d", x,
                              fast, sig, want);
            else
                ck_assert_msg(sig <= want, "%a: %s has %d digits, printf's shortest %d", x,
                              fast, sig, want);
        }
    }
    ts_format_double(fast, 0.1, 0);
    ck_assert_str_eq(fast, "0.1");
    ts_format_double(fast, 0.1 + 0.2, 0);
    ck_assert_str_eq(fast, "0.30000000000000004");
    ts_format_double(fast, -0.0, 0);
    ck_assert_str_eq(fast, "-0");
    ts_format_double(fast, 1e-7, 0);
    ck_assert_str_eq(fast, "1e-07");
    ts_format_double(fast, 1e300, 0);
    ck_assert_str_eq(fast, "1e+300");
    ts_format_double(fast, 5e-324, 0);
    ck_assert_str_eq(fast, "5e-324");
    ts_format_double(fast, 2.2250738585072014e-308, 0);
    ck_assert_str_eq(fast, "2.2250738585072014e-308");
    ts_format_double(fast, 1e-20, 0);
    ck_assert_str_eq(fast, "1e-20");
}
END_TEST

/* The shortest (digits 0) against the exact path, the oracle: the same
 * bytes, and a decimal that strtod reads back as x itself. */
static void shortest_as_oracle(double x)
{
    char fast[TS_NUM_MAX], exact[TS_NUM_MAX];
    size_t len = ts_format_double(fast, x, 0);
    ts_format_double_exact(exact, x, 0);
    ck_assert_msg(strcmp(fast, exact) == 0, "%a: %s, the exact path %s", x, fast, exact);
    ck_assert_uint_eq(len, strlen(fast));
    if (x != x)
        return;
    double back = strtod(fast, NULL);
    ck_assert_msg(memcmp(&back, &x, sizeof x) == 0, "%s reads back as %a, not %a", fast, back,
                  x);
}

/* a double of every kind: any bits (any exponent, subnormals, NaN, inf),
 * decimals of a few digits at any scale, integers, and the magnitudes of
 * a cloth's output row (positions O(1), velocities, tiny values) */
static double any_double(long i)
{
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10};
    uint64_t r = next();
    double x;
    switch (i % 5) {
    case 0: memcpy(&x, &r, sizeof x); return x;
    case 1: return (double)(int64_t)(r % 100000000000ull) / p10[next() % 11] * p10[next() % 11];
    case 2: return (double)(int64_t)(r >> (next() % 64)) * (r & 1 ? -1.0 : 1.0);
    case 3: return uniform() * pow(10.0, (double)(int)(next() % 80) - 70);
    default: r &= (1ull << 52) - 1, memcpy(&x, &r, sizeof x); return x; /* subnormal */
    }
}

/* The shortest by Schubfach equals the exact path on 250,000 doubles of
 * every kind and on the edges: every power of two and its neighbours
 * (the narrower gap below), powers of ten and their neighbours, DBL_MIN,
 * DBL_TRUE_MIN, DBL_MAX, the subnormal boundary, zeros, infinities, and
 * halfway cases (x = c / 4, c odd: x 10 ends in .5, the two nearest
 * 16-digit decimals equally near). */
START_TEST(formatter_shortest_oracle)
{
    rng = 0x2545f4914f6cdd1dull;
    for (long i = 0; i < 250000; i++)
        shortest_as_oracle(any_double(i));
    for (int e = -1074; e <= 1023; e++) {
        double p = ldexp(1.0, e);
        double edge[] = {p, nextafter(p, 0.0), nextafter(p, INFINITY), 3 * p};
        for (int j = 0; j < 4; j++)
            shortest_as_oracle(edge[j]), shortest_as_oracle(-edge[j]);
    }
    for (int e = -324; e <= 308; e++) {
        char s[16];
        snprintf(s, sizeof s, "1e%d", e);
        double p = strtod(s, NULL);
        shortest_as_oracle(p), shortest_as_oracle(nextafter(p, 0.0));
        shortest_as_oracle(nextafter(p, INFINITY));
    }
    double edge[] = {DBL_MIN,  DBL_TRUE_MIN, DBL_MAX,           nextafter(DBL_MIN, 0.0),
                     0.0,      -0.0,         INFINITY,          -INFINITY,
                     NAN,      1.0,          0.1,               0.3,
                     1e23,     9007199254740993.0, 0.1 + 0.2, 2.2250738585072011e-308};
    for (size_t j = 0; j < sizeof edge / sizeof *edge; j++)
        shortest_as_oracle(edge[j]), shortest_as_oracle(-edge[j]);
    for (int j = 0; j < 20000; j++)
        shortest_as_oracle(ldexp((double)((1ull << 52) + 2 * (next() % (1ull << 51)) + 1), -2));
    char s[TS_NUM_MAX];
    ts_format_double(s, 1125899906842624.25, 0); /* 11258999068426242.5 10^-1: to even */
    ck_assert_str_eq(s, "1125899906842624.2");
    ts_format_double(s, 1125899906842624.75, 0);
    ck_assert_str_eq(s, "1125899906842624.8");
    ts_format_double(s, 5e-324, 0);
    ck_assert_str_eq(s, "5e-324");
    ts_format_double(s, DBL_MAX, 0);
    ck_assert_str_eq(s, "1.7976931348623157e+308");
    ts_format_double(s, -0.0, 0);
    ck_assert_str_eq(s, "-0");
}
END_TEST

/* The same on 4 million more doubles of every kind (make test-long: about
 * 30 s, the exact oracle taking most of it). */
START_TEST(formatter_shortest_oracle_many)
{
    rng = 0x9e3779b97f4a7c15ull ^ 0x5851f42d4c957f2dull;
    for (long i = 0; i < 4000000; i++)
        shortest_as_oracle(any_double(i));
}
END_TEST

static size_t read_file(const char *path, unsigned char **data)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    *data = malloc((size_t)len + 1);
    ck_assert_uint_eq(fread(*data, 1, (size_t)len, f), (size_t)len);
    (*data)[len] = 0;
    fclose(f);
    return (size_t)len;
}

/* Parse an .npy v1.0 header: returns the offset of the data, rows, cols. */
static size_t npy_header(const unsigned char *d, size_t len, long *rows, long *cols)
{
    ck_assert_uint_ge(len, 10);
    ck_assert(memcmp(d, "\x93NUMPY\x01\x00", 8) == 0);
    size_t hlen = d[8] | (size_t)d[9] << 8, off = 10 + hlen;
    ck_assert_uint_eq(off % 64, 0);
    ck_assert_uint_le(off, len);
    ck_assert_int_eq(d[off - 1], '\n');
    char h[256];
    memcpy(h, d + 10, hlen < 255 ? hlen : 255);
    h[hlen < 255 ? hlen : 255] = 0;
    ck_assert_ptr_nonnull(strstr(h, "'descr': '<f8'"));
    ck_assert_ptr_nonnull(strstr(h, "'fortran_order': False"));
    const char *sh = strstr(h, "'shape': (");
    ck_assert_ptr_nonnull(sh);
    ck_assert_int_eq(sscanf(sh, "'shape': (%ld, %ld)", rows, cols), 2);
    return off;
}

static double le_double(const unsigned char *b)
{
    uint64_t u = 0;
    for (int k = 7; k >= 0; k--)
        u = u << 8 | b[k];
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* npy against dat: the same numbers, bit for bit. */
START_TEST(npy_matches_dat)
{
    char npy[] = "/tmp/tstep-npy-XXXXXX", dat[] = "/tmp/tstep-dat-XXXXXX", args[512],
         out[256], err[1024];
    close(mkstemp(npy)), close(mkstemp(dat));
    const char *run = "run --system cloth --param nx=4 --param ny=3 --stepper backward-euler "
                      "--dt 0.02 --steps 5 --every 2 --stats";
    snprintf(args, sizeof args, "%s --format npy --out %s", run, npy);
    ck_assert_int_eq(cli_run(args, out, sizeof out, err, sizeof err), 0);
    snprintf(args, sizeof args, "%s --out %s", run, dat);
    ck_assert_int_eq(cli_run(args, out, sizeof out, err, sizeof err), 0);
    unsigned char *d, *t;
    size_t len = read_file(npy, &d);
    read_file(dat, &t);
    long rows, cols;
    size_t off = npy_header(d, len, &rows, &cols);
    ck_assert_int_eq(rows, 4); /* steps 0, 2, 4 and the last, 5 */
    ck_assert_int_eq(cols, 1 + 2 * 36 + 1 + 5); /* t, x, v, energy, the --stats columns */
    ck_assert_uint_eq(len, off + (size_t)(rows * cols) * 8);
    char *p = strchr((char *)t, '\n') + 1; /* past the '#' header */
    for (long i = 0; i < rows * cols; i++) {
        char *end;
        double want = strtod(p, &end), got = le_double(d + off + 8 * (size_t)i);
        ck_assert_msg(end != p, "dat has fewer numbers than npy (%ld)", i);
        ck_assert_msg(memcmp(&want, &got, sizeof got) == 0, "value %ld: npy %a, dat %a", i, got,
                      want);
        p = end;
    }
    while (*p == ' ' || *p == '\n')
        p++;
    ck_assert_int_eq(*p, '\0');
    free(t);
    /* json (chosen by the extension): the same numbers, row by row */
    char json[64];
    snprintf(json, sizeof json, "%s.json", dat);
    snprintf(args, sizeof args, "%s --out %s", run, json);
    ck_assert_int_eq(cli_run(args, out, sizeof out, err, sizeof err), 0);
    read_file(json, &t);
    ck_assert_msg(json_valid((char *)t, NULL), "not JSON: %.200s", (char *)t);
    ck_assert_int_eq(json_count((char *)t, "\"energy\""), 1);
    p = strstr((char *)t, "\"rows\": [");
    ck_assert_ptr_nonnull(p);
    p += 9;
    for (long i = 0; i < rows * cols; i++) {
        p += strcspn(p, "-0123456789n");
        double want = le_double(d + off + 8 * (size_t)i);
        if (strncmp(p, "null", 4) == 0) { /* nan in dat and npy */
            ck_assert_msg(isnan(want), "json value %ld: null, npy %a", i, want);
            p += 4;
            continue;
        }
        char *end;
        double got = strtod(p, &end);
        ck_assert_msg(end != p && memcmp(&want, &got, sizeof got) == 0,
                      "json value %ld: %a, npy %a", i, got, want);
        p = end;
    }
    ck_assert_int_eq(strcspn(p, "-0123456789"), strlen(p));
    free(d), free(t);
    remove(json);
    /* a run that diverges at step 5 of 50: the header counts the rows written */
    snprintf(args, sizeof args,
             "run --system test1d --param k=1000 --stepper forward-euler --dt 0.1 --t-end 5 "
             "--format npy --out %s",
             npy);
    ck_assert_int_eq(cli_run(args, out, sizeof out, err, sizeof err), 1);
    len = read_file(npy, &d);
    off = npy_header(d, len, &rows, &cols);
    ck_assert_int_eq(rows, 5);
    ck_assert_int_eq(cols, 3);
    ck_assert_uint_eq(len, off + 5 * 3 * 8);
    ck_assert_double_eq(le_double(d + off + 8 * 3 * 4 + 8), 96059601.0); /* (-99)^4 */
    free(d);
    /* the same in json: closed, with the rows written */
    snprintf(args, sizeof args,
             "run --system test1d --param k=1000 --stepper forward-euler --dt 0.1 --t-end 5 "
             "--format json --out %s",
             npy);
    ck_assert_int_eq(cli_run(args, out, sizeof out, err, sizeof err), 1);
    read_file(npy, &d);
    ck_assert_msg(json_valid((char *)d, NULL), "not JSON: %s", (char *)d);
    ck_assert_int_eq(json_count((char *)d, "96059601"), 1); /* the last row's x */
    ck_assert_int_eq(json_count((char *)d, "0.4,"), 1);      /* its t, shortest */
    free(d);
    remove(npy), remove(dat);
}
END_TEST

/* A text row of at least ts_threads_min() numbers is formatted in blocks
 * on the thread team (src/cli/cmd_run.c): with 2 threads the same bytes as
 * with one, dat and csv, on a 110 x 110 cloth (72,607 numbers a row: more
 * than one group of blocks, the last one short). */
START_TEST(text_rows_same_bytes_any_threads)
{
    static const char *const formats[] = {"dat", "csv"};
    for (int f = 0; f < 2; f++) {
        unsigned char *d[2];
        size_t len[2];
        for (int th = 1; th <= 2; th++) {
            char cmd[512], path[64];
            snprintf(path, sizeof path, "text_rows_%d.%s", th, formats[f]);
            snprintf(cmd, sizeof cmd,
                     "%s run --system cloth --param nx=110 --param ny=110 --stepper rk4 "
                     "--dt 1e-4 --steps 1 --stats --threads %d --format %s --out %s",
                     TSTEP_BIN, th, formats[f], path);
            ck_assert_int_eq(system(cmd), 0);
            len[th - 1] = read_file(path, &d[th - 1]);
            remove(path);
        }
        ck_assert_uint_gt(len[0], 2 * 72607 * 2);
        ck_assert_msg(len[0] == len[1] && memcmp(d[0], d[1], len[0]) == 0,
                      "%s: 2 threads wrote other bytes", formats[f]);
        free(d[0]), free(d[1]);
    }
}
END_TEST

/* --threads: refused below 1; npy refused where only tables are written. */
START_TEST(threads_option)
{
    char out[4096], err[1024];
    ck_assert_int_eq(cli_run("run --system test1d --stepper rk4 --dt 0.1 --steps 1 --threads 0",
                             out, sizeof out, err, sizeof err),
                     2);
    ck_assert_ptr_nonnull(strstr(err, "--threads: '0' must be at least 1"));
    ck_assert_int_eq(cli_run("run --system cloth --param nx=5 --param ny=5 --stepper rk4 "
                             "--dt 0.01 --steps 2 --threads 2",
                             out, sizeof out, err, sizeof err),
                     0);
    /* more threads than processors: run, with a note saying so */
    char args[256];
    long procs = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(args, sizeof args, "run --system test1d --stepper rk4 --dt 0.1 --steps 1 --threads %ld",
             procs + 1);
    ck_assert_int_eq(cli_run(args, out, sizeof out, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "is more than the") && strstr(err, "processors here"), "%s", err);
    snprintf(args, sizeof args, "run --system test1d --stepper rk4 --dt 0.1 --steps 1 --threads %ld",
             procs);
    ck_assert_int_eq(cli_run(args, out, sizeof out, err, sizeof err), 0);
    ck_assert_msg(!strstr(err, "processors here"), "%s", err);
    ck_assert_int_eq(cli_run("sweep --system test1d --stepper rk4 --format npy", out,
                             sizeof out, err, sizeof err),
                     2);
    ck_assert_ptr_nonnull(strstr(err, "not npy"));
}
END_TEST

/* stderr of `tstep run ARGS --threads 2 --stats` with the environment
 * changes env (shell assignments after env -u of the four names); the
 * exit status (-1: not started) */
static int threads_stats_of(const char *env, const char *args, char *err, size_t size)
{
    char cmd[768];
    snprintf(cmd, sizeof cmd,
             "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u OPENBLAS_NUM_THREADS "
             "-u TSTEP_FOLLOW_LOAD %s %s run %s --threads 2 --stats 2>&1",
             env, TSTEP_BIN, args);
    FILE *p = popen(cmd, "r");
    err[0] = '\0';
    if (!p)
        return -1;
    size_t n = fread(err, 1, size - 1, p);
    err[n] = '\0';
    return pclose(p);
}

static void threads_stats(const char *env, char *err, size_t size)
{
    int st = threads_stats_of(env,
                              "--system cloth --param nx=10 --param ny=10 --stepper rk4 "
                              "--dt 0.001 --steps 2 --out /dev/null",
                              err, size);
    ck_assert_msg(st == 0, "status %d: %s", st, err);
}

/* How the threads wait, and OpenBLAS on one thread, unless the user chose
 * (src/cli/main.c): the program itself, started without the variables,
 * spins briefly (GOMP_SPINCOUNT 10000) and says how many loops took fewer
 * threads; a policy, spin count or OpenBLAS thread count given is kept. */
START_TEST(threads_wait_briefly)
{
    char err[2048];
    long fewer = -1, loops = -1;
    threads_stats("", err, sizeof err);
    const char *c = strstr(err, "threads 2, waiting GOMP_SPINCOUNT 10000; on fewer threads");
    ck_assert_msg(c && sscanf(c, "threads 2, waiting GOMP_SPINCOUNT 10000; on fewer threads, "
                                 "the processors busy or too few: %ld of %ld loops",
                              &fewer, &loops) == 2,
                  "%s", err);
    ck_assert_msg(fewer >= 0 && fewer <= loops, "%s", err);
    ck_assert_msg(strstr(err, " loops; OpenBLAS threads 1 (OPENBLAS_NUM_THREADS)"), "%s", err);
    threads_stats("OMP_WAIT_POLICY=active", err, sizeof err);
    ck_assert_msg(strstr(err, "threads 2, waiting active (OMP_WAIT_POLICY); on fewer"), "%s", err);
    threads_stats("GOMP_SPINCOUNT=1000", err, sizeof err);
    ck_assert_msg(strstr(err, "threads 2, waiting GOMP_SPINCOUNT 1000; on fewer"), "%s", err);
    threads_stats("OPENBLAS_NUM_THREADS=2", err, sizeof err);
    ck_assert_msg(strstr(err, "GOMP_SPINCOUNT 10000; on fewer") &&
                      strstr(err, "; OpenBLAS threads 2 (OPENBLAS_NUM_THREADS)"),
                  "%s", err);
}
END_TEST

/* The rule of the team that follows the load (src/ext/threads.c): the
 * processors left over by the other running tasks, at least one, at most
 * the threads asked for; unknown load: as asked. */
START_TEST(threads_for_load_rule)
{
    ck_assert_int_eq(ts_threads_for_load(2, 2, 0), 2);
    ck_assert_int_eq(ts_threads_for_load(2, 2, 1), 1);
    ck_assert_int_eq(ts_threads_for_load(2, 2, 7), 1);
    ck_assert_int_eq(ts_threads_for_load(4, 8, 3), 4);
    ck_assert_int_eq(ts_threads_for_load(4, 8, 6), 2);
    ck_assert_int_eq(ts_threads_for_load(1, 8, 0), 1);
    ck_assert_int_eq(ts_threads_for_load(3, 2, -1), 3);
    ck_assert_int_eq(ts_threads_for_load(3, 0, 0), 3);
}
END_TEST

/* 1 when the two files hold the same bytes */
static int files_equal(const char *a, const char *b)
{
    FILE *f = fopen(a, "rb"), *g = fopen(b, "rb");
    int same = f && g, c;
    while (same && (c = fgetc(f)) == fgetc(g))
        if (c == EOF)
            break;
    same = same && feof(f) && feof(g);
    if (f)
        fclose(f);
    if (g)
        fclose(g);
    return same;
}

/* The processors this process may run on */
static int usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* A spinning child at the lowest priority: it counts as a running task
 * but hardly slows the rest of the suite; it dies with the test. */
static pid_t spinner(void)
{
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(0);
        if (nice(19) == -1) { /* the priority is a courtesy only */
        }
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    return pid;
}

/* With a spinning process on every processor of the machine, the
 * program's loops take one thread after the first looks (--stats counts
 * them), and its output is the same bytes as with TSTEP_FOLLOW_LOAD=0,
 * which keeps the two threads in every loop.  Where this process may use
 * only some of the machine's processors, or there are more than 64, the
 * machine cannot be filled cheaply: then only the outputs are compared. */
START_TEST(threads_follow_the_load)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int cpus = usable_cpus(), nspin = 0, fill = online == cpus && cpus <= 64;
    pid_t spin[64];
    while (fill && nspin < cpus && (spin[nspin] = spinner()) > 0)
        nspin++;
    char err[2][2048], path[2][64], args[256];
    long fewer[2] = {-1, -1}, loops[2] = {-1, -1};
    int st[2] = {-1, -1};
    for (int f = 0; f < 2 && nspin == (fill ? cpus : 0); f++) {
        snprintf(path[f], sizeof path[f], "/tmp/tstep_follow_%d_%d.dat", (int)getpid(), f);
        snprintf(args, sizeof args,
                 "--system cloth --param nx=80 --param ny=80 --stepper rk4 --dt 1e-4 --steps 200 "
                 "--every 100 --out %s",
                 path[f]);
        st[f] = threads_stats_of(f ? "TSTEP_FOLLOW_LOAD=0" : "", args, err[f], sizeof err[f]);
        const char *c = strstr(err[f], "the processors busy or too few: ");
        if (c)
            sscanf(c, "the processors busy or too few: %ld of %ld loops", &fewer[f], &loops[f]);
    }
    for (int k = 0; k < nspin; k++)
        kill(spin[k], SIGKILL), waitpid(spin[k], NULL, 0);
    int same = files_equal(path[0], path[1]);
    unlink(path[0]), unlink(path[1]);
    ck_assert_msg(nspin == (fill ? cpus : 0), "could start %d of %d spinning processes", nspin,
                  cpus);
    ck_assert_msg(st[0] == 0 && st[1] == 0, "status %d, %d: %s%s", st[0], st[1], err[0], err[1]);
    ck_assert_msg(same, "the outputs differ");
    ck_assert_msg(fewer[1] == 0 && loops[1] > 100, "not following: %s", err[1]);
    if (fill)
        ck_assert_msg(loops[0] == loops[1] && fewer[0] >= loops[0] / 2, "following: %s", err[0]);
}
END_TEST

/* The team's looks (src/ext/threads.c) through the tests' probe: no other
 * task, every loop on the 2 threads asked for; more tasks than processors,
 * one thread once two looks 20 ms apart agree (not at the first look); a
 * count that changes at every look, no change; following turned off, the
 * threads asked for whatever the count; more threads asked for than
 * processors, one a processor from the first loop. */
static long probe_others;
static int probe_flip;

static long probe(long cpus, int asked)
{
    (void)cpus, (void)asked;
    probe_flip = !probe_flip;
    return probe_others < 0 ? (probe_flip ? 0 : 1000) : probe_others;
}

static void tiny(void *ctx, size_t i0, size_t i1) { (void)ctx, (void)i0, (void)i1; }

static double test_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Scripted reads for ts_threads_others: the machine's counts and the
 * process's running threads, in the order the look reads them; a read past
 * a script fails the test, and every script must be read to its end */
typedef struct {
    const long *machine, *own;
    int nm, no, m, o;
} count_script;

static long scripted_machine(void *ctx)
{
    count_script *c = ctx;
    ck_assert_msg(c->m < c->nm, "the machine's count read %d times, scripted %d", c->m + 1, c->nm);
    return c->machine[c->m++];
}

static long scripted_own(void *ctx)
{
    count_script *c = ctx;
    ck_assert_msg(c->o < c->no, "the threads looked at %d times, scripted %d", c->o + 1, c->no);
    return c->own[c->o++];
}

static long others_of(long cpus, int asked, const long *machine, int nm, const long *own, int no)
{
    count_script c = {machine, own, nm, no, 0, 0};
    long r = ts_threads_others(cpus, asked, scripted_machine, scripted_own, &c);
    ck_assert_msg(c.m == nm && c.o == no, "read %d counts and %d looks, scripted %d and %d", c.m,
                  c.o, nm, no);
    return r;
}

/* A look at the machine (ts_threads_others) on 2 processors with 2
 * threads asked: the machine's count is taken between two looks at the
 * process's threads that agree, reading no more than it needs.  A worker
 * that falls asleep before the threads are looked at, between the first
 * look and the second count, or between the second count and the second
 * look is not another task; a spinning process beside the threads is one;
 * four unequal pairs leave the last look's count, towards fewer threads; a
 * count that leaves a processor free needs no look at the threads; a
 * reader that fails gives -1. */
START_TEST(threads_others_count)
{
    /* quiet: the worker spinning, or falling asleep during the look */
    ck_assert_int_eq(others_of(2, 2, (const long[]){2, 2}, 2, (const long[]){2, 2}, 2), 0);
    ck_assert_int_eq(others_of(2, 2, (const long[]){2, 1}, 2, (const long[]){1, 1}, 2), 0);
    ck_assert_int_eq(others_of(2, 2, (const long[]){2, 1, 1}, 3, (const long[]){2, 1, 1}, 3), 0);
    ck_assert_int_eq(others_of(2, 2, (const long[]){2, 2, 1}, 3, (const long[]){2, 1, 1}, 3), 0);
    /* a spinning process beside the threads */
    ck_assert_int_eq(others_of(2, 2, (const long[]){3, 3}, 2, (const long[]){2, 2}, 2), 1);
    ck_assert_int_eq(others_of(2, 2, (const long[]){3, 2, 2}, 3, (const long[]){2, 1, 1}, 3), 1);
    ck_assert_int_eq(
        others_of(2, 2, (const long[]){3, 3, 3, 3, 3}, 5, (const long[]){2, 1, 2, 1, 2}, 5), 1);
    /* room for the threads asked: no look at them; readers that fail */
    ck_assert_int_eq(others_of(4, 2, (const long[]){2}, 1, NULL, 0), 1);
    ck_assert_int_eq(others_of(2, 2, (const long[]){-1}, 1, NULL, 0), -1);
    ck_assert_int_eq(others_of(2, 2, (const long[]){3}, 1, (const long[]){-1}, 1), -1);
    ck_assert_int_eq(others_of(2, 2, (const long[]){3, 3}, 2, (const long[]){2, -1}, 2), -1);
}
END_TEST

/* loops for 0.1 s on `threads` with others running (-1: alternating),
 * and with until_fewer on until one took fewer threads (at most 3 s, so
 * that a stalled machine still sees two looks); fewer, of loops */
static long loops_on(int threads, long others, int follow, int until_fewer, long *loops)
{
    long fewer = 0;
    ck_assert_int_eq(ts_threads_set(threads), TS_OK);
    ts_threads_follow_load(follow);
    probe_others = others, probe_flip = 0;
    double t0 = test_seconds(), t;
    do {
        for (int k = 0; k < 100; k++)
            ts_parallel_for(64, tiny, NULL);
        ts_threads_usage(loops, &fewer);
        t = test_seconds() - t0;
    } while (t < 0.1 || (until_fewer && fewer == 0 && t < 3.0));
    return fewer;
}

static long loops_with(long others, int follow, long *loops)
{
    return loops_on(2, others, follow, others >= 1000 && follow, loops);
}

START_TEST(threads_follow_probe)
{
    long loops, cpus = usable_cpus();
    ts_threads_load_probe(probe);
    if (cpus >= 2) {
        ck_assert_int_eq(loops_with(0, 1, &loops), 0);
        ck_assert_int_gt(loops, 10);
        long fewer = loops_with(1000, 1, &loops);
        ck_assert_msg(fewer > 0 && fewer < loops, "%ld of %ld", fewer, loops);
        ck_assert_int_eq(loops_with(-1, 1, &loops), 0);
    }
    ck_assert_int_eq(loops_with(1000, 0, &loops), 0);
    /* more threads than processors: one a processor from the first loop */
    long fewer_all = loops_on((int)cpus + 1, 0, 1, 0, &loops);
    ck_assert_int_eq(fewer_all, loops);
    ck_assert_int_eq(loops_on((int)cpus + 1, 0, 0, 0, &loops), 0);
    ts_threads_load_probe(NULL);
    ts_threads_follow_load(0);
    ts_threads_set(1);
}
END_TEST

Suite *perf_suite(void)
{
    Suite *s = suite_create("perf");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, springs_same_bits_any_threads);
    tcase_add_loop_test(tc, implicit_run_same_bits_any_threads, 0, 2);
    tcase_add_test(tc, reductions_same_bits_any_threads);
    tcase_add_test(tc, first_touch_on_the_team);
    tcase_add_test(tc, threads_option);
    tcase_add_test(tc, text_rows_same_bytes_any_threads);
    tcase_add_test(tc, threads_wait_briefly);
    tcase_add_test(tc, threads_for_load_rule);
    tcase_add_test(tc, threads_follow_the_load);
    tcase_add_test(tc, threads_follow_probe);
    tcase_add_test(tc, threads_others_count);
    suite_add_tcase(s, tc);
    tc = tcase_create("output");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, formatter_exact);
    tcase_add_test(tc, formatter_shortest_oracle);
    tcase_add_test(tc, npy_matches_dat);
    suite_add_tcase(s, tc);
    tc = tcase_create("output-many");
    tcase_set_tags(tc, "long");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, formatter_shortest_oracle_many);
    suite_add_tcase(s, tc);
    return s;
}

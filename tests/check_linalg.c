/* Vector helpers and the Krylov solvers against small exact systems. */
#include <math.h>
#include <string.h>
#include "tests.h"
#include "tstep/linalg.h"
#include "tstep/status.h"

/* A = tridiag(-1, 4, -1) (SPD), or with +0.5 above and -0.5 below (not symmetric). */
typedef struct {
    size_t n;
    double skew;
} tri;

static int tri_mul(void *ctx, const double *u, double *out)
{
    const tri *a = ctx;
    for (size_t i = 0; i < a->n; i++) {
        out[i] = 4.0 * u[i];
        if (i > 0)
            out[i] += (-1.0 - a->skew) * u[i - 1];
        if (i + 1 < a->n)
            out[i] += (-1.0 + a->skew) * u[i + 1];
    }
    return TS_OK;
}

static void check_solver(double skew, int use_cg)
{
    enum { N = 40 };
    tri a = {N, skew};
    double xs[N], b[N], x[N], diag[N], work[8 * N], r[N];
    for (size_t i = 0; i < N; i++)
        xs[i] = sin(0.3 * (double)i) + 0.1 * (double)i, x[i] = 0.0, diag[i] = 4.0;
    tri_mul(&a, xs, b);
    ts_krylov k = {.tol = 1e-12, .max_iter = 200, .diag = diag, .work = work};
    int iters;
    ts_linear_op A = {N, tri_mul, &a};
    int s = use_cg ? ts_cg_solve(&A, b, x, &k, &iters) : ts_bicgstab_solve(&A, b, x, &k, &iters);
    ck_assert_int_eq(s, TS_OK);
    ck_assert_int_gt(iters, 0);
    ck_assert_double_le(ts_vec_dist_inf(N, x, xs), 1e-10);
    tri_mul(&a, x, r);
    ts_vec_axpy(N, -1.0, b, r);
    ck_assert_double_le(ts_vec_norm2(N, r), 1e-11 * ts_vec_norm2(N, b));
}

START_TEST(cg_solves_spd) { check_solver(0.0, 1); }
END_TEST

START_TEST(bicgstab_solves_nonsymmetric) { check_solver(0.5, 0); }
END_TEST

/* A nearly singular cyclic matrix: A u = D u + 1.2 S u, D = 1, 1.3, 1.6
 * repeating, S the cyclic shift; BiCGSTAB creeps on it */
enum { CYC_N = 200 };
static int cyclic_mul(void *ctx, const double *u, double *out)
{
    (void)ctx;
    for (size_t i = 0; i < CYC_N; i++)
        out[i] = (1.0 + 0.3 * (double)(i % 3)) * u[i] + 1.2 * u[(i + 1) % CYC_N];
    return TS_OK;
}

/* With k.stall, BiCGSTAB gives up when its least residual has not halved
 * in that many iterations (TS_ERR_LINEAR, before the cap; without it, it
 * runs to the cap), and a steadily converging solve is not cut short. */
START_TEST(bicgstab_stops_when_stagnating)
{
    static double b[CYC_N], x[CYC_N], work[6 * CYC_N];
    for (size_t i = 0; i < CYC_N; i++)
        b[i] = 1.0 + (double)(i % 7);
    int iters[2];
    for (int stall = 0; stall < 2; stall++) {
        ts_vec_zero(CYC_N, x);
        ts_krylov k = {.tol = 1e-8, .max_iter = 150, .work = work, .stall = stall ? 20 : 0};
        ts_linear_op A = {CYC_N, cyclic_mul, NULL};
        ck_assert_int_eq(ts_bicgstab_solve(&A, b, x, &k, &iters[stall]), TS_ERR_LINEAR);
    }
    ck_assert_int_eq(iters[0], 150);
    ck_assert_int_lt(iters[1], 150);
    ck_assert_ptr_nonnull(strstr(ts_error_detail(), "stagnated"));
    /* the tridiagonal system converges within the same window */
    enum { N = 40 };
    tri a = {N, 0.5};
    double bt[N], xt[N] = {0}, wt[6 * N];
    for (size_t i = 0; i < N; i++)
        bt[i] = sin(0.3 * (double)i);
    ts_krylov k = {.tol = 1e-12, .max_iter = 200, .work = wt, .stall = 20};
    int it;
    ts_linear_op A = {N, tri_mul, &a};
    ck_assert_int_eq(ts_bicgstab_solve(&A, bt, xt, &k, &it), TS_OK);
}
END_TEST

START_TEST(cg_filter_holds_masked_entries_at_zero)
{
    enum { N = 10 };
    tri a = {N, 0.0};
    double b[N], x[N], work[5 * N];
    unsigned char mask[N] = {0};
    mask[0] = mask[7] = 1;
    for (size_t i = 0; i < N; i++)
        b[i] = 1.0, x[i] = 5.0; /* warm start with junk in masked entries */
    ts_krylov k = {.tol = 1e-12, .max_iter = 100, .mask = mask, .work = work};
    int iters;
    ts_linear_op A = {N, tri_mul, &a};
    ck_assert_int_eq(ts_cg_solve(&A, b, x, &k, &iters), TS_OK);
    ck_assert(x[0] == 0.0 && x[7] == 0.0);
    /* the free rows satisfy (A x)_i = b_i */
    double ax[N];
    tri_mul(&a, x, ax);
    for (size_t i = 0; i < N; i++)
        if (!mask[i])
            ck_assert_double_eq_tol(ax[i], 1.0, 1e-10);
}
END_TEST

START_TEST(cg_reports_nonconvergence)
{
    enum { N = 40 };
    tri a = {N, 0.0};
    double b[N], x[N] = {0}, work[5 * N];
    for (size_t i = 0; i < N; i++)
        b[i] = (double)(i % 3);
    ts_krylov k = {.tol = 1e-14, .max_iter = 3, .work = work};
    int iters;
    ts_linear_op A = {N, tri_mul, &a};
    ck_assert_int_eq(ts_cg_solve(&A, b, x, &k, &iters), TS_ERR_LINEAR);
    ck_assert_int_eq(iters, 3);
}
END_TEST

static int neg_mul(void *ctx, const double *u, double *out)
{
    int s = tri_mul(ctx, u, out);
    ts_vec_scale(((tri *)ctx)->n, -1.0, out);
    return s;
}

START_TEST(cg_rejects_indefinite)
{
    enum { N = 4 };
    tri a = {N, 0.0};
    double b[N] = {1, 0, 0, 0}, x[N] = {0}, work[5 * N];
    ts_krylov k = {.tol = 1e-12, .max_iter = 10, .work = work};
    int iters;
    ts_linear_op A = {N, neg_mul, &a};
    ck_assert_int_eq(ts_cg_solve(&A, b, x, &k, &iters), TS_ERR_INDEFINITE);
    ck_assert_int_eq(iters, 1);
}
END_TEST

START_TEST(vector_helpers)
{
    double x[3] = {1, -2, 3}, y[3] = {1, 1, 1};
    ck_assert_double_eq(ts_vec_dot(3, x, y), 2.0);
    ck_assert_double_eq(ts_vec_norm_inf(3, x), 3.0);
    ck_assert_double_eq_tol(ts_vec_norm2(3, x), sqrt(14.0), 1e-15);
    ts_vec_axpby(3, 2.0, x, -1.0, y); /* y = 2x - y */
    ck_assert(y[0] == 1.0 && y[1] == -5.0 && y[2] == 5.0);
    ck_assert_double_eq(ts_vec_dist_inf(3, x, y), 3.0);
    y[1] = NAN;
    ck_assert(!ts_vec_all_finite(3, y));
    ck_assert(isnan(ts_vec_norm_inf(3, y)));
    /* a non-finite entry anywhere: every lane of a vectorized loop and its tail */
    double z[37];
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 37; i++)
        z[i] = 1e308 * (i % 2 ? -1.0 : 1.0);
    ck_assert(ts_vec_all_finite(37, z));
    for (int i = 0; i < 37; i++)
        for (int b = 0; b < 3; b++) {
            double keep = z[i];
            z[i] = bad[b];
            ck_assert_msg(!ts_vec_all_finite(37, z), "entry %d = %g missed", i, bad[b]);
            z[i] = keep;
        }
}
END_TEST

/* max |x_i - y_i| and max |x_i| against the plain loop, for every length
 * to 37 (each lane of the unrolled loop and its tail), the largest entry,
 * a NaN and an infinity at every position, with y and without: the same
 * number, and NaN exactly when an entry is NaN. */
START_TEST(max_norms)
{
    double x[37], y[37];
    for (size_t n = 0; n <= 37; n++)
        for (size_t at = 0; at < (n ? n : 1); at++)
            for (int kind = 0; kind < 4; kind++) {
                for (size_t i = 0; i < n; i++) {
                    x[i] = (i % 3 ? -0.5 : 0.25) * (double)(i % 5);
                    y[i] = 0.125 * (double)(i % 4);
                }
                if (n) {
                    static const double v[4] = {-7.5, NAN, INFINITY, -INFINITY};
                    x[at] = v[kind];
                }
                for (int with_y = 0; with_y < 2; with_y++) {
                    double want = 0.0;
                    int nan = 0;
                    for (size_t i = 0; i < n; i++) {
                        double d = fabs(with_y ? x[i] - y[i] : x[i]);
                        nan |= isnan(d);
                        if (d > want)
                            want = d;
                    }
                    double got = with_y ? ts_vec_dist_inf(n, x, y) : ts_vec_norm_inf(n, x);
                    if (nan)
                        ck_assert_msg(isnan(got), "n %zu, NaN at %zu: got %g", n, at, got);
                    else
                        ck_assert_msg(got == want, "n %zu, kind %d at %zu, y %d: got %.17g, want %.17g",
                                      n, kind, at, with_y, got, want);
                }
            }
}
END_TEST

/* the filter and the mask scan against the plain loops: every length to
 * 40 and every start, with masks of one set entry at each position, of two
 * (a word boundary between them or not), all clear and all set; unmasked
 * entries keep their bits, masked ones become +0 */
START_TEST(mask_scan)
{
    unsigned char m[40];
    double x[40];
    for (size_t n = 0; n <= 40; n++)
        for (int kind = 0; kind < 4; kind++)
            for (size_t at = 0; at < (n ? n : 1); at++) {
                for (size_t i = 0; i < n; i++)
                    m[i] = kind == 3 ? 2 : 0;
                if (n && kind == 1)
                    m[at] = 1;
                if (n && kind == 2)
                    m[at] = m[(at * 7 + 3) % n] = 255;
                for (size_t i0 = 0; i0 <= n; i0++) {
                    size_t want = i0;
                    while (want < n && !m[want])
                        want++;
                    ck_assert_msg(ts_mask_next(m, i0, n) == want, "n %zu, kind %d at %zu, from %zu",
                                  n, kind, at, i0);
                }
                for (size_t i = 0; i < n; i++)
                    x[i] = -1.0 - (double)i;
                ts_vec_mask(n, m, x);
                for (size_t i = 0; i < n; i++) {
                    double want = m[i] ? 0.0 : -1.0 - (double)i;
                    ck_assert_msg(x[i] == want && !signbit(x[i]) == !signbit(want),
                                  "n %zu, kind %d at %zu: x[%zu] = %g", n, kind, at, i, x[i]);
                }
            }
    x[0] = 3.0;
    ts_vec_mask(1, NULL, x); /* no mask: nothing */
    ck_assert(x[0] == 3.0);
}
END_TEST

Suite *linalg_suite(void)
{
    Suite *s = suite_create("linalg");
    TCase *tc = tcase_create("solvers");
    tcase_add_test(tc, cg_solves_spd);
    tcase_add_test(tc, bicgstab_solves_nonsymmetric);
    tcase_add_test(tc, bicgstab_stops_when_stagnating);
    tcase_add_test(tc, cg_filter_holds_masked_entries_at_zero);
    tcase_add_test(tc, cg_reports_nonconvergence);
    tcase_add_test(tc, cg_rejects_indefinite);
    tcase_add_test(tc, vector_helpers);
    tcase_add_test(tc, max_norms);
    tcase_add_test(tc, mask_scan);
    suite_add_tcase(s, tc);
    return s;
}

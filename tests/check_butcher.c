/* The explicit Runge-Kutta engine (src/methods/butcher.c) against its tableau.
 *
 * The engine finishes each stage (a = M^-1 f, dx = the stage's velocity,
 * zero where pinned) in the pass that forms the next stage state, builds
 * stage velocities in place and adds Y_{n+1} in blocks.  Oracle: the
 * tableau written out here on the first-order view, k_i = F(t + c_i h,
 * Y_n + sum_{j<i} (h a_ij) k_j) with ts_system_deriv, Y_{n+1} = Y_n +
 * sum_i (h b_i) k_i (the last stage's state when first same as last), the
 * terms added in stage order and zero coefficients skipped: the engine
 * must match it bit for bit, on every stepper with a tableau, for order-1
 * and order-2 systems, a cloth of several blocks with pinned particles
 * that have a velocity and unequal masses (on one thread and on two: the
 * parallel path, on small loops), over steps that reuse the last stage
 * (FSAL), a retry from the same start and a state changed from outside;
 * and the error estimate h sum (b_i - bhat_i) k_i, through
 * ts_stepper_error, equals the weighted RMS norm computed here.  A chained
 * tableau's stepper keeps its start (TS_KEEPS_START) for undo and for a
 * step that ends non-finite. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "tstep/butcher.h"
#include "tstep/linalg.h"
#include "tstep/springs.h"
#include "tstep/stepper.h"

typedef struct {
    size_t m;
    double *y, *ys, *err, *k[TS_BUTCHER_MAX_STAGES];
} reference;

/* One step of tab from y (m entries) at t, in place; err when tab has bhat. */
static void reference_step(reference *r, const ts_butcher *tab, ts_system *sys, double t,
                           double h)
{
    int s = tab->stages;
    size_t m = r->m;
    ck_assert_int_eq(ts_system_deriv(sys, t, r->y, r->k[0]), TS_OK);
    for (int i = 1; i < s; i++) {
        for (size_t q = 0; q < m; q++) {
            double z = r->y[q];
            for (int j = 0; j < i; j++)
                if (tab->a[i * s + j] != 0.0)
                    z += (h * tab->a[i * s + j]) * r->k[j][q];
            r->ys[q] = z;
        }
        ck_assert_int_eq(ts_system_deriv(sys, t + tab->c[i] * h, r->ys, r->k[i]), TS_OK);
    }
    if (tab->bhat)
        for (size_t q = 0; q < m; q++) {
            double e = 0.0;
            for (int j = 0; j < s; j++)
                if (tab->b[j] != tab->bhat[j])
                    e += (h * (tab->b[j] - tab->bhat[j])) * r->k[j][q];
            r->err[q] = e;
        }
    if (tab->fsal) {
        memcpy(r->y, r->ys, m * sizeof *r->y);
        return;
    }
    for (size_t q = 0; q < m; q++) {
        double z = r->y[q];
        for (int j = 0; j < s; j++)
            if (tab->b[j] != 0.0)
                z += (h * tab->b[j]) * r->k[j][q];
        r->y[q] = z;
    }
}

/* ts_butcher_error's norm of r->err against the start y0 and the state */
static double reference_error(const reference *r, const ts_system *sys, const double *y0)
{
    double sum = 0.0, rtol = 1e-4, atol = 1e-7;
    for (size_t q = 0; q < r->m; q++) {
        double y1 = q < sys->n ? sys->x[q] : sys->v[q - sys->n];
        double e = r->err[q] / (atol + rtol * fmax(fabs(y0[q]), fabs(y1)));
        sum += e * e;
    }
    return sqrt(sum / (double)r->m);
}

static ts_system *make_system(int which)
{
    static const char *const names[] = {"cloth", "string", "oscillator", "test1d"};
    const ts_system_type *type = ts_system_find(names[which]);
    ck_assert_ptr_nonnull(type);
    ts_params p;
    ts_params_init(&p, type->params);
    if (which == 0) { /* 780 entries a half: two blocks, the second partial */
        ck_assert_int_eq(ts_params_set_pair(&p, "nx=20"), TS_OK);
        ck_assert_int_eq(ts_params_set_pair(&p, "ny=13"), TS_OK);
    }
    ts_system *sys = NULL;
    ck_assert_int_eq(ts_system_new(type, &p, &sys), TS_OK);
    if (which == 0) {
        ck_assert_ptr_nonnull(sys->pinned);
        /* pins in the second block too, one of them alone in the last entries */
        sys->pinned[699] = sys->pinned[700] = sys->pinned[701] = 1;
        sys->pinned[777] = 1;
        for (size_t i = 0; i < sys->n / 3; i++)
            ts_springs_set_mass((ts_springs *)sys, i, 0.01 * (1.0 + 0.37 * (double)(i % 7)));
    }
    if (sys->order == 2) /* every entry moving, the pinned ones too */
        for (size_t i = 0; i < sys->n; i++)
            sys->v[i] = 0.3 * sin(1.1 * (double)i + 0.2);
    return sys;
}

static void expect_same(const ts_stepper_type *type, const ts_system *sys, const reference *r,
                        const char *what)
{
    double *got = malloc(r->m * sizeof *got);
    ts_system_get_y(sys, got);
    size_t q = 0;
    while (q < r->m && memcmp(&got[q], &r->y[q], sizeof *got) == 0)
        q++;
    ck_assert_msg(q == r->m, "%s on %s, %s: entry %zu is %.17g, the tableau gives %.17g",
                  type->name, sys->type->name, what, q, got[q < r->m ? q : 0],
                  r->y[q < r->m ? q : 0]);
    free(got);
}

static void check_tableau(const ts_stepper_type *type, int which, int threads)
{
    const ts_butcher *tab = type->tableau;
    ts_system *sys = make_system(which);
    reference r = {.m = ts_system_ydim(sys)};
    size_t m = r.m;
    r.y = malloc(m * sizeof *r.y), r.ys = malloc(m * sizeof *r.ys);
    r.err = malloc(m * sizeof *r.err);
    double *y0 = malloc(m * sizeof *y0);
    for (int i = 0; i < tab->stages; i++)
        r.k[i] = malloc(m * sizeof *r.k[i]);
    ck_assert_int_eq(ts_threads_set(threads), TS_OK);
    ts_threads_set_min(threads > 1 ? 1 : TS_PAR_MIN);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    ts_system_get_y(sys, r.y);
    double h = which == 0 ? 2e-3 : 0.05, t = 0.0;
    for (int step = 0; step < 5; step++) {
        if (step == 3) { /* a retry from the last start */
            t -= h;
            memcpy(r.y, y0, m * sizeof *y0);
            ts_system_set_y(sys, y0);
        }
        if (step == 4) { /* a state changed from outside */
            sys->x[0] += 0.125;
            r.y[0] += 0.125;
        }
        memcpy(y0, r.y, m * sizeof *y0);
        reference_step(&r, tab, sys, t, h);
        ck_assert_int_eq(ts_stepper_step(st, sys, t, h), TS_OK);
        t += h;
        char what[64];
        snprintf(what, sizeof what, "step %d, %d thread(s)", step, threads);
        expect_same(type, sys, &r, what);
        if (tab->bhat) {
            double want = reference_error(&r, sys, y0);
            double got = ts_stepper_error(st, sys, 1e-4, 1e-7);
            ck_assert_msg(got == want, "%s on %s, %s: error estimate %.17g, want %.17g",
                          type->name, sys->type->name, what, got, want);
        }
    }
    ts_stepper_free(st);
    ts_threads_set(1);
    ts_threads_set_min(TS_PAR_MIN);
    for (int i = 0; i < tab->stages; i++)
        free(r.k[i]);
    free(r.y), free(r.ys), free(r.err), free(y0);
    ts_system_free(sys);
}

/* A chained tableau's stepper keeps its start (TS_KEEPS_START, no backup in
 * the wrapper), any other does not; the kept start is the state before the
 * step, bit for bit: after ts_stepper_undo, and after a step that ends
 * non-finite (the wrapper puts the start back). */
static void check_kept_start(const ts_stepper_type *type, int which)
{
    int keeps = ts_butcher_keeps_start(type->tableau);
    ck_assert_msg(keeps == ((type->flags & TS_KEEPS_START) != 0),
                  "%s: TS_KEEPS_START %s with a%s chained tableau", type->name,
                  keeps ? "missing" : "set", keeps ? "" : " not");
    if (!keeps)
        return;
    ts_system *sys = make_system(which);
    size_t m = ts_system_ydim(sys);
    double *y0 = malloc(m * sizeof *y0), *y = malloc(m * sizeof *y);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, NULL, &st), TS_OK);
    ck_assert_int_eq(ts_stepper_step(st, sys, 0.0, 1e-3), TS_OK);
    ts_system_get_y(sys, y0);
    ck_assert_int_eq(ts_stepper_step(st, sys, 1e-3, 1e-3), TS_OK);
    ts_system_get_y(sys, y);
    ck_assert_msg(memcmp(y, y0, m * sizeof *y) != 0, "%s: the step moved nothing", type->name);
    ck_assert_msg(memcmp(ts_stepper_start_x(st), y0, sys->n * sizeof *y) == 0,
                  "%s on %s: the kept start is not the state before the step", type->name,
                  sys->type->name);
    ts_stepper_undo(st, sys);
    ts_system_get_y(sys, y);
    ck_assert_msg(memcmp(y, y0, m * sizeof *y) == 0, "%s on %s: undo is not the start",
                  type->name, sys->type->name);
    sys->x[sys->n - 1] = 1e308; /* forces overflow: a non-finite end state */
    ts_system_get_y(sys, y0);
    ck_assert_int_eq(ts_stepper_step(st, sys, 1e-3, 1e3), TS_ERR_DIVERGED);
    ts_system_get_y(sys, y);
    ck_assert_msg(memcmp(y, y0, m * sizeof *y) == 0,
                  "%s on %s: a diverged step does not leave the start", type->name,
                  sys->type->name);
    ts_stepper_free(st);
    free(y0), free(y);
    ts_system_free(sys);
}

/* _i: a registered stepper; those without a tableau are skipped */
START_TEST(engine_is_the_tableau)
{
    const ts_stepper_type *type = ts_stepper_at((size_t)_i);
    if (!type->tableau)
        return;
    for (int which = 0; which < 4; which++)
        check_tableau(type, which, 1);
    check_tableau(type, 0, 2); /* the cloth's blocks on two threads */
    check_kept_start(type, 0);
    check_kept_start(type, 3); /* order 1 */
}
END_TEST

Suite *butcher_suite(void)
{
    Suite *s = suite_create("butcher");
    TCase *tc = tcase_create("tableau");
    size_t count = 0;
    while (ts_stepper_at(count))
        count++;
    tcase_set_timeout(tc, 60); /* two threads on tiny loops: slow on a busy machine */
    tcase_add_loop_test(tc, engine_is_the_tableau, 0, (int)count);
    suite_add_tcase(s, tc);
    return s;
}

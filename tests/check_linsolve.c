/* The linear solvers and preconditioners (tstep/linsolve.h), each against
 * a dense solution computed here by LAPACK (dposv: Cholesky, dgesv: LU) on
 * the matrix built column by column from the system's own products:
 *   - the assembled lower triangle is the product A e_j, column by column;
 *   - every solver / preconditioner solves (M - h^2 K - h D) x = b on a
 *     small pinned cloth to its tolerance, pinned entries exactly 0;
 *   - an indefinite A (compressed cloth) gets the exact solution, or the
 *     definiteness fix's, through the fallbacks;
 *   - every implicit stepper with each gives the same state to the Newton
 *     tolerance;
 *   - block-Jacobi and IC(0) take fewer CG iterations than Jacobi;
 *   - the multigrid cycle is a symmetric positive definite operator, its CG
 *     iteration count does not grow with the grid (Jacobi's does), and a
 *     hierarchy kept from an earlier linearization still gives the exact
 *     solution of the current one, and a compressed cloth in its plane
 *     takes about the iterations of a stretched one;
 *   - the default solver follows the system's structure (its bandwidth
 *     checked against the triplets). */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_run.h"
#include "linear/precond_amg.h"
#include "tests.h"
#include "tstep/linsolve.h"
#include "tstep/springs.h"

/* the combinations under test: (solver, preconditioner) */
typedef struct {
    const ts_linsolve_type *solver;
    const ts_precond_type *precond;
} combo;

static const combo combos[] = {
    {&ts_linsolve_cg, &ts_precond_jacobi},
    {&ts_linsolve_cg, &ts_precond_block_jacobi},
    {&ts_linsolve_cg, &ts_precond_ic0},
    {&ts_linsolve_cg, &ts_precond_amg},
    {&ts_linsolve_direct, NULL},
};
#define NCOMBO (int)(sizeof combos / sizeof *combos)

static ts_solver_options combo_options(int i)
{
    ts_solver_options o = ts_default_solver_options();
    o.linear_solver = combos[i].solver;
    o.precond = combos[i].precond;
    return o;
}

/* A cloth of nx x nx particles, top corners pinned, positions scaled by
 * `scale` about the origin (> 1 stretches every spring: A positive
 * definite; < 1 compresses them), rotated by `angle` in its plane, and
 * velocities set so the damping blocks are not trivial. */
static ts_system *make_cloth(int nx, double scale, double angle)
{
    ts_params p;
    ts_params_init(&p, ts_cloth.params);
    char buf[64];
    snprintf(buf, sizeof buf, "nx=%d", nx);
    ck_assert_int_eq(ts_params_set_pair(&p, buf), TS_OK);
    snprintf(buf, sizeof buf, "ny=%d", nx);
    ck_assert_int_eq(ts_params_set_pair(&p, buf), TS_OK);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(&ts_cloth, &p, &sys), TS_OK);
    ck_assert_ptr_nonnull(sys->pinned);
    double c = cos(angle), s = sin(angle);
    for (size_t q = 0; q < sys->n; q += 3) {
        double *x = sys->x + q;
        double x0 = scale * x[0], y0 = scale * x[1];
        x[0] = c * x0 - s * y0;
        x[1] = s * x0 + c * y0;
        x[2] = scale * x[2] + 0.01 * sin(0.7 * (double)q);
    }
    for (size_t q = 0; q < sys->n; q++)
        sys->v[q] = sys->pinned[q] ? 0.0 : 0.3 * cos(0.3 * (double)q);
    return sys;
}

/* Dense A = M - J at the system's last linearization, column-major, from
 * products A e_j, pinned rows and columns the identity's. */
static double *dense_matrix(ts_system *sys)
{
    size_t n = sys->n;
    double *a = calloc(n * n, sizeof *a), *e = calloc(n, sizeof *e);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(e);
    for (size_t j = 0; j < n; j++) {
        double *col = a + j * n;
        if (sys->pinned[j]) {
            col[j] = 1.0;
            continue;
        }
        e[j] = 1.0;
        ck_assert_int_eq(ts_linsolve_matvec(sys, e, col), TS_OK);
        e[j] = 0.0;
        ts_system_filter(sys, col);
    }
    free(e);
    return a;
}

/* x = A^-1 b by LAPACK: Cholesky if A is positive definite (*spd = 1),
 * else LU with partial pivoting */
static void dense_solve(size_t n, const double *a, const double *b, double *x, int *spd)
{
    double *f = malloc(n * n * sizeof *f);
    lapack_int *piv = malloc(n * sizeof *piv);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(piv);
    memcpy(f, a, n * n * sizeof *f);
    memcpy(x, b, n * sizeof *x);
    lapack_int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', (lapack_int)n, 1, f, (lapack_int)n, x,
                                    (lapack_int)n);
    *spd = info == 0;
    if (info != 0) {
        memcpy(f, a, n * n * sizeof *f);
        memcpy(x, b, n * sizeof *x);
        info = LAPACKE_dgesv(LAPACK_COL_MAJOR, (lapack_int)n, 1, f, (lapack_int)n, piv, x,
                             (lapack_int)n);
        ck_assert_int_eq(info, 0);
    }
    free(f);
    free(piv);
}

static void fill_rhs(const ts_system *sys, double *b, double *start)
{
    for (size_t q = 0; q < sys->n; q++) {
        b[q] = sys->pinned[q] ? 0.0 : sin(0.37 * (double)q + 1.0);
        start[q] = 0.1 * cos(1.3 * (double)q); /* pinned entries too: must end at 0 */
    }
}

static double rel_error(size_t n, const double *x, const double *ref)
{
    return ts_vec_dist_inf(n, x, ref) / ts_vec_norm_inf(n, ref);
}

static const double H = 1.0 / 60.0;

START_TEST(test_assembly_is_the_product)
{
    ts_system *sys = make_cloth(6, 1.02, 0.3);
    size_t n = sys->n;
    ts_sparse *a;
    ck_assert_int_eq(ts_sparse_new(sys, &a), TS_OK);
    ck_assert_int_eq(ts_system_linearize(sys, 0.0, sys->x, sys->v, H * H, H), TS_OK);
    ck_assert_int_eq(ts_sparse_assemble(a, sys), TS_OK);
    double *dense = dense_matrix(sys), *e = calloc(n, sizeof *e), *col = calloc(n, sizeof *col);
    for (size_t j = 0; j < n; j++) {
        e[j] = 1.0;
        ts_sparse_mul(a, e, col);
        e[j] = 0.0;
        for (size_t i = 0; i < n; i++) {
            double want = dense[j * n + i];
            if (i / 3 != j / 3) /* one spring's block entry: the same number */
                ck_assert_msg(col[i] == want, "A(%zu,%zu) = %.17g, product %.17g", i, j, col[i],
                              want);
            else /* a particle's block: a sum over its springs, in another order */
                ck_assert_msg(fabs(col[i] - want) <= 1e-15 * fabs(dense[j * n + j]),
                              "A(%zu,%zu) = %.17g, product %.17g", i, j, col[i], want);
        }
    }
    /* only the lower triangle is stored, the diagonal first in each column */
    for (size_t j = 0; j < n; j++) {
        ck_assert_uint_eq(a->row[a->colp[j]], j);
        for (size_t p = a->colp[j] + 1; p < a->colp[j + 1]; p++)
            ck_assert_uint_gt(a->row[p], a->row[p - 1]);
    }
    free(dense);
    free(e);
    free(col);
    ts_sparse_free(a);
    ts_system_free(sys);
}
END_TEST

/* A spring network's matrix comes from its springs, not from triplets: the
 * same pattern (the diagonal and every triplet with neither end pinned) and
 * the same numbers, bit for bit, as summing the network's own triplets in
 * their order; with a duplicated spring, a pinned particle and one pinned
 * degree of freedom of another.  _i = 1: stored full, each column holding
 * the lower triangle's entries and their mirror images, rows ascending. */
START_TEST(test_assembly_from_springs)
{
    int full = _i;
    static const int edges[][2] = {{0, 1}, {1, 2}, {2, 3}, {0, 2}, {1, 3}, {3, 4}, {4, 5},
                                   {5, 6}, {6, 7}, {4, 6}, {5, 7}, {2, 5}, {2, 5}, {1, 6}};
    enum { NP = 8, NE = sizeof edges / sizeof *edges };
    ts_springs_options o = {.gravity = 9.81, .drag = 0.3, .clamp = TS_SPRINGS_CLAMP_NEVER};
    ts_springs *s;
    ck_assert_int_eq(ts_springs_new(&ts_string, NP, &o, &s), TS_OK);
    for (size_t q = 0; q < NP; q++) {
        s->base.x[3 * q] = 0.3 * (double)q;
        s->base.x[3 * q + 1] = 0.2 * sin(1.1 * (double)q);
        s->base.x[3 * q + 2] = 0.1 * cos(0.7 * (double)q);
        ts_springs_set_mass(s, q, 0.1 + 0.01 * (double)q);
    }
    for (int e = 0; e < NE; e++)
        ck_assert_int_eq(ts_springs_add(s, (size_t)edges[e][0], (size_t)edges[e][1],
                                        40.0 + (double)e, 0.5, e % 3),
                         TS_OK);
    ck_assert_int_eq(ts_springs_finish(s), TS_OK);
    ck_assert_int_eq(ts_springs_pin(s, 0), TS_OK);
    ts_system *sys = &s->base;
    sys->pinned[3 * 5 + 1] = 1;
    for (size_t q = 0; q < sys->n; q++) {
        sys->x[q] *= 1.0 + 0.05 * sin(1.3 * (double)q); /* stretched and compressed */
        sys->v[q] = sys->pinned[q] ? 0.0 : 0.2 * cos(0.9 * (double)q);
    }
    size_t n = sys->n, nt;
    ts_sparse *a;
    ck_assert_int_eq(ts_sparse_new_as(sys, full, &a), TS_OK);
    ck_assert_ptr_null(a->slot); /* no triplets kept */
    ck_assert_int_eq(a->full, full);
    ck_assert_int_eq(ts_system_linearize(sys, 0.0, sys->x, sys->v, H * H, H), TS_OK);
    ck_assert_int_eq(ts_sparse_assemble(a, sys), TS_OK);
    /* the oracle: the triplets, summed into a dense lower triangle */
    ck_assert_int_eq(sys->ops->jacobian_triplets(sys, &nt, NULL, NULL, NULL), TS_OK);
    size_t *tr = malloc(nt * sizeof *tr), *tc = malloc(nt * sizeof *tc);
    double *tv = malloc(nt * sizeof *tv), *want = calloc(n * n, sizeof *want);
    char *in = calloc(n * n, 1);
    ck_assert_int_eq(sys->ops->jacobian_triplets(sys, &nt, tr, tc, tv), TS_OK);
    for (size_t c = 0; c < n; c++) {
        want[c * n + c] = sys->pinned[c] ? 1.0 : sys->mass[c];
        in[c * n + c] = 1;
    }
    for (size_t k = 0; k < nt; k++)
        if (!sys->pinned[tr[k]] && !sys->pinned[tc[k]]) {
            want[tc[k] * n + tr[k]] -= tv[k];
            in[tc[k] * n + tr[k]] = 1;
        }
    size_t count = 0;
    for (size_t c = 0; c < n; c++) {
        size_t p = a->colp[c];
        for (size_t r = full ? 0 : c; r < n; r++) {
            size_t lo = r >= c ? c * n + r : r * n + c; /* (r, c) or its mirror (c, r) */
            if (!in[lo])
                continue;
            ck_assert_msg(p < a->colp[c + 1] && a->row[p] == r, "column %zu: row %zu missing",
                          c, r);
            ck_assert_msg(memcmp(&a->val[p], &want[lo], sizeof(double)) == 0,
                          "A(%zu,%zu) = %.17g, triplets %.17g", r, c, a->val[p], want[lo]);
            p++, count++;
        }
        ck_assert_uint_eq(p, a->colp[c + 1]); /* nothing else stored */
    }
    ck_assert_uint_eq(count, a->nnz);
    /* the product reads either storage: against the dense lower triangle */
    double *u = malloc(n * sizeof *u), *got = malloc(n * sizeof *got);
    for (size_t q = 0; q < n; q++)
        u[q] = cos(0.7 * (double)q);
    ts_sparse_mul(a, u, got);
    for (size_t r = 0; r < n; r++) {
        double sum = 0.0, mag = 0.0;
        for (size_t c = 0; c < n; c++) {
            double v = r >= c ? want[c * n + r] : want[r * n + c];
            sum += v * u[c], mag += fabs(v * u[c]);
        }
        ck_assert_msg(fabs(got[r] - sum) <= 1e-14 * mag, "(A u)_%zu = %.17g, dense %.17g", r,
                      got[r], sum);
    }
    free(u), free(got);
    free(tr), free(tc), free(tv), free(want), free(in);
    ts_sparse_free(a);
    ts_system_free(sys);
}
END_TEST

/* each combination solves a positive definite A to its tolerance */
START_TEST(test_solve_matches_dense)
{
    ts_system *sys = make_cloth(6, 1.02, 0.3);
    size_t n = sys->n;
    ts_solver_options o = combo_options(_i);
    ts_linsolve *ls;
    ck_assert_int_eq(ts_linsolve_new(sys, &o, &ls), TS_OK);
    ts_step_stats stats = {0};
    ts_linear_point at = {0.0, sys->x, sys->v, H * H, H};
    ck_assert_int_eq(ts_linsolve_setup(ls, sys, &at, &stats), TS_OK);
    double *a = dense_matrix(sys), *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x),
           *ref = malloc(n * sizeof *ref);
    int spd;
    fill_rhs(sys, b, x);
    dense_solve(n, a, b, ref, &spd);
    ck_assert_int_eq(spd, 1);
    double tol = 1e-12;
    ck_assert_int_eq(ts_linsolve_solve(ls, sys, b, x, tol, &stats), TS_OK);
    ck_assert(stats.linear_residual <= tol);
    ck_assert_int_ge(stats.linear_iters, 1);
    ck_assert(stats.setup_seconds > 0.0 && stats.solve_seconds > 0.0);
    for (size_t q = 0; q < n; q++)
        if (sys->pinned[q])
            ck_assert(x[q] == 0.0);
    /* error <= cond(A) * residual; direct: to 1e-10 */
    double err = rel_error(n, x, ref);
    ck_assert_msg(err <= (o.linear_solver == &ts_linsolve_direct ? 1e-10 : 1e-8),
                  "%s/%s: relative error %g", o.linear_solver->name,
                  o.precond ? o.precond->name : "-", err);
    free(a);
    free(b);
    free(x);
    free(ref);
    ts_linsolve_free(ls);
    ts_system_free(sys);
}
END_TEST

/* A compressed cloth at a large step makes A indefinite.  The driver's
 * answer is the exact solution (direct: L D L^T; cg: BiCGSTAB after CG
 * meets negative curvature) or, where BiCGSTAB fails, the solution with the
 * definiteness fix (clamped springs): both computed densely here. */
START_TEST(test_indefinite_falls_back)
{
    ts_system *sys = make_cloth(6, 0.9, 0.3);
    size_t n = sys->n;
    double h = 0.05;
    ts_solver_options o = combo_options(_i);
    ts_linsolve *ls;
    ck_assert_int_eq(ts_linsolve_new(sys, &o, &ls), TS_OK);
    ts_step_stats stats = {0};
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *ref = malloc(n * sizeof *ref),
           *clamped = malloc(n * sizeof *clamped);
    int spd;
    fill_rhs(sys, b, x);
    ck_assert(sys->has_definite_fix);
    sys->definite_fix = 1;
    ck_assert_int_eq(ts_system_linearize(sys, 0.0, sys->x, sys->v, h * h, h), TS_OK);
    double *a = dense_matrix(sys);
    sys->definite_fix = 0;
    dense_solve(n, a, b, clamped, &spd);
    ck_assert_int_eq(spd, 1);
    free(a);
    ts_linear_point at = {0.0, sys->x, sys->v, h * h, h};
    ck_assert_int_eq(ts_linsolve_setup(ls, sys, &at, &stats), TS_OK);
    a = dense_matrix(sys);
    dense_solve(n, a, b, ref, &spd);
    ck_assert_int_eq(spd, 0); /* the case under test */
    ck_assert_int_eq(ts_linsolve_solve(ls, sys, b, x, 1e-11, &stats), TS_OK);
    for (size_t q = 0; q < n; q++)
        if (sys->pinned[q])
            ck_assert(x[q] == 0.0);
    double err = rel_error(n, x, ref), errc = rel_error(n, x, clamped);
    if (o.linear_solver == &ts_linsolve_direct)
        ck_assert_msg(err <= 1e-8, "direct: relative error %g", err);
    else
        ck_assert_msg(fmin(err, errc) <= 1e-6, "%s/%s: relative error %g (clamped: %g)",
                      o.linear_solver->name, o.precond->name, err, errc);
    free(a);
    free(b);
    free(x);
    free(ref);
    free(clamped);
    ts_linsolve_free(ls);
    ts_system_free(sys);
}
END_TEST

/* Five steps of `type` from the same cloth state; y receives the state. */
static void run_steps(const ts_stepper_type *type, const ts_solver_options *o, double *y)
{
    ts_system *sys = make_cloth(6, 1.0, 0.0);
    ts_stepper *st;
    ck_assert_int_eq(ts_stepper_new(type, sys, o, &st), TS_OK);
    for (int k = 0; k < 5; k++)
        ck_assert_msg(ts_stepper_step(st, sys, k * H, H) == TS_OK, "%s: step %d: %s",
                      type->name, k, ts_error_detail());
    ts_system_get_y(sys, y);
    ts_stepper_free(st);
    ts_system_free(sys);
}

/* Every implicit stepper with each combination (loop index: stepper *
 * NCOMBO + combination) gives the state it gives with Jacobi-CG and tight
 * tolerances, to the Newton tolerance (a linearized stepper, whose one
 * solve is the step: to its fixed linear tolerance). */
START_TEST(test_implicit_steppers_same_state)
{
    const ts_stepper_type *type = ts_stepper_at((size_t)(_i / NCOMBO));
    if (!type || !(type->flags & TS_IMPLICIT))
        return;
    int linearized = (type->flags & TS_LINEARIZED) != 0;
    double newton_tol = 1e-8;
    ts_solver_options ref_opt = ts_default_solver_options(), o = combo_options(_i % NCOMBO);
    ref_opt.newton_tol = 1e-12;
    ref_opt.cg_tol = 1e-13;
    o.newton_tol = newton_tol;
    o.cg_tol = linearized ? 1e-12 : 0.0;
    size_t ny = 2 * 3 * 36;
    double *y = malloc(ny * sizeof *y), *yref = malloc(ny * sizeof *yref);
    run_steps(type, &ref_opt, yref);
    run_steps(type, &o, y);
    /* Newton's stop bounds each step's velocity error by about newton_tol
     * max(1, |v|): compare with the velocities' scale, five steps */
    double vscale = fmax(1.0, ts_vec_norm_inf(ny / 2, yref + ny / 2));
    double err = ts_vec_dist_inf(ny, y, yref);
    ck_assert_msg(err <= 5 * 10 * newton_tol * vscale, "%s with %s/%s: state differs by %g",
                  type->name, o.linear_solver->name, o.precond ? o.precond->name : "-", err);
    free(y);
    free(yref);
}
END_TEST

/* CG iterations to solve one system on a 20 x 20 cloth rotated in its
 * plane (on an axis-aligned grid the 3x3 diagonal blocks are diagonal and
 * block-Jacobi is Jacobi) */
/* CG iterations to solve (M - alpha df/dx - beta df/dv) x = b to 1e-8 on
 * `sys` (freed here) from x = 0 */
static int solve_iterations_for(ts_system *sys, const ts_precond_type *pc, double alpha,
                                double beta, const double *b)
{
    size_t n = sys->n;
    ts_solver_options o = ts_default_solver_options();
    o.precond = pc;
    ts_linsolve *ls;
    ck_assert_int_eq(ts_linsolve_new(sys, &o, &ls), TS_OK);
    ts_step_stats stats = {0};
    ts_linear_point at = {0.0, sys->x, sys->v, alpha, beta};
    ck_assert_int_eq(ts_linsolve_setup(ls, sys, &at, &stats),
                     TS_OK);
    double *x = calloc(n, sizeof *x);
    ck_assert_int_eq(ts_linsolve_solve(ls, sys, b, x, 1e-8, &stats), TS_OK);
    free(x);
    ts_linsolve_free(ls);
    ts_system_free(sys);
    return (int)stats.linear_iters;
}

/* the same for fill_rhs's b */
static int solve_iterations(ts_system *sys, const ts_precond_type *pc, double alpha,
                            double beta)
{
    size_t n = sys->n;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
    fill_rhs(sys, b, x);
    free(x);
    int it = solve_iterations_for(sys, pc, alpha, beta, b);
    free(b);
    return it;
}

static int cg_iterations_on(const ts_precond_type *pc, int nx)
{
    return solve_iterations(make_cloth(nx, 1.01, 0.5), pc, H * H, H);
}

static int cg_iterations(const ts_precond_type *pc)
{
    return cg_iterations_on(pc, 20);
}

START_TEST(test_fewer_iterations)
{
    int jac = cg_iterations(&ts_precond_jacobi);
    int blk = cg_iterations(&ts_precond_block_jacobi);
    int ic = cg_iterations(&ts_precond_ic0);
    ck_assert_msg(blk < jac, "block-jacobi %d iterations, jacobi %d", blk, jac);
    ck_assert_msg(ic < jac, "ic0 %d iterations, jacobi %d", ic, jac);
}
END_TEST

/* The linear solver with cg/amg, set up at the cloth's state. */
static ts_linsolve *amg_at_state(ts_system *sys)
{
    ts_solver_options o = ts_default_solver_options();
    o.precond = &ts_precond_amg;
    ts_linsolve *ls;
    ck_assert_int_eq(ts_linsolve_new(sys, &o, &ls), TS_OK);
    ts_step_stats stats = {0};
    ts_linear_point at = {0.0, sys->x, sys->v, H * H, H};
    ck_assert_int_eq(ts_linsolve_setup(ls, sys, &at, &stats), TS_OK);
    return ls;
}

/* the cycle B: y^T B z = z^T B y and z^T B z > 0 for filtered y, z (the
 * 24 x 24 cloth: 1728 unknowns, 3 levels, a V-cycle; the 48 x 48 one:
 * 6912 unknowns, 4 levels, the W-cycle's second coarse cycles) */
START_TEST(test_amg_symmetric)
{
    ts_system *sys = make_cloth(_i == 0 ? 24 : 48, 1.01, 0.5);
    size_t n = sys->n;
    ts_linsolve *ls = amg_at_state(sys);
    double *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z), *by = malloc(n * sizeof *by),
           *bz = malloc(n * sizeof *bz);
    for (int trial = 0; trial < 3; trial++) {
        for (size_t q = 0; q < n; q++) {
            y[q] = sin(0.9 * (double)q + trial) + (q % 7 == 0 ? 1.0 : 0.0);
            z[q] = cos(0.31 * (double)(q * q % 101) - trial);
        }
        ts_system_filter(sys, y);
        ts_system_filter(sys, z);
        ls->ptype->apply(ls->pstate, y, by);
        ls->ptype->apply(ls->pstate, z, bz);
        ts_system_filter(sys, by);
        ts_system_filter(sys, bz);
        double zby = ts_vec_dot(n, z, by), ybz = ts_vec_dot(n, y, bz);
        double scale = ts_vec_norm2(n, y) * ts_vec_norm2(n, bz);
        ck_assert_msg(fabs(zby - ybz) <= 1e-10 * scale, "z^T B y %.17g, y^T B z %.17g", zby,
                      ybz);
        ck_assert(ts_vec_dot(n, y, by) > 0.0 && ts_vec_dot(n, z, bz) > 0.0);
    }
    free(y);
    free(z);
    free(by);
    free(bz);
    ts_linsolve_free(ls);
    ts_system_free(sys);
}
END_TEST

/* the coarse levels' products leave exact zeros out: a cloth lying in a
 * plane has no couplings across it, so neither have its coarse levels;
 * the finest level is matrix-free and keeps its pattern */
START_TEST(test_amg_coarse_zeros_skipped)
{
    ts_system *sys = make_cloth(48, 1.01, 0.5);
    for (size_t q = 2; q < sys->n; q += 3)
        sys->x[q] = 0.0, sys->v[q] = 0.0; /* in the plane z = 0 */
    ts_linsolve *ls = amg_at_state(sys);
    for (int l = 1;; l++) {
        size_t pattern, nz = ts_amg_level_nonzeros(ls->pstate, l, &pattern);
        if (!pattern)
            break;
        /* the z unknowns couple only among themselves: at most 5/9 of a
         * 3 x 3 block pattern is nonzero */
        ck_assert_msg(nz > 0 && 9 * nz <= 5 * pattern + 9, "level %d: %zu of %zu entries", l, nz,
                      pattern);
    }
    size_t p0, nz0 = ts_amg_level_nonzeros(ls->pstate, 0, &p0);
    ck_assert(nz0 == p0 && p0 > 0);
    ts_linsolve_free(ls);
    ts_system_free(sys);
}
END_TEST

/* the multigrid of a spring network reads the finest level's rows from
 * its blocks: the driver assembles no matrix, and the hierarchy's
 * matrices and prolongators hold less than the finest matrix alone would
 * (39 entries a row at 12 bytes each: 468 bytes an unknown) */
START_TEST(test_amg_no_fine_matrix)
{
    ts_system *sys = make_cloth(48, 1.01, 0.5);
    ts_linsolve *ls = amg_at_state(sys);
    size_t part[3];
    ts_amg_bytes(ls->pstate, part);
    ck_assert(ls->A == NULL);
    /* 188 bytes an unknown (103 of them the levels, 8 of those level 0's
     * row pointers) */
    ck_assert_msg(part[0] + part[1] < 300 * sys->n,
                  "levels %zu and prolongators %zu bytes, %zu unknowns", part[0], part[1], sys->n);
    ts_linsolve_free(ls);
    ts_system_free(sys);
}
END_TEST

/* multigrid: iterations nearly independent of the grid, where Jacobi's grow */
START_TEST(test_amg_grid_independent)
{
    int a16 = cg_iterations_on(&ts_precond_amg, 16), a48 = cg_iterations_on(&ts_precond_amg, 48);
    int j16 = cg_iterations_on(&ts_precond_jacobi, 16),
        j48 = cg_iterations_on(&ts_precond_jacobi, 48);
    ck_assert_msg(j48 >= 2 * j16, "jacobi: %d iterations at 16^2, %d at 48^2", j16, j48);
    ck_assert_msg(a48 <= a16 + a16 / 2 + 2, "amg: %d iterations at 16^2, %d at 48^2", a16, a48);
    ck_assert_msg(4 * a48 <= j48, "amg %d iterations, jacobi %d at 48^2", a48, j48);
}
END_TEST

/* CG iterations on an nx x nx cloth lying in the x-y plane, its positions
 * scaled about the origin (scale < 1: springs compressed), at rest, for
 * an in-plane right-hand side; the scale goes from 1 at the
 * first row to `scale` at the last, so every degree of compression between
 * occurs.  In the plane the out-of-plane
 * unknowns decouple from the rest, and where springs are compressed their
 * negative transverse stiffness cancels most of the mass on A's diagonal
 * there: nothing of the in-plane solve. */
static int planar_iterations(const ts_precond_type *pc, int nx, double scale)
{
    ts_system *sys = make_cloth(nx, 1.0, 0.0);
    size_t n = sys->n;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
    fill_rhs(sys, b, x);
    free(x);
    for (size_t q = 0; q < n; q += 3) {
        double f = 1.0 + (scale - 1.0) * (double)q / (double)(n - 3);
        sys->x[q] *= f, sys->x[q + 1] *= f;
        sys->x[q + 2] = 0.0, b[q + 2] = 0.0;
    }
    ts_vec_zero(n, sys->v);
    int it = solve_iterations_for(sys, pc, H * H, H, b);
    free(b);
    return it;
}

/* multigrid on a compressed cloth in its plane needs about the iterations
 * of the stretched one (its smoother once took A's diagonal, near 0 out of
 * the plane there, and smoothed little in it: 21 iterations against 10) */
START_TEST(test_amg_compressed_plane)
{
    int stretched = planar_iterations(&ts_precond_amg, 40, 1.01);
    int compressed = planar_iterations(&ts_precond_amg, 40, 0.99);
    ck_assert_msg(2 * compressed <= 3 * stretched, "amg: %d iterations stretched, %d compressed",
                  stretched, compressed);
}
END_TEST

/* flat cloth, springs without stiffness: A is M plus damping, well conditioned, and
 * Jacobi needs a few iterations; multigrid must need at most half as many
 * (its smoother's eigenvalue bound once fell short on such a clustered
 * spectrum, and the cycle then amplified the error; with the smoothed range
 * [lmax / 30, lmax] alone, not raised to the smallest Ritz value, it took
 * 9 iterations with degree 3 and 13 with degree 2, Jacobi 12) */
static int soft_cloth_iterations(const ts_precond_type *pc)
{
    ts_params p;
    ts_params_init(&p, ts_cloth.params);
    static const char *const soft[] = {"nx=30", "ny=30", "k_struct=0", "k_shear=0", "k_flex=0"};
    for (size_t i = 0; i < sizeof soft / sizeof *soft; i++)
        ck_assert_int_eq(ts_params_set_pair(&p, soft[i]), TS_OK);
    ts_system *sys;
    ck_assert_int_eq(ts_system_new(&ts_cloth, &p, &sys), TS_OK); /* flat, hanging */
    for (size_t q = 0; q < sys->n; q++)
        sys->v[q] = sys->pinned[q] ? 0.0 : 0.3 * cos(0.3 * (double)q);
    return solve_iterations(sys, pc, 0.25e-4, 0.005); /* Crank-Nicolson's, h = 0.01 */
}

START_TEST(test_amg_mass_dominated)
{
    int a = soft_cloth_iterations(&ts_precond_amg), j = soft_cloth_iterations(&ts_precond_jacobi);
    ck_assert_msg(2 * a <= j, "amg %d iterations, jacobi %d", a, j);
}
END_TEST

/* a hierarchy kept across linearizations: the solve is still exact */
START_TEST(test_amg_reuse_exact)
{
    ts_system *sys = make_cloth(16, 1.01, 0.5);
    size_t n = sys->n;
    ts_solver_options o = ts_default_solver_options();
    o.precond = &ts_precond_amg;
    ts_linsolve *ls;
    ck_assert_int_eq(ts_linsolve_new(sys, &o, &ls), TS_OK);
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *ref = malloc(n * sizeof *ref);
    double *x2 = malloc(n * sizeof *x2);
    for (int round = 0; round < 3; round++) {
        /* stretch the cloth a little more each round: a new A */
        for (size_t q = 0; q < n; q++)
            x2[q] = sys->x[q] * (1.0 + 0.02 * round);
        ts_step_stats stats = {0};
        ts_linear_point at = {0.0, x2, sys->v, H * H, H};
        ck_assert_int_eq(ts_linsolve_setup(ls, sys, &at, &stats), TS_OK);
        double *a = dense_matrix(sys);
        int spd;
        fill_rhs(sys, b, x);
        dense_solve(n, a, b, ref, &spd);
        ck_assert_int_eq(ts_linsolve_solve(ls, sys, b, x, 1e-11, &stats), TS_OK);
        double err = rel_error(n, x, ref);
        ck_assert_msg(err <= 1e-8, "round %d: relative error %g", round, err);
        free(a);
    }
    free(b);
    free(x);
    free(x2);
    free(ref);
    ts_linsolve_free(ls);
    ts_system_free(sys);
}
END_TEST

/* The cycle's coarse products with AVX2's gathers (where the processor has
 * them) and with the plain loop: the same bits, on a hierarchy whose rows
 * have every length mod 4.  On a processor without AVX2 both are the
 * plain loop. */
START_TEST(test_amg_gathers_same_bits)
{
    ts_system *sys = make_cloth(30, 1.01, 0.5);
    size_t n = sys->n;
    double *r = malloc(n * sizeof *r), *z[2];
    for (size_t q = 0; q < n; q++)
        r[q] = sin(0.3 * (double)q) + (q % 7 == 0 ? 0.25 : 0.0);
    ts_system_filter(sys, r);
    ts_linsolve *ls = amg_at_state(sys);
    size_t pattern;
    ck_assert_uint_gt(ts_amg_level_nonzeros(ls->pstate, 1, &pattern), 0);
    for (int simd = 0; simd < 2; simd++) {
        ts_amg_csr_simd(simd);
        z[simd] = malloc(n * sizeof **z);
        ls->ptype->apply(ls->pstate, r, z[simd]);
    }
    ts_amg_csr_simd(-1);
    for (size_t q = 0; q < n; q++)
        ck_assert_msg(memcmp(&z[0][q], &z[1][q], sizeof(double)) == 0,
                      "entry %zu: %.17g with the gathers, %.17g with the plain loop", q, z[1][q],
                      z[0][q]);
    free(z[0]), free(z[1]), free(r);
    ts_linsolve_free(ls);
    ts_system_free(sys);
}
END_TEST

/* The set-up's row sweeps (diagonals, the strength lists, bounds, the
 * prolongator's smoothing, the patterns, the Galerkin sums, the single-
 * precision copies) run in chunks of rows, one a thread, and so does the
 * restriction P^T r (its plan: the columns one chunk of rows alone
 * reaches, then the shared ones): the cycle gives the same bits with 1, 2
 * and 3 threads, after the first setup and after a rebuild on the kept
 * patterns (ts_threads_set_min(1): chunks even on this small cloth's
 * levels), as the serial passes (th = 0: one thread and the default
 * minimum, under which this cloth's levels have no chunks and no plan).
 * On the cloth in its plane (_i = 1) the coarse levels' couplings across
 * the plane are exact zeros, which the single-precision copies leave out,
 * each chunk's entries then moving down after the chunks before it. */
START_TEST(test_amg_same_bits_any_threads)
{
    ts_system *sys = make_cloth(24, 1.01, 0.5);
    size_t n = sys->n;
    for (size_t q = 2; _i == 1 && q < n; q += 3)
        sys->x[q] = 0.0, sys->v[q] = 0.0;
    double *x2 = malloc(n * sizeof *x2), *r = malloc(n * sizeof *r), *z[4][2];
    for (size_t q = 0; q < n; q++)
        r[q] = sin(0.7 * (double)q) + (q % 5 == 0 ? 0.5 : 0.0);
    ts_system_filter(sys, r);
    for (int th = 0; th <= 3; th++) {
        ts_threads_set_min(th ? 1 : TS_PAR_MIN);
        ck_assert_int_eq(ts_threads_set(th ? th : 1), TS_OK);
        ts_solver_options o = ts_default_solver_options();
        o.precond = &ts_precond_amg;
        ts_linsolve *ls;
        ck_assert_int_eq(ts_linsolve_new(sys, &o, &ls), TS_OK);
        for (int round = 0; round < 2; round++) { /* a new alpha: a rebuild */
            for (size_t q = 0; q < n; q++)
                x2[q] = sys->x[q] * (1.0 + 0.02 * round);
            ts_step_stats stats = {0};
            ts_linear_point at = {0.0, x2, sys->v, H * H * (1.0 + round), H};
            ck_assert_int_eq(ts_linsolve_setup(ls, sys, &at, &stats), TS_OK);
            z[th][round] = malloc(n * sizeof **z);
            ls->ptype->apply(ls->pstate, r, z[th][round]);
        }
        ts_linsolve_free(ls);
    }
    ts_threads_set_min(TS_PAR_MIN);
    ts_threads_set(1);
    for (int th = 1; th <= 3; th++)
        for (int round = 0; round < 2; round++) {
            ck_assert_msg(memcmp(z[0][round], z[th][round], n * sizeof(double)) == 0,
                          "setup %d differs with %d threads from the serial passes", round, th);
            free(z[th][round]);
        }
    free(z[0][0]), free(z[0][1]), free(x2), free(r);
    ts_system_free(sys);
}
END_TEST

START_TEST(test_cli_names)
{
    static char out[16384], err[4096];
    ck_assert_int_eq(cli_run("list", out, sizeof out, err, sizeof err), 0);
    for (int i = 0; ts_precond_registry[i]; i++)
        ck_assert_ptr_nonnull(strstr(out, ts_precond_registry[i]->name));
    for (int i = 0; ts_linsolve_registry[i]; i++)
        ck_assert_ptr_nonnull(strstr(out, ts_linsolve_registry[i]->name));
    ck_assert_ptr_nonnull(strstr(out, "Default solver, when neither option is given: direct"));
    ck_assert_int_eq(cli_run("list --format json", out, sizeof out, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"default_solver\": \"direct for a spring network"));
    EXPECT("run --system cloth --stepper backward-euler --dt 0.01 --steps 1 --precond bogus", 2,
           "--precond: unknown preconditioner 'bogus'");
    EXPECT("run --system cloth --stepper backward-euler --dt 0.01 --steps 1 --linear-solver nope",
           2, "nope");
    EXPECT("run --system cloth --param nx=6 --param ny=6 --stepper backward-euler --dt 0.01 "
           "--steps 2 --linear-solver direct --stats",
           0, "linear solver direct (as given): setup");
    EXPECT("run --system string --stepper backward-euler --dt 0.01 --steps 2 --stats", 0,
           "linear solver direct (the default for a banded spring network)");
    EXPECT("run --system cloth --stepper backward-euler --dt 0.01 --steps 1 --stats", 0,
           "linear solver cg/amg (the default for a spring network of this size)");
}
END_TEST

/* A system from its type's name and parameters "key=value" (NULL-ended). */
static ts_system *system_of(const char *name, const char *const *pairs)
{
    const ts_system_type *type = ts_system_find(name);
    ck_assert_ptr_nonnull(type);
    ts_params p;
    ts_params_init(&p, type->params);
    for (; pairs && *pairs; pairs++)
        ck_assert_int_eq(ts_params_set_pair(&p, *pairs), TS_OK);
    ts_system *sys = NULL;
    ck_assert_int_eq(ts_system_new(type, &p, &sys), TS_OK);
    return sys;
}

/* The default solver by structure (ts_linsolve_choose): the bandwidth it
 * reads is the largest |row - column| of the system's own triplets, and
 * each rule picks what tstep/linsolve.h says; what the options name wins. */
START_TEST(test_default_by_structure)
{
    static const struct {
        const char *name;
        const char *pairs[3];
        int cg_tol;                /* 1: the options give a cg tolerance */
        const char *solver, *pre; /* expected; pre "" for none */
    } rows[] = {
        {"string", {NULL}, 0, "direct", ""},
        {"string", {"n=400", NULL}, 0, "direct", ""},
        {"string", {NULL}, 1, "cg", "jacobi"},
        {"hair", {NULL}, 0, "direct", ""},
        {"hair", {"n=500", "curl=2", NULL}, 0, "direct", ""},
        {"hair", {"n=500", NULL}, 1, "cg", "jacobi"},
        {"cloth", {"nx=19", "ny=19", NULL}, 0, "cg", "amg"},
        {"cloth", {"nx=18", "ny=18", NULL}, 0, "cg", "jacobi"},
        {"cloth", {"nx=40", "ny=30", NULL}, 1, "cg", "amg"},
        {"cloth", {"nx=5", "ny=40", NULL}, 0, "direct", ""}, /* 5 wide: banded */
        {"cloth", {"nx=6", "ny=6", NULL}, 0, "cg", "jacobi"},
        {"test1d", {NULL}, 0, "cg", "jacobi"},
        {"oscillator", {NULL}, 0, "cg", "jacobi"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        ts_system *sys = system_of(rows[r].name, rows[r].pairs);
        ts_springs *net = ts_springs_of(sys);
        if (net) { /* the bandwidth against the triplets' */
            size_t nt, band = 0;
            ck_assert_int_eq(sys->ops->jacobian_triplets(sys, &nt, NULL, NULL, NULL), TS_OK);
            size_t *ri = malloc(nt * sizeof *ri), *ci = malloc(nt * sizeof *ci);
            ck_assert_int_eq(sys->ops->jacobian_triplets(sys, &nt, ri, ci, NULL), TS_OK);
            for (size_t k = 0; k < nt; k++) {
                size_t d = ri[k] > ci[k] ? ri[k] - ci[k] : ci[k] - ri[k];
                if (d > band)
                    band = d;
            }
            ck_assert_uint_eq(ts_springs_bandwidth(net), band);
            free(ri), free(ci);
        }
        ts_solver_options o = ts_default_solver_options();
        if (rows[r].cg_tol)
            o.cg_tol = 1e-6;
        const ts_linsolve_type *t;
        const ts_precond_type *pc;
        const char *why;
        ts_linsolve_choose(sys, &o, &t, &pc, &why);
        ck_assert_msg(strcmp(t->name, rows[r].solver) == 0 &&
                          strcmp(pc ? pc->name : "", rows[r].pre) == 0,
                      "row %zu (%s): %s/%s (%s), want %s/%s", r, rows[r].name, t->name,
                      pc ? pc->name : "", why, rows[r].solver, rows[r].pre);
        ck_assert_str_ne(why, "as given");
        /* named: a preconditioner alone means cg; a solver is taken as named */
        o.precond = &ts_precond_ic0;
        ts_linsolve_choose(sys, &o, &t, &pc, &why);
        ck_assert(t == &ts_linsolve_cg && pc == &ts_precond_ic0);
        ck_assert_str_eq(why, "as given");
        o.linear_solver = &ts_linsolve_direct;
        ts_linsolve_choose(sys, &o, &t, &pc, &why);
        ck_assert(t == &ts_linsolve_direct && pc == NULL);
        /* NULL options: the same rules as the defaults */
        ts_linsolve_choose(sys, NULL, &t, &pc, &why);
        if (!rows[r].cg_tol)
            ck_assert_str_eq(t->name, rows[r].solver);
        ts_system_free(sys);
    }
}
END_TEST

Suite *linsolve_suite(void)
{
    Suite *s = suite_create("linsolve");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_assembly_is_the_product);
    tcase_add_loop_test(tc, test_assembly_from_springs, 0, 2);
    tcase_add_loop_test(tc, test_solve_matches_dense, 0, NCOMBO);
    tcase_add_loop_test(tc, test_indefinite_falls_back, 0, NCOMBO);
    tcase_add_loop_test(tc, test_implicit_steppers_same_state, 0,
                        NCOMBO * (int)ts_stepper_count());
    tcase_add_test(tc, test_fewer_iterations);
    tcase_add_loop_test(tc, test_amg_symmetric, 0, 2);
    tcase_add_test(tc, test_amg_coarse_zeros_skipped);
    tcase_add_test(tc, test_amg_no_fine_matrix);
    tcase_add_test(tc, test_amg_grid_independent);
    tcase_add_test(tc, test_amg_reuse_exact);
    tcase_add_loop_test(tc, test_amg_same_bits_any_threads, 0, 2);
    tcase_add_test(tc, test_amg_gathers_same_bits);
    tcase_add_test(tc, test_amg_mass_dominated);
    tcase_add_test(tc, test_amg_compressed_plane);
    tcase_add_test(tc, test_cli_names);
    tcase_add_test(tc, test_default_by_structure);
    suite_add_tcase(s, tc);
    return s;
}

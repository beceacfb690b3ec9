/* make bench: tstep's backward-euler-linear against SUNDIALS ARKODE's backward
 * Euler on the same cloth (100^2, dt = 1/60), both with Jacobi-preconditioned
 * CG, both taking one Newton iteration per step.
 *
 * ARKODE (Reynolds, Gardner, Hindmarsh, Woodward, Sexton, Loffeld, "ARKODE:
 * a flexible IVP solver infrastructure for one-step methods", ACM TOMS
 * 2023; SUNDIALS 6.4 as Debian 12 ships it) integrates the first-order view
 * Y = [x; v], Y' = [v; M^-1 f(x, v)] (tstep's ts_system_deriv) with ARKStep,
 * a one-stage DIRK table c = A = b = 1 (backward Euler), a fixed step,
 * ARKStepSetLinear (one Newton iteration per step), the linear solver
 * SUNLinSol_PCG with a Jacobi preconditioner (the diagonal of I - gamma J)
 * and a Jacobian-times-vector built from the same cached 6-double spring
 * blocks tstep uses: J [dx; dv] = [dv; M^-1 (K dx + D dv)], K and D each
 * one cached product.  Note I - gamma J of the first-order view is not
 * symmetric; PCG is what the comparison asks for, and its iteration counts
 * are reported beside the times.
 *
 * tstep: backward-euler-linear (Baraff & Witkin 1998), one solve of
 * (M - h D - h^2 K) dv = h (f + h K v) per step by Jacobi-PCG, --cg-tol 1e-3.
 *
 * ARKODE's linear tolerance is set so that its PCG stops at a comparable
 * residual: relative tolerance rtol = 1e-3 on Y with a tiny atol, and
 * eplifac = 1 (ARKODE stops PCG at eplifac * 0.1 in its weighted norm).
 * The positions after STEPS steps are compared between the two.
 *
 * Figures (medians of REPS interleaved repeats of STEPS steps each from the
 * same initial state): ms per step for each, the ratio ARKODE / tstep
 * (goal >= 1.5), and ms per CG iteration for each.  build/bench/sundials.csv. */
#include <arkode/arkode_arkstep.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sunlinsol/sunlinsol_pcg.h>
#include <time.h>
#include "bench.h"
#include "tstep/linalg.h"
#include "tstep/springs.h"
#include "tstep/stepper.h"

#define REPS 5
#define STEPS 1
#define NX 100

#define CHECK(call)                                                                        \
    do {                                                                                   \
        int r_ = (call);                                                                   \
        if (r_ < 0) {                                                                      \
            fprintf(stderr, "bench_sundials: %s failed (%d)\n", #call, r_);                 \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

typedef struct {
    ts_system *sys;
    ts_springs *s;
    size_t n;
    double *xk, *xd; /* positions where K = df/dx and D = df/dv are linearized */
    double *diag;        /* Jacobi: diagonal of I - gamma J */
    double *tmp;
} problem;


/* Y' = F(t, Y): tstep's first-order view */
static int rhs(realtype t, N_Vector y, N_Vector ydot, void *ud)
{
    problem *p = ud;
    return ts_system_deriv(p->sys, t, N_VGetArrayPointer(y), N_VGetArrayPointer(ydot)) ? -1 : 0;
}

/* K = df/dx and D = df/dv (the fast path's symmetric blocks) at y: the
 * fast path keeps the point, so keep a copy of y's positions */
static int jt_setup(realtype t, N_Vector y, N_Vector fy, void *ud)
{
    problem *p = ud;
    const double *Y = N_VGetArrayPointer(y);
    (void)t, (void)fy;
    memcpy(p->xk, Y, p->n * sizeof(double));
    memcpy(p->xd, Y, p->n * sizeof(double));
    return 0;
}

/* Jv = [dv; M^-1 (K dx + D dv)], zero on pinned rows */
static int jt_times(N_Vector v, N_Vector Jv, realtype t, N_Vector y, N_Vector fy, void *ud,
                    N_Vector tmpv)
{
    problem *p = ud;
    ts_springs *s = p->s;
    size_t n = p->n;
    const double *V = N_VGetArrayPointer(v);
    double *J = N_VGetArrayPointer(Jv), *a = J + n, *m = p->sys->mass;
    const unsigned char *pin = p->sys->pinned;
    (void)s, (void)y, (void)fy, (void)tmpv;
    ts_system_linearize(p->sys, t, p->xk, NULL, 1.0, 0.0);
    ts_system_jacobian_mul(p->sys, V, a);
    ts_system_linearize(p->sys, t, p->xd, NULL, 0.0, 1.0);
    ts_system_jacobian_mul(p->sys, V + n, p->tmp);
    for (size_t i = 0; i < n; i++) {
        int fixed = pin && pin[i];
        J[i] = fixed ? 0.0 : V[n + i];
        a[i] = fixed ? 0.0 : (a[i] + p->tmp[i]) / m[i];
    }
    return 0;
}

/* Jacobi: diag(I - gamma J); J's diagonal lives in the v rows: M^-1 D_ii */
static int prec_setup(realtype t, N_Vector y, N_Vector fy, booleantype jok,
                      booleantype *jcur, realtype gamma, void *ud)
{
    problem *p = ud;
    size_t n = p->n;
    const double *Y = N_VGetArrayPointer(y);
    (void)fy, (void)jok;
    /* ARKODE may set up the preconditioner before its first jt_setup */
    memcpy(p->xd, Y, n * sizeof(double));
    ts_system_linearize(p->sys, t, p->xd, NULL, 0.0, 1.0);
    p->sys->ops->jacobian_diag(p->sys, p->tmp);
    for (size_t i = 0; i < n; i++) {
        p->diag[i] = 1.0;
        p->diag[n + i] = 1.0 - gamma * p->tmp[i] / p->sys->mass[i];
    }
    *jcur = 1;
    return 0;
}

static int prec_solve(realtype t, N_Vector y, N_Vector fy, N_Vector r, N_Vector z,
                      realtype gamma, realtype delta, int lr, void *ud)
{
    problem *p = ud;
    const double *R = N_VGetArrayPointer(r);
    double *Z = N_VGetArrayPointer(z);
    (void)t, (void)y, (void)fy, (void)gamma, (void)delta, (void)lr;
    for (size_t i = 0; i < 2 * p->n; i++)
        Z[i] = R[i] / p->diag[i];
    return 0;
}

static ts_system *cloth(void)
{
    ts_params p;
    ts_params_init(&p, ts_cloth.params);
    ts_params_set(&p, "nx", "100");
    ts_params_set(&p, "ny", "100");
    ts_system *sys;
    if (ts_system_new(&ts_cloth, &p, &sys)) {
        fprintf(stderr, "bench_sundials: %s\n", ts_error_detail());
        exit(1);
    }
    return sys;
}

/* ARKODE set up for backward Euler with the given linear solver */
static void *arkode_new(problem *P, N_Vector y, SUNLinearSolver ls, ARKodeButcherTable be,
                        double h, SUNContext ctx)
{
    void *ark = ARKStepCreate(NULL, rhs, 0.0, y, ctx);
    if (!ark)
        exit(1);
    CHECK(ARKStepSetTables(ark, 1, 0, be, NULL));
    CHECK(ARKStepSetUserData(ark, P));
    CHECK(ARKStepSetFixedStep(ark, h));
    CHECK(ARKStepSStolerances(ark, 1e-3, 1e-6));
    CHECK(ARKStepSetLinearSolver(ark, ls, NULL));
    CHECK(ARKStepSetJacTimes(ark, jt_setup, jt_times));
    CHECK(ARKStepSetPreconditioner(ark, prec_setup, prec_solve));
    CHECK(ARKStepSetEpsLin(ark, 1.0));
    CHECK(ARKStepSetLinear(ark, 1));
    CHECK(ARKStepSetMaxNumSteps(ark, 100000));
    CHECK(ARKStepSetMaxConvFails(ark, 1)); /* a fixed step cannot shrink: fail at once */
    return ark;
}

static long lin_fails; /* PCG solves that stopped short of their tolerance */

/* STEPS steps from y0; returns seconds per step, or -1 at a failed step */
static double arkode_run(void *ark, N_Vector y, const double *y0, size_t n, double h,
                         long *iters, int *failed_step)
{
    memcpy(N_VGetArrayPointer(y), y0, 2 * n * sizeof *y0);
    CHECK(ARKStepReset(ark, 0.0, y));
    long li0, li1, lf0, lf1;
    CHECK(ARKStepGetNumLinIters(ark, &li0));
    CHECK(ARKStepGetNumLinConvFails(ark, &lf0));
    realtype tret;
    double t0 = bench_now();
    for (int k = 0; k < STEPS; k++) {
        if (ARKStepEvolve(ark, (k + 1) * h, y, &tret, ARK_ONE_STEP) < 0) {
            *failed_step = k + 1;
            return -1.0;
        }
    }
    double t = (bench_now() - t0) / STEPS;
    CHECK(ARKStepGetNumLinIters(ark, &li1));
    CHECK(ARKStepGetNumLinConvFails(ark, &lf1));
    *iters = li1 - li0;
    lin_fails = lf1 - lf0;
    return t;
}

int main(void)
{
    const double h = 1.0 / 60.0;
    ts_threads_set(1);
    /* tstep */
    ts_system *ts_sys = cloth();
    size_t n = ts_sys->n;
    double *y0 = malloc(2 * n * sizeof *y0);
    ts_system_get_y(ts_sys, y0);
    ts_solver_options o = ts_default_solver_options();
    o.cg_tol = 1e-3;

    /* ARKODE on a second copy of the cloth */
    problem P = {.sys = cloth()};
    P.s = ts_springs_of(P.sys);
    P.n = n;
    P.xk = malloc(n * sizeof(double));
    P.xd = malloc(n * sizeof(double));
    P.diag = malloc(2 * n * sizeof(double));
    P.tmp = malloc(n * sizeof(double));
    SUNContext ctx;
    CHECK(SUNContext_Create(NULL, &ctx));
    N_Vector y = N_VNew_Serial((sunindextype)(2 * n), ctx);
    realtype c1 = 1.0, a1 = 1.0, b1 = 1.0;
    ARKodeButcherTable be = ARKodeButcherTable_Create(1, 1, 0, &c1, &a1, &b1, NULL);
    const char *solver = "PCG";
    /* at most 500 PCG iterations per solve: see the header on convergence */
    SUNLinearSolver ls = SUNLinSol_PCG(y, SUN_PREC_LEFT, 500, ctx);
    void *ark = arkode_new(&P, y, ls, be, h, ctx);
    long it_ark = 0, it_ts = 0;
    int failed = 0;
    double tt[REPS], ta[REPS];
    for (int r = 0; r < REPS; r++) {
        /* a new stepper each time: its solver warm-starts from its last solution */
        ts_stepper *st;
        if (ts_stepper_new(&ts_backward_euler_linear, ts_sys, &o, &st))
            return 1;
        ts_system_set_y(ts_sys, y0);
        double t0 = bench_now();
        for (int k = 0; k < STEPS; k++)
            if (ts_stepper_step(st, ts_sys, k * h, h)) {
                fprintf(stderr, "bench_sundials: tstep step failed: %s\n", ts_error_detail());
                return 1;
            }
        tt[r] = (bench_now() - t0) / STEPS;
        it_ts = st->total.linear_iters;
        ts_stepper_free(st);
        ta[r] = failed ? NAN : arkode_run(ark, y, y0, n, h, &it_ark, &failed);
    }
    double dmax = 0.0, xmax = 0.0;
    for (size_t i = 0; i < n; i++) {
        dmax = fmax(dmax, fabs(ts_sys->x[i] - N_VGetArrayPointer(y)[i]));
        xmax = fmax(xmax, fabs(ts_sys->x[i]));
    }
    double a = bench_median(tt, REPS), b = failed ? NAN : bench_median(ta, REPS);
    double ia = (double)it_ts / STEPS, ib = (double)it_ark / STEPS;
    if (system("mkdir -p build/bench") != 0)
        return 1;
    FILE *csv = fopen("build/bench/sundials.csv", "w");
    if (!csv)
        return 1;
    fprintf(csv, "figure,size,value,unit,baseline,ratio,goal\n");
    fprintf(csv, "BE-linear cg-tol 1e-3 vs ARKODE+%s,100^2,%.6g,ms/step,%.6g,%.4g,goal >= 1.5\n",
            solver, a * 1e3, b * 1e3, b / a);
    fprintf(csv, "  per linear iteration vs ARKODE,100^2,%.6g,ms/iter,%.6g,%.4g,%s\n",
            a * 1e3 / ia, b * 1e3 / ib, (b / ib) / (a / ia),
            failed ? "ARKODE PCG failed" : lin_fails ? "ARKODE PCG not converged" : "");
    fclose(csv);
    printf("backward Euler on the 100^2 cloth, dt 1/60, Jacobi preconditioner, 1 thread, %d "
           "steps:\n",
           STEPS);
    printf("  tstep backward-euler-linear, PCG  %8.3f ms/step  %7.1f iterations/step\n",
           a * 1e3, ia);
    printf("  ARKODE ARKStep, %-5s            %8.3f ms/step  %7.1f iterations/step\n", solver,
           b * 1e3, ib);
    printf("  ARKODE / tstep: %.3f per step (goal >= 1.5), %.3f per linear iteration\n", b / a,
           (b / ib) / (a / ia));
    if (failed)
        printf("  ARKODE with PCG failed at step %d: its Newton iteration did not converge\n"
               "  (PCG stopped at 500 iterations short of its tolerance: I - gamma J of the\n"
               "  first-order view is not symmetric, so CG does not apply); no ratio\n",
               failed);
    else if (lin_fails)
        printf("  ARKODE's PCG stopped short of its tolerance in %ld of its solves (at 500\n"
               "  iterations): I - gamma J of the first-order view is not symmetric\n",
               lin_fails);
    if (!failed)
        printf("  positions after %d steps differ by at most %.3g (max |x| %.3g)\n", STEPS,
               dmax, xmax);
    ARKodeButcherTable_Free(be);
    ARKStepFree(&ark);
    SUNLinSolFree(ls);
    N_VDestroy(y);
    SUNContext_Free(&ctx);
    ts_system_free(ts_sys);
    ts_system_free(P.sys);
    free(y0), free(P.xk), free(P.xd), free(P.diag), free(P.tmp);
    return 0;
}

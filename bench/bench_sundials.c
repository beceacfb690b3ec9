/* make bench: tstep's backward-euler-linear against SUNDIALS ARKODE's backward
 * Euler on the same cloth (100^2, dt = 1/60), one step from the cloth's
 * initial state, both solving the symmetric velocity system by
 * Jacobi-preconditioned CG to relative residual 1e-3.
 *
 * ARKODE (Reynolds, Gardner, Hindmarsh, Woodward, Sexton, Loffeld, "ARKODE:
 * a flexible IVP solver infrastructure for one-step methods", ACM TOMS
 * 2023; SUNDIALS 6.4 as Debian 12 ships it) integrates the first-order view
 * Y = [x; v], Y' = F(Y) = [v; M^-1 f(x, v)] (tstep's ts_system_deriv) with
 * ARKStep: a one-stage DIRK table c = A = b = 1 (backward Euler), a fixed
 * step h, ARKStepSetLinear (one Newton iteration per step, linearized at the
 * step's start with the trivial predictor), ARKStepSetDeduceImplicitRhs (the
 * step's end state is the stage Newton solved for, Baraff & Witkin's step;
 * by default ARKODE re-evaluates F at the stage and takes y0 + h F, whose v
 * differed from the stage's by up to 9.4 m/s here, where the step changes v
 * by at most 0.15: with one Newton iteration and a 1e-3 linear residual the
 * stage does not solve the nonlinear equation, and the stiff springs' force
 * at the stage shows it).  Its Newton system, gamma = h,
 *
 *     [ I          -g I         ] [dx]   [b1]
 *     [ -g M^-1 K   I - g M^-1 D ] [dv] = [b2],   K = df/dx, D = df/dv,
 *
 * is not symmetric, so SUNDIALS' PCG does not apply to it (it diverges).
 * A SUNDIALS user solves it with a custom SUNLinearSolver (the generic
 * SUNLinearSolver of the SUNDIALS 6 manual: gettype, setatimes,
 * setpreconditioner, setscalingvectors, initialize, setup, solve, numiters,
 * resnorm, lastflag, free), here "Schur-PCG": eliminate dx = b1 + g dv and
 * solve the Schur complement, the symmetric positive definite velocity
 * system (Baraff & Witkin 1998, eq. 18)
 *
 *     S dv = (M - g D - g^2 K) dv = M b2 + g K b1,
 *
 * with SUNDIALS' own SUNLinSol_PCG: its matrix-times-vector is M u minus
 * ts_system_jacobian_mul from the spring blocks g^2 K + g D cached by
 * ts_system_linearize (tstep's own product), its preconditioner Jacobi on
 * diag(S).  The linearization happens in ARKODE's preconditioner setup
 * (ARKStepSetPreconditioner's psetup, called through SUNLinSolSetup with
 * gamma); K b1 is one exact product (ts_system_dfdx_mul), as in tstep.
 * Pinned particles: F is zero there, so are b1 and b2 (checked), the rows
 * of J are zero and S's pinned rows and columns act as the identity.  The
 * block residual of [b1 + g dv; dv] is exactly [0; M^-1 (S-residual)].
 *
 * Tolerances.  ARKODE hands its iterative solver an absolute tolerance:
 * with ARKStepSetLinear the Newton correction's residual must satisfy
 *     |rwt * (b - A x)|_2 <= delta = eplifac * eRNrm * nrmfac,
 * eRNrm = 0.1 * nlscoef (ARKStepSetNonlinConvCoef), nrmfac = sqrt(2n)
 * (ARKStepSetLSNormFactor), rwt = ewt = 1 / (rtol |y| + atol) the error
 * weights, for a solver that takes scaling vectors (else delta / |rwt|_rms
 * on the plain 2-norm); SUNDIALS 6.4 arkLsSolve, arkStep_Nls.  Schur-PCG
 * keeps that convention exactly: since the block residual is
 * [0; M^-1 r_S], it runs SUNLinSol_PCG with scaling vector w = rwt_v / m
 * and the same delta.  To give PCG tstep's relative target, the driver sets
 * rtol = 0 (then w is uniform, 1 / (atol m), and the scaled relative
 * residual is the plain one tstep measures), nlscoef = 0.1, nrmfac =
 * sqrt(2n), and calibrates eplifac = 1e-3 |w b_S|_2 / (eRNrm nrmfac) from
 * the step's right-hand side b_S, recorded by an untimed first step (every
 * timed step starts from the same state, so the target is exactly
 * |r_S|_2 <= 1e-3 |b_S|_2, tstep's --cg-tol 1e-3).  Both PCGs then run the
 * same iteration from zero on the same matrix with the same stop: the
 * iteration counts agree and the states agree to round-off, printed.
 *
 * tstep: backward-euler-linear (Baraff & Witkin 1998), one solve of
 * (M - h D - h^2 K) dv = h (f + h K v) per step, --cg-tol 1e-3, with the
 * default Jacobi preconditioner, with ic0, and with amg when that
 * preconditioner is registered (looked up by name at run time).
 *
 * Debian 12's libsundials is compiled without optimization (see
 * fast_kernels below), so ARKODE runs twice: as shipped, and with the serial
 * vector's hot operations (SUNDIALS' N_Vector ops table, which a user may
 * fill) compiled at this file's -O2.  The goal is judged on the second.
 *
 * Figures (medians of REPS interleaved repeats of one step from the same
 * initial state, single thread): ms per step for each and the ratio ARKODE
 * / tstep (goal >= 1.5), CG iterations, ms per CG iteration.
 * build/bench/sundials.csv. */
#include <arkode/arkode_arkstep.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_linearsolver.h>
#include <sunlinsol/sunlinsol_pcg.h>
#include "bench.h"
#include "tstep/linalg.h"
#include "tstep/linsolve.h"
#include "tstep/springs.h"
#include "tstep/stepper.h"

#define REPS 15
#define NX 100
#define CG_TOL 1e-3
#define NLSCOEF 0.1
#define ATOL 1e-6

#define CHECK(call)                                                                        \
    do {                                                                                   \
        int r_ = (call);                                                                   \
        if (r_ < 0) {                                                                      \
            fprintf(stderr, "bench_sundials: %s failed (%d)\n", #call, r_);                 \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* The user data: the cloth, ARKODE's last linearization, the Jacobi diagonal. */
typedef struct {
    ts_system *sys;
    size_t n;
    double t, gamma; /* of the last setup */
    double *y;       /* 2n: the linearization point (a copy of ARKODE's) */
    double *diag;    /* n: diag(S) */
    double *tmp;     /* n */
} problem;

/* Y' = F(t, Y): tstep's first-order view */
static int rhs(realtype t, N_Vector y, N_Vector ydot, void *ud)
{
    problem *p = ud;
    return ts_system_deriv(p->sys, t, N_VGetArrayPointer(y), N_VGetArrayPointer(ydot)) ? -1 : 0;
}

/* ARKODE's preconditioner setup, here the whole linearization: cache the
 * spring blocks g^2 K + g D at y (tstep's fast path) and diag(S). */
static int psetup(realtype t, N_Vector y, N_Vector fy, booleantype jok, booleantype *jcur,
                  realtype gamma, void *ud)
{
    problem *p = ud;
    size_t n = p->n;
    (void)fy, (void)jok;
    memcpy(p->y, N_VGetArrayPointer(y), 2 * n * sizeof(double));
    p->t = t, p->gamma = gamma;
    if (ts_system_linearize(p->sys, t, p->y, p->y + n, gamma * gamma, gamma) ||
        p->sys->ops->jacobian_diag(p->sys, p->tmp))
        return -1;
    const unsigned char *pin = p->sys->pinned;
    for (size_t i = 0; i < n; i++) {
        double d = p->sys->mass[i] - p->tmp[i];
        p->diag[i] = pin && pin[i] ? 1.0 : d > 0.0 ? d : p->sys->mass[i];
    }
    *jcur = 1;
    return 0;
}

/* ARKODE's Jacobian-times-vector, J [u; w] = [w; M^-1 (K u + D w)] by the
 * exact products; used only to check Schur-PCG's answer against ARKODE's
 * own operator I - gamma J (untimed). */
static int jtimes(N_Vector v, N_Vector Jv, realtype t, N_Vector y, N_Vector fy, void *ud,
                  N_Vector tmpv)
{
    problem *p = ud;
    size_t n = p->n;
    const double *V = N_VGetArrayPointer(v), *Y = N_VGetArrayPointer(y);
    double *J = N_VGetArrayPointer(Jv), *a = J + n;
    const unsigned char *pin = p->sys->pinned;
    (void)fy, (void)tmpv;
    if (ts_system_dfdx_mul(p->sys, t, Y, Y + n, V, a) ||
        ts_system_dfdv_mul(p->sys, t, Y, Y + n, V + n, p->tmp))
        return -1;
    for (size_t i = 0; i < n; i++) {
        int fixed = pin && pin[i];
        J[i] = fixed ? 0.0 : V[n + i];
        a[i] = fixed ? 0.0 : (a[i] + p->tmp[i]) / p->sys->mass[i];
    }
    return 0;
}

/* --- Schur-PCG: a custom SUNLinearSolver -------------------------------- */

typedef struct {
    problem *P;
    SUNLinearSolver pcg; /* SUNLinSol_PCG on the n velocity unknowns */
    N_Vector bs, z, w;   /* n: S's right-hand side, its solution, PCG's scaling */
    N_Vector r2;         /* 2n: for the check */
    N_Vector s1;         /* ARKODE's residual weights rwt (NULL: none) */
    void *pdata, *adata;
    SUNPSetupFn pset;
    SUNATimesFn atimes;  /* I - gamma J, ARKODE's operator: the check only */
    int iters, check;
    long flag;
    double resnorm, bnorm; /* |w r_S|_2 and |w b_S|_2 of the last solve */
    double block_res;      /* the check: |rwt (b - (I - gamma J) x)|_2 */
} schur;

#define SCHUR(S) ((schur *)(S)->content)

static SUNLinearSolver_Type schur_gettype(SUNLinearSolver S)
{
    (void)S;
    return SUNLINEARSOLVER_ITERATIVE;
}

static SUNLinearSolver_ID schur_getid(SUNLinearSolver S)
{
    (void)S;
    return SUNLINEARSOLVER_CUSTOM;
}

static int schur_setatimes(SUNLinearSolver S, void *data, SUNATimesFn atimes)
{
    SCHUR(S)->adata = data, SCHUR(S)->atimes = atimes;
    return SUNLS_SUCCESS;
}

static int schur_setprec(SUNLinearSolver S, void *data, SUNPSetupFn pset, SUNPSolveFn psol)
{
    (void)psol; /* PCG's preconditioner below is Jacobi on S, not on I - gamma J */
    SCHUR(S)->pdata = data, SCHUR(S)->pset = pset;
    return SUNLS_SUCCESS;
}

static int schur_setscaling(SUNLinearSolver S, N_Vector s1, N_Vector s2)
{
    (void)s2; /* PCG scales the residual only */
    SCHUR(S)->s1 = s1;
    return SUNLS_SUCCESS;
}

static int schur_initialize(SUNLinearSolver S)
{
    return SUNLinSolInitialize(SCHUR(S)->pcg);
}

/* ARKODE's setup: the user's psetup linearizes (through ARKLS, with gamma) */
static int schur_setup(SUNLinearSolver S, SUNMatrix A)
{
    schur *c = SCHUR(S);
    (void)A;
    if (!c->pset)
        return SUNLS_PSET_FAIL_UNREC;
    int st = c->pset(c->pdata);
    c->flag = st == 0 ? SUNLS_SUCCESS : st < 0 ? SUNLS_PSET_FAIL_UNREC : SUNLS_PSET_FAIL_REC;
    return (int)c->flag;
}

/* S u = M u - (g^2 K + g D) u, pinned rows and columns the identity's */
static int schur_times(void *data, N_Vector v, N_Vector Sv)
{
    problem *p = data;
    const double *u = N_VGetArrayPointer(v);
    double *out = N_VGetArrayPointer(Sv);
    const unsigned char *pin = p->sys->pinned;
    if (ts_system_jacobian_mul(p->sys, u, out))
        return -1;
    for (size_t i = 0; i < p->n; i++)
        out[i] = pin && pin[i] ? u[i] : p->sys->mass[i] * u[i] - out[i];
    return 0;
}

static int schur_jacobi(void *data, N_Vector r, N_Vector z, realtype tol, int lr)
{
    problem *p = data;
    const double *R = N_VGetArrayPointer(r);
    double *Z = N_VGetArrayPointer(z);
    (void)tol, (void)lr;
    for (size_t i = 0; i < p->n; i++)
        Z[i] = R[i] / p->diag[i];
    return 0;
}

/* Solve (I - gamma J) x = b to |rwt (b - (I - gamma J) x)|_2 <= delta
 * (ARKODE starts from x = 0 and so does this solve). */
static int schur_solve(SUNLinearSolver S, SUNMatrix A, N_Vector x, N_Vector b, realtype delta)
{
    schur *c = SCHUR(S);
    problem *p = c->P;
    size_t n = p->n;
    double g = p->gamma, *X = N_VGetArrayPointer(x), *bs = N_VGetArrayPointer(c->bs);
    double *z = N_VGetArrayPointer(c->z), *w = N_VGetArrayPointer(c->w);
    const double *B = N_VGetArrayPointer(b), *rwt = c->s1 ? N_VGetArrayPointer(c->s1) : NULL;
    const double *m = p->sys->mass, *y = p->y;
    const unsigned char *pin = p->sys->pinned;
    (void)A;
    for (size_t i = 0; pin && i < n; i++)
        if (pin[i] && (B[i] != 0.0 || B[n + i] != 0.0))
            return (int)(c->flag = SUNLS_ILL_INPUT);
    /* b_S = M b2 + g K b1 */
    if (ts_system_dfdx_mul(p->sys, p->t, y, y + n, B, p->tmp))
        return (int)(c->flag = SUNLS_ATIMES_FAIL_UNREC);
    for (size_t i = 0; i < n; i++) {
        int fixed = pin && pin[i];
        bs[i] = fixed ? 0.0 : m[i] * B[n + i] + g * p->tmp[i];
        w[i] = (rwt ? rwt[n + i] : 1.0) / m[i];
    }
    N_VProd(c->bs, c->w, c->z);
    c->bnorm = sqrt(N_VDotProd(c->z, c->z));
    CHECK(SUNLinSolSetScalingVectors(c->pcg, c->w, NULL));
    CHECK(SUNLinSolSetZeroGuess(c->pcg, SUNTRUE));
    int st = SUNLinSolSolve(c->pcg, NULL, c->z, c->bs, delta);
    c->iters = SUNLinSolNumIters(c->pcg);
    c->resnorm = SUNLinSolResNorm(c->pcg);
    /* dx = b1 + g dv, dv = z */
    for (size_t i = 0; i < n; i++) {
        X[i] = B[i] + g * z[i];
        X[n + i] = z[i];
    }
    if (c->check && c->atimes) {
        double *r = N_VGetArrayPointer(c->r2);
        if (c->atimes(c->adata, x, c->r2))
            return (int)(c->flag = SUNLS_ATIMES_FAIL_UNREC);
        double sum = 0.0;
        for (size_t i = 0; i < 2 * n; i++) {
            double e = (B[i] - r[i]) * (rwt ? rwt[i] : 1.0);
            sum += e * e;
        }
        c->block_res = sqrt(sum);
    }
    return (int)(c->flag = st);
}

static int schur_numiters(SUNLinearSolver S)
{
    return SCHUR(S)->iters;
}

static realtype schur_resnorm(SUNLinearSolver S)
{
    return SCHUR(S)->resnorm;
}

static sunindextype schur_lastflag(SUNLinearSolver S)
{
    return (sunindextype)SCHUR(S)->flag;
}

static int schur_free(SUNLinearSolver S)
{
    schur *c = SCHUR(S);
    if (c) {
        SUNLinSolFree(c->pcg);
        N_VDestroy(c->bs), N_VDestroy(c->z), N_VDestroy(c->w), N_VDestroy(c->r2);
        free(c);
    }
    S->content = NULL;
    SUNLinSolFreeEmpty(S);
    return SUNLS_SUCCESS;
}

/* Schur-PCG for P; fast: the vectors get the kernels of fast_kernels below */
static void fast_kernels(N_Vector v);

static SUNLinearSolver schur_new(problem *P, int fast, SUNContext ctx)
{
    SUNLinearSolver S = SUNLinSolNewEmpty(ctx);
    schur *c = calloc(1, sizeof *c);
    if (!S || !c)
        exit(1);
    S->content = c;
    S->ops->gettype = schur_gettype;
    S->ops->getid = schur_getid;
    S->ops->setatimes = schur_setatimes;
    S->ops->setpreconditioner = schur_setprec;
    S->ops->setscalingvectors = schur_setscaling;
    S->ops->initialize = schur_initialize;
    S->ops->setup = schur_setup;
    S->ops->solve = schur_solve;
    S->ops->numiters = schur_numiters;
    S->ops->resnorm = schur_resnorm;
    S->ops->lastflag = schur_lastflag;
    S->ops->free = schur_free;
    c->P = P;
    sunindextype n = (sunindextype)P->n;
    c->bs = N_VNew_Serial(n, ctx), c->z = N_VNew_Serial(n, ctx), c->w = N_VNew_Serial(n, ctx);
    c->r2 = N_VNew_Serial(2 * n, ctx);
    if (!c->bs || !c->z || !c->w || !c->r2)
        exit(1);
    if (fast)
        fast_kernels(c->bs), fast_kernels(c->z), fast_kernels(c->w), fast_kernels(c->r2);
    /* at most 2n + 20 iterations, tstep's default cap; PCG clones c->z */
    c->pcg = SUNLinSol_PCG(c->z, SUN_PREC_LEFT, (int)(2 * n + 20), ctx);
    if (!c->pcg)
        exit(1);
    CHECK(SUNLinSolSetATimes(c->pcg, P, schur_times));
    CHECK(SUNLinSolSetPreconditioner(c->pcg, P, NULL, schur_jacobi));
    return S;
}

/* --- optimized serial vector kernels --------------------------------------- */

/* Debian 12's libsundials is built without optimization (its N_VDotProd_Serial
 * keeps the running sum on the stack: -O0 code), which makes SUNDIALS' PCG
 * about three times slower per iteration than the same algorithm compiled
 * with -O2.  SUNDIALS' vectors are an ops table a user may fill: these are
 * the serial vector's hot operations compiled with this file's flags, put
 * into the table of the vectors ARKODE and PCG clone theirs from.  (The
 * length is read once: a store through Z may alias the vector's length.) */
#define FK_N(v) NV_LENGTH_S(v)
#define FK_D(v) NV_DATA_S(v)

static void fk_linearsum(realtype a, N_Vector x, realtype b, N_Vector y, N_Vector z)
{
    const double *X = FK_D(x), *Y = FK_D(y);
    double *Z = FK_D(z);
    for (sunindextype i = 0, n = FK_N(z); i < n; i++)
        Z[i] = a * X[i] + b * Y[i];
}

static void fk_const(realtype c, N_Vector z)
{
    double *Z = FK_D(z);
    for (sunindextype i = 0, n = FK_N(z); i < n; i++)
        Z[i] = c;
}

static void fk_prod(N_Vector x, N_Vector y, N_Vector z)
{
    const double *X = FK_D(x), *Y = FK_D(y);
    double *Z = FK_D(z);
    for (sunindextype i = 0, n = FK_N(z); i < n; i++)
        Z[i] = X[i] * Y[i];
}

static void fk_scale(realtype c, N_Vector x, N_Vector z)
{
    const double *X = FK_D(x);
    double *Z = FK_D(z);
    for (sunindextype i = 0, n = FK_N(z); i < n; i++)
        Z[i] = c * X[i];
}

static realtype fk_dotprod(N_Vector x, N_Vector y)
{
    const double *X = FK_D(x), *Y = FK_D(y);
    double sum = 0.0;
    for (sunindextype i = 0, n = FK_N(x); i < n; i++)
        sum += X[i] * Y[i];
    return sum;
}

static realtype fk_wrmsnorm(N_Vector x, N_Vector w)
{
    const double *X = FK_D(x), *W = FK_D(w);
    double sum = 0.0;
    for (sunindextype i = 0, n = FK_N(x); i < n; i++)
        sum += X[i] * W[i] * X[i] * W[i];
    return sqrt(sum / (double)FK_N(x));
}

static void fast_kernels(N_Vector v)
{
    v->ops->nvlinearsum = fk_linearsum;
    v->ops->nvconst = fk_const;
    v->ops->nvprod = fk_prod;
    v->ops->nvscale = fk_scale;
    v->ops->nvdotprod = fk_dotprod;
    v->ops->nvwrmsnorm = fk_wrmsnorm;
}

/* --- the drivers ---------------------------------------------------------- */

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

/* One ARKODE backward-Euler integrator with Schur-PCG on its own cloth */
typedef struct {
    problem P;
    N_Vector y;
    SUNLinearSolver ls;
    schur *sc;
    void *ark;
    double eplifac, rel, block_rel; /* calibrated eplifac; the check's residuals */
    long iters;                    /* CG iterations of the last step */
} ark_run;

static void ark_run_new(ark_run *A, ARKodeButcherTable be, double h, int fast, SUNContext ctx)
{
    problem *P = &A->P;
    P->sys = cloth();
    P->n = P->sys->n;
    size_t n = P->n;
    P->y = malloc(2 * n * sizeof(double));
    P->diag = malloc(n * sizeof(double));
    P->tmp = malloc(n * sizeof(double));
    A->y = N_VNew_Serial((sunindextype)(2 * n), ctx);
    if (!P->y || !P->diag || !P->tmp || !A->y)
        exit(1);
    if (fast)
        fast_kernels(A->y); /* ARKODE clones its vectors from y */
    A->ls = schur_new(P, fast, ctx);
    A->sc = SCHUR(A->ls);
    void *ark = ARKStepCreate(NULL, rhs, 0.0, A->y, ctx);
    if (!ark)
        exit(1);
    CHECK(ARKStepSetTables(ark, 1, 0, be, NULL));
    CHECK(ARKStepSetUserData(ark, P));
    CHECK(ARKStepSetFixedStep(ark, h));
    CHECK(ARKStepSStolerances(ark, 0.0, ATOL)); /* uniform weights: see the header */
    CHECK(ARKStepSetLinearSolver(ark, A->ls, NULL));
    CHECK(ARKStepSetJacTimes(ark, NULL, jtimes));
    CHECK(ARKStepSetPreconditioner(ark, psetup, NULL));
    CHECK(ARKStepSetLinear(ark, 1));
    CHECK(ARKStepSetDeduceImplicitRhs(ark, SUNTRUE)); /* y1 = the stage: see the header */
    CHECK(ARKStepSetNonlinConvCoef(ark, NLSCOEF));
    CHECK(ARKStepSetLSNormFactor(ark, sqrt(2.0 * (double)n)));
    CHECK(ARKStepSetMaxNumSteps(ark, 100000));
    CHECK(ARKStepSetMaxConvFails(ark, 1)); /* a fixed step cannot shrink: fail at once */
    A->ark = ark;
}

static void ark_run_free(ark_run *A)
{
    ARKStepFree(&A->ark);
    SUNLinSolFree(A->ls);
    N_VDestroy(A->y);
    ts_system_free(A->P.sys);
    free(A->P.y), free(A->P.diag), free(A->P.tmp);
}

/* One step from y0; seconds.  A->iters: its CG iterations */
static double ark_step(ark_run *A, const double *y0, double h)
{
    size_t n = A->P.n;
    memcpy(N_VGetArrayPointer(A->y), y0, 2 * n * sizeof *y0);
    CHECK(ARKStepReset(A->ark, 0.0, A->y));
    long li0, li1, lf0, lf1;
    CHECK(ARKStepGetNumLinIters(A->ark, &li0));
    CHECK(ARKStepGetNumLinConvFails(A->ark, &lf0));
    realtype tret;
    double t0 = bench_now();
    if (ARKStepEvolve(A->ark, h, A->y, &tret, ARK_ONE_STEP) < 0) {
        fprintf(stderr, "bench_sundials: the ARKODE step failed\n");
        exit(1);
    }
    double t = bench_now() - t0;
    CHECK(ARKStepGetNumLinIters(A->ark, &li1));
    CHECK(ARKStepGetNumLinConvFails(A->ark, &lf1));
    A->iters = li1 - li0;
    if (lf1 != lf0) {
        fprintf(stderr, "bench_sundials: ARKODE's linear solve failed\n");
        exit(1);
    }
    return t;
}

/* Calibration and check (untimed): the first step records |w b_S|_2, and
 * eplifac makes ARKODE's delta exactly CG_TOL |w b_S|_2 (see the header);
 * the second checks Schur-PCG's answer against ARKODE's own I - gamma J. */
static void ark_calibrate(ark_run *A, const double *y0, double h)
{
    schur *sc = A->sc;
    sc->check = 1;
    ark_step(A, y0, h);
    A->eplifac = CG_TOL * sc->bnorm / (0.1 * NLSCOEF * sqrt(2.0 * (double)A->P.n));
    CHECK(ARKStepSetEpsLin(A->ark, A->eplifac));
    ark_step(A, y0, h);
    A->rel = sc->resnorm / sc->bnorm, A->block_rel = sc->block_res / sc->bnorm;
    sc->check = 0;
    if (!(A->rel <= CG_TOL)) {
        fprintf(stderr, "bench_sundials: ARKODE's Schur-PCG missed its tolerance (%g)\n",
                A->rel);
        exit(1);
    }
}

/* One tstep step from y0 with `st`, reset first (no warm start: a cold
 * start, as in a new stepper) but keeping its linear solver's setup, as in
 * a run: amg's hierarchy is then built once; seconds */
static double tstep_step_kept(ts_stepper *st, ts_system *sys, const double *y0, double h,
                              ts_step_stats *last)
{
    ts_stepper_reset(st);
    ts_system_set_y(sys, y0);
    double t0 = bench_now();
    if (ts_stepper_step(st, sys, 0.0, h)) {
        fprintf(stderr, "bench_sundials: tstep step failed: %s\n", ts_error_detail());
        exit(1);
    }
    double t = bench_now() - t0;
    *last = st->last;
    return t;
}

/* One tstep step from y0 with a new stepper (every setup in the step); seconds */
static double tstep_step(ts_system *sys, const ts_solver_options *o, const double *y0,
                         double h, ts_step_stats *last)
{
    ts_stepper *st;
    if (ts_stepper_new(bench_stepper("backward-euler-linear"), sys, o, &st)) {
        fprintf(stderr, "bench_sundials: %s\n", ts_error_detail());
        exit(1);
    }
    double t = tstep_step_kept(st, sys, y0, h, last);
    ts_stepper_free(st);
    return t;
}

#define MAXV 4 /* tstep variants: jacobi, ic0, amg, amg with its hierarchy kept */

int main(void)
{
    const double h = 1.0 / 60.0;
    ts_threads_set(1);
    ts_system *ts_sys = cloth();
    size_t n = ts_sys->n;
    double *y0 = malloc(2 * n * sizeof *y0), *yts = malloc(2 * n * sizeof *yts);
    ts_system_get_y(ts_sys, y0);

    /* tstep's variants: preconditioners by name, amg when registered */
    const char *names[MAXV] = {"jacobi", "ic0", "amg", "amg"};
    const char *labels[MAXV] = {"jacobi", "ic0", "amg", "amg kept"};
    ts_solver_options o[MAXV];
    const char *vname[MAXV];
    ts_stepper *kept[MAXV] = {NULL};
    int nv = 0;
    for (int k = 0; k < MAXV; k++) {
        const ts_precond_type *pt = ts_precond_find(names[k]);
        if (!pt)
            continue;
        o[nv] = ts_default_solver_options();
        o[nv].cg_tol = CG_TOL;
        o[nv].precond = pt;
        if (k == 3 && ts_stepper_new(bench_stepper("backward-euler-linear"), ts_sys, &o[nv], &kept[nv])) {
            fprintf(stderr, "bench_sundials: %s\n", ts_error_detail());
            return 1;
        }
        vname[nv++] = labels[k];
    }
    ts_step_stats warm;
    for (int k = 0; k < nv; k++) /* the kept stepper's setup, once, untimed */
        if (kept[k])
            tstep_step_kept(kept[k], ts_sys, y0, h, &warm);

    /* ARKODE: [0] as Debian ships it, [1] with -O2 vector kernels */
    SUNContext ctx;
    CHECK(SUNContext_Create(NULL, &ctx));
    realtype c1 = 1.0, a1 = 1.0, b1 = 1.0;
    ARKodeButcherTable be = ARKodeButcherTable_Create(1, 1, 0, &c1, &a1, &b1, NULL);
    ark_run A[2];
    const char *aname[2] = {"ARKODE (Debian build)", "ARKODE (-O2 vector kernels)"};
    for (int j = 0; j < 2; j++) {
        ark_run_new(&A[j], be, h, j, ctx);
        ark_calibrate(&A[j], y0, h);
    }

    double tt[MAXV][REPS], ta[2][REPS];
    ts_step_stats last[MAXV];
    for (int r = 0; r < REPS; r++) {
        for (int k = 0; k < nv; k++)
            tt[k][r] = kept[k] ? tstep_step_kept(kept[k], ts_sys, y0, h, &last[k])
                               : tstep_step(ts_sys, &o[k], y0, h, &last[k]);
        for (int j = 0; j < 2; j++)
            ta[j][r] = ark_step(&A[j], y0, h);
    }
    /* tstep-Jacobi's end state against the optimized ARKODE's (both from y0) */
    tstep_step(ts_sys, &o[0], y0, h, &last[0]);
    ts_system_get_y(ts_sys, yts);
    const double *ya = N_VGetArrayPointer(A[1].y);
    double dx = 0.0, dv = 0.0, xs = 0.0, vs = 0.0;
    for (size_t i = 0; i < n; i++) {
        dx = fmax(dx, fabs(yts[i] - ya[i])), xs = fmax(xs, fabs(yts[i] - y0[i]));
        dv = fmax(dv, fabs(yts[n + i] - ya[n + i])), vs = fmax(vs, fabs(yts[n + i] - y0[n + i]));
    }

    double a[MAXV], b[2];
    for (int k = 0; k < nv; k++)
        a[k] = bench_median(tt[k], REPS);
    for (int j = 0; j < 2; j++)
        b[j] = bench_median(ta[j], REPS);
    double ia = (double)last[0].linear_iters, ib = (double)A[1].iters;
    if (system("mkdir -p build/bench") != 0)
        return 1;
    FILE *csv = fopen("build/bench/sundials.csv", "w");
    if (!csv)
        return 1;
    fprintf(csv, "figure,size,value,unit,baseline,ratio,goal\n");
    for (int k = 0; k < nv; k++)
        fprintf(csv, "BE-linear %s speed-up vs ARKODE -O2,100^2,%.6g,ms/step,%.6g,%.4g,goal >= 1.5\n",
                vname[k], a[k] * 1e3, b[1] * 1e3, b[1] / a[k]);
    for (int k = 0; k < nv; k++)
        fprintf(csv, "BE-linear %s speed-up vs ARKODE Debian,100^2,%.6g,ms/step,%.6g,%.4g,\n",
                vname[k], a[k] * 1e3, b[0] * 1e3, b[0] / a[k]);
    for (int k = 0; k < nv; k++)
        fprintf(csv, "  CG iterations %s vs ARKODE,100^2,%ld,iters,%.0f,%.4g,\n", vname[k],
                last[k].linear_iters, ib, ib / (double)last[k].linear_iters);
    fprintf(csv, "  per CG iteration jacobi vs ARKODE -O2,100^2,%.6g,ms/iter,%.6g,%.4g,\n",
            a[0] * 1e3 / ia, b[1] * 1e3 / ib, (b[1] / ib) / (a[0] / ia));
    fclose(csv);

    printf("backward Euler, one step from rest, 100^2 cloth, dt 1/60, CG to relative residual "
           "%g,\n1 thread, medians of %d interleaved repeats:\n",
           CG_TOL, REPS);
    for (int k = 0; k < nv; k++)
        printf("  tstep backward-euler-linear, %-8s   %8.3f ms/step  %4ld CG iterations  "
               "(relative residual %.3g)\n",
               vname[k], a[k] * 1e3, last[k].linear_iters, last[k].linear_residual);
    for (int j = 0; j < 2; j++)
        printf("  %-28s        %8.3f ms/step  %4ld CG iterations  (relative residual %.3g)\n",
               aname[j], b[j] * 1e3, A[j].iters, A[j].rel);
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < nv; k++)
            printf("  %s / tstep %-8s %.3f per step%s\n", aname[j], vname[k], b[j] / a[k],
                   j ? " (goal >= 1.5)" : "");
    if (!ts_precond_find("amg"))
        printf("  (no amg preconditioner registered in this build)\n");
    printf("  %s / tstep jacobi per CG iteration: %.3f\n", aname[1],
           (b[1] / ib) / (a[0] / ia));
    printf("  check: eplifac %.4g makes ARKODE's PCG target %g |w b_S|_2; Schur-PCG's block\n"
           "  residual against ARKODE's own I - gamma J: %.3g |w b_S|_2 (its S residual %.3g)\n",
           A[1].eplifac, CG_TOL, A[1].block_rel, A[1].rel);
    printf("  end states, tstep jacobi vs ARKODE: max |dx| %.3g (step's max |x1 - x0| %.3g), "
           "max |dv| %.3g (max |v1 - v0| %.3g)\n",
           dx, xs, dv, vs);

    printf("  (amg kept: one stepper, reset before each step, its multigrid hierarchy built "
           "once before the timing, as in a run)\n");
    for (int k = 0; k < nv; k++)
        ts_stepper_free(kept[k]);
    for (int j = 0; j < 2; j++)
        ark_run_free(&A[j]);
    ARKodeButcherTable_Free(be);
    SUNContext_Free(&ctx);
    ts_system_free(ts_sys);
    free(y0), free(yts);
    return 0;
}

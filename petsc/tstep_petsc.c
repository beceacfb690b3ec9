/* tstep-petsc: any tstep system integrated by PETSc's TS.
 *
 * The system's first-order view Y' = F(t, Y) (Y = [x; v], F = [v; M^-1 f],
 * pinned degrees of freedom with zero derivative; tstep/system.h) is handed
 * to TS in one of the two forms TS knows (PETSc Users Manual, "TS: Scalable
 * ODE and DAE Solvers"):
 *   explicit types (euler, rk, ssp):  U' = G(t, U) through TSSetRHSFunction;
 *   every other type (beuler, cn, theta, bdf, arkimex, ...): the implicit
 *     form F(t, U, U') = U' - G(t, U) = 0 through TSSetIFunction, with the
 *     Jacobian dF/dU + a dF/dU' = a I - G'(U) as a MatShell whose product is
 *     built from the system's Jacobian products:
 *       G' [ux; uv] = [uv; M^-1 (df/dx ux + df/dv uv)]   (order 2)
 *       G' u        = M^-1 df/dx u                      (order 1)
 *     with pinned rows zero, so pinned entries stay where they are.
 * The shell also gives its diagonal (for -pc_type jacobi) where the system
 * offers the Jacobian's diagonal; otherwise the default preconditioner is
 * none.  Every PETSc option applies (-ts_type, -ts_dt, -ts_max_time,
 * -ts_adapt_type, -ksp_type, -pc_type, -ts_monitor, -snes_monitor,
 * -log_view); tstep's own options choose the system and the output, which
 * is tstep run's format (t, x.., v.., energy), so the gnuplot scripts draw it.
 *
 * The generic bridge runs on one MPI rank; with more, it says so and exits 2. */
#include <petscts.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/stepper.h"
#include "tstep/system.h"

typedef struct {
    ts_system *sys;
    size_t ny;
    double shift;       /* a of a I - G' */
    double t;           /* the linearization point */
    double *y, *work, *work2;
    int has_diag;
    FILE *out;
    int csv;
    PetscInt every;
    PetscInt last_step; /* the last step written */
    int failed;         /* a tstep status from a callback */
} bridge;

static const char usage[] =
    "Usage: tstep-petsc --system S [--param key=value]... [--out FILE]\n"
    "                   [--format dat|csv] [--every N] [PETSc options]\n"
    "\n"
    "Integrates a tstep system with PETSc's TS.  The system's first-order view\n"
    "Y' = F(t, Y) is the right-hand side; implicit TS types see the implicit\n"
    "form Y' - F(t, Y) = 0 with a matrix-free Jacobian from the system's\n"
    "Jacobian products (pinned entries held).\n"
    "\n"
    "tstep options:\n"
    "  --system S         the system (see tstep list)\n"
    "  --param key=value  a system parameter, repeatable\n"
    "  --out FILE         write the trajectory there (default: standard output)\n"
    "  --format dat|csv   tstep run's formats: t, x.., v.. (order 2), energy\n"
    "  --every N          write every N-th step (default 1; the last always)\n"
    "\n"
    "PETSc options (defaults here: -ts_type beuler -ts_dt 0.01 -ts_max_time 1,\n"
    "the final time matched by the last step):\n"
    "  -ts_type beuler|cn|theta|bdf|rk|euler|ssp|arkimex|...  (-ts_rk_type 4 ...)\n"
    "  -ts_dt H  -ts_max_time T  -ts_max_steps N  -ts_adapt_type none|basic\n"
    "  -snes_rtol, -snes_atol, -ksp_type, -ksp_rtol, -pc_type none|jacobi\n"
    "  -ts_monitor  -snes_monitor  -ksp_monitor  -log_view\n"
    "Implicit types: the Jacobian is matrix-free, so the default preconditioner is\n"
    "none and GMRES uses modified Gram-Schmidt (-pc_type jacobi where the system\n"
    "gives its Jacobian's diagonal).\n"
    "Runs on one MPI rank.  Exit status: 0 success, 1 the integration failed,\n"
    "2 usage error.\n";

/* --- the right-hand side and its Jacobian --------------------------------- */

static PetscErrorCode rhs(TS ts, PetscReal t, Vec U, Vec G, void *ctx)
{
    bridge *b = ctx;
    const PetscScalar *u;
    PetscScalar *g;
    (void)ts;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(U, &u));
    PetscCall(VecGetArray(G, &g));
    int s = ts_system_deriv(b->sys, t, u, g);
    PetscCall(VecRestoreArray(G, &g));
    PetscCall(VecRestoreArrayRead(U, &u));
    if (s) { /* e.g. a non-finite state: TS sees the failure and may retry */
        b->failed = s;
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_NOT_CONVERGED, "tstep: %s: %s",
                ts_status_message(s), ts_error_detail());
    }
    PetscFunctionReturn(0);
}

static PetscErrorCode ifunction(TS ts, PetscReal t, Vec U, Vec Udot, Vec F, void *ctx)
{
    PetscFunctionBeginUser;
    PetscCall(rhs(ts, t, U, F, ctx));
    PetscCall(VecAYPX(F, -1.0, Udot)); /* F = U' - G(t, U) */
    PetscFunctionReturn(0);
}

/* out = (alpha df/dx + beta df/dv) u at the stored linearization point */
static int jac_part(bridge *b, double alpha, double beta, const double *u, double *out)
{
    ts_system *sys = b->sys;
    const double *x = b->y, *v = sys->order == 2 ? b->y + sys->n : NULL;
    if (alpha != 0.0 && beta == 0.0 && sys->ops->dfdx_mul)
        return ts_system_dfdx_mul(sys, b->t, x, v, u, out);
    if (alpha == 0.0 && beta != 0.0 && sys->ops->dfdv_mul)
        return ts_system_dfdv_mul(sys, b->t, x, v, u, out);
    int s = ts_system_linearize(sys, b->t, x, v, alpha, beta);
    return s ? s : ts_system_jacobian_mul(sys, u, out);
}

/* out = a u - G'(Y) u */
static PetscErrorCode shell_mult(Mat A, Vec U, Vec Out)
{
    bridge *b;
    const PetscScalar *u;
    PetscScalar *o;
    PetscFunctionBeginUser;
    PetscCall(MatShellGetContext(A, &b));
    PetscCall(VecGetArrayRead(U, &u));
    PetscCall(VecGetArray(Out, &o));
    ts_system *sys = b->sys;
    size_t n = sys->n;
    int s;
    if (sys->order == 2) {
        /* acceleration part: M^-1 (df/dx ux + df/dv uv) */
        s = jac_part(b, 1.0, 0.0, u, b->work);
        if (!s)
            s = jac_part(b, 0.0, 1.0, u + n, b->work2);
        for (size_t i = 0; !s && i < n; i++) {
            int pin = sys->pinned && sys->pinned[i];
            double gx = pin ? 0.0 : u[n + i];
            double gv = pin ? 0.0 : (b->work[i] + b->work2[i]) / sys->mass[i];
            o[i] = b->shift * u[i] - gx;
            o[n + i] = b->shift * u[n + i] - gv;
        }
    } else {
        s = jac_part(b, 1.0, 0.0, u, b->work);
        for (size_t i = 0; !s && i < n; i++) {
            int pin = sys->pinned && sys->pinned[i];
            o[i] = b->shift * u[i] - (pin ? 0.0 : b->work[i] / sys->mass[i]);
        }
    }
    PetscCall(VecRestoreArray(Out, &o));
    PetscCall(VecRestoreArrayRead(U, &u));
    if (s) {
        b->failed = s;
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "tstep: %s: %s", ts_status_message(s),
                ts_error_detail());
    }
    PetscFunctionReturn(0);
}

/* diag(a I - G'): a on the positions; a - M^-1 diag(df/dv) on the velocities
 * (order 2), a - M^-1 diag(df/dx) (order 1); pinned entries a. */
static PetscErrorCode shell_diagonal(Mat A, Vec D)
{
    bridge *b;
    PetscScalar *d;
    PetscFunctionBeginUser;
    PetscCall(MatShellGetContext(A, &b));
    ts_system *sys = b->sys;
    size_t n = sys->n;
    const double *x = b->y, *v = sys->order == 2 ? b->y + n : NULL;
    int order2 = sys->order == 2;
    int s = ts_system_linearize(sys, b->t, x, v, order2 ? 0.0 : 1.0, order2 ? 1.0 : 0.0);
    if (!s)
        s = sys->ops->jacobian_diag(sys, b->work);
    if (s) {
        b->failed = s;
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "tstep: %s: %s", ts_status_message(s),
                ts_error_detail());
    }
    PetscCall(VecGetArray(D, &d));
    for (size_t i = 0; i < b->ny; i++)
        d[i] = b->shift;
    double *dv = order2 ? d + n : d;
    for (size_t i = 0; i < n; i++)
        if (!(sys->pinned && sys->pinned[i]))
            dv[i] -= b->work[i] / sys->mass[i];
    PetscCall(VecRestoreArray(D, &d));
    PetscFunctionReturn(0);
}

static PetscErrorCode ijacobian(TS ts, PetscReal t, Vec U, Vec Udot, PetscReal a, Mat A, Mat P,
                                void *ctx)
{
    bridge *b = ctx;
    const PetscScalar *u;
    (void)ts, (void)Udot, (void)A, (void)P;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(U, &u));
    memcpy(b->y, u, b->ny * sizeof *b->y);
    PetscCall(VecRestoreArrayRead(U, &u));
    b->t = t;
    b->shift = a;
    PetscFunctionReturn(0);
}

/* --- output ------------------------------------------------------------------ */

static void write_row(bridge *b, double t, const double *y)
{
    const char *sep = b->csv ? "," : " ";
    fprintf(b->out, "%.17g", t);
    for (size_t i = 0; i < b->ny; i++)
        fprintf(b->out, "%s%.17g", sep, y[i]);
    if (b->sys->ops->energy) {
        double ke = 0.0, pe = 0.0;
        const double *v = b->sys->order == 2 ? y + b->sys->n : NULL;
        if (b->sys->ops->energy(b->sys, t, y, v, &ke, &pe) == TS_OK)
            fprintf(b->out, "%s%.17g", sep, ke + pe);
        else
            fprintf(b->out, "%snan", sep);
    }
    fputc('\n', b->out);
}

static void write_header(bridge *b)
{
    const char *sep = b->csv ? "," : " ";
    fputs(b->csv ? "t" : "# t", b->out);
    for (size_t i = 0; i < b->sys->n; i++)
        fprintf(b->out, "%sx%zu", sep, i);
    for (size_t i = 0; b->sys->order == 2 && i < b->sys->n; i++)
        fprintf(b->out, "%sv%zu", sep, i);
    if (b->sys->ops->energy)
        fprintf(b->out, "%senergy", sep);
    fputc('\n', b->out);
}

static PetscErrorCode monitor(TS ts, PetscInt step, PetscReal t, Vec U, void *ctx)
{
    bridge *b = ctx;
    const PetscScalar *u;
    PetscReal tmax;
    PetscFunctionBeginUser;
    PetscCall(TSGetMaxTime(ts, &tmax));
    int last = t >= tmax - 1e-12 * fmax(1.0, fabs(tmax));
    if (step % b->every == 0 || last) {
        PetscCall(VecGetArrayRead(U, &u));
        write_row(b, t, u);
        PetscCall(VecRestoreArrayRead(U, &u));
        b->last_step = step;
    }
    PetscFunctionReturn(0);
}

/* --- tstep's options ------------------------------------------------------------ */

/* Take tstep's own options out of argv (PETSc sees the rest). */
static int parse_tstep_options(int *argc, char **argv, const ts_system_type **type,
                               ts_params *params, const char **out, int *csv, long *every)
{
    int k = 1;
    const char *system = NULL;
    static char *pairs[256];
    int npairs = 0;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            exit(0);
        }
        int takes = strcmp(a, "--system") == 0 || strcmp(a, "--param") == 0 ||
                    strcmp(a, "--out") == 0 || strcmp(a, "--format") == 0 ||
                    strcmp(a, "--every") == 0;
        if (!takes) {
            if (strncmp(a, "--", 2) == 0) {
                fprintf(stderr, "tstep-petsc: unknown option '%s' (tstep options: --system, "
                                "--param, --out, --format, --every; PETSc options start with "
                                "one '-')\n", a);
                return 2;
            }
            argv[k++] = argv[i];
            continue;
        }
        if (i + 1 >= *argc) {
            fprintf(stderr, "tstep-petsc: option '%s' needs a value\n", a);
            return 2;
        }
        const char *val = argv[++i];
        if (strcmp(a, "--system") == 0) {
            system = val;
        } else if (strcmp(a, "--param") == 0) {
            if (npairs == 256) {
                fprintf(stderr, "tstep-petsc: too many --param\n");
                return 2;
            }
            pairs[npairs++] = (char *)val;
        } else if (strcmp(a, "--out") == 0) {
            *out = val;
        } else if (strcmp(a, "--format") == 0) {
            if (strcmp(val, "csv") && strcmp(val, "dat")) {
                fprintf(stderr, "tstep-petsc: --format: '%s' is not dat or csv\n", val);
                return 2;
            }
            *csv = strcmp(val, "csv") == 0;
        } else {
            char *end;
            *every = strtol(val, &end, 10);
            if (*end || end == val || *every < 1) {
                fprintf(stderr, "tstep-petsc: --every: '%s' is not a whole number >= 1\n", val);
                return 2;
            }
        }
    }
    argv[k] = NULL;
    *argc = k;
    if (!system) {
        fprintf(stderr, "tstep-petsc: --system is required\n%s", usage);
        return 2;
    }
    if (!(*type = ts_system_find(system))) {
        fprintf(stderr, "tstep-petsc: --system: unknown system '%s' (valid:", system);
        for (size_t i = 0; ts_system_at(i); i++)
            fprintf(stderr, " %s", ts_system_at(i)->name);
        fprintf(stderr, ")\n");
        return 2;
    }
    ts_params_init(params, (*type)->params);
    for (int i = 0; i < npairs; i++)
        if (ts_params_set_pair(params, pairs[i])) {
            fprintf(stderr, "tstep-petsc: --param: %s\n", ts_error_detail());
            return 2;
        }
    return 0;
}

/* The TS types that take the right-hand side alone. */
static int explicit_type(const char *type)
{
    static const char *const ex[] = {TSEULER, TSRK, TSSSP, TSSUNDIALS, NULL};
    for (int i = 0; ex[i]; i++)
        if (strcmp(type, ex[i]) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const ts_system_type *type;
    ts_params params;
    const char *outpath = NULL;
    int csv = 0, rc;
    long every = 1;
    if ((rc = parse_tstep_options(&argc, argv, &type, &params, &outpath, &csv, &every)))
        return rc;

    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (size > 1) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                              "tstep-petsc: the generic bridge runs on one rank (%d given)\n",
                              size));
        PetscCall(PetscFinalize());
        return 2;
    }

    bridge b = {.every = every, .csv = csv, .last_step = -1};
    int s = ts_system_new(type, &params, &b.sys);
    if (s) {
        fprintf(stderr, "tstep-petsc: system '%s': %s: %s\n", type->name, ts_status_message(s),
                ts_error_detail());
        PetscCall(PetscFinalize());
        return ts_status_exit_code(s);
    }
    ts_system *sys = b.sys;
    b.ny = ts_system_ydim(sys);
    b.y = calloc(b.ny, sizeof *b.y);
    b.work = calloc(sys->n, sizeof *b.work);
    b.work2 = calloc(sys->n, sizeof *b.work2);
    b.out = stdout;
    if (outpath && !(b.out = fopen(outpath, "w"))) {
        fprintf(stderr, "tstep-petsc: --out: cannot write '%s'\n", outpath);
        PetscCall(PetscFinalize());
        return 2;
    }

    Vec U;
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, (PetscInt)b.ny, &U));
    PetscScalar *u;
    PetscCall(VecGetArray(U, &u));
    ts_system_get_y(sys, u);
    PetscCall(VecRestoreArray(U, &u));

    TS ts;
    PetscCall(TSCreate(PETSC_COMM_SELF, &ts));
    PetscCall(TSSetProblemType(ts, TS_NONLINEAR));
    PetscCall(TSSetType(ts, TSBEULER));
    PetscCall(TSSetTimeStep(ts, 0.01));
    PetscCall(TSSetMaxTime(ts, 1.0));
    PetscCall(TSSetExactFinalTime(ts, TS_EXACTFINALTIME_MATCHSTEP));
    PetscCall(TSMonitorSet(ts, monitor, &b, NULL));
    PetscCall(TSSetFromOptions(ts));

    TSType tstype;
    PetscCall(TSGetType(ts, &tstype));
    Mat J = NULL;
    if (explicit_type(tstype)) {
        PetscCall(TSSetRHSFunction(ts, NULL, rhs, &b));
    } else {
        if (!ts_system_has_jacobian(sys)) {
            fprintf(stderr, "tstep-petsc: -ts_type %s is implicit and needs Jacobian products, "
                            "which system '%s' does not provide\n", tstype, type->name);
            PetscCall(PetscFinalize());
            return 2;
        }
        PetscCall(TSSetIFunction(ts, NULL, ifunction, &b));
        PetscCall(MatCreateShell(PETSC_COMM_SELF, (PetscInt)b.ny, (PetscInt)b.ny, (PetscInt)b.ny,
                                 (PetscInt)b.ny, &b, &J));
        PetscCall(MatShellSetOperation(J, MATOP_MULT, (void (*)(void))shell_mult));
        if (sys->ops->jacobian_diag && sys->ops->linearize)
            PetscCall(MatShellSetOperation(J, MATOP_GET_DIAGONAL, (void (*)(void))shell_diagonal));
        PetscCall(TSSetIJacobian(ts, J, J, ijacobian, &b));
        /* a shell matrix has no entries to factor: no preconditioner unless asked */
        SNES snes;
        KSP ksp;
        PC pc;
        PetscCall(TSGetSNES(ts, &snes));
        PetscCall(SNESGetKSP(snes, &ksp));
        PetscCall(KSPGetPC(ksp, &pc));
        PetscCall(PCSetType(pc, PCNONE));
        /* stiff spring systems make a I - G' ill-conditioned: GMRES with
         * classical Gram-Schmidt then breaks down; the modified one does not */
        PetscCall(KSPSetType(ksp, KSPGMRES));
        PetscCall(KSPGMRESSetOrthogonalization(ksp, KSPGMRESModifiedGramSchmidtOrthogonalization));
        PetscCall(KSPSetFromOptions(ksp));
    }

    write_header(&b);
    PetscErrorCode perr = TSSolve(ts, U);
    TSConvergedReason reason;
    PetscCall(TSGetConvergedReason(ts, &reason));
    rc = 0;
    if (perr || reason < 0) {
        fprintf(stderr, "tstep-petsc: TS stopped: %s%s%s\n",
                perr ? "error in a callback" : TSConvergedReasons[reason],
                b.failed ? ": " : "", b.failed ? ts_status_message(b.failed) : "");
        rc = 1;
    } else {
        PetscInt steps;
        PetscReal t;
        PetscCall(TSGetStepNumber(ts, &steps));
        PetscCall(TSGetTime(ts, &t));
        if (b.last_step != steps) { /* the last step is always written */
            const PetscScalar *uu;
            PetscCall(VecGetArrayRead(U, &uu));
            write_row(&b, t, uu);
            PetscCall(VecRestoreArrayRead(U, &uu));
        }
    }
    if (b.out != stdout && fclose(b.out)) {
        fprintf(stderr, "tstep-petsc: error writing '%s'\n", outpath);
        rc = 2;
    }
    PetscCall(MatDestroy(&J));
    PetscCall(VecDestroy(&U));
    PetscCall(TSDestroy(&ts));
    ts_system_free(sys);
    free(b.y);
    free(b.work);
    free(b.work2);
    PetscCall(PetscFinalize());
    return rc;
}

/* The PETSc bridge's library part: a tstep system as a TS problem; see
 * tstep/petsc.h for the forms TS sees.  PETSc Users Manual, "TS: Scalable
 * ODE and DAE Solvers"; the matrix-free Jacobian is a MatShell, the
 * assembled one of spring networks petsc/jacobian.c's. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct tstep_petsc {
    ts_system *sys;
    size_t ny;
    double shift;       /* a of a I - G' */
    double t;           /* the linearization point */
    double *y, *work, *work2;
    Mat J;              /* the matrix-free a I - G', or NULL */
    tstep_petsc_jac *jac; /* the assembled a I - G' of a spring network, or NULL */
    size_t *ident;      /* 0 .. np - 1: the network's particles in PETSc's order */
    PetscInt *node;
    int failed;         /* a tstep status from a callback */
};
typedef struct tstep_petsc bridge;

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

/* TSSetIJacobian's callback (its signature is PETSc's): the Jacobian of the
 * implicit form at (t, U) with shift a. */
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
    if (b->jac) {
        const double *x = b->y, *v = b->sys->order == 2 ? b->y + b->sys->n : NULL;
        PetscCall(tstep_petsc_jac_assemble(b->jac, t, x, v, a));
    }
    PetscFunctionReturn(0);
}

/* --- output ------------------------------------------------------------------ */

int tstep_petsc_explicit_type(const char *type)
{
    static const char *const ex[] = {TSEULER, TSRK, TSSSP, TSSUNDIALS, NULL};
    for (int i = 0; ex[i]; i++)
        if (strcmp(type, ex[i]) == 0)
            return 1;
    return 0;
}

/* After each accepted step, the system's projection (collider, strain
 * limit) on the solution, as tstep's own step wrapper applies it. */
static PetscErrorCode post_step(TS ts)
{
    bridge *b;
    Vec U;
    PetscReal t;
    PetscScalar *u;
    PetscFunctionBeginUser;
    PetscCall(TSGetApplicationContext(ts, &b));
    PetscCall(TSGetSolution(ts, &U));
    PetscCall(TSGetTime(ts, &t));
    PetscCall(VecGetArray(U, &u));
    ts_system *sys = b->sys;
    int s = sys->ops->post_step(sys, t, u, sys->order == 2 ? u + sys->n : NULL);
    PetscCall(VecRestoreArray(U, &u));
    if (s) {
        b->failed = s;
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "tstep: %s: %s", ts_status_message(s),
                ts_error_detail());
    }
    PetscFunctionReturn(0);
}

/* The exact matrix-free a I - G' (any system with Jacobian products). */
static PetscErrorCode create_shell(bridge *b)
{
    ts_system *sys = b->sys;
    PetscInt n = (PetscInt)b->ny;
    PetscFunctionBeginUser;
    PetscCall(MatCreateShell(PETSC_COMM_SELF, n, n, n, n, b, &b->J));
    PetscCall(MatShellSetOperation(b->J, MATOP_MULT, (void (*)(void))shell_mult));
    if (sys->ops->jacobian_diag && sys->ops->linearize)
        PetscCall(MatShellSetOperation(b->J, MATOP_GET_DIAGONAL, (void (*)(void))shell_diagonal));
    PetscFunctionReturn(0);
}

/* The assembled a I - G' of a spring network on one rank: layout [x; v]. */
static PetscErrorCode create_jacobian(bridge *b, ts_springs *net)
{
    PetscFunctionBeginUser;
    b->ident = malloc((net->np + 1) * sizeof *b->ident);
    b->node = malloc((net->np + 1) * sizeof *b->node);
    PetscCheck(b->ident && b->node, PETSC_COMM_SELF, PETSC_ERR_MEM, "tstep: bridge");
    for (size_t p = 0; p < net->np; p++)
        b->ident[p] = p, b->node[p] = (PetscInt)p;
    tstep_petsc_layout lay = {.net = net, .nown = (PetscInt)net->np, .own = b->ident,
                              .node = b->node, .nglobal = (PetscInt)net->np, .interlaced = 0};
    PetscCall(tstep_petsc_jac_create(PETSC_COMM_SELF, &lay, &b->jac));
    PetscFunctionReturn(0);
}

PetscErrorCode tstep_petsc_attach(TS ts, ts_system *sys, tstep_petsc **out)
{
    PetscFunctionBeginUser;
    bridge *b = calloc(1, sizeof *b);
    PetscCheck(b, PETSC_COMM_SELF, PETSC_ERR_MEM, "tstep: bridge");
    b->sys = sys;
    b->ny = ts_system_ydim(sys);
    b->y = calloc(b->ny, sizeof *b->y);
    b->work = calloc(sys->n, sizeof *b->work);
    b->work2 = calloc(sys->n, sizeof *b->work2);
    PetscCheck(b->y && b->work && b->work2, PETSC_COMM_SELF, PETSC_ERR_MEM, "tstep: bridge");
    *out = b;
    if (sys->ops->post_step) {
        PetscCall(TSSetApplicationContext(ts, b));
        PetscCall(TSSetPostStep(ts, post_step));
    }
    TSType tstype;
    PetscCall(TSGetType(ts, &tstype));
    if (tstep_petsc_explicit_type(tstype)) {
        PetscCall(TSSetRHSFunction(ts, NULL, rhs, b));
        PetscFunctionReturn(0);
    }
    PetscCheck(ts_system_has_jacobian(sys), PETSC_COMM_SELF, PETSC_ERR_SUP,
               "-ts_type %s is implicit and needs Jacobian products, which system '%s' does "
               "not provide", tstype, sys->type ? sys->type->name : "?");
    PetscCall(TSSetIFunction(ts, NULL, ifunction, b));
    tstep_petsc_options opt;
    PetscCall(tstep_petsc_read_options(&opt));
    ts_springs *net = ts_springs_of(sys);
    if (net)
        PetscCall(create_jacobian(b, net));
    if (!b->jac || opt.matrix_free)
        PetscCall(create_shell(b));
    Mat P = b->jac ? tstep_petsc_jac_matrix(b->jac) : b->J;
    PetscCall(TSSetIJacobian(ts, b->J ? b->J : P, P, ijacobian, b));
    PetscCall(tstep_petsc_set_solver(ts, b->jac, opt.schur));
    PetscFunctionReturn(0);
}

PetscErrorCode tstep_petsc_default_solver(TS ts)
{
    PetscFunctionBeginUser;
    PetscCall(tstep_petsc_set_solver(ts, NULL, PETSC_FALSE));
    PetscFunctionReturn(0);
}

PetscErrorCode tstep_petsc_set_solver(TS ts, tstep_petsc_jac *jac, PetscBool schur)
{
    /* stiff spring systems make a I - G' ill-conditioned, and GMRES with
     * classical Gram-Schmidt then breaks down unpreconditioned (the string
     * at dt = 0.01), the modified one does not; a shell matrix alone has no
     * entries to factor: no preconditioner unless asked */
    SNES snes;
    KSP ksp;
    PC pc;
    PetscFunctionBeginUser;
    PetscCall(TSGetSNES(ts, &snes));
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCNONE));
    PetscCall(KSPSetType(ksp, KSPGMRES));
    PetscCall(KSPGMRESSetOrthogonalization(ksp, KSPGMRESModifiedGramSchmidtOrthogonalization));
    PetscCall(KSPSetFromOptions(ksp));
    PetscBool given;
    PetscCall(PetscOptionsHasName(NULL, NULL, "-snes_linesearch_type", &given));
    if (jac && !given) { /* full Newton steps, as tstep's own Newton: the backtracking
                            search cut the falling cloth's steps (11 iterations a
                            step against 4) */
        SNESLineSearch ls;
        PetscCall(SNESGetLineSearch(snes, &ls));
        PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHBASIC));
    }
    if (jac && schur)
        PetscCall(tstep_petsc_jac_use_schur(jac, ksp));
    PetscFunctionReturn(0);
}

int tstep_petsc_failure(const tstep_petsc *b)
{
    return !b ? 0 : b->failed ? b->failed : tstep_petsc_jac_failure(b->jac);
}

PetscErrorCode tstep_petsc_destroy(tstep_petsc **b)
{
    PetscFunctionBeginUser;
    if (!b || !*b)
        PetscFunctionReturn(0);
    PetscCall(MatDestroy(&(*b)->J));
    PetscCall(tstep_petsc_jac_destroy(&(*b)->jac));
    free((*b)->ident);
    free((*b)->node);
    free((*b)->y);
    free((*b)->work);
    free((*b)->work2);
    free(*b);
    *b = NULL;
    PetscFunctionReturn(0);
}

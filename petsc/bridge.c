/* The PETSc bridge's library part: a tstep system as a TS problem; see
 * tstep/petsc.h for the forms TS sees.  PETSc Users Manual, "TS: Scalable
 * ODE and DAE Solvers"; the matrix-free Jacobian is a MatShell. */
#include <stdlib.h>
#include <string.h>
#include "tstep/petsc.h"

struct tstep_petsc {
    ts_system *sys;
    size_t ny;
    double shift;       /* a of a I - G' */
    double t;           /* the linearization point */
    double *y, *work, *work2;
    Mat J;
    Mat P;              /* assembled a I - G' from the system's triplets, or NULL */
    size_t nt;          /* triplets per linearization */
    size_t *trow, *tcol;
    double *tval;
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

/* The assembled preconditioning matrix.  The system's triplets give the
 * lower triangle of its fast path's symmetric (alpha df/dx + beta df/dv)
 * (tstep/system.h); with (alpha, beta) = (1, 0) and (0, 1) they give K and
 * D, and
 *   order 2:  P = [ a I      -I           ]      order 1:  P = a I - M^-1 K
 *                 [ -M^-1 K   a I - M^-1 D ]
 * pinned rows a I alone, as in the shell.  The fast path omits the
 * non-symmetric damping derivative, so P approximates a I - G': a
 * preconditioner, while the shell keeps the exact products. */
static size_t p_row_of(const bridge *b, size_t r, int vblock)
{
    return vblock ? b->sys->n + r : r;
}

static int pinned_dof(const ts_system *sys, size_t i)
{
    return sys->pinned && sys->pinned[i];
}

/* Add the mirrored triplet (r, c, w) of block `vcol` (0: the K columns, 1: the D
 * columns) to the velocity rows (order 1: the only rows). */
static PetscErrorCode p_add(bridge *b, size_t r, size_t c, double w, int vcol)
{
    ts_system *sys = b->sys;
    int order2 = sys->order == 2;
    PetscFunctionBeginUser;
    for (int mirror = 0; mirror < (r == c ? 1 : 2); mirror++) {
        size_t i = mirror ? c : r, j = mirror ? r : c;
        if (pinned_dof(sys, i))
            continue;
        PetscInt row = (PetscInt)p_row_of(b, i, order2), col = (PetscInt)(vcol ? sys->n + j : j);
        PetscCall(MatSetValue(b->P, row, col, -w / sys->mass[i], ADD_VALUES));
    }
    PetscFunctionReturn(0);
}

static PetscErrorCode assemble_p(bridge *b, double a)
{
    ts_system *sys = b->sys;
    size_t n = sys->n;
    int order2 = sys->order == 2;
    const double *x = b->y, *v = order2 ? b->y + n : NULL;
    PetscFunctionBeginUser;
    PetscCall(MatZeroEntries(b->P));
    for (size_t i = 0; i < b->ny; i++)
        PetscCall(MatSetValue(b->P, (PetscInt)i, (PetscInt)i, a, ADD_VALUES));
    for (size_t i = 0; order2 && i < n; i++)
        if (!pinned_dof(sys, i))
            PetscCall(MatSetValue(b->P, (PetscInt)i, (PetscInt)(n + i), -1.0, ADD_VALUES));
    for (int part = 0; part < (order2 ? 2 : 1); part++) { /* K, then D */
        int s = ts_system_linearize(sys, b->t, x, v, part ? 0.0 : 1.0, part ? 1.0 : 0.0);
        if (!s)
            s = sys->ops->jacobian_triplets(sys, &b->nt, NULL, NULL, b->tval);
        if (s) {
            b->failed = s;
            SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "tstep: %s: %s", ts_status_message(s),
                    ts_error_detail());
        }
        for (size_t k = 0; k < b->nt; k++) /* zeros too: the pattern stays fixed */
            PetscCall(p_add(b, b->trow[k], b->tcol[k], b->tval[k], part));
    }
    PetscCall(MatAssemblyBegin(b->P, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(b->P, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(0);
}

/* P with its nonzero pattern preallocated from the triplets' pattern. */
static PetscErrorCode create_p(bridge *b)
{
    ts_system *sys = b->sys;
    size_t n = sys->n;
    int order2 = sys->order == 2;
    PetscFunctionBeginUser;
    sys->ops->jacobian_triplets(sys, &b->nt, NULL, NULL, NULL);
    b->trow = malloc((b->nt + 1) * sizeof *b->trow);
    b->tcol = malloc((b->nt + 1) * sizeof *b->tcol);
    b->tval = malloc((b->nt + 1) * sizeof *b->tval);
    PetscInt *nnz = calloc(b->ny, sizeof *nnz);
    PetscCheck(b->trow && b->tcol && b->tval && nnz, PETSC_COMM_SELF, PETSC_ERR_MEM, "tstep: P");
    sys->ops->jacobian_triplets(sys, &b->nt, b->trow, b->tcol, NULL);
    for (size_t i = 0; i < b->ny; i++)
        nnz[i] = order2 && i < n ? 2 : 1; /* a, and -1 for x' = v */
    for (size_t k = 0; k < b->nt; k++) { /* upper bounds: duplicates counted */
        size_t r = b->trow[k], c = b->tcol[k];
        PetscInt add = order2 ? 2 : 1; /* the K and the D column */
        nnz[p_row_of(b, r, order2)] += add;
        if (r != c)
            nnz[p_row_of(b, c, order2)] += add;
    }
    for (size_t i = 0; i < b->ny; i++)
        nnz[i] = PetscMin(nnz[i], (PetscInt)b->ny);
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, (PetscInt)b->ny, (PetscInt)b->ny, 0, nnz, &b->P));
    free(nnz);
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
    if (b->P)
        PetscCall(assemble_p(b, a));
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
    PetscInt n = (PetscInt)b->ny;
    PetscCall(MatCreateShell(PETSC_COMM_SELF, n, n, n, n, b, &b->J));
    PetscCall(MatShellSetOperation(b->J, MATOP_MULT, (void (*)(void))shell_mult));
    if (sys->ops->jacobian_diag && sys->ops->linearize)
        PetscCall(MatShellSetOperation(b->J, MATOP_GET_DIAGONAL, (void (*)(void))shell_diagonal));
    if (sys->ops->jacobian_triplets && sys->ops->linearize)
        PetscCall(create_p(b));
    PetscCall(TSSetIJacobian(ts, b->J, b->P ? b->P : b->J, ijacobian, b));
    PetscCall(tstep_petsc_default_solver(ts));
    PetscFunctionReturn(0);
}

PetscErrorCode tstep_petsc_default_solver(TS ts)
{
    /* a shell matrix has no entries to factor: no preconditioner unless
     * asked; stiff spring systems make a I - G' ill-conditioned, and GMRES
     * with classical Gram-Schmidt then breaks down (the string at dt =
     * 0.01), the modified one does not */
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
    PetscFunctionReturn(0);
}

int tstep_petsc_failure(const tstep_petsc *b) { return b ? b->failed : 0; }

PetscErrorCode tstep_petsc_destroy(tstep_petsc **b)
{
    PetscFunctionBeginUser;
    if (!b || !*b)
        PetscFunctionReturn(0);
    PetscCall(MatDestroy(&(*b)->J));
    PetscCall(MatDestroy(&(*b)->P));
    free((*b)->trow);
    free((*b)->tcol);
    free((*b)->tval);
    free((*b)->y);
    free((*b)->work);
    free((*b)->work2);
    free(*b);
    *b = NULL;
    PetscFunctionReturn(0);
}

/* The grid cloth distributed over MPI ranks with a PETSc DMDA; see
 * tstep/petsc.h.
 *
 * The cloth's particles (i, j), p = j nx + i (systems/cloth.c), are the
 * nodes of a 2-D DMDA with 6 degrees of freedom per node (x, y, z, vx, vy,
 * vz) and a box stencil of width 2: the flexion springs join (i, j) to
 * (i + 2, j) and (i, j + 2), so every spring incident to a node a rank owns
 * has its other end within two nodes of it.  Each rank builds a patch, a
 * spring network (tstep/springs.h) over its ghosted nodes holding every
 * spring with at least one owned end, with the cloth's masses, pins, rest
 * lengths, stiffnesses and air.  The forces on an owned node are then
 * complete in the patch's forces at the ghosted state (after
 * DMGlobalToLocal), and so are the rows of the Jacobian products: the same
 * src/springs/springs.c code as the serial cloth, gathered by particle, so the
 * result does not depend on the number of ranks beyond the reductions
 * inside PETSc's solvers.
 *
 * Set-up builds the whole serial cloth on every rank to read its topology,
 * then keeps only the patch (rank 0 keeps the whole cloth for output and
 * energy).  That is O(N) memory per rank while setting up: fine for the
 * 1000^2 cloth on one machine; a cluster run of a much larger cloth needs
 * the patch built directly from the grid (docs/petsc.md).
 *
 * Post-step projections (the sphere collider, the Provot strain limit) are
 * not applied on this path; a cloth asking for them is refused. */
#include <stdlib.h>
#include <string.h>
#include <petscdmda.h>
#include "internal.h"

struct tstep_petsc_grid {
    MPI_Comm comm;
    DM da;
    PetscInt nx, ny;
    PetscInt xs, ys, xm, ym;     /* owned nodes */
    PetscInt gxs, gys, gxm, gym; /* ghosted nodes */
    ts_system *whole;            /* rank 0: the serial cloth (output, energy) */
    ts_system *patch;            /* the ghosted nodes' spring network */
    size_t np;                   /* patch particles = gxm gym */
    double *x, *v, *f, *u, *w;   /* patch vectors, 3 np each */
    double *xl, *vl;             /* the linearization state (patch) */
    double tl, shift;
    Vec local, local2;           /* ghosted DMDA vectors */
    Mat J;                       /* the matrix-free a I - G', or NULL */
    tstep_petsc_jac *jac;        /* the assembled a I - G' (owned rows of the patch) */
    size_t *own;                 /* patch index of the owned nodes, in the global vector's order */
    PetscInt *node;              /* global node number of each patch particle */
    int failed;
};

typedef struct tstep_petsc_grid grid;

/* patch index of ghosted node (i, j) */
static size_t patch_index(const grid *g, PetscInt i, PetscInt j)
{
    return (size_t)((j - g->gys) * g->gxm + (i - g->gxs));
}

static int owned(const grid *g, PetscInt i, PetscInt j)
{
    return i >= g->xs && i < g->xs + g->xm && j >= g->ys && j < g->ys + g->ym;
}

static PetscErrorCode tstep_check(grid *g, int s)
{
    PetscFunctionBeginUser;
    if (s) {
        g->failed = s;
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "tstep: %s: %s", ts_status_message(s),
                ts_error_detail());
    }
    PetscFunctionReturn(0);
}

/* The patch from the serial cloth: its ghosted particles and every spring
 * with an owned end. */
static int build_patch(grid *g, ts_system *whole)
{
    ts_springs *w = ts_springs_of(whole), *p = NULL;
    if (!w)
        return ts_error(TS_ERR_INPUT, "the distributed path needs the grid cloth");
    if (w->sphere_r > 0.0 || w->strain_max > 0.0)
        return ts_error(TS_ERR_UNSUPPORTED,
                        "the distributed cloth applies no post-step projection: set "
                        "sphere_r=0 and provot=0");
    g->np = (size_t)(g->gxm * g->gym);
    int s = ts_springs_new(whole->type, g->np, &w->opt, &p);
    if (s)
        return s;
    for (PetscInt j = g->gys; j < g->gys + g->gym; j++)
        for (PetscInt i = g->gxs; i < g->gxs + g->gxm; i++) {
            size_t lp = patch_index(g, i, j), gp = (size_t)(j * g->nx + i);
            memcpy(p->base.x + 3 * lp, whole->x + 3 * gp, 3 * sizeof(double));
            memcpy(p->base.v + 3 * lp, whole->v + 3 * gp, 3 * sizeof(double));
            ts_springs_set_mass(p, lp, whole->mass[3 * gp]);
            if (!s && whole->pinned && whole->pinned[3 * gp])
                s = ts_springs_pin(p, lp);
        }
    for (size_t k = 0; !s && k < w->ns; k++) {
        PetscInt ia = (PetscInt)(w->si[k] % (size_t)g->nx), ja = (PetscInt)(w->si[k] / (size_t)g->nx);
        PetscInt ib = (PetscInt)(w->sj[k] % (size_t)g->nx), jb = (PetscInt)(w->sj[k] / (size_t)g->nx);
        if (!owned(g, ia, ja) && !owned(g, ib, jb))
            continue;
        /* rest length = the distance at the start, as in the whole cloth */
        s = ts_springs_add(p, patch_index(g, ia, ja), patch_index(g, ib, jb), ts_springs_k(w, k), ts_springs_kd(w, k),
                           w->kind[k]);
    }
    if (!s)
        s = ts_springs_finish(p);
    if (s) {
        ts_system_free(&p->base);
        return s;
    }
    g->patch = &p->base;
    return TS_OK;
}

PetscErrorCode tstep_petsc_grid_create(MPI_Comm comm, const ts_system_type *type,
                                       const ts_params *params, tstep_petsc_grid **out)
{
    PetscMPIInt rank;
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    grid *g = calloc(1, sizeof *g);
    PetscCheck(g, comm, PETSC_ERR_MEM, "tstep: grid");
    *out = g;
    g->comm = comm;
    g->nx = (PetscInt)ts_params_int(params, "nx");
    g->ny = (PetscInt)ts_params_int(params, "ny");
    ts_system *whole = NULL;
    PetscCall(tstep_check(g, ts_system_new(type, params, &whole)));
    PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, g->nx,
                           g->ny, PETSC_DECIDE, PETSC_DECIDE, 6, 2, NULL, NULL, &g->da));
    PetscCall(DMSetFromOptions(g->da));
    PetscCall(DMSetUp(g->da));
    PetscCall(DMDAGetCorners(g->da, &g->xs, &g->ys, NULL, &g->xm, &g->ym, NULL));
    PetscCall(DMDAGetGhostCorners(g->da, &g->gxs, &g->gys, NULL, &g->gxm, &g->gym, NULL));
    int s = build_patch(g, whole);
    if (rank == 0 && !s)
        g->whole = whole;
    else
        ts_system_free(whole);
    PetscCall(tstep_check(g, s));
    size_t n3 = 3 * g->np;
    double *block = calloc(7 * n3 + 1, sizeof *block);
    PetscCheck(block, comm, PETSC_ERR_MEM, "tstep: grid vectors");
    double **vecs[] = {&g->x, &g->v, &g->f, &g->u, &g->w, &g->xl, &g->vl};
    for (size_t k = 0; k < 7; k++)
        *vecs[k] = block + k * n3;
    PetscCall(DMCreateLocalVector(g->da, &g->local));
    PetscCall(VecDuplicate(g->local, &g->local2));
    PetscFunctionReturn(0);
}

/* The initial state: the patch's owned nodes (the patch holds the cloth's
 * start). */
PetscErrorCode tstep_petsc_grid_state(tstep_petsc_grid *g, Vec *U)
{
    PetscScalar *u;
    PetscFunctionBeginUser;
    PetscCall(DMCreateGlobalVector(g->da, U));
    PetscCall(VecGetArray(*U, &u));
    size_t k = 0;
    for (PetscInt j = g->ys; j < g->ys + g->ym; j++)
        for (PetscInt i = g->xs; i < g->xs + g->xm; i++, k += 6) {
            size_t lp = patch_index(g, i, j);
            memcpy(u + k, g->patch->x + 3 * lp, 3 * sizeof(double));
            memcpy(u + k + 3, g->patch->v + 3 * lp, 3 * sizeof(double));
        }
    PetscCall(VecRestoreArray(*U, &u));
    PetscFunctionReturn(0);
}

/* Ghosted values of the global U into patch vectors a (dof 0-2) and b (3-5). */
static PetscErrorCode to_patch(grid *g, Vec U, Vec local, double *a, double *b)
{
    const PetscScalar *l;
    PetscFunctionBeginUser;
    PetscCall(DMGlobalToLocalBegin(g->da, U, INSERT_VALUES, local));
    PetscCall(DMGlobalToLocalEnd(g->da, U, INSERT_VALUES, local));
    PetscCall(VecGetArrayRead(local, &l));
    for (size_t p = 0; p < g->np; p++) {
        memcpy(a + 3 * p, l + 6 * p, 3 * sizeof(double));
        memcpy(b + 3 * p, l + 6 * p + 3, 3 * sizeof(double));
    }
    PetscCall(VecRestoreArrayRead(local, &l));
    PetscFunctionReturn(0);
}

/* out (global, owned nodes) = [xa; M^-1 fb] per node, pinned nodes 0:
 * the first-order view's layout with (xa, fb) given per patch particle. */
static PetscErrorCode from_patch(grid *g, const double *xa, const double *fb, Vec Out)
{
    PetscScalar *o;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(Out, &o));
    size_t k = 0;
    const double *m = g->patch->mass;
    const unsigned char *pin = g->patch->pinned;
    for (PetscInt j = g->ys; j < g->ys + g->ym; j++)
        for (PetscInt i = g->xs; i < g->xs + g->xm; i++, k += 6) {
            size_t lp = patch_index(g, i, j);
            for (int c = 0; c < 3; c++) {
                size_t d = 3 * lp + (size_t)c;
                int held = pin && pin[d];
                o[k + (size_t)c] = held ? 0.0 : xa[d];
                o[k + 3 + (size_t)c] = held ? 0.0 : fb[d] / m[d];
            }
        }
    PetscCall(VecRestoreArray(Out, &o));
    PetscFunctionReturn(0);
}

static PetscErrorCode grid_rhs(TS ts, PetscReal t, Vec U, Vec G, void *ctx)
{
    grid *g = ctx;
    (void)ts;
    PetscFunctionBeginUser;
    PetscCall(to_patch(g, U, g->local, g->x, g->v));
    PetscCall(tstep_check(g, ts_system_forces(g->patch, t, g->x, g->v, g->f)));
    PetscCall(from_patch(g, g->v, g->f, G));
    PetscFunctionReturn(0);
}

static PetscErrorCode grid_ifunction(TS ts, PetscReal t, Vec U, Vec Udot, Vec F, void *ctx)
{
    PetscFunctionBeginUser;
    PetscCall(grid_rhs(ts, t, U, F, ctx));
    PetscCall(VecAYPX(F, -1.0, Udot)); /* F = U' - G(t, U) */
    PetscFunctionReturn(0);
}

/* TSSetIJacobian's callback for the grid (its signature is PETSc's): the
 * Jacobian of the implicit form at (t, U) with shift a. */
static PetscErrorCode grid_ijacobian(TS ts, PetscReal t, Vec U, Vec Udot, PetscReal a, Mat A,
                                     Mat P, void *ctx)
{
    grid *g = ctx;
    (void)ts, (void)Udot, (void)A, (void)P;
    PetscFunctionBeginUser;
    PetscCall(to_patch(g, U, g->local, g->xl, g->vl));
    g->tl = t;
    g->shift = a;
    if (g->jac)
        PetscCall(tstep_petsc_jac_assemble(g->jac, t, g->xl, g->vl, a));
    PetscFunctionReturn(0);
}

/* out = a u - G'(Y) u, G' [ux; uv] = [uv; M^-1 (df/dx ux + df/dv uv)] */
static PetscErrorCode grid_mult(Mat A, Vec U, Vec Out)
{
    grid *g;
    PetscFunctionBeginUser;
    PetscCall(MatShellGetContext(A, &g));
    /* patch: x <- ux, v <- uv (ghosted) */
    PetscCall(to_patch(g, U, g->local2, g->x, g->v));
    PetscCall(tstep_check(g, ts_system_dfdx_mul(g->patch, g->tl, g->xl, g->vl, g->x, g->f)));
    PetscCall(tstep_check(g, ts_system_dfdv_mul(g->patch, g->tl, g->xl, g->vl, g->v, g->w)));
    for (size_t d = 0; d < 3 * g->np; d++)
        g->f[d] += g->w[d];
    PetscCall(from_patch(g, g->v, g->f, Out)); /* G' u */
    PetscCall(VecAXPBY(Out, g->shift, -1.0, U));
    PetscFunctionReturn(0);
}

/* diag(a I - G') = a on positions, a - M^-1 diag(df/dv) on velocities */
static PetscErrorCode grid_diagonal(Mat A, Vec D)
{
    grid *g;
    PetscScalar *d;
    PetscFunctionBeginUser;
    PetscCall(MatShellGetContext(A, &g));
    PetscCall(tstep_check(g, ts_system_linearize(g->patch, g->tl, g->xl, g->vl, 0.0, 1.0)));
    PetscCall(tstep_check(g, g->patch->ops->jacobian_diag(g->patch, g->w)));
    PetscCall(VecGetArray(D, &d));
    size_t k = 0;
    const unsigned char *pin = g->patch->pinned;
    for (PetscInt j = g->ys; j < g->ys + g->ym; j++)
        for (PetscInt i = g->xs; i < g->xs + g->xm; i++, k += 6)
            for (int c = 0; c < 3; c++) {
                size_t q = 3 * patch_index(g, i, j) + (size_t)c;
                d[k + (size_t)c] = g->shift;
                d[k + 3 + (size_t)c] =
                    g->shift - (pin && pin[q] ? 0.0 : g->w[q] / g->patch->mass[q]);
            }
    PetscCall(VecRestoreArray(D, &d));
    PetscFunctionReturn(0);
}

/* The assembled Jacobian over the owned nodes, the patch's ghost nodes
 * numbered by the DMDA's local-to-global map (a block of 6 per node). */
static PetscErrorCode create_jacobian(grid *g)
{
    ISLocalToGlobalMapping ltog;
    const PetscInt *idx;
    PetscFunctionBeginUser;
    PetscInt nown = g->xm * g->ym;
    g->own = malloc(((size_t)nown + 1) * sizeof *g->own);
    g->node = malloc((g->np + 1) * sizeof *g->node);
    PetscCheck(g->own && g->node, g->comm, PETSC_ERR_MEM, "tstep: grid Jacobian");
    size_t k = 0;
    for (PetscInt j = g->ys; j < g->ys + g->ym; j++)
        for (PetscInt i = g->xs; i < g->xs + g->xm; i++)
            g->own[k++] = patch_index(g, i, j);
    PetscCall(DMGetLocalToGlobalMapping(g->da, &ltog));
    PetscCall(ISLocalToGlobalMappingGetBlockIndices(ltog, &idx));
    for (size_t p = 0; p < g->np; p++)
        g->node[p] = idx[p];
    PetscCall(ISLocalToGlobalMappingRestoreBlockIndices(ltog, &idx));
    tstep_petsc_layout lay = {.net = ts_springs_of(g->patch), .nown = nown, .own = g->own,
                              .node = g->node, .nglobal = g->nx * g->ny, .interlaced = 1};
    PetscCall(tstep_petsc_jac_create(g->comm, &lay, &g->jac));
    PetscFunctionReturn(0);
}

PetscErrorCode tstep_petsc_grid_attach(TS ts, tstep_petsc_grid *g)
{
    TSType type;
    PetscFunctionBeginUser;
    PetscCall(TSSetDM(ts, g->da));
    PetscCall(TSGetType(ts, &type));
    if (tstep_petsc_explicit_type(type)) {
        PetscCall(TSSetRHSFunction(ts, NULL, grid_rhs, g));
        PetscFunctionReturn(0);
    }
    tstep_petsc_options opt;
    PetscCall(tstep_petsc_read_options(&opt));
    PetscCall(TSSetIFunction(ts, NULL, grid_ifunction, g));
    PetscCall(create_jacobian(g));
    if (opt.matrix_free) {
        PetscInt nl = 6 * g->xm * g->ym, N = 6 * g->nx * g->ny;
        PetscCall(MatCreateShell(g->comm, nl, nl, N, N, g, &g->J));
        PetscCall(MatShellSetOperation(g->J, MATOP_MULT, (void (*)(void))grid_mult));
        PetscCall(MatShellSetOperation(g->J, MATOP_GET_DIAGONAL, (void (*)(void))grid_diagonal));
    }
    Mat P = tstep_petsc_jac_matrix(g->jac);
    PetscCall(TSSetIJacobian(ts, g->J ? g->J : P, P, grid_ijacobian, g));
    PetscCall(tstep_petsc_set_solver(ts, g->jac, opt.schur));
    PetscFunctionReturn(0);
}

/* Rank 0 receives the whole state in tstep's layout [x; v] (p = j nx + i). */
PetscErrorCode tstep_petsc_grid_gather(tstep_petsc_grid *g, Vec U, double *y)
{
    Vec nat, all;
    VecScatter sc;
    PetscMPIInt rank;
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Comm_rank(g->comm, &rank));
    PetscCall(DMDACreateNaturalVector(g->da, &nat));
    PetscCall(DMDAGlobalToNaturalBegin(g->da, U, INSERT_VALUES, nat));
    PetscCall(DMDAGlobalToNaturalEnd(g->da, U, INSERT_VALUES, nat));
    PetscCall(VecScatterCreateToZero(nat, &sc, &all));
    PetscCall(VecScatterBegin(sc, nat, all, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, nat, all, INSERT_VALUES, SCATTER_FORWARD));
    if (rank == 0) {
        const PetscScalar *a;
        size_t np = (size_t)(g->nx * g->ny);
        PetscCall(VecGetArrayRead(all, &a));
        for (size_t p = 0; p < np; p++) {
            memcpy(y + 3 * p, a + 6 * p, 3 * sizeof(double));
            memcpy(y + 3 * np + 3 * p, a + 6 * p + 3, 3 * sizeof(double));
        }
        PetscCall(VecRestoreArrayRead(all, &a));
    }
    PetscCall(VecScatterDestroy(&sc));
    PetscCall(VecDestroy(&all));
    PetscCall(VecDestroy(&nat));
    PetscFunctionReturn(0);
}

ts_system *tstep_petsc_grid_system(tstep_petsc_grid *g) { return g->whole; }

int tstep_petsc_grid_failure(const tstep_petsc_grid *g)
{
    return !g ? 0 : g->failed ? g->failed : tstep_petsc_jac_failure(g->jac);
}

PetscErrorCode tstep_petsc_grid_destroy(tstep_petsc_grid **gp)
{
    PetscFunctionBeginUser;
    if (!gp || !*gp)
        PetscFunctionReturn(0);
    grid *g = *gp;
    PetscCall(MatDestroy(&g->J));
    PetscCall(tstep_petsc_jac_destroy(&g->jac));
    free(g->own);
    free(g->node);
    PetscCall(VecDestroy(&g->local));
    PetscCall(VecDestroy(&g->local2));
    PetscCall(DMDestroy(&g->da));
    ts_system_free(g->patch);
    ts_system_free(g->whole);
    free(g->x); /* the block */
    free(g);
    *gp = NULL;
    PetscFunctionReturn(0);
}

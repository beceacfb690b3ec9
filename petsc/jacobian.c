/* The assembled Jacobian J of a spring network's implicit form and the
 * velocity Schur complement S, with the preconditioner that eliminates the
 * positions and applies the user's PC to S; the formulas are in
 * petsc/internal.h.
 *
 * Both matrices are assembled per particle: one MatSetValuesBlocked call for
 * each of its three block rows (J's position and velocity rows, S's row)
 * from the 3x3 spring blocks of the fast path (ts_springs_block), taken at
 * two linearizations, (alpha, beta) = (1, 0) for K and (0, 1) for D.
 * Preallocation is exact, from the springs incident to each owned particle
 * (the cloth's 12 neighbours of a 25-node box stencil).
 *
 * Why a Schur complement: J's spectrum is a +- i omega for the springs'
 * frequencies omega >> a, which neither AMG nor incomplete factorizations
 * handle (GAMG on J diverged); S is the symmetric, with K clamped positive
 * definite, matrix AMG is made for.  With an exact S solve (-pc_type lu)
 * the outer Krylov method converges in one or two iterations.
 *
 * S's near-null space is GAMG's default for block size 3, the three
 * translations; -tstep_rigid_body adds the rotations about the particles'
 * positions (MatNullSpaceCreateRigidBody), which on the falling 100x100
 * cloth made GAMG diverge by the third Newton solve (11, 11, 42, 182
 * iterations, then none converged in 10,000): a flat membrane's
 * out-of-plane rotations are not near-null for S. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct tstep_petsc_jac {
    MPI_Comm comm;
    tstep_petsc_layout lay;
    PetscInt gstart;          /* first global particle this rank owns */
    size_t *adj_start, *adj;  /* springs incident to owned particle k: adj[adj_start[k] ..] */
    size_t maxdeg;
    double *kb, *db;          /* per spring, K's and D's block (xx xy xz yy yz zz) */
    double *kc;               /* K's blocks with compressed springs clamped (Choi & Ko), for S */
    PetscInt lag, assembled;  /* rebuild the PC of S every lag assemblies */
    PetscBool rigid;          /* S's near-null space: rigid-body modes (else GAMG's constants) */
    PetscInt *cols;           /* one block row's column blocks */
    PetscScalar *vals;        /* and its values, 3 rows of 3 ncols */
    PetscScalar *sorted;      /* the values with the columns sorted */
    PetscInt *perm, *scols;
    Mat J, S;
    Vec coords;               /* owned particles' positions (S's layout): the near-null space */
    double shift;
    PC inner;                 /* the user's preconditioner of S */
    Vec w1, w2, rhs, dv;
    int failed;
};
typedef struct tstep_petsc_jac jac;

static const int full9[9] = {0, 1, 2, 1, 3, 4, 2, 4, 5}; /* 3x3 from xx xy xz yy yz zz */

static PetscErrorCode jac_check(jac *j, int s)
{
    PetscFunctionBeginUser;
    if (s) {
        j->failed = s;
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "tstep: %s: %s", ts_status_message(s),
                ts_error_detail());
    }
    PetscFunctionReturn(0);
}

static int pinned_particle(const ts_springs *s, size_t p)
{
    return s->base.pinned && s->base.pinned[3 * p];
}

/* J's block of particle p's position (vel 0) or velocity (vel 1). */
static PetscInt jblock(const jac *j, size_t p, int vel)
{
    PetscInt g = j->lay.node[p];
    return j->lay.interlaced ? 2 * g + vel : vel * j->lay.nglobal + g;
}

static int owned(const jac *j, size_t p)
{
    PetscInt g = j->lay.node[p];
    return g >= j->gstart && g < j->gstart + j->lay.nown;
}

/* the other end of spring e at particle p */
static size_t other_end(const ts_springs *s, size_t e, size_t p)
{
    return s->si[e] == p ? s->sj[e] : s->si[e];
}

/* The springs incident to each owned particle (a CSR list). */
static PetscErrorCode build_adjacency(jac *j)
{
    ts_springs *s = j->lay.net;
    size_t nown = (size_t)j->lay.nown;
    size_t *slot = calloc(s->np, sizeof *slot); /* owned index + 1, 0 elsewhere */
    j->adj_start = calloc(nown + 1, sizeof *j->adj_start);
    PetscFunctionBeginUser;
    PetscCheck(slot && j->adj_start, j->comm, PETSC_ERR_MEM, "tstep: adjacency");
    for (size_t k = 0; k < nown; k++)
        slot[j->lay.own[k]] = k + 1;
    for (size_t e = 0; e < s->ns; e++) {
        if (slot[s->si[e]])
            j->adj_start[slot[s->si[e]]]++;
        if (slot[s->sj[e]])
            j->adj_start[slot[s->sj[e]]]++;
    }
    for (size_t k = 0; k < nown; k++) {
        j->maxdeg = PetscMax(j->maxdeg, j->adj_start[k + 1]);
        j->adj_start[k + 1] += j->adj_start[k];
    }
    j->adj = malloc((j->adj_start[nown] + 1) * sizeof *j->adj);
    size_t *fill = calloc(nown + 1, sizeof *fill);
    PetscCheck(j->adj && fill, j->comm, PETSC_ERR_MEM, "tstep: adjacency");
    for (size_t e = 0; e < s->ns; e++)
        for (int end = 0; end < 2; end++) {
            size_t k1 = slot[end ? s->sj[e] : s->si[e]];
            if (k1)
                j->adj[j->adj_start[k1 - 1] + fill[k1 - 1]++] = e;
        }
    free(fill);
    free(slot);
    PetscFunctionReturn(0);
}

typedef struct {
    PetscInt nb;                 /* block rows of 3 per owned particle */
    const PetscInt *dnnz, *onnz; /* each row's column blocks: owned, and the others */
    MatType type;
    const char *prefix;          /* its options' prefix */
} matrix_shape;

/* A matrix of nb block rows of 3 per owned particle (J: 2, S: 1), block size 3, the
 * rows' column blocks counted in dnnz (owned columns) and onnz. */
static PetscErrorCode create_matrix(jac *j, const matrix_shape *m, Mat *A)
{
    PetscInt nl = 3 * m->nb * j->lay.nown, N = 3 * m->nb * j->lay.nglobal;
    PetscFunctionBeginUser;
    PetscCall(MatCreate(j->comm, A));
    PetscCall(MatSetSizes(*A, nl, nl, N, N));
    PetscCall(MatSetBlockSize(*A, 3));
    PetscCall(MatSetOptionsPrefix(*A, m->prefix));
    PetscCall(MatSetType(*A, m->type));
    PetscCall(MatSetFromOptions(*A));
    PetscCall(MatXAIJSetPreallocation(*A, 3, m->dnnz, m->onnz, NULL, NULL));
    PetscFunctionReturn(0);
}

/* J and S preallocated: per owned particle with d owned and o other
 * neighbours (with repeats), J's position row 2 blocks, its velocity row
 * 2 (1 + d) and 2 o, S's row 1 + d and o. */
static PetscErrorCode create_matrices(jac *j)
{
    ts_springs *s = j->lay.net;
    PetscInt nown = j->lay.nown;
    PetscInt *dj = calloc(2 * (size_t)nown + 1, sizeof *dj), *oj = calloc(2 * (size_t)nown + 1, sizeof *oj);
    PetscInt *ds = calloc((size_t)nown + 1, sizeof *ds), *os = calloc((size_t)nown + 1, sizeof *os);
    PetscFunctionBeginUser;
    PetscCheck(dj && oj && ds && os, j->comm, PETSC_ERR_MEM, "tstep: preallocation");
    for (PetscInt k = 0; k < nown; k++) {
        size_t p = j->lay.own[k];
        PetscInt d = 1, o = 0;
        for (size_t a = j->adj_start[k]; a < j->adj_start[k + 1]; a++) {
            if (owned(j, other_end(s, j->adj[a], p)))
                d++;
            else
                o++;
        }
        PetscInt rx = j->lay.interlaced ? 2 * k : k, rv = j->lay.interlaced ? 2 * k + 1 : nown + k;
        dj[rx] = 2;
        dj[rv] = 2 * d;
        oj[rv] = 2 * o;
        ds[k] = d;
        os[k] = o;
    }
    /* J: BAIJ, assembled and multiplied by 3x3 blocks (a Jacobian of the
     * 100x100 cloth with S: 115 ms against 154 ms as AIJ, on a loaded
     * machine); S: AIJ, which GAMG and hypre need */
    PetscCall(create_matrix(j, &(matrix_shape){2, dj, oj, MATBAIJ, "tstep_J_"}, &j->J));
    PetscCall(create_matrix(j, &(matrix_shape){1, ds, os, MATAIJ, "tstep_S_"}, &j->S));
    PetscCall(MatSetOption(j->S, MAT_SYMMETRIC, PETSC_TRUE));
    PetscCall(MatSetOption(j->S, MAT_SYMMETRY_ETERNAL, PETSC_TRUE));
    free(dj), free(oj), free(ds), free(os);
    PetscFunctionReturn(0);
}

PetscErrorCode tstep_petsc_jac_create(MPI_Comm comm, const tstep_petsc_layout *lay, jac **out)
{
    PetscFunctionBeginUser;
    jac *j = calloc(1, sizeof *j);
    PetscCheck(j, comm, PETSC_ERR_MEM, "tstep: Jacobian");
    *out = j;
    j->comm = comm;
    j->lay = *lay;
    PetscCallMPI(MPI_Scan(&lay->nown, &j->gstart, 1, MPIU_INT, MPI_SUM, comm));
    j->gstart -= lay->nown;
    PetscCall(build_adjacency(j));
    size_t ns = lay->net->ns, ncols = 2 * (j->maxdeg + 1);
    j->kb = malloc((6 * ns + 1) * sizeof *j->kb);
    j->db = malloc((6 * ns + 1) * sizeof *j->db);
    j->kc = malloc((6 * ns + 1) * sizeof *j->kc);
    j->lag = 4;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-tstep_pc_lag", &j->lag, NULL));
    j->rigid = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-tstep_rigid_body", &j->rigid, NULL));
    j->cols = malloc(ncols * sizeof *j->cols);
    j->vals = malloc(9 * ncols * sizeof *j->vals);
    j->sorted = malloc(9 * ncols * sizeof *j->sorted);
    j->perm = malloc(ncols * sizeof *j->perm);
    j->scols = malloc(ncols * sizeof *j->scols);
    PetscCheck(j->kb && j->db && j->kc && j->cols && j->vals && j->sorted && j->perm && j->scols, comm, PETSC_ERR_MEM, "tstep: Jacobian");
    PetscCall(create_matrices(j));
    PetscCall(MatCreateVecs(j->S, &j->coords, &j->rhs));
    PetscCall(VecDuplicate(j->rhs, &j->dv));
    PetscCall(MatCreateVecs(j->J, &j->w1, &j->w2));
    PetscFunctionReturn(0);
}

/* Block b of a row of ncols blocks: scale * blk (3x3 from 6) + diag I. */
static void put_block(PetscScalar *vals, size_t ncols, size_t b, const double *blk6, double scale,
                      double diag)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            vals[(size_t)r * 3 * ncols + 3 * b + (size_t)c] =
                (blk6 ? scale * blk6[full9[3 * r + c]] : 0.0) + (r == c ? diag : 0.0);
}

/* sum of the 3x3 blocks (6 entries) of p's springs from blocks b */
static void block_sum(const jac *j, PetscInt k, const double *b, double sum[6])
{
    memset(sum, 0, 6 * sizeof *sum);
    for (size_t a = j->adj_start[k]; a < j->adj_start[k + 1]; a++)
        for (int q = 0; q < 6; q++)
            sum[q] += b[6 * j->adj[a] + (size_t)q];
}

/* Add a block row (row block r, nc column blocks in j->cols and j->vals) with
 * its columns sorted, so that PETSc's search for each entry starts where the
 * previous one ended (on the 100x100 cloth no faster than unsorted within
 * the measurements' noise: about 55 ms for all rows either way). */
static PetscErrorCode add_row(jac *j, Mat A, PetscInt r, size_t nc)
{
    PetscFunctionBeginUser;
    for (size_t i = 0; i < nc; i++) { /* insertion sort of the (at most 2 x 13) blocks */
        PetscInt c = j->cols[i];
        size_t k = i;
        for (; k > 0 && j->cols[j->perm[k - 1]] > c; k--)
            j->perm[k] = j->perm[k - 1];
        j->perm[k] = (PetscInt)i;
    }
    for (size_t i = 0; i < nc; i++)
        for (size_t rr = 0; rr < 3; rr++)
            memcpy(j->sorted + rr * 3 * nc + 3 * i, j->vals + rr * 3 * nc + 3 * (size_t)j->perm[i],
                   3 * sizeof *j->sorted);
    for (size_t i = 0; i < nc; i++)
        j->scols[i] = j->cols[j->perm[i]];
    PetscCall(MatSetValuesBlocked(A, 1, &r, (PetscInt)nc, j->scols, j->sorted, ADD_VALUES));
    PetscFunctionReturn(0);
}

/* J's velocity row of owned particle k (unpinned):
 *   (v_p, x_p) = sum K / m, (v_p, v_p) = (a + c) I + sum D / m,
 *   (v_p, x_q) = -K_e / m, (v_p, v_q) = -D_e / m, zero for a pinned q. */
static PetscErrorCode velocity_row(jac *j, PetscInt k, double a)
{
    ts_springs *s = j->lay.net;
    size_t p = j->lay.own[k], deg = j->adj_start[k + 1] - j->adj_start[k], nc = 2 * (deg + 1);
    double m = s->base.mass[3 * p], sk[6], sd[6];
    PetscFunctionBeginUser;
    block_sum(j, k, j->kb, sk);
    block_sum(j, k, j->db, sd);
    j->cols[0] = jblock(j, p, 0), j->cols[1] = jblock(j, p, 1);
    put_block(j->vals, nc, 0, sk, 1.0 / m, 0.0);
    put_block(j->vals, nc, 1, sd, 1.0 / m, a + s->opt.drag);
    for (size_t i = 0; i < deg; i++) {
        size_t e = j->adj[j->adj_start[k] + i], q = other_end(s, e, p);
        int pin = pinned_particle(s, q);
        j->cols[2 + 2 * i] = jblock(j, q, 0), j->cols[3 + 2 * i] = jblock(j, q, 1);
        put_block(j->vals, nc, 2 + 2 * i, pin ? NULL : j->kb + 6 * e, -1.0 / m, 0.0);
        put_block(j->vals, nc, 3 + 2 * i, pin ? NULL : j->db + 6 * e, -1.0 / m, 0.0);
    }
    PetscCall(add_row(j, j->J, jblock(j, p, 1), nc));
    PetscFunctionReturn(0);
}

/* S's row of owned particle k (unpinned):
 *   (p, p) = (a + c) m I + sum D + sum K / a,  (p, q) = -(D_e + K_e / a), zero for a pinned q. */
static PetscErrorCode schur_row(jac *j, PetscInt k, double a)
{
    ts_springs *s = j->lay.net;
    size_t p = j->lay.own[k], deg = j->adj_start[k + 1] - j->adj_start[k], nc = deg + 1;
    double m = s->base.mass[3 * p], sk[6], sd[6], b[6];
    PetscFunctionBeginUser;
    block_sum(j, k, j->kc, sk);
    block_sum(j, k, j->db, sd);
    for (int q = 0; q < 6; q++)
        b[q] = sd[q] + sk[q] / a;
    /* a pinned neighbour's column is left out, not stored as zeros: S's
     * pattern stays symmetric, which GAMG's parallel coarsening (MIS) needs
     * (with the zeros it never returned on two ranks) */
    size_t nq = 0;
    for (size_t i = 0; i < deg; i++)
        nq += !pinned_particle(s, other_end(s, j->adj[j->adj_start[k] + i], p));
    nc = nq + 1;
    j->cols[0] = j->lay.node[p];
    put_block(j->vals, nc, 0, b, 1.0, (a + s->opt.drag) * m);
    for (size_t i = 0, col = 1; i < deg; i++) {
        size_t e = j->adj[j->adj_start[k] + i], q = other_end(s, e, p);
        if (pinned_particle(s, q))
            continue;
        for (int c = 0; c < 6; c++)
            b[c] = j->kc[6 * e + (size_t)c] / a + j->db[6 * e + (size_t)c];
        j->cols[col] = j->lay.node[q];
        put_block(j->vals, nc, col++, b, -1.0, 0.0);
    }
    PetscCall(add_row(j, j->S, j->lay.node[p], nc));
    PetscFunctionReturn(0);
}

/* Owned particle k's three block rows; a pinned particle's are a I, a I and a m I. */
static PetscErrorCode particle_rows(jac *j, PetscInt k, double a)
{
    ts_springs *s = j->lay.net;
    size_t p = j->lay.own[k];
    int pin = pinned_particle(s, p);
    static const double minus_one[6] = {-1, 0, 0, -1, 0, -1};
    PetscFunctionBeginUser;
    j->cols[0] = jblock(j, p, 0), j->cols[1] = jblock(j, p, 1);
    put_block(j->vals, 2, 0, NULL, 0.0, a);
    put_block(j->vals, 2, 1, pin ? NULL : minus_one, 1.0, 0.0);
    PetscCall(MatSetValuesBlocked(j->J, 1, &j->cols[0], 2, j->cols, j->vals, ADD_VALUES));
    if (!pin) {
        PetscCall(velocity_row(j, k, a));
        PetscCall(schur_row(j, k, a));
        PetscFunctionReturn(0);
    }
    put_block(j->vals, 1, 0, NULL, 0.0, a);
    PetscCall(MatSetValuesBlocked(j->J, 1, &j->cols[1], 1, &j->cols[1], j->vals, ADD_VALUES));
    PetscInt r = j->lay.node[p];
    put_block(j->vals, 1, 0, NULL, 0.0, a * s->base.mass[3 * p]);
    PetscCall(MatSetValuesBlocked(j->S, 1, &r, 1, &r, j->vals, ADD_VALUES));
    PetscFunctionReturn(0);
}

/* The spring blocks of K (alpha, beta) = (1, 0), exact and clamped, and of
 * D (0, 1) at (x, v). */
static PetscErrorCode spring_blocks(jac *j, double t, const double *x, const double *v)
{
    ts_springs *s = j->lay.net;
    double *out[3] = {j->kb, j->kc, j->db};
    int fix = s->base.definite_fix;
    PetscFunctionBeginUser;
    for (int part = 0; part < 3; part++) {
        s->base.definite_fix = part == 1;
        int st = ts_system_linearize(&s->base, t, x, v, part < 2 ? 1.0 : 0.0, part < 2 ? 0.0 : 1.0);
        s->base.definite_fix = fix;
        PetscCall(jac_check(j, st));
        for (size_t e = 0; e < s->ns; e++)
            ts_springs_block(s, e, out[part] + 6 * e);
    }
    PetscFunctionReturn(0);
}

/* S's near-null space: the rigid-body modes of the owned particles' positions. */
static PetscErrorCode near_null_space(jac *j, const double *x)
{
    PetscScalar *c;
    MatNullSpace nsp;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(j->coords, &c));
    for (PetscInt k = 0; k < j->lay.nown; k++)
        memcpy(c + 3 * k, x + 3 * j->lay.own[k], 3 * sizeof *c);
    PetscCall(VecRestoreArray(j->coords, &c));
    PetscCall(MatNullSpaceCreateRigidBody(j->coords, &nsp));
    PetscCall(MatSetNearNullSpace(j->S, nsp));
    PetscCall(MatNullSpaceDestroy(&nsp));
    PetscFunctionReturn(0);
}

PetscErrorCode tstep_petsc_jac_assemble(jac *j, double t, const double *x, const double *v, double a)
{
    PetscFunctionBeginUser;
    j->shift = a;
    PetscCall(spring_blocks(j, t, x, v));
    PetscCall(MatZeroEntries(j->J));
    PetscCall(MatZeroEntries(j->S));
    for (PetscInt k = 0; k < j->lay.nown; k++)
        PetscCall(particle_rows(j, k, a));
    PetscCall(MatAssemblyBegin(j->J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(j->S, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(j->J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(j->S, MAT_FINAL_ASSEMBLY));
    if (j->rigid)
        PetscCall(near_null_space(j, x));
    PetscFunctionReturn(0);
}

Mat tstep_petsc_jac_matrix(jac *j) { return j->J; }

int tstep_petsc_jac_failure(const jac *j) { return j ? j->failed : 0; }

/* --- the Schur preconditioner ------------------------------------------------ */

/* local index of owned particle k's position (vel 0) or velocity dof c */
static PetscInt local_dof(const jac *j, PetscInt k, int vel, int c)
{
    if (j->lay.interlaced)
        return 6 * k + 3 * vel + c;
    return 3 * vel * j->lay.nown + 3 * k + c;
}

/* z = P^-1 r:  rhs = M (rv - (A [rx / a; 0])_v) = M rv + K rx / a,
 * dv = PC_S(rhs),  dx = (rx + P dv) / a,  with A the operator (J or the
 * exact matrix-free product). */
static PetscErrorCode schur_apply(PC pc, Vec r, Vec z)
{
    jac *j;
    Mat A;
    const PetscScalar *ra, *wa, *d;
    PetscScalar *w, *b, *za;
    PetscFunctionBeginUser;
    PetscCall(PCShellGetContext(pc, &j));
    PetscCall(PCGetOperators(pc, &A, NULL));
    const ts_springs *s = j->lay.net;
    double a = j->shift;
    PetscCall(VecGetArrayRead(r, &ra));
    PetscCall(VecGetArray(j->w1, &w));
    for (PetscInt k = 0; k < j->lay.nown; k++)
        for (int c = 0; c < 3; c++) {
            w[local_dof(j, k, 0, c)] = ra[local_dof(j, k, 0, c)] / a;
            w[local_dof(j, k, 1, c)] = 0.0;
        }
    PetscCall(VecRestoreArray(j->w1, &w));
    PetscCall(MatMult(A, j->w1, j->w2));
    PetscCall(VecGetArrayRead(j->w2, &wa));
    PetscCall(VecGetArray(j->rhs, &b));
    for (PetscInt k = 0; k < j->lay.nown; k++)
        for (int c = 0; c < 3; c++) {
            PetscInt iv = local_dof(j, k, 1, c);
            b[3 * k + c] = s->base.mass[3 * j->lay.own[k]] * (ra[iv] - wa[iv]);
        }
    PetscCall(VecRestoreArray(j->rhs, &b));
    PetscCall(VecRestoreArrayRead(j->w2, &wa));
    PetscCall(PCApply(j->inner, j->rhs, j->dv));
    PetscCall(VecGetArrayRead(j->dv, &d));
    PetscCall(VecGetArray(z, &za));
    for (PetscInt k = 0; k < j->lay.nown; k++) {
        int pin = pinned_particle(s, j->lay.own[k]);
        for (int c = 0; c < 3; c++) {
            PetscInt ix = local_dof(j, k, 0, c);
            za[local_dof(j, k, 1, c)] = d[3 * k + c];
            za[ix] = (ra[ix] + (pin ? 0.0 : d[3 * k + c])) / a;
        }
    }
    PetscCall(VecRestoreArray(z, &za));
    PetscCall(VecRestoreArrayRead(j->dv, &d));
    PetscCall(VecRestoreArrayRead(r, &ra));
    PetscFunctionReturn(0);
}

/* The PC of S is rebuilt at every lag-th assembly (-tstep_pc_lag, default
 * 4: the 100x100 cloth's steps 1.5x faster than 1, the same Newton
 * iterations); between, it keeps its hierarchy while its finest level sees
 * the new S. */
static PetscErrorCode schur_setup(PC pc)
{
    jac *j;
    PetscFunctionBeginUser;
    PetscCall(PCShellGetContext(pc, &j));
    PetscBool reuse = j->assembled++ % PetscMax(j->lag, 1) ? PETSC_TRUE : PETSC_FALSE;
    PetscCall(PCSetReusePreconditioner(j->inner, reuse));
    PetscCall(PCSetUp(j->inner));
    PetscFunctionReturn(0);
}

static PetscErrorCode schur_view(PC pc, PetscViewer viewer)
{
    jac *j;
    PetscFunctionBeginUser;
    PetscCall(PCShellGetContext(pc, &j));
    PetscCall(PetscViewerASCIIPrintf(viewer, "tstep: positions eliminated; on the velocity "
                                             "Schur complement S = a M - D - K/a:\n"));
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(PCView(j->inner, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
    PetscFunctionReturn(0);
}

PetscErrorCode tstep_petsc_jac_use_schur(jac *j, KSP ksp)
{
    PC pc;
    const char *prefix;
    PetscFunctionBeginUser;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCGetOptionsPrefix(pc, &prefix));
    PetscCall(PCCreate(j->comm, &j->inner));
    PetscCall(PCSetOptionsPrefix(j->inner, prefix));
    PetscCall(PCSetOperators(j->inner, j->S, j->S));
    PetscCall(PCSetType(j->inner, PCGAMG));
    /* no aggressive (squared-graph) coarsening: its aggregates grew too coarse for the cloth's
     * anisotropic S (15-20 iterations a Newton solve against 9-12) */
    PetscCall(PCGAMGSetAggressiveLevels(j->inner, 0));
    PetscCall(PCSetFromOptions(j->inner));
    PetscCall(PCSetType(pc, PCSHELL));
    PetscCall(PCShellSetContext(pc, j));
    PetscCall(PCShellSetName(pc, "tstep velocity Schur complement"));
    PetscCall(PCShellSetApply(pc, schur_apply));
    PetscCall(PCShellSetSetUp(pc, schur_setup));
    PetscCall(PCShellSetView(pc, schur_view));
    PetscFunctionReturn(0);
}

PetscErrorCode tstep_petsc_read_options(tstep_petsc_options *o)
{
    PetscFunctionBeginUser;
    o->matrix_free = PETSC_FALSE;
    o->schur = PETSC_TRUE;
    PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "tstep bridge options", NULL);
    PetscCall(PetscOptionsBool("-tstep_matrix_free", "operator: the exact matrix-free product (J "
                               "stays the preconditioning matrix)", NULL, o->matrix_free,
                               &o->matrix_free, NULL));
    PetscCall(PetscOptionsBool("-tstep_schur", "precondition through the velocity Schur "
                               "complement (false: -pc_type acts on J)", NULL, o->schur, &o->schur,
                               NULL));
    PetscOptionsEnd();
    PetscFunctionReturn(0);
}

PetscErrorCode tstep_petsc_jac_destroy(jac **jp)
{
    PetscFunctionBeginUser;
    if (!jp || !*jp)
        PetscFunctionReturn(0);
    jac *j = *jp;
    PetscCall(PCDestroy(&j->inner));
    PetscCall(MatDestroy(&j->J));
    PetscCall(MatDestroy(&j->S));
    PetscCall(VecDestroy(&j->coords));
    PetscCall(VecDestroy(&j->rhs));
    PetscCall(VecDestroy(&j->dv));
    PetscCall(VecDestroy(&j->w1));
    PetscCall(VecDestroy(&j->w2));
    free(j->adj_start), free(j->adj), free(j->kb), free(j->db), free(j->kc), free(j->cols), free(j->vals), free(j->sorted), free(j->perm), free(j->scols);
    free(j);
    *jp = NULL;
    PetscFunctionReturn(0);
}

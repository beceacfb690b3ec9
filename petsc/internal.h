/* petsc/internal.h - what bridge.c and grid.c share (not installed): the
 * assembled Jacobian of a spring network's implicit form and the velocity
 * Schur complement preconditioner built on it (petsc/jacobian.c).
 *
 * The implicit form F(t, U, U') = U' - G(t, U), U = [x; v], has the Jacobian
 *   J = a I - G' = [ a I          -P         ]
 *                  [ -M^-1 K      a I - M^-1 D ]
 * with K = df/dx and D = df/dv of the fast path (tstep/springs.h: the
 * symmetric 3x3 spring blocks, the drag on D's diagonal) and P the
 * unpinned projection; pinned rows are a I alone and pinned columns zero
 * (a Newton update never moves a pinned entry: its residual is zero).
 * Eliminating the position block (exactly: it is a I) leaves
 *   S dv = M (rv + M^-1 K rx / a),   S = a M - D - K / a,   dx = (rx + P dv) / a
 * where S is the velocity Schur complement, symmetric, and for a = 1/h the
 * matrix (M - h D - h^2 K) / h tstep's own implicit solvers use; pinned rows
 * a M.  Both are stored as AIJ (or -tstep_mat_type baij) with block size
 * 3, one block a particle's position or velocity.  The preconditioner the
 * user chooses (-pc_type gamg, hypre, bjacobi, lu, ...) is applied to S,
 * which carries the rigid-body near-null space of the particles' positions. */
#ifndef TSTEP_PETSC_INTERNAL_H
#define TSTEP_PETSC_INTERNAL_H

#include "tstep/petsc.h"
#include "tstep/springs.h"

/* Where a network's particles sit in PETSc's vectors and matrices. */
typedef struct {
    ts_springs *net;      /* the serial network, or this rank's patch */
    PetscInt nown;        /* particles this rank owns (rows it assembles) */
    const size_t *own;    /* network index of owned particle k, in the local vectors' order */
    const PetscInt *node; /* global particle number (PETSc's order) of each network particle */
    PetscInt nglobal;     /* particles on all ranks */
    int interlaced;       /* 1: per particle [x, v] (the DMDA); 0: [x; v] (one rank) */
} tstep_petsc_layout;

typedef struct tstep_petsc_jac tstep_petsc_jac;

PetscErrorCode tstep_petsc_jac_create(MPI_Comm comm, const tstep_petsc_layout *lay,
                                      tstep_petsc_jac **out);
/* J and S at the network state (x, v) (network arrays, valid while the
 * matrices are used) with shift a. */
PetscErrorCode tstep_petsc_jac_assemble(tstep_petsc_jac *jac, double t, const double *x,
                                        const double *v, double a);
Mat tstep_petsc_jac_matrix(tstep_petsc_jac *jac);
/* The KSP's preconditioner becomes the Schur elimination with the PC that
 * -pc_type (default gamg) names applied to S; call after the options. */
PetscErrorCode tstep_petsc_jac_use_schur(tstep_petsc_jac *jac, KSP ksp);
int tstep_petsc_jac_failure(const tstep_petsc_jac *jac);
PetscErrorCode tstep_petsc_jac_destroy(tstep_petsc_jac **jac);

/* The implicit types' linear solver: GMRES with modified Gram-Schmidt, then
 * the options; with jac and schur the Schur preconditioner around -pc_type
 * (default gamg), else -pc_type on the preconditioning matrix (default none). */
PetscErrorCode tstep_petsc_set_solver(TS ts, tstep_petsc_jac *jac, PetscBool schur);

/* Bridge options read from the database (-tstep_matrix_free, -tstep_schur). */
typedef struct {
    PetscBool matrix_free; /* the operator is the exact matrix-free product */
    PetscBool schur;       /* precondition through S (else -pc_type acts on J) */
} tstep_petsc_options;
PetscErrorCode tstep_petsc_read_options(tstep_petsc_options *o);

#endif

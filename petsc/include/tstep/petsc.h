/* tstep/petsc.h - a tstep system as a PETSc TS problem (the optional PETSc
 * bridge: make deps-petsc && make petsc; docs/petsc.md).
 *
 * The system's first-order view Y' = G(t, Y) (Y = [x; v], G = [v; M^-1 f],
 * pinned degrees of freedom with zero derivative; tstep/system.h) is handed
 * to TS in one of the two forms TS knows:
 *   explicit TS types (euler, rk, ssp): U' = G(t, U) by TSSetRHSFunction;
 *   every other type (beuler, cn, theta, bdf, arkimex, ...): the implicit
 *     form F(t, U, U') = U' - G(t, U) = 0 by TSSetIFunction, with the
 *     Jacobian dF/dU + a dF/dU' = a I - G'(U) by TSSetIJacobian:
 *       spring networks (string, hair, cloth): assembled, block size 3, from
 *         the 3x3 spring blocks, preconditioned through the velocity Schur
 *         complement S = a M - D - K/a with the PC -pc_type names (default
 *         gamg) acting on S (petsc/internal.h, petsc/jacobian.c);
 *         -tstep_matrix_free makes the operator the exact product below;
 *       other systems: a MatShell on the system's Jacobian products,
 *         G' [ux; uv] = [uv; M^-1 (df/dx ux + df/dv uv)]   (order 2)
 *         G' u        = M^-1 df/dx u                      (order 1)
 *       pinned rows zero in G', so pinned entries never move.  The shell
 *       also gives its diagonal (-pc_type jacobi) where the system has
 *       jacobian_diag; no preconditioner unless asked.
 *     GMRES uses modified Gram-Schmidt.
 * The system's post-step projection (collider, strain limit) runs after
 * each accepted TS step (TSSetPostStep; the bridge is then the TS's
 * application context).  tstep_petsc_attach is sequential (vectors on PETSC_COMM_SELF); the grid
 * cloth runs distributed through tstep_petsc_grid_* below. */
#ifndef TSTEP_PETSC_H
#define TSTEP_PETSC_H

#include <petscts.h>
#include "tstep/params.h"
#include "tstep/stepper.h"
#include "tstep/system.h"

typedef struct tstep_petsc tstep_petsc;

/* Set ts's functions for sys according to the TS type set now (call after
 * TSSetType / TSSetFromOptions).  sys must outlive the bridge; U vectors
 * have ts_system_ydim(sys) entries (fill one with ts_system_get_y). */
PetscErrorCode tstep_petsc_attach(TS ts, ts_system *sys, tstep_petsc **out);
PetscErrorCode tstep_petsc_destroy(tstep_petsc **b);

/* The tstep status of a failed callback (0 if none), for messages. */
int tstep_petsc_failure(const tstep_petsc *b);

/* 1 if TS type `type` takes the right-hand side alone (explicit). */
int tstep_petsc_explicit_type(const char *type);

/* The implicit types' linear solver for a matrix-free Jacobian: GMRES
 * (modified Gram-Schmidt), no preconditioner; options override. */
PetscErrorCode tstep_petsc_default_solver(TS ts);

/* --- the grid cloth distributed over MPI ranks (petsc/grid.c) -----------
 * The cloth's nx x ny particles are the nodes of a 2-D DMDA (6 dof per node:
 * x, y, z, vx, vy, vz; box stencil of width 2 for the flexion springs).
 * Each rank computes the forces and Jacobian products of its nodes from a
 * spring network over its ghosted nodes (the same src/springs/springs.c code as
 * the serial cloth), so results agree with one rank to solver tolerance. */
typedef struct tstep_petsc_grid tstep_petsc_grid;

/* The cloth of `type` (the grid cloth) with `params` on communicator comm;
 * refuses (PETSC_ERR_LIB, detail in ts_error_detail) a collider or strain
 * limit, which this path does not apply. */
PetscErrorCode tstep_petsc_grid_create(MPI_Comm comm, const ts_system_type *type,
                                       const ts_params *params, tstep_petsc_grid **out);
/* A new global vector holding the cloth's initial state (DMDA layout). */
PetscErrorCode tstep_petsc_grid_state(tstep_petsc_grid *g, Vec *U);
/* Set ts's DM and functions according to its type (as tstep_petsc_attach). */
PetscErrorCode tstep_petsc_grid_attach(TS ts, tstep_petsc_grid *g);
/* Collective; rank 0 receives the state in tstep's layout [x; v] in y
 * (6 nx ny doubles). */
PetscErrorCode tstep_petsc_grid_gather(tstep_petsc_grid *g, Vec U, double *y);
/* Rank 0: the whole serial cloth (for output and energy); NULL elsewhere. */
ts_system *tstep_petsc_grid_system(tstep_petsc_grid *g);
int tstep_petsc_grid_failure(const tstep_petsc_grid *g);
PetscErrorCode tstep_petsc_grid_destroy(tstep_petsc_grid **g);

#endif

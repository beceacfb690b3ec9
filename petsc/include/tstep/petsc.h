/* tstep/petsc.h - a tstep system as a PETSc TS problem (the optional PETSc
 * bridge: make deps-petsc && make petsc; docs/petsc.md).
 *
 * The system's first-order view Y' = G(t, Y) (Y = [x; v], G = [v; M^-1 f],
 * pinned degrees of freedom with zero derivative; tstep/system.h) is handed
 * to TS in one of the two forms TS knows:
 *   explicit TS types (euler, rk, ssp): U' = G(t, U) by TSSetRHSFunction;
 *   every other type (beuler, cn, theta, bdf, arkimex, ...): the implicit
 *     form F(t, U, U') = U' - G(t, U) = 0 by TSSetIFunction, with the
 *     Jacobian dF/dU + a dF/dU' = a I - G'(U) a MatShell built on the
 *     system's Jacobian products,
 *       G' [ux; uv] = [uv; M^-1 (df/dx ux + df/dv uv)]   (order 2)
 *       G' u        = M^-1 df/dx u                      (order 1)
 *     pinned rows zero, so pinned entries never move.  The shell also gives
 *     its diagonal (-pc_type jacobi) where the system has jacobian_diag; the
 *     default preconditioner is none, and GMRES uses modified Gram-Schmidt.
 * Sequential: the vectors live on PETSC_COMM_SELF. */
#ifndef TSTEP_PETSC_H
#define TSTEP_PETSC_H

#include <petscts.h>
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

#endif

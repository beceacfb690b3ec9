/* jacobi: the diagonal preconditioner P = diag(A),
 *
 *   z_i = r_i / A_ii,   A = M - alpha df/dx - beta df/dv,
 *
 * the diagonal coming from the system's jacobian_diag (M alone without it;
 * M also where A_ii <= 0, so that P stays positive definite).  The cheapest
 * preconditioner: one division per entry, no setup beyond the diagonal the
 * driver computes at every linearization.  Baraff & Witkin, "Large Steps in
 * Cloth Simulation", SIGGRAPH 1998, sec. 5.3; Saad, Iterative Methods for
 * Sparse Linear Systems, 2nd ed., 10.2. */
#include <stdlib.h>
#include "tstep/linsolve.h"

typedef struct {
    size_t n;
    const double *diag;
} jacobi_state;

static int jacobi_alloc(const ts_linsolve *ls, const ts_system *sys, void **state)
{
    (void)sys;
    jacobi_state *s = malloc(sizeof *s);
    if (!s)
        return ts_error(TS_ERR_NOMEM, "jacobi preconditioner");
    s->n = ls->n;
    s->diag = ls->diag;
    *state = s;
    return TS_OK;
}

static void jacobi_apply(void *state, const double *r, double *z)
{
    const jacobi_state *s = state;
    for (size_t i = 0; i < s->n; i++)
        z[i] = r[i] / s->diag[i];
}

const ts_precond_type ts_precond_jacobi = {
    .name = "jacobi",
    .summary = "diagonal of A (Baraff-Witkin's modified PCG)",
    .alloc = jacobi_alloc,
    .apply = jacobi_apply,
    .free = free,
};

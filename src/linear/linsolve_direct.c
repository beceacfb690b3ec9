/* direct: sparse Cholesky, whose code is in the extension, libtstep-ext
 * (src/ext/linsolve_cholmod.c: SuiteSparse CHOLMOD, the algorithm and its
 * references).  This entry of the registry forwards each operation to it,
 * so the core links no CHOLMOD; without the extension alloc fails with
 * "linear solver 'direct' needs libtstep-ext (CHOLMOD): not installed". */
#include <stdlib.h>
#include "tstep/linsolve.h"
#include "core/ext.h"

typedef struct {
    const ts_linsolve_type *impl; /* the extension's solver */
    void *state;                  /* its state */
} direct_proxy;

static void proxy_free(void *state)
{
    direct_proxy *p = state;
    if (p && p->impl->free)
        p->impl->free(p->state);
    free(p);
}

static int proxy_alloc(const ts_linsolve *ls, const ts_system *sys, void **state)
{
    const ts_linsolve_type *impl = ts_ext_need("direct", "linear solver 'direct'", "CHOLMOD");
    *state = NULL;
    if (!impl)
        return TS_ERR_UNSUPPORTED;
    direct_proxy *p = calloc(1, sizeof *p);
    if (!p)
        return ts_error(TS_ERR_NOMEM, "direct solver");
    p->impl = impl;
    *state = p;
    return impl->alloc ? impl->alloc(ls, sys, &p->state) : TS_OK;
}

static int proxy_setup(void *state, const ts_linsolve *ls, ts_system *sys)
{
    direct_proxy *p = state;
    return p->impl->setup(p->state, ls, sys);
}

static int proxy_solve(void *state, const ts_linsolve *ls, ts_system *sys,
                       ts_linsolve_request *req)
{
    direct_proxy *p = state;
    return p->impl->solve(p->state, ls, sys, req);
}

static void proxy_fallback_apply(void *state, const double *r, double *z)
{
    direct_proxy *p = state;
    p->impl->fallback_apply(p->state, r, z);
}

const ts_linsolve_type ts_linsolve_direct = {
    .name = "direct",
    .summary = "sparse Cholesky of the assembled A (SuiteSparse CHOLMOD)",
    .needs_matrix = TS_MATRIX_LOWER,
    .alloc = proxy_alloc,
    .setup = proxy_setup,
    .solve = proxy_solve,
    .fallback_apply = proxy_fallback_apply,
    .free = proxy_free,
};

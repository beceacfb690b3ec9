/* The LAPACK (through LAPACKE) and ARPACK routines the core calls
 * (core/lapack.h): the library functions themselves, so each assignment
 * checks its prototype against the table's. */
#include <lapacke.h>
#include "ext/ext.h"

_Static_assert(sizeof(lapack_int) == sizeof(int), "lapack_int is int");
_Static_assert(LAPACK_ROW_MAJOR == TS_LAPACK_ROW_MAJOR && LAPACK_COL_MAJOR == TS_LAPACK_COL_MAJOR,
               "LAPACKE's layouts");

extern void dnaupd_(int *ido, const char *bmat, int *n, const char *which, int *nev,
                    double *tol, double *resid, int *ncv, double *v, int *ldv, int *iparam,
                    int *ipntr, double *workd, double *workl, int *lworkl, int *info,
                    size_t bmat_len, size_t which_len);
extern void dneupd_(int *rvec, const char *howmny, int *select, double *dr, double *di,
                    double *z, int *ldz, double *sigmar, double *sigmai, double *workev,
                    const char *bmat, int *n, const char *which, int *nev, double *tol,
                    double *resid, int *ncv, double *v, int *ldv, int *iparam, int *ipntr,
                    double *workd, double *workl, int *lworkl, int *info, size_t howmny_len,
                    size_t bmat_len, size_t which_len);

const ts_lapack ts_ext_lapack = {
    .dgeev = LAPACKE_dgeev,
    .dgels = LAPACKE_dgels,
    .dstev = LAPACKE_dstev,
    .dpotrf = LAPACKE_dpotrf,
    .dpotrs = LAPACKE_dpotrs,
    .zgetrf = LAPACKE_zgetrf,
    .zgetrs = LAPACKE_zgetrs,
    .dnaupd = dnaupd_,
    .dneupd = dneupd_,
};

/* The LAPACK and ARPACK routines tstep calls, as a table the extension
 * fills (src/core, private; core/ext.h).  The prototypes are LAPACKE's and
 * ARPACK's own (lapack_int is int, lapack_complex_double double _Complex),
 * so the extension assigns the library functions themselves and the
 * compiler checks each type there (src/ext/lapack.c). */
#ifndef TSTEP_CORE_LAPACK_H
#define TSTEP_CORE_LAPACK_H

#include <stddef.h>

#define TS_LAPACK_ROW_MAJOR 101 /* LAPACK_ROW_MAJOR */
#define TS_LAPACK_COL_MAJOR 102 /* LAPACK_COL_MAJOR */

typedef struct {
    int (*dgeev)(int layout, char jobvl, char jobvr, int n, double *a, int lda, double *wr,
                 double *wi, double *vl, int ldvl, double *vr, int ldvr);
    int (*dgels)(int layout, char trans, int m, int n, int nrhs, double *a, int lda, double *b,
                 int ldb);
    int (*dstev)(int layout, char jobz, int n, double *d, double *e, double *z, int ldz);
    int (*dpotrf)(int layout, char uplo, int n, double *a, int lda);
    int (*dpotrs)(int layout, char uplo, int n, int nrhs, const double *a, int lda, double *b,
                  int ldb);
    int (*zgetrf)(int layout, int m, int n, double _Complex *a, int lda, int *ipiv);
    int (*zgetrs)(int layout, char trans, int n, int nrhs, const double _Complex *a, int lda,
                  const int *ipiv, double _Complex *b, int ldb);
    /* ARPACK's reverse-communication Arnoldi (Fortran, hidden string lengths) */
    void (*dnaupd)(int *ido, const char *bmat, int *n, const char *which, int *nev, double *tol,
                   double *resid, int *ncv, double *v, int *ldv, int *iparam, int *ipntr,
                   double *workd, double *workl, int *lworkl, int *info, size_t bmat_len,
                   size_t which_len);
    void (*dneupd)(int *rvec, const char *howmny, int *select, double *dr, double *di,
                   double *z, int *ldz, double *sigmar, double *sigmai, double *workev,
                   const char *bmat, int *n, const char *which, int *nev, double *tol,
                   double *resid, int *ncv, double *v, int *ldv, int *iparam, int *ipntr,
                   double *workd, double *workl, int *lworkl, int *info, size_t howmny_len,
                   size_t bmat_len, size_t which_len);
} ts_lapack;

#endif

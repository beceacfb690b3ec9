/* The extension's parts, which src/ext/ext.c names in its table (src/ext,
 * private; core/ext.h says how the core finds them). */
#ifndef TSTEP_EXT_EXT_H
#define TSTEP_EXT_EXT_H

#include "tstep/linsolve.h"
#include "analysis/grade_worker.h"
#include "core/lapack.h"
#include "core/parallel.h"

extern const ts_linsolve_type ts_ext_cholmod;  /* "direct": linsolve_cholmod.c */
extern const ts_lapack ts_ext_lapack;          /* "lapack": lapack.c */
extern const ts_threads_ops ts_ext_threads;    /* "threads": threads.c */
extern const ts_seccomp_ops ts_ext_seccomp;    /* "seccomp": seccomp.c */

#endif

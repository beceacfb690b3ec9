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

/* threads.c's count of the tasks running besides the process's own threads
 * (a look at the machine), from a reader of the machine's count
 * (/proc/loadavg's) and one of the process's threads running: what the
 * tests check with scripted readers; ctx goes to both.  -1 when a reader
 * fails. */
typedef long (*ts_count_fn)(void *ctx);
long ts_threads_others(long cpus, int asked, ts_count_fn machine, ts_count_fn own, void *ctx);

#endif

/* The extension: the parts of tstep with heavy dependencies (src/core,
 * private; docs/internals.md, "The core library and the extension").
 *
 * libtstep links only libc and libm.  The CHOLMOD direct solver, LAPACK and
 * ARPACK (the spectrum, the stability of the run map, the multigrid's
 * coarse solve), the grader's seccomp filter and the OpenMP thread team
 * live in a second library, libtstep-ext, which names each of them in a
 * table of entries (src/ext/ext.c) and hands that table to the core from a
 * constructor when it is loaded.  A program gets it by linking it (the
 * tstep program, pkg-config tstep-ext) or, when the core is the shared
 * library, by asking for a heavy part: the core then loads
 * libtstep-ext.so.SOMAJOR itself.  The core knows the entries by name only,
 * so no arrow points up: each layer casts an entry to the type it declares. */
#ifndef TSTEP_CORE_EXT_H
#define TSTEP_CORE_EXT_H

typedef struct {
    const char *name; /* "threads", "lapack", "direct", "seccomp" */
    const void *entry;
} ts_ext_entry;

/* Called by the extension when it is loaded: entries ends with a NULL name. */
void ts_ext_register(const ts_ext_entry *entries);

/* The entry `name`, loading the extension if it is not there yet and can be
 * loaded (load 0: only if already linked or loaded); NULL if absent. */
const void *ts_ext_find(const char *name, int load);

/* ts_ext_find(name, 1), and when absent an error (ts_error, TS_ERR_UNSUPPORTED)
 * "FEATURE needs libtstep-ext (DEP): not installed" with the loader's reason. */
const void *ts_ext_need(const char *name, const char *feature, const char *dep);

#endif

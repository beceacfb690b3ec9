/* The extension's table and its registration with the core (core/ext.h):
 * a constructor, so that linking libtstep-ext, or the core's dlopen of it,
 * is all it takes.  tstep_ext_entries is the one symbol libtstep-ext.so
 * exports (tools/libtstep-ext.map): pkg-config's tstep-ext.pc names it
 * with -Wl,-u so a static link pulls this object out of libtstep-ext.a. */
#include <stddef.h>
#include "ext/ext.h"
#include "core/ext.h"

const ts_ext_entry tstep_ext_entries[] = {
#ifdef _OPENMP
    {"threads", &ts_ext_threads},
#endif
    {"lapack", &ts_ext_lapack},
    {"direct", &ts_ext_cholmod},
    {"seccomp", &ts_ext_seccomp},
    {NULL, NULL},
};

__attribute__((constructor)) static void ext_register(void) { ts_ext_register(tstep_ext_entries); }

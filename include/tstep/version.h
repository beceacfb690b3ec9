/* tstep/version.h - the version of the tstep headers.
 *
 * TSTEP_VERSION_* describe the headers a program was compiled against;
 * tstep_version() (tstep/tstep.h) returns the version of the library it
 * runs with.  The shared library's soname carries the major version
 * (libtstep.so.MAJOR); the Makefile reads the numbers from this file. */
#ifndef TSTEP_VERSION_H
#define TSTEP_VERSION_H

#define TSTEP_VERSION_MAJOR 0
#define TSTEP_VERSION_MINOR 1
#define TSTEP_VERSION_PATCH 0
#define TSTEP_VERSION "0.1.0"

/* MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */
#define TSTEP_VERSION_NUMBER \
    (TSTEP_VERSION_MAJOR * 10000 + TSTEP_VERSION_MINOR * 100 + TSTEP_VERSION_PATCH)

#endif

/* tstep/tstep.h - the whole public API, the command-line program as a
 * function, and plugins.
 *
 * Including this header includes every public tstep header.  It adds two
 * ways to use your own steppers and systems with every tstep command
 * (list, run, sweep, stability, amplification, region, check-system...):
 *
 * A plugin: a shared object built against the installed headers,
 *
 *     #include <tstep/tstep.h>
 *     static int ralston_step(...) { ... }
 *     static const ts_stepper_type ralston = { .name = "ralston", ... };
 *     const ts_stepper_type *const tstep_plugin_steppers[] = {&ralston, NULL};
 *     TSTEP_PLUGIN();
 *
 *     cc -shared -fPIC $(pkg-config --cflags tstep) ralston.c -o ralston.so
 *     tstep --plugin ./ralston.so sweep --system oscillator --stepper ralston,rk4
 *
 * (several --plugin options load several files; so does TSTEP_PLUGINS, a
 * colon-separated list of files, loaded before the --plugin ones).  A plugin
 * exports tstep_plugin_steppers and/or tstep_plugin_systems, NULL-terminated,
 * and the interface version through TSTEP_PLUGIN().  Its types join the
 * registries after the built-in ones.
 *
 * Your own program: link your types with the library and call tstep_main,
 *
 *     #include <tstep/tstep.h>
 *     int main(int argc, char **argv)
 *     {
 *         return tstep_main(argc, argv, tstep_plugin_steppers, tstep_plugin_systems);
 *     }
 *
 *     cc mytstep.c ralston.c pendulum.c $(pkg-config --cflags tstep) \
 *        $(pkg-config --static --libs tstep-ext | sed 's/-ltstep\([-a-z]*\)/-l:libtstep\1.a/g') \
 *        -o mytstep
 *
 * (the same plugin files: TSTEP_PLUGIN() may appear in each of them; the
 * sed picks the static archives libtstep-ext.a and libtstep.a).  The
 * command line's heavy features (the direct solver, the spectrum, threads,
 * the grader's filter) are in libtstep-ext; without it, linked with
 * $(pkg-config --static --libs tstep) alone (libtstep.a, -lm), they fail
 * with a message naming it.
 *
 * docs/students.md walks through both. */
#ifndef TSTEP_TSTEP_H
#define TSTEP_TSTEP_H

#include "tstep/butcher.h"
#include "tstep/check.h"
#include "tstep/grade.h"
#include "tstep/implicit.h"
#include "tstep/linalg.h"
#include "tstep/obj.h"
#include "tstep/params.h"
#include "tstep/run.h"
#include "tstep/springs.h"
#include "tstep/stability.h"
#include "tstep/status.h"
#include "tstep/stepper.h"
#include "tstep/system.h"
#include "tstep/version.h"

/* The plugin interface version: raised whenever a change to the public
 * structs (ts_stepper_type, ts_system_type, ts_system, ts_system_ops, ...)
 * or to the functions a plugin calls would break a plugin built before it.
 * tstep refuses a plugin built for another version. */
#define TSTEP_PLUGIN_ABI 3

/* What a plugin defines (the arrays NULL-terminated; either may be absent). */
extern const int tstep_plugin_abi;
extern const ts_stepper_type *const tstep_plugin_steppers[];
extern const ts_system_type *const tstep_plugin_systems[];

/* One line at file scope in a plugin: TSTEP_PLUGIN();
 * The symbol is weak where the compiler allows it, so several plugin files
 * (a stepper's and a system's) also link together into one program. */
#if defined(__GNUC__)
#define TSTEP_PLUGIN() __attribute__((weak)) const int tstep_plugin_abi = TSTEP_PLUGIN_ABI
#else
#define TSTEP_PLUGIN() const int tstep_plugin_abi = TSTEP_PLUGIN_ABI
#endif

/* Load the plugin file at `path` (dlopen; a name without '/' is the file of
 * that name in the current folder, never a library searched for in the
 * system's folders) and register its types.
 * TS_ERR_INPUT with a detail message (ts_error_detail()) naming the reason
 * when the file cannot be loaded, is not a tstep plugin, was built for
 * another interface version, defines no types, or a type's name is already
 * registered. */
int tstep_plugin_load(const char *path);

/* The tstep program: argv as main's (argv[0] the program name, then the
 * global options --plugin FILE, --version, --help, then COMMAND and its
 * options).  extra_steppers and extra_systems (NULL-terminated, or NULL)
 * are registered first, then TSTEP_PLUGINS and the --plugin files.
 * Returns the exit status: 0 success, 1 the computation failed, 2 usage
 * or input error (also a clashing name or a plugin that cannot be loaded). */
int tstep_main(int argc, char **argv, const ts_stepper_type *const *extra_steppers,
               const ts_system_type *const *extra_systems);

/* The version of the library (TSTEP_VERSION when it was built). */
const char *tstep_version(void);

#endif

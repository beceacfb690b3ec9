/* Run a tstep command line from the tests and capture what it prints. */
#ifndef TSTEP_CLI_RUN_H
#define TSTEP_CLI_RUN_H

#include <stddef.h>

/* Run `build/tstep ARGS` through the shell; stdout goes to out[] (NUL
 * terminated, truncated to size), stderr to err[].  Returns the exit status,
 * or -1 if the command could not be run.  When stderr says a built-in stepper
 * is a skeleton (a hand-out's), the calling check ends as skipped
 * (tests_skip_if_skeleton_said, tests/tests.h). */
int cli_run(const char *args, char *out, size_t out_size, char *err, size_t err_size);

#endif

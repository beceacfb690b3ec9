/* The Check suites of tstep, one per area; tests/check_main.c runs them all. */
#ifndef TSTEP_TESTS_H
#define TSTEP_TESTS_H

#include <check.h>
#include <string.h>
#include "cli_run.h"

Suite *linalg_suite(void);
Suite *steppers_suite(void);
Suite *systems_suite(void);
Suite *cli_suite(void);
Suite *jacobian_suite(void);
Suite *opt_suite(void);
Suite *stability_suite(void);
Suite *plots_suite(void);
Suite *springs_suite(void);
Suite *grade_suite(void);
/* After the run: name the registered steppers that are skeletons (a hand-out's),
 * whose tests fail, and point to the per-check grade (tests/check_grade.c). */
void grade_note_skeletons(void);
Suite *newton_suite(void);
Suite *linsolve_suite(void);
Suite *plugins_suite(void);
Suite *methods_suite(void);
Suite *reference_suite(void);
Suite *spectrum_suite(void);
Suite *perf_suite(void);
Suite *robust_suite(void);
Suite *options_suite(void);
Suite *memory_suite(void);
Suite *butcher_suite(void);
Suite *docs_suite(void);

/* Path of the tstep binary for CLI tests (build/tstep). */
#ifndef TSTEP_BIN /* the Makefile passes $(BUILD)/tstep */
#define TSTEP_BIN "build/tstep"
#endif

/* Run `tstep ARGS` (tests/cli_run.h) into the calling file's buffers out[]
 * and err[]; assert the exit status and, when needle is not NULL, that
 * standard error holds it. */
#define EXPECT(args, code, needle)                                                          \
    do {                                                                                    \
        int rc_ = cli_run(args, out, sizeof out, err, sizeof err);                          \
        ck_assert_msg(rc_ == (code), "tstep %s: exit %d, want %d; stderr: %s", args, rc_,    \
                      code, err);                                                           \
        const char *needle_ = (needle);                                                     \
        if (needle_)                                                                        \
            ck_assert_msg(strstr(err, needle_) != NULL,                                     \
                          "tstep %s: stderr lacks \"%s\": %s", args, needle_, err);          \
    } while (0)

#endif

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
 * whose checks were skipped, and point to the per-check grade (tests/check_grade.c). */
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

/* Skipped checks (tests/skip.c): a check that needs a built-in stepper that is
 * a skeleton (a hand-out's) or absent from this build reports itself skipped,
 * with the reason, and ends there.  The runner: tests_skip_init before it
 * forks (shared counts; which built-ins are skeletons), tests_skip_suite(i)
 * before suite i, tests_skipped(i, &why) after it. */
void tests_skip_init(void);
void tests_skip_suite(int i);
int tests_skipped(int i, const char **why);
/* End the calling check as skipped for `why` (in Check's fork of the check). */
void tests_skip(const char *why);
/* Skip the check unless every built-in stepper in the comma-separated `names`
 * is in this build and implemented; returns 0 when it goes on. */
int tests_need(const char *names);
/* The built-in stepper NAME; the check is skipped (never returns NULL) when
 * the build lacks it or it is a skeleton.  Tests name the steppers a hand-out
 * may leave out (tools/assignment.sh) this way, not by their ts_ symbols. */
const struct ts_stepper_type *tests_stepper(const char *name);
/* 1 when the stepper's step returns TS_ERR_NOT_IMPLEMENTED (a skeleton). */
struct ts_stepper_type;
int tests_is_skeleton(const struct ts_stepper_type *t);
/* Skip the check when the command line names, after --stepper, --like or
 * --stages, a built-in skeleton or a stepper the hand-out leaves out, or
 * reads an example the hand-out leaves out (system and popen do it for every
 * command; a test that forks and execs calls it). */
void tests_check_command(const char *cmd);
/* 1 when the built-in NAME is in this build and implemented: a row that
 * `--stepper all` gives (it skips a hand-out's skeletons). */
int tests_runs(const char *name);
/* Skip the check when the file (an example) is not in this tree: a hand-out
 * leaves out an example that is an answer (tools/assignment.sh). */
void tests_need_file(const char *path);
/* Skip the check when a command's standard error says a built-in stepper is
 * a skeleton (cli_run does it for every command it runs). */
void tests_skip_if_skeleton_said(const char *err);

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

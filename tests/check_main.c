/* The test runner: every suite, one SRunner.  Run from the repository root
 * (`make test`), since CLI tests call build/tstep. */
#include <stdlib.h>
#include "tests.h"
#include "tstep/linalg.h"

int main(void)
{
    Suite *(*const suites[])(void) = {
        linalg_suite, steppers_suite, systems_suite, cli_suite, jacobian_suite,
        opt_suite, stability_suite, plots_suite, springs_suite, newton_suite, plugins_suite,
        methods_suite, linsolve_suite, reference_suite, spectrum_suite, perf_suite,
        grade_suite, robust_suite, options_suite, memory_suite, butcher_suite, docs_suite,
    };
    if (!getenv("OMP_NUM_THREADS")) /* as the program: one thread unless asked */
        ts_threads_set(1);
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof *suites; i++)
        srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    grade_note_skeletons(); /* a hand-out's skeleton steppers, named */
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

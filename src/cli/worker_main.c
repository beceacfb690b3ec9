/* tstep-grade-worker: the process `tstep grade` runs a submission in
 * (src/analysis/grade_worker.c), started by the grader in its sandbox and
 * never by hand.  It is the library without the built-in steppers
 * (Makefile), so a submission that names or looks up a reference stepper
 * finds none, and with the allocation counter (alloc_counter.h) that the
 * no-allocation check reads. */
#include "alloc_counter.h"
#include "analysis/grade_worker.h"
#include "tstep/tstep.h"

int main(int argc, char **argv)
{
    ts_threads_set(1);
    alloc_counter_install();
    return ts_grade_worker_main(argc, argv);
}

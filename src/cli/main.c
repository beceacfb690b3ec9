/* tstep: the command-line program (tstep_main.c), with the grader's
 * allocation counter (alloc_counter.h). */
#include "alloc_counter.h"
#include "tstep/tstep.h"

int main(int argc, char **argv)
{
    alloc_counter_install();
    return tstep_main(argc, argv, NULL, NULL);
}

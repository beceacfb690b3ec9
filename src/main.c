/* tstep: the command-line program (src/tstep_main.c). */
#include "tstep/tstep.h"

int main(int argc, char **argv) { return tstep_main(argc, argv, NULL, NULL); }

/* What the tests read of the formatter (src/core/numfmt.c): internal to
 * the library, not installed. */
#ifndef TSTEP_CORE_NUMFMT_H
#define TSTEP_CORE_NUMFMT_H
#include <stddef.h>

/* ts_format_double by exact integer arithmetic at any digits (the 128-bit
 * and multi-word powers of 5 of numfmt.c): the oracle of the tests, and
 * the path of fixed digits. */
size_t ts_format_double_exact(char *buf, double x, int digits);

#endif

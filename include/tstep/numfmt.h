/* tstep/numfmt.h - doubles in decimal without printf, for the writers of
 * trajectories and frames (src/core/numfmt.c).
 *
 * ts_format_double(buf, x, digits) writes x into buf (TS_NUM_MAX bytes):
 * digits 1..17 gives exactly what printf("%.*g", digits, x) gives; digits 0
 * the shortest decimal that reads back (strtod) as x itself, laid out as
 * %.17g lays it out.  Returns the length. */
#ifndef TSTEP_NUMFMT_H
#define TSTEP_NUMFMT_H

#include <stddef.h>

#define TS_NUM_MAX 32
size_t ts_format_double(char *buf, double x, int digits);

#endif

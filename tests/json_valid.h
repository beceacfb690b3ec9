/* A strict JSON syntax check (RFC 8259) for the tests of --format json, so
 * they need no JSON library or interpreter. */
#ifndef TSTEP_JSON_VALID_H
#define TSTEP_JSON_VALID_H

#include <stddef.h>

/* 1 when `text` is exactly one JSON value (surrounding white space allowed);
 * else 0 with the offset of the first error in *where (may be NULL). */
int json_valid(const char *text, size_t *where);

/* How many times `needle` occurs in `text`. */
int json_count(const char *text, const char *needle);

/* The number after the first `"key": ` in text at or after `from`, or NAN
 * (also for null); *next, if not NULL, gets the position after it. */
double json_number_after(const char *text, const char *key, const char **next);

#endif

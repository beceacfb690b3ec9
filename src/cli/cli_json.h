/* A small JSON writer for --format json (src/cli/cli_json.c).
 *
 * Values are written as they come, with commas and two-space indentation
 * handled here: open an object or array (with a key inside an object, NULL
 * inside an array or at the top), write members, close it.  Strings are
 * escaped (quote, backslash, control characters as \uXXXX); numbers are
 * written with %.17g so they read back exactly; NaN and infinities, which
 * JSON cannot express, are written as null. */
#ifndef TSTEP_CLI_JSON_H
#define TSTEP_CLI_JSON_H

#include <stdio.h>

#define CLI_JSON_MAX_DEPTH 32

typedef struct {
    FILE *f;
    int depth;
    int count[CLI_JSON_MAX_DEPTH]; /* members written at each level */
    char close[CLI_JSON_MAX_DEPTH]; /* the bracket that closes each level */
} cli_json;

void cli_json_init(cli_json *j, FILE *f);
void cli_json_object(cli_json *j, const char *key);
void cli_json_array(cli_json *j, const char *key);
/* Close the innermost object or array; at the top level, end the line. */
void cli_json_close(cli_json *j);

void cli_json_string(cli_json *j, const char *key, const char *value); /* NULL: null */
void cli_json_number(cli_json *j, const char *key, double value);      /* non-finite: null */
void cli_json_int(cli_json *j, const char *key, long value);
void cli_json_bool(cli_json *j, const char *key, int value);
void cli_json_null(cli_json *j, const char *key);

#endif

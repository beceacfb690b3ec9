/* tstep/params.h - named parameters of a system, with defaults.
 *
 * A system type publishes a table of ts_param_def (name, kind, default as
 * text, one-line summary).  The command line fills a ts_params from
 * `--param key=value`; values are checked against the table when set, so a
 * system's create function reads them without re-validating their form. */
#ifndef TSTEP_PARAMS_H
#define TSTEP_PARAMS_H

#include <stddef.h>

typedef enum {
    TS_PARAM_REAL, /* a finite double */
    TS_PARAM_INT,  /* a whole number */
    TS_PARAM_TEXT  /* free text: a choice or a file name, checked by the system */
} ts_param_kind;

typedef struct {
    const char *name;
    ts_param_kind kind;
    const char *def;     /* default, as it would be written on the command line */
    const char *summary; /* one line for `tstep list` */
} ts_param_def;

#define TS_MAX_PARAMS 48
#define TS_PARAM_TEXT_MAX 256

typedef struct {
    const ts_param_def *defs; /* the table, terminated by an entry with name NULL */
    size_t count;
    char value[TS_MAX_PARAMS][TS_PARAM_TEXT_MAX];
} ts_params;

/* Fill `p` with the defaults of a NULL-terminated table. */
void ts_params_init(ts_params *p, const ts_param_def *defs);

/* Set `name` to `value`; TS_ERR_INPUT with a detail message naming the bad
 * name (and listing the valid ones) or the bad value. */
int ts_params_set(ts_params *p, const char *name, const char *value);

/* Parse "key=value" and set it. */
int ts_params_set_pair(ts_params *p, const char *pair);

/* Read a parameter; `name` must be in the table (a programmer error otherwise). */
double ts_params_real(const ts_params *p, const char *name);

/* Is `text` written as a number and nothing else: an integer (real 0) in
 * decimal digits with an optional sign; a real (real != 0) as strtod reads
 * it, decimal or C99 hexadecimal (0x1p-40, exact), but with no space before
 * it (strtod would skip one, and one after it is refused anyway)?  The rule
 * of every number tstep reads from its users, here and in the command
 * line's options (which refuse inf and nan besides). */
int ts_plain_number(const char *text, int real);

/* 1 and *x when `text` is a finite real by that rule, read whole (an
 * underflow to 0 or a subnormal counts; an overflow does not); else 0. */
int ts_parse_real(const char *text, double *x);
long ts_params_int(const ts_params *p, const char *name);
const char *ts_params_text(const ts_params *p, const char *name);

#endif

/* Named system parameters: defaults from a table, values checked when set. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/params.h"
#include "tstep/status.h"

void ts_params_init(ts_params *p, const ts_param_def *defs)
{
    p->defs = defs;
    p->count = 0;
    for (const ts_param_def *d = defs; d && d->name; d++) {
        assert(p->count < TS_MAX_PARAMS);
        snprintf(p->value[p->count], TS_PARAM_TEXT_MAX, "%s", d->def);
        p->count++;
    }
}

static long find(const ts_params *p, const char *name)
{
    for (size_t i = 0; i < p->count; i++)
        if (strcmp(p->defs[i].name, name) == 0)
            return (long)i;
    return -1;
}

int ts_plain_number(const char *text, int real)
{
    const char *p = text;
    if (real)
        return *p && !isspace((unsigned char)*p);
    if (*p == '+' || *p == '-')
        p++;
    if (!*p)
        return 0;
    for (; *p; p++)
        if (!(*p >= '0' && *p <= '9'))
            return 0;
    return 1;
}

int ts_parse_real(const char *text, double *x)
{
    char *end;
    errno = 0;
    double r = strtod(text, &end);
    if (!ts_plain_number(text, 1) || end == text || *end != '\0' ||
        (errno == ERANGE && !(fabs(r) < 1.0)) || !isfinite(r))
        return 0;
    *x = r;
    return 1;
}

static int check_value(const ts_param_def *d, const char *value)
{
    char *end;
    errno = 0;
    if (d->kind == TS_PARAM_REAL) {
        double x;
        if (!ts_parse_real(value, &x))
            return ts_error(TS_ERR_INPUT, "parameter '%s': '%s' is not a finite number",
                            d->name, value);
    } else if (d->kind == TS_PARAM_INT) {
        strtol(value, &end, 10);
        if (!ts_plain_number(value, 0) || end == value || *end != '\0' || errno == ERANGE)
            return ts_error(TS_ERR_INPUT, "parameter '%s': '%s' is not a whole number",
                            d->name, value);
    }
    if (strlen(value) >= TS_PARAM_TEXT_MAX)
        return ts_error(TS_ERR_INPUT, "parameter '%s': value longer than %d characters",
                        d->name, TS_PARAM_TEXT_MAX - 1);
    return TS_OK;
}

int ts_params_set(ts_params *p, const char *name, const char *value)
{
    long i = find(p, name);
    if (i < 0) {
        char names[1024] = "";
        for (size_t j = 0; j < p->count; j++) {
            if (j)
                strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, p->defs[j].name, sizeof names - strlen(names) - 1);
        }
        return ts_error(TS_ERR_INPUT, "unknown parameter '%s' (valid: %s)", name,
                        p->count ? names : "none");
    }
    int s = check_value(&p->defs[i], value);
    if (s)
        return s;
    snprintf(p->value[i], TS_PARAM_TEXT_MAX, "%s", value);
    return TS_OK;
}

int ts_params_set_pair(ts_params *p, const char *pair)
{
    const char *eq = strchr(pair, '=');
    if (!eq || eq == pair)
        return ts_error(TS_ERR_INPUT, "'%s' is not of the form key=value", pair);
    char name[TS_PARAM_TEXT_MAX];
    size_t len = (size_t)(eq - pair);
    if (len >= sizeof name)
        return ts_error(TS_ERR_INPUT, "parameter name too long in '%s'", pair);
    memcpy(name, pair, len);
    name[len] = '\0';
    return ts_params_set(p, name, eq + 1);
}

static long must_find(const ts_params *p, const char *name, ts_param_kind kind)
{
    long i = find(p, name);
    assert(i >= 0 && "parameter not in the system's table");
    assert(p->defs[i].kind == kind || kind == TS_PARAM_TEXT);
    (void)kind;
    return i;
}

double ts_params_real(const ts_params *p, const char *name)
{
    return strtod(p->value[must_find(p, name, TS_PARAM_REAL)], NULL);
}

long ts_params_int(const ts_params *p, const char *name)
{
    return strtol(p->value[must_find(p, name, TS_PARAM_INT)], NULL, 10);
}

const char *ts_params_text(const ts_params *p, const char *name)
{
    return p->value[must_find(p, name, TS_PARAM_TEXT)];
}

/* The JSON writer of --format json; see cli_json.h. */
#include <assert.h>
#include <math.h>
#include "cli_json.h"
#include "tstep/numfmt.h"

void cli_json_init(cli_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
}

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Comma, newline and indentation before a member, then its key. */
static void member(cli_json *j, const char *key)
{
    if (j->count[j->depth]++)
        fputc(',', j->f);
    if (j->depth > 0) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    if (key && j->depth > 0 && j->close[j->depth] == '}') {
        put_string(j->f, key);
        fputs(": ", j->f);
    }
}

static void open_level(cli_json *j, const char *key, char open, char close)
{
    member(j, key);
    fputc(open, j->f);
    assert(j->depth + 1 < CLI_JSON_MAX_DEPTH);
    j->depth++;
    j->count[j->depth] = 0;
    j->close[j->depth] = close;
}

void cli_json_object(cli_json *j, const char *key) { open_level(j, key, '{', '}'); }
void cli_json_array(cli_json *j, const char *key) { open_level(j, key, '[', ']'); }

void cli_json_close(cli_json *j)
{
    assert(j->depth > 0);
    if (j->count[j->depth]) {
        fputc('\n', j->f);
        for (int i = 1; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(j->close[j->depth], j->f);
    if (--j->depth == 0)
        fputc('\n', j->f);
}

void cli_json_string(cli_json *j, const char *key, const char *value)
{
    member(j, key);
    if (value)
        put_string(j->f, value);
    else
        fputs("null", j->f);
}

void cli_json_number(cli_json *j, const char *key, double value)
{
    member(j, key);
    char num[TS_NUM_MAX];
    if (isfinite(value)) { /* the shortest decimal that reads back as value */
        ts_format_double(num, value, 0);
        fputs(num, j->f);
    } else {
        fputs("null", j->f);
    }
}

void cli_json_int(cli_json *j, const char *key, long value)
{
    member(j, key);
    fprintf(j->f, "%ld", value);
}

void cli_json_bool(cli_json *j, const char *key, int value)
{
    member(j, key);
    fputs(value ? "true" : "false", j->f);
}

void cli_json_null(cli_json *j, const char *key)
{
    member(j, key);
    fputs("null", j->f);
}

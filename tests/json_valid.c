/* See json_valid.h: a recursive-descent recognizer of the JSON grammar. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_valid.h"

typedef struct {
    const char *p;
    int depth;
} reader;

static void ws(reader *r)
{
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
        r->p++;
}

static int value(reader *r);

static int string(reader *r)
{
    if (*r->p != '"')
        return 0;
    r->p++;
    while (*r->p != '"') {
        unsigned char c = (unsigned char)*r->p;
        if (c < 0x20)
            return 0; /* unescaped control character (or the end) */
        if (c == '\\') {
            r->p++;
            if (*r->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)r->p[i]))
                        return 0;
                r->p += 5;
                continue;
            }
            if (!strchr("\"\\/bfnrt", *r->p) || !*r->p)
                return 0;
        }
        r->p++;
    }
    r->p++;
    return 1;
}

static int number(reader *r)
{
    const char *p = r->p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (isdigit((unsigned char)*p))
            p++;
    else
        return 0;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    r->p = p;
    return 1;
}

static int word(reader *r, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(r->p, w, n) != 0)
        return 0;
    r->p += n;
    return 1;
}

static int members(reader *r, char close, int keyed)
{
    r->p++;
    ws(r);
    if (*r->p == close) {
        r->p++;
        return 1;
    }
    for (;;) {
        ws(r);
        if (keyed) {
            if (!string(r))
                return 0;
            ws(r);
            if (*r->p != ':')
                return 0;
            r->p++;
        }
        if (!value(r))
            return 0;
        ws(r);
        if (*r->p == close) {
            r->p++;
            return 1;
        }
        if (*r->p != ',')
            return 0;
        r->p++;
    }
}

static int value(reader *r)
{
    int ok;
    ws(r);
    if (++r->depth > 200)
        return 0;
    switch (*r->p) {
    case '{': ok = members(r, '}', 1); break;
    case '[': ok = members(r, ']', 0); break;
    case '"': ok = string(r); break;
    case 't': ok = word(r, "true"); break;
    case 'f': ok = word(r, "false"); break;
    case 'n': ok = word(r, "null"); break;
    default: ok = number(r);
    }
    r->depth--;
    return ok;
}

int json_valid(const char *text, size_t *where)
{
    reader r = {text, 0};
    int ok = value(&r);
    ws(&r);
    ok = ok && *r.p == '\0';
    if (where)
        *where = (size_t)(r.p - text);
    return ok;
}

int json_count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

double json_number_after(const char *text, const char *key, const char **next)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(text, pat);
    if (!p)
        return NAN;
    p += strlen(pat);
    char *end;
    double x = strtod(p, &end);
    if (next)
        *next = end == p ? p : end;
    return end == p ? NAN : x;
}

/* The table writers (table.h): dat, csv and json, one registry. */
#include <string.h>
#include "table.h"

/* the values of a row at each column's digits, separated by sep */
static void put_values(const cli_table *t, const double *v, char sep)
{
    for (int c = 0; c < t->ncols; c++)
        fprintf(t->out, "%c%.*g", sep, t->digits[c], v[c]);
    fputc('\n', t->out);
}

static void dat_begin(cli_table *t)
{
    fprintf(t->out, "# %s", t->label);
    for (int c = 0; c < t->ncols; c++)
        fprintf(t->out, " %s", t->cols[c]);
    fputc('\n', t->out);
}

static void dat_block(cli_table *t, const char *name)
{
    fprintf(t->out, "%s# %s\n", t->blocks ? "\n\n" : "", name);
}

static void dat_row(cli_table *t, const double *v)
{
    fputs(t->block_name, t->out);
    put_values(t, v, ' ');
}

static void csv_begin(cli_table *t)
{
    fputs(t->label, t->out);
    for (int c = 0; c < t->ncols; c++)
        fprintf(t->out, ",%s", t->cols[c]);
    fputc('\n', t->out);
}

static void csv_row(cli_table *t, const double *v)
{
    fputs(t->block_name, t->out);
    put_values(t, v, ',');
}

static void json_begin(cli_table *t)
{
    cli_json_init(&t->json, t->out);
    cli_json_object(&t->json, NULL);
    cli_json_string(&t->json, "command", t->command);
    cli_json_string(&t->json, "block", t->label);
    cli_json_array(&t->json, "columns");
    for (int c = 0; c < t->ncols; c++)
        cli_json_string(&t->json, NULL, t->cols[c]);
    cli_json_close(&t->json);
    cli_json_array(&t->json, "blocks");
}

static void json_block(cli_table *t, const char *name)
{
    if (t->blocks)
        cli_json_close(&t->json), cli_json_close(&t->json); /* the last rows, the block */
    cli_json_object(&t->json, NULL);
    cli_json_string(&t->json, "name", name);
    cli_json_array(&t->json, "rows");
}

static void json_row(cli_table *t, const double *v)
{
    cli_json_array(&t->json, NULL);
    for (int c = 0; c < t->ncols; c++)
        cli_json_number(&t->json, NULL, v[c]);
    cli_json_close(&t->json);
}

static void json_end(cli_table *t)
{
    if (t->blocks)
        cli_json_close(&t->json), cli_json_close(&t->json);
    cli_json_close(&t->json); /* blocks */
    cli_json_close(&t->json); /* the object */
}

static void nothing(cli_table *t) { (void)t; }

static const cli_table_format dat = {"dat", dat_begin, dat_block, dat_row, nothing};
static const cli_table_format csv = {"csv", csv_begin, NULL, csv_row, nothing};
static const cli_table_format json = {"json", json_begin, json_block, json_row, json_end};

const cli_table_format *const cli_table_formats[] = {&dat, &csv, &json, NULL};

const cli_table_format *cli_table_format_find(const char *name)
{
    for (size_t i = 0; name && cli_table_formats[i]; i++)
        if (strcmp(cli_table_formats[i]->name, name) == 0)
            return cli_table_formats[i];
    return NULL;
}

const cli_table_format *cli_table_format_of_path(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    return dot && !strchr(dot, '/') ? cli_table_format_find(dot + 1) : NULL;
}

void cli_table_begin(cli_table *t)
{
    t->blocks = 0;
    t->block_name = "";
    t->format->begin(t);
}

void cli_table_block(cli_table *t, const char *name)
{
    if (t->format->block)
        t->format->block(t, name);
    t->block_name = name;
    t->blocks++;
}

void cli_table_row(cli_table *t, const double *values) { t->format->row(t, values); }

void cli_table_end(cli_table *t) { t->format->end(t); }

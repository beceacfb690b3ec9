/* Tables of named number columns, grouped in blocks (one per stepper), as a
 * command writes them: dat, csv or json, each an entry of one registry
 * (cli_table_formats in table.c).  The format is the one --format names,
 * else the one --out's extension names (.dat, .csv, .json), else dat.
 *
 *   dat   a '#' header line of the column names, then per block a comment
 *         line '# NAME' and its rows (the block's name first), blocks two
 *         blank lines apart (gnuplot: index 'NAME')
 *   csv   one header row, then every row with its block's name first
 *   json  {"command": ..., "columns": [...], "blocks": [{"name": ...,
 *         "rows": [[...], ...]}, ...]}, numbers that read back exactly
 *
 * To add a format: its cli_table_format in table.c and its line in
 * cli_table_formats. */
#ifndef TSTEP_CLI_TABLE_H
#define TSTEP_CLI_TABLE_H

#include <stdio.h>
#include "cli_json.h"

typedef struct cli_table cli_table;

typedef struct cli_table_format {
    const char *name; /* as --format and the extension name it */
    void (*begin)(cli_table *t);
    void (*block)(cli_table *t, const char *name);
    void (*row)(cli_table *t, const double *values);
    void (*end)(cli_table *t);
} cli_table_format;

extern const cli_table_format *const cli_table_formats[]; /* NULL-terminated */

/* The format named `name` (NULL if none), and the one a path's extension
 * names (NULL if none). */
const cli_table_format *cli_table_format_find(const char *name);
const cli_table_format *cli_table_format_of_path(const char *path);

struct cli_table {
    const cli_table_format *format;
    FILE *out;
    const char *command;     /* in json's "command" */
    const char *label;       /* the name of the block names' column ("stepper") */
    const char *const *cols; /* the number columns' names */
    const int *digits;       /* their significant digits in dat and csv */
    int ncols;
    /* the writers' own */
    const char *block_name;
    int blocks;
    cli_json json;
};

/* Begin a table on out; then cli_table_block for each block, cli_table_row
 * for each row (ncols values), cli_table_end. */
void cli_table_begin(cli_table *t);
void cli_table_block(cli_table *t, const char *name);
void cli_table_row(cli_table *t, const double *values);
void cli_table_end(cli_table *t);

#endif

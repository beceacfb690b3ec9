/* tstep_main: the command-line program as a function (tstep/tstep.h), so a
 * student's own program gets every command.  Global options (plugins,
 * version), then the table of commands (one line each in commands.h)
 * looked up by name; each command lives in its own cmd_*.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "analysis/grade_worker.h"
#include "tstep/linalg.h"
#include "tstep/tstep.h"

#define CLI_COMMAND(name, fn, summary) int fn(int argc, char **argv);
#include "commands.h"
#undef CLI_COMMAND

const cli_command cli_commands[] = {
#define CLI_COMMAND(name, fn, summary) {name, summary, fn},
#include "commands.h"
#undef CLI_COMMAND
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: tstep [--plugin FILE.so]... COMMAND [OPTIONS]\n"
               "       tstep --version | --help\n\n"
               "Time integration of particle systems: pick a system and a stepper,\n"
               "integrate, and measure error, order and stability.\n\nCommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(f, "  %-13s %s\n", c->name, c->summary);
    fprintf(f, "\nOptions before the command:\n"
               "  --plugin FILE  load steppers and systems from the shared object FILE\n"
               "                 (repeatable; a name without '/' is a file here); they join\n"
               "                 the built-in ones for every command\n"
               "  --version      print the version and the plugin interface version\n"
               "  --help         this text\n"
               "\nEnvironment:\n"
               "  TSTEP_PLUGINS  colon-separated plugin files, loaded before --plugin ones\n"
               "  TSTEP_FOLLOW_LOAD=0  every loop on the threads asked for (by default a\n"
               "                 loop takes fewer while other processes hold processors)\n"
               "\n'tstep COMMAND --help' describes a command.\n"
               "Exit status: 0 success, 1 the computation failed (diverged, solver did\n"
               "not converge), 2 usage or input error.\n");
}

static int load_plugin(const char *path)
{
    if (tstep_plugin_load(path) == TS_OK)
        return 0;
    fprintf(stderr, "tstep: --plugin %s\n", ts_error_detail());
    return CLI_EXIT_USAGE;
}

/* The command is grade (after the global options)? */
static int grade_command(int argc, char **argv)
{
    int a = 1;
    while (a < argc && strncmp(argv[a], "--plugin", 8) == 0)
        a += strcmp(argv[a], "--plugin") == 0 ? 2 : 1;
    return a < argc && strcmp(argv[a], "grade") == 0;
}

/* TSTEP_PLUGINS: FILE[:FILE...]; empty entries are skipped.  For grade,
 * they are kept for its worker instead of loaded. */
static int load_env_plugins(int grading)
{
    const char *list = getenv("TSTEP_PLUGINS");
    if (!list || !*list)
        return 0;
    char *copy = malloc(strlen(list) + 1);
    if (!copy) {
        fprintf(stderr, "tstep: TSTEP_PLUGINS: out of memory\n");
        return 1;
    }
    strcpy(copy, list);
    int rc = 0;
    for (char *save = NULL, *p = strtok_r(copy, ":", &save); p && !rc;
         p = strtok_r(NULL, ":", &save))
        if (grading) {
            if (cli_defer_plugin(p, 1))
                rc = CLI_EXIT_USAGE;
        } else if (tstep_plugin_load(p) != TS_OK) {
            fprintf(stderr, "tstep: TSTEP_PLUGINS: %s\n", ts_error_detail());
            rc = CLI_EXIT_USAGE;
        }
    free(copy);
    return rc;
}

static int register_extras(const ts_stepper_type *const *steppers,
                           const ts_system_type *const *systems)
{
    for (size_t i = 0; steppers && steppers[i]; i++)
        if (ts_stepper_register(steppers[i])) {
            fprintf(stderr, "tstep: extra stepper: %s\n", ts_error_detail());
            return CLI_EXIT_USAGE;
        }
    for (size_t i = 0; systems && systems[i]; i++)
        if (ts_system_register(systems[i])) {
            fprintf(stderr, "tstep: extra system: %s\n", ts_error_detail());
            return CLI_EXIT_USAGE;
        }
    return 0;
}

/* Every command's standard output checked once at its end: a write that
 * failed (a full disk, /dev/full, a closed pipe) is reported, exit 2. */
static int stdout_checked(const char *cmd, int rc)
{
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc != CLI_EXIT_USAGE) {
        fprintf(stderr, "tstep%s%s: error writing standard output\n", cmd ? " " : "",
                cmd ? cmd : "");
        return CLI_EXIT_USAGE;
    }
    return rc;
}

static int dispatch(int argc, char **argv, int a)
{
    const char *cmd = argv[a];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return stdout_checked(NULL, 0);
    }
    if (strcmp(cmd, "--version") == 0) {
        if (a + 1 < argc) {
            fprintf(stderr, "tstep: --version takes no argument ('%s')\nTry 'tstep --help'.\n",
                    argv[a + 1]);
            return CLI_EXIT_USAGE;
        }
        printf("tstep %s (plugin interface %d)\n", tstep_version(), TSTEP_PLUGIN_ABI);
        return stdout_checked(NULL, 0);
    }
    for (const cli_command *c = cli_commands; c->name; c++)
        if (strcmp(c->name, cmd) == 0)
            return stdout_checked(c->name, c->main(argc - a, argv + a));
    fprintf(stderr, "tstep: unknown command '%s' (valid:", cmd);
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(stderr, " %s", c->name);
    fprintf(stderr, ")\nTry 'tstep --help'.\n");
    return CLI_EXIT_USAGE;
}

int tstep_main(int argc, char **argv, const ts_stepper_type *const *extra_steppers,
               const ts_system_type *const *extra_systems)
{
    int rc, a = 1;
    /* One thread unless asked (--threads N, or OMP_NUM_THREADS): on the
     * shared 2-core machines tstep is measured on, OpenMP's busy-waiting
     * made two threads slower than one (docs/performance.md). */
    if (!getenv("OMP_NUM_THREADS"))
        ts_threads_set(1);
    /* grade never loads a plugin into this process: it hands them to its worker */
    int grading = grade_command(argc, argv);
    if ((rc = register_extras(extra_steppers, extra_systems)) ||
        (rc = load_env_plugins(grading)))
        return rc;
    for (; a < argc && strncmp(argv[a], "--plugin", 8) == 0; a++) {
        const char *arg = argv[a] + 8;
        if (*arg == '=')
            arg++;
        else if (*arg == '\0' && a + 1 < argc)
            arg = argv[++a];
        else {
            fprintf(stderr, "tstep: %s: expected --plugin FILE\nTry 'tstep --help'.\n",
                    argv[a]);
            return CLI_EXIT_USAGE;
        }
        if (grading)
            rc = cli_defer_plugin(arg, 0);
        else
            rc = load_plugin(arg);
        if (rc)
            return rc;
    }
    if (a >= argc) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return dispatch(argc, argv, a);
}

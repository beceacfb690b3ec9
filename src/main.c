/* tstep: the command-line program.  An explicit table of commands looked up
 * by name; each command lives in its own src/cmd_*.c. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

int cmd_check(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_stability(int argc, char **argv);
int cmd_amplification(int argc, char **argv);
int cmd_region(int argc, char **argv);
int cmd_phase(int argc, char **argv);

const cli_command cli_commands[] = {
    {"list", "list steppers and systems with their parameters", cmd_list},
    {"run", "integrate a system and write its trajectory", cmd_run},
    {"sweep", "error at t_end against step size; observed orders", cmd_sweep},
    {"check-system", "Jacobian products against finite differences, Taylor test", cmd_check},
    {"stability", "critical step size per stepper, measured and predicted", cmd_stability},
    {"amplification", "one-step amplification factor on the test equation", cmd_amplification},
    {"region", "stability regions |R(z)| on a grid of the complex plane", cmd_region},
    {"phase", "phase and amplitude per step on the undamped oscillator", cmd_phase},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: tstep COMMAND [OPTIONS]\n\n"
               "Time integration of particle systems: pick a system and a stepper,\n"
               "integrate, and measure error, order and stability.\n\nCommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(f, "  %-13s %s\n", c->name, c->summary);
    fprintf(f, "\n'tstep COMMAND --help' describes a command.\n"
               "Exit status: 0 success, 1 the computation failed (diverged, solver did\n"
               "not converge), 2 usage or input error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (const cli_command *c = cli_commands; c->name; c++)
        if (strcmp(c->name, argv[1]) == 0)
            return c->main(argc - 1, argv + 1);
    fprintf(stderr, "tstep: unknown command '%s' (valid:", argv[1]);
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(stderr, " %s", c->name);
    fprintf(stderr, ")\nTry 'tstep --help'.\n");
    return CLI_EXIT_USAGE;
}

/* direct: backward Euler on a hanging string of 10 particles, 20 steps of
 * h = 0.01, its linear solves by the sparse direct solver (CHOLMOD), or by
 * the solver named on the command line (cg).  The direct solver lives in
 * libtstep-ext: linked against the shared core, the program loads it when
 * it asks for it, from libtstep's own folder (docs/internals.md, "The core
 * library and the extension"); without it the stepper is refused:
 * "linear solver 'direct' needs libtstep-ext (CHOLMOD): not installed".
 *   cc direct.c $(pkg-config --cflags --libs tstep) -o direct && ./direct
 * prints the last particle's position. */
#include <stdio.h>
#include <string.h>
#include <tstep/tstep.h>
#include <tstep/linsolve.h>

int main(int argc, char **argv)
{
    ts_params p;
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    ts_solver_options opt = ts_default_solver_options();
    opt.linear_solver = argc > 1 && strcmp(argv[1], "cg") == 0 ? &ts_linsolve_cg
                                                                : &ts_linsolve_direct;
    ts_params_init(&p, ts_string.params);
    int s = ts_system_new(&ts_string, &p, &sys);
    if (!s)
        s = ts_stepper_new(&ts_backward_euler, sys, &opt, &st);
    for (int k = 0; k < 20 && !s; k++)
        s = ts_stepper_step(st, sys, 0.01 * k, 0.01);
    if (s) {
        fprintf(stderr, "direct: %s: %s\n", ts_status_message(s), ts_error_detail());
    } else {
        const double *x = sys->x + sys->n - 3;
        printf("%s: last particle at %.17g %.17g %.17g\n", opt.linear_solver->name, x[0], x[1],
               x[2]);
    }
    ts_stepper_free(st);
    ts_system_free(sys);
    return s ? 1 : 0;
}

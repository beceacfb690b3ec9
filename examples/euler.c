/* euler: forward Euler on the test equation x' = -x, x(0) = 1, ten steps of
 * h = 0.1, with the library only (docs/students.md).  It needs nothing
 * heavy: linked against the shared core it loads libtstep, libc and libm.
 *   cc euler.c $(pkg-config --cflags --libs tstep) -o euler && ./euler
 * prints x(1) ~ 0.9^10 = 0.34867844. */
#include <stdio.h>
#include <tstep/tstep.h>

int main(void)
{
    ts_params p;
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    ts_params_init(&p, ts_test1d.params);
    int s = ts_system_new(&ts_test1d, &p, &sys);
    if (!s)
        s = ts_stepper_new(&ts_forward_euler, sys, NULL, &st);
    for (int k = 0; k < 10 && !s; k++)
        s = ts_stepper_step(st, sys, 0.1 * k, 0.1);
    if (s)
        fprintf(stderr, "euler: %s: %s\n", ts_status_message(s), ts_error_detail());
    else
        printf("x(1) = %.17g\n", sys->x[0]);
    ts_stepper_free(st);
    ts_system_free(sys);
    return s ? 1 : 0;
}

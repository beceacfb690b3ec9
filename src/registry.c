/* The registries: every stepper and system tstep knows, in one table each.
 * Adding a stepper or system is one new file plus one line here. */
#include <string.h>
#include "tstep/stepper.h"

const ts_stepper_type *const ts_stepper_registry[] = {
    &ts_forward_euler,
    &ts_midpoint,
    &ts_trapezoid,
    &ts_rk4,
    &ts_backward_euler,
    &ts_backward_euler_linear,
    &ts_backward_euler_opt,
    &ts_symplectic_euler,
    &ts_verlet,
    &ts_implicit_midpoint,
    &ts_crank_nicolson,
    &ts_bdf2,
    &ts_ralston,
    &ts_heun3,
    &ts_ssprk3,
    &ts_dopri5,
    NULL,
};

const ts_system_type *const ts_system_registry[] = {
    &ts_test1d,
    &ts_oscillator,
    &ts_string,
    &ts_hair,
    &ts_cloth,
    NULL,
};

const ts_stepper_type *ts_stepper_find(const char *name)
{
    for (size_t i = 0; ts_stepper_registry[i]; i++)
        if (strcmp(ts_stepper_registry[i]->name, name) == 0)
            return ts_stepper_registry[i];
    return NULL;
}

const ts_system_type *ts_system_find(const char *name)
{
    for (size_t i = 0; ts_system_registry[i]; i++)
        if (strcmp(ts_system_registry[i]->name, name) == 0)
            return ts_system_registry[i];
    return NULL;
}

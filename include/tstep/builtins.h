/* tstep/builtins.h - the built-in steppers and systems, one line each.
 *
 * Adding a stepper or a system to tstep is one new file (steppers/NAME.c
 * defining `const ts_stepper_type ts_NAME`, or systems/NAME.c defining
 * `const ts_system_type ts_NAME`) plus one line here.  The registry
 * (src/analysis/registry.c) and the extern declarations (tstep/stepper.h) are both
 * generated from this list, in this order, which is the order of
 * `tstep list`.
 *
 * This file is an X-macro list, not a normal header: define TS_STEPPER(type)
 * and TS_SYSTEM(type) before including it.  It is included more than once
 * on purpose, hence no include guard. */
TS_STEPPER(ts_forward_euler)
TS_STEPPER(ts_midpoint)
TS_STEPPER(ts_trapezoid)
TS_STEPPER(ts_rk4)
TS_STEPPER(ts_backward_euler)
TS_STEPPER(ts_backward_euler_linear)
TS_STEPPER(ts_backward_euler_opt)
TS_STEPPER(ts_symplectic_euler)
TS_STEPPER(ts_verlet)
TS_STEPPER(ts_implicit_midpoint)
TS_STEPPER(ts_crank_nicolson)
TS_STEPPER(ts_bdf2)
TS_STEPPER(ts_ralston2)
TS_STEPPER(ts_heun3)
TS_STEPPER(ts_ssprk3)
TS_STEPPER(ts_dopri5)

TS_SYSTEM(ts_test1d)
TS_SYSTEM(ts_oscillator)
TS_SYSTEM(ts_string)
TS_SYSTEM(ts_hair)
TS_SYSTEM(ts_cloth)

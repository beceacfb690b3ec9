/* Small systems used only by the tests: a nonlinear pendulum (order 2, with
 * Jacobians and energy, optional pins and an injected force failure), the
 * cubic decay x' = -x^3 (order 1), and a system without Jacobian products. */
#ifndef TSTEP_PROBE_SYSTEMS_H
#define TSTEP_PROBE_SYSTEMS_H

#include "tstep/stepper.h"

typedef struct {
    ts_system base;
    double k, c;      /* f_i = -k sin(x_i) - c v_i */
    long fail_at;     /* the force call (1-based, counted from arming) that fails, or 0 */
    long calls;       /* force calls since arming */
    double potential_scale; /* the energy reports potential_scale * U (1: right) */
    double kinetic_scale;   /* and kinetic_scale * K (1: right) */
} probe_pendulum;

/* n independent pendulums with mass m, started at x0 + 0.1 i, v = 0.2. */
probe_pendulum *probe_pendulum_new(size_t n, double k, double c, double m, double x0);
/* The pendulum as a system type (a student's system without an exact
 * solution), parameters n, k, c, m, x0 and potential_scale, kinetic_scale
 * (1: a consistent energy; -1: the potential's sign flipped). */
extern const ts_system_type probe_pendulum_type;
/* x' = -x^3, order 1, one DOF. */
ts_system *probe_cubic_new(double x0);
/* A 1-DOF order-2 system without Jacobian products. */
ts_system *probe_nojacobian_new(void);

#endif

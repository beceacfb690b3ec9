/* tstep/stepper.h - the TimeStepper interface and the registries.
 *
 * A stepper type is a constant table: name, summary, nominal order, flags,
 * and alloc/step/free.  alloc sizes all scratch once for a given system;
 * step advances the system's stored state from t to t + h and must not
 * allocate.  A stepper file keeps everything static except its type object,
 * which is listed once in src/registry.c: after that the command line,
 * `tstep list` and the test suites pick it up.
 *
 * Steppers are used through ts_stepper (an instance), whose ts_stepper_step
 * wraps the type's step: it counts force evaluations, restores the state if
 * the step fails or leaves a non-finite state, and applies the system's
 * post_step projection after an accepted step. */
#ifndef TSTEP_STEPPER_H
#define TSTEP_STEPPER_H

#include <stddef.h>
#include "tstep/system.h"

enum {
    TS_IMPLICIT = 1u << 0,   /* solves a (non)linear system each step */
    TS_SYMPLECTIC = 1u << 1, /* preserves phase-space volume */
    TS_NEEDS_JACOBIAN = 1u << 2, /* needs the system's Jacobian products */
    TS_NEEDS_ENERGY = 1u << 3,   /* needs the system's potential energy (ops->energy) */
    TS_PARTITIONED = 1u << 4     /* treats x and v differently (symplectic Euler, Verlet):
                                    its stability is judged on the second-order test
                                    equation x'' = -w^2 x - 2 zeta w x' (tstep/stability.h) */
};

/* Options for the implicit solvers (ignored by explicit steppers). */
typedef struct {
    double newton_tol; /* stop when |update|_inf <= newton_tol * max(1, |v|_inf) (order 1: |x|_inf) */
    int newton_max;    /* Newton iteration cap */
    double cg_tol;     /* relative residual |r| <= cg_tol |b| */
    int cg_max;        /* linear iteration cap; 0 means 2 * dimension + 20 */
} ts_solver_options;

/* Defaults: newton_tol 1e-8, newton_max 20, cg_tol 1e-10, cg_max 0 (auto). */
ts_solver_options ts_default_solver_options(void);

/* Per-step statistics; steppers fill the iteration counts, the framework the rest. */
typedef struct {
    long force_evals;
    long jacobian_products;
    long newton_iters;
    long linear_iters;
    long accepted, rejected; /* steps (adaptive runs reject and retry) */
} ts_step_stats;

typedef struct ts_stepper_type {
    const char *name;
    const char *summary;
    int order;         /* nominal order of accuracy */
    unsigned flags;    /* TS_IMPLICIT, TS_SYMPLECTIC, TS_NEEDS_JACOBIAN, TS_NEEDS_ENERGY,
                          TS_PARTITIONED */
    int (*alloc)(const ts_system *sys, const ts_solver_options *opt, void **scratch);
    int (*step)(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats);
    void (*free)(void *scratch); /* accepts NULL */
} ts_stepper_type;

typedef struct {
    const ts_stepper_type *type;
    void *scratch;
    ts_solver_options opt;
    ts_step_stats last;  /* statistics of the last step */
    ts_step_stats total; /* summed over all steps */
    double *backup_;     /* the state before a step, to restore on failure */
} ts_stepper;

/* Allocate an instance for `sys`; refuses (TS_ERR_UNSUPPORTED) a system
 * lacking Jacobian products or energy when the type needs them, or that the
 * type's alloc refuses.  opt may be NULL. */
int ts_stepper_new(const ts_stepper_type *type, const ts_system *sys,
                   const ts_solver_options *opt, ts_stepper **out);
void ts_stepper_free(ts_stepper *st);

/* One step from t to t + h.  On failure the system's state is as before. */
int ts_stepper_step(ts_stepper *st, ts_system *sys, double t, double h);

/* For stepper implementers: scratch of `nvec` vectors of the first-order
 * view's length (ts_system_ydim), zeroed, in one block; free with free(). */
int ts_scratch_vectors(const ts_system *sys, int nvec, void **scratch);

/* Add b's counts into a. */
void ts_step_stats_add(ts_step_stats *a, const ts_step_stats *b);

/* --- registries (src/registry.c) ------------------------------------------ */

extern const ts_stepper_type *const ts_stepper_registry[]; /* NULL-terminated */
extern const ts_system_type *const ts_system_registry[];   /* NULL-terminated */

const ts_stepper_type *ts_stepper_find(const char *name);
const ts_system_type *ts_system_find(const char *name);

/* Every built-in stepper and system type. */
extern const ts_stepper_type ts_forward_euler, ts_midpoint, ts_trapezoid, ts_rk4,
    ts_backward_euler, ts_backward_euler_linear, ts_backward_euler_opt;
extern const ts_system_type ts_test1d, ts_oscillator, ts_string, ts_hair, ts_cloth;

#endif

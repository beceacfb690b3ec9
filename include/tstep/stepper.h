/* tstep/stepper.h - the TimeStepper interface and the registries.
 *
 * A stepper type is a constant table: name, summary, nominal order, flags,
 * and alloc/step/free.  alloc sizes all scratch once for a given system;
 * step advances the system's stored state from t to t + h and must not
 * allocate.  A stepper file keeps everything static except its type object,
 * which is listed once in tstep/builtins.h: after that the command line,
 * `tstep list` and the test suites pick it up.  A stepper built outside the
 * tree joins the same registry at run time (tstep/tstep.h: plugins).
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
    TS_PARTITIONED = 1u << 4,    /* treats x and v differently (symplectic Euler, Verlet):
                                    its stability is judged on the second-order test
                                    equation x'' = -w^2 x - 2 zeta w x' (tstep/stability.h) */
    TS_LINEARIZED = 1u << 5,     /* one linear solve per step, no Newton iteration: its
                                    result depends on the linear tolerance */
    TS_MULTISTEP = 1u << 6,      /* keeps history (bdf2): its first step after a reset is
                                    a lower-order starting step, so one step is not its
                                    one-step factor */
    TS_ADAPTIVE = 1u << 7,       /* has an embedded error estimate (the type's `error`):
                                    `run --rtol` controls its step size */
    TS_KEEPS_START = 1u << 8     /* its scratch begins with a ts_kept_start (below) and
                                    its step writes the stored state only at its end,
                                    keeping the start there (ts_implicit_alloc's scratch
                                    and ts_implicit_newton do): ts_stepper_step then
                                    takes no copy of the state (2 n doubles less) and
                                    restores a step that fails after that end from it */
};

/* The first member of a TS_KEEPS_START stepper's scratch: where the step
 * keeps its start state once it has written the end state. */
typedef struct {
    size_t n;
    double *x, *v; /* the start positions and velocities (v unused for order 1) */
    int kept;      /* x (and v) hold the start: the end state was written */
} ts_kept_start;

/* Put a kept start state back into sys and return 1; else (nothing kept
 * since the last call) return 0, the stored state being the start. */
int ts_kept_start_restore(ts_kept_start *k, ts_system *sys);

/* Options for the implicit solvers (ignored by explicit steppers). */
typedef struct {
    double newton_tol; /* Newton's stop: |M^-1 r|_inf <= newton_tol * max(1, |v|_inf)
                          (order 1: |x|_inf), r the residual of the implicit equation;
                          see tstep/implicit.h */
    int newton_max;    /* Newton iteration cap */
    double cg_tol;     /* linear solves: relative residual |r| <= cg_tol |b|, 0 < cg_tol < 1;
                          0 means automatic: the Eisenstat-Walker forcing rule inside
                          Newton, TS_LINEAR_TOL_DEFAULT for a linearized step */
    int cg_max;        /* linear iteration cap; 0 means 2 * dimension + 20 */
    const struct ts_linsolve_type *linear_solver; /* tstep/linsolve.h; NULL: the default */
    const struct ts_precond_type *precond;        /* NULL: the default */
} ts_solver_options;

/* The linear tolerance of a linearized step (backward-euler-linear) when
 * cg_tol is automatic: its one solve is the whole step. */
#define TS_LINEAR_TOL_DEFAULT 1e-10

/* Defaults: newton_tol 1e-8, newton_max 20, cg_tol 0 (automatic), cg_max 0 (auto). */
ts_solver_options ts_default_solver_options(void);

/* Per-step statistics; steppers fill the iteration counts, the framework the rest. */
typedef struct {
    long force_evals;
    long jacobian_products;
    long newton_iters;
    long linear_iters;
    long accepted, rejected; /* steps (adaptive runs reject and retry) */
    /* Achieved accuracy of the implicit solve, NAN where not computed.
     * residual: Newton's stop measure at the accepted iterate,
     *   |M^-1 r|_inf / max(1, |v|_inf) (order 1: |x|_inf), to compare with newton_tol;
     *   when the update test stopped Newton (tstep/implicit.h), the
     *   smaller of that and the update's measure / max(1, |v|_inf) (order 1:
     *   |x|_inf; the measure |dw|_inf, or the error estimated to be left
     *   after dw over a safety factor of 0.1: ts_newton_update_measure):
     *   the measure of the test that stopped it;
     * linear_residual: relative residual |b - A x|_2 / |b|_2 of the last linear solve.
     * In a stepper's totals both are the worst (largest) over the run. */
    double residual;
    double linear_residual;
    /* Wall time (s) of the linear solver's setups (linearization,
     * preconditioner, factorization) and of its solves; summed in totals. */
    double setup_seconds;
    double solve_seconds;
    /* Bytes the linear solver held at its last setup, as allocated
     * (ts_linsolve_bytes, tstep/linsolve.h): [0] its vectors and assembled
     * matrix, [1] the preconditioner's operators (a multigrid's levels),
     * [2] its transfer operators (prolongators), [3] its work; 0 without a
     * linear solver.  In totals the largest over the run. */
    double linear_bytes[4];
} ts_step_stats;

typedef struct ts_butcher ts_butcher; /* tstep/butcher.h */

typedef struct ts_stepper_type {
    const char *name;
    const char *summary;
    int order;         /* nominal order of accuracy */
    unsigned flags;    /* TS_IMPLICIT, TS_SYMPLECTIC, TS_NEEDS_JACOBIAN, TS_NEEDS_ENERGY,
                          TS_PARTITIONED */
    int (*alloc)(const ts_system *sys, const ts_solver_options *opt, void **scratch);
    int (*step)(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats);
    void (*free)(void *scratch); /* accepts NULL */
    /* Explicit Runge-Kutta steppers: their Butcher tableau (NULL otherwise). */
    const ts_butcher *tableau;
    /* Optional: forget every history and cache (multistep history, a
     * first-same-as-last force), so that the next step starts clean from the
     * stored state.  Called by ts_stepper_reset, at the start of ts_run and
     * after every failed step. */
    void (*reset)(void *scratch);
    /* Optional (TS_ADAPTIVE): the last step's embedded error estimate in the
     * weighted RMS norm of Hairer, Norsett & Wanner I, II.4 (4.11):
     *   sqrt(1/m sum_i (e_i / (atol + rtol max(|y0_i|, |y1_i|)))^2)
     * with y0 the state before the step and y1 the stored state. */
    double (*error)(void *scratch, const ts_system *sys, const double *y0, double rtol,
                    double atol);
} ts_stepper_type;

typedef struct {
    const ts_stepper_type *type;
    void *scratch;
    ts_solver_options opt;
    ts_step_stats last;  /* statistics of the last step */
    ts_step_stats total; /* summed over all steps */
    double *backup_;     /* the state before a step, to restore on failure (NULL with
                            TS_KEEPS_START) */
} ts_stepper;

/* Allocate an instance for `sys`; refuses (TS_ERR_UNSUPPORTED) a system
 * lacking Jacobian products or energy when the type needs them, or that the
 * type's alloc refuses.  opt may be NULL. */
int ts_stepper_new(const ts_stepper_type *type, const ts_system *sys,
                   const ts_solver_options *opt, ts_stepper **out);
void ts_stepper_free(ts_stepper *st);

/* One step from t to t + h.  On failure the system's state is as before
 * and the stepper is reset (a multistep history or cached force of the
 * failed step is never kept). */
int ts_stepper_step(ts_stepper *st, ts_system *sys, double t, double h);

/* Forget the stepper's history and caches (the type's reset, if any): call
 * after changing the system's state from outside the stepper. */
void ts_stepper_reset(ts_stepper *st);

/* After a step that succeeded: the positions before it (n entries; valid
 * until the next step), and undoing it (the state before it back, the step
 * no longer counted as accepted but as rejected). */
const double *ts_stepper_start_x(const ts_stepper *st);
void ts_stepper_undo(ts_stepper *st, ts_system *sys);

/* The last step's error estimate (TS_ADAPTIVE steppers; NAN otherwise), in
 * the weighted RMS norm of ts_stepper_type.error, y0 the state before it. */
double ts_stepper_error(const ts_stepper *st, const ts_system *sys, double rtol, double atol);

/* For stepper implementers: a step starting at t continues one that ended
 * at t_end (equal up to the rounding of t = k dt against t_end = (k-1) dt + dt). */
int ts_time_continues(double t, double t_end, double h);

/* For stepper implementers: scratch of `nvec` vectors of the first-order
 * view's length (ts_system_ydim), zeroed, in one block; free with free(). */
int ts_scratch_vectors(const ts_system *sys, int nvec, void **scratch);

/* Add b's counts into a. */
void ts_step_stats_add(ts_step_stats *a, const ts_step_stats *b);

/* --- registries (src/analysis/registry.c) ------------------------------------------ */

/* The registries hold the built-in types (tstep/builtins.h, in that order)
 * followed by the types registered at run time (plugins loaded with
 * `tstep --plugin`, the extra types handed to tstep_main).  Iterate with
 *     for (size_t i = 0; ts_stepper_at(i); i++) ...
 * or up to ts_stepper_count(); indices are stable once registered. */
size_t ts_stepper_count(void);
const ts_stepper_type *ts_stepper_at(size_t i); /* NULL when i >= count */
size_t ts_system_count(void);
const ts_system_type *ts_system_at(size_t i); /* NULL when i >= count */

const ts_stepper_type *ts_stepper_find(const char *name);
const ts_system_type *ts_system_find(const char *name);

/* Add a type to its registry for the rest of the process.  TS_ERR_INPUT
 * (detail in ts_error_detail()) for a NULL type, a missing name, step or
 * create function, or a name already registered; TS_ERR_NOMEM. */
int ts_stepper_register(const ts_stepper_type *type);
int ts_system_register(const ts_system_type *type);

/* Every built-in stepper and system type (one line each in tstep/builtins.h). */
#define TS_STEPPER(type) extern const ts_stepper_type type;
#define TS_SYSTEM(type) extern const ts_system_type type;
#include "tstep/builtins.h"
#undef TS_STEPPER
#undef TS_SYSTEM

#endif

/* tstep/grade.h - the grader: a battery of checks on one stepper.
 *
 * Every check compares a measured value with an EXPECTED one given by the
 * instructor (the options or a spec file), never with the stepper's own
 * declaration (its .order is ignored), and says pass or fail with a one-line
 * hint.  The checks (docs/grading.md gives their definitions in full):
 *
 *   implemented    one step on test1d does not return TS_ERR_NOT_IMPLEMENTED
 *                  (a skeleton fails it and every other check, score 0)
 *   order-test1d   observed global order on x' = -x (ts_sweep, ts_observed_order)
 *   order-oscillator  the same on the undamped oscillator x'' = -x
 *   order-forced   the same on x'' = -x - x^3 + sin^3 t, x = sin t: nonlinear and
 *                  driven in time, so wrong stage times and methods of order p
 *                  on linear problems only fail it
 *   local-order    slope of the one-step error |R(-h) - e^-h| against h: p + 1
 *   amplification  R(z) = the reference stepper's R(z) (--like) at several complex z
 *   interval       stability interval on the negative real axis (ts_stability_interval)
 *   energy         energy behaviour on the undamped oscillator
 *   stage-states   no force evaluation after the first in a step is at the
 *                  start-of-step (stored) state
 *   failed-force   a failed force evaluation is passed up and the state restored
 *   pins           pinned degrees of freedom do not move
 *   no-allocation  no malloc/calloc/realloc inside step (needs an allocation counter)
 *   repeatable     the same run twice gives bitwise the same state (no hidden static state)
 *   stages         one step on the probe evaluates the forces at the states and times
 *                  of the reference's (--stages): the same method, not a sibling with
 *                  the same R(z) and order
 *   error-estimate an adaptive stepper's (TS_ADAPTIVE) embedded error estimate after
 *                  one step on the oscillator ~ h^P: the estimate of the order-(P-1)
 *                  method's local error
 *
 * A check without an expected value (no --order, --interval, --energy or
 * --like) is skipped; one whose system the stepper refuses fails, unless
 * the system is first-order and the stepper is declared partitioned or
 * symplectic (TS_PARTITIONED, TS_SYMPLECTIC: methods for second-order
 * systems), when it is skipped.  Each check of a stepper of this process can
 * run in a child process (fork) with a time limit, so a stepper that crashes
 * or hangs fails that check only.  A submission (options.plugins) is never
 * loaded here: its steppers are proxies of a sandboxed worker process that
 * runs their steps, and every verdict is computed here (docs/grading.md).
 * The test parameters are drawn from options.seed (0: the documented ones).
 *
 * Depends on the stepper and system interfaces, the sweep (run.h) and the
 * stability functions (stability.h). */
#ifndef TSTEP_GRADE_H
#define TSTEP_GRADE_H

#include "tstep/stepper.h"

/* Energy behaviour on the undamped oscillator (definitions in docs/grading.md). */
typedef enum {
    TS_ENERGY_NONE = 0, /* not checked */
    TS_ENERGY_GROWS,
    TS_ENERGY_DECAYS,
    TS_ENERGY_BOUNDED,
    TS_ENERGY_CONSERVED
} ts_energy_behaviour;

/* "grows", "decays", "bounded", "conserved" ("-" for NONE). */
const char *ts_energy_name(int behaviour);
/* The behaviour named `name`, or -1. */
int ts_energy_parse(const char *name);

/* What the stepper should do.  0 / NAN / NULL: not checked. */
typedef struct {
    int order;                   /* expected order p (>= 1), 0: skip the order checks */
    double interval;             /* expected stability interval on the negative real
                                    axis (INFINITY allowed), NAN: skip */
    const ts_stepper_type *like; /* reference stepper with the same R(z), NULL: skip */
    int energy;                  /* ts_energy_behaviour, TS_ENERGY_NONE: skip */
    const ts_stepper_type *stages; /* the same method: the states and times of one
                                      step's force evaluations, NULL: skip */
    int flags;                   /* the method's TS_GRADE_FLAGS, by which checks apply
                                    (a partitioned method may refuse a first-order
                                    system, a multistep one has no one-step order, an
                                    adaptive one an error estimate); -1: the stepper's
                                    own declaration, for a trusted (built-in) stepper.
                                    A submission's stepper declaring others fails
                                    `implemented`. */
} ts_grade_expect;

/* The flags of a stepper type that change which checks apply. */
#define TS_GRADE_FLAGS (TS_PARTITIONED | TS_SYMPLECTIC | TS_MULTISTEP | TS_ADAPTIVE)
/* "partitioned,symplectic", or "none", into buf (the spec's flags=). */
const char *ts_grade_flags_name(int flags, char *buf, size_t size);
/* The flags of such a list ("none" is 0); -1 for a name that is not one. */
int ts_grade_flags_parse(const char *text);

ts_grade_expect ts_default_grade_expect(void);

/* Tolerances, documented in docs/grading.md. */
#define TS_GRADE_ORDER_TOL 0.25       /* |observed - p| for the order checks */
#define TS_GRADE_AMPLIFICATION_TOL 1e-9 /* |R - R_ref| <= tol max(1, |R_ref|) */
#define TS_GRADE_INTERVAL_TOL 1e-3    /* relative, |r - r_expected| <= tol r_expected */
#define TS_GRADE_ENERGY_CONSERVED 1e-6 /* max |E_n - E_0| / E_0 for "conserved" */
#define TS_GRADE_ENERGY_TREND 0.01    /* relative change of max E between halves */
#define TS_GRADE_STAGES_TOL 1e-12     /* relative, stage times and states */
#define TS_GRADE_TIME_LIMIT 30        /* seconds of wall clock per check */
#define TS_GRADE_MEMORY_LIMIT 2048    /* MB of address space for a submission's worker */
#define TS_GRADE_OUTPUT_MAX 8192      /* bytes of a submission's output kept per stepper */

typedef enum {
    TS_GRADE_IMPLEMENTED,
    TS_GRADE_ORDER_TEST1D,
    TS_GRADE_ORDER_OSCILLATOR,
    TS_GRADE_ORDER_FORCED,
    TS_GRADE_LOCAL_ORDER,
    TS_GRADE_AMPLIFICATION,
    TS_GRADE_INTERVAL,
    TS_GRADE_ENERGY,
    TS_GRADE_STAGE_STATES,
    TS_GRADE_FAILED_FORCE,
    TS_GRADE_PINS,
    TS_GRADE_NO_ALLOCATION,
    TS_GRADE_REPEATABLE,
    TS_GRADE_STAGES,
    TS_GRADE_ERROR_ESTIMATE,
    TS_GRADE_CHECK_COUNT
} ts_grade_check_kind;

typedef enum { TS_GRADE_SKIP = 0, TS_GRADE_PASS, TS_GRADE_FAIL } ts_grade_outcome;

/* One check's result.  The text fields are what the table prints; the
 * numbers are the same values (NAN where the check has none). */
typedef struct {
    int outcome;            /* ts_grade_outcome */
    char expected[64];      /* e.g. "2", "2.7853", "decays", "0 allocations" */
    char measured[96];
    double expected_value;  /* NAN when not a number */
    double measured_value;
    double tolerance;       /* NAN when exact */
    char hint[200];         /* one line: what to look at (failures), or a note */
    /* the other numbers of the measured text, by name (e.g. "evaluations") */
    struct {
        const char *name;   /* a string literal */
        double value;
    } detail[4];
    int ndetail;
} ts_grade_check;

typedef struct {
    const ts_stepper_type *type;
    ts_grade_expect expect;
    ts_grade_check check[TS_GRADE_CHECK_COUNT];
    int passed, failed, skipped;
    unsigned long seed;                /* of the hidden test parameters */
    char output[TS_GRADE_OUTPUT_MAX];  /* what a submission printed (its worker's
                                          stdout and stderr), capped */
} ts_grade_report;

/* Options of a grading run. */
typedef struct {
    int isolate;        /* run each check in a forked child (default 1) */
    int time_limit;     /* seconds per isolated check (default TS_GRADE_TIME_LIMIT) */
    /* Allocation counter: the number of malloc/calloc/realloc calls made by
     * the process so far, counting only while armed; NULL: the no-allocation
     * check is skipped.  Defaults to the installed counter (below). */
    void (*alloc_arm)(int on);
    long (*alloc_count)(void);
    ts_solver_options solver;
    /* Submissions (plugins) are never loaded into this process: a worker
     * loads them and serves their steps (docs/grading.md). */
    const char *const *plugins; /* the submission's plugin files */
    int nplugins;
    int sandbox;        /* run that worker under bubblewrap (default 1) */
    long memory_limit;  /* MB of address space of the worker (TS_GRADE_MEMORY_LIMIT) */
    unsigned long seed; /* of the hidden test parameters */
} ts_grade_options;

ts_grade_options ts_default_grade_options(void);

/* Install a program's allocation counter for ts_default_grade_options: the
 * same as ts_alloc_counter_install (tstep/status.h), which the tstep program
 * calls (src/cli/alloc_counter.h). */
void ts_grade_set_alloc_counter(void (*arm)(int on), long (*count)(void));

/* Run every check on `type`.  Returns TS_OK when the battery ran (rep says
 * how it went), or a failure to set it up (out of memory, a fork failure). */
int ts_grade(const ts_stepper_type *type, const ts_grade_expect *expect,
             const ts_grade_options *opt, ts_grade_report *rep);

/* Measure what a trusted (e.g. the instructor's) stepper does, as expected
 * values for a spec: order = the observed order on test1d rounded, interval
 * = its stability interval on the negative real axis, energy = its energy
 * behaviour; like is left NULL.  Fails when a run fails. */
int ts_grade_measure(const ts_stepper_type *type, const ts_grade_options *opt,
                     ts_grade_expect *out);

/* The check's short name ("order-test1d", ...). */
const char *ts_grade_check_name(int kind);
/* "pass", "FAIL", "skip". */
const char *ts_grade_outcome_name(int outcome);

/* --- the spec file ---------------------------------------------------------
 * One stepper per line: its name, then key=value pairs, e.g.
 *     rk4  order=4 interval=2.785293563405 energy=decays like=rk4
 * Keys: order (integer >= 1), interval (number or inf), energy (grows,
 * decays, bounded, conserved), like and stages (stepper names), flags (the
 * method's: partitioned, symplectic, multistep, adaptive, comma-separated,
 * or none).  '#' starts a comment; blank lines are ignored. */
#define TS_GRADE_SPEC_MAX 64
typedef struct {
    char name[64];
    char like[64];      /* "" when none */
    char stages[64];    /* "" when none */
    ts_grade_expect expect; /* expect.like, .stages are left NULL: look them up;
                               expect.flags -1 when the line has no flags= */
} ts_grade_spec_entry;

/* Parse `text` into entries[0..*count).  TS_ERR_INPUT with a detail naming
 * the line on a malformed line, an unknown key or a bad value. */
int ts_grade_spec_parse(const char *text, ts_grade_spec_entry *entries, int max, int *count);

#endif

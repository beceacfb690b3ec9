/* The grader: a battery of checks on one stepper against expected values
 * (see tstep/grade.h; definitions and tolerances in docs/grading.md).
 *
 * Accuracy and stability are measured with the library's own experiments
 * (ts_sweep and ts_observed_order, ts_amplification, ts_stability_interval);
 * the structural checks (stage states, failed forces, pins, allocation,
 * repeatability) run the stepper on a probe system defined here, a set of
 * three anharmonic oscillators f_i = -k_i x_i - e x_i^3 of different masses
 * (conservative, with Jacobians and energy so implicit and minimizing
 * steppers accept it), which records the states its forces are evaluated at
 * and can fail a chosen force evaluation.
 *
 * Each check of a built-in may run in a forked child with a time limit, so
 * a stepper that crashes or hangs fails that check and the report is still
 * written.  A submission's stepper is a proxy (src/grade_worker.c): the
 * same checks run here, its steps in a sandboxed worker, and a worker that
 * dies, hangs or breaks the protocol fails the check it was in.  The probe's
 * coefficients and start, the forced system's phase, the amplification
 * points' scale and the local-order steps are drawn from the seed. */
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "grade_worker.h"
#include "tstep/grade.h"
#include "tstep/linalg.h"
#include "tstep/run.h"
#include "tstep/stability.h"

static const char *const check_names[TS_GRADE_CHECK_COUNT] = {
    "implemented",  "order-test1d", "order-oscillator", "order-forced", "local-order",
    "amplification", "interval",    "energy",           "stage-states",
    "failed-force", "pins",         "no-allocation",    "repeatable",       "stages",
    "error-estimate",
};

const char *ts_grade_check_name(int kind)
{
    return kind >= 0 && kind < TS_GRADE_CHECK_COUNT ? check_names[kind] : "?";
}

const char *ts_grade_outcome_name(int outcome)
{
    return outcome == TS_GRADE_PASS ? "pass" : outcome == TS_GRADE_FAIL ? "FAIL" : "skip";
}

static const char *const energy_names[] = {"-", "grows", "decays", "bounded", "conserved"};

const char *ts_energy_name(int behaviour)
{
    return behaviour >= 0 && behaviour <= TS_ENERGY_CONSERVED ? energy_names[behaviour] : "?";
}

int ts_energy_parse(const char *name)
{
    for (int i = TS_ENERGY_GROWS; i <= TS_ENERGY_CONSERVED; i++)
        if (strcmp(name, energy_names[i]) == 0)
            return i;
    return -1;
}

ts_grade_expect ts_default_grade_expect(void)
{
    return (ts_grade_expect){.order = 0, .interval = NAN, .like = NULL, .energy = 0,
                             .stages = NULL, .flags = -1};
}

static const struct {
    const char *name;
    int flag;
} method_flags[] = {{"partitioned", TS_PARTITIONED},
                    {"symplectic", TS_SYMPLECTIC},
                    {"multistep", TS_MULTISTEP},
                    {"adaptive", TS_ADAPTIVE}};
#define NMETHOD_FLAGS (sizeof method_flags / sizeof *method_flags)

const char *ts_grade_flags_name(int flags, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NMETHOD_FLAGS; i++)
        if ((flags & method_flags[i].flag) && n < size)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "", method_flags[i].name);
    if (!n)
        snprintf(buf, size, "none");
    return buf;
}

int ts_grade_flags_parse(const char *text)
{
    if (strcmp(text, "none") == 0)
        return 0;
    int flags = 0;
    for (const char *p = text;;) {
        size_t len = strcspn(p, ","), i = 0;
        while (i < NMETHOD_FLAGS && !(strlen(method_flags[i].name) == len &&
                                      strncmp(method_flags[i].name, p, len) == 0))
            i++;
        if (i == NMETHOD_FLAGS)
            return -1;
        flags |= method_flags[i].flag;
        if (!p[len])
            return flags;
        p += len + 1;
    }
}

/* The method flags the checks go by: the expected ones, or a trusted
 * stepper's own (tstep/grade.h, ts_grade_expect.flags). */
static int method_of(const ts_stepper_type *type, const ts_grade_expect *e)
{
    return e->flags >= 0 ? e->flags : (int)(type->flags & TS_GRADE_FLAGS);
}

void ts_grade_set_alloc_counter(void (*arm)(int on), long (*count)(void))
{
    ts_alloc_counter_install(&(ts_alloc_counter){.arm = arm, .count = count});
}

ts_grade_options ts_default_grade_options(void)
{
    const ts_alloc_counter *c = ts_alloc_counter_installed();
    return (ts_grade_options){.isolate = 1,
                              .time_limit = TS_GRADE_TIME_LIMIT,
                              .alloc_arm = c ? c->arm : NULL,
                              .alloc_count = c ? c->count : NULL,
                              .solver = ts_default_solver_options(),
                              .sandbox = 1,
                              .memory_limit = TS_GRADE_MEMORY_LIMIT};
}

/* --- the hidden test parameters ----------------------------------------------
 * Drawn from the seed of the options (splitmix64), so that a submission
 * cannot pass by recognizing its inputs; seed 0 gives the documented
 * values (docs/grading.md).  Set by ts_grade before the checks run. */

#define PROBE_N 3

typedef struct {
    double k[PROBE_N], m[PROBE_N], x0[PROBE_N], v0[PROBE_N], e;
    double phase;     /* of the forced system's solution x = sin(t + phase) */
    double z_scale;   /* of the amplification check's points */
    double h0;        /* the local-order check's largest step */
} hidden_parameters;

static hidden_parameters hidden = {{1.0, 3.0, 2.0}, {1.0, 2.0, 0.5}, {0.5, -0.3, 0.8}, {0.2, 0.4, -0.1}, 0.5,
            0.0, 1.0, 0.2};

static double draw(unsigned long long *state, double lo, double hi)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

static void draw_hidden(unsigned long seed)
{
    static const hidden_parameters documented = {{1.0, 3.0, 2.0}, {1.0, 2.0, 0.5},
                                              {0.5, -0.3, 0.8}, {0.2, 0.4, -0.1}, 0.5,
                                              0.0, 1.0, 0.2};
    hidden = documented;
    if (seed == 0)
        return;
    unsigned long long st = seed;
    for (int i = 0; i < PROBE_N; i++) {
        hidden.k[i] = draw(&st, 0.5, 4.0);
        hidden.m[i] = draw(&st, 0.5, 2.0);
        hidden.x0[i] = draw(&st, 0.2, 1.0) * (draw(&st, 0, 1) < 0.5 ? -1 : 1);
        hidden.v0[i] = draw(&st, -0.5, 0.5);
    }
    hidden.e = draw(&st, 0.2, 1.0);
    hidden.phase = draw(&st, 0.0, 6.283185307179586);
    hidden.z_scale = draw(&st, 0.8, 1.2);
    hidden.h0 = draw(&st, 0.15, 0.25);
}

/* --- the probe system ------------------------------------------------------ */

#define PROBE_FAIL_STATUS TS_ERR_IO

typedef struct {
    ts_system base;
    double k[PROBE_N], e;
    double start[2 * PROBE_N]; /* the start-of-step state, set by the grader */
    long calls;                /* force evaluations since the grader's reset */
    long at_start;             /* of them, after the first, at the start state */
    long fail_at;              /* the call (1-based) that fails, 0 never */
    struct probe_record {      /* when set: the first PROBE_RECORDS evaluations */
        double t, y[2 * PROBE_N];
    } *record;
} probe_system;

#define PROBE_RECORDS 16

static void probe_destroy(ts_system *sys)
{
    ts_system_release(sys);
    free(sys);
}

static int probe_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    probe_system *p = (probe_system *)sys;
    (void)t;
    p->calls++;
    if (p->record && p->calls <= PROBE_RECORDS) {
        struct probe_record *r = &p->record[p->calls - 1];
        r->t = t;
        memcpy(r->y, x, PROBE_N * sizeof *x);
        memcpy(r->y + PROBE_N, v, PROBE_N * sizeof *v);
    }
    if (p->calls > 1 && memcmp(x, p->start, sizeof p->start / 2) == 0 &&
        memcmp(v, p->start + PROBE_N, sizeof p->start / 2) == 0)
        p->at_start++;
    if (p->calls == p->fail_at) {
        ts_vec_zero(PROBE_N, f); /* finite: a stepper that ignores the status goes on */
        return ts_error(PROBE_FAIL_STATUS, "probe system: injected force failure");
    }
    for (size_t i = 0; i < PROBE_N; i++)
        f[i] = -p->k[i] * x[i] - p->e * x[i] * x[i] * x[i];
    return TS_OK;
}

static int probe_dfdx(ts_system *sys, double t, const double *x, const double *v,
                      const double *u, double *out)
{
    const probe_system *p = (const probe_system *)sys;
    (void)t, (void)v;
    for (size_t i = 0; i < PROBE_N; i++)
        out[i] = -(p->k[i] + 3.0 * p->e * x[i] * x[i]) * u[i];
    return TS_OK;
}

static int probe_dfdv(ts_system *sys, double t, const double *x, const double *v,
                      const double *u, double *out)
{
    (void)sys, (void)t, (void)x, (void)v, (void)u;
    ts_vec_zero(PROBE_N, out);
    return TS_OK;
}

static int probe_energy(ts_system *sys, double t, const double *x, const double *v,
                        double *kinetic, double *potential)
{
    const probe_system *p = (const probe_system *)sys;
    (void)t;
    *kinetic = *potential = 0.0;
    for (size_t i = 0; i < PROBE_N; i++) {
        *kinetic += 0.5 * sys->mass[i] * v[i] * v[i];
        *potential += 0.5 * p->k[i] * x[i] * x[i] + 0.25 * p->e * x[i] * x[i] * x[i] * x[i];
    }
    return TS_OK;
}

static const ts_system_ops probe_ops = {
    .destroy = probe_destroy,
    .forces = probe_forces,
    .dfdx_mul = probe_dfdx,
    .dfdv_mul = probe_dfdv,
    .energy = probe_energy,
};

/* The probe with the hidden coefficients and start (seed 0: k = (1, 3, 2),
 * m = (1, 2, 0.5), e = 0.5, x = (0.5, -0.3, 0.8), v = (0.2, 0.4, -0.1)); with
 * `pin`, degree of freedom 1 pinned (at rest). */
static int probe_new(int pin, probe_system **out)
{
    const double *k = hidden.k, *m = hidden.m, *x0 = hidden.x0, *v0 = hidden.v0;
    probe_system *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p)
        return ts_error(TS_ERR_NOMEM, "probe system");
    int s = ts_system_init(&p->base, &probe_ops, NULL, 2, PROBE_N);
    if (!s && pin)
        s = ts_system_alloc_pins(&p->base);
    if (s) {
        ts_system_release(&p->base);
        free(p);
        return s;
    }
    p->e = hidden.e;
    for (size_t i = 0; i < PROBE_N; i++) {
        p->k[i] = k[i];
        p->base.mass[i] = m[i];
        p->base.x[i] = x0[i];
        p->base.v[i] = v0[i];
    }
    if (pin) {
        p->base.pinned[1] = 1;
        p->base.v[1] = 0.0;
    }
    *out = p;
    return TS_OK;
}

/* Record the stored state as the start of the next step; reset the counts. */
static void probe_mark(probe_system *p)
{
    ts_system_get_y(&p->base, p->start);
    p->calls = p->at_start = 0;
}

/* --- the forced system -------------------------------------------------------- */

/* x'' = -x - x^3 + sin^3 (t + a), x(0) = sin a, v(0) = cos a, mass 1: x = sin(t + a)
 * exactly (x'' = -sin(t + a), and -x - x^3 + sin^3(t + a) = -sin(t + a) there),
 * the phase a hidden (0 for seed 0).  Nonlinear and driven in time: a
 * stepper that evaluates its stages at the wrong times, or whose order
 * holds on linear problems only (the right R(z) and nothing more), loses its
 * order here, where test1d and the oscillator cannot see it. */
typedef struct {
    ts_system base;
    double phase;
} forced_system;

static void forced_destroy(ts_system *sys)
{
    ts_system_release(sys);
    free(sys);
}

static double forced_drive(const ts_system *sys, double t)
{
    double s = sin(t + ((const forced_system *)sys)->phase);
    return s * s * s;
}

static int forced_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    (void)v;
    f[0] = -x[0] - x[0] * x[0] * x[0] + forced_drive(sys, t);
    return TS_OK;
}

static int forced_dfdx(ts_system *sys, double t, const double *x, const double *v,
                       const double *u, double *out)
{
    (void)sys, (void)t, (void)v;
    out[0] = -(1.0 + 3.0 * x[0] * x[0]) * u[0];
    return TS_OK;
}

static int forced_dfdv(ts_system *sys, double t, const double *x, const double *v,
                       const double *u, double *out)
{
    (void)sys, (void)t, (void)x, (void)v, (void)u;
    out[0] = 0.0;
    return TS_OK;
}

/* f = -dV/dx with V = x^2/2 + x^4/4 - x sin^3(t + a) (the drive's potential at t) */
static int forced_energy(ts_system *sys, double t, const double *x, const double *v,
                         double *kinetic, double *potential)
{
    *kinetic = 0.5 * v[0] * v[0];
    *potential = 0.5 * x[0] * x[0] + 0.25 * x[0] * x[0] * x[0] * x[0] -
                 x[0] * forced_drive(sys, t);
    return TS_OK;
}

static int forced_exact(ts_system *sys, double t, double *x, double *v)
{
    double a = ((const forced_system *)sys)->phase;
    x[0] = sin(t + a);
    v[0] = cos(t + a);
    return TS_OK;
}

static const ts_system_ops forced_ops = {
    .destroy = forced_destroy,
    .forces = forced_forces,
    .dfdx_mul = forced_dfdx,
    .dfdv_mul = forced_dfdv,
    .energy = forced_energy,
    .exact = forced_exact,
};

static const ts_param_def forced_params[] = {{NULL, 0, NULL, NULL}};

static int forced_create(const ts_params *p, ts_system **out);

/* not registered: the grader's own */
static const ts_system_type forced_type = {
    .name = "forced",
    .summary = "x'' = -x - x^3 + sin^3(t + a), x = sin(t + a) (the grader's order-forced "
               "system)",
    .params = forced_params,
    .create = forced_create,
};

static int forced_new(double phase, ts_system **out)
{
    forced_system *f = calloc(1, sizeof *f);
    if (!f)
        return ts_error(TS_ERR_NOMEM, "forced system");
    int s = ts_system_init(&f->base, &forced_ops, &forced_type, 2, 1);
    if (s) {
        free(f);
        return s;
    }
    f->phase = phase;
    f->base.mass[0] = 1.0;
    forced_exact(&f->base, 0.0, f->base.x, f->base.v);
    *out = &f->base;
    return TS_OK;
}

static int forced_create(const ts_params *p, ts_system **out)
{
    (void)p;
    return forced_new(hidden.phase, out);
}

/* The test1d and oscillator of the checks: the registered systems with
 * their defaults, under types of the grader's own, so that a submission's
 * worker may build them itself (ts_grade_local_system) instead of asking
 * the grader for every force. */
static int grade_test1d_create(const ts_params *p, ts_system **out);
static int grade_oscillator_create(const ts_params *p, ts_system **out);
static const ts_system_type grade_test1d = {
    .name = "test1d", .summary = "test1d, defaults", .params = forced_params,
    .create = grade_test1d_create};
static const ts_system_type grade_oscillator = {
    .name = "oscillator", .summary = "oscillator, defaults", .params = forced_params,
    .create = grade_oscillator_create};

static int grade_test1d_create(const ts_params *p, ts_system **out)
{
    (void)p;
    int s = ts_system_new(&ts_test1d, NULL, out);
    if (!s)
        (*out)->type = &grade_test1d;
    return s;
}

static int grade_oscillator_create(const ts_params *p, ts_system **out)
{
    (void)p;
    int s = ts_system_new(&ts_oscillator, NULL, out);
    if (!s)
        (*out)->type = &grade_oscillator;
    return s;
}

int ts_grade_local_system(const ts_system *sys, char *name, size_t size, double *param)
{
    *param = 0.0;
    if (sys->type == &forced_type)
        *param = ((const forced_system *)sys)->phase;
    else if (sys->type != &grade_test1d && sys->type != &grade_oscillator)
        return 0;
    snprintf(name, size, "%s", sys->type->name);
    return 1;
}

int ts_grade_local_new(const char *name, double param, ts_system **out)
{
    if (strcmp(name, "forced") == 0)
        return forced_new(param, out);
    if (strcmp(name, "test1d") == 0)
        return ts_system_new(&ts_test1d, NULL, out);
    if (strcmp(name, "oscillator") == 0)
        return ts_system_new(&ts_oscillator, NULL, out);
    return ts_error(TS_ERR_INPUT, "no grader system '%s'", name);
}

/* --- helpers ----------------------------------------------------------------- */

#define SET(field, ...) snprintf(c->field, sizeof c->field, __VA_ARGS__)

/* Another number of the measured text, for the JSON report. */
static void detail(ts_grade_check *c, const char *name, double value)
{
    int n = (int)(sizeof c->detail / sizeof *c->detail);
    if (c->ndetail < n) {
        c->detail[c->ndetail].name = name;
        c->detail[c->ndetail++].value = value;
    }
}

static void fail_status(ts_grade_check *c, const char *what, int s)
{
    const char *d = ts_error_detail();
    c->outcome = TS_GRADE_FAIL;
    SET(measured, "%s: %s", what, ts_status_message(s));
    if (*d)
        SET(hint, "%s", d);
    else
        SET(hint, "the step returned this status: 'tstep run' with this stepper shows where");
}

/* The stepper refuses the system a check needs: a first-order one, refused
 * by a partitioned or symplectic method (TS_PARTITIONED, TS_SYMPLECTIC in
 * `method`, method_of's: methods for second-order systems), makes the check
 * not apply; any other refusal fails it (else refusing would dodge the
 * check). */
static void refused_system(int method, ts_grade_check *c, const char *system, int first_order)
{
    const char *d = ts_error_detail();
    SET(measured, "-");
    if (first_order && (method & (TS_PARTITIONED | TS_SYMPLECTIC))) {
        c->outcome = TS_GRADE_SKIP;
        SET(hint, "skipped: the stepper refuses %s%s%s (a partitioned or symplectic method)",
            system, *d ? ": " : "", d);
    } else {
        c->outcome = TS_GRADE_FAIL;
        SET(measured, "refused");
        if (first_order)
            SET(hint, "the stepper refuses %s%s%s; only a partitioned or symplectic method "
                      "(TS_PARTITIONED, TS_SYMPLECTIC; the spec's flags=) may refuse a "
                      "first-order system",
                system, *d ? ": " : "", d);
        else
            SET(hint, "the stepper refuses %s%s%s, a second-order system: every stepper must "
                      "step it",
                system, *d ? ": " : "", d);
    }
}

/* A fresh system of a registered type with its defaults, and a stepper on it. */
static int fresh(const ts_system_type *stype, const ts_stepper_type *type,
                 const ts_grade_options *opt, ts_system **sys, ts_stepper **st)
{
    *st = NULL;
    int s = ts_system_new(stype, NULL, sys);
    if (!s && (s = ts_stepper_new(type, *sys, &opt->solver, st))) {
        ts_system_free(*sys);
        *sys = NULL;
    }
    return s;
}

static int fresh_probe(int pin, const ts_stepper_type *type, const ts_grade_options *opt,
                       probe_system **p, ts_stepper **st)
{
    *st = NULL;
    int s = probe_new(pin, p);
    if (!s && (s = ts_stepper_new(type, &(*p)->base, &opt->solver, st))) {
        ts_system_free(&(*p)->base);
        *p = NULL;
    }
    return s;
}

static void release(ts_system *sys, ts_stepper *st)
{
    ts_stepper_free(st);
    ts_system_free(sys);
}

/* --- the checks ------------------------------------------------------------ */

static void check_implemented(const ts_stepper_type *type, const ts_grade_expect *e,
                              const ts_grade_options *opt, ts_grade_check *c)
{
    if (e->flags >= 0 && (int)(type->flags & TS_GRADE_FLAGS) != e->flags) {
        char got[80], want[80];
        c->outcome = TS_GRADE_FAIL;
        SET(measured, "flags %s", ts_grade_flags_name((int)type->flags, got, sizeof got));
        SET(hint, "the type declares %s; the method is %s (.flags: they decide which checks "
                  "apply)",
            got, ts_grade_flags_name(e->flags, want, sizeof want));
        return;
    }
    ts_system *sys;
    ts_stepper *st;
    const char *where = "one step on test1d failed";
    int s = fresh(&grade_test1d, type, opt, &sys, &st);
    if (s == TS_ERR_UNSUPPORTED) { /* e.g. a partitioned stepper: the oscillator then */
        where = "one step on the oscillator failed";
        s = fresh(&grade_oscillator, type, opt, &sys, &st);
    }
    if (!s)
        s = ts_stepper_step(st, sys, 0.0, 0.1);
    release(sys, st);
    if (s == TS_ERR_NOT_IMPLEMENTED) {
        c->outcome = TS_GRADE_FAIL;
        SET(measured, "not implemented");
        SET(hint, "write the step function: it still returns TS_ERR_NOT_IMPLEMENTED");
    } else if (s) {
        fail_status(c, where, s);
    } else {
        c->outcome = TS_GRADE_PASS;
        SET(measured, "a step");
    }
}

/* The order sweep of both systems: t_end 1, dt from 0.1 to 0.001, 7 levels. */
/* The error at t = 1 against dt, 7 steps from 1e-3 to 1e-1.  On the forced
 * system, at its hidden phase a and at a + pi/2, the errors combined in
 * quadrature: at one phase the leading error term of a correct method can
 * nearly vanish at t = 1 (implicit midpoint measured 1.74 at one drawn
 * phase), never at both.  Newton's tolerance is tightened to 1e-12, or its
 * error floors the small steps' (crank-nicolson measured 1.77 at 1e-8). */
static int order_points(const ts_stepper_type *type, const ts_grade_options *opt,
                        const ts_system_type *stype, ts_sweep_point pts[7])
{
    ts_solver_options so = opt->solver; /* Newton's error far below the smallest step's */
    so.newton_tol = fmin(so.newton_tol, 1e-12);
    ts_sweep_request rq = {.stype = stype, .type = type, .opt = &so, .dt_min = 1e-3,
                           .dt_max = 1e-1, .levels = 7};
    int s = ts_sweep(&rq, 1.0, pts);
    if (s || stype != &forced_type)
        return s;
    ts_sweep_point q[7];
    double a = hidden.phase;
    hidden.phase = a + 1.5707963267948966;
    s = ts_sweep(&rq, 1.0, q);
    hidden.phase = a;
    for (int i = 0; !s && i < 7; i++) {
        pts[i].error = hypot(pts[i].error, q[i].error);
        if (!pts[i].excluded)
            pts[i].excluded = q[i].excluded;
        if (!pts[i].status)
            pts[i].status = q[i].status;
    }
    return s;
}

static void check_order(const ts_stepper_type *type, const ts_grade_expect *e,
                        const ts_grade_options *opt, const ts_system_type *stype,
                        ts_grade_check *c)
{
    ts_sweep_point pts[7];
    int used = 0;
    int s = order_points(type, opt, stype, pts);
    if (s == TS_ERR_UNSUPPORTED) {
        refused_system(method_of(type, e), c, stype->name, stype == &grade_test1d);
        return;
    }
    if (s) {
        fail_status(c, "sweep failed", s);
        return;
    }
    double p = ts_observed_order(pts, 7, &used);
    c->measured_value = p;
    if (isnan(p)) {
        c->outcome = TS_GRADE_FAIL;
        SET(measured, "none (%d usable points)", used);
        detail(c, "points_used", used);
        SET(hint, "the runs failed or their error exceeded the solution (check the update "
                  "formula and the status returned)");
        if (pts[0].status)
            SET(hint, "the runs failed: %s", ts_status_message(pts[0].status));
        return;
    }
    SET(measured, "%.2f", p);
    detail(c, "points_used", used);
    c->outcome = fabs(p - e->order) <= TS_GRADE_ORDER_TOL ? TS_GRADE_PASS : TS_GRADE_FAIL;
    if (c->outcome == TS_GRADE_FAIL)
        SET(hint, "%s: error ~ dt^%.2f on %s; check the stage times and weights against "
                  "the formula",
            p < e->order ? "order too low" : "order higher than expected", p, stype->name);
}

/* One step of h on the undamped oscillator from x = 1, v = 0: the error
 * against (cos h, -sin h) in the max norm. */
static int oscillator_local_error(const ts_stepper_type *type, const ts_grade_options *opt,
                                  double h, double *err)
{
    ts_system *sys;
    ts_stepper *st;
    int s = fresh(&grade_oscillator, type, opt, &sys, &st);
    if (!s)
        s = ts_stepper_step(st, sys, 0.0, h);
    if (!s)
        *err = fmax(fabs(sys->x[0] - cos(h)), fabs(sys->v[0] + sin(h)));
    release(sys, st);
    return s;
}

/* One-step error on x' = -x: |R(-h) - e^-h| ~ C h^(p+1); for a stepper that
 * refuses x' = -x (a partitioned one), on the oscillator x'' = -x. */
static void check_local_order(const ts_stepper_type *type, const ts_grade_expect *e,
                              const ts_grade_options *opt, ts_grade_check *c)
{
    const double hs[] = {hidden.h0, hidden.h0 / 2, hidden.h0 / 4, hidden.h0 / 8, hidden.h0 / 16};
    if (method_of(type, e) & TS_MULTISTEP) {
        c->outcome = TS_GRADE_SKIP;
        SET(measured, "-");
        SET(hint, "skipped: a multistep method (TS_MULTISTEP): one step from a fresh start is "
                  "its starting step; the order checks judge it");
        return;
    }
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int k = 0, osc = 0;
    const char *eq = "x' = -x";
    for (size_t i = 0; i < sizeof hs / sizeof *hs; i++) {
        double re = 0, im = 0, err = 0;
        int s = osc ? TS_ERR_UNSUPPORTED : ts_amplification(type, &opt->solver, -hs[i], 0.0, &re, &im);
        if (s == TS_ERR_UNSUPPORTED) {
            osc = 1, eq = "x'' = -x";
            s = oscillator_local_error(type, opt, hs[i], &err);
        } else {
            err = hypot(re - exp(-hs[i]), im);
        }
        if (s) {
            fail_status(c, osc ? "one step on the oscillator failed" : "one step on test1d failed",
                        s);
            return;
        }
        if (!(err > 1e-14) || !isfinite(err)) /* round-off or nonsense: left out */
            continue;
        double x = log(hs[i]), y = log(err);
        sx += x, sy += y, sxx += x * x, sxy += x * y, k++;
    }
    double slope = k >= 2 ? (k * sxy - sx * sy) / (k * sxx - sx * sx) : NAN;
    c->measured_value = slope;
    if (isnan(slope)) {
        c->outcome = TS_GRADE_FAIL;
        SET(measured, "none (one-step error at round-off)");
        SET(hint, "the one-step error on %s is at round-off for every h: order above 12?", eq);
        return;
    }
    SET(measured, "%.2f", slope);
    c->outcome = fabs(slope - (e->order + 1)) <= TS_GRADE_ORDER_TOL ? TS_GRADE_PASS
                                                                     : TS_GRADE_FAIL;
    if (c->outcome == TS_GRADE_FAIL)
        SET(hint, "one-step error ~ h^%.2f on %s; a method of order p has h^(p+1)", slope, eq);
}

static void check_amplification(const ts_stepper_type *type, const ts_grade_expect *e,
                                const ts_grade_options *opt, ts_grade_check *c)
{
    static const double z[][2] = {{-0.5, 0.0}, {-2.0, 0.0}, {-3.7, 0.0},
                                  {0.0, 1.0},  {-1.0, 1.0}, {-0.3, 2.0}};
    const int nz = (int)(sizeof z / sizeof *z);
    double worst = 0.0, wre = 0, wim = 0;
    int compared = 0, refused = 0;
    for (int i = 0; i < nz; i++) {
        double rr, ri, sr, si;
        double zr = z[i][0] * hidden.z_scale, zi = z[i][1] * hidden.z_scale;
        int s = ts_amplification(e->like, &opt->solver, zr, zi, &rr, &ri);
        if (s) /* the reference refuses or fails there (e.g. complex z): not compared */
            continue;
        s = ts_amplification(type, &opt->solver, zr, zi, &sr, &si);
        if (s == TS_ERR_UNSUPPORTED) {
            refused++;
            continue; /* the stepper refuses the (complex) test equation */
        }
        double d = s ? INFINITY : hypot(sr - rr, si - ri) / fmax(1.0, hypot(rr, ri));
        if (!(d <= worst)) {
            worst = d, wre = zr, wim = zi;
        }
        compared++;
    }
    c->measured_value = worst;
    if (!compared && refused) {
        refused_system(method_of(type, e), c, "the test equation x' = z x", 1);
        return;
    }
    if (!compared) {
        c->outcome = TS_GRADE_FAIL;
        SET(measured, "no z where both run");
        SET(hint, "neither the real nor the complex test equation ran with both steppers");
        return;
    }
    SET(measured, "max |R - R_ref| %.2e (%d of %d z)", worst, compared, nz);
    detail(c, "points_compared", compared);
    detail(c, "points", nz);
    c->outcome = worst <= TS_GRADE_AMPLIFICATION_TOL ? TS_GRADE_PASS : TS_GRADE_FAIL;
    if (c->outcome == TS_GRADE_FAIL)
        SET(hint, "one step differs from %s at z = %g%+gi: compare the coefficients with "
                  "the formula",
            e->like->name, wre, wim);
}

static void check_interval(const ts_stepper_type *type, const ts_grade_expect *e,
                           const ts_grade_options *opt, ts_grade_check *c)
{
    double r;
    int s = ts_stability_interval(type, &opt->solver, -1.0, 0.0, &r);
    if (s == TS_ERR_UNSUPPORTED) {
        refused_system(method_of(type, e), c, "the test equation x' = -k x", 1);
        return;
    }
    if (s) {
        fail_status(c, "stability interval", s);
        return;
    }
    c->measured_value = r;
    SET(measured, "%.6g", r);
    int ok = isinf(e->interval) ? isinf(r)
                                : fabs(r - e->interval) <= TS_GRADE_INTERVAL_TOL * e->interval;
    c->outcome = ok ? TS_GRADE_PASS : TS_GRADE_FAIL;
    if (!ok && isinf(r))
        SET(hint, "|R(-z)| <= 1 for every z up to %g on x' = -k x (z = hk): check the "
                  "coefficients", TS_STABILITY_S_MAX);
    else if (!ok)
        SET(hint, "|R(-z)| first exceeds 1 at z = %.6g on x' = -k x (z = hk): check the "
                  "coefficients",
            r);
}

/* The undamped oscillator x'' = -x from x = 1, v = 0, 400 steps of 0.5 (T = 200,
 * about 32 periods).  A = max E over the first half, B over the second. */
#define ENERGY_DT 0.5
#define ENERGY_STEPS 400

/* Run the energy experiment: *got the behaviour, *ratio = B/A (inf when the
 * run blew up), *dev = max |E_n - E_0| / E_0, *steps the steps run.  Returns
 * a step's failure other than divergence. */
static int energy_behaviour(const ts_stepper_type *type, const ts_grade_options *opt, int *got,
                            double *ratio, double *dev, long *steps)
{
    ts_system *sys;
    ts_stepper *st;
    double ke, pe;
    int s = fresh(&grade_oscillator, type, opt, &sys, &st);
    if (!s)
        s = ts_system_energy(sys, 0.0, &ke, &pe);
    if (s) {
        release(sys, st);
        return s;
    }
    double e0 = ke + pe, a = e0, b = 0.0;
    long n;
    *got = -1;
    *dev = 0.0;
    for (n = 1; n <= ENERGY_STEPS; n++) {
        s = ts_stepper_step(st, sys, (n - 1) * ENERGY_DT, ENERGY_DT);
        if (!s)
            s = ts_system_energy(sys, n * ENERGY_DT, &ke, &pe);
        double en = ke + pe;
        if (s == TS_ERR_DIVERGED || (!s && !(en <= 1e8 * e0))) {
            *got = TS_ENERGY_GROWS; /* blew up: the energy grew without bound */
            s = TS_OK;
            break;
        }
        if (s)
            break;
        *dev = fmax(*dev, fabs(en - e0) / e0);
        if (n <= ENERGY_STEPS / 2)
            a = fmax(a, en);
        else
            b = fmax(b, en);
    }
    release(sys, st);
    *steps = n;
    if (s)
        return s;
    *ratio = *got == TS_ENERGY_GROWS ? INFINITY : b / a;
    if (*got < 0)
        *got = *dev <= TS_GRADE_ENERGY_CONSERVED          ? TS_ENERGY_CONSERVED
               : *ratio > 1.0 + TS_GRADE_ENERGY_TREND     ? TS_ENERGY_GROWS
               : *ratio < 1.0 - TS_GRADE_ENERGY_TREND     ? TS_ENERGY_DECAYS
                                                          : TS_ENERGY_BOUNDED;
    return TS_OK;
}

static void check_energy(const ts_stepper_type *type, const ts_grade_expect *e,
                         const ts_grade_options *opt, ts_grade_check *c)
{
    int got;
    double ratio, dev;
    long n;
    int s = energy_behaviour(type, opt, &got, &ratio, &dev, &n);
    if (s) {
        fail_status(c, "a step on the oscillator failed", s);
        return;
    }
    c->measured_value = ratio;
    if (isinf(ratio)) {
        SET(measured, "grows (diverged at step %ld)", n);
        detail(c, "diverged_at_step", (double)n);
    } else {
        SET(measured, "%s (B/A %.4g, max|dE|/E0 %.2e)", ts_energy_name(got), ratio, dev);
        detail(c, "max_relative_deviation", dev);
    }
    int ok = got == e->energy || (e->energy == TS_ENERGY_BOUNDED && got == TS_ENERGY_CONSERVED);
    c->outcome = ok ? TS_GRADE_PASS : TS_GRADE_FAIL;
    if (!ok)
        SET(hint, "energy %s on x'' = -x at dt = %g, expected it to be %s: check the update "
                  "of x and v",
            ts_energy_name(got), ENERGY_DT, ts_energy_name(e->energy));
}

int ts_grade_measure(const ts_stepper_type *type, const ts_grade_options *opt,
                     ts_grade_expect *out)
{
    ts_grade_options defaults = ts_default_grade_options();
    ts_sweep_point pts[7];
    double ratio, dev;
    long n;
    if (!opt)
        opt = &defaults;
    *out = ts_default_grade_expect();
    ts_sweep_request rq = {.stype = &grade_test1d, .type = type, .opt = &opt->solver,
                           .dt_min = 1e-3, .dt_max = 1e-1, .levels = 7};
    int s = ts_sweep(&rq, 1.0, pts);
    if (s)
        return s;
    for (int i = 0; i < 7; i++)
        if (pts[i].status)
            return ts_error(pts[i].status, "stepper '%s' failed on test1d at dt = %g",
                            type->name, pts[i].dt);
    double p = ts_observed_order(pts, 7, NULL);
    if (!(p >= 0.5))
        return ts_error(TS_ERR_INPUT, "stepper '%s': no observed order on test1d", type->name);
    out->order = (int)lround(p);
    if ((s = ts_stability_interval(type, &opt->solver, -1.0, 0.0, &out->interval)))
        return s;
    if ((s = energy_behaviour(type, opt, &out->energy, &ratio, &dev, &n)))
        return s;
    return TS_OK;
}

#define PROBE_DT 0.05
#define PROBE_STEPS 3

static void check_stage_states(const ts_stepper_type *type, const ts_grade_options *opt,
                               ts_grade_check *c)
{
    probe_system *p;
    ts_stepper *st;
    long calls = 0, bad = 0;
    int s = fresh_probe(0, type, opt, &p, &st);
    if (s) {
        fail_status(c, "probe system", s);
        return;
    }
    for (int n = 0; n < PROBE_STEPS && !s; n++) {
        probe_mark(p);
        s = ts_stepper_step(st, &p->base, n * PROBE_DT, PROBE_DT);
        calls += p->calls;
        bad += p->at_start;
    }
    release(&p->base, st);
    if (s) {
        fail_status(c, "a step on the probe system failed", s);
        return;
    }
    c->measured_value = (double)bad;
    SET(measured, "%ld of %ld evaluations", bad, calls);
    detail(c, "evaluations", (double)calls);
    c->outcome = bad == 0 ? TS_GRADE_PASS : TS_GRADE_FAIL;
    if (bad)
        SET(hint, "a stage evaluated the forces at the start-of-step (stored) state: hand "
                  "ts_system_deriv/forces the stage's own state");
}

/* For each force evaluation j of a step (up to 8): the step with the j-th
 * evaluation failing (status PROBE_FAIL_STATUS) must return that status
 * and leave the state as it was; the next step must match a fresh
 * stepper's step (to round-off). */
static void check_failed_force(const ts_stepper_type *type, const ts_grade_options *opt,
                               ts_grade_check *c)
{
    probe_system *p, *q;
    ts_stepper *st, *st2;
    double y0[2 * PROBE_N], y1[2 * PROBE_N];
    int s = fresh_probe(0, type, opt, &q, &st2);
    if (s) {
        fail_status(c, "probe system", s);
        return;
    }
    /* the reference step, and how many evaluations it makes */
    ts_system_get_y(&q->base, y0);
    probe_mark(q);
    s = ts_stepper_step(st2, &q->base, 0.0, PROBE_DT);
    long m = q->calls < 8 ? q->calls : 8;
    ts_system_get_y(&q->base, y1);
    release(&q->base, st2);
    c->outcome = TS_GRADE_PASS;
    SET(measured, "passed up, state kept (%ld evaluations)", m);
    detail(c, "evaluations", (double)m);
    if (s) {
        fail_status(c, "a step on the probe system failed", s);
    } else if (m == 0) {
        c->outcome = TS_GRADE_FAIL;
        SET(measured, "no force evaluation in a step");
        SET(hint, "the step never called ts_system_forces/ts_system_deriv");
    }
    /* each failure on a fresh instance, so that it meets the same evaluations
       (a stepper may carry a warm start from one step to the next) */
    for (long j = 1; j <= m && c->outcome == TS_GRADE_PASS; j++) {
        if ((s = fresh_probe(0, type, opt, &p, &st))) {
            fail_status(c, "probe system", s);
            break;
        }
        probe_mark(p);
        p->fail_at = j;
        s = ts_stepper_step(st, &p->base, 0.0, PROBE_DT);
        p->fail_at = 0;
        double y[2 * PROBE_N];
        ts_system_get_y(&p->base, y);
        if (s != PROBE_FAIL_STATUS) {
            c->outcome = TS_GRADE_FAIL;
            c->measured_value = s;
            SET(measured, "evaluation %ld failed, step returned '%s'", j, ts_status_message(s));
            detail(c, "failed_evaluation", (double)j);
            SET(hint, "pass a failing force evaluation's status up unchanged (if (s) return s;)");
        } else if (memcmp(y, y0, sizeof y) != 0) {
            c->outcome = TS_GRADE_FAIL;
            SET(measured, "evaluation %ld failed, state changed", j);
            detail(c, "failed_evaluation", (double)j);
            SET(hint, "a failed step must leave the stored state as it was");
        } else {
            /* the stepper must still be usable: a clean step as a fresh one's,
               to round-off (repeatability is another check's business) */
            s = ts_stepper_step(st, &p->base, 0.0, PROBE_DT);
            ts_system_get_y(&p->base, y);
            if (s || !(ts_vec_dist_inf(2 * PROBE_N, y, y1) <=
                       1e-12 * fmax(1.0, ts_vec_norm_inf(2 * PROBE_N, y1)))) {
                c->outcome = TS_GRADE_FAIL;
                SET(measured, "after failing evaluation %ld the next step differs", j);
                detail(c, "failed_evaluation", (double)j);
                SET(hint, "a failed step left something behind in the stepper's scratch");
            }
        }
        release(&p->base, st);
    }
}

static void check_pins(const ts_stepper_type *type, const ts_grade_options *opt,
                       ts_grade_check *c)
{
    probe_system *p;
    ts_stepper *st;
    int s = fresh_probe(1, type, opt, &p, &st);
    if (s) {
        fail_status(c, "probe system", s);
        return;
    }
    double x1 = p->base.x[1], v1 = p->base.v[1], x0 = p->base.x[0];
    for (int n = 0; n < PROBE_STEPS && !s; n++)
        s = ts_stepper_step(st, &p->base, n * PROBE_DT, PROBE_DT);
    double dx = fabs(p->base.x[1] - x1) + fabs(p->base.v[1] - v1);
    int moved = p->base.x[0] != x0;
    release(&p->base, st);
    if (s) {
        fail_status(c, "a step on the pinned probe failed", s);
        return;
    }
    c->measured_value = dx;
    SET(measured, "pinned DOF moved by %.3g", dx);
    c->outcome = dx == 0.0 && moved ? TS_GRADE_PASS : TS_GRADE_FAIL;
    if (dx != 0.0)
        SET(hint, "a pinned degree of freedom moved: use ts_system_deriv (it zeroes them) or "
                  "ts_system_filter on every update");
    else if (!moved)
        SET(hint, "nothing moved at all: the step does not advance the state");
}

static void check_no_allocation(const ts_stepper_type *type, const ts_grade_options *opt,
                                ts_grade_check *c)
{
    const ts_system_type *systems[] = {&grade_test1d, &grade_oscillator, NULL};
    long count = 0;
    int s = 0, steps = 0;
    /* The OpenMP runtime allocates its thread team at the first parallel
       region of the process, which the vector helpers open: done here,
       before counting, so that the count is the stepper's own. */
    double one = 1.0, acc = 0.0;
    ts_vec_axpy(1, 1.0, &one, &acc);
    (void)ts_vec_dot(1, &one, &acc);
    for (int k = 0; k <= 2 && !s; k++) { /* test1d, oscillator, the probe */
        ts_system *sys;
        ts_stepper *st;
        probe_system *p = NULL;
        if (systems[k]) {
            s = fresh(systems[k], type, opt, &sys, &st);
        } else {
            s = fresh_probe(0, type, opt, &p, &st);
            sys = p ? &p->base : NULL;
        }
        if (s == TS_ERR_UNSUPPORTED && systems[k]) { /* refused: the others still count */
            s = TS_OK;
            continue;
        }
        if (s)
            break;
        for (int n = 0; n < PROBE_STEPS && !s; n++, steps++) {
            long before = opt->alloc_count();
            opt->alloc_arm(1);
            s = ts_stepper_step(st, sys, n * PROBE_DT, PROBE_DT);
            opt->alloc_arm(0);
            count += opt->alloc_count() - before;
        }
        release(sys, st);
    }
    if (s) {
        fail_status(c, "a step failed", s);
        return;
    }
    c->measured_value = (double)count;
    SET(measured, "%ld allocations in %d steps", count, steps);
    detail(c, "steps", steps);
    c->outcome = count == 0 ? TS_GRADE_PASS : TS_GRADE_FAIL;
    if (count)
        SET(hint, "allocate scratch once in alloc (ts_scratch_vectors), never in step");
}

/* Run 20 steps on a fresh probe and stepper into y. */
static int repeat_run(const ts_stepper_type *type, const ts_grade_options *opt, double *y)
{
    probe_system *p;
    ts_stepper *st;
    int s = fresh_probe(0, type, opt, &p, &st);
    for (int n = 0; n < 20 && !s; n++)
        s = ts_stepper_step(st, &p->base, n * PROBE_DT, PROBE_DT);
    if (p)
        ts_system_get_y(&p->base, y);
    if (p)
        release(&p->base, st);
    return s;
}

/* Two runs one after the other, then two instances stepped alternately:
 * all four end bitwise where the first did. */
static void check_repeatable(const ts_stepper_type *type, const ts_grade_options *opt,
                             ts_grade_check *c)
{
    double ya[2 * PROBE_N], yb[2 * PROBE_N], yc[2 * PROBE_N], yd[2 * PROBE_N];
    int s = repeat_run(type, opt, ya);
    if (!s)
        s = repeat_run(type, opt, yb);
    probe_system *p = NULL, *q = NULL;
    ts_stepper *sp = NULL, *sq = NULL;
    if (!s && !(s = fresh_probe(0, type, opt, &p, &sp)) &&
        (s = fresh_probe(0, type, opt, &q, &sq))) {
        release(&p->base, sp);
        p = NULL;
    }
    for (int n = 0; n < 20 && !s; n++) {
        s = ts_stepper_step(sp, &p->base, n * PROBE_DT, PROBE_DT);
        if (!s)
            s = ts_stepper_step(sq, &q->base, n * PROBE_DT, PROBE_DT);
    }
    if (p && q) {
        ts_system_get_y(&p->base, yc);
        ts_system_get_y(&q->base, yd);
        release(&p->base, sp);
        release(&q->base, sq);
    }
    if (s) {
        fail_status(c, "a step on the probe system failed", s);
        return;
    }
    double d = fmax(ts_vec_dist_inf(2 * PROBE_N, ya, yb),
                    fmax(ts_vec_dist_inf(2 * PROBE_N, ya, yc), ts_vec_dist_inf(2 * PROBE_N, ya, yd)));
    int same = memcmp(ya, yb, sizeof ya) == 0 && memcmp(ya, yc, sizeof ya) == 0 &&
               memcmp(ya, yd, sizeof ya) == 0;
    c->measured_value = d;
    SET(measured, same ? "identical" : "runs differ by %.3g", d);
    c->outcome = same ? TS_GRADE_PASS : TS_GRADE_FAIL;
    if (!same)
        SET(hint, "the result depends on earlier runs or on another instance: keep state in "
                  "the scratch from alloc, not in static variables");
}

/* One step of PROBE_DT from t = 0.25 on a fresh probe: its force
 * evaluations into rec (the first PROBE_RECORDS), their number in *n. */
static int stages_run(const ts_stepper_type *type, const ts_grade_options *opt,
                      struct probe_record *rec, long *n)
{
    probe_system *p;
    ts_stepper *st;
    int s = fresh_probe(0, type, opt, &p, &st);
    if (s)
        return s;
    p->record = rec;
    probe_mark(p);
    s = ts_stepper_step(st, &p->base, 0.25, PROBE_DT);
    *n = p->calls;
    p->record = NULL;
    release(&p->base, st);
    return s;
}

/* The largest relative difference of two evaluations' times and states. */
static double stage_difference(const struct probe_record *a, const struct probe_record *b)
{
    double dt = fabs(a->t - b->t) / fmax(1.0, fabs(b->t));
    double dy = ts_vec_dist_inf(2 * PROBE_N, a->y, b->y) /
                fmax(1.0, ts_vec_norm_inf(2 * PROBE_N, b->y));
    return fmax(dt, dy);
}

static void check_stages(const ts_stepper_type *type, const ts_grade_expect *e,
                         const ts_grade_options *opt, ts_grade_check *c)
{
    struct probe_record got[PROBE_RECORDS], want[PROBE_RECORDS];
    long n, m;
    int s = stages_run(e->stages, opt, want, &m);
    if (s) {
        c->outcome = TS_GRADE_SKIP;
        SET(measured, "-");
        SET(hint, "skipped: the reference %s fails a step on the probe: %s", e->stages->name,
            ts_status_message(s));
        return;
    }
    if ((s = stages_run(type, opt, got, &n))) {
        fail_status(c, "a step on the probe system failed", s);
        return;
    }
    double worst = 0.0;
    int at = 0;
    for (long i = 0; i < n && i < m && i < PROBE_RECORDS; i++) {
        double d = stage_difference(&got[i], &want[i]);
        if (!(d <= worst))
            worst = d, at = (int)i;
    }
    c->measured_value = worst;
    detail(c, "evaluations", (double)n);
    SET(measured, "%ld evaluations, max difference %.2e", n, worst);
    c->outcome = n == m && worst <= TS_GRADE_STAGES_TOL ? TS_GRADE_PASS : TS_GRADE_FAIL;
    if (n != m)
        SET(hint, "one step evaluates the forces %ld times, %s %ld times: another method", n,
            e->stages->name, m);
    else if (c->outcome == TS_GRADE_FAIL && got[at].t != want[at].t)
        SET(hint, "evaluation %d is at t = %.6g, %s's at t = %.6g: check the stage times",
            at + 1, got[at].t, e->stages->name, want[at].t);
    else if (c->outcome == TS_GRADE_FAIL)
        SET(hint, "evaluation %d is at %s's time t = %.6g but at another state: check the "
                  "stage formulas (which slopes, with which weights)",
            at + 1, e->stages->name, got[at].t);
}

/* The embedded error estimate of one step of h on the oscillator from
 * x = 1, v = 0, in the RMS norm (rtol 0, atol 1). */
static int estimate_at(const ts_stepper_type *type, const ts_grade_options *opt, double h,
                       double *est)
{
    ts_system *sys;
    ts_stepper *st;
    int s = fresh(&grade_oscillator, type, opt, &sys, &st);
    if (!s)
        s = ts_stepper_step(st, sys, 0.0, h);
    if (!s)
        *est = ts_stepper_error(st, sys, 0.0, 1.0);
    release(sys, st);
    return s;
}

/* Error control at a requested tolerance: rtol = atol = TOLERANCE_RTOL on
 * the forced system to t = 2 (its exact solution known), output every
 * 0.5; the run is stopped at an output past TOLERANCE_STEPS accepted steps
 * (a wrong estimate makes the controller take tiny steps). */
#define TOLERANCE_RTOL 1e-6
#define TOLERANCE_STEPS 2000
#define TOLERANCE_FACTOR 100.0 /* achieved error allowed, times the tolerance */

static int tolerance_observe(void *ctx, ts_system *sys, const ts_stepper *st, long step,
                             double t)
{
    (void)ctx, (void)sys, (void)step, (void)t;
    return st->total.accepted > TOLERANCE_STEPS ? TS_ERR_REJECTED : TS_OK;
}

static int tolerance_run(const ts_stepper_type *type, const ts_grade_options *opt,
                         double *err, long *steps)
{
    ts_system *sys;
    ts_stepper *st;
    int s = fresh(&forced_type, type, opt, &sys, &st);
    if (s)
        return s;
    ts_run_options ro = ts_default_run_options();
    ro.dt = 0.5, ro.t_end = 2.0, ro.steps = 4, ro.rtol = ro.atol = TOLERANCE_RTOL;
    s = ts_run(sys, st, &ro, tolerance_observe, NULL, NULL);
    double x, v;
    forced_exact(sys, 2.0, &x, &v);
    *err = fmax(fabs(sys->x[0] - x), fabs(sys->v[0] - v));
    *steps = st->total.accepted;
    release(sys, st);
    return s;
}

/* The second half of error-estimate: the run at a requested tolerance. */
static void check_tolerance(const ts_stepper_type *type, const ts_grade_options *opt,
                            ts_grade_check *c)
{
    double err = NAN;
    long steps = 0;
    int s = tolerance_run(type, opt, &err, &steps);
    detail(c, "tolerance_error", err);
    detail(c, "tolerance_steps", (double)steps);
    size_t n = strlen(c->measured);
    snprintf(c->measured + n, sizeof c->measured - n, "; rtol %g: error %.1e, %ld steps",
             TOLERANCE_RTOL, err, steps);
    if (s == TS_ERR_REJECTED || s == TS_OK) {
        if (s == TS_OK && err <= TOLERANCE_FACTOR * TOLERANCE_RTOL)
            return;
        c->outcome = TS_GRADE_FAIL;
        SET(hint, "at rtol = atol = %g on x'' = -x - x^3 + sin^3(t + a) to t = 2: %s",
            TOLERANCE_RTOL, s ? "more than 2000 steps: the error estimate is too large"
                              : "the error is over 100 times the tolerance: the estimate is "
                                "too small");
        return;
    }
    fail_status(c, "the run at a requested tolerance failed", s);
}

/* An embedded pair of orders P and P-1 estimates the lower one's local
 * error, ~ h^P: the slope of log estimate against log h, h from the
 * hidden h0 down by halves.  A wrong embedded weight leaves an O(h) or
 * O(h^2) term (the estimate of a dopri5 whose b4-hat is 0.1 % off has slope
 * 1), which a step-size controller then chases. */
static void check_error_estimate(const ts_stepper_type *type, const ts_grade_expect *e,
                                 const ts_grade_options *opt, ts_grade_check *c)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int k = 0;
    for (int i = 0; i < 5; i++) {
        double h = hidden.h0 / (1 << i), est = NAN;
        int s = estimate_at(type, opt, h, &est);
        if (s) {
            fail_status(c, "one step on the oscillator failed", s);
            return;
        }
        if (!(est > 1e-14) || !isfinite(est)) /* round-off or nonsense: left out */
            continue;
        double x = log(h), y = log(est);
        sx += x, sy += y, sxx += x * x, sxy += x * y, k++;
    }
    double slope = k >= 2 ? (k * sxy - sx * sy) / (k * sxx - sx * sx) : NAN;
    c->measured_value = slope;
    if (isnan(slope)) {
        c->outcome = TS_GRADE_FAIL;
        SET(measured, "none (estimate zero or at round-off)");
        SET(hint, "the error estimate is zero or not a number: check the type's error function");
        return;
    }
    SET(measured, "estimate ~ h^%.2f", slope);
    c->outcome = fabs(slope - e->order) <= TS_GRADE_ORDER_TOL ? TS_GRADE_PASS : TS_GRADE_FAIL;
    if (c->outcome == TS_GRADE_FAIL)
        SET(hint, "the embedded estimate of an order-%d pair goes as h^%d: check the embedded "
                  "weights (b-hat) against the formula", e->order, e->order);
    else
        check_tolerance(type, opt, c);
}

/* The expected value of a check that runs, as text and number, and its tolerance. */
static void set_expected(int kind, const ts_grade_expect *e, ts_grade_check *c)
{
    switch (kind) {
    case TS_GRADE_IMPLEMENTED: SET(expected, "a step"); break;
    case TS_GRADE_ORDER_TEST1D:
    case TS_GRADE_ORDER_OSCILLATOR:
    case TS_GRADE_ORDER_FORCED:
    case TS_GRADE_LOCAL_ORDER:
        c->expected_value = e->order + (kind == TS_GRADE_LOCAL_ORDER);
        c->tolerance = TS_GRADE_ORDER_TOL;
        SET(expected, "%g", c->expected_value);
        break;
    case TS_GRADE_AMPLIFICATION:
        c->expected_value = 0.0;
        c->tolerance = TS_GRADE_AMPLIFICATION_TOL;
        SET(expected, "R(z) of %s", e->like->name);
        break;
    case TS_GRADE_INTERVAL:
        c->expected_value = e->interval;
        c->tolerance = TS_GRADE_INTERVAL_TOL;
        SET(expected, "%.6g", e->interval);
        break;
    case TS_GRADE_ENERGY:
        c->tolerance = TS_GRADE_ENERGY_TREND;
        SET(expected, "%s", ts_energy_name(e->energy));
        break;
    case TS_GRADE_STAGE_STATES:
        c->expected_value = 0;
        SET(expected, "0 evaluations at the stored state");
        break;
    case TS_GRADE_FAILED_FORCE:
        c->expected_value = PROBE_FAIL_STATUS;
        SET(expected, "failure returned, state kept");
        break;
    case TS_GRADE_PINS: c->expected_value = 0.0; SET(expected, "pinned DOF fixed"); break;
    case TS_GRADE_NO_ALLOCATION: c->expected_value = 0.0; SET(expected, "0 allocations"); break;
    case TS_GRADE_REPEATABLE: c->expected_value = 0.0; SET(expected, "identical runs"); break;
    case TS_GRADE_STAGES:
        c->expected_value = 0.0;
        c->tolerance = TS_GRADE_STAGES_TOL;
        SET(expected, "the stages of %s", e->stages->name);
        break;
    case TS_GRADE_ERROR_ESTIMATE:
        c->expected_value = e->order;
        c->tolerance = TS_GRADE_ORDER_TOL;
        SET(expected, "estimate ~ h^%d", e->order);
        break;
    }
}

static void run_check(int kind, const ts_stepper_type *type, const ts_grade_expect *e,
                      const ts_grade_options *opt, ts_grade_check *c)
{
    ts_error_clear();
    switch (kind) {
    case TS_GRADE_IMPLEMENTED: check_implemented(type, e, opt, c); break;
    case TS_GRADE_ORDER_TEST1D: check_order(type, e, opt, &grade_test1d, c); break;
    case TS_GRADE_ORDER_OSCILLATOR: check_order(type, e, opt, &grade_oscillator, c); break;
    case TS_GRADE_ORDER_FORCED: check_order(type, e, opt, &forced_type, c); break;
    case TS_GRADE_LOCAL_ORDER: check_local_order(type, e, opt, c); break;
    case TS_GRADE_AMPLIFICATION: check_amplification(type, e, opt, c); break;
    case TS_GRADE_INTERVAL: check_interval(type, e, opt, c); break;
    case TS_GRADE_ENERGY: check_energy(type, e, opt, c); break;
    case TS_GRADE_STAGE_STATES: check_stage_states(type, opt, c); break;
    case TS_GRADE_FAILED_FORCE: check_failed_force(type, opt, c); break;
    case TS_GRADE_PINS: check_pins(type, opt, c); break;
    case TS_GRADE_NO_ALLOCATION: check_no_allocation(type, opt, c); break;
    case TS_GRADE_REPEATABLE: check_repeatable(type, opt, c); break;
    case TS_GRADE_STAGES: check_stages(type, e, opt, c); break;
    case TS_GRADE_ERROR_ESTIMATE: check_error_estimate(type, e, opt, c); break;
    }
}

/* Why a check is skipped, or NULL when it runs. */
static const char *skip_reason(int kind, const ts_stepper_type *type, const ts_grade_expect *e,
                               const ts_grade_options *opt)
{
    switch (kind) {
    case TS_GRADE_ORDER_TEST1D:
    case TS_GRADE_ORDER_OSCILLATOR:
    case TS_GRADE_ORDER_FORCED:
    case TS_GRADE_LOCAL_ORDER: return e->order > 0 ? NULL : "no expected order (--order)";
    case TS_GRADE_AMPLIFICATION: return e->like ? NULL : "no reference stepper (--like)";
    case TS_GRADE_INTERVAL: return isnan(e->interval) ? "no expected interval (--interval)" : NULL;
    case TS_GRADE_ENERGY: return e->energy ? NULL : "no expected behaviour (--energy)";
    case TS_GRADE_STAGES: return e->stages ? NULL : "no reference stepper (--stages)";
    case TS_GRADE_ERROR_ESTIMATE:
        return !(method_of(type, e) & TS_ADAPTIVE) ? "no error estimate (not TS_ADAPTIVE)"
               : e->order > 0                      ? NULL
                                                   : "no expected order (--order)";
    case TS_GRADE_NO_ALLOCATION:
        return opt->alloc_count && opt->alloc_arm ? NULL
                                                  : "this program has no allocation counter";
    default: return NULL;
    }
}

/* Run one check in this process (no isolation: under a debugger), with the
 * stepper's printing sent to stderr as in a child, so that the report on
 * stdout (and its JSON) stays clean. */
static void run_here(int kind, const ts_stepper_type *type, const ts_grade_expect *e,
                     const ts_grade_options *opt, ts_grade_check *c)
{
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (saved >= 0)
        dup2(STDERR_FILENO, STDOUT_FILENO);
    run_check(kind, type, e, opt, c);
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
}

/* Run one check in a child process: a crash or a hang fails only this check. */
static int run_isolated(int kind, const ts_stepper_type *type, const ts_grade_expect *e,
                        const ts_grade_options *opt, ts_grade_check *c)
{
    int fd[2];
    if (pipe(fd) != 0)
        return ts_error(TS_ERR_IO, "grade: pipe failed");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return ts_error(TS_ERR_IO, "grade: fork failed");
    }
    if (pid == 0) {
        close(fd[0]);
        /* a stepper's printing goes to stderr, out of the report, through a
           buffer given here (stdio's own would be allocated inside a step) */
        static char outbuf[BUFSIZ];
        dup2(STDERR_FILENO, STDOUT_FILENO);
        setvbuf(stdout, outbuf, _IOLBF, sizeof outbuf);
        if (opt->time_limit > 0) {
            signal(SIGALRM, SIG_DFL); /* not a handler inherited from the caller */
            alarm((unsigned)opt->time_limit);
        }
        run_check(kind, type, e, opt, c);
        const char *p = (const char *)c;
        size_t left = sizeof *c;
        while (left) {
            ssize_t w = write(fd[1], p, left);
            if (w <= 0)
                _exit(3);
            p += w, left -= (size_t)w;
        }
        _exit(0);
    }
    close(fd[1]);
    ts_grade_check got;
    size_t have = 0;
    while (have < sizeof got) {
        ssize_t r = read(fd[0], (char *)&got + have, sizeof got - have);
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (have == sizeof got && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        *c = got;
        return TS_OK;
    }
    c->outcome = TS_GRADE_FAIL;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
        SET(measured, "timed out after %d s", opt->time_limit);
        detail(c, "time_limit", opt->time_limit);
    } else if (WIFSIGNALED(status)) {
        SET(measured, "crashed (signal %d: %s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        detail(c, "signal", WTERMSIG(status));
    } else {
        SET(measured, "the check's process exited with status %d", WEXITSTATUS(status));
        detail(c, "exit_status", WEXITSTATUS(status));
    }
    SET(hint, "the stepper %s during this check: run it under a debugger on the same system",
        WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "hung" : "crashed");
    return TS_OK;
}

/* One stepper's grading: the stepper, what it is expected to do, the
 * options, whether its checks run through the worker (a submission's
 * stepper, a proxy), and once the first check rules out the rest, why
 * ("" while they run). */
typedef struct {
    const ts_stepper_type *type;
    const ts_grade_expect *expect;
    const ts_grade_options *opt;
    int remote;
    char stop[200];
} grading;

/* Run one check of a submission's stepper (a proxy): the check runs here,
 * its steps in the worker; a worker that dies, hangs past the time limit or
 * breaks the protocol fails the check with that reason.  *died says so. */
static void run_remote(const grading *g, int kind, ts_grade_check *c, int *died)
{
    const ts_grade_options *opt = g->opt;
    char fate[200], note[200];
    ts_grade_worker_begin(opt);
    run_check(kind, g->type, g->expect, opt, c);
    ts_grade_worker_end(fate, sizeof fate, note, sizeof note);
    *died = *fate != '\0';
    if (*died) {
        c->outcome = TS_GRADE_FAIL;
        c->ndetail = 0;
        c->measured_value = NAN;
        SET(measured, "%.95s", fate);
        if (strncmp(fate, "could not start: ", 17) == 0 && !strstr(fate, "sandbox")) {
            SET(measured, "could not start: its plugin did not load");
            if (strstr(fate, "undefined symbol"))
                SET(hint, "%.100s (the grader's worker has no built-in stepper: a plugin "
                          "defines every stepper it names)",
                    fate + 17);
            else
                SET(hint, "%.190s", fate + 17);
        } else if (*note)
            SET(hint, "%s", note);
        else if (strstr(fate, "sandbox"))
            SET(hint, "the submission opened a socket, started a process or program, or "
                      "signalled another process: a stepper needs none of these");
        else
            SET(hint, "the submission's process stopped during this check: run the stepper "
                      "with 'tstep --plugin FILE run' on the same system");
        if (strncmp(fate, "timed out", 9) == 0)
            detail(c, "time_limit", opt->time_limit);
    } else if (*note && c->outcome == TS_GRADE_FAIL) {
        SET(hint, "%s", note);
    }
}

/* One check that runs: here, in a forked child, or through the worker. */
static int run_one(grading *g, int k, ts_grade_check *c)
{
    const ts_stepper_type *type = g->type;
    const ts_grade_expect *expect = g->expect;
    const ts_grade_options *opt = g->opt;
    int died = 0;
    set_expected(k, expect, c);
    if (g->remote) {
        run_remote(g, k, c, &died);
    } else {
        int s = opt->isolate ? run_isolated(k, type, expect, opt, c)
                             : (run_here(k, type, expect, opt, c), TS_OK);
        if (s)
            return s;
        died = c->outcome == TS_GRADE_FAIL && (strncmp(c->measured, "crashed", 7) == 0 ||
                                               strncmp(c->measured, "timed out", 9) == 0 ||
                                               strncmp(c->measured, "the check's process", 19) == 0);
    }
    /* why the first step rules out the rest: not implemented, or it crashed
       or hung (every check would do the same, a time limit each) */
    if (k == TS_GRADE_IMPLEMENTED && strcmp(c->measured, "not implemented") == 0)
        snprintf(g->stop, sizeof g->stop, "not implemented");
    else if (k == TS_GRADE_IMPLEMENTED && died)
        snprintf(g->stop, sizeof g->stop, "%s", c->measured);
    return TS_OK;
}

/* A check that does not run: skipped (why), or ruled out by the first step. */
static void not_run(const grading *g, int k, const char *why, ts_grade_check *c)
{
    const char *stop = g->stop;
    if (why) {
        c->outcome = TS_GRADE_SKIP;
        SET(expected, "-");
        SET(measured, "-");
        SET(hint, "skipped: %s", why);
        return;
    }
    c->outcome = TS_GRADE_FAIL;
    set_expected(k, g->expect, c);
    if (strcmp(stop, "not implemented") == 0) {
        SET(measured, "not implemented");
        SET(hint, "implement the step first");
    } else {
        SET(measured, "not run: the first step %s", stop);
        SET(hint, "make one step work first (see 'implemented')");
    }
}

int ts_grade(const ts_stepper_type *type, const ts_grade_expect *expect,
             const ts_grade_options *opt, ts_grade_report *rep)
{
    ts_grade_options o = ts_default_grade_options();
    if (opt)
        o = *opt;
    int remote = ts_grade_is_proxy(type) || (expect->like && ts_grade_is_proxy(expect->like));
    if (remote) { /* the worker counts the allocations of its steps */
        o.alloc_arm = ts_grade_worker_alloc_arm;
        o.alloc_count = ts_grade_worker_alloc_count;
    }
    memset(rep, 0, sizeof *rep);
    rep->type = type;
    rep->expect = *expect;
    rep->seed = o.seed;
    draw_hidden(o.seed);
    grading g = {type, expect, &o, remote, ""};
    size_t outlen = 0;
    for (int k = 0; k < TS_GRADE_CHECK_COUNT; k++) {
        ts_grade_check *c = &rep->check[k];
        c->expected_value = c->measured_value = c->tolerance = NAN;
        const char *why = skip_reason(k, type, expect, &o);
        if (why || *g.stop) {
            not_run(&g, k, why, c);
        } else {
            int s = run_one(&g, k, c);
            if (s)
                return s;
            if (remote)
                outlen += ts_grade_worker_output(rep->output + outlen,
                                                 sizeof rep->output - outlen);
        }
        rep->passed += c->outcome == TS_GRADE_PASS;
        rep->failed += c->outcome == TS_GRADE_FAIL;
        rep->skipped += c->outcome == TS_GRADE_SKIP;
    }
    if (remote)
        ts_grade_worker_close(); /* the next stepper starts from a fresh process */
    return TS_OK;
}

/* --- the spec file ------------------------------------------------------------ */

/* One key=value of a spec line into its entry. */
static int spec_value(ts_grade_spec_entry *en, const char *key, const char *val, int line)
{
    char *end;
    if (strcmp(key, "order") == 0) {
        long p = strtol(val, &end, 10);
        if (end == val || *end || p < 1 || p > 20)
            return ts_error(TS_ERR_INPUT, "line %d: order '%s' is not a whole number "
                                          "from 1 to 20", line, val);
        en->expect.order = (int)p;
    } else if (strcmp(key, "interval") == 0) {
        double r = INFINITY; /* "inf" or "infinity", or a finite number */
        int inf = strcmp(val, "inf") == 0 || strcmp(val, "infinity") == 0;
        if (!inf && !(ts_parse_real(val, &r) && r >= 0.0))
            return ts_error(TS_ERR_INPUT, "line %d: interval '%s' is not a number >= 0 "
                                          "(or inf)", line, val);
        en->expect.interval = r;
    } else if (strcmp(key, "energy") == 0) {
        int b = ts_energy_parse(val);
        if (b < 0)
            return ts_error(TS_ERR_INPUT, "line %d: energy '%s' is not grows, decays, "
                                          "bounded or conserved", line, val);
        en->expect.energy = b;
    } else if (strcmp(key, "like") == 0) {
        if (!*val || strlen(val) >= sizeof en->like)
            return ts_error(TS_ERR_INPUT, "line %d: like '%s' is not a stepper name",
                            line, val);
        strcpy(en->like, val);
    } else if (strcmp(key, "stages") == 0) {
        if (!*val || strlen(val) >= sizeof en->stages)
            return ts_error(TS_ERR_INPUT, "line %d: stages '%s' is not a stepper name",
                            line, val);
        strcpy(en->stages, val);
    } else if (strcmp(key, "flags") == 0) {
        if ((en->expect.flags = ts_grade_flags_parse(val)) < 0)
            return ts_error(TS_ERR_INPUT, "line %d: flags '%s' is not a list of partitioned, "
                                          "symplectic, multistep, adaptive (or none)", line, val);
    } else {
        return ts_error(TS_ERR_INPUT, "line %d: unknown key '%s' (valid: order, "
                                      "interval, energy, like, stages, flags)", line, key);
    }
    return TS_OK;
}

int ts_grade_spec_parse(const char *text, ts_grade_spec_entry *entries, int max, int *count)
{
    *count = 0;
    int line = 0;
    while (*text) {
        char buf[1024];
        size_t len = strcspn(text, "\n");
        line++;
        if (len >= sizeof buf)
            return ts_error(TS_ERR_INPUT, "line %d: longer than %zu characters", line,
                            sizeof buf - 1);
        memcpy(buf, text, len);
        buf[len] = '\0';
        text += len + (text[len] == '\n');
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL, *tok = strtok_r(buf, " \t\r", &save);
        if (!tok)
            continue;
        if (*count >= max)
            return ts_error(TS_ERR_INPUT, "line %d: more than %d steppers", line, max);
        ts_grade_spec_entry *en = &entries[*count];
        memset(en, 0, sizeof *en);
        en->expect = ts_default_grade_expect();
        if (strchr(tok, '=') || strlen(tok) >= sizeof en->name)
            return ts_error(TS_ERR_INPUT, "line %d: '%s' is not a stepper name", line, tok);
        strcpy(en->name, tok);
        for (int k = 0; k < *count; k++)
            if (strcmp(entries[k].name, en->name) == 0)
                return ts_error(TS_ERR_INPUT, "line %d: stepper '%s' is already on an earlier "
                                              "line (one line per stepper)", line, en->name);
        static const char *const keys[] = {"order",  "interval", "energy",
                                           "like",   "stages",   "flags"};
        int seen[6] = {0, 0, 0, 0, 0, 0};
        while ((tok = strtok_r(NULL, " \t\r", &save))) {
            char *eq = strchr(tok, '=');
            if (!eq)
                return ts_error(TS_ERR_INPUT, "line %d: '%s' is not key=value", line, tok);
            *eq = '\0';
            const char *key = tok, *val = eq + 1;
            for (int k = 0; k < 6; k++)
                if (strcmp(key, keys[k]) == 0 && seen[k]++)
                    return ts_error(TS_ERR_INPUT, "line %d: '%s' given twice", line, key);
            int st = spec_value(en, key, val, line);
            if (st)
                return st;
        }
        (*count)++;
    }
    return TS_OK;
}

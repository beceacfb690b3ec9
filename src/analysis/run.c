/* The run loop: fixed steps (or strain-rule adaptive sub-steps), an observer
 * on the initial state, every `every` steps and the last one, and the
 * divergence test of tstep/run.h.
 *
 * Adaptive stepping (Provot 1995's 10 % rule used as a step-size control, as
 * in Kauppila sec. 4.3): after a sub-step, if any spring's length changed by
 * more than strain_limit (relative), restore and halve; after two accepted
 * sub-steps in a row, double back toward the requested dt.  A sub-step whose
 * solver fails is also halved.  Sub-steps always land exactly on the
 * requested step boundaries, so output times do not depend on adaptivity. */
#include <math.h>
#include "tstep/linalg.h"
#include "tstep/run.h"

ts_run_options ts_default_run_options(void)
{
    return (ts_run_options){.dt = 0.01, .steps = 100, .every = 1, .adaptive = 0,
                            .strain_limit = 0.1};
}

long ts_steps_for(double t_end, double dt)
{
    double s = round(t_end / dt);
    return s < 1.0 ? 1 : (long)s;
}

static double state_norm(const ts_system *sys)
{
    double m = ts_vec_norm_inf(sys->n, sys->x);
    if (sys->order == 2)
        m = fmax(m, ts_vec_norm_inf(sys->n, sys->v));
    return m;
}

typedef struct {
    double h;      /* current sub-step */
    int streak;    /* accepted sub-steps since the last change of h */
} adaptive_state;

#define TS_MIN_SUBSTEP_FRACTION (1.0 / 1048576.0) /* 2^-20 of dt */

/* Advance from t to t + dt by sub-steps controlled by the strain rule. */
static int adaptive_advance(ts_system *sys, ts_stepper *st, double t, double dt,
                            double limit, adaptive_state *a)
{
    double end = t + dt, now = t;
    while (end - now > 1e-12 * dt) {
        double h = fmin(a->h, end - now);
        int s = ts_stepper_step(st, sys, now, h);
        int reject = s == TS_ERR_NEWTON || s == TS_ERR_LINEAR || s == TS_ERR_DIVERGED;
        if (s && !reject)
            return s;
        if (!s && sys->ops->max_strain_change(sys, ts_stepper_start_x(st), sys->x) > limit) {
            ts_stepper_undo(st, sys);
            reject = 1;
        }
        if (reject) {
            a->h = 0.5 * h;
            a->streak = 0;
            if (a->h < TS_MIN_SUBSTEP_FRACTION * dt)
                return ts_error(TS_ERR_REJECTED,
                                "adaptive step fell below dt/2^20 at t = %g (strain rule or "
                                "solver failure)",
                                now);
            continue;
        }
        now += h;
        if (++a->streak >= 2 && a->h < dt) {
            a->h = fmin(2.0 * a->h, dt);
            a->streak = 0;
        }
    }
    return TS_OK;
}

/* A row written whole: the checks inside the observer (run --error advances
 * its reference solution there) do not stop it; a signal, before or during
 * it, stays set for the loop's own check; so every output ends in the same
 * row. */
static int observe_whole(ts_observer_fn observe, void *ctx, ts_system *sys, ts_stepper *st,
                         long k, double t)
{
    ts_stop_hold(1);
    int s = observe(ctx, sys, st, k, t);
    ts_stop_hold(0);
    return s;
}

/* Error control: the PI step-size controller of Gustafsson (1991) in the
 * form of Hairer, Norsett & Wanner I, II.4 (4.43) and their code DOPRI5:
 *   h_new = h * clamp(0.9 err^-alpha err_prev^beta, 1/5, 10),
 *   alpha = 1/q - 0.75 beta, beta = 0.04, q = order + 1,
 * no growth right after a rejection; a rejected step (err > 1, or a failed
 * step) is retried from the same state with h_new = h * max(1/5, 0.9 err^-1/q). */
typedef struct {
    double h;        /* the controller's next step */
    double err_prev; /* last accepted error (1e-4 before the first) */
    int rejected;    /* the last attempt was rejected */
} error_control;

#define TS_PI_BETA 0.04
#define TS_PI_SAFETY 0.9
#define TS_PI_FAC_MIN 0.2
#define TS_PI_FAC_MAX 10.0

static int error_control_advance(ts_system *sys, ts_stepper *st, double t, double dt,
                                 const ts_run_options *opt, error_control *c)
{
    double end = t + dt, now = t;
    double q = st->type->order + 1.0, alpha = 1.0 / q - 0.75 * TS_PI_BETA;
    while (end - now > 1e-12 * dt) {
        double h = c->h;
        int truncated = 0;
        if (h >= (end - now) * (1.0 - 1e-12)) { /* land exactly on the output time */
            h = end - now;
            truncated = h < c->h;
        }
        if (h <= 1e-14 * fmax(fabs(now), dt))
            return ts_error(TS_ERR_REJECTED, "error control: step size %g too small at t = %g",
                            h, now);
        int s = ts_stepper_step(st, sys, now, h);
        if (s && s != TS_ERR_NEWTON && s != TS_ERR_LINEAR && s != TS_ERR_DIVERGED)
            return s;
        double err = s ? INFINITY : ts_stepper_error(st, sys, opt->rtol, opt->atol);
        if (!(err <= 1.0)) {
            if (!s) /* a step that worked but missed the tolerance: undo it */
                ts_stepper_undo(st, sys);
            ts_error_clear();
            c->h = h * fmax(TS_PI_FAC_MIN, isfinite(err) ? TS_PI_SAFETY * pow(err, -1.0 / q)
                                                          : TS_PI_FAC_MIN);
            c->rejected = 1;
            continue;
        }
        now = end - now - h <= 1e-12 * dt ? end : now + h;
        double e = fmax(err, 1e-10);
        double fac = TS_PI_SAFETY * pow(e, -alpha) * pow(c->err_prev, TS_PI_BETA);
        fac = fmin(fmax(fac, TS_PI_FAC_MIN), c->rejected ? 1.0 : TS_PI_FAC_MAX);
        double next = h * fac;
        /* a step shortened to land keeps the controller's longer proposal
         * unless its own error asks for less */
        c->h = truncated && next >= h ? fmax(next, c->h) : next;
        c->err_prev = fmax(err, 1e-4);
        c->rejected = 0;
    }
    return TS_OK;
}

/* The run's options that exclude each other or the system. */
static int run_check(const ts_system *sys, const ts_stepper *st, const ts_run_options *opt)
{
    if (opt->adaptive && !sys->ops->max_strain_change)
        return ts_error(TS_ERR_UNSUPPORTED,
                        "adaptive stepping needs springs; system '%s' has none",
                        sys->type ? sys->type->name : "?");
    if (opt->rtol > 0.0 && !st->type->error)
        return ts_error(TS_ERR_UNSUPPORTED,
                        "error control needs a stepper with an error estimate; '%s' has none",
                        st->type->name);
    if (opt->rtol > 0.0 && opt->adaptive)
        return ts_error(TS_ERR_UNSUPPORTED, "error control and strain-rule adaptivity exclude "
                                            "each other");
    return TS_OK;
}

/* A run under way: what ts_run's steps share. */
typedef struct {
    ts_system *sys;
    ts_stepper *st;
    const ts_run_options *opt;
    ts_observer_fn observe;
    void *ctx;
    ts_run_result *res;
    double limit;       /* |state| beyond it: diverged */
    adaptive_state a;   /* the strain rule's */
    error_control ec;   /* the error controller's */
    long observed;      /* the last step observed, and its time */
    double observed_t;
} run_state;

/* Step k from t by h, by the controller the options choose; a plain step
 * whose state grew past the limit is undone. */
static int run_advance(run_state *r, double t, double h)
{
    const ts_run_options *opt = r->opt;
    int s;
    if (opt->rtol > 0.0)
        s = error_control_advance(r->sys, r->st, t, h, opt, &r->ec);
    else if (opt->adaptive)
        s = adaptive_advance(r->sys, r->st, t, h, opt->strain_limit, &r->a);
    else
        s = ts_stepper_step(r->st, r->sys, t, h);
    if (!s && !(state_norm(r->sys) <= r->limit)) {
        if (!opt->adaptive && !(opt->rtol > 0.0))
            ts_stepper_undo(r->st, r->sys); /* not kept */
        s = ts_error(TS_ERR_DIVERGED, "|state| exceeded %g", r->limit);
    }
    return s;
}

/* Stopped inside step k: a plain step leaves the state of its start, step
 * k - 1, observed as at the top of the loop (with the statistics from
 * before it); sub-steps may have moved it, and the outputs then end at the
 * last step observed. */
static int run_interrupted(run_state *r, long k, const ts_step_stats *last_before,
                           const ts_step_stats *total_before, int s)
{
    if (!r->opt->adaptive && !(r->opt->rtol > 0.0)) {
        r->st->last = *last_before, r->st->total = *total_before;
        if (r->observe && r->observed < k - 1) {
            int o = observe_whole(r->observe, r->ctx, r->sys, r->st, k - 1, r->res->t);
            if (o)
                return o;
        }
    } else if (r->observed < k - 1) {
        r->res->steps_done = r->observed;
        r->res->t = r->observed_t;
    }
    return s;
}

/* Step k of the run: advanced, counted, observed every opt->every steps. */
static int run_step(run_state *r, long k)
{
    const ts_run_options *opt = r->opt;
    ts_run_result *res = r->res;
    double t = (double)(k - 1) * opt->dt;
    /* with t_end, the last step is shortened to land exactly on it */
    double h = opt->t_end > 0.0 && k == opt->steps ? opt->t_end - t : opt->dt;
    /* the statistics after step k - 1: a step stopped inside is undone
     * with them, as its state is */
    ts_step_stats last_before = r->st->last, total_before = r->st->total;
    int s = run_advance(r, t, h);
    if (s == TS_ERR_INTERRUPTED)
        return run_interrupted(r, k, &last_before, &total_before, s);
    if (s) {
        res->failed_step = k;
        res->failed_time = t;
        res->failed_dt = h;
        return s;
    }
    res->steps_done = k;
    res->t = k == opt->steps && opt->t_end > 0.0 ? opt->t_end : t + h;
    if (opt->progress)
        opt->progress(opt->progress_ctx, k, opt->steps, res->t);
    if (r->observe && (k % opt->every == 0 || k == opt->steps)) {
        if ((s = observe_whole(r->observe, r->ctx, r->sys, r->st, k, res->t)))
            return s;
        r->observed = k;
        r->observed_t = res->t;
    }
    return TS_OK;
}

int ts_run(ts_system *sys, ts_stepper *st, const ts_run_options *opt, ts_observer_fn observe,
           void *ctx, ts_run_result *res)
{
    ts_run_result local;
    if (!res)
        res = &local;
    *res = (ts_run_result){0};
    int s = run_check(sys, st, opt);
    if (s)
        return s;
    run_state r = {.sys = sys, .st = st, .opt = opt, .observe = observe, .ctx = ctx, .res = res,
                   .limit = TS_DIVERGENCE_FACTOR * fmax(1.0, state_norm(sys)),
                   .a = {opt->dt, 0}, .ec = {opt->dt, 1e-4, 0}};
    ts_stepper_reset(st); /* a run starts clean: no history or cache from before */
    if (observe && (s = observe_whole(observe, ctx, sys, st, 0, 0.0)))
        return s;
    for (long k = 1; k <= opt->steps; k++) {
        if (ts_stop_signal) {
            /* stopped from outside (a signal): the last finished step is
             * observed, so every output ends at the same complete row */
            if (observe && r.observed < k - 1 &&
                (s = observe_whole(observe, ctx, sys, st, k - 1, res->t)))
                return s;
            return ts_error(TS_ERR_INTERRUPTED, "stopped by signal %d after step %ld (t = %g)",
                            (int)ts_stop_signal, k - 1, res->t);
        }
        if ((s = run_step(&r, k)))
            return s;
    }
    return TS_OK;
}

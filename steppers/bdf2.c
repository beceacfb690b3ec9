/* BDF2, the second-order backward differentiation formula, solved by Newton.
 *   Y_{n+2} - 4/3 Y_{n+1} + 1/3 Y_n = 2/3 h F(t_{n+2}, Y_{n+2})
 * and, when the step changes from h_prev to h (omega = h / h_prev, as the
 * strain-rule adaptive run halves and doubles it), the variable-step form
 *   Y_{n+1} = a1 Y_n + a2 Y_{n-1} + b h F(Y_{n+1}),
 *   a1 = (1 + omega)^2 / (1 + 2 omega), a2 = -omega^2 / (1 + 2 omega),
 *   b = (1 + omega) / (1 + 2 omega)                 (omega = 1: 4/3, -1/3, 2/3).
 * That is a backward Euler step of size gamma = b h from the base state
 * Yhat = a1 Y_n + a2 Y_{n-1}: on second-order systems v1 = vhat + w,
 * x1 = xhat + gamma v1, M w = gamma f(x1, v1), Newton matrix
 * M - gamma df/dv - gamma^2 df/dx (the shared driver, tstep/implicit.h).
 *
 * A multistep method: the first step after a reset (a new run, a failed
 * step, a state changed from outside or projected by the system after
 * the step (collisions, strain limit), a time that does not continue the
 * last step, or a step ratio above 2.4 where variable-step BDF2 loses
 * zero-stability) is one backward Euler step, so one step alone is not
 * BDF2's one-step map (flag TS_MULTISTEP).  On y' = lambda y the recurrence
 * (1 - 2/3 z) y_{n+2} - 4/3 y_{n+1} + 1/3 y_n = 0 has the characteristic roots
 *   zeta = (2 +- sqrt(1 + 2 z)) / (3 - 2 z),
 * the dominant one e^z + O(z^3); A-stable and L-stable (both roots -> 0 as
 * z -> -infinity).  The history (the state at the start of the last step
 * and that step's size) is committed only after a successful step, and the
 * step wrapper resets it when a step fails.
 * Hairer & Wanner, Solving ODEs II, III.1 and V.1 (BDF, stability);
 * Hairer, Norsett & Wanner I, III.5 (variable step sizes). */
#include <stdlib.h>
#include <string.h>
#include "tstep/implicit.h"
#include "tstep/linalg.h"

#define BDF2_MAX_RATIO 2.4 /* variable-step BDF2 is zero-stable for omega < 1 + sqrt 2 */

typedef struct {
    void *newton;
    size_t n;
    double *block; /* all vectors below */
    double *xprev, *vprev, *xend, *vend, *xhat, *vhat, *x0, *v0;
    double hprev, tend;
    int have_history;
} bdf2_scratch;

static void bdf2_free(void *scratch)
{
    bdf2_scratch *s = scratch;
    if (!s)
        return;
    ts_implicit_free(s->newton);
    free(s->block);
    free(s);
}

static int bdf2_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    size_t n = sys->n;
    bdf2_scratch *s = calloc(1, sizeof *s);
    double *block = calloc(8 * n + 1, sizeof *block);
    if (!s || !block) {
        free(s);
        free(block);
        return ts_error(TS_ERR_NOMEM, "bdf2 scratch");
    }
    s->n = n;
    s->block = block;
    double **vecs[] = {&s->xprev, &s->vprev, &s->xend, &s->vend,
                       &s->xhat,  &s->vhat,  &s->x0,   &s->v0};
    for (size_t i = 0; i < 8; i++)
        *vecs[i] = block + i * n;
    int st = ts_implicit_alloc(sys, opt, &s->newton);
    if (st) {
        bdf2_free(s);
        return st;
    }
    *scratch = s;
    return TS_OK;
}

static void bdf2_reset(void *scratch)
{
    bdf2_scratch *s = scratch;
    s->have_history = 0;
    ts_implicit_reset(s->newton);
}

/* the history belongs to this step: it continues the last one in time and
 * starts from the state the last one ended at */
static int history_applies(const bdf2_scratch *s, const ts_system *sys, double t, double h)
{
    size_t bytes = s->n * sizeof(double);
    return s->have_history && ts_time_continues(t, s->tend, h) && h <= BDF2_MAX_RATIO * s->hprev &&
           memcmp(sys->x, s->xend, bytes) == 0 &&
           (sys->order == 1 || memcmp(sys->v, s->vend, bytes) == 0);
}

static int bdf2_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    bdf2_scratch *s = scratch;
    size_t n = s->n;
    int o2 = sys->order == 2, st;
    ts_vec_copy(n, sys->x, s->x0);
    if (o2)
        ts_vec_copy(n, sys->v, s->v0);
    if (history_applies(s, sys, t, h)) {
        double w = h / s->hprev, d = 1.0 + 2.0 * w;
        double a1 = (1.0 + w) * (1.0 + w) / d, a2 = -w * w / d, g = (1.0 + w) / d * h;
        for (size_t i = 0; i < n; i++) {
            s->xhat[i] = a1 * s->x0[i] + a2 * s->xprev[i];
            if (o2)
                s->vhat[i] = a1 * s->v0[i] + a2 * s->vprev[i];
        }
        ts_implicit_method m = {.gamma = g, .ts = t + h, .tf = t + h, .cv = 1.0, .px = g,
                                .cx = o2 ? g : 1.0, .qx = g, .ex = o2 ? g : 1.0,
                                .xhat = s->xhat, .vhat = o2 ? s->vhat : NULL};
        st = ts_implicit_newton(s->newton, sys, &m, 0, stats);
    } else {
        st = ts_implicit_euler_step(s->newton, sys, t, h, 0, stats); /* the starting step */
    }
    if (st) {
        s->have_history = 0;
        return st;
    }
    /* commit: the start of this step is the next step's Y_{n-1} */
    double *tmp = s->xprev;
    s->xprev = s->x0, s->x0 = tmp;
    tmp = s->vprev;
    s->vprev = s->v0, s->v0 = tmp;
    ts_vec_copy(n, sys->x, s->xend);
    if (o2)
        ts_vec_copy(n, sys->v, s->vend);
    s->hprev = h;
    s->tend = t + h;
    s->have_history = 1;
    return TS_OK;
}

const ts_stepper_type ts_bdf2 = {
    .name = "bdf2",
    .summary = "BDF2 multistep, L-stable, started by backward Euler; Newton-CG",
    .order = 2,
    .flags = TS_IMPLICIT | TS_NEEDS_JACOBIAN | TS_MULTISTEP,
    .alloc = bdf2_alloc,
    .step = bdf2_step,
    .free = bdf2_free,
    .reset = bdf2_reset,
};

/* The stepper instance: allocation against a system and the step wrapper
 * that every stepper goes through (statistics, restore on failure, the
 * system's post-step projection). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/linalg.h"
#include "tstep/stepper.h"

ts_solver_options ts_default_solver_options(void)
{
    return (ts_solver_options){.newton_tol = 1e-8, .newton_max = 20, .cg_tol = 0.0,
                               .cg_max = 0};
}

int ts_time_continues(double t, double t_end, double h)
{
    return fabs(t - t_end) <= 1e-9 * fmax(fabs(h), 1e-6 * fabs(t));
}

int ts_scratch_vectors(const ts_system *sys, int nvec, void **scratch)
{
    *scratch = calloc((size_t)nvec * ts_system_ydim(sys), sizeof(double));
    return *scratch ? TS_OK : ts_error(TS_ERR_NOMEM, "stepper scratch");
}

int ts_stepper_new(const ts_stepper_type *type, const ts_system *sys,
                   const ts_solver_options *opt, ts_stepper **out)
{
    *out = NULL;
    if ((type->flags & TS_NEEDS_JACOBIAN) && !ts_system_has_jacobian(sys))
        return ts_error(TS_ERR_UNSUPPORTED,
                        "stepper '%s' needs Jacobian products, which system '%s' does not provide",
                        type->name, sys->type ? sys->type->name : "?");
    if ((type->flags & TS_NEEDS_ENERGY) && !sys->ops->energy)
        return ts_error(TS_ERR_UNSUPPORTED,
                        "stepper '%s' needs the potential energy, which system '%s' does not "
                        "provide",
                        type->name, sys->type ? sys->type->name : "?");
    ts_stepper *st = calloc(1, sizeof *st);
    if (!st)
        return ts_error(TS_ERR_NOMEM, "stepper");
    st->type = type;
    st->total.residual = st->total.linear_residual = NAN;
    st->last.residual = st->last.linear_residual = NAN; /* no step yet: nothing solved */
    st->opt = opt ? *opt : ts_default_solver_options();
    if (!(type->flags & TS_KEEPS_START) &&
        !(st->backup_ = malloc(ts_system_ydim(sys) * sizeof *st->backup_)))
        goto fail;
    int s = type->alloc(sys, &st->opt, &st->scratch);
    if (s) {
        free(st->backup_);
        free(st);
        return s;
    }
    *out = st;
    return TS_OK;
fail:
    free(st);
    return ts_error(TS_ERR_NOMEM, "stepper");
}

void ts_stepper_free(ts_stepper *st)
{
    if (!st)
        return;
    st->type->free(st->scratch);
    free(st->backup_);
    free(st);
}

void ts_step_stats_add(ts_step_stats *a, const ts_step_stats *b)
{
    a->force_evals += b->force_evals;
    a->jacobian_products += b->jacobian_products;
    a->newton_iters += b->newton_iters;
    a->linear_iters += b->linear_iters;
    a->accepted += b->accepted;
    a->rejected += b->rejected;
    a->residual = fmax(a->residual, b->residual); /* fmax ignores a NAN side */
    a->linear_residual = fmax(a->linear_residual, b->linear_residual);
    a->setup_seconds += b->setup_seconds;
    a->solve_seconds += b->solve_seconds;
    for (int k = 0; k < 4; k++)
        a->linear_bytes[k] = fmax(a->linear_bytes[k], b->linear_bytes[k]);
}

int ts_stepper_step(ts_stepper *st, ts_system *sys, double t, double h)
{
    long f0 = sys->force_evals, j0 = sys->jacobian_products;
    memset(&st->last, 0, sizeof st->last);
    st->last.residual = st->last.linear_residual = NAN;
    int keeps = (st->type->flags & TS_KEEPS_START) != 0;
    if (!keeps)
        ts_system_get_y(sys, st->backup_);
    int s = st->type->step(st->scratch, sys, t, h, &st->last);
    if (!s && !(ts_vec_all_finite(sys->n, sys->x) &&
                (sys->order == 1 || ts_vec_all_finite(sys->n, sys->v))))
        s = ts_error(TS_ERR_DIVERGED, "non-finite state after the step");
    if (!s && sys->ops->post_step)
        s = sys->ops->post_step(sys, t + h, sys->x, sys->v);
    if (s) {
        if (keeps)
            ts_kept_start_restore(st->scratch, sys);
        else
            ts_system_set_y(sys, st->backup_);
        ts_stepper_reset(st);
        st->last.rejected = 1;
    } else {
        st->last.accepted = 1;
    }
    st->last.force_evals = sys->force_evals - f0;
    st->last.jacobian_products = sys->jacobian_products - j0;
    ts_step_stats_add(&st->total, &st->last);
    return s;
}

const double *ts_stepper_start_x(const ts_stepper *st)
{
    if (st->backup_)
        return st->backup_;
    const ts_kept_start *k = st->scratch;
    return k->kept ? k->x : NULL;
}

void ts_stepper_undo(ts_stepper *st, ts_system *sys)
{
    if (st->backup_)
        ts_system_set_y(sys, st->backup_);
    else
        ts_kept_start_restore(st->scratch, sys);
    st->total.accepted--, st->total.rejected++;
}

int ts_kept_start_restore(ts_kept_start *k, ts_system *sys)
{
    if (!k->kept)
        return 0;
    ts_vec_copy(k->n, k->x, sys->x);
    if (sys->order == 2)
        ts_vec_copy(k->n, k->v, sys->v);
    k->kept = 0;
    return 1;
}

void ts_stepper_reset(ts_stepper *st)
{
    if (st->type->reset)
        st->type->reset(st->scratch);
}

double ts_stepper_error(const ts_stepper *st, const ts_system *sys, double rtol, double atol)
{
    if (!st->type->error || !st->backup_)
        return NAN;
    return st->type->error(st->scratch, sys, st->backup_, rtol, atol);
}

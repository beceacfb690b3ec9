/* The explicit Runge-Kutta engine: one step of any Butcher tableau; see
 * tstep/butcher.h.  Y_n is read where it is stored (x and v, the two halves
 * of Y) and Y_{n+1} written there by the last combination, so a step makes
 * no copy of the state in or out.  Hairer, Norsett & Wanner, Solving ODEs I, II.1 (the
 * method), II.4 (embedded error estimates), II.5 (FSAL, Dormand & Prince). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/butcher.h"
#include "tstep/linalg.h"

typedef struct {
    const ts_butcher *tab;
    size_t m;      /* length of Y */
    double *ys, *err;
    double **k;    /* s stages */
    double **kv;   /* the stages' second halves (k[i] + n), order 2 */
    /* FSAL: F at the start (k[0], valid_start) and at the end (k[s-1],
     * valid_end) of the last step, with the states and times they belong to */
    double *ystart, *yend;
    double tstart, tend;
    int valid_start, valid_end;
} butcher_scratch;

int ts_butcher_alloc(const ts_butcher *tab, const ts_system *sys, void **scratch)
{
    size_t m = ts_system_ydim(sys), s = (size_t)tab->stages;
    butcher_scratch *b = calloc(1, sizeof *b);
    /* ys, then err, ystart and yend only for the tableaus that use them */
    size_t extra = (tab->bhat ? 1 : 0) + (tab->fsal ? 2 : 0);
    double *block = calloc((1 + extra + s) * m + 1, sizeof *block);
    double **k = calloc(2 * s, sizeof *k);
    if (!b || !block || !k) {
        free(b);
        free(block);
        free(k);
        return ts_error(TS_ERR_NOMEM, "Runge-Kutta scratch");
    }
    b->tab = tab;
    b->m = m;
    double *next = block;
    b->ys = next, next += m;
    if (tab->bhat)
        b->err = next, next += m;
    if (tab->fsal) {
        b->ystart = next, next += m;
        b->yend = next, next += m;
    }
    for (size_t i = 0; i < s; i++)
        k[i] = next + i * m;
    b->k = k;
    b->kv = k + s;
    *scratch = b;
    return TS_OK;
}

void ts_butcher_free(void *scratch)
{
    butcher_scratch *b = scratch;
    if (!b)
        return;
    free(b->ys); /* the block */
    free(b->k);
    free(b);
}

void ts_butcher_reset(void *scratch)
{
    butcher_scratch *b = scratch;
    b->valid_start = b->valid_end = 0;
}

/* the stored Y_n equals y (m entries, [x; v]) bit for bit */
static int state_is(const ts_system *sys, const double *y)
{
    size_t bytes = sys->n * sizeof *y;
    return memcmp(sys->x, y, bytes) == 0 &&
           (sys->order != 2 || memcmp(sys->v, y + sys->n, bytes) == 0);
}

/* z = Y_n + h sum_j c_j k_j with Y_n read from x and v (ts_vec_combine on
 * each half; z may be the stored state itself) */
static void combine_from_state(butcher_scratch *b, const ts_system *sys, double h,
                               const double *c, int count, double *zx, double *zv)
{
    size_t n = sys->n;
    ts_vec_combine(n, sys->x, h, c, count, b->k, zx);
    if (sys->order == 2) {
        for (int j = 0; j < count; j++)
            b->kv[j] = b->k[j] + n;
        ts_vec_combine(n, sys->v, h, c, count, b->kv, zv);
    }
}

/* k_1 = F(t, Y_n), reused from the last step where the tableau allows it */
static int first_stage(butcher_scratch *b, ts_system *sys, double t, double h)
{
    size_t m = b->m, s = (size_t)b->tab->stages;
    if (b->tab->fsal) {
        if (b->valid_end && ts_time_continues(t, b->tend, h) && state_is(sys, b->yend)) {
            double *k1 = b->k[0]; /* the last stage becomes the first */
            b->k[0] = b->k[s - 1];
            b->k[s - 1] = k1;
            ts_vec_copy(m, b->yend, b->ystart);
            b->tstart = t;
            b->valid_start = 1;
            b->valid_end = 0;
            return TS_OK;
        }
        if (b->valid_start && ts_time_continues(t, b->tstart, h) && state_is(sys, b->ystart))
            return TS_OK; /* a retry from the same start */
        b->valid_start = b->valid_end = 0;
    }
    int st = ts_system_deriv_xv(sys, t, sys->x, sys->v, b->k[0]);
    if (st || !b->tab->fsal)
        return st;
    ts_system_get_y(sys, b->ystart);
    b->tstart = t;
    b->valid_start = 1;
    return TS_OK;
}

int ts_butcher_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    butcher_scratch *b = scratch;
    const ts_butcher *tab = b->tab;
    size_t m = b->m;
    int s = tab->stages, st;
    (void)stats;
    if ((st = first_stage(b, sys, t, h)))
        return st;
    if (tab->fsal)
        b->valid_end = 0; /* k[s-1] is about to be overwritten */
    double *ysv = b->ys + (sys->order == 2 ? sys->n : 0);
    for (int i = 1; i < s; i++) { /* Y_i = Y_n + h sum_{j<i} a_ij k_j */
        combine_from_state(b, sys, h, tab->a + i * s, i, b->ys, ysv);
        if ((st = ts_system_deriv(sys, t + tab->c[i] * h, b->ys, b->k[i])))
            return st;
    }
    if (tab->bhat) { /* Y_{n+1} - Yhat = h sum_i (b_i - bhat_i) k_i */
        ts_vec_zero(m, b->err);
        for (int i = 0; i < s; i++)
            if (tab->b[i] != tab->bhat[i])
                ts_vec_axpy(m, h * (tab->b[i] - tab->bhat[i]), b->k[i], b->err);
    }
    if (tab->fsal) {
        /* the last stage was evaluated at Y_{n+1} itself */
        ts_vec_copy(m, b->ys, b->yend);
        b->tend = t + h;
        b->valid_end = 1;
        ts_system_set_y(sys, b->ys);
    } else { /* Y_{n+1} = Y_n + h sum_i b_i k_i, in place */
        combine_from_state(b, sys, h, tab->b, s, sys->x, sys->v);
    }
    return TS_OK;
}

double ts_butcher_error(void *scratch, const ts_system *sys, const double *y0, double rtol,
                        double atol)
{
    const butcher_scratch *b = scratch;
    size_t n = sys->n;
    double sum = 0.0;
    for (size_t i = 0; i < b->m; i++) {
        double y1 = i < n ? sys->x[i] : sys->v[i - n];
        double sc = atol + rtol * fmax(fabs(y0[i]), fabs(y1));
        double e = b->err[i] / sc;
        sum += e * e;
    }
    return sqrt(sum / (double)b->m);
}

/* The explicit Runge-Kutta engine: one step of any Butcher tableau; see
 * tstep/butcher.h.  Hairer, Norsett & Wanner, Solving ODEs I, II.1 (the
 * method), II.4 (embedded error estimates), II.5 (FSAL, Dormand & Prince). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/butcher.h"
#include "tstep/linalg.h"

typedef struct {
    const ts_butcher *tab;
    size_t m;      /* length of Y */
    double *y0, *ys, *err;
    double **k;    /* s stages */
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
    double *block = calloc((5 + s) * m + 1, sizeof *block);
    double **k = calloc(s, sizeof *k);
    if (!b || !block || !k) {
        free(b);
        free(block);
        free(k);
        return ts_error(TS_ERR_NOMEM, "Runge-Kutta scratch");
    }
    b->tab = tab;
    b->m = m;
    b->y0 = block;
    b->ys = block + m;
    b->err = block + 2 * m;
    b->ystart = block + 3 * m;
    b->yend = block + 4 * m;
    for (size_t i = 0; i < s; i++)
        k[i] = block + (5 + i) * m;
    b->k = k;
    *scratch = b;
    return TS_OK;
}

void ts_butcher_free(void *scratch)
{
    butcher_scratch *b = scratch;
    if (!b)
        return;
    free(b->y0); /* the block */
    free(b->k);
    free(b);
}

void ts_butcher_reset(void *scratch)
{
    butcher_scratch *b = scratch;
    b->valid_start = b->valid_end = 0;
}

/* k_1 = F(t, Y_n), reused from the last step where the tableau allows it */
static int first_stage(butcher_scratch *b, ts_system *sys, double t, double h)
{
    size_t m = b->m, s = (size_t)b->tab->stages;
    if (b->tab->fsal) {
        size_t bytes = m * sizeof *b->y0;
        if (b->valid_end && ts_time_continues(t, b->tend, h) &&
            memcmp(b->y0, b->yend, bytes) == 0) {
            double *k1 = b->k[0]; /* the last stage becomes the first */
            b->k[0] = b->k[s - 1];
            b->k[s - 1] = k1;
            ts_vec_copy(m, b->yend, b->ystart);
            b->tstart = t;
            b->valid_start = 1;
            b->valid_end = 0;
            return TS_OK;
        }
        if (b->valid_start && ts_time_continues(t, b->tstart, h) &&
            memcmp(b->y0, b->ystart, bytes) == 0)
            return TS_OK; /* a retry from the same start */
        b->valid_start = b->valid_end = 0;
    }
    int st = ts_system_deriv(sys, t, b->y0, b->k[0]);
    if (st || !b->tab->fsal)
        return st;
    ts_vec_copy(m, b->y0, b->ystart);
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
    ts_system_get_y(sys, b->y0);
    if ((st = first_stage(b, sys, t, h)))
        return st;
    b->valid_end = 0; /* k[s-1] is about to be overwritten */
    for (int i = 1; i < s; i++) { /* Y_i = Y_n + h sum_{j<i} a_ij k_j */
        ts_vec_combine(m, b->y0, h, tab->a + i * s, i, b->k, b->ys);
        if ((st = ts_system_deriv(sys, t + tab->c[i] * h, b->ys, b->k[i])))
            return st;
    }
    if (tab->fsal) {
        /* the last stage was evaluated at Y_{n+1} itself */
        ts_vec_copy(m, b->ys, b->yend);
        b->tend = t + h;
        b->valid_end = 1;
    } else {
        ts_vec_combine(m, b->y0, h, tab->b, s, b->k, b->ys);
    }
    if (tab->bhat) { /* Y_{n+1} - Yhat = h sum_i (b_i - bhat_i) k_i */
        ts_vec_zero(m, b->err);
        for (int i = 0; i < s; i++)
            if (tab->b[i] != tab->bhat[i])
                ts_vec_axpy(m, h * (tab->b[i] - tab->bhat[i]), b->k[i], b->err);
    }
    ts_system_set_y(sys, b->ys);
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

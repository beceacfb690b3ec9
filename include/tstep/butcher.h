/* tstep/butcher.h - explicit Runge-Kutta methods from their Butcher tableau.
 *
 * An s-stage explicit Runge-Kutta method on Y' = F(t, Y) is its tableau
 *
 *     c_1 |                           k_i = F(t + c_i h, Y_n + h sum_{j<i} a_ij k_j)
 *     c_2 | a_21                      Y_{n+1} = Y_n + h sum_i b_i k_i
 *     ... | ...                       (embedded: Yhat = Y_n + h sum_i bhat_i k_i,
 *     c_s | a_s1 ... a_s,s-1           error estimate Y_{n+1} - Yhat)
 *     ----+---------------
 *         | b_1  ...  b_s
 *
 * (Hairer, Norsett & Wanner, Solving ODEs I, II.1).  One engine steps every
 * tableau, so a method is a table and a stepper type:
 *
 * ANSWER-BEGIN(ralston2): Ralston's method as a tableau
 *     static const double a[] = {0, 0,  2.0 / 3, 0};       row-major, s x s
 *     static const double b[] = {0.25, 0.75}, c[] = {0, 2.0 / 3};
 *     static const ts_butcher ralston = {.stages = 2, .a = a, .b = b, .c = c};
 *     static int ralston_alloc(const ts_system *sys, const ts_solver_options *o, void **s)
 *     {
 *         (void)o;
 *         return ts_butcher_alloc(&ralston, sys, s);
 *     }
 *     const ts_stepper_type ts_ralston = {
 *         .name = "ralston", .summary = "...", .order = 2, .tableau = &ralston,
 *         .alloc = ralston_alloc, .step = ts_butcher_step, .free = ts_butcher_free,
 *         .reset = ts_butcher_reset};
 * ANSWER-END
 *
 * The engine's scratch holds the stages, sized once.  A first-same-as-last
 * tableau (fsal: a's last row is b and c_s = 1, so k_s = F(t + h, Y_{n+1}))
 * reuses k_s as the next step's k_1 when the next step starts from the state
 * and time where this one ended (compared bit for bit), and k_1 again when a
 * rejected step is retried from its start; the reset hook forgets both. */
#ifndef TSTEP_BUTCHER_H
#define TSTEP_BUTCHER_H

#include "tstep/stepper.h"

#define TS_BUTCHER_MAX_STAGES 16

struct ts_butcher {
    int stages;         /* s, at most TS_BUTCHER_MAX_STAGES */
    const double *a;    /* s x s, row-major, zero on and above the diagonal */
    const double *b;    /* s weights */
    const double *c;    /* s nodes */
    const double *bhat; /* s embedded weights (an error estimate), or NULL */
    int fsal;           /* first same as last (see above) */
};

/* A chained tableau (a_ij = 0 unless j = i - 1, no bhat, no FSAL: midpoint,
 * trapezoid, ralston2, heun3, rk4) needs each k_j only for the next stage
 * state and the final combination: the engine adds h b_j k_j to a running
 * sum in the pass that forms Y_{j+1}, holds every stage's k in the same
 * buffers, and keeps Y_n in the sum once it has written Y_{n+1}, its
 * scratch beginning with a ts_kept_start.  A stepper type with such a
 * tableau sets TS_KEEPS_START (no backup copy of the state per step); with
 * any other it must not.  Returns 1 for a chained tableau. */
int ts_butcher_keeps_start(const ts_butcher *tab);
int ts_butcher_alloc(const ts_butcher *tab, const ts_system *sys, void **scratch);
int ts_butcher_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats);
void ts_butcher_free(void *scratch);
void ts_butcher_reset(void *scratch);
/* The ts_stepper_type.error of a tableau with bhat: the weighted RMS norm
 * of Y_{n+1} - Yhat of the last step. */
double ts_butcher_error(void *scratch, const ts_system *sys, const double *y0, double rtol,
                        double atol);

#endif

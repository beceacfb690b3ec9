/* The growth a linear run can show, read from its last states (internal to
 * the library; src/analysis/recurrence.c).
 *
 * The states of a run on a linearization follow d_{k+1} = G d_k for the
 * run's map G (for a stepper that carries state, on x, v and what it
 * carries).  When the seed excites an invariant subspace of dimension p,
 * every fixed linear functional s_k = r . d_k of the states obeys the
 * recurrence of G's minimal polynomial on it,
 *     s_{k+p} = c_0 s_k + c_1 s_{k+1} + ... + c_{p-1} s_{k+p-1},
 * whose characteristic roots are the eigenvalues of G on the subspace:
 * their largest modulus rho says whether the run grows (rho > 1), and the
 * powers of the companion matrix whether a root on the unit circle is
 * repeated (|d| grows like k) or the run only beats, as the elongated orbit
 * of a non-normal map with simple eigenvalues on the unit circle does
 * (symplectic Euler on x'' = -w^2 x near h w = 2).  Fitting
 * the recurrence to a few functionals of the last states is Prony's method
 * (Hildebrand, Introduction to Numerical Analysis, 9.4). */
#ifndef TSTEP_RECURRENCE_H
#define TSTEP_RECURRENCE_H

#include <stddef.h>

#define TS_RECURRENCE_MAX_ORDER 6
#define TS_RECURRENCE_SAMPLES 24 /* the last states kept */
#define TS_RECURRENCE_WIDTH 4    /* functionals of each state */

/* A fitted recurrence s_{k+p} = coef[0] s_k + ... + coef[p-1] s_{k+p-1}. */
typedef struct {
    int order; /* p; 0 when none was fitted */
    double coef[TS_RECURRENCE_MAX_ORDER];
} ts_recurrence;

/* The smallest order p <= max_order (at most TS_RECURRENCE_MAX_ORDER) of a
 * recurrence that the len samples follow to a relative rms residual of at
 * most tol, fitted by least squares over every shift and functional (sample
 * k is s[k * width .. k * width + width - 1]; len at most
 * TS_RECURRENCE_SAMPLES, width at most TS_RECURRENCE_WIDTH), into *rc.
 * Returns p, or 0 (rc->order 0) when no order fits or the samples are too
 * few to fit one (fewer than 2p equations). */
int ts_recurrence_fit(const double *s, int len, int width, int max_order, double tol,
                      ts_recurrence *rc);

/* The largest modulus of the recurrence's characteristic roots: the
 * spectral radius of its companion matrix C. */
double ts_recurrence_radius(const ts_recurrence *rc);

/* max over 0 <= k <= n of |C^k| (Frobenius norm): bounded in n when every
 * root is inside the unit circle or on it and simple, growing like n^(m-1)
 * for a root of modulus 1 and multiplicity m (a Jordan block), which the
 * radius alone cannot tell from a simple root.  INFINITY past 1e150. */
double ts_recurrence_peak(const ts_recurrence *rc, long n);

/* The value of functional c (< TS_RECURRENCE_WIDTH) at entry i of a state:
 * fixed pseudo-random weights in [-1, 1). */
double ts_recurrence_weight(int c, size_t i);

#endif

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
 * their largest modulus rho says whether the run grows (rho > 1) or only
 * beats, as the elongated orbit of a non-normal map with eigenvalues on the
 * unit circle does (symplectic Euler on x'' = -w^2 x near h w = 2).  Fitting
 * the recurrence to a few functionals of the last states is Prony's method
 * (Hildebrand, Introduction to Numerical Analysis, 9.4). */
#ifndef TSTEP_RECURRENCE_H
#define TSTEP_RECURRENCE_H

#include <stddef.h>

#define TS_RECURRENCE_MAX_ORDER 6
#define TS_RECURRENCE_SAMPLES 24 /* the last states kept */
#define TS_RECURRENCE_WIDTH 4    /* functionals of each state */

/* The smallest order p <= max_order (at most TS_RECURRENCE_MAX_ORDER) of a
 * recurrence that the len samples follow to a relative rms residual of at
 * most tol, fitted by least squares over every shift and functional (sample
 * k is s[k * width .. k * width + width - 1]; len at most
 * TS_RECURRENCE_SAMPLES, width at most TS_RECURRENCE_WIDTH); the largest
 * modulus of its characteristic roots into *rho.  0 (and *rho untouched)
 * when no order fits, or the samples are too few to fit one (fewer than 2p
 * equations). */
int ts_recurrence_fit(const double *s, int len, int width, int max_order, double tol,
                      double *rho);

/* The value of functional c (< TS_RECURRENCE_WIDTH) at entry i of a state:
 * fixed pseudo-random weights in [-1, 1). */
double ts_recurrence_weight(int c, size_t i);

#endif

/* tstep/phase.h - phase and amplitude of a stepper on the undamped
 * oscillator, measured by running it.
 *
 * On x'' = -w^2 x (the oscillator system, m = 1, k = w^2 = 1, so w h = h),
 * one step of size h from (x, v) = (1, 0) and from (0, 1) gives the columns
 * of the one-step matrix S.  A stepper that treats Y = [x; v] as one vector
 * (Runge-Kutta, backward Euler) has S = R(hA), A = [0 1; -w^2 0], whose
 * eigenvalues are R(+-i w h); a partitioned one (symplectic Euler, Verlet)
 * has its own S.  Either way the eigenvalue mu of S with Im mu >= 0 says
 * what one step does to the oscillation:
 *     amplitude factor |mu|  (exact: 1; |R(i w h)| for a one-vector stepper)
 *     phase advance arg mu  (exact: w h; arg R(i w h))
 * so |mu| - 1 is the amplitude error per step and arg mu - w h the phase
 * error per step (negative: the numerical oscillation lags).  When S has
 * real eigenvalues (no oscillation left, e.g. symplectic Euler past w h = 2)
 * mu is the one of larger modulus and arg mu is 0 or pi.
 * A two-step method (TS_MULTISTEP: its first step is a starting step) is
 * run three steps from (1, 0) and (0, 1); Y_{n+1} = A Y_n + B Y_{n-1} fixes
 * A and B, and mu is the dominant root of det(zeta^2 I - zeta A - B) = 0,
 * the principal root e^{i w h} + O(h^{p+1}) of a zero-stable method.
 * Forward Euler: |R| = sqrt(1 + (wh)^2), arg R = atan(wh).
 * Hairer, Lubich & Wanner, Geometric Numerical Integration, I.1 and
 * Hairer & Wanner, Solving ODEs II, IV.2 (the stability function). */
#ifndef TSTEP_PHASE_H
#define TSTEP_PHASE_H

#include "tstep/stepper.h"

/* mu for step w h (> 0): *abs_mu = |mu|, *arg_mu = arg mu in [0, pi].
 * opt: solver options for implicit steppers (NULL: tight, 1e-13).  Returns
 * the step's status (a failed step leaves NAN). */
int ts_phase_response(const ts_stepper_type *type, const ts_solver_options *opt, double wh,
                      double *abs_mu, double *arg_mu);

#endif

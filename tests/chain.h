/* A test system for the Jacobian checker and the implicit steppers: a chain
 * of particles in 2-D joined by Hookean springs (i, i+1), with gravity and
 * air drag, optionally a fast path (cached 2x2 blocks), and deliberate
 * defects to prove that the checks catch them.  See tests/chain.c. */
#ifndef TSTEP_TEST_CHAIN_H
#define TSTEP_TEST_CHAIN_H

#include "tstep/system.h"

typedef enum {
    CHAIN_EXACT,        /* correct Jacobians */
    CHAIN_BUG_SIGN,     /* df/dx: transverse term with the wrong sign in one particle's rows */
    CHAIN_BUG_FACTOR,   /* df/dx: one particle's rows of the spring blocks doubled */
    CHAIN_BUG_NAN       /* df/dx: NaN in one particle's first row */
} chain_bug;

typedef struct {
    int particles;      /* >= 2 */
    double k, rest;     /* spring stiffness and rest length */
    double mass, drag, gravity;
    double stretch;     /* initial spacing / rest length */
    int pin_first;      /* pin particle 0 */
    chain_bug bug;
    int bug_particle;   /* the particle whose rows are wrong */
    int fast_path;      /* offer linearize / jacobian_mul / jacobian_diag */
    int clamp;          /* the fast path clamps 1 - L/|d| at 0 (compressed springs) */
    int energy;         /* offer the energy op */
    int jacobian;       /* offer dfdx_mul / dfdv_mul */
} chain_options;

/* 3 particles, k 50, rest 1, mass 0.5, drag 0, gravity 9.81, stretch 1.3,
 * particle 0 pinned, exact, no fast path, with energy and Jacobian products. */
chain_options chain_default_options(void);

int chain_new(const chain_options *o, ts_system **out);

/* Potential energy at x (springs and gravity). */
double chain_potential(const ts_system *sys, const double *x);

#endif

/* Phase and amplitude of a stepper on the undamped oscillator, from its
 * one-step matrix, or for a two-step method from its principal root; see
 * tstep/phase.h. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include "tstep/phase.h"

#define MS_STEPS 3 /* a two-step run: the starting step, then two of the method */

/* A run on a fresh undamped oscillator (k = m = 1): the stepper (solver
 * options opt) with steps of size h (at t = 0, h, 2h, ...) from (x0, v0). */
typedef struct {
    const ts_stepper_type *type;
    const ts_solver_options *opt;
    double h;
    double x0, v0;
} oscillator_run;

/* `steps` steps of the run; xs[j], vs[j] the state after step j + 1. */
static int run_steps(const oscillator_run *run, int steps, double *xs, double *vs)
{
    ts_params p;
    ts_params_init(&p, ts_oscillator.params);
    char buf[40];
    double h = run->h;
    int s;
    snprintf(buf, sizeof buf, "%.17g", run->x0);
    if ((s = ts_params_set(&p, "x0", buf)))
        return s;
    snprintf(buf, sizeof buf, "%.17g", run->v0);
    if ((s = ts_params_set(&p, "v0", buf)))
        return s;
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    if (!(s = ts_system_new(&ts_oscillator, &p, &sys)) &&
        !(s = ts_stepper_new(run->type, sys, run->opt, &st)))
        for (int j = 0; j < steps && !s; j++)
            if (!(s = ts_stepper_step(st, sys, j * h, h))) {
                xs[j] = sys->x[0];
                vs[j] = sys->v[0];
            }
    ts_stepper_free(st);
    ts_system_free(sys);
    return s;
}

static int one_step(const oscillator_run *run, double *x1, double *v1)
{
    return run_steps(run, 1, x1, v1);
}

/* Solve the 4x4 system Z^T c = r in place (Gaussian elimination with
 * partial pivoting); 0 when singular. */
static int solve4(double a[4][4], double r[4])
{
    for (int k = 0; k < 4; k++) {
        int piv = k;
        for (int i = k + 1; i < 4; i++)
            if (fabs(a[i][k]) > fabs(a[piv][k]))
                piv = i;
        if (a[piv][k] == 0.0)
            return 0;
        for (int j = 0; j < 4; j++) {
            double t = a[k][j];
            a[k][j] = a[piv][j], a[piv][j] = t;
        }
        double t = r[k];
        r[k] = r[piv], r[piv] = t;
        for (int i = k + 1; i < 4; i++) {
            double f = a[i][k] / a[k][k];
            for (int j = k; j < 4; j++)
                a[i][j] -= f * a[k][j];
            r[i] -= f * r[k];
        }
    }
    for (int k = 3; k >= 0; k--) {
        for (int j = k + 1; j < 4; j++)
            r[k] -= a[k][j] * r[j];
        r[k] /= a[k][k];
    }
    return 1;
}

/* A two-step method on a linear system: Y_{n+1} = A Y_n + B Y_{n-1} after
 * its starting step.  Runs from (1, 0) and (0, 1) give, at n = 1 and 2,
 * four columns [Y_n; Y_{n-1}] -> Y_{n+1}, which fix A and B; the roots of
 * det(zeta^2 I - zeta A - B) = 0 (a quartic: the characteristic roots of
 * both oscillation modes, Durand-Kerner) are the method's characteristic
 * roots, and mu is the dominant one: what the recurrence does to the
 * oscillation in the long run, the principal root (e^{i w h} + O(h^{p+1}))
 * for a zero-stable method while the step resolves the oscillation. */
static int principal_root(const ts_stepper_type *type, const ts_solver_options *opt,
                          double wh, double complex *mu)
{
    double xs[2][MS_STEPS], vs[2][MS_STEPS];
    for (int r = 0; r < 2; r++) {
        oscillator_run run = {type, opt, wh, r == 0, r == 1};
        int s = run_steps(&run, MS_STEPS, xs[r], vs[r]);
        if (s)
            return s;
    }
    /* rows: equations (run r, n); columns: x_n, v_n, x_{n-1}, v_{n-1} */
    double z[4][4], rx[4], rv[4];
    for (int r = 0, e = 0; r < 2; r++)
        for (int n = 1; n <= 2; n++, e++) {
            double xp = n == 1 ? r == 0 : xs[r][n - 2], vp = n == 1 ? r == 1 : vs[r][n - 2];
            z[e][0] = xs[r][n - 1], z[e][1] = vs[r][n - 1], z[e][2] = xp, z[e][3] = vp;
            rx[e] = xs[r][n], rv[e] = vs[r][n];
        }
    double z2[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            z2[i][j] = z[i][j];
    if (!solve4(z, rx) || !solve4(z2, rv))
        return ts_error(TS_ERR_REJECTED, "phase: %s's two-step map is singular at w h = %g",
                        type->name, wh);
    /* rows of [A B]: x_{n+1} = rx . (x_n, v_n, x_{n-1}, v_{n-1}), likewise v */
    double A[2][2] = {{rx[0], rx[1]}, {rv[0], rv[1]}}, B[2][2] = {{rx[2], rx[3]}, {rv[2], rv[3]}};
    /* det(zeta^2 I - zeta A - B) = zeta^4 + c3 zeta^3 + c2 zeta^2 + c1 zeta + c0 */
    double c[4] = {B[0][0] * B[1][1] - B[0][1] * B[1][0],
                   A[0][0] * B[1][1] + A[1][1] * B[0][0] - A[0][1] * B[1][0] - B[0][1] * A[1][0],
                   A[0][0] * A[1][1] - A[0][1] * A[1][0] - B[0][0] - B[1][1],
                   -(A[0][0] + A[1][1])};
    double complex root[4];
    for (int k = 0; k < 4; k++) /* Durand-Kerner from the usual spread starts */
        root[k] = cpow(0.4 + 0.9 * I, k);
    for (int it = 0; it < 500; it++) {
        double moved = 0.0;
        for (int k = 0; k < 4; k++) {
            double complex z = root[k], p = c[3] + z, den = 1.0;
            p = c[0] + z * (c[1] + z * (c[2] + z * p));
            for (int j = 0; j < 4; j++)
                if (j != k)
                    den *= z - root[j];
            if (den == 0.0)
                continue;
            double complex step = p / den;
            root[k] = z - step;
            moved = fmax(moved, cabs(step));
        }
        if (moved <= 4.0 * DBL_EPSILON)
            break;
    }
    double complex q = root[0]; /* the dominant root */
    for (int k = 1; k < 4; k++)
        if (cabs(root[k]) > cabs(q))
            q = root[k];
    *mu = cimag(q) < 0.0 ? conj(q) : q;
    return TS_OK;
}

int ts_phase_response(const ts_stepper_type *type, const ts_solver_options *opt, double wh,
                      double *abs_mu, double *arg_mu)
{
    ts_solver_options tight = ts_default_solver_options();
    tight.newton_tol = 1e-13, tight.cg_tol = 1e-14;
    double a, b, c, d; /* S = [a b; c d], columns the images of (1, 0) and (0, 1) */
    *abs_mu = *arg_mu = NAN;
    if (!(wh > 0.0))
        return ts_error(TS_ERR_INPUT, "phase: w h = %g must be > 0", wh);
    if (type->flags & TS_MULTISTEP) {
        double complex mu = 0.0;
        int s = principal_root(type, opt ? opt : &tight, wh, &mu);
        if (!s)
            *abs_mu = cabs(mu), *arg_mu = carg(mu);
        return s;
    }
    oscillator_run from_x = {type, opt ? opt : &tight, wh, 1.0, 0.0},
                   from_v = {type, opt ? opt : &tight, wh, 0.0, 1.0};
    int s = one_step(&from_x, &a, &c);
    if (!s)
        s = one_step(&from_v, &b, &d);
    if (s)
        return s;
    double tr = a + d, det = a * d - b * c, disc = 0.25 * tr * tr - det;
    if (disc < 0.0) { /* a complex pair tr/2 +- i sqrt(-disc) */
        *abs_mu = sqrt(det);
        *arg_mu = atan2(sqrt(-disc), 0.5 * tr);
    } else { /* real: the one of larger modulus */
        double r = sqrt(disc), m1 = 0.5 * tr + r, m2 = 0.5 * tr - r;
        double mu = fabs(m1) >= fabs(m2) ? m1 : m2;
        *abs_mu = fabs(mu);
        *arg_mu = mu >= 0.0 ? 0.0 : acos(-1.0);
    }
    return TS_OK;
}

/* Symplectic (semi-implicit) Euler, order 1.
 *   v_{n+1} = v_n + h M^-1 f(t_n, x_n, v_n)
 *   x_{n+1} = x_n + h v_{n+1}
 * The velocity is kicked first, then the position drifts with the new
 * velocity.  For conservative forces f = -grad U the map is symplectic: it
 * keeps phase-space area, and its energy error stays bounded (no drift) for
 * exponentially long times at stable h.  One-step matrix on x'' = -w^2 x:
 *   [x1]   [1 - (hw)^2  h] [x0]
 *   [v1] = [  -h w^2    1] [v0],   det 1, trace 2 - (hw)^2,
 * stable (eigenvalues on the unit circle) for h w < 2.  One force evaluation
 * per step.  Velocity-dependent forces are evaluated at (x_n, v_n) (explicit
 * in v); the map is then no longer symplectic, still order 1.
 * First-order systems (M x' = f(x)) have no velocity to treat apart: there
 * the step is forward Euler, x_{n+1} = x_n + h M^-1 f(t_n, x_n).
 * ANSWER-FILE(forward-euler): that branch, and the kick on second-order
 * systems, are forward Euler's update, so tools/assignment.sh leaves this
 * file out of a hand-out that assigns forward Euler.
 * Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed., I.1.2
 * and VI.3 (Theorem 3.3); Hairer, Norsett & Wanner, Solving ODEs I, II.16. */
#include <stdlib.h>
#include "tstep/linalg.h"
#include "tstep/stepper.h"

static int se_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)
{
    (void)opt;
    return ts_scratch_vectors(sys, 1, scratch);
}

static int se_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    double *f = scratch;
    (void)stats;
    int st = ts_system_forces(sys, t, sys->x, sys->v, f);
    if (st)
        return st;
    for (size_t i = 0; i < sys->n; i++) {
        if (sys->pinned && sys->pinned[i])
            continue;
        if (sys->order == 2) {
            sys->v[i] += h * f[i] / sys->mass[i];
            sys->x[i] += h * sys->v[i];
        } else {
            sys->x[i] += h * f[i] / sys->mass[i];
        }
    }
    return TS_OK;
}

const ts_stepper_type ts_symplectic_euler = {
    .name = "symplectic-euler",
    .summary = "semi-implicit Euler: kick v, then drift x with the new v; symplectic, 1 evaluation",
    .order = 1,
    .flags = TS_SYMPLECTIC | TS_PARTITIONED,
    .alloc = se_alloc,
    .step = se_step,
    .free = free,
};

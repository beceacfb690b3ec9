/* A string: n particles in a chain along +x from the origin, neighbours
 * joined by springs at their rest length, one end pinned (or both, or
 * none); it starts straight and horizontal at rest and swings down.
 *
 *   energy  E = sum_p m v_p^2 / 2 + sum_p m g y_p + sum_s k (l_s - L)^2 / 2
 *   forces  per spring (i, i+1), d = x_i - x_{i+1}, n = d/|d|:
 *             f_i = -k (|d| - L) n - kd ((v_i - v_{i+1}) . n) n = -f_{i+1}
 *           per particle: gravity m (0, -g, 0), air -c m (v - w(t))
 *   Jacobians  df_i/dx_i = -k [n n^T + (1 - L/|d|)(I - n n^T)] - (damping
 *              term), df_i/dv_i = -kd n n^T - c m I; see tstep/springs.h,
 *              which holds all the spring machinery.
 *
 * Witkin & Baraff, "Physically Based Modeling", SIGGRAPH course notes 2001;
 * the string of the MIT 6.837 / SUTD 50.017 mass-spring lectures. */
#include <string.h>
#include "tstep/springs.h"
#include "tstep/stepper.h"

static const ts_param_def string_params[] = {
    {"n", TS_PARAM_INT, "10", "particles (>= 2)"},
    {"length", TS_PARAM_REAL, "1", "rest length of the whole string (m, > 0)"},
    {"mass", TS_PARAM_REAL, "0.1", "total mass (kg, > 0), shared equally"},
    {"k", TS_PARAM_REAL, "500", "stiffness of each spring (N/m, >= 0)"},
    {"damping", TS_PARAM_REAL, "0.05", "axis damping kd of each spring (N s/m, >= 0)"},
    {"pin", TS_PARAM_TEXT, "one", "one (particle 0) | both (the two ends) | none"},
    TS_SPRINGS_COMMON_PARAMS("0"),
    {NULL, 0, NULL, NULL},
};

static int string_create(const ts_params *p, ts_system **out)
{
    long n = ts_params_int(p, "n");
    double length = ts_params_real(p, "length"), mass = ts_params_real(p, "mass");
    double k = ts_params_real(p, "k"), kd = ts_params_real(p, "damping");
    const char *pin = ts_params_text(p, "pin");
    ts_springs_options opt;
    int st = ts_springs_read_options(p, &opt);
    if (st)
        return st;
    if (n < 2 || n > 1000000)
        return ts_error(TS_ERR_INPUT, "parameter 'n': %ld must be in 2..1000000", n);
    if (!(length > 0.0))
        return ts_error(TS_ERR_INPUT, "parameter 'length': %g must be > 0", length);
    if (!(mass > 0.0))
        return ts_error(TS_ERR_INPUT, "parameter 'mass': %g must be > 0", mass);
    if (k < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'k': %g must be >= 0", k);
    if (kd < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'damping': %g must be >= 0", kd);
    int pins = strcmp(pin, "one") == 0 ? 1 : strcmp(pin, "both") == 0 ? 2
               : strcmp(pin, "none") == 0 ? 0 : -1;
    if (pins < 0)
        return ts_error(TS_ERR_INPUT, "parameter 'pin': '%s' is not one, both or none", pin);

    ts_springs *s;
    size_t np = (size_t)n;
    if ((st = ts_springs_new(&ts_string, np, &opt, &s)))
        return st;
    for (size_t i = 0; i < np; i++) {
        s->base.x[3 * i] = length * (double)i / (double)(np - 1);
        ts_springs_set_mass(s, i, mass / (double)np);
    }
    for (size_t i = 0; i + 1 < np && !st; i++)
        st = ts_springs_add(s, i, i + 1, k, kd, TS_SPRING_STRETCH);
    if (!st && pins >= 1)
        st = ts_springs_pin(s, 0);
    if (!st && pins == 2)
        st = ts_springs_pin(s, np - 1);
    if (st || (st = ts_springs_finish(s)))
        goto fail;
    *out = &s->base;
    return TS_OK;
fail:
    ts_system_free(&s->base);
    return st;
}

const ts_system_type ts_string = {
    .name = "string",
    .summary = "a chain of particles and springs, pinned at one end, swinging under gravity",
    .params = string_params,
    .create = string_create,
};

/* A hair strand: n particles with stretch springs (i, i+1), bending springs
 * (i, i+2) and, when k_torsion > 0, torsion springs (i, i+3), every rest
 * length taken from the rest shape, which is also the initial state (at
 * rest).  Particles 0 and 1 are pinned, so the root keeps its direction.
 *
 * Rest shape: a helix about the +x axis through the root, with `curl`
 * turns over the strand and radius r = curl_radius (curl = 0: straight
 * along +x).  With s = length/(n-1) the distance between neighbours,
 * theta = 2 pi curl/(n-1) the turn per segment, c = 2 r sin(theta/2) the
 * chord of that turn and a = sqrt(s^2 - c^2) the advance along the axis:
 *   x_p = (a p, r sin(p theta), r (1 - cos(p theta))),
 * which needs c < s.  Because the rest lengths of the (i, i+2) and
 * (i, i+3) springs come from the helix, the helix is an equilibrium without
 * gravity, and under gravity the strand sags but each triple of
 * neighbours keeps its rest triangle, i.e. its local curl radius.
 *
 *   energy  E = sum_p m v_p^2 / 2 + sum_p m g y_p + sum_s k_s (l_s - L_s)^2 / 2
 *   forces  per spring (i, j), d = x_i - x_j, n = d/|d|:
 *             f_i = -k (|d| - L) n - kd ((v_i - v_j) . n) n = -f_j
 *           per particle: gravity m (0, -g, 0), air -c m (v - w(t))
 *   Jacobians  df_i/dx_i = -k [n n^T + (1 - L/|d|)(I - n n^T)] - (damping
 *              term), df_i/dv_i = -kd n n^T - c m I; see tstep/springs.h.
 *
 * The n to n+2 bending springs follow the hair model of the MIT 6.837 /
 * SUTD 50.017 mass-spring lectures; curly hair and its extra springs,
 * Selle, Lentine & Fedkiw, "A Mass Spring Model for Hair Simulation",
 * SIGGRAPH 2008. */
#include <math.h>
#include "tstep/springs.h"
#include "tstep/stepper.h"

#define HAIR_PI 3.14159265358979323846

static const ts_param_def hair_params[] = {
    {"n", TS_PARAM_INT, "20", "particles (>= 4)"},
    {"length", TS_PARAM_REAL, "0.25", "rest length along the strand (m, > 0)"},
    {"mass", TS_PARAM_REAL, "0.005", "total mass (kg, > 0), shared equally"},
    {"k_stretch", TS_PARAM_REAL, "500", "stiffness of the (i, i+1) springs (N/m, >= 0)"},
    {"k_bend", TS_PARAM_REAL, "200", "stiffness of the (i, i+2) springs (N/m, >= 0)"},
    {"k_torsion", TS_PARAM_REAL, "50", "stiffness of the (i, i+3) springs; 0 leaves them out"},
    {"damping", TS_PARAM_REAL, "0.002", "axis damping kd of each spring (N s/m, >= 0)"},
    {"curl", TS_PARAM_REAL, "0", "turns of the helical rest shape over the strand (0 straight)"},
    {"curl_radius", TS_PARAM_REAL, "0.01", "radius of the helix (m, > 0)"},
    TS_SPRINGS_COMMON_PARAMS("0.5"),
    {NULL, 0, NULL, NULL},
};

static int hair_create(const ts_params *p, ts_system **out)
{
    long n = ts_params_int(p, "n");
    double length = ts_params_real(p, "length"), mass = ts_params_real(p, "mass");
    double k_stretch = ts_params_real(p, "k_stretch"), k_bend = ts_params_real(p, "k_bend");
    double k_torsion = ts_params_real(p, "k_torsion"), kd = ts_params_real(p, "damping");
    double curl = ts_params_real(p, "curl"), radius = ts_params_real(p, "curl_radius");
    ts_springs_options opt;
    int st = ts_springs_read_options(p, &opt);
    if (st)
        return st;
    if (n < 4 || n > 1000000)
        return ts_error(TS_ERR_INPUT, "parameter 'n': %ld must be in 4..1000000", n);
    if (!(length > 0.0))
        return ts_error(TS_ERR_INPUT, "parameter 'length': %g must be > 0", length);
    if (!(mass > 0.0))
        return ts_error(TS_ERR_INPUT, "parameter 'mass': %g must be > 0", mass);
    if (k_stretch < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'k_stretch': %g must be >= 0", k_stretch);
    if (k_bend < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'k_bend': %g must be >= 0", k_bend);
    if (k_torsion < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'k_torsion': %g must be >= 0", k_torsion);
    if (kd < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'damping': %g must be >= 0", kd);
    if (curl < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'curl': %g must be >= 0", curl);
    if (!(radius > 0.0))
        return ts_error(TS_ERR_INPUT, "parameter 'curl_radius': %g must be > 0", radius);
    size_t np = (size_t)n;
    double seg = length / (double)(np - 1);
    double theta = 2.0 * HAIR_PI * curl / (double)(np - 1);
    double chord = 2.0 * radius * sin(0.5 * theta);
    /* at least three particles per turn, and an advance along the axis */
    if (theta > 2.0 * HAIR_PI / 3.0 || !(chord < 0.99 * seg))
        return ts_error(TS_ERR_INPUT,
                        "parameter 'curl': %g turns of radius %g do not fit %ld particles "
                        "%g apart (need 2 curl_radius sin(pi curl/(n-1)) < length/(n-1) "
                        "and curl <= (n-1)/3)",
                        curl, radius, n, seg);
    double advance = sqrt(seg * seg - chord * chord);

    ts_springs *s;
    if ((st = ts_springs_new(&ts_hair, np, &opt, &s)))
        return st;
    for (size_t i = 0; i < np; i++) {
        double *x = s->base.x + 3 * i, ang = theta * (double)i;
        x[0] = advance * (double)i;
        x[1] = curl > 0.0 ? radius * sin(ang) : 0.0;
        x[2] = curl > 0.0 ? radius * (1.0 - cos(ang)) : 0.0;
        ts_springs_set_mass(s, i, mass / (double)np);
    }
    for (size_t i = 0; i + 1 < np && !st; i++) {
        st = ts_springs_add(s, i, i + 1, k_stretch, kd, TS_SPRING_STRETCH);
        if (!st && i + 2 < np)
            st = ts_springs_add(s, i, i + 2, k_bend, kd, TS_SPRING_BEND);
        if (!st && i + 3 < np && k_torsion > 0.0)
            st = ts_springs_add(s, i, i + 3, k_torsion, kd, TS_SPRING_TORSION);
    }
    if (st || (st = ts_springs_pin(s, 0)) || (st = ts_springs_pin(s, 1)) ||
        (st = ts_springs_finish(s)))
        goto fail;
    *out = &s->base;
    return TS_OK;
fail:
    ts_system_free(&s->base);
    return st;
}

const ts_system_type ts_hair = {
    .name = "hair",
    .summary = "a hair strand: stretch, bending (i,i+2) and torsion (i,i+3) springs, "
               "straight or curly, root pinned",
    .params = hair_params,
    .create = hair_create,
};

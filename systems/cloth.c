/* Cloth: a grid of nx x ny particles, or the vertices of a triangle mesh
 * read from a Wavefront OBJ file (mesh=FILE.obj), joined by springs.
 *
 * Grid (Provot 1995): particle (i, j), p = j nx + i, starts at rest at
 * (i width/(nx-1), -j height/(ny-1), 0), hanging in the x-y plane
 * (plane=xy), or at (i width/(nx-1), 0, j height/(ny-1)), flat
 * (plane=xz), with springs
 *   structural  (i, j)-(i+1, j) and (i, j)-(i, j+1)        k_struct
 *   shear       (i, j)-(i+1, j+1) and (i+1, j)-(i, j+1)    k_shear
 *   flexion     (i, j)-(i+2, j) and (i, j)-(i, j+2)        k_flex
 * Mesh (Baraff & Witkin 1998, as laid out by Kauppila sec. 1.1): one
 * stretch spring (k_struct) per unique edge, and one bending spring
 * (k_flex) per edge shared by exactly two triangles, between the two
 * vertices opposite that edge.  The particles are the vertices, at the
 * file's coordinates, at rest.
 * Every particle has mass/np; every rest length is the initial distance.
 *
 * The "top" edge is the set of particles of largest y, or, when all y are
 * equal (a flat cloth), of smallest z: row j = 0 of the grid either way.
 * pin=top-corners pins its two particles of smallest and largest x,
 * pin=top-edge all of it, pin=none nothing.
 *
 *   energy  E = sum_p m v_p^2 / 2 + sum_p m g y_p + sum_s k_s (l_s - L_s)^2 / 2
 *   forces  per spring (i, j), d = x_i - x_j, n = d/|d|:
 *             f_i = -k (|d| - L) n - kd ((v_i - v_j) . n) n = -f_j
 *           per particle: gravity m (0, -g, 0), air -c m (v - w(t))
 *   Jacobians  df_i/dx_i = -k [n n^T + (1 - L/|d|)(I - n n^T)] - (damping
 *              term), df_i/dv_i = -kd n n^T - c m I; see tstep/springs.h.
 *
 * After each step (tstep/springs.h): with provot=1, structural, shear and
 * mesh stretch springs are kept within (1 + provot_limit) of their rest
 * length (Provot, "Deformation Constraints in a Mass-Spring Model to
 * Describe Rigid Cloth Behavior", Graphics Interface 1995); with
 * sphere_r > 0, particles inside the sphere are projected to its surface
 * and their inward normal velocity removed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/obj.h"
#include "tstep/springs.h"
#include "tstep/stepper.h"

static const ts_param_def cloth_params[] = {
    {"nx", TS_PARAM_INT, "20", "particles along x (>= 3)"},
    {"ny", TS_PARAM_INT, "20", "particles down the grid: along -y (plane=xy), z (xz) (>= 3)"},
    {"width", TS_PARAM_REAL, "1", "extent along x (m, > 0)"},
    {"height", TS_PARAM_REAL, "1", "extent down the grid: -y (plane=xy), z (xz) (m, > 0)"},
    {"mass", TS_PARAM_REAL, "0.5", "total mass (kg, > 0), shared equally"},
    {"k_struct", TS_PARAM_REAL, "1000", "structural / mesh edge stiffness (N/m, >= 0)"},
    {"k_shear", TS_PARAM_REAL, "100", "shear (diagonal) stiffness (N/m, >= 0)"},
    {"k_flex", TS_PARAM_REAL, "20", "flexion / mesh bending stiffness (N/m, >= 0)"},
    {"damping", TS_PARAM_REAL, "0.02", "axis damping kd of each spring (N s/m, >= 0)"},
    {"plane", TS_PARAM_TEXT, "xy", "grid start: xy (hanging, rows down -y) | xz (flat, y = 0)"},
    {"pin", TS_PARAM_TEXT, "top-corners", "top-corners | top-edge | none"},
    {"mesh", TS_PARAM_TEXT, "", "Wavefront OBJ file: cloth from its triangles (\"\": grid)"},
    {"sphere_x", TS_PARAM_REAL, "0.5", "sphere collider centre x (m)"},
    {"sphere_y", TS_PARAM_REAL, "-0.5", "sphere collider centre y (m)"},
    {"sphere_z", TS_PARAM_REAL, "0.5", "sphere collider centre z (m)"},
    {"sphere_r", TS_PARAM_REAL, "0", "sphere collider radius (m); 0: no collider"},
    {"provot", TS_PARAM_INT, "0", "1: Provot strain limit on stretch/shear springs"},
    {"provot_limit", TS_PARAM_REAL, "0.1", "largest relative stretch with provot=1 (> 0)"},
    TS_SPRINGS_COMMON_PARAMS("0.1"),
    {NULL, 0, NULL, NULL},
};

typedef struct {
    double k_struct, k_shear, k_flex, kd, mass;
} cloth_springs;

/* The grid's shape: nx x ny particles over width x height, hanging or
 * flat (plane=xz). */
typedef struct {
    size_t nx, ny;
    double width, height;
    int flat;
} cloth_layout;

/* a spring from a grid particle: to particle q, stiffness k, of kind */
typedef struct {
    size_t q;
    double k;
    int kind;
} grid_spring;

/* The springs whose first particle is (i, j) of the grid, in the order of
 * their second particle, so that the network's springs arrive sorted
 * (ts_springs_finish then has nothing to sort): structural to (i + 1, j)
 * and (i, j + 1), shear to (i + 1, j + 1) and from (i, j) to (i - 1, j + 1)
 * (the second diagonal of the square left of (i, j)), bending to (i + 2, j)
 * and (i, j + 2). */
static int grid_particle_springs(ts_springs *s, const cloth_layout *g, const cloth_springs *c,
                                 size_t i, size_t j)
{
    size_t nx = g->nx, ny = g->ny, p = j * nx + i, nq = 0;
    grid_spring to[6], t;
    if (i + 1 < nx)
        to[nq++] = (grid_spring){p + 1, c->k_struct, TS_SPRING_STRETCH};
    if (j + 1 < ny)
        to[nq++] = (grid_spring){p + nx, c->k_struct, TS_SPRING_STRETCH};
    if (i + 1 < nx && j + 1 < ny)
        to[nq++] = (grid_spring){p + nx + 1, c->k_shear, TS_SPRING_SHEAR};
    if (i > 0 && j + 1 < ny)
        to[nq++] = (grid_spring){p + nx - 1, c->k_shear, TS_SPRING_SHEAR};
    if (i + 2 < nx)
        to[nq++] = (grid_spring){p + 2, c->k_flex, TS_SPRING_BEND};
    if (j + 2 < ny)
        to[nq++] = (grid_spring){p + 2 * nx, c->k_flex, TS_SPRING_BEND};
    for (size_t a = 1; a < nq; a++) /* insertion sort by the second particle */
        for (size_t b = a; b > 0 && to[b - 1].q > to[b].q; b--)
            t = to[b], to[b] = to[b - 1], to[b - 1] = t;
    int st = TS_OK;
    for (size_t a = 0; a < nq && !st; a++)
        st = ts_springs_add(s, p, to[a].q, to[a].k, c->kd, to[a].kind);
    return st;
}

static int cloth_grid(ts_springs *s, const cloth_layout *g, const cloth_springs *c)
{
    size_t nx = g->nx, ny = g->ny;
    double width = g->width, height = g->height;
    int flat = g->flat, st = TS_OK;
    for (size_t j = 0; j < ny; j++)
        for (size_t i = 0; i < nx; i++) {
            double *x = s->base.x + 3 * (j * nx + i), down = height * (double)j / (double)(ny - 1);
            x[0] = width * (double)i / (double)(nx - 1);
            if (flat)
                x[2] = down;
            else
                x[1] = -down;
        }
    for (size_t j = 0; j < ny && !st; j++)
        for (size_t i = 0; i < nx && !st; i++)
            st = grid_particle_springs(s, g, c, i, j);
    return st;
}

/* a triangle side (a < b) and the triangle's third vertex */
typedef struct {
    size_t a, b, opposite;
} mesh_edge;

static int edge_cmp(const void *x, const void *y)
{
    const mesh_edge *e = x, *f = y;
    if (e->a != f->a)
        return e->a < f->a ? -1 : 1;
    if (e->b != f->b)
        return e->b < f->b ? -1 : 1;
    return (e->opposite > f->opposite) - (e->opposite < f->opposite);
}

/* Stretch springs on unique edges, bending springs across interior edges. */
static int cloth_mesh_springs(ts_springs *s, const ts_obj_mesh *m, const cloth_springs *c)
{
    size_t ne = 3 * m->ntris;
    mesh_edge *e = malloc(ne * sizeof *e);
    if (!e)
        return ts_error(TS_ERR_NOMEM, "%zu mesh edges", ne);
    for (size_t t = 0; t < m->ntris; t++)
        for (int k = 0; k < 3; k++) {
            size_t a = m->tris[3 * t + k], b = m->tris[3 * t + (k + 1) % 3];
            e[3 * t + k] = (mesh_edge){a < b ? a : b, a < b ? b : a, m->tris[3 * t + (k + 2) % 3]};
        }
    qsort(e, ne, sizeof *e, edge_cmp);
    int st = TS_OK;
    for (size_t g = 0; g < ne && !st;) {
        size_t h = g + 1;
        while (h < ne && e[h].a == e[g].a && e[h].b == e[g].b)
            h++;
        st = ts_springs_add(s, e[g].a, e[g].b, c->k_struct, c->kd, TS_SPRING_STRETCH);
        /* interior edge: exactly two triangles; more (non-manifold) get none */
        if (!st && h - g == 2 && e[g].opposite != e[g + 1].opposite)
            st = ts_springs_add(s, e[g].opposite, e[g + 1].opposite, c->k_flex, c->kd,
                                TS_SPRING_BEND);
        g = h;
    }
    free(e);
    return st;
}

/* The top edge: the particles of largest y; if all y are equal (a flat
 * cloth), those of smallest z.  pin=top-corners pins its two particles of
 * smallest and largest x (corners_only), pin=top-edge all of it. */
static int cloth_pin_top(ts_springs *s, int corners_only)
{
    const double *x = s->base.x;
    double lo[3], hi[3];
    for (int a = 0; a < 3; a++)
        lo[a] = hi[a] = x[a];
    for (size_t p = 0; p < s->np; p++)
        for (int a = 0; a < 3; a++) {
            lo[a] = x[3 * p + a] < lo[a] ? x[3 * p + a] : lo[a];
            hi[a] = x[3 * p + a] > hi[a] ? x[3 * p + a] : hi[a];
        }
    double eps = 1e-9 * ((hi[0] - lo[0]) + (hi[1] - lo[1]) + (hi[2] - lo[2]));
    int by_y = hi[1] - lo[1] > eps;
    size_t left = SIZE_MAX, right = SIZE_MAX;
    for (size_t p = 0; p < s->np; p++) {
        if (by_y ? x[3 * p + 1] < hi[1] - eps : x[3 * p + 2] > lo[2] + eps)
            continue;
        if (!corners_only) {
            int st = ts_springs_pin(s, p);
            if (st)
                return st;
            continue;
        }
        if (left == SIZE_MAX || x[3 * p] < x[3 * left])
            left = p;
        if (right == SIZE_MAX || x[3 * p] > x[3 * right])
            right = p;
    }
    if (!corners_only)
        return TS_OK;
    int st = ts_springs_pin(s, left);
    return st ? st : ts_springs_pin(s, right);
}

static int check_nonneg(const ts_params *p, const char *name)
{
    double v = ts_params_real(p, name);
    return v >= 0.0 ? TS_OK : ts_error(TS_ERR_INPUT, "parameter '%s': %g must be >= 0", name, v);
}

static int check_positive(const ts_params *p, const char *name)
{
    double v = ts_params_real(p, name);
    return v > 0.0 ? TS_OK : ts_error(TS_ERR_INPUT, "parameter '%s': %g must be > 0", name, v);
}

/* The cloth's own parameters checked: pin_kind 1 top corners, 2 top edge,
 * 0 none; flat for the xz plane. */
static int cloth_check(const ts_params *p, int *pin_kind, int *flat)
{
    long nx = ts_params_int(p, "nx"), ny = ts_params_int(p, "ny");
    long provot = ts_params_int(p, "provot");
    const char *pin = ts_params_text(p, "pin"), *plane = ts_params_text(p, "plane");
    int st;
    if ((st = check_positive(p, "width")) || (st = check_positive(p, "height")) ||
        (st = check_positive(p, "mass")) || (st = check_nonneg(p, "k_struct")) ||
        (st = check_nonneg(p, "k_shear")) || (st = check_nonneg(p, "k_flex")) ||
        (st = check_nonneg(p, "damping")) || (st = check_nonneg(p, "sphere_r")) ||
        (st = check_positive(p, "provot_limit")))
        return st;
    if (nx < 3 || nx > 10000)
        return ts_error(TS_ERR_INPUT, "parameter 'nx': %ld must be in 3..10000", nx);
    if (ny < 3 || ny > 10000)
        return ts_error(TS_ERR_INPUT, "parameter 'ny': %ld must be in 3..10000", ny);
    if (provot != 0 && provot != 1)
        return ts_error(TS_ERR_INPUT, "parameter 'provot': %ld must be 0 or 1", provot);
    *pin_kind = strcmp(pin, "top-corners") == 0 ? 1 : strcmp(pin, "top-edge") == 0 ? 2
                : strcmp(pin, "none") == 0 ? 0 : -1;
    if (*pin_kind < 0)
        return ts_error(TS_ERR_INPUT,
                        "parameter 'pin': '%s' is not top-corners, top-edge or none", pin);
    *flat = strcmp(plane, "xz") == 0;
    if (!*flat && strcmp(plane, "xy") != 0)
        return ts_error(TS_ERR_INPUT, "parameter 'plane': '%s' is not xy or xz", plane);
    return TS_OK;
}

/* The limits, the pins' flags and the sphere from the parameters. */
static void cloth_extras(ts_springs *s, const ts_params *p)
{
    if (ts_params_int(p, "provot")) {
        s->strain_max = ts_params_real(p, "provot_limit");
        s->strain_kinds = 1u << TS_SPRING_STRETCH | 1u << TS_SPRING_SHEAR;
    }
    s->sphere_r = ts_params_real(p, "sphere_r");
    s->sphere_c[0] = ts_params_real(p, "sphere_x");
    s->sphere_c[1] = ts_params_real(p, "sphere_y");
    s->sphere_c[2] = ts_params_real(p, "sphere_z");
}

static int cloth_create(const ts_params *p, ts_system **out)
{
    long nx = ts_params_int(p, "nx"), ny = ts_params_int(p, "ny");
    const char *mesh_path = ts_params_text(p, "mesh");
    ts_springs_options opt;
    ts_springs *s = NULL;
    ts_obj_mesh *mesh = NULL;
    int st, pin_kind = 0, flat = 0;
    if ((st = ts_springs_read_options(p, &opt)) || (st = cloth_check(p, &pin_kind, &flat)))
        return st;
    cloth_springs c = {ts_params_real(p, "k_struct"), ts_params_real(p, "k_shear"),
                       ts_params_real(p, "k_flex"), ts_params_real(p, "damping"),
                       ts_params_real(p, "mass")};

    size_t np = (size_t)nx * (size_t)ny, ux = (size_t)nx, uy = (size_t)ny;
    /* the grid's structural, shear and flexion springs (cloth_grid) */
    size_t grid_springs = (ux - 1) * uy + ux * (uy - 1) + 2 * (ux - 1) * (uy - 1) +
                          (ux - 2) * uy + ux * (uy - 2);
    char what[64];
    snprintf(what, sizeof what, "a cloth of nx=%ld ny=%ld", nx, ny);
    if (*mesh_path) {
        if ((st = ts_obj_load(mesh_path, &mesh)))
            return st;
        np = mesh->nverts;
        /* edges and bending pairs: at most 3 a triangle each */
        if ((st = ts_springs_check_memory(mesh_path, np, 6 * mesh->ntris)))
            goto fail;
    } else if ((st = ts_springs_check_memory(what, np, grid_springs))) {
        return st;
    }
    if ((st = ts_springs_new(&ts_cloth, np, &opt, &s)) ||
        (!mesh && (st = ts_springs_reserve(s, grid_springs))))
        goto fail;
    if (mesh) {
        memcpy(s->base.x, mesh->verts, 3 * np * sizeof *s->base.x);
        st = cloth_mesh_springs(s, mesh, &c);
    } else {
        s->base.frame_row = (size_t)nx;
        cloth_layout g = {(size_t)nx, (size_t)ny, ts_params_real(p, "width"),
                          ts_params_real(p, "height"), flat};
        st = cloth_grid(s, &g, &c);
    }
    if (st)
        goto fail;
    for (size_t i = 0; i < np; i++)
        ts_springs_set_mass(s, i, c.mass / (double)np);
    if (pin_kind && (st = cloth_pin_top(s, pin_kind == 1)))
        goto fail;
    cloth_extras(s, p);
    if ((st = ts_springs_finish(s)))
        goto fail;
    ts_obj_free(mesh);
    *out = &s->base;
    return TS_OK;
fail:
    ts_obj_free(mesh);
    if (s)
        ts_system_free(&s->base);
    return st;
}

const ts_system_type ts_cloth = {
    .name = "cloth",
    .summary = "cloth: a grid (structural, shear, flexion springs) or an OBJ mesh; pins, "
               "wind, sphere collider, Provot strain limit",
    .params = cloth_params,
    .create = cloth_create,
};

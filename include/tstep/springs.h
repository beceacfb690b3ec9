/* tstep/springs.h - spring networks: the machinery shared by string, hair
 * and cloth (systems/string.c, systems/hair.c, systems/cloth.c).
 *
 * A spring network is a ParticleSystem (order 2, dim 3) of np particles and
 * ns springs, each (i, j, rest length L, stiffness k, damping kd), kept in
 * arrays sorted by first particle (i < j).  A system file only builds the
 * topology and reads its parameters; forces, Jacobians, energy, momentum,
 * the strain measure and the post-step projections live once in
 * src/springs/springs.c.
 *
 * Per spring, with d = x_i - x_j, l = |d|, n = d / l, u = v_i - v_j:
 *
 *   energy      E_s = k (l - L)^2 / 2
 *   force on i  f_i = -k (l - L) n  -  kd (n . u) n,        f_j = -f_i
 *
 *   df_i/dx_i = -K,  K = k [n n^T + (1 - L/l)(I - n n^T)]           (stretch)
 *                        + kd/l [n (P u)^T + (n . u) P],  P = I - n n^T
 *                                                          (axis damping)
 *   df_i/dv_i = -D,  D = kd n n^T
 *   df_i/dx_j = +K, df_i/dv_j = +D; the same blocks with j and i swapped.
 *
 * The position derivative of the axis damping (second line of K) is not
 * symmetric.  dfdx_mul keeps it: it is the exact derivative of the forces,
 * so central finite differences of `forces` agree with it (what
 * `tstep check-system` tests).  The fast path used by the implicit solver
 * (linearize / jacobian_mul / jacobian_diag) drops it, as Baraff & Witkin
 * (1998, sec. 5.2) do, so the matrix M - h df/dv - h^2 df/dx that CG sees is
 * symmetric; Newton's iteration still converges to the backward Euler
 * solution because its residual uses the exact forces.  At zero relative
 * velocity the dropped term vanishes.
 *
 * Compressed springs (l < L) make 1 - L/l negative and can make the matrix
 * indefinite.  Clamped, the fast path uses max(0, 1 - L/l) instead (Choi &
 * Ko 2002, sec. 5), which keeps it positive definite but makes Newton's
 * iteration a quasi-Newton one that converges only linearly (measured: a
 * contraction of about 0.67 per iteration on a cloth draping over a sphere,
 * 37 iterations to 1e-8, against 5 to 7 with the exact matrix).  So by
 * default (clamp = 2, TS_SPRINGS_CLAMP_AUTO) the implicit solve uses the
 * exact matrix and asks for the clamp (sys->definite_fix) only when CG finds
 * that matrix indefinite; clamp = 1 always clamps, clamp = 0 never does.
 * dfdx_mul is never clamped.  Unclamped, with kd = 0 (or v = 0), the fast
 * path equals alpha dfdx_mul + beta dfdv_mul exactly.
 *
 * The fast path's product uses, per spring, the symmetric 3x3 block
 *   B = alpha K + beta D = q I + sign(g) w w^T
 * of the last linearization (Kauppila, sec. 4.1; q, g and w in
 * src/springs/springs.c): out_i -= B (u_i - u_j), out_j += B (u_i - u_j).
 * linearize keeps the point x (which, as for every system, must stay valid
 * and unchanged while products are taken) and per spring, in a cache, the
 * numbers B is made of: q and w (32 bytes a spring) in networks of up to
 * TS_SPRINGS_WIDE_MAX springs, where reading them is fastest; q and g
 * (16 bytes, w = |g| (x_i - x_j) formed in each product) in larger ones,
 * where the cache no longer fits in the processor's caches, the products
 * measured as fast either way (within the noise), and the narrow cache
 * takes 96 bytes a particle of a cloth less (docs/performance.md).
 * ts_springs_finish allocates the cache when it can; without it (memory
 * short; a Jacobi-CG step on the 100x100 cloth measured 1.6-1.9x slower)
 * each product forms q and g from x and 1/l (8 bytes a spring).  The same
 * arithmetic on every path, so the same bits.  No matrix is assembled and
 * nothing is allocated after ts_springs_finish.
 *
 * Threads: forces, the exact products, the fast path's products and its
 * diagonal run on all OpenMP threads by particle chunks coloured even/odd
 * (see chunk_np below), so no atomics are needed and the results are
 * bit-identical for any thread count.
 *
 * External forces on particle p of mass m_p:
 *   gravity  m_p g (0, -1, 0), potential m_p g y_p
 *   air      -c m_p (v_p - w(t)),  w(t) = w0 (1 + a sin(2 pi f t))
 * so wind (the air's velocity w, optionally gusting with amplitude a and
 * frequency f) acts through the drag rate c: with c = 0 there is no wind.
 * Their Jacobians: df/dx = 0, df/dv = -c m_p I.
 *
 * Post-step projections (after each accepted step, never on pinned
 * particles):
 *   strain limit (Provot 1995): a spring of a limited kind stretched beyond
 *     (1 + tau) L has its ends pulled together along n, split by inverse
 *     mass, and its separating relative velocity along n removed (both
 *     keep the momentum).  Gauss-Seidel passes in spring order repeat until
 *     none exceeds the limit, at most TS_SPRINGS_STRAIN_PASSES; a state
 *     stretched far beyond the limit may keep an excess of order 1e-7 L.
 *   sphere collider: a particle inside the sphere is moved to the nearest
 *     point of the surface and the inward normal part of its velocity removed.
 *
 * References: Baraff & Witkin, "Large Steps in Cloth Simulation", SIGGRAPH
 * 1998; Choi & Ko, "Stable but Responsive Cloth", SIGGRAPH 2002; Provot,
 * "Deformation Constraints in a Mass-Spring Model to Describe Rigid Cloth
 * Behavior", Graphics Interface 1995; Kauppila, "Implementing the implicit
 * Euler method for mass-spring systems"; Macklin, "Implicit Springs". */
#ifndef TSTEP_SPRINGS_H
#define TSTEP_SPRINGS_H

#include <stddef.h>
#include <stdint.h>
#include "tstep/system.h"

/* Spring kinds: what a spring models, for counting and strain limiting. */
enum {
    TS_SPRING_STRETCH, /* structural / mesh edge / chain link */
    TS_SPRING_SHEAR,   /* cloth grid diagonals */
    TS_SPRING_BEND,    /* flexion: two apart, or across a mesh edge */
    TS_SPRING_TORSION, /* hair (i, i+3) */
    TS_SPRING_KINDS
};

#define TS_SPRINGS_STRAIN_PASSES 50

/* The fast path's cache is wide (q and w, 32 B a spring) for networks of
 * at most this many springs (4 MB of cache: up to about a 148 x 148
 * cloth), narrow (q and g, 16 B) beyond; see the cache below. */
#define TS_SPRINGS_WIDE_MAX ((size_t)1 << 17)

/* When the fast path clamps compressed springs (the `clamp` parameter). */
enum {
    TS_SPRINGS_CLAMP_NEVER = 0,  /* exact: CG may meet an indefinite matrix */
    TS_SPRINGS_CLAMP_ALWAYS = 1, /* always: positive definite; Newton converges linearly */
    TS_SPRINGS_CLAMP_AUTO = 2    /* when the solver asks (sys->definite_fix): the implicit
                                    solve tries the exact matrix first and clamps only when
                                    CG finds it indefinite */
};

/* The environment: gravity, air, and the fast path's clamp switch. */
typedef struct {
    double gravity;   /* g >= 0, acceleration along -y */
    double drag;      /* c >= 0, rate (1/s) */
    double wind[3];   /* w0, the air's velocity (m/s) */
    double gust;      /* a >= 0, relative gust amplitude */
    double gust_freq; /* f >= 0 (Hz) */
    int clamp;        /* TS_SPRINGS_CLAMP_*: when the fast path clamps 1 - L/l at 0 */
} ts_springs_options;

/* The parameter table entries every spring system shares; put this inside a
 * system's ts_param_def table and read them with ts_springs_read_options. */
#define TS_SPRINGS_COMMON_PARAMS(drag_default)                                              \
    {"gravity", TS_PARAM_REAL, "9.81", "g (m/s^2, >= 0), gravity along -y"},               \
    {"drag", TS_PARAM_REAL, drag_default, "air drag rate c (1/s, >= 0): f = -c m (v - wind)"}, \
    {"wind_x", TS_PARAM_REAL, "0", "air velocity w0 (m/s); acts through drag"},            \
    {"wind_y", TS_PARAM_REAL, "0", "air velocity w0, y component"},                        \
    {"wind_z", TS_PARAM_REAL, "0", "air velocity w0, z component"},                        \
    {"gust", TS_PARAM_REAL, "0", "gust amplitude a >= 0: w(t) = w0 (1 + a sin(2 pi f t))"}, \
    {"gust_freq", TS_PARAM_REAL, "0.5", "gust frequency f (Hz, >= 0)"},                    \
    {"clamp", TS_PARAM_INT, "2", "compressed springs in the implicit solve: 2 clamp if indefinite, 1 always (Choi-Ko), 0 never"}

/* A spring network.  Read-only for users once finished; system files fill
 * base.x, base.v and masses between ts_springs_new and ts_springs_finish. */
typedef struct ts_springs {
    ts_system base;
    size_t np;        /* particles; base.n = 3 np */
    size_t ns, cap;   /* springs, and allocated room */
    uint32_t *si, *sj;    /* ends, si[s] < sj[s], sorted by (si, sj) */
    double *rest;         /* rest length L */
    /* stiffness and damping: per kind (kind_k, kind_kd) when every spring
     * of a kind has the same values (grids, strings, hair), else per spring
     * (k, kd; NULL otherwise); read them with ts_springs_k and ts_springs_kd */
    double *k, *kd;
    double kind_k[TS_SPRING_KINDS], kind_kd[TS_SPRING_KINDS];
    unsigned char *kind;  /* TS_SPRING_* */
    ts_springs_options opt;
    /* post-step projections */
    double strain_max;     /* tau > 0 enables the strain limit */
    unsigned strain_kinds; /* bit (1u << kind) set: this kind is limited */
    double sphere_c[3], sphere_r; /* sphere_r > 0 enables the collider */
    /* the fast path's linearization: the point and the coefficients; per
     * spring e its block B = q I + sign(g) w w^T, w = |g| (x_i - x_j) at
     * the point (src/springs/springs.c).  The cache: q and w from lin_coef[4e]
     * when it is wide and every g has one sign (lin_wcache), else q and g
     * from lin_coef[2e], w formed from the point in each product.  When
     * that allocation failed (lin_coef NULL), 1/l in lin_inv (-1 when l is
     * not > 0) and q, g, w formed in each product: the same bits on every
     * path */
    const double *lin_x;
    double *lin_coef;
    double *lin_inv;       /* NULL while lin_coef is not */
    int lin_clamp;         /* 1: 1 - L/l clamped at 0 */
    int lin_sign;          /* every g's sign (+1, -1), 0 when they differ */
    int lin_wide;          /* 1: the cache has room for q and w (ns <= TS_SPRINGS_WIDE_MAX) */
    int lin_wcache;        /* 1: it holds q and w (lin_wide and lin_sign != 0) */
    double lin_alpha, lin_beta;
    double lin_ak[TS_SPRING_KINDS], lin_bkd[TS_SPRING_KINDS]; /* alpha k, beta kd per kind */
    double lin_wdrag;      /* beta * c, the drag part per unit mass */
    /* threads: particles cut into chunks of chunk_np (>= the largest
     * sj - si, so chunk c's springs touch chunks c and c + 1 only); chunk
     * c's springs, those whose first particle lies in it, are chunk_first[c]
     * to chunk_first[c + 1] - 1.  Even chunks run in parallel, then odd
     * ones: no two threads add into one particle, and each particle sums
     * its springs in one fixed order, whatever the thread count. */
    size_t nchunk, chunk_np;
    size_t *chunk_first;
} ts_springs;

/* Read and validate the common parameters (TS_ERR_INPUT naming a bad one). */
int ts_springs_read_options(const ts_params *p, ts_springs_options *opt);

/* A network of `np` particles at the origin, at rest, mass 1, nothing
 * pinned, no springs.  `type` names the system; opt may be NULL (no
 * gravity, no air, clamp when indefinite). */
int ts_springs_new(const ts_system_type *type, size_t np, const ts_springs_options *opt,
                   ts_springs **out);

/* Room for ns springs in all, between ts_springs_new and ts_springs_finish
 * (optional: the arrays grow as springs are added; reserved, a large
 * network's arrays are first touched on the thread team instead of one
 * page at a time as they fill).  No change when ns is not more than the
 * room there is; TS_ERR_NOMEM when the arrays cannot grow (they stay as
 * they were). */
int ts_springs_reserve(ts_springs *s, size_t ns);

/* Add a spring between particles i != j with rest length the current
 * distance |x_i - x_j| (> 0).  k >= 0, kd >= 0. */
int ts_springs_add(ts_springs *s, size_t i, size_t j, double k, double kd, int kind);

/* Mass of particle p (all three degrees of freedom), > 0. */
void ts_springs_set_mass(ts_springs *s, size_t p, double m);

/* Pin particle p: it never moves. */
int ts_springs_pin(ts_springs *s, size_t p);

/* Sort the springs, keep k and kd per kind where they allow it, cut the
 * particles into the threads' chunks; call once, after the last
 * ts_springs_add. */
int ts_springs_finish(ts_springs *s);

/* Stiffness and damping of spring e. */
static inline double ts_springs_k(const ts_springs *s, size_t e)
{
    return s->k ? s->k[e] : s->kind_k[s->kind[e]];
}
static inline double ts_springs_kd(const ts_springs *s, size_t e)
{
    return s->kd ? s->kd[e] : s->kind_kd[s->kind[e]];
}

/* Spring e's block B = alpha K + beta D at the last linearization (xx xy xz
 * yy yz zz), as the fast path's product uses it. */
void ts_springs_block(const ts_springs *s, size_t e, double b[6]);

/* The network behind a system, or NULL if `sys` is not a spring network. */
ts_springs *ts_springs_of(ts_system *sys);

/* out = M u - (alpha df/dx + beta df/dv) u at the last linearization, in
 * the product's one pass over the particles and one over the springs (the
 * springs' share subtracted, not added and then subtracted from M u: the
 * same to rounding, not to the bit); counted as a Jacobian product.  sys
 * must be a spring network (ts_springs_of). */
int ts_springs_shifted_mul(ts_system *sys, const double *u, double *out);

/* Memory a network of np particles and ns springs takes with any stepper,
 * estimated (bytes): TS_SPRINGS_BYTES_PER_PARTICLE a particle (state, masses
 * and the steppers' vectors: dopri5's are the most) and
 * TS_SPRINGS_BYTES_PER_SPRING a spring (its arrays, the cache of the fast
 * path's coefficients, the sort's transient arrays).  Measured: a 300 x 300
 * cloth (90000 particles, 537000 springs) peaks at 64 MB with
 * backward-euler and cg/jacobi and 85 MB with dopri5; the estimate says
 * 97 MB.  (The default multigrid takes more, about 1.3 kB a particle: it is
 * the default only where that fits, src/linear/linsolve.c.) */
#define TS_SPRINGS_BYTES_PER_PARTICLE 700.0
#define TS_SPRINGS_BYTES_PER_SPRING 64.0
double ts_springs_memory_estimate(size_t np, size_t ns);
/* TS_ERR_INPUT, with the estimate, when it exceeds the physical memory;
 * `what` names the system in the message (e.g. "nx=5000 ny=5000"). */
int ts_springs_check_memory(const char *what, size_t np, size_t ns);

/* Half-bandwidth of the network's Jacobian in unknowns: the largest |i - j|
 * of its nonzero entries, 3 (largest particle index distance of a spring) + 2. */
size_t ts_springs_bandwidth(const ts_springs *s);

/* Number of springs of a kind, or of all kinds for kind < 0. */
size_t ts_springs_count(const ts_springs *s, int kind);

/* The air's velocity at time t, w(t). */
void ts_springs_wind(const ts_springs *s, double t, double w[3]);

#endif

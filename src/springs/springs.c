/* Spring networks: forces, exact Jacobian products, the cached fast path for
 * the implicit solver, energy, momentum, the strain measure of adaptive
 * stepping and the post-step projections.  The maths is in tstep/springs.h.
 *
 * References: Baraff & Witkin, "Large Steps in Cloth Simulation" (SIGGRAPH
 * 1998), sec. 4-5; Choi & Ko, "Stable but Responsive Cloth" (SIGGRAPH
 * 2002), sec. 5; Provot, Graphics Interface 1995; Kauppila, "Implementing
 * the implicit Euler method for mass-spring systems", sec. 2 and 4.1;
 * Macklin, "Implicit Springs". */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/linalg.h"
#include "tstep/springs.h"
#include "core/v2d.h"
#include "core/parallel.h"
#include "springs/springs.h"

#define TS_PI 3.14159265358979323846

/* the product's AVX2 loop (chosen at run time): x86-64 with a compiler that
 * has __builtin_shufflevector */
#if defined(__x86_64__) && (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12))
#define TS_SPRINGS_AVX2 1
#include <immintrin.h>
#endif

static const ts_system_ops springs_ops;

ts_springs *ts_springs_of(ts_system *sys)
{
    return sys && sys->ops == &springs_ops ? (ts_springs *)sys : NULL;
}

/* --- small 3-vector helpers ------------------------------------------------ */

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void sub3(const double *a, const double *b, double *out)
{
    out[0] = a[0] - b[0], out[1] = a[1] - b[1], out[2] = a[2] - b[2];
}

/* d = x_i - x_j, its length and direction; 0 (and n = 0) when coincident */
static double spring_axis(const double *x, uint32_t i, uint32_t j, double *d, double *n)
{
    sub3(x + 3 * (size_t)i, x + 3 * (size_t)j, d);
    double l = sqrt(dot3(d, d));
    double inv = l > 0.0 ? 1.0 / l : 0.0;
    n[0] = d[0] * inv, n[1] = d[1] * inv, n[2] = d[2] * inv;
    return l;
}

/* |x_i - x_j|: spring_axis's length, without the direction */
static double spring_length(const double *x, uint32_t i, uint32_t j)
{
    double d[3];
    sub3(x + 3 * (size_t)i, x + 3 * (size_t)j, d);
    return sqrt(dot3(d, d));
}

/* out_i += g, out_j -= g */
static void add_pair(double *out, uint32_t i, uint32_t j, const double *g)
{
    double *a = out + 3 * (size_t)i, *b = out + 3 * (size_t)j;
    a[0] += g[0], a[1] += g[1], a[2] += g[2];
    b[0] -= g[0], b[1] -= g[1], b[2] -= g[2];
}

/* --- construction ------------------------------------------------------------ */

int ts_springs_read_options(const ts_params *p, ts_springs_options *o)
{
    o->gravity = ts_params_real(p, "gravity");
    o->drag = ts_params_real(p, "drag");
    o->wind[0] = ts_params_real(p, "wind_x");
    o->wind[1] = ts_params_real(p, "wind_y");
    o->wind[2] = ts_params_real(p, "wind_z");
    o->gust = ts_params_real(p, "gust");
    o->gust_freq = ts_params_real(p, "gust_freq");
    long clamp = ts_params_int(p, "clamp");
    if (o->gravity < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'gravity': %g must be >= 0", o->gravity);
    if (o->drag < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'drag': %g must be >= 0", o->drag);
    if (o->gust < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'gust': %g must be >= 0", o->gust);
    if (o->gust_freq < 0.0)
        return ts_error(TS_ERR_INPUT, "parameter 'gust_freq': %g must be >= 0", o->gust_freq);
    if (clamp < 0 || clamp > 2)
        return ts_error(TS_ERR_INPUT, "parameter 'clamp': %ld must be 0, 1 or 2", clamp);
    o->clamp = (int)clamp;
    return TS_OK;
}

static void springs_destroy(ts_system *sys)
{
    ts_springs *s = (ts_springs *)sys;
    free(s->si);
    free(s->sj);
    free(s->rest);
    free(s->k);
    free(s->kd);
    free(s->kind);
    free(s->lin_inv);
    free(s->lin_coef);
    free(s->chunk_first);
    ts_system_release(sys);
    free(s);
}

int ts_springs_new(const ts_system_type *type, size_t np, const ts_springs_options *opt,
                   ts_springs **out)
{
    *out = NULL;
    if (np == 0 || np > UINT32_MAX / 3)
        return ts_error(TS_ERR_INPUT, "spring network of %zu particles", np);
    ts_springs *s = calloc(1, sizeof *s);
    if (!s)
        return ts_error(TS_ERR_NOMEM, "spring network");
    int st = ts_system_init(&s->base, &springs_ops, type, 2, 3 * np);
    if (st) {
        free(s);
        return st;
    }
    s->base.dim = 3;
    s->np = np;
    if (opt)
        s->opt = *opt;
    else
        s->opt = (ts_springs_options){.clamp = TS_SPRINGS_CLAMP_AUTO};
    for (int c = 0; c < TS_SPRING_KINDS; c++) /* no spring of the kind yet (ts_springs_add) */
        s->kind_k[c] = NAN;
    s->base.fast_path_approximate = s->opt.clamp == TS_SPRINGS_CLAMP_ALWAYS;
    s->base.has_definite_fix = s->opt.clamp == TS_SPRINGS_CLAMP_AUTO;
    *out = s;
    return TS_OK;
}

/* The arrays grown to room for cap springs (k and kd when per spring) */
static int springs_grow(ts_springs *s, size_t cap)
{
    void *p;
    if (cap > SIZE_MAX / sizeof *s->rest) /* no array's size may wrap */
        goto nomem;
    /* each realloc that succeeds replaces its array at once, so a failure
     * part way leaves every array valid (and freed by destroy) */
    if (!(p = realloc(s->si, cap * sizeof *s->si)))
        goto nomem;
    s->si = p;
    if (!(p = realloc(s->sj, cap * sizeof *s->sj)))
        goto nomem;
    s->sj = p;
    if (!(p = realloc(s->rest, cap * sizeof *s->rest)))
        goto nomem;
    s->rest = p;
    if (s->k && !(p = realloc(s->k, cap * sizeof *s->k)))
        goto nomem;
    s->k = s->k ? p : NULL;
    if (s->kd && !(p = realloc(s->kd, cap * sizeof *s->kd)))
        goto nomem;
    s->kd = s->kd ? p : NULL;
    if (!(p = realloc(s->kind, cap * sizeof *s->kind)))
        goto nomem;
    s->kind = p;
    s->cap = cap;
    return TS_OK;
nomem:
    return ts_error(TS_ERR_NOMEM, "%zu springs", cap);
}

/* Stiffness and damping per spring from here on: the first ns springs'
 * from their kinds' (every spring of a kind had its values so far); the
 * kinds' values zero again, as ts_springs_finish expects them. */
static int springs_per_spring(ts_springs *s)
{
    s->k = malloc(s->cap * sizeof *s->k);
    s->kd = malloc(s->cap * sizeof *s->kd);
    if (!s->k || !s->kd) {
        free(s->k), free(s->kd);
        s->k = s->kd = NULL;
        return ts_error(TS_ERR_NOMEM, "%zu springs", s->cap);
    }
    for (size_t m = 0; m < s->ns; m++)
        s->k[m] = s->kind_k[s->kind[m]], s->kd[m] = s->kind_kd[s->kind[m]];
    for (int c = 0; c < TS_SPRING_KINDS; c++)
        s->kind_k[c] = s->kind_kd[c] = 0.0;
    return TS_OK;
}

/* Spring m's stiffness and damping: its kind's while every spring of the
 * kind has the same (no per-spring arrays), else per spring. */
static int springs_set_k(ts_springs *s, size_t m, double k, double kd)
{
    int c = s->kind[m];
    if (!s->k && isnan(s->kind_k[c])) { /* the kind's first */
        s->kind_k[c] = k, s->kind_kd[c] = kd;
        return TS_OK;
    }
    if (!s->k && memcmp(&s->kind_k[c], &k, sizeof k) == 0 &&
        memcmp(&s->kind_kd[c], &kd, sizeof kd) == 0)
        return TS_OK;
    int st = s->k ? TS_OK : springs_per_spring(s);
    if (!st)
        s->k[m] = k, s->kd[m] = kd;
    return st;
}

int ts_springs_reserve(ts_springs *s, size_t ns)
{
    if (ns <= s->cap)
        return TS_OK;
    if (ns > SIZE_MAX / sizeof *s->rest)
        return ts_error(TS_ERR_NOMEM, "%zu springs", ns);
    int st = springs_grow(s, ns);
    if (st)
        return st;
    size_t m = s->ns, left = ns - m;
    ts_parallel_touch(s->si + m, left * sizeof *s->si);
    ts_parallel_touch(s->sj + m, left * sizeof *s->sj);
    ts_parallel_touch(s->rest + m, left * sizeof *s->rest);
    ts_parallel_touch(s->kind + m, left * sizeof *s->kind);
    if (s->k) {
        ts_parallel_touch(s->k + m, left * sizeof *s->k);
        ts_parallel_touch(s->kd + m, left * sizeof *s->kd);
    }
    return TS_OK;
}

int ts_springs_add(ts_springs *s, size_t i, size_t j, double k, double kd, int kind)
{
    if (i >= s->np || j >= s->np || i == j)
        return ts_error(TS_ERR_INPUT, "spring (%zu, %zu) in a network of %zu particles", i, j,
                        s->np);
    if (!(k >= 0.0) || !(kd >= 0.0) || kind < 0 || kind >= TS_SPRING_KINDS)
        return ts_error(TS_ERR_INPUT, "spring (%zu, %zu): k %g, kd %g, kind %d", i, j, k, kd,
                        kind);
    double l = spring_length(s->base.x, (uint32_t)i, (uint32_t)j);
    if (!(l > 0.0))
        return ts_error(TS_ERR_INPUT, "spring (%zu, %zu) has rest length 0", i, j);
    if (s->ns == s->cap) {
        int st = springs_grow(s, s->cap ? 2 * s->cap : 64);
        if (st)
            return st;
    }
    size_t m = s->ns;
    s->si[m] = (uint32_t)(i < j ? i : j);
    s->sj[m] = (uint32_t)(i < j ? j : i);
    s->rest[m] = l;
    s->kind[m] = (unsigned char)kind;
    int st = springs_set_k(s, m, k, kd);
    if (st)
        return st;
    s->ns++;
    return TS_OK;
}

void ts_springs_set_mass(ts_springs *s, size_t p, double m)
{
    s->base.mass[3 * p] = s->base.mass[3 * p + 1] = s->base.mass[3 * p + 2] = m;
}

int ts_springs_pin(ts_springs *s, size_t p)
{
    if (p >= s->np)
        return ts_error(TS_ERR_INPUT, "pin: particle %zu of %zu", p, s->np);
    if (ts_system_alloc_pins(&s->base))
        return ts_error(TS_ERR_NOMEM, "pin flags");
    s->base.pinned[3 * p] = s->base.pinned[3 * p + 1] = s->base.pinned[3 * p + 2] = 1;
    return TS_OK;
}

/* One stable counting sort pass (Cormen, Leiserson, Rivest & Stein,
 * Introduction to Algorithms, 3rd ed., sec. 8.2): the springs in[0 .. ns)
 * (NULL: 0, 1, ..., ns - 1) by key[] (< np) into out; count: np + 1. */
static void counting_pass(const uint32_t *key, const size_t *in, size_t ns, size_t np,
                          size_t *count, size_t *out)
{
    memset(count, 0, (np + 1) * sizeof *count);
    for (size_t m = 0; m < ns; m++)
        count[key[m] + 1]++;
    for (size_t p = 0; p < np; p++)
        count[p + 1] += count[p];
    for (size_t m = 0; m < ns; m++) {
        size_t e = in ? in[m] : m;
        out[count[key[e]]++] = e;
    }
}

/* ord: the springs by (si, sj), those of one pair in the order added (a
 * radix sort, sec. 8.3: by sj, then stably by si); tmp: ns of scratch.
 * -1 when out of memory. */
static int order_springs(const ts_springs *s, size_t *ord, size_t *tmp)
{
    size_t *count = malloc((s->np + 1) * sizeof *count);
    if (!count)
        return -1;
    counting_pass(s->sj, NULL, s->ns, s->np, count, tmp);
    counting_pass(s->si, tmp, s->ns, s->np, count, ord);
    free(count);
    return 0;
}

/* Apply the permutation `ord` to an array of `size`-byte elements via tmp. */
static void permute(void *array, size_t size, const size_t *ord, size_t ns, void *tmp)
{
    unsigned char *a = array, *t = tmp;
    for (size_t m = 0; m < ns; m++)
        memcpy(t + m * size, a + ord[m] * size, size);
    memcpy(a, t, ns * size);
}

/* 1 when the springs are in (si, sj) order already, as a grid adds them */
static int springs_sorted(const ts_springs *s)
{
    for (size_t m = 1; m < s->ns; m++)
        if (s->si[m] < s->si[m - 1] || (s->si[m] == s->si[m - 1] && s->sj[m] <= s->sj[m - 1]))
            return 0;
    return 1;
}

/* The springs put in (si, sj) order, those of one pair in the order added.
 * The order, ord, and tmp, the sort's scratch, then the permutations' (a
 * double an element at most): in the blocks' cache where there is one,
 * idle until the first linearization (its pages are then in place), else
 * on their own.  -1 when out of memory. */
static int sort_springs(ts_springs *s)
{
    size_t ns = s->ns;
    _Static_assert(sizeof(size_t) <= sizeof(double), "the sort's scratch holds indices");
    size_t *ord = s->lin_coef ? (size_t *)(void *)s->lin_coef : malloc((ns ? ns : 1) * sizeof *ord);
    void *tmp = s->lin_coef ? s->lin_coef + ns : malloc((ns ? ns : 1) * sizeof(double));
    int own = !s->lin_coef, st = -1;
    if (ord && tmp && order_springs(s, ord, tmp) == 0) {
        permute(s->si, sizeof *s->si, ord, ns, tmp);
        permute(s->sj, sizeof *s->sj, ord, ns, tmp);
        permute(s->rest, sizeof *s->rest, ord, ns, tmp);
        if (s->k) {
            permute(s->k, sizeof *s->k, ord, ns, tmp);
            permute(s->kd, sizeof *s->kd, ord, ns, tmp);
        }
        permute(s->kind, sizeof *s->kind, ord, ns, tmp);
        st = 0;
    }
    if (own)
        free(ord), free(tmp);
    return st;
}

/* One stiffness and damping per kind when the springs allow it: then the
 * per-spring arrays go (16 bytes a spring).  Without them (every kind
 * uniform as added: ts_springs_add), a kind without springs gets 0. */
static void keep_per_kind(ts_springs *s)
{
    int seen[TS_SPRING_KINDS] = {0};
    for (int c = 0; c < TS_SPRING_KINDS && !s->k; c++)
        if (isnan(s->kind_k[c]))
            s->kind_k[c] = 0.0;
    if (!s->k)
        return;
    for (size_t m = 0; m < s->ns; m++) {
        int c = s->kind[m];
        if (!seen[c]) {
            seen[c] = 1;
            s->kind_k[c] = s->k[m];
            s->kind_kd[c] = s->kd[m];
        } else if (memcmp(&s->kind_k[c], &s->k[m], sizeof(double)) != 0 ||
                   memcmp(&s->kind_kd[c], &s->kd[m], sizeof(double)) != 0) {
            return; /* two values in one kind: per spring */
        }
    }
    free(s->k);
    free(s->kd);
    s->k = s->kd = NULL;
}

/* the largest sj - si of a spring (si < sj) */
static size_t max_span(const ts_springs *s)
{
    size_t span = 0;
    for (size_t m = 0; m < s->ns; m++)
        if (s->sj[m] - s->si[m] > span)
            span = s->sj[m] - s->si[m];
    return span;
}

int ts_springs_finish(ts_springs *s)
{
    size_t ns = s->ns;
    keep_per_kind(s);
    /* the blocks' cache: faster products; 4 numbers a spring (q and w) up to
     * TS_SPRINGS_WIDE_MAX springs, 2 (q and g) beyond; optional, and without it
     * 1/l per spring (see tstep/springs.h) */
    s->lin_wide = ns <= TS_SPRINGS_WIDE_MAX;
    s->lin_coef = malloc((s->lin_wide ? 4 : 2) * (ns ? ns : 1) * sizeof *s->lin_coef);
    if (!springs_sorted(s) && sort_springs(s))
        return ts_error(TS_ERR_NOMEM, "%zu springs", ns);
    if (!s->lin_coef) {
        s->lin_inv = malloc((ns ? ns : 1) * sizeof *s->lin_inv);
        if (!s->lin_inv)
            return ts_error(TS_ERR_NOMEM, "%zu springs", ns);
    }
    /* particle chunks for the threads: at least the largest span sj - si */
    size_t span = max_span(s);
    s->chunk_np = span < 64 ? 64 : span;
    s->nchunk = (s->np + s->chunk_np - 1) / s->chunk_np;
    s->chunk_first = malloc((s->nchunk + 1) * sizeof *s->chunk_first);
    if (!s->chunk_first)
        return ts_error(TS_ERR_NOMEM, "%zu particle chunks", s->nchunk);
    for (size_t c = 0, m = 0; c <= s->nchunk; c++) {
        while (m < ns && s->si[m] < c * s->chunk_np)
            m++;
        s->chunk_first[c] = m;
    }
    /* the fast path's matrix is symmetric by construction (see springs.h) */
    s->base.jacobian_symmetric = 1;
    return TS_OK;
}

size_t ts_springs_bandwidth(const ts_springs *s)
{
    return 3 * max_span(s) + 2;
}

size_t ts_springs_count(const ts_springs *s, int kind)
{
    if (kind < 0)
        return s->ns;
    size_t c = 0;
    for (size_t m = 0; m < s->ns; m++)
        c += s->kind[m] == kind;
    return c;
}

void ts_springs_wind(const ts_springs *s, double t, double w[3])
{
    double f = 1.0 + s->opt.gust * sin(2.0 * TS_PI * s->opt.gust_freq * t);
    w[0] = s->opt.wind[0] * f, w[1] = s->opt.wind[1] * f, w[2] = s->opt.wind[2] * f;
}

/* --- the chunked loops ----------------------------------------------------------
 *
 * Every loop over springs that adds into particles runs as: a per-particle
 * pass (`init`, over particle chunks), then the springs of the even chunks
 * in parallel, then those of the odd chunks (see ts_springs.chunk_np).  The
 * spring kernels take their first particle's sum in registers while they
 * visit its springs (springs are sorted by first particle) and write it
 * once; the second particle's share goes straight to memory. */

typedef struct {
    const double *x, *v, *u; /* state and the vector multiplied */
    double *out;
    double w[3];             /* the air's velocity (forces) */
    int shifted;             /* products: M u - J u instead of J u */
} spring_args;

typedef void (*particle_fn)(const ts_springs *s, size_t p0, size_t p1, const spring_args *a);
typedef void (*spring_fn)(const ts_springs *s, size_t e0, size_t e1, const spring_args *a);

typedef struct {
    const ts_springs *s;
    particle_fn init;
    spring_fn kernel;
    const spring_args *a;
} chunk_args;

/* The passes of run_chunks over chunks [k0, k1): pass 0 the springs of
 * chunk 2k after the particles' init over chunks 2k and 2k + 1 (the only
 * particles they touch, so that the init is still in cache), pass 1 those
 * of chunk 2k + 1. */
static void chunk_pass(void *ctx, int pass, size_t k0, size_t k1)
{
    const chunk_args *g = ctx;
    const ts_springs *s = g->s;
    size_t cn = s->chunk_np, np = s->np;
    const size_t *first = s->chunk_first;
    for (size_t k = k0; k < k1; k++) {
        size_t c = 2 * k + (size_t)pass;
        if (pass == 0) {
            size_t p0 = c * cn, p1 = p0 + 2 * cn < np ? p0 + 2 * cn : np;
            g->init(s, p0, p1, g->a);
        }
        g->kernel(s, first[c], first[c + 1], g->a);
    }
}

static void run_chunks(const ts_springs *s, particle_fn init, spring_fn kernel,
                       const spring_args *a)
{
    size_t nc = s->nchunk, count[2] = {(nc + 1) / 2, nc / 2};
    chunk_args g = {s, init, kernel, a};
    if (s->ns + s->np >= ts_threads_min() / 2 && nc > 2) {
        ts_parallel_passes(2, count, chunk_pass, &g);
    } else {
        for (int pass = 0; pass < 2; pass++)
            chunk_pass(&g, pass, 0, count[pass]);
    }
}

/* --- forces and exact Jacobian products ------------------------------------- */

/* f_p = m_p (0, -g, 0) - c m_p (v_p - w) */
static void forces_init(const ts_springs *s, size_t p0, size_t p1, const spring_args *a)
{
    const double *m = s->base.mass, *v = a->v;
    double c = s->opt.drag, g = s->opt.gravity, w0 = a->w[0], w1 = a->w[1], w2 = a->w[2];
    double *f = a->out;
    for (size_t q = 3 * p0; q < 3 * p1; q += 3) {
        f[q] = -c * m[q] * (v[q] - w0);
        f[q + 1] = -c * m[q + 1] * (v[q + 1] - w1) - g * m[q + 1];
        f[q + 2] = -c * m[q + 2] * (v[q + 2] - w2);
    }
}

/* f_i += -[k (l - L) + kd (n . u)] n, f_j -= the same */
static void forces_springs(const ts_springs *s, size_t e0, size_t e1, const spring_args *a)
{
    const uint32_t *si = s->si, *sj = s->sj;
    const double *x = a->x, *v = a->v, *rest = s->rest;
    double *f = a->out;
    size_t e = e0;
    while (e < e1) {
        size_t i = 3 * (size_t)si[e];
        double xi0 = x[i], xi1 = x[i + 1], xi2 = x[i + 2];
        double vi0 = v[i], vi1 = v[i + 1], vi2 = v[i + 2];
        double a0 = 0.0, a1 = 0.0, a2 = 0.0;
        for (; e < e1 && 3 * (size_t)si[e] == i; e++) {
            size_t j = 3 * (size_t)sj[e];
            double d0 = xi0 - x[j], d1 = xi1 - x[j + 1], d2 = xi2 - x[j + 2];
            double u0 = vi0 - v[j], u1 = vi1 - v[j + 1], u2 = vi2 - v[j + 2];
            double l = sqrt(d0 * d0 + d1 * d1 + d2 * d2);
            double inv = l > 0.0 ? 1.0 / l : 0.0;
            /* mag / l, with n = d / l: -[k (l - L) + kd (d . u) / l] / l */
            double c = (-ts_springs_k(s, e) * (l - rest[e]) -
                        ts_springs_kd(s, e) * (d0 * u0 + d1 * u1 + d2 * u2) * inv) *
                       inv;
            double g0 = c * d0, g1 = c * d1, g2 = c * d2;
            a0 += g0, a1 += g1, a2 += g2;
            f[j] -= g0, f[j + 1] -= g1, f[j + 2] -= g2;
        }
        f[i] += a0, f[i + 1] += a1, f[i + 2] += a2;
    }
}

static int springs_forces(ts_system *sys, double t, const double *x, const double *v,
                          double *f)
{
    ts_springs *s = (ts_springs *)sys;
    spring_args a = {.x = x, .v = v, .out = f};
    ts_springs_wind(s, t, a.w);
    run_chunks(s, forces_init, forces_springs, &a);
    return TS_OK;
}

static void zero_init(const ts_springs *s, size_t p0, size_t p1, const spring_args *a)
{
    (void)s;
    memset(a->out + 3 * p0, 0, 3 * (p1 - p0) * sizeof *a->out);
}

/* df_i/dd dd = -k [n (n.dd) + c P dd] - kd/l [n (Pu . dd) + (n.u) P dd],
 * dd = du_i - du_j, c = 1 - L/l, P = I - n n^T */
static void dfdx_springs(const ts_springs *s, size_t e0, size_t e1, const spring_args *a)
{
    const double *x = a->x, *v = a->v, *du = a->u;
    double *out = a->out;
    for (size_t e = e0; e < e1; e++) {
        uint32_t i = s->si[e], j = s->sj[e];
        double d[3], n[3], u[3], dd[3], pd[3], pu[3], g3[3];
        double l = spring_axis(x, i, j, d, n);
        if (!(l > 0.0))
            continue;
        sub3(v + 3 * (size_t)i, v + 3 * (size_t)j, u);
        sub3(du + 3 * (size_t)i, du + 3 * (size_t)j, dd);
        double nd = dot3(n, dd), nu = dot3(n, u);
        for (int b = 0; b < 3; b++) {
            pd[b] = dd[b] - n[b] * nd; /* P dd */
            pu[b] = u[b] - n[b] * nu;  /* P u */
        }
        double c = 1.0 - s->rest[e] / l, kdl = ts_springs_kd(s, e) / l, pud = dot3(pu, dd);
        double k = ts_springs_k(s, e);
        for (int b = 0; b < 3; b++)
            g3[b] = -k * (n[b] * nd + c * pd[b]) - kdl * (n[b] * pud + nu * pd[b]);
        add_pair(out, i, j, g3);
    }
}

/* out = (df/dx) du: exact, with the axis damping's position derivative */
static int springs_dfdx_mul(ts_system *sys, double t, const double *x, const double *v,
                            const double *du, double *out)
{
    (void)t;
    spring_args a = {.x = x, .v = v, .u = du, .out = out};
    run_chunks((ts_springs *)sys, zero_init, dfdx_springs, &a);
    return TS_OK;
}

static void drag_init(const ts_springs *s, size_t p0, size_t p1, const spring_args *a)
{
    const double *m = s->base.mass, *du = a->u;
    for (size_t q = 3 * p0; q < 3 * p1; q++)
        a->out[q] = -s->opt.drag * m[q] * du[q];
}

static void dfdv_springs(const ts_springs *s, size_t e0, size_t e1, const spring_args *a)
{
    for (size_t e = e0; e < e1; e++) {
        uint32_t i = s->si[e], j = s->sj[e];
        double d[3], n[3], dd[3], g3[3];
        spring_axis(a->x, i, j, d, n);
        sub3(a->u + 3 * (size_t)i, a->u + 3 * (size_t)j, dd);
        double c = -ts_springs_kd(s, e) * dot3(n, dd);
        g3[0] = c * n[0], g3[1] = c * n[1], g3[2] = c * n[2];
        add_pair(a->out, i, j, g3);
    }
}

/* out = (df/dv) du = -c M du - sum over springs of the D blocks */
static int springs_dfdv_mul(ts_system *sys, double t, const double *x, const double *v,
                            const double *du, double *out)
{
    (void)t, (void)v;
    spring_args a = {.x = x, .u = du, .out = out};
    run_chunks((ts_springs *)sys, drag_init, dfdv_springs, &a);
    return TS_OK;
}

/* --- the fast path ------------------------------------------------------------ */

/* B = alpha K + beta D of spring e, K without the damping term and with
 * 1 - L/l clamped at 0 when clamping applies: B = p n n^T + q I with
 * n = d / l, d = x_i - x_j at the linearization point.  With
 * g = sign(p) sqrt(|p|) / l and w = |g| d,
 *   B u = q u + sign(g) (w . u) w.
 * For a unit vector u = e_c that is q e_c + (sign(g) w_c) w, and entry
 * (r, c) = (sign(g) w_c) w_r = entry (c, r) bit for bit: the product is
 * exactly symmetric and equals the assembled blocks (ts_springs_block).
 * p = alpha k L/l + beta kd with k, kd >= 0, so every spring's g has one
 * sign (lin_sign) unless alpha and beta have opposite signs.
 * inv = 1/l (-1 when l is not > 0: no term). */
static inline void spring_coef(const ts_springs *s, size_t e, double inv, double *q, double *g)
{
    if (!(inv >= 0.0)) { /* l = 0 */
        *q = *g = 0.0;
        return;
    }
    double c = 1.0 - s->rest[e] * inv;
    if (s->lin_clamp && c < 0.0)
        c = 0.0;
    /* alpha k and beta kd: per kind from linearize, or per spring */
    double ak = s->k ? s->lin_alpha * s->k[e] : s->lin_ak[s->kind[e]];
    double bkd = s->kd ? s->lin_beta * s->kd[e] : s->lin_bkd[s->kind[e]];
    double p = ak * (1.0 - c) + bkd;
    *q = ak * c;
    *g = copysign(sqrt(fabs(p)) * inv, p);
}

/* w = |g| (xi - xj); |g| as g * sign when every g has that sign */
static inline void spring_w(double g, int sign, const double *xi, const double *xj, double *w)
{
    double m = sign ? g * sign : fabs(g);
    w[0] = m * (xi[0] - xj[0]), w[1] = m * (xi[1] - xj[1]), w[2] = m * (xi[2] - xj[2]);
}

/* What the cache holds at the last linearization (tstep/springs.h):
 * nothing (1/l instead), q and g (2 numbers a spring), or q and w (4). */
enum { COEF_NONE, COEF_QG, COEF_QW };

/* Whether a linearization with every g of sign `sign` (0: mixed) keeps w:
 * the wide cache and one sign. */
static int coef_keeps_w(const ts_springs *s, int sign)
{
    return s->lin_coef && s->lin_wide && sign;
}

static int coef_mode(const ts_springs *s)
{
    return !s->lin_coef ? COEF_NONE : s->lin_wcache ? COEF_QW : COEF_QG;
}

/* Spring e's q, w and sign(g) at the last linearization: q and w from the
 * cache (COEF_QW), else w formed here from q and g, cached (COEF_QG) or
 * formed from 1/l (COEF_NONE).  The same arithmetic on every path: the
 * same bits.  mode and sign are constants where this is inlined into a
 * loop. */
static inline __attribute__((always_inline)) double
spring_qw(const ts_springs *s, size_t e, int mode, int sign, double *w, double *sg)
{
    const double *xi = s->lin_x + 3 * (size_t)s->si[e], *xj = s->lin_x + 3 * (size_t)s->sj[e];
    double q, g;
    if (mode == COEF_QW) {
        const double *c = s->lin_coef + 4 * e;
        w[0] = c[1], w[1] = c[2], w[2] = c[3];
        *sg = sign;
        return c[0];
    }
    if (mode == COEF_QG)
        q = s->lin_coef[2 * e], g = s->lin_coef[2 * e + 1];
    else
        spring_coef(s, e, s->lin_inv[e], &q, &g);
    spring_w(g, sign, xi, xj, w);
    *sg = sign ? sign : copysign(1.0, g);
    return q;
}

/* Spring e's block (xx xy xz yy yz zz; with diag_only the diagonal xx yy
 * zz in b[0], b[3], b[5]) as the product forms it (see spring_coef); mode
 * and sign as in spring_qw, constants where this is inlined into a loop. */
static inline __attribute__((always_inline)) void
block_of(const ts_springs *s, size_t e, int mode, int sign, int diag_only, double b[6])
{
    double w[3], sg;
    double q = spring_qw(s, e, mode, sign, w, &sg);
    b[0] = q * 1.0 + (sg * w[0]) * w[0];
    b[3] = q * 1.0 + (sg * w[1]) * w[1];
    b[5] = q * 1.0 + (sg * w[2]) * w[2];
    if (!diag_only) {
        b[1] = (sg * w[1]) * w[0];
        b[2] = (sg * w[2]) * w[0];
        b[4] = (sg * w[2]) * w[1];
    }
}

void ts_springs_block(const ts_springs *s, size_t e, double b[6])
{
    if (!s->lin_x) {
        memset(b, 0, 6 * sizeof *b);
        return;
    }
    block_of(s, e, coef_mode(s), s->lin_sign, 0, b);
}

typedef struct {
    const ts_springs *s;
    const double *x;
    int sign, wcache;
} lin_args;

/* The linearization's loop (ts_springs_lanes): 0 one spring at a time, 1
 * four at a time with AVX2 (linearize_lanes) where the processor has it,
 * -1 (the default) four at a time on AMD's processors with AVX2 only.  The
 * same bits either way.  A spring takes two square roots and a division,
 * which AMD's divider does four lanes at about the time of one; on Intel's
 * processors this loop has not been measured (docs/performance.md, The
 * linearization four springs at a time). */
static int lin_lanes = -1;

void ts_springs_lanes(int mode)
{
    lin_lanes = mode;
}

#ifdef TS_SPRINGS_AVX2
typedef double v4d __attribute__((vector_size(32)));
typedef double v4du __attribute__((vector_size(32), aligned(8), may_alias));
typedef long long v4l __attribute__((vector_size(32)));
/* four doubles from p, unaligned (a particle's x y z and the number after
 * it in product_range4, four springs' rest lengths in linearize_lanes) */
#define LOAD4(p) (*(const v4du *)(p))

/* lanes where mask (all ones or zeros) is set from a, the others from b */
#define V4_PICK(mask, a, b) ((v4d)(((v4l)(a) & (mask)) | ((v4l)(b) & ~(mask))))

/* Four springs' (q, g) rows of the narrow cache from the lanes of q and g:
 * a 4x2 transpose */
__attribute__((target("avx2"))) static void lanes_store_qg(double *coef, size_t e, v4d q, v4d g)
{
    v4d lo = __builtin_shufflevector(q, g, 0, 4, 1, 5),
        hi = __builtin_shufflevector(q, g, 2, 6, 3, 7);
    __builtin_memcpy(coef + 2 * e, &lo, sizeof lo);
    __builtin_memcpy(coef + 2 * e + 4, &hi, sizeof hi);
}

/* Four springs' (q, w) rows of the wide cache from the lanes of q and w's
 * components: a 4x4 transpose */
__attribute__((target("avx2"))) static void lanes_store_qw(double *coef, size_t e, v4d q,
                                                           const v4d w[3])
{
    v4d a = __builtin_shufflevector(q, w[0], 0, 4, 2, 6),
        b = __builtin_shufflevector(q, w[0], 1, 5, 3, 7);
    v4d c = __builtin_shufflevector(w[1], w[2], 0, 4, 2, 6),
        d = __builtin_shufflevector(w[1], w[2], 1, 5, 3, 7);
    v4d r[4] = {
        __builtin_shufflevector(a, c, 0, 1, 4, 5), __builtin_shufflevector(b, d, 0, 1, 4, 5),
        __builtin_shufflevector(a, c, 2, 3, 6, 7), __builtin_shufflevector(b, d, 2, 3, 6, 7)};
    __builtin_memcpy(coef + 4 * e, r, sizeof r);
}

/* linearize_range's springs [e0, e0 + 4k) four at a time, for a network
 * with stiffness and damping per kind: lane by lane spring_coef's and
 * spring_w's operations (the square roots and the division correctly
 * rounded in every lane, no FMA), the same bits.  Returns the first spring
 * left to do. */
__attribute__((target("avx2"))) static size_t linearize_lanes(const lin_args *a, size_t e0,
                                                              size_t e1)
{
    const ts_springs *s = a->s;
    const double *x = a->x;
    const uint32_t *si = s->si, *sj = s->sj;
    const v4d zero = {0.0, 0.0, 0.0, 0.0}, one = zero + 1.0, sg = zero + (double)a->sign;
    const v4l sbit = (v4l)(v4d){-0.0, -0.0, -0.0, -0.0}; /* the sign bits */
    size_t e = e0;
    const double *lak = s->lin_ak, *lbkd = s->lin_bkd;
    const unsigned char *kind = s->kind;
    for (; e + 4 <= e1; e += 4) {
        /* the lanes from registers (a lane written to memory and the
         * vector read back would wait on the store) */
        const double *a0 = x + 3 * (size_t)si[e], *b0 = x + 3 * (size_t)sj[e];
        const double *a1 = x + 3 * (size_t)si[e + 1], *b1 = x + 3 * (size_t)sj[e + 1];
        const double *a2 = x + 3 * (size_t)si[e + 2], *b2 = x + 3 * (size_t)sj[e + 2];
        const double *a3 = x + 3 * (size_t)si[e + 3], *b3 = x + 3 * (size_t)sj[e + 3];
        v4d d0 = {a0[0] - b0[0], a1[0] - b1[0], a2[0] - b2[0], a3[0] - b3[0]};
        v4d d1 = {a0[1] - b0[1], a1[1] - b1[1], a2[1] - b2[1], a3[1] - b3[1]};
        v4d d2 = {a0[2] - b0[2], a1[2] - b1[2], a2[2] - b2[2], a3[2] - b3[2]};
        v4d rest = LOAD4(s->rest + e);
        v4d ak = {lak[kind[e]], lak[kind[e + 1]], lak[kind[e + 2]], lak[kind[e + 3]]};
        v4d bkd = {lbkd[kind[e]], lbkd[kind[e + 1]], lbkd[kind[e + 2]], lbkd[kind[e + 3]]};
        v4d l = _mm256_sqrt_pd(d0 * d0 + d1 * d1 + d2 * d2);
        v4l ok = (v4l)(l > zero); /* else no term: q = g = 0 below */
        v4d inv = one / l;
        v4d c = one - rest * inv;
        if (s->lin_clamp)
            c = V4_PICK((v4l)(c < zero), zero, c);
        v4d p = ak * (one - c) + bkd, q = V4_PICK(ok, ak * c, zero);
        v4d t = _mm256_sqrt_pd((v4d)((v4l)p & ~sbit)) * inv;
        v4d g = V4_PICK(ok, (v4d)(((v4l)t & ~sbit) | ((v4l)p & sbit)), zero);
        if (!a->wcache) {
            lanes_store_qg(s->lin_coef, e, q, g);
            continue;
        }
        v4d m = a->sign ? g * sg : (v4d)((v4l)g & ~sbit);
        lanes_store_qw(s->lin_coef, e, q, (const v4d[3]){m * d0, m * d1, m * d2});
    }
    return e;
}

/* Whether linearize_range takes linearize_lanes (see lin_lanes) */
static int lanes_for(const ts_springs *s)
{
    if (!s->lin_coef || s->k || s->kd || !lin_lanes)
        return 0;
    return (lin_lanes > 0 || __builtin_cpu_is("amd")) && __builtin_cpu_supports("avx2");
}
#endif

/* per spring of [e0, e1): q and w (or g), else 1/l (springs_linearize) */
static void linearize_range(void *ctx, size_t e0, size_t e1)
{
    const lin_args *a = ctx;
    const ts_springs *s = a->s;
    const double *x = a->x;
    const uint32_t *si = s->si, *sj = s->sj;
    int sign = a->sign, wcache = a->wcache;
    double *coef = s->lin_coef, *linv = s->lin_inv;
#ifdef TS_SPRINGS_AVX2
    if (lanes_for(s))
        e0 = linearize_lanes(a, e0, e1);
#endif
    for (size_t e = e0; e < e1; e++) {
        const double *xi = x + 3 * (size_t)si[e], *xj = x + 3 * (size_t)sj[e];
        double d0 = xi[0] - xj[0], d1 = xi[1] - xj[1], d2 = xi[2] - xj[2];
        double l = sqrt(d0 * d0 + d1 * d1 + d2 * d2);
        double inv = l > 0.0 ? 1.0 / l : -1.0;
        if (!coef) {
            linv[e] = inv;
            continue;
        }
        if (wcache) { /* q and w */
            double *c = coef + 4 * e, g;
            spring_coef(s, e, inv, c, &g);
            spring_w(g, sign, xi, xj, c + 1);
        } else { /* q and g */
            spring_coef(s, e, inv, coef + 2 * e, coef + 2 * e + 1);
        }
    }
}

/* Keep the point, the coefficients and per spring, with the cache, q and
 * w (or g), else 1/l (-1 when l is not > 0) (tstep/springs.h). */
static int springs_linearize(ts_system *sys, double t, const double *x, const double *v,
                             double alpha, double beta)
{
    ts_springs *s = (ts_springs *)sys;
    (void)t, (void)v;
    size_t ns = s->ns;
    s->lin_x = x;
    s->lin_alpha = alpha;
    s->lin_beta = beta;
    for (int c = 0; c < TS_SPRING_KINDS; c++) {
        s->lin_ak[c] = alpha * s->kind_k[c];
        s->lin_bkd[c] = beta * s->kind_kd[c];
    }
    s->lin_wdrag = beta * s->opt.drag;
    s->lin_clamp = s->opt.clamp == TS_SPRINGS_CLAMP_ALWAYS ||
                   (s->opt.clamp == TS_SPRINGS_CLAMP_AUTO && sys->definite_fix);
    int sign = alpha >= 0.0 && beta >= 0.0 ? 1 : alpha <= 0.0 && beta <= 0.0 ? -1 : 0;
    s->lin_sign = sign;
    s->lin_wcache = coef_keeps_w(s, sign);
    int wcache = s->lin_wcache;
    lin_args g = {s, x, sign, wcache};
    TS_PARALLEL(ns >= ts_threads_min() / 2, ns, linearize_range, &g);
    return TS_OK;
}

static void product_init(const ts_springs *s, size_t p0, size_t p1, const spring_args *a)
{
    const double *m = s->base.mass, *u = a->u;
    double wd = s->lin_wdrag, *out = a->out;
    /* out is neither m nor u (omp simd: vectorized, each entry's
     * arithmetic unchanged) */
    if (a->shifted) { /* M u + wd M u, the springs' share subtracted below */
#pragma omp simd
        for (size_t q = 3 * p0; q < 3 * p1; q++)
            out[q] = m[q] * u[q] + wd * m[q] * u[q];
    } else {
#pragma omp simd
        for (size_t q = 3 * p0; q < 3 * p1; q++)
            out[q] = -wd * m[q] * u[q];
    }
}

typedef struct {
    int mode; /* what the cache holds (COEF_*) */
    int sign; /* every g's sign, 0: mixed */
    int neg;  /* 1: M u - J u, the springs' share subtracted */
    int simd; /* 1: x y z in one 256-bit vector (product_range4) */
} product_case;

/* Prefetch, at the first spring e of a particle, what the springs a few
 * particles on read: x, u and out of the particle PREFETCH_AHEAD beyond the
 * second particle of spring e + PREFETCH_AHEAD (on a cloth, the farthest
 * row's), and the two cache lines of entries PREFETCH_CACHE springs on (a
 * particle's six springs take 96 bytes of the narrow cache).  Without it
 * the loop waits on them; the entries' stream, read in order, is still
 * worth prefetching this far ahead of the hardware's own (docs/performance.md,
 * Kernels).  Clamped to the arrays. */
#define PREFETCH_AHEAD 16
#define PREFETCH_CACHE 256
static inline __attribute__((always_inline)) void
product_prefetch(const ts_springs *s, size_t e, size_t e1, const spring_args *a, int mode)
{
    size_t ep = e + PREFETCH_AHEAD < e1 ? e + PREFETCH_AHEAD : e1 - 1;
    size_t p = (size_t)s->sj[ep] + PREFETCH_AHEAD, j = 3 * (p < s->np ? p : s->np - 1);
    __builtin_prefetch(a->u + j);
    __builtin_prefetch(a->out + j, 1);
    if (mode != COEF_QW)
        __builtin_prefetch(s->lin_x + j);
    if (mode != COEF_NONE) {
        size_t width = mode == COEF_QW ? 4 : 2;
        size_t f = e + PREFETCH_CACHE < s->ns ? e + PREFETCH_CACHE : e;
        size_t c = width * f, c2 = c + 8 < width * s->ns ? c + 8 : c;
        __builtin_prefetch(s->lin_coef + c);
        __builtin_prefetch(s->lin_coef + c2);
    }
}

/* out_i -= B (u_i - u_j), out_j += B (u_i - u_j) (with neg the other way
 * round: out_i += B (u_i - u_j), out_j -= B (u_i - u_j)); pc's mode, sign
 * and neg constants where this is inlined, so that each case compiles to its
 * own loop (mode and sign as in spring_qw, whose arithmetic this repeats
 * with x_i kept in registers).  B d = q d + (sign(g) w . d)
 * w, x and y in one v2d (on the 300^2 and 1000^2 cloths 14% and 9% less
 * time than three scalar components: docs/performance.md). */
static inline __attribute__((always_inline)) void
product_range(const ts_springs *s, size_t e0, size_t e1, const spring_args *a, product_case pc)
{
    const int mode = pc.mode, sign = pc.sign, neg = pc.neg;
    const uint32_t *si = s->si, *sj = s->sj;
    const double *x = s->lin_x, *u = a->u;
    double *out = a->out;
    size_t e = e0;
    while (e < e1) {
        size_t i = 3 * (size_t)si[e];
        product_prefetch(s, e, e1, a, mode);
        v2d uxy = load2(u + i), axy = {0.0, 0.0}, xixy = load2(x + i);
        double uz = u[i + 2], az = 0.0, xiz = x[i + 2];
        for (; e < e1 && 3 * (size_t)si[e] == i; e++) {
            size_t j = 3 * (size_t)sj[e];
            double q, sg, wz;
            v2d wxy;
            if (mode == COEF_QW) {
                const double *c = s->lin_coef + 4 * e;
                q = c[0], wxy = load2(c + 1), wz = c[3], sg = sign;
            } else { /* spring_qw's arithmetic, x_i kept in registers */
                double g;
                if (mode == COEF_QG)
                    q = s->lin_coef[2 * e], g = s->lin_coef[2 * e + 1];
                else
                    spring_coef(s, e, s->lin_inv[e], &q, &g);
                double m = sign ? g * sign : fabs(g);
                v2d mm = {m, m};
                wxy = mm * (xixy - load2(x + j)), wz = m * (xiz - x[j + 2]);
                sg = sign ? sign : copysign(1.0, g);
            }
            v2d dxy = uxy - load2(u + j), pxy = wxy * dxy;
            double dz = uz - u[j + 2], c = (pxy[0] + pxy[1]) + wz * dz, yz;
            if (!sign)
                c = sg * c;
            v2d qq = {q, q}, cc = {c, c}, yxy;
            if (sign < 0) /* q d + (-c) w, the same bits */
                yxy = qq * dxy - cc * wxy, yz = q * dz - c * wz;
            else
                yxy = qq * dxy + cc * wxy, yz = q * dz + c * wz;
            if (neg) {
                axy += yxy, az += yz;
                store2(out + j, load2(out + j) - yxy);
                out[j + 2] -= yz;
            } else {
                axy -= yxy, az -= yz;
                store2(out + j, load2(out + j) + yxy);
                out[j + 2] += yz;
            }
        }
        store2(out + i, load2(out + i) + axy);
        out[i + 2] += az;
    }
}

#ifdef TS_SPRINGS_AVX2
/* product_range with x y z in one v4d (the fourth lane's number, loaded
 * with them, never stored): lane by lane the same operations, the same
 * bits.  Only for springs whose second particle is not the last one, so
 * that the 32-byte loads stay inside x and u. */
static inline __attribute__((always_inline)) void
product_range4(const ts_springs *s, size_t e0, size_t e1, const spring_args *a, product_case pc)
{
    const int mode = pc.mode, sign = pc.sign;
    const uint32_t *si = s->si, *sj = s->sj;
    const double *x = s->lin_x, *u = a->u, *coef = s->lin_coef;
    double *out = a->out;
    size_t e = e0;
    while (e < e1) {
        size_t i = 3 * (size_t)si[e];
        product_prefetch(s, e, e1, a, mode);
        v4d ui = LOAD4(u + i), xi = LOAD4(x + i), acc = {0.0, 0.0, 0.0, 0.0};
        for (; e < e1 && 3 * (size_t)si[e] == i; e++) {
            size_t j = 3 * (size_t)sj[e];
            double q, sg = sign;
            v4d w;
            if (mode == COEF_QW) {
                v4d c = LOAD4(coef + 4 * e);
                q = c[0], w = __builtin_shufflevector(c, c, 1, 2, 3, 3);
            } else { /* spring_qw's arithmetic, x_i kept in registers */
                double g;
                if (mode == COEF_QG)
                    q = coef[2 * e], g = coef[2 * e + 1];
                else
                    spring_coef(s, e, s->lin_inv[e], &q, &g);
                double m = sign ? g * sign : fabs(g);
                w = m * (xi - LOAD4(x + j));
                sg = sign ? sign : copysign(1.0, g);
            }
            v4d d = ui - LOAD4(u + j), p = w * d, y;
            double c = (p[0] + p[1]) + p[2];
            if (!sign)
                c = sg * c;
            if (sign < 0) /* q d + (-c) w, the same bits */
                y = q * d - c * w;
            else
                y = q * d + c * w;
            v2d yxy = {y[0], y[1]};
            if (pc.neg) {
                acc += y;
                store2(out + j, load2(out + j) - yxy);
                out[j + 2] -= y[2];
            } else {
                acc -= y;
                store2(out + j, load2(out + j) + yxy);
                out[j + 2] += y[2];
            }
        }
        store2(out + i, load2(out + i) + (v2d){acc[0], acc[1]});
        out[i + 2] += acc[2];
    }
}
#endif

/* product_range, with simd product_range4 up to the first particle whose
 * springs may reach the last one (springs are sorted by first particle) */
static inline __attribute__((always_inline)) void
product_split(const ts_springs *s, size_t e0, size_t e1, const spring_args *a, product_case pc)
{
#ifdef TS_SPRINGS_AVX2
    if (pc.simd) {
        size_t eg = e1;
        while (eg > e0 && s->si[eg - 1] + s->chunk_np + 1 >= s->np)
            eg--;
        product_range4(s, e0, eg, a, pc);
        e0 = eg;
    }
#endif
    product_range(s, e0, e1, a, pc);
}

/* product_range's case for the cache and the sign, neg and simd constants */
static inline __attribute__((always_inline)) void
product_cases(const ts_springs *s, size_t e0, size_t e1, const spring_args *a, int neg, int simd)
{
    int mode = coef_mode(s), sign = s->lin_sign;
    if (mode == COEF_QW && sign > 0)
        product_split(s, e0, e1, a, (product_case){COEF_QW, 1, neg, simd});
    else if (mode == COEF_QW)
        product_split(s, e0, e1, a, (product_case){COEF_QW, -1, neg, simd});
    else if (mode == COEF_QG && sign > 0)
        product_split(s, e0, e1, a, (product_case){COEF_QG, 1, neg, simd});
    else if (mode == COEF_QG && sign < 0)
        product_split(s, e0, e1, a, (product_case){COEF_QG, -1, neg, simd});
    else if (mode == COEF_QG)
        product_split(s, e0, e1, a, (product_case){COEF_QG, 0, neg, simd});
    else if (sign > 0)
        product_split(s, e0, e1, a, (product_case){COEF_NONE, 1, neg, simd});
    else if (sign < 0)
        product_split(s, e0, e1, a, (product_case){COEF_NONE, -1, neg, simd});
    else
        product_split(s, e0, e1, a, (product_case){COEF_NONE, 0, neg, simd});
}

static void product_springs(const ts_springs *s, size_t e0, size_t e1, const spring_args *a)
{
    product_cases(s, e0, e1, a, 0, 0);
}

/* the same for M u - J u: the springs' share subtracted */
static void product_springs_neg(const ts_springs *s, size_t e0, size_t e1,
                                const spring_args *a)
{
    product_cases(s, e0, e1, a, 1, 0);
}

#ifdef TS_SPRINGS_AVX2
/* the same with product_range4, compiled for AVX2 (no FMA: each operation
 * rounds as in the loops above) */
__attribute__((target("avx2"))) static void
product_springs_avx2(const ts_springs *s, size_t e0, size_t e1, const spring_args *a)
{
    product_cases(s, e0, e1, a, 0, 1);
}

__attribute__((target("avx2"))) static void
product_springs_neg_avx2(const ts_springs *s, size_t e0, size_t e1, const spring_args *a)
{
    product_cases(s, e0, e1, a, 1, 1);
}
#endif

/* the product's spring loop for this processor, M u - J u with neg */
static spring_fn product_kernel(int neg)
{
#ifdef TS_SPRINGS_AVX2
    if (__builtin_cpu_supports("avx2"))
        return neg ? product_springs_neg_avx2 : product_springs_avx2;
#endif
    return neg ? product_springs_neg : product_springs;
}

int ts_springs_shifted_mul(ts_system *sys, const double *u, double *out)
{
    ts_springs *s = (ts_springs *)sys; /* a spring network: its ops, or a copy of them */
    spring_args a = {.u = u, .out = out, .shifted = 1};
    sys->jacobian_products++;
    if (!s->lin_x) { /* not linearized yet: M u */
        for (size_t i = 0; i < sys->n; i++)
            out[i] = sys->mass[i] * u[i];
        return TS_OK;
    }
    run_chunks(s, product_init, product_kernel(1), &a);
    return TS_OK;
}

/* out = (alpha df/dx + beta df/dv) u at the last linearization */
static int springs_jacobian_mul(ts_system *sys, const double *u, double *out)
{
    ts_springs *s = (ts_springs *)sys;
    spring_args a = {.u = u, .out = out};
    if (!s->lin_x) { /* not linearized yet: no term */
        ts_vec_zero(sys->n, out);
        return TS_OK;
    }
    run_chunks(s, product_init, product_kernel(0), &a);
    return TS_OK;
}

static void diag_init(const ts_springs *s, size_t p0, size_t p1, const spring_args *a)
{
    for (size_t q = 3 * p0; q < 3 * p1; q++)
        a->out[q] = -s->lin_wdrag * s->base.mass[q];
}

static inline __attribute__((always_inline)) void
diag_range(const ts_springs *s, size_t e0, size_t e1, const spring_args *a, int mode, int sign)
{
    for (size_t e = e0; e < e1; e++) {
        double b[6];
        block_of(s, e, mode, sign, 1, b);
        double *di = a->out + 3 * (size_t)s->si[e], *dj = a->out + 3 * (size_t)s->sj[e];
        di[0] -= b[0], di[1] -= b[3], di[2] -= b[5];
        dj[0] -= b[0], dj[1] -= b[3], dj[2] -= b[5];
    }
}

/* diag_range's case for the cache and the sign, as product_cases */
static void diag_springs(const ts_springs *s, size_t e0, size_t e1, const spring_args *a)
{
    int mode = coef_mode(s), sign = s->lin_sign;
    if (!s->lin_x) /* not linearized yet: no spring term */
        return;
    if (mode == COEF_QW && sign > 0)
        diag_range(s, e0, e1, a, COEF_QW, 1);
    else if (mode == COEF_QW)
        diag_range(s, e0, e1, a, COEF_QW, -1);
    else if (mode == COEF_QG && sign > 0)
        diag_range(s, e0, e1, a, COEF_QG, 1);
    else if (mode == COEF_QG && sign < 0)
        diag_range(s, e0, e1, a, COEF_QG, -1);
    else /* mixed signs, or no cache: not on a hot path */
        diag_range(s, e0, e1, a, mode, sign);
}

/* diagonal of (alpha df/dx + beta df/dv) at the last linearization */
static int springs_jacobian_diag(ts_system *sys, double *diag)
{
    spring_args a = {.out = diag};
    run_chunks((ts_springs *)sys, diag_init, diag_springs, &a);
    return TS_OK;
}

/* --- the assembled fast path (tstep/linsolve.h) ------------------------------- */

/* J = alpha df/dx + beta df/dv of the fast path: J_ii = -beta c m_i I - sum
 * of B over i's springs, J_ij = +B for a spring (i, j). */

/* J's diagonal 3x3 blocks, row-major, 9 per particle */
static int springs_jacobian_block_diag(ts_system *sys, double *blocks)
{
    ts_springs *s = (ts_springs *)sys;
    ts_vec_zero(9 * s->np, blocks);
    for (size_t p = 0; p < s->np; p++)
        for (int a = 0; a < 3; a++)
            blocks[9 * p + 4 * a] = -s->lin_wdrag * sys->mass[3 * p + a];
    static const int full[9] = {0, 1, 2, 1, 3, 4, 2, 4, 5}; /* 3x3 from xx xy xz yy yz zz */
    for (size_t e = 0; e < s->ns; e++) {
        double b[6];
        ts_springs_block(s, e, b);
        double *bi = blocks + 9 * (size_t)s->si[e], *bj = blocks + 9 * (size_t)s->sj[e];
        for (int a = 0; a < 9; a++)
            bi[a] -= b[full[a]], bj[a] -= b[full[a]];
    }
    return TS_OK;
}

/* J's lower triangle as triplets: first each particle's diagonal block
 * (6 entries: 00 10 11 20 21 22), then per spring (i < j) the block at
 * rows of j, columns of i (9 entries, row-major). */
static int springs_jacobian_triplets(ts_system *sys, size_t *count, size_t *row, size_t *col,
                                     double *val)
{
    ts_springs *s = (ts_springs *)sys;
    static const int ra[6] = {0, 1, 1, 2, 2, 2}, cb[6] = {0, 0, 1, 0, 1, 2};
    static const int low[6] = {0, 1, 3, 2, 4, 5}; /* those entries in xx xy xz yy yz zz */
    static const int full[9] = {0, 1, 2, 1, 3, 4, 2, 4, 5};
    size_t np = s->np;
    *count = 6 * np + 9 * s->ns;
    if (row || col)
        for (size_t p = 0; p < np; p++)
            for (int k = 0; k < 6; k++) {
                if (row)
                    row[6 * p + k] = 3 * p + (size_t)ra[k];
                if (col)
                    col[6 * p + k] = 3 * p + (size_t)cb[k];
            }
    if (row || col)
        for (size_t e = 0; e < s->ns; e++)
            for (int k = 0; k < 9; k++) {
                size_t t = 6 * np + 9 * e + (size_t)k;
                if (row)
                    row[t] = 3 * (size_t)s->sj[e] + (size_t)(k / 3);
                if (col)
                    col[t] = 3 * (size_t)s->si[e] + (size_t)(k % 3);
            }
    if (!val)
        return TS_OK;
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < 6; k++)
            val[6 * p + k] = ra[k] == cb[k] ? -s->lin_wdrag * sys->mass[3 * p + ra[k]] : 0.0;
    for (size_t e = 0; e < s->ns; e++) {
        double b[6];
        ts_springs_block(s, e, b);
        double *vi = val + 6 * (size_t)s->si[e], *vj = val + 6 * (size_t)s->sj[e];
        for (int k = 0; k < 6; k++)
            vi[k] -= b[low[k]], vj[k] -= b[low[k]];
        double *vo = val + 6 * np + 9 * e;
        for (int k = 0; k < 9; k++)
            vo[k] = b[full[k]];
    }
    return TS_OK;
}

/* --- energy, momentum, strain ---------------------------------------------------- */

static int springs_energy(ts_system *sys, double t, const double *x, const double *v,
                          double *kinetic, double *potential)
{
    ts_springs *s = (ts_springs *)sys;
    double ke = 0.0, pe = 0.0;
    (void)t;
    for (size_t q = 0; q < sys->n; q++)
        ke += 0.5 * sys->mass[q] * v[q] * v[q];
    for (size_t p = 0; p < s->np; p++)
        pe += sys->mass[3 * p + 1] * s->opt.gravity * x[3 * p + 1];
    for (size_t e = 0; e < s->ns; e++) {
        double ext = spring_length(x, s->si[e], s->sj[e]) - s->rest[e];
        pe += 0.5 * ts_springs_k(s, e) * ext * ext;
    }
    *kinetic = ke;
    *potential = pe;
    return TS_OK;
}

static int springs_momentum(ts_system *sys, const double *x, const double *v, double p[3])
{
    (void)x;
    p[0] = p[1] = p[2] = 0.0;
    for (size_t q = 0; q < sys->n; q++)
        p[q % 3] += sys->mass[q] * v[q];
    return TS_OK;
}

/* max over springs of |l_new - l_old| / L */
static double springs_max_strain_change(ts_system *sys, const double *x_old,
                                        const double *x_new)
{
    ts_springs *s = (ts_springs *)sys;
    double worst = 0.0;
    for (size_t e = 0; e < s->ns; e++) {
        double l0 = spring_length(x_old, s->si[e], s->sj[e]);
        double l1 = spring_length(x_new, s->si[e], s->sj[e]);
        double r = fabs(l1 - l0) / s->rest[e];
        if (r > worst || r != r)
            worst = r;
    }
    return worst;
}

/* --- post-step projections ------------------------------------------------------- */

static int is_pinned(const ts_springs *s, size_t p)
{
    return s->base.pinned && s->base.pinned[3 * p];
}

/* One Provot pass; returns how many springs were over the limit. */
static size_t strain_limit_pass(ts_springs *s, double *x, double *v)
{
    size_t over = 0;
    for (size_t e = 0; e < s->ns; e++) {
        if (!(s->strain_kinds & (1u << s->kind[e])))
            continue;
        uint32_t i = s->si[e], j = s->sj[e];
        double d[3], n[3], u[3];
        double l = spring_axis(x, i, j, d, n), lmax = (1.0 + s->strain_max) * s->rest[e];
        if (!(l > lmax * (1.0 + 1e-12)))
            continue;
        double wi = is_pinned(s, i) ? 0.0 : 1.0 / s->base.mass[3 * (size_t)i];
        double wj = is_pinned(s, j) ? 0.0 : 1.0 / s->base.mass[3 * (size_t)j];
        if (wi + wj == 0.0)
            continue;
        over++;
        double *xi = x + 3 * (size_t)i, *xj = x + 3 * (size_t)j;
        double *vi = v + 3 * (size_t)i, *vj = v + 3 * (size_t)j;
        /* pull the ends together by l - lmax, split by inverse mass */
        double corr = (l - lmax) / (wi + wj);
        sub3(vi, vj, u);
        double sep = dot3(n, u) / (wi + wj); /* separating speed, mass-weighted */
        for (int a = 0; a < 3; a++) {
            xi[a] -= wi * corr * n[a];
            xj[a] += wj * corr * n[a];
            if (sep > 0.0) {
                vi[a] -= wi * sep * n[a];
                vj[a] += wj * sep * n[a];
            }
        }
    }
    return over;
}

static void sphere_project(ts_springs *s, double *x, double *v)
{
    const double *c = s->sphere_c;
    double r = s->sphere_r;
    for (size_t p = 0; p < s->np; p++) {
        if (is_pinned(s, p))
            continue;
        double *xp = x + 3 * p, *vp = v + 3 * p, d[3];
        sub3(xp, c, d);
        double dist = sqrt(dot3(d, d));
        if (!(dist < r))
            continue;
        double n[3] = {0.0, 1.0, 0.0}; /* at the centre exactly: push up */
        if (dist > 0.0)
            n[0] = d[0] / dist, n[1] = d[1] / dist, n[2] = d[2] / dist;
        double vn = dot3(vp, n);
        for (int a = 0; a < 3; a++) {
            xp[a] = c[a] + r * n[a];
            if (vn < 0.0)
                vp[a] -= vn * n[a];
        }
    }
}

static int springs_post_step(ts_system *sys, double t, double *x, double *v)
{
    ts_springs *s = (ts_springs *)sys;
    (void)t;
    if (s->strain_max > 0.0 && s->strain_kinds)
        for (int pass = 0; pass < TS_SPRINGS_STRAIN_PASSES; pass++)
            if (strain_limit_pass(s, x, v) == 0)
                break;
    if (s->sphere_r > 0.0)
        sphere_project(s, x, v);
    return TS_OK;
}

static void springs_edge_block(const ts_system *sys, size_t e, double b[6])
{
    ts_springs_block((const ts_springs *)sys, e, b);
}

/* The network as blocks on a graph (ts_system_blocks): its springs are the
 * edges, the drag the particles' own term. */
static int springs_blocks(ts_system *sys, ts_system_blocks *out)
{
    const ts_springs *s = (const ts_springs *)sys;
    *out = (ts_system_blocks){.np = s->np, .ne = s->ns, .i = s->si, .j = s->sj,
                              .bandwidth = ts_springs_bandwidth(s), .self = -s->lin_wdrag,
                              .block = springs_edge_block};
    return TS_OK;
}

static const ts_system_ops springs_ops = {
    .destroy = springs_destroy,
    .forces = springs_forces,
    .dfdx_mul = springs_dfdx_mul,
    .dfdv_mul = springs_dfdv_mul,
    .linearize = springs_linearize,
    .jacobian_mul = springs_jacobian_mul,
    .jacobian_diag = springs_jacobian_diag,
    .jacobian_block_diag = springs_jacobian_block_diag,
    .jacobian_triplets = springs_jacobian_triplets,
    .energy = springs_energy,
    .momentum = springs_momentum,
    .post_step = springs_post_step,
    .max_strain_change = springs_max_strain_change,
    .blocks = springs_blocks,
    .shifted_mul = ts_springs_shifted_mul,
};

double ts_springs_memory_estimate(size_t np, size_t ns)
{
    return TS_SPRINGS_BYTES_PER_PARTICLE * (double)np + TS_SPRINGS_BYTES_PER_SPRING * (double)ns;
}

int ts_springs_check_memory(const char *what, size_t np, size_t ns)
{
    double need = ts_springs_memory_estimate(np, ns), have = ts_memory_physical();
    if (have > 0.0 && need > have)
        return ts_error(TS_ERR_INPUT,
                        "%s needs about %.3g GB (%zu particles, %zu springs), more than this "
                        "machine's %.3g GB of memory (see 'tstep list' for the limits)",
                        what, need / 1e9, np, ns, have / 1e9);
    return TS_OK;
}

/* The Wavefront OBJ reader of tstep/obj.h: v and f lines, fan
 * triangulation, errors naming the file and line.  Format reference: the
 * Wavefront "Object Files (.obj)" specification, Appendix B1 of the
 * Advanced Visualizer manual. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tstep/obj.h"
#include "tstep/status.h"

typedef struct {
    const char *path;
    long line;
    ts_obj_mesh *mesh;
    size_t vcap, tcap;
    long *corner; /* the current face's vertex indices (from 0) */
    size_t ccap;
    long *vline;  /* the line of each vertex */
    long *stamp;  /* per vertex: the last face that used it (from 1), 0 none */
    size_t lcap, scap;
    long faces;   /* faces read */
} obj_reader;

static int grow(void **array, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return TS_OK;
    size_t cap2 = *cap ? *cap : 16;
    while (cap2 < need)
        cap2 *= 2;
    void *p = realloc(*array, cap2 * size);
    if (!p)
        return ts_error(TS_ERR_NOMEM, "OBJ mesh of %zu elements", cap2);
    *array = p;
    *cap = cap2;
    return TS_OK;
}

static const char *const space = " \t\r\n\f\v";

/* v x y z [more numbers] */
static int read_vertex(obj_reader *r, char *rest)
{
    ts_obj_mesh *m = r->mesh;
    double c[3];
    int count = 0;
    char *save = NULL;
    for (char *tok = strtok_r(rest, space, &save); tok; tok = strtok_r(NULL, space, &save)) {
        char *end;
        errno = 0;
        double x = strtod(tok, &end);
        if (end == tok || *end != '\0' || errno == ERANGE || !isfinite(x))
            return ts_error(TS_ERR_INPUT, "%s:%ld: vertex coordinate '%s' is not a finite number",
                            r->path, r->line, tok);
        if (count < 3)
            c[count] = x;
        count++;
    }
    if (count < 3)
        return ts_error(TS_ERR_INPUT, "%s:%ld: vertex has %d coordinates, needs 3", r->path,
                        r->line, count);
    void *v = m->verts, *l = r->vline, *st = r->stamp;
    int s = grow(&v, &r->vcap, 3 * (m->nverts + 1), sizeof *m->verts);
    m->verts = v;
    if (!s)
        s = grow(&l, &r->lcap, m->nverts + 1, sizeof *r->vline);
    r->vline = l;
    if (!s)
        s = grow(&st, &r->scap, m->nverts + 1, sizeof *r->stamp);
    r->stamp = st;
    if (s)
        return s;
    r->vline[m->nverts] = r->line;
    r->stamp[m->nverts] = 0;
    memcpy(m->verts + 3 * m->nverts, c, sizeof c);
    m->nverts++;
    return TS_OK;
}

/* An optional whole number at *p (advances past it); 0 if malformed. */
static int skip_int(const char **p)
{
    const char *q = *p;
    if (*q == '-' || *q == '+')
        q++;
    if (*q < '0' || *q > '9')
        return 0;
    while (*q >= '0' && *q <= '9')
        q++;
    *p = q;
    return 1;
}

/* A face corner i, i/t, i//n or i/t/n: the vertex index, from 0. */
static int read_corner(obj_reader *r, const char *tok, long *index)
{
    const char *p = tok;
    if (!skip_int(&p) || (*p != '\0' && *p != '/'))
        return ts_error(TS_ERR_INPUT, "%s:%ld: face corner '%s' is not i, i/t, i//n or i/t/n",
                        r->path, r->line, tok);
    long i = strtol(tok, NULL, 10);
    for (int part = 0; part < 2 && *p == '/'; part++) {
        p++;
        if (*p != '/' && *p != '\0' && !skip_int(&p))
            break;
    }
    if (*p != '\0')
        return ts_error(TS_ERR_INPUT, "%s:%ld: face corner '%s' is not i, i/t, i//n or i/t/n",
                        r->path, r->line, tok);
    long nv = (long)r->mesh->nverts;
    long k = i > 0 ? i - 1 : nv + i;
    if (i == 0 || k < 0 || k >= nv)
        return ts_error(TS_ERR_INPUT,
                        "%s:%ld: vertex index %ld out of range (%ld vertices defined so far)",
                        r->path, r->line, i, nv);
    *index = k;
    return TS_OK;
}

/* twice the area of triangle (a, b, c) relative to the product of two sides:
 * the sine of the angle at a (0 when degenerate) */
static int triangle_degenerate(const double *v, long a, long b, long c)
{
    double e1[3], e2[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = v[3 * b + k] - v[3 * a + k];
        e2[k] = v[3 * c + k] - v[3 * a + k];
    }
    double cr[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                    e1[0] * e2[1] - e1[1] * e2[0]};
    double area2 = sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
    double l1 = sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
    double l2 = sqrt(e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2]);
    return !(area2 > 1e-12 * l1 * l2);
}

/* f c1 c2 c3 [...] */
static int read_face(obj_reader *r, char *rest)
{
    ts_obj_mesh *m = r->mesh;
    size_t nc = 0;
    int s;
    char *save = NULL;
    for (char *tok = strtok_r(rest, space, &save); tok; tok = strtok_r(NULL, space, &save)) {
        void *c = r->corner;
        s = grow(&c, &r->ccap, nc + 1, sizeof *r->corner);
        r->corner = c;
        if (s || (s = read_corner(r, tok, &r->corner[nc])))
            return s;
        nc++;
    }
    if (nc < 3)
        return ts_error(TS_ERR_INPUT, "%s:%ld: face has %zu vertices, needs at least 3",
                        r->path, r->line, nc);
    /* a repeated corner: each vertex stamped with this face's number */
    r->faces++;
    for (size_t a = 0; a < nc; a++) {
        if (r->stamp[r->corner[a]] == r->faces)
            return ts_error(TS_ERR_INPUT, "%s:%ld: degenerate face: vertex %ld repeated",
                            r->path, r->line, r->corner[a] + 1);
        r->stamp[r->corner[a]] = r->faces;
    }
    void *t = m->tris;
    s = grow(&t, &r->tcap, 3 * (m->ntris + nc - 2), sizeof *m->tris);
    m->tris = t;
    if (s)
        return s;
    for (size_t k = 1; k + 1 < nc; k++) {
        long a = r->corner[0], b = r->corner[k], c = r->corner[k + 1];
        if (triangle_degenerate(m->verts, a, b, c))
            return ts_error(TS_ERR_INPUT,
                            "%s:%ld: degenerate face: triangle (%ld %ld %ld) has zero area",
                            r->path, r->line, a + 1, b + 1, c + 1);
        size_t *tri = m->tris + 3 * m->ntris++;
        tri[0] = (size_t)a, tri[1] = (size_t)b, tri[2] = (size_t)c;
    }
    return TS_OK;
}

/* One line into *buf (grown as needed, at most TS_OBJ_MAX_LINE bytes and
 * its newline, NUL terminated); *got 0 at the end of the file.  Returns a
 * status. */
static int read_line(obj_reader *r, FILE *f, char **buf, size_t *cap, long *total, int *got)
{
    *got = 0;
    size_t len = 0;
    int c;
    errno = 0;
    while ((c = getc(f)) != EOF) {
        if (++*total > TS_OBJ_MAX_BYTES)
            return ts_error(TS_ERR_INPUT, "%s:%ld: the file is larger than %ld MB", r->path,
                            r->line + 1, TS_OBJ_MAX_BYTES >> 20);
        if (c == '\0')
            return ts_error(TS_ERR_INPUT, "%s:%ld: a NUL byte: not a text file", r->path,
                            r->line + 1);
        if (c == '\n')
            break;
        if (len == TS_OBJ_MAX_LINE)
            return ts_error(TS_ERR_INPUT, "%s:%ld: line longer than %d bytes", r->path,
                            r->line + 1, TS_OBJ_MAX_LINE);
        if (len + 1 >= *cap) {
            void *b = *buf;
            int s = grow(&b, cap, len + 2, 1);
            *buf = b;
            if (s)
                return s;
        }
        (*buf)[len++] = (char)c;
    }
    if (c == EOF && ferror(f))
        return ts_error(TS_ERR_IO, "%s:%ld: read error: %s", r->path, r->line + 1,
                        strerror(errno ? errno : EIO));
    if (!*buf) {
        void *b = NULL;
        int s = grow(&b, cap, 1, 1);
        if (s)
            return s;
        *buf = b;
    }
    (*buf)[len] = '\0';
    if (c == EOF && len == 0)
        return TS_OK;
    r->line++;
    *got = 1;
    return TS_OK;
}

typedef struct {
    double p[3];
    long index;
} sorted_vertex;

/* by position, then by index: coincident vertices end up side by side */
static int cmp_vertex(const void *a, const void *b)
{
    const sorted_vertex *u = a, *w = b;
    for (int k = 0; k < 3; k++)
        if (u->p[k] != w->p[k])
            return u->p[k] < w->p[k] ? -1 : 1;
    return (u->index > w->index) - (u->index < w->index);
}

/* Every vertex in some face, and no two at one point (a spring of rest
 * length 0): sorted by position, so O(n log n). */
static int check_vertices(obj_reader *r)
{
    ts_obj_mesh *m = r->mesh;
    long unused = 0, first = -1;
    for (size_t i = 0; i < m->nverts; i++)
        if (r->stamp[i] == 0 && unused++ == 0)
            first = (long)i;
    if (unused)
        return ts_error(TS_ERR_INPUT,
                        "%s:%ld: vertex %ld is used by no face (%ld such vertices): it would be "
                        "a particle without springs; delete it",
                        r->path, r->vline[first], first + 1, unused);
    sorted_vertex *order = malloc(m->nverts * sizeof *order);
    if (!order)
        return ts_error(TS_ERR_NOMEM, "%s: %zu vertices", r->path, m->nverts);
    for (size_t i = 0; i < m->nverts; i++) {
        memcpy(order[i].p, m->verts + 3 * i, sizeof order[i].p);
        order[i].index = (long)i;
    }
    qsort(order, m->nverts, sizeof *order, cmp_vertex);
    int s = TS_OK;
    for (size_t i = 1; i < m->nverts && !s; i++) {
        const double *q = order[i].p;
        if (order[i - 1].p[0] == q[0] && order[i - 1].p[1] == q[1] && order[i - 1].p[2] == q[2]) {
            long a = order[i - 1].index, b = order[i].index;
            s = ts_error(TS_ERR_INPUT,
                         "%s:%ld: vertex %ld is at the same point (%g, %g, %g) as vertex %ld "
                         "(line %ld): merge them",
                         r->path, r->vline[b], b + 1, q[0], q[1], q[2], a + 1, r->vline[a]);
        }
    }
    free(order);
    return s;
}

int ts_obj_load(const char *path, ts_obj_mesh **out)
{
    *out = NULL;
    obj_reader r = {.path = path};
    char *buf = NULL;
    size_t bufcap = 0;
    long total = 0;
    int s = TS_OK, got;
    FILE *f = fopen(path, "r");
    if (!f)
        return ts_error(TS_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && (S_ISDIR(sb.st_mode) || S_ISCHR(sb.st_mode) ||
                                       S_ISBLK(sb.st_mode))) {
        fclose(f);
        return ts_error(TS_ERR_INPUT, "%s: %s, not an OBJ file", path,
                        S_ISDIR(sb.st_mode) ? "a directory" : "a device");
    }
    r.mesh = calloc(1, sizeof *r.mesh);
    if (!r.mesh) {
        s = ts_error(TS_ERR_NOMEM, "%s: OBJ mesh", path);
        goto fail;
    }
    while (!(s = read_line(&r, f, &buf, &bufcap, &total, &got)) && got) {
        char *p = buf + strspn(buf, space);
        size_t kw = strcspn(p, space);
        if (kw == 1 && p[0] == 'v')
            s = read_vertex(&r, p + 1);
        else if (kw == 1 && p[0] == 'f')
            s = read_face(&r, p + 1);
        if (s)
            goto fail;
    }
    if (s)
        goto fail;
    if (r.mesh->ntris == 0) {
        s = ts_error(TS_ERR_INPUT, "%s:%ld: no faces in the file", path, r.line);
        goto fail;
    }
    if ((s = check_vertices(&r)))
        goto fail;
    free(buf);
    free(r.corner);
    free(r.vline);
    free(r.stamp);
    fclose(f);
    *out = r.mesh;
    return TS_OK;
fail:
    free(buf);
    free(r.corner);
    free(r.vline);
    free(r.stamp);
    fclose(f);
    ts_obj_free(r.mesh);
    return s;
}

void ts_obj_free(ts_obj_mesh *mesh)
{
    if (!mesh)
        return;
    free(mesh->verts);
    free(mesh->tris);
    free(mesh);
}

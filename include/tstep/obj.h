/* tstep/obj.h - a small Wavefront OBJ reader for mesh cloth.
 *
 * Reads `v x y z` (further numbers on the line, such as w or a colour, are
 * ignored) and `f a b c ...` lines; a face corner may be written i, i/t,
 * i//n or i/t/n, and only the vertex index i is used.  Indices count from 1
 * in the order vertices appear; a negative index counts back from the last
 * vertex read so far (-1 is the latest).  A face must only name vertices
 * defined above it.  Polygons are split into a fan of triangles
 * (a b c), (a c d), ...  Comments (#), blank lines and every other keyword
 * (vt, vn, o, g, s, usemtl, mtllib, l, ...) are skipped.
 *
 * Rejected with TS_ERR_INPUT and a message "FILE:LINE: what" (read back
 * with ts_error_detail()): a file that cannot be opened (no line number), a
 * malformed v or f line, an index of 0 or out of range, a face with fewer
 * than three corners, a degenerate face (a repeated vertex, or a triangle
 * of zero area), a file without faces, a vertex used by no face (it would
 * be a particle without springs), two vertices at one point (a spring of
 * rest length 0), a line longer than TS_OBJ_MAX_LINE bytes, a NUL byte, a
 * file larger than TS_OBJ_MAX_BYTES, and a directory or a device.  Vertex
 * numbers in messages count from 1, as in the file.  A read error is
 * TS_ERR_IO, never taken as the end of the file.
 *
 * Cost: O(size) to read, O(n log n) in the vertices for the checks. */
#define TS_OBJ_MAX_LINE (1 << 24)   /* 16 MB: a polygon of a million corners */
#define TS_OBJ_MAX_BYTES (1L << 30) /* 1 GB */
#ifndef TSTEP_OBJ_H
#define TSTEP_OBJ_H

#include <stddef.h>

typedef struct {
    size_t nverts;
    double *verts; /* 3 per vertex */
    size_t ntris;
    size_t *tris;  /* 3 vertex indices (from 0) per triangle */
} ts_obj_mesh;

int ts_obj_load(const char *path, ts_obj_mesh **out);
void ts_obj_free(ts_obj_mesh *mesh); /* accepts NULL */

#endif

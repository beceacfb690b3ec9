/* libFuzzer harness: the Wavefront OBJ reader (src/springs/obj.c).  The input is
 * written to a file and loaded; a mesh that loads must hold only triangles
 * of valid, distinct vertex indices (fuzz/corpus/obj/ has seed meshes). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "tstep/obj.h"

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/tstep-fuzz-obj-%ld.obj", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    ts_obj_mesh *m = NULL;
    if (ts_obj_load(path, &m) == 0) {
        if (!m || m->ntris == 0)
            abort();
        for (size_t t = 0; t < m->ntris; t++) {
            const size_t *v = m->tris + 3 * t;
            if (v[0] >= m->nverts || v[1] >= m->nverts || v[2] >= m->nverts || v[0] == v[1] ||
                v[1] == v[2] || v[0] == v[2])
                abort();
        }
        ts_obj_free(m);
    } else if (m) {
        abort(); /* a failed load returns no mesh */
    }
    return 0;
}

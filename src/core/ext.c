/* Finding the extension, libtstep-ext (core/ext.h).
 *
 * The extension registers its table from a constructor, so a program that
 * links it (the tstep program, or -ltstep-ext) has it before main.  Else the
 * first request for a heavy part loads TS_EXT_SONAME with dlopen, which
 * runs that constructor, and never closes it: first from the folder that
 * holds libtstep.so (the two are installed side by side, and that folder
 * is often not one the loader searches: a PREFIX, an rpath), then by the
 * loader's own search (LD_LIBRARY_PATH, ld.so.cache).  Only the shared core does:
 * a program linked with libtstep.a has its own copy of the core, and the
 * shared extension would bind to libtstep.so's copy instead (its errors,
 * threads and registrations elsewhere), so such a program links
 * libtstep-ext.a (pkg-config --static tstep-ext) or goes without. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tstep/status.h"
#include "core/ext.h"

#ifndef TS_EXT_SONAME
#error "TS_EXT_SONAME: the extension's file name (the Makefile defines it)"
#endif

static const ts_ext_entry *registered;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char why[512]; /* why the extension could not be loaded (under lock) */

void ts_ext_register(const ts_ext_entry *entries) { registered = entries; }

/* 1 if this code is the shared library libtstep.so (not libtstep.a linked
 * into a program), with its folder in dir ("" if its name has none) */
static int core_is_shared(char *dir, size_t size)
{
    Dl_info info;
    if (!dladdr(&registered, &info) || !info.dli_fname)
        return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    const char *base = slash ? slash + 1 : info.dli_fname;
    snprintf(dir, size, "%.*s", (int)(base - info.dli_fname), info.dli_fname);
    return strncmp(base, "libtstep.so", 11) == 0;
}

static void load(void)
{
    char dir[PATH_MAX], path[PATH_MAX + sizeof TS_EXT_SONAME];
    if (!core_is_shared(dir, sizeof dir)) {
        snprintf(why, sizeof why, "not linked: a program linked with libtstep.a links "
                                  "libtstep-ext.a too, pkg-config --static --libs tstep-ext");
        return;
    }
    snprintf(path, sizeof path, "%s%s", dir, TS_EXT_SONAME);
    const char *file = *dir && access(path, F_OK) == 0 ? path : TS_EXT_SONAME;
    if (!dlopen(file, RTLD_NOW | RTLD_LOCAL)) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "not installed (%.400s)", e ? e : file);
    } else if (!registered) {
        snprintf(why, sizeof why, "not installed (%.400s registered nothing)", file);
    }
}

const void *ts_ext_find(const char *name, int load_it)
{
    pthread_mutex_lock(&lock);
    static int tried;
    if (!registered && load_it && !tried) {
        tried = 1;
        load();
    }
    const ts_ext_entry *e = registered;
    pthread_mutex_unlock(&lock);
    for (; e && e->name; e++)
        if (strcmp(e->name, name) == 0)
            return e->entry;
    return NULL;
}

const void *ts_ext_need(const char *name, const char *feature, const char *dep)
{
    const void *e = ts_ext_find(name, 1);
    if (!e) {
        pthread_mutex_lock(&lock);
        ts_error(TS_ERR_UNSUPPORTED, "%s needs libtstep-ext (%s): %s", feature, dep,
                 registered ? "this build has not got it" : why);
        pthread_mutex_unlock(&lock);
    }
    return e;
}

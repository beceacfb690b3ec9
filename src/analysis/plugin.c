/* Plugins: steppers and systems from a shared object built outside the tree
 * (tstep/tstep.h).  The file is opened with dlopen and never closed, since
 * its types stay registered until the process ends.  The symbols it needs
 * from tstep (ts_system_deriv, ts_vec_axpy, ...) are resolved against the
 * program that loads it: the tstep program exports every public symbol. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "grade_worker.h"
#include "tstep/tstep.h"

const char *tstep_version(void) { return TSTEP_VERSION; }

/* A plugin is a file: a name without '/' means the file of that name here
 * (dlopen would search the system's library folders for it instead). */
static int plugin_path(const char *path, char *buf, size_t size, const char **out)
{
    *out = path;
    if (strchr(path, '/'))
        return TS_OK;
    if (access(path, F_OK) != 0)
        return ts_error(TS_ERR_INPUT,
                        "%s: no such file here (a plugin is a file: give its path, e.g. "
                        "./%s)", path, path);
    if (snprintf(buf, size, "./%s", path) >= (int)size)
        return ts_error(TS_ERR_INPUT, "%s: file name too long", path);
    *out = buf;
    return TS_OK;
}

int ts_plugin_open(const char *name, const ts_stepper_type *const **steppers_out,
                   const ts_system_type *const **systems_out)
{
    char buf[4096];
    const char *path;
    if (!name || !*name) /* dlopen would hand back the program itself */
        return ts_error(TS_ERR_INPUT, "'': empty file name");
    int st = plugin_path(name, buf, sizeof buf, &path);
    if (st)
        return st;
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return ts_error(TS_ERR_INPUT, "%s: cannot load: %s", path, why ? why : "dlopen failed");
    }
    const int *abi = dlsym(h, "tstep_plugin_abi");
    if (!abi) {
        dlclose(h);
        return ts_error(TS_ERR_INPUT,
                        "%s: not a tstep plugin (it does not define tstep_plugin_abi; "
                        "put TSTEP_PLUGIN(); in it)", path);
    }
    if (*abi != TSTEP_PLUGIN_ABI) {
        int got = *abi;
        dlclose(h);
        return ts_error(TS_ERR_INPUT,
                        "%s: built for plugin interface %d, this tstep (%s) has interface %d: "
                        "rebuild it against this tstep's headers", path, got, TSTEP_VERSION,
                        TSTEP_PLUGIN_ABI);
    }
    const ts_stepper_type *const *steppers = dlsym(h, "tstep_plugin_steppers");
    const ts_system_type *const *systems = dlsym(h, "tstep_plugin_systems");
    if (!steppers && !systems) {
        dlclose(h);
        return ts_error(TS_ERR_INPUT,
                        "%s: defines neither tstep_plugin_steppers nor tstep_plugin_systems",
                        path);
    }
    *steppers_out = steppers;
    *systems_out = systems;
    return TS_OK;
}

int tstep_plugin_load(const char *path)
{
    const ts_stepper_type *const *steppers;
    const ts_system_type *const *systems;
    int s = ts_plugin_open(path, &steppers, &systems);
    if (s)
        return s;
    /* Registered types point into the file: from here on it stays open. */
    for (size_t i = 0; !s && steppers && steppers[i]; i++)
        s = ts_stepper_register(steppers[i]);
    for (size_t i = 0; !s && systems && systems[i]; i++)
        s = ts_system_register(systems[i]);
    if (s) {
        char why[512]; /* the detail is rewritten below: copy it first */
        snprintf(why, sizeof why, "%s", ts_error_detail());
        return ts_error(s, "%s: %s", path, why);
    }
    return TS_OK;
}

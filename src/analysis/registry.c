/* The registries: the built-in steppers and systems (one line each in
 * tstep/builtins.h) followed by those registered at run time (plugins,
 * tstep_main's extra types).  Every command and test suite iterates them
 * through ts_stepper_at / ts_system_at, so a registered type is seen
 * exactly like a built-in one. */
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include "tstep/stepper.h"

/* The grader's worker is built with TS_NO_BUILTIN_STEPPERS: its registry
 * holds the submission's steppers alone, and no stepper's file is linked
 * into it (Makefile, tstep-grade-worker). */
static const ts_stepper_type *const builtin_steppers[] = {
#ifndef TS_NO_BUILTIN_STEPPERS
#define TS_STEPPER(type) &type,
#define TS_SYSTEM(type)
#include "tstep/builtins.h"
#undef TS_STEPPER
#undef TS_SYSTEM
#endif
    NULL, /* the end */
};

static const ts_system_type *const builtin_systems[] = {
#define TS_STEPPER(type)
#define TS_SYSTEM(type) &type,
#include "tstep/builtins.h"
#undef TS_STEPPER
#undef TS_SYSTEM
};

static const size_t nbuiltin_steppers = sizeof builtin_steppers / sizeof *builtin_steppers - 1;
#define NBUILTIN_SYSTEMS (sizeof builtin_systems / sizeof *builtin_systems)

/* Types registered at run time, after the built-in ones. */
typedef struct {
    const void **item;
    size_t count, cap;
} extra_list;

static extra_list extra_steppers, extra_systems;

static int extra_add(extra_list *l, const void *type)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        const void **item = realloc(l->item, cap * sizeof *item);
        if (!item)
            return ts_error(TS_ERR_NOMEM, "registry");
        l->item = item, l->cap = cap;
    }
    l->item[l->count++] = type;
    return TS_OK;
}

size_t ts_stepper_count(void) { return nbuiltin_steppers + extra_steppers.count; }

const ts_stepper_type *ts_stepper_at(size_t i)
{
    if (i < nbuiltin_steppers)
        return builtin_steppers[i];
    i -= nbuiltin_steppers;
    return i < extra_steppers.count ? extra_steppers.item[i] : NULL;
}

size_t ts_system_count(void) { return NBUILTIN_SYSTEMS + extra_systems.count; }

const ts_system_type *ts_system_at(size_t i)
{
    if (i < NBUILTIN_SYSTEMS)
        return builtin_systems[i];
    i -= NBUILTIN_SYSTEMS;
    return i < extra_systems.count ? extra_systems.item[i] : NULL;
}

const ts_stepper_type *ts_stepper_find(const char *name)
{
    const ts_stepper_type *t;
    for (size_t i = 0; (t = ts_stepper_at(i)); i++)
        if (strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

const ts_system_type *ts_system_find(const char *name)
{
    const ts_system_type *t;
    for (size_t i = 0; (t = ts_system_at(i)); i++)
        if (strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

/* A name the command line can select: letters, digits, '-', '_' and '.',
 * and not "all" (--stepper all, --system all mean every one). */
static int selectable_name(const char *kind, const char *name)
{
    if (strcmp(name, "all") == 0)
        return ts_error(TS_ERR_INPUT, "%s name 'all' is reserved (--stepper all means every one)",
                        kind);
    for (const char *p = name; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.'))
            return ts_error(TS_ERR_INPUT,
                            "%s name '%s': only letters, digits, '-', '_' and '.' (not '%c')",
                            kind, name, *p);
    return TS_OK;
}

int ts_stepper_register(const ts_stepper_type *type)
{
    if (!type || !type->name || !*type->name)
        return ts_error(TS_ERR_INPUT, "a stepper type without a name");
    int s = selectable_name("stepper", type->name);
    if (s)
        return s;
    if (!type->alloc || !type->step || !type->free)
        return ts_error(TS_ERR_INPUT, "stepper '%s' has no %s function", type->name,
                        !type->alloc ? "alloc" : !type->step ? "step" : "free");
    for (size_t i = 0; i < ts_stepper_count(); i++)
        if (strcmp(ts_stepper_at(i)->name, type->name) == 0)
            return ts_error(TS_ERR_INPUT, "stepper '%s' clashes with %s stepper of that name",
                            type->name, i < nbuiltin_steppers ? "the built-in" : "an earlier-registered");
    return extra_add(&extra_steppers, type);
}

int ts_system_register(const ts_system_type *type)
{
    if (!type || !type->name || !*type->name)
        return ts_error(TS_ERR_INPUT, "a system type without a name");
    int s = selectable_name("system", type->name);
    if (s)
        return s;
    if (!type->create)
        return ts_error(TS_ERR_INPUT, "system '%s' has no create function", type->name);
    for (size_t i = 0; i < ts_system_count(); i++)
        if (strcmp(ts_system_at(i)->name, type->name) == 0)
            return ts_error(TS_ERR_INPUT, "system '%s' clashes with %s system of that name",
                            type->name, i < NBUILTIN_SYSTEMS ? "the built-in" : "an earlier-registered");
    return extra_add(&extra_systems, type);
}

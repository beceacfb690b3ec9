/* The grader's worker and its sandbox (internal to the library).
 *
 * The grader never loads a submission into its own process: a worker (the
 * program `tstep-grade-worker`, which has no built-in stepper) loads the
 * plugins inside a sandbox (src/sandbox.c) and serves steps over pipes
 * (src/grade_worker.c).
 * In the grader, each stepper the worker offers is a proxy stepper type
 * whose steps are sent to the worker, and whose force evaluations come back
 * to the grader's own systems; every verdict is computed here. */
#ifndef TSTEP_GRADE_WORKER_H
#define TSTEP_GRADE_WORKER_H

#include <stddef.h>
#include <sys/types.h>
#include "tstep/grade.h"

/* --- the sandbox (src/sandbox.c) ------------------------------------------ */

/* A started worker: its process and the grader's ends of its pipes. */
typedef struct {
    pid_t pid;      /* bwrap, or the worker itself without the sandbox */
    int req;        /* requests to the worker (its fd 3) */
    int rep;        /* replies from the worker (its fd 4) */
    int output;     /* the worker's stdout and stderr */
    int notice;     /* the worker's notices (its fd 5): a failed allocation */
    int sandboxed;
} ts_sandbox;

/* The worker's fds for requests, replies and notices. */
#define TS_WORKER_FD_REQ 3
#define TS_WORKER_FD_REP 4
#define TS_WORKER_FD_NOTICE 5

/* Start argv (argv[0] an absolute path) under bubblewrap (sandboxed), with
 * the files of `binds` (pairs: outside path, path inside; NULL-terminated)
 * bound read-only, or as a plain child in its own process group. */
int ts_sandbox_start(const char *const *argv, const char *const *binds, int sandboxed,
                     ts_sandbox *sb);
/* Kill every process of the sandbox (the PID namespace, or the process
 * group without it) and reap it: *status its wait status. */
void ts_sandbox_kill(ts_sandbox *sb, int *status);
/* Reap the worker if it ends within ms milliseconds: 1 and *status, else 0. */
int ts_sandbox_reap(ts_sandbox *sb, int ms, int *status);
/* 1 when bubblewrap can create its namespaces here; else 0 and why. */
int ts_sandbox_works(char *why, size_t size);

/* Limits the worker sets on itself before loading any submission. */
typedef struct {
    long memory_mb;  /* RLIMIT_AS */
    long cpu_s;      /* RLIMIT_CPU, hard */
    long file_bytes; /* RLIMIT_FSIZE */
    int seccomp;     /* the system call filter */
} ts_sandbox_limits;

int ts_sandbox_limit_self(const ts_sandbox_limits *l);

/* The system call filter, from the extension (libseccomp; src/ext/seccomp.c):
 * load it into this process, 0 on success. */
typedef struct {
    int (*load)(void);
} ts_seccomp_ops;

/* Open a plugin file and find its tables of types, without registering
 * them (src/plugin.c; the grader's worker serves a submission's steppers
 * even where a built-in has the same name). */
int ts_plugin_open(const char *path, const ts_stepper_type *const **steppers,
                   const ts_system_type *const **systems);

/* --- the worker (src/grade_worker.c) --------------------------------------- */

/* The worker's main: `tstep-grade-worker [LIMITS] -- PLUGIN...`, a program
 * of its own (src/cli/worker_main.c) beside the tstep program, or in
 * ../libexec/tstep from its folder when installed. */
#define TS_GRADE_WORKER_PROGRAM "tstep-grade-worker"
/* The environment variable (= 1) the grader sets for its worker; without it
 * the worker mode refuses to start (exit 2). */
#define TS_GRADE_WORKER_MARK "TSTEP_GRADE_WORKER"
int ts_grade_worker_main(int argc, char **argv);

/* Start a worker for the options' plugins; make a proxy for each of its
 * steppers (not registered: a submission's stepper may have the name of a
 * built-in, e.g. its own rk4; ts_grade_worker_find finds it).  TS_OK;
 * TS_ERR_INPUT when its plugins do not load (*why: the loader's message);
 * TS_ERR_IO when it died first (*why: how; the graded names become
 * placeholders). */
int ts_grade_worker_open(const ts_grade_options *opt, char *why, size_t size);
/* A proxy named `name` whose worker never answered (every check fails with
 * the worker's fate); NULL when there is no room. */
const ts_stepper_type *ts_grade_worker_placeholder(const char *name);
void ts_grade_worker_close(void);
/* The submission's stepper of that name (a proxy), or NULL. */
const ts_stepper_type *ts_grade_worker_find(const char *name);
/* The names of the submission's steppers, ", "-separated, into buf. */
const char *ts_grade_worker_names(char *buf, size_t size);
int ts_grade_is_proxy(const ts_stepper_type *type);

/* Around one check of a proxy: start a worker if none runs, arm the
 * deadline; after it, the worker's fate ("" when it served the whole
 * check) and a note (a memory limit hit, or ""); the output it printed,
 * taken once. */
void ts_grade_worker_begin(const ts_grade_options *opt);
void ts_grade_worker_end(char *fate, size_t size, char *note, size_t nsize);
size_t ts_grade_worker_output(char *buf, size_t size);
/* The allocation count the worker reported for the armed steps. */
void ts_grade_worker_alloc_arm(int on);
long ts_grade_worker_alloc_count(void);

/* The grader's own systems a worker builds itself (src/grade.c): for such
 * a system, 1 with its name and parameter; else 0. */
int ts_grade_local_system(const ts_system *sys, char *name, size_t size, double *param);
int ts_grade_local_new(const char *name, double param, ts_system **out);


#endif

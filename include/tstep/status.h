/* tstep/status.h - status codes shared by every tstep function that can fail.
 *
 * One X-macro list gives each code its message and its command-line exit
 * status (0 success, 1 the computation failed, 2 usage or input error).
 * Functions return a status; callbacks pass failures up unchanged.  A
 * function that fails may leave a detail message with ts_error(), read back
 * with ts_error_detail(), e.g. "parameter 'k': 'abc' is not a number". */
#ifndef TSTEP_STATUS_H
#define TSTEP_STATUS_H

#include <signal.h>
#include <stddef.h>

/*  code               exit  message */
#define TS_STATUS_LIST(X)                                                    \
    X(TS_OK,             0, "success")                                     \
    X(TS_ERR_INPUT,      2, "invalid input")                               \
    X(TS_ERR_NOMEM,      1, "out of memory")                               \
    X(TS_ERR_IO,         2, "input/output error")                          \
    X(TS_ERR_UNSUPPORTED,2, "operation not supported by this system")      \
    X(TS_ERR_DIVERGED,   1, "the state diverged (non-finite or exploding)")\
    X(TS_ERR_NEWTON,     1, "Newton iteration did not converge")           \
    X(TS_ERR_LINEAR,     1, "linear solver did not converge")              \
    X(TS_ERR_INDEFINITE, 1, "matrix not positive definite")                \
    X(TS_ERR_REJECTED,   1, "step rejected")                               \
    X(TS_ERR_NOT_IMPLEMENTED, 1, "not implemented")                      \
    X(TS_ERR_INTERRUPTED,1, "interrupted")

typedef enum {
#define TS_STATUS_ENUM(code, exit, msg) code,
    TS_STATUS_LIST(TS_STATUS_ENUM)
#undef TS_STATUS_ENUM
    TS_STATUS_COUNT
} ts_status;

/* The fixed message of a status code. */
const char *ts_status_message(int status);

/* The command-line exit status for a status code (0, 1 or 2). */
int ts_status_exit_code(int status);

/* Record a detail message for the failure being returned (printf-style);
 * returns `status` so a caller can write `return ts_error(TS_ERR_INPUT, ...)`. */
int ts_error(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The last detail message ("" if none since ts_error_clear()). */
const char *ts_error_detail(void);
void ts_error_clear(void);

/* --- the stop request ------------------------------------------------------- */

/* Nonzero (the number of the signal, set by a handler) asks every long loop
 * to stop: the run loop (tstep/run.h) after the step under way, and the loops
 * inside a step (Newton's, the Krylov solvers', the eigensolvers') through
 * ts_stop_check.  The flag lives here, below every layer that reads it, and
 * is set by whoever owns the signal handler (the command line). */
extern volatile sig_atomic_t ts_stop_signal;

/* TS_ERR_INTERRUPTED, with a message naming `where`, once ts_stop_signal is
 * set and no hold is on; else TS_OK. */
int ts_stop_check(const char *where);

/* While held (on = 1), ts_stop_check lets the work under way finish: the run
 * loop holds it around an observer so that every output ends in a whole row. */
void ts_stop_hold(int on);

/* --- the allocation counter ------------------------------------------------- */

/* A counter of heap allocations that a program may install (the tstep
 * program's src/cli/alloc_counter.h replaces malloc and its siblings and
 * installs one); the grader's no-allocation check arms it around a step.
 * Both are NULL until installed. */
typedef struct {
    void (*arm)(int on); /* count from now (1) or stop counting (0) */
    long (*count)(void); /* allocations counted while armed, so far */
} ts_alloc_counter;

void ts_alloc_counter_install(const ts_alloc_counter *counter);
const ts_alloc_counter *ts_alloc_counter_installed(void); /* NULL if none */

/* A failed allocation of `size` bytes, told by the program's allocator (the
 * counter's) to the hook set here, if any: the grader's worker sets one to
 * report that its memory limit was hit.  The hook must not allocate. */
void ts_alloc_failed(size_t size);
void ts_alloc_failed_hook_set(void (*hook)(size_t size));

#endif

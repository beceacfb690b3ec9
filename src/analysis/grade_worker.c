/* The grader's worker and the proxy steppers that talk to it.
 *
 * The worker (`tstep-grade-worker`, src/cli/worker_main.c: the library
 * without any built-in stepper, started in the sandbox of src/sandbox.c)
 * limits itself, loads the submission's plugins and serves
 * requests on fd 3, answering on fd 4.  The protocol is binary and every
 * message is a header {op, len} and at most MSG_MAX bytes, each of a fixed
 * layout checked against its length:
 *
 *   worker -> grader  HELLO {count, count x {name, summary, order, flags, reset}}
 *                     FAIL {text}                   (the plugins did not load)
 *   grader -> worker  OPEN {stepper name, order, n, ops present, mass[n], pinned[n]}
 *   worker -> grader  OPENED {status, handle, text}
 *   grader -> worker  STEP {handle, count allocations, t, h, x[n], v[n]}
 *   worker -> grader  EVAL {kind, t, x[n], v[n], u[n]}  (forces, df/dx u, df/dv u,
 *   grader -> worker  EVALED {status, out[n]}            energy: as many as the step needs)
 *   worker -> grader  STEPPED {status, allocations, text, x[n], v[n]}
 *   grader -> worker  ERROR {handle, rtol, atol}     (after a step: its error estimate)
 *   worker -> grader  ERRORED {estimate}
 *   grader -> worker  RESET {handle}, FREE {handle}, QUIT
 *
 * So the worker's system holds no physics: every force evaluation is made
 * by the grader's own system at the state the stepper asks for, which the
 * grader sees (stage states, stage times, failure injection and counts are
 * the grader's), and the new state comes back as raw numbers the grader
 * judges.  Only the allocation count is the worker's own report.
 *
 * In the grader, each stepper of the worker is a proxy type (a slot of
 * `proxies`, its alloc one of the trampolines below since a type's alloc is
 * not told its type).  Every read from the worker waits at most until the
 * check's deadline; its stdout and stderr are read meanwhile into a capped
 * buffer, never onto the grader's own output. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "grade_worker.h"
#include "tstep/tstep.h"

enum {
    MSG_HELLO = 0x54530001, MSG_FAIL, MSG_OPEN, MSG_OPENED, MSG_STEP, MSG_EVAL, MSG_EVALED,
    MSG_STEPPED, MSG_RESET, MSG_FREE, MSG_QUIT, MSG_ERROR, MSG_ERRORED
};
enum { EVAL_FORCES, EVAL_DFDX, EVAL_DFDV, EVAL_ENERGY };
enum { HAS_DFDX = 1, HAS_DFDV = 2, HAS_ENERGY = 4 };

#define MSG_MAX (1u << 18)
#define N_MAX 4096 /* degrees of freedom of a system sent to the worker */
#define NAME_LEN 64
#define SUMMARY_LEN 96
#define TEXT_LEN 200
#define PROXY_MAX 16
#define HANDLE_MAX 64

typedef struct {
    uint32_t op, len;
} msg_head;

typedef struct {
    char name[NAME_LEN], summary[SUMMARY_LEN];
    int32_t order, reset;
    uint32_t flags, pad;
} hello_entry;

typedef struct {
    char name[NAME_LEN];
    char local[NAME_LEN]; /* "" or a grader system the worker builds itself */
    double param;         /* its parameter */
    int32_t order, n, has, symmetric;
} open_head;

typedef struct {
    int32_t status, handle;
    char text[TEXT_LEN];
} opened_msg;

typedef struct {
    int32_t handle, count_alloc;
    double t, h;
} step_head;

typedef struct {
    int32_t kind, pad;
    double t;
} eval_head;

typedef struct {
    int32_t status, pad;
    int64_t allocs;
    char text[TEXT_LEN];
} stepped_head;

typedef struct {
    int32_t handle, pad;
} handle_msg;

typedef struct {
    int32_t handle, pad;
    double rtol, atol;
} error_msg;

/* One buffer per direction, never allocated during a step. */
static _Alignas(16) unsigned char inbuf[MSG_MAX], outbuf[MSG_MAX];

/* --- the worker ------------------------------------------------------------------ */

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w, n -= (size_t)w;
    }
    return 0;
}

static int send_msg(int fd, uint32_t op, const void *body, size_t len)
{
    msg_head h = {op, (uint32_t)len};
    if (len > MSG_MAX)
        return -1;
    memcpy(outbuf, &h, sizeof h);
    memcpy(outbuf + sizeof h, body, len);
    return write_all(fd, outbuf, sizeof h + len);
}

static int read_all_blocking(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r, n -= (size_t)r;
    }
    return 0;
}

/* The worker's next request into inbuf; exits on end of input (the grader
 * is done or gone) or a malformed header. */
static msg_head worker_read(void)
{
    msg_head h;
    if (read_all_blocking(TS_WORKER_FD_REQ, &h, sizeof h) || h.len > MSG_MAX ||
        read_all_blocking(TS_WORKER_FD_REQ, inbuf, h.len))
        _exit(0);
    return h;
}

/* The worker's system: every evaluation is asked of the grader. */
typedef struct {
    ts_system base;
    ts_system_ops ops;
} remote_system;

/* One evaluation the worker asks of the grader: kind (EVAL_*) at (t, x, v),
 * and for a product the vector u (NULL otherwise). */
typedef struct {
    int kind;
    double t;
    const double *x, *v, *u;
} eval_request;

static int remote_eval(ts_system *sys, const eval_request *rq, double *out)
{
    size_t n = sys->n, off = sizeof(eval_head);
    eval_head e = {rq->kind, 0, rq->t};
    unsigned char *b = outbuf + sizeof(msg_head);
    memcpy(b, &e, sizeof e);
    memcpy(b + off, rq->x, n * sizeof *rq->x), off += n * sizeof *rq->x;
    if (sys->order == 2)
        memcpy(b + off, rq->v, n * sizeof *rq->v), off += n * sizeof *rq->v;
    if (rq->u)
        memcpy(b + off, rq->u, n * sizeof *rq->u), off += n * sizeof *rq->u;
    msg_head h = {MSG_EVAL, (uint32_t)off};
    memcpy(outbuf, &h, sizeof h);
    if (write_all(TS_WORKER_FD_REP, outbuf, sizeof h + off))
        _exit(0);
    size_t want = 8 + (rq->kind == EVAL_ENERGY ? 2 : n) * sizeof(double);
    msg_head r = worker_read();
    if (r.op != MSG_EVALED || r.len != want)
        _exit(0);
    int32_t status;
    memcpy(&status, inbuf, sizeof status);
    memcpy(out, inbuf + 8, want - 8);
    return status;
}

static int remote_forces(ts_system *sys, double t, const double *x, const double *v, double *f)
{
    return remote_eval(sys, &(eval_request){EVAL_FORCES, t, x, v, NULL}, f);
}

static int remote_dfdx(ts_system *sys, double t, const double *x, const double *v,
                       const double *u, double *out)
{
    return remote_eval(sys, &(eval_request){EVAL_DFDX, t, x, v, u}, out);
}

static int remote_dfdv(ts_system *sys, double t, const double *x, const double *v,
                       const double *u, double *out)
{
    return remote_eval(sys, &(eval_request){EVAL_DFDV, t, x, v, u}, out);
}

static int remote_energy(ts_system *sys, double t, const double *x, const double *v,
                         double *kinetic, double *potential)
{
    double e[2];
    int s = remote_eval(sys, &(eval_request){EVAL_ENERGY, t, x, v, NULL}, e);
    *kinetic = e[0], *potential = e[1];
    return s;
}

static void remote_destroy(ts_system *sys)
{
    ts_system_release(sys);
    free(sys);
}

/* The submission's steppers, which the worker serves (before any built-in
 * of the same name). */
static const ts_stepper_type *served[PROXY_MAX];
static int nserved;

static const ts_stepper_type *served_find(const char *name)
{
    for (int i = 0; i < nserved; i++)
        if (strcmp(served[i]->name, name) == 0)
            return served[i];
    return NULL;
}

static struct {
    ts_system *sys;
    ts_stepper *st;
} handles[HANDLE_MAX];

static int worker_open_system(const open_head *o, const double *data, ts_system **out)
{
    remote_system *r = calloc(1, sizeof *r);
    if (!r)
        return ts_error(TS_ERR_NOMEM, "grade worker: system");
    r->ops = (ts_system_ops){.destroy = remote_destroy, .forces = remote_forces};
    if (o->has & HAS_DFDX)
        r->ops.dfdx_mul = remote_dfdx;
    if (o->has & HAS_DFDV)
        r->ops.dfdv_mul = remote_dfdv;
    if (o->has & HAS_ENERGY)
        r->ops.energy = remote_energy;
    int s = ts_system_init(&r->base, &r->ops, NULL, o->order, (size_t)o->n);
    for (int i = 0; !s && i < o->n; i++)
        if (data[o->n + i] != 0.0 && !r->base.pinned)
            s = ts_system_alloc_pins(&r->base);
    if (s) {
        free(r);
        return s;
    }
    r->base.jacobian_symmetric = o->symmetric;
    for (int i = 0; i < o->n; i++) {
        r->base.mass[i] = data[i];
        if (r->base.pinned)
            r->base.pinned[i] = data[o->n + i] != 0.0;
    }
    *out = &r->base;
    return TS_OK;
}

static void worker_open(uint32_t len)
{
    open_head o;
    opened_msg a = {TS_OK, -1, ""};
    if (len < sizeof o)
        _exit(0);
    memcpy(&o, inbuf, sizeof o);
    o.name[NAME_LEN - 1] = o.local[NAME_LEN - 1] = '\0';
    if (o.n < 1 || o.n > N_MAX || (o.order != 1 && o.order != 2) ||
        len != sizeof o + 2 * (size_t)o.n * sizeof(double))
        _exit(0);
    int h = 0;
    while (h < HANDLE_MAX && handles[h].st)
        h++;
    const ts_stepper_type *type = served_find(o.name);
    ts_system *sys = NULL;
    ts_stepper *st = NULL;
    ts_error_clear();
    int s = h == HANDLE_MAX ? ts_error(TS_ERR_NOMEM, "grade worker: too many steppers")
            : !type         ? ts_error(TS_ERR_INPUT, "the submission has no stepper '%s'", o.name)
            : *o.local      ? ts_grade_local_new(o.local, o.param, &sys)
                            : worker_open_system(&o, (const double *)(inbuf + sizeof o), &sys);
    if (!s && (sys->n != (size_t)o.n || sys->order != o.order))
        s = ts_error(TS_ERR_INPUT, "grade worker: system '%s' differs", o.local);
    if (!s && (s = ts_stepper_new(type, sys, NULL, &st)))
        ts_system_free(sys);
    if (!s)
        handles[h].sys = sys, handles[h].st = st, a.handle = h;
    a.status = s;
    snprintf(a.text, sizeof a.text, "%s", s ? ts_error_detail() : "");
    send_msg(TS_WORKER_FD_REP, MSG_OPENED, &a, sizeof a);
}

static int worker_handle(uint32_t len, size_t min)
{
    int32_t h = -1;
    if (len >= sizeof h)
        memcpy(&h, inbuf, sizeof h);
    if (len < min || h < 0 || h >= HANDLE_MAX || !handles[h].st)
        _exit(0);
    return h;
}

static void worker_step(uint32_t len)
{
    step_head q;
    int h = worker_handle(len, sizeof q);
    ts_system *sys = handles[h].sys;
    size_t n = sys->n, m = (size_t)sys->order * n;
    memcpy(&q, inbuf, sizeof q);
    if (len != sizeof q + m * sizeof(double))
        _exit(0);
    ts_system_set_y(sys, (const double *)(inbuf + sizeof q));
    ts_grade_options o = ts_default_grade_options();
    int count = q.count_alloc && o.alloc_arm && o.alloc_count;
    long before = count ? o.alloc_count() : 0;
    ts_error_clear();
    if (count)
        o.alloc_arm(1);
    int s = ts_stepper_step(handles[h].st, sys, q.t, q.h);
    if (count)
        o.alloc_arm(0);
    stepped_head a = {s, 0, count ? o.alloc_count() - before : 0, ""};
    snprintf(a.text, sizeof a.text, "%s", s ? ts_error_detail() : "");
    static double y[2 * N_MAX];
    ts_system_get_y(sys, y);
    msg_head mh = {MSG_STEPPED, (uint32_t)(sizeof a + m * sizeof(double))};
    memcpy(outbuf, &mh, sizeof mh);
    memcpy(outbuf + sizeof mh, &a, sizeof a);
    memcpy(outbuf + sizeof mh + sizeof a, y, m * sizeof(double));
    if (write_all(TS_WORKER_FD_REP, outbuf, sizeof mh + mh.len))
        _exit(0);
}

static void worker_serve(void)
{
    for (;;) {
        msg_head h = worker_read();
        int k;
        switch (h.op) {
        case MSG_OPEN: worker_open(h.len); break;
        case MSG_STEP: worker_step(h.len); break;
        case MSG_ERROR: {
            error_msg q;
            k = worker_handle(h.len, sizeof q);
            memcpy(&q, inbuf, sizeof q);
            double e = ts_stepper_error(handles[k].st, handles[k].sys, q.rtol, q.atol);
            if (send_msg(TS_WORKER_FD_REP, MSG_ERRORED, &e, sizeof e))
                _exit(0);
            break;
        }
        case MSG_RESET:
            k = worker_handle(h.len, sizeof(handle_msg));
            ts_stepper_reset(handles[k].st);
            break;
        case MSG_FREE:
            k = worker_handle(h.len, sizeof(handle_msg));
            ts_stepper_free(handles[k].st);
            ts_system_free(handles[k].sys);
            handles[k].st = NULL, handles[k].sys = NULL;
            break;
        default: _exit(0); /* MSG_QUIT, or nonsense */
        }
    }
}

static int notice_fd = -1;

static void alloc_failed_notice(size_t size)
{
    if (notice_fd < 0)
        return;
    char line[96];
    int n = snprintf(line, sizeof line, "alloc %zu\n", size);
    if (n > 0 && write(notice_fd, line, (size_t)n) < 0)
        notice_fd = -1;
}

/* Open the plugins (their steppers kept, not registered) and say hello. */
static int worker_hello(char **plugins, int n)
{
    for (int i = 0; i < n; i++) {
        const ts_stepper_type *const *st = NULL;
        const ts_system_type *const *sy = NULL;
        int s = ts_plugin_open(plugins[i], &st, &sy);
        for (size_t k = 0; !s && st && st[k]; k++)
            s = !st[k]->name || !st[k]->step || !st[k]->alloc || served_find(st[k]->name)
                    ? ts_error(TS_ERR_INPUT, "%s: stepper %zu: no name, step or alloc, or a "
                                             "name given twice", plugins[i], k)
                : nserved == PROXY_MAX
                    ? ts_error(TS_ERR_INPUT, "more than %d steppers", PROXY_MAX)
                    : (served[nserved++] = st[k], TS_OK);
        if (s) {
            char text[TEXT_LEN];
            snprintf(text, sizeof text, "%s", ts_error_detail());
            send_msg(TS_WORKER_FD_REP, MSG_FAIL, text, sizeof text);
            return 1;
        }
    }
    static hello_entry e[PROXY_MAX];
    int32_t count = 0;
    for (; count < nserved; count++) {
        const ts_stepper_type *t = served[count];
        snprintf(e[count].name, NAME_LEN, "%s", t->name);
        snprintf(e[count].summary, SUMMARY_LEN, "%s", t->summary ? t->summary : "");
        e[count].order = t->order, e[count].flags = t->flags, e[count].reset = t->reset != NULL;
    }
    static unsigned char body[sizeof(int32_t) + sizeof e];
    memcpy(body, &count, sizeof count);
    memcpy(body + sizeof count, e, (size_t)count * sizeof *e);
    return send_msg(TS_WORKER_FD_REP, MSG_HELLO, body, sizeof count + count * sizeof *e) != 0;
}

/* Only as the grader's child: the mark the grader sets (ts_sandbox_start)
 * and the protocol's pipes on fds 3 to 5.  Started by hand, or by a fuzzer
 * calling tstep_main, the worker would limit and filter the calling
 * process itself. */
static int started_by_grader(void)
{
    const char *mark = getenv(TS_GRADE_WORKER_MARK);
    if (!mark || strcmp(mark, "1") != 0)
        return 0;
    for (int fd = TS_WORKER_FD_REQ; fd <= TS_WORKER_FD_NOTICE; fd++) {
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
            return 0;
    }
    return 1;
}

int ts_grade_worker_main(int argc, char **argv)
{
    if (!started_by_grader()) {
        fprintf(stderr, "%s is started by 'tstep grade', not by hand\n",
                TS_GRADE_WORKER_PROGRAM);
        return 2;
    }
    ts_sandbox_limits l = {.memory_mb = 2048, .cpu_s = 600, .file_bytes = 16 << 20, .seccomp = 1};
    int a = 1;
    for (; a + 1 < argc && strncmp(argv[a], "--", 2) == 0 && argv[a][2]; a += 2) {
        if (strcmp(argv[a], "--memory") == 0)
            l.memory_mb = atol(argv[a + 1]);
        else if (strcmp(argv[a], "--cpu") == 0)
            l.cpu_s = atol(argv[a + 1]);
        else if (strcmp(argv[a], "--seccomp") == 0)
            l.seccomp = atoi(argv[a + 1]);
    }
    if (a < argc && strcmp(argv[a], "--") == 0)
        a++;
    signal(SIGPIPE, SIG_DFL);
    if (ts_sandbox_limit_self(&l)) {
        char text[TEXT_LEN];
        snprintf(text, sizeof text, "%s", ts_error_detail());
        send_msg(TS_WORKER_FD_REP, MSG_FAIL, text, sizeof text);
        return 3;
    }
    notice_fd = TS_WORKER_FD_NOTICE;
    ts_alloc_failed_hook_set(alloc_failed_notice);
    if (worker_hello(argv + a, argc - a))
        return 0;
    worker_serve();
    return 0;
}

/* --- the grader's side ------------------------------------------------------------ */

enum { FATE_NONE, FATE_TIMEOUT, FATE_DIED, FATE_PROTOCOL, FATE_START };

#define OUTPUT_CAP 16384

static struct {
    ts_sandbox sb;
    int running, gen, fate, wstatus, sandboxed, time_limit;
    long memory_mb, deadline_ms;
    char exe[4096];
    char *plugins[16];
    int nplugins;
    char why[TEXT_LEN];      /* the detail of a protocol or start failure */
    char out[OUTPUT_CAP];    /* the worker's stdout and stderr since the last take */
    size_t outlen, dropped;
    char notice[256];
    size_t noticelen;
    int armed;
    long allocs;
} W = {.sb = {.pid = -1, .req = -1, .rep = -1, .output = -1, .notice = -1}};

typedef struct {
    ts_stepper_type type;
    char name[NAME_LEN], summary[SUMMARY_LEN];
} proxy_slot;

static proxy_slot proxies[PROXY_MAX];
static int nproxies;

typedef struct {
    int slot, handle, gen;
} proxy_inst;

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Code points a report does not take although UTF-8 can carry them: the
 * noncharacters (U+FFFE and U+FFFF are not XML, so junit.xml would not
 * parse), the bidirectional controls and marks (text shown in another
 * order than it is stored) and the line and paragraph separators. */
static int untrusted_code_point(unsigned cp)
{
    return (cp & 0xfffe) == 0xfffe || (cp >= 0xfdd0 && cp <= 0xfdef) ||
           (cp >= 0x200e && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* Text from the submission made safe to print and to put in the result
 * files, in place: UTF-8 that is printable, new lines and tabs kept, every
 * other byte (NUL, a control character such as the terminal's escape, a C1
 * control, one of the code points above, a malformed or cut sequence)
 * becomes '?'.  n bytes of s; the result is NUL-terminated at n.  Writes
 * never outrun reads, so in place. */
static void untrusted_text(char *s, size_t n)
{
    unsigned char *u = (unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = u[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                                   : (c & 0xf8) == 0xf0 ? 4 : 0;
        int ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = (u[i + k] & 0xc0) == 0x80;
        if (ok && len == 1)
            ok = c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f);
        if (ok && len > 1) { /* its code point: not overlong, a surrogate, a C1 control */
            unsigned cp = c & (0x7f >> len);
            for (size_t k = 1; k < len; k++)
                cp = cp << 6 | (u[i + k] & 0x3f);
            static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
            ok = cp >= least[len] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) &&
                 !(cp >= 0x80 && cp <= 0x9f) && !untrusted_code_point(cp);
        }
        if (!ok) {
            u[i++] = '?';
            continue;
        }
        i += len;
    }
    s[n] = '\0';
}

/* Read what is there on the output or notice pipe; closed at its end. */
static void drain(int *fd, char *buf, size_t cap, size_t *len, size_t *dropped)
{
    char tmp[4096];
    ssize_t r = read(*fd, tmp, sizeof tmp);
    if (r <= 0) {
        if (r == 0 || errno != EINTR) {
            close(*fd);
            *fd = -1;
        }
        return;
    }
    size_t keep = (size_t)r < cap - 1 - *len ? (size_t)r : cap - 1 - *len;
    memcpy(buf + *len, tmp, keep);
    *len += keep;
    buf[*len] = '\0';
    if (dropped)
        *dropped += (size_t)r - keep;
}

static void drain_ready(int wait_ms)
{
    struct pollfd p[2] = {{W.sb.output, POLLIN, 0}, {W.sb.notice, POLLIN, 0}};
    while (poll(p, 2, wait_ms) > 0) {
        if (p[0].revents)
            drain(&W.sb.output, W.out, sizeof W.out, &W.outlen, &W.dropped);
        if (p[1].revents)
            drain(&W.sb.notice, W.notice, sizeof W.notice, &W.noticelen, NULL);
        p[0].fd = W.sb.output, p[1].fd = W.sb.notice;
        if (p[0].fd < 0 && p[1].fd < 0)
            break;
    }
}

/* The worker failed the grader: stop it (the whole sandbox) and say how. */
static void worker_fail(int fate)
{
    if (!W.running)
        return;
    W.running = 0;
    W.fate = fate;
    W.wstatus = 0;
    if (fate == FATE_DIED && ts_sandbox_reap(&W.sb, 300, &W.wstatus)) {
        drain_ready(0);
        ts_sandbox_kill(&W.sb, NULL);
        return;
    }
    drain_ready(0);
    ts_sandbox_kill(&W.sb, &W.wstatus);
    drain_ready(0);
}

static int protocol(const char *what)
{
    snprintf(W.why, sizeof W.why, "%s", what);
    worker_fail(FATE_PROTOCOL);
    return -1;
}

/* n bytes of the worker's reply, waiting until the check's deadline at most. */
static int wk_read(void *buf, size_t n)
{
    char *c = buf;
    while (n) {
        if (!W.running)
            return -1;
        long left = W.deadline_ms - now_ms();
        if (left <= 0) {
            worker_fail(FATE_TIMEOUT);
            return -1;
        }
        struct pollfd p[3] = {{W.sb.rep, POLLIN, 0}, {W.sb.output, POLLIN, 0},
                              {W.sb.notice, POLLIN, 0}};
        int r = poll(p, 3, left > 1000000 ? 1000000 : (int)left);
        if (r < 0 && errno != EINTR) {
            worker_fail(FATE_DIED);
            return -1;
        }
        if (r <= 0)
            continue;
        if (p[1].revents)
            drain(&W.sb.output, W.out, sizeof W.out, &W.outlen, &W.dropped);
        if (p[2].revents)
            drain(&W.sb.notice, W.notice, sizeof W.notice, &W.noticelen, NULL);
        if (p[0].revents) {
            ssize_t k = read(W.sb.rep, c, n);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                worker_fail(FATE_DIED);
                return -1;
            }
            c += k, n -= (size_t)k;
        }
    }
    return 0;
}

/* The header of the next reply, which must be `op` (or EVAL during a step). */
static int wk_head(msg_head *h)
{
    if (wk_read(h, sizeof *h))
        return -1;
    if (h->len > MSG_MAX)
        return protocol("a message longer than the protocol allows");
    return wk_read(inbuf, h->len);
}

static int wk_send(uint32_t op, const void *body, size_t len)
{
    if (!W.running)
        return -1;
    msg_head h = {op, (uint32_t)len};
    memcpy(outbuf, &h, sizeof h);
    if (body != outbuf + sizeof h)
        memcpy(outbuf + sizeof h, body, len);
    if (write_all(W.sb.req, outbuf, sizeof h + len)) {
        worker_fail(FATE_DIED);
        return -1;
    }
    return 0;
}

static int valid_status(int32_t s) { return s >= 0 && s < TS_STATUS_COUNT; }

/* --- the proxy steppers --------------------------------------------------------- */

static int proxy_open(int slot, const ts_system *sys, void **scratch)
{
    if (!W.running)
        return ts_error(TS_ERR_IO, "the submission's process is not running");
    if (sys->n > N_MAX)
        return ts_error(TS_ERR_UNSUPPORTED, "the grader sends systems of at most %d degrees of "
                                            "freedom to a submission", N_MAX);
    size_t n = sys->n;
    unsigned char *b = outbuf + sizeof(msg_head);
    open_head o = {"", "", 0.0, sys->order, (int32_t)n, 0, sys->jacobian_symmetric};
    snprintf(o.name, sizeof o.name, "%s", proxies[slot].name);
    ts_grade_local_system(sys, o.local, sizeof o.local, &o.param);
    o.has = (sys->ops->dfdx_mul ? HAS_DFDX : 0) | (sys->ops->dfdv_mul ? HAS_DFDV : 0) |
            (sys->ops->energy ? HAS_ENERGY : 0);
    memcpy(b, &o, sizeof o);
    double *d = (double *)(b + sizeof o);
    for (size_t i = 0; i < n; i++) {
        d[i] = sys->mass[i];
        d[n + i] = sys->pinned && sys->pinned[i];
    }
    msg_head h;
    opened_msg a;
    if (wk_send(MSG_OPEN, b, sizeof o + 2 * n * sizeof(double)) || wk_head(&h))
        return ts_error(TS_ERR_IO, "the submission's process stopped");
    if (h.op != MSG_OPENED || h.len != sizeof a)
        return protocol("not an answer to OPEN"), ts_error(TS_ERR_IO, "out of protocol");
    memcpy(&a, inbuf, sizeof a);
    untrusted_text(a.text, strnlen(a.text, TEXT_LEN - 1));
    if (!valid_status(a.status) || (!a.status && (a.handle < 0 || a.handle >= HANDLE_MAX)))
        return protocol("a bad status or handle"), ts_error(TS_ERR_IO, "out of protocol");
    if (a.status)
        return ts_error(a.status, "%s", a.text);
    proxy_inst *p = malloc(sizeof *p);
    if (!p)
        return ts_error(TS_ERR_NOMEM, "proxy stepper");
    *p = (proxy_inst){slot, a.handle, W.gen};
    *scratch = p;
    return TS_OK;
}

/* One evaluation the worker's step asks for, made on the grader's system. */
static int proxy_eval(ts_system *sys, uint32_t len)
{
    static double out[N_MAX];
    eval_head e;
    size_t n = sys->n, m = (size_t)sys->order * n;
    memcpy(&e, inbuf, sizeof e);
    int with_u = e.kind == EVAL_DFDX || e.kind == EVAL_DFDV;
    if (e.kind < EVAL_FORCES || e.kind > EVAL_ENERGY ||
        len != sizeof e + (m + (with_u ? n : 0)) * sizeof(double))
        return protocol("a malformed evaluation request");
    const double *x = (const double *)(inbuf + sizeof e);
    const double *v = sys->order == 2 ? x + n : NULL, *u = x + m;
    int32_t s = TS_OK;
    size_t k = n;
    switch (e.kind) {
    case EVAL_FORCES: s = ts_system_forces(sys, e.t, x, v, out); break;
    case EVAL_DFDX: s = ts_system_dfdx_mul(sys, e.t, x, v, u, out); break;
    case EVAL_DFDV: s = ts_system_dfdv_mul(sys, e.t, x, v, u, out); break;
    default:
        k = 2;
        out[0] = out[1] = 0.0;
        s = sys->ops->energy ? sys->ops->energy(sys, e.t, x, v, out, out + 1)
                             : TS_ERR_UNSUPPORTED;
    }
    unsigned char *b = outbuf + sizeof(msg_head);
    int32_t head[2] = {s, 0};
    memcpy(b, head, sizeof head);
    memcpy(b + sizeof head, out, k * sizeof *out);
    return wk_send(MSG_EVALED, b, sizeof head + k * sizeof *out);
}

static int proxy_step(void *scratch, ts_system *sys, double t, double h, ts_step_stats *stats)
{
    proxy_inst *p = scratch;
    size_t m = ts_system_ydim(sys);
    (void)stats;
    if (!W.running || p->gen != W.gen)
        return ts_error(TS_ERR_IO, "the submission's process stopped");
    unsigned char *b = outbuf + sizeof(msg_head);
    step_head q = {p->handle, W.armed, t, h};
    memcpy(b, &q, sizeof q);
    ts_system_get_y(sys, (double *)(b + sizeof q));
    if (wk_send(MSG_STEP, b, sizeof q + m * sizeof(double)))
        return ts_error(TS_ERR_IO, "the submission's process stopped");
    for (;;) {
        msg_head mh;
        if (wk_head(&mh))
            return ts_error(TS_ERR_IO, "the submission's process stopped");
        if (mh.op == MSG_EVAL) {
            if (proxy_eval(sys, mh.len))
                return ts_error(TS_ERR_IO, "the submission's process stopped");
            continue;
        }
        stepped_head a;
        if (mh.op != MSG_STEPPED || mh.len != sizeof a + m * sizeof(double))
            return protocol("not an answer to STEP"), ts_error(TS_ERR_IO, "out of protocol");
        memcpy(&a, inbuf, sizeof a);
        untrusted_text(a.text, strnlen(a.text, TEXT_LEN - 1));
        if (!valid_status(a.status) || a.allocs < 0)
            return protocol("a bad status"), ts_error(TS_ERR_IO, "out of protocol");
        ts_system_set_y(sys, (const double *)(inbuf + sizeof a));
        if (W.armed)
            W.allocs += (long)a.allocs;
        return a.status ? ts_error(a.status, "%s", a.text) : TS_OK;
    }
}

static void proxy_message(void *scratch, uint32_t op)
{
    proxy_inst *p = scratch;
    if (p && W.running && p->gen == W.gen) {
        handle_msg m = {p->handle, 0};
        wk_send(op, &m, sizeof m);
    }
}

static void proxy_reset(void *scratch) { proxy_message(scratch, MSG_RESET); }

/* The worker's estimate of its last step (it keeps the state before it). */
static double proxy_error(void *scratch, const ts_system *sys, const double *y0, double rtol,
                          double atol)
{
    proxy_inst *p = scratch;
    error_msg q = {p->handle, 0, rtol, atol};
    msg_head h;
    double e;
    (void)sys, (void)y0;
    if (!W.running || p->gen != W.gen || wk_send(MSG_ERROR, &q, sizeof q) || wk_head(&h))
        return NAN;
    if (h.op != MSG_ERRORED || h.len != sizeof e)
        return protocol("not an answer to ERROR"), NAN;
    memcpy(&e, inbuf, sizeof e);
    return e;
}

static void proxy_free(void *scratch)
{
    proxy_message(scratch, MSG_FREE);
    free(scratch);
}

#define PROXY_ALLOC(i)                                                                        \
    static int proxy_alloc_##i(const ts_system *sys, const ts_solver_options *o, void **sc)  \
    {                                                                                         \
        (void)o;                                                                              \
        return proxy_open(i, sys, sc);                                                        \
    }
PROXY_ALLOC(0) PROXY_ALLOC(1) PROXY_ALLOC(2) PROXY_ALLOC(3) PROXY_ALLOC(4) PROXY_ALLOC(5)
PROXY_ALLOC(6) PROXY_ALLOC(7) PROXY_ALLOC(8) PROXY_ALLOC(9) PROXY_ALLOC(10) PROXY_ALLOC(11)
PROXY_ALLOC(12) PROXY_ALLOC(13) PROXY_ALLOC(14) PROXY_ALLOC(15)

static int (*const proxy_allocs[PROXY_MAX])(const ts_system *, const ts_solver_options *,
                                            void **) = {
    proxy_alloc_0,  proxy_alloc_1,  proxy_alloc_2,  proxy_alloc_3,  proxy_alloc_4,
    proxy_alloc_5,  proxy_alloc_6,  proxy_alloc_7,  proxy_alloc_8,  proxy_alloc_9,
    proxy_alloc_10, proxy_alloc_11, proxy_alloc_12, proxy_alloc_13, proxy_alloc_14,
    proxy_alloc_15};

int ts_grade_is_proxy(const ts_stepper_type *type)
{
    return type >= &proxies[0].type && type < &proxies[PROXY_MAX].type &&
           type == &proxies[(proxy_slot *)(void *)type - proxies].type;
}

/* A proxy slot named `name` (registered), or -1. */
static int proxy_add(const char *name, const char *summary, int order, unsigned flags,
                     int reset)
{
    for (int i = 0; i < nproxies; i++)
        if (strcmp(proxies[i].name, name) == 0)
            return i;
    if (nproxies == PROXY_MAX)
        return -1;
    proxy_slot *s = &proxies[nproxies];
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->summary, sizeof s->summary, "%s", summary);
    s->type = (ts_stepper_type){.name = s->name, .summary = s->summary, .order = order,
                                .flags = flags & ~(unsigned)TS_KEEPS_START,
                                .alloc = proxy_allocs[nproxies], .step = proxy_step,
                                .free = proxy_free, .reset = reset ? proxy_reset : NULL,
                                .error = flags & TS_ADAPTIVE ? proxy_error : NULL};
    return nproxies++;
}

const ts_stepper_type *ts_grade_worker_find(const char *name)
{
    for (int i = 0; i < nproxies; i++)
        if (strcmp(proxies[i].name, name) == 0)
            return &proxies[i].type;
    return NULL;
}

const char *ts_grade_worker_names(char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < nproxies && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", proxies[i].name);
    return buf;
}

const ts_stepper_type *ts_grade_worker_placeholder(const char *name)
{
    int i = proxy_add(name, "a submission that did not load", 0, 0, 0);
    return i < 0 ? NULL : &proxies[i].type;
}

/* --- the worker's life ------------------------------------------------------------ */

/* Register (or check) the steppers of a HELLO in inbuf. */
static int take_hello(uint32_t len)
{
    int32_t count;
    if (len < sizeof count)
        return protocol("a short HELLO");
    memcpy(&count, inbuf, sizeof count);
    if (count < 0 || count > PROXY_MAX || len != sizeof count + count * sizeof(hello_entry))
        return protocol("a malformed HELLO");
    for (int i = 0; i < count; i++) {
        hello_entry e;
        memcpy(&e, inbuf + sizeof count + i * sizeof e, sizeof e);
        untrusted_text(e.name, strnlen(e.name, NAME_LEN - 1));
        untrusted_text(e.summary, strnlen(e.summary, SUMMARY_LEN - 1));
        if (!*e.name)
            return protocol("a stepper without a name");
        if (proxy_add(e.name, e.summary, e.order, e.flags, e.reset) < 0) {
            snprintf(W.why, sizeof W.why, "more than %d steppers", PROXY_MAX);
            return 1;
        }
    }
    return 0;
}

/* The worker's name of plugin i inside the sandbox, into buf. */
static const char *inside_name(int i, char *buf, size_t size)
{
    snprintf(buf, size, "/tmp/.grader/plugin%d.so", i);
    return buf;
}

/* W.why with the sandbox's names of the plugins replaced by the grader's
 * (the full paths of the files the instructor gave), cut to fit */
static void why_outside(void)
{
    for (int i = 0; i < W.nplugins; i++) {
        char in[64], out[sizeof W.why];
        inside_name(i, in, sizeof in);
        size_t len = strlen(in);
        char *p, *from = W.why;
        size_t n = 0;
        while ((p = strstr(from, in)) && n < sizeof out) {
            n += (size_t)snprintf(out + n, sizeof out - n, "%.*s%s", (int)(p - from), from,
                                  W.plugins[i]);
            from = p + len;
        }
        if (n < sizeof out)
            snprintf(out + n, sizeof out - n, "%s", from);
        snprintf(W.why, sizeof W.why, "%s", out);
    }
}

/* Start a worker and read its HELLO (by the current deadline): 0 running,
 * 1 its plugins did not load (W.why), -1 it failed (W.fate). */
static int worker_start(void)
{
    char mem[32], cpu[32];
    snprintf(mem, sizeof mem, "%ld", W.memory_mb);
    snprintf(cpu, sizeof cpu, "%d", W.time_limit * (TS_GRADE_CHECK_COUNT + 1));
    /* in the sandbox, the program and the plugins are bound under /tmp/.grader
       (the real /tmp is hidden) */
    static char inside[17][64];
    const char *argv[32] = {W.exe, "--memory", mem, "--cpu", cpu, "--"};
    const char *binds[40] = {W.exe, "/tmp/.grader/" TS_GRADE_WORKER_PROGRAM};
    int a = 6, b = 2;
    if (W.sandboxed)
        argv[0] = binds[1];
    for (int i = 0; i < W.nplugins && a < 31; i++) {
        inside_name(i, inside[i], sizeof inside[i]);
        binds[b++] = W.plugins[i];
        binds[b++] = inside[i];
        argv[a++] = W.sandboxed ? inside[i] : W.plugins[i];
    }
    argv[a] = NULL;
    binds[b] = NULL;
    W.fate = FATE_NONE;
    if (ts_sandbox_start(argv, binds, W.sandboxed, &W.sb)) {
        snprintf(W.why, sizeof W.why, "%s", ts_error_detail());
        W.fate = FATE_START;
        return -1;
    }
    W.running = 1;
    W.gen++;
    msg_head h;
    if (wk_head(&h))
        return -1;
    if (h.op == MSG_FAIL && h.len == TEXT_LEN) {
        memcpy(W.why, inbuf, TEXT_LEN);
        untrusted_text(W.why, strnlen(W.why, TEXT_LEN - 1));
        if (W.sandboxed)
            why_outside();
        worker_fail(FATE_START);
        return 1;
    }
    if (h.op != MSG_HELLO)
        return protocol("no HELLO");
    int s = take_hello(h.len);
    if (s > 0)
        worker_fail(FATE_START);
    return s;
}

static void worker_quit(void)
{
    if (!W.running)
        return;
    wk_send(MSG_QUIT, NULL, 0);
    W.running = 0;
    int st;
    if (!ts_sandbox_reap(&W.sb, 200, &st))
        ts_sandbox_kill(&W.sb, &st);
    drain_ready(0);
    ts_sandbox_kill(&W.sb, NULL);
}

/* The worker program: beside this one (the build), or in ../libexec/tstep
 * from its folder (installed); into W.exe. */
static int worker_program(void)
{
    char self[4096];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0 || k >= (ssize_t)sizeof self - 1)
        return ts_error(TS_ERR_IO, "grade: cannot find this program (/proc/self/exe)");
    self[k] = '\0';
    char *slash = strrchr(self, '/');
    *(slash ? slash : self) = '\0';
    static const char *const where[] = {"%s/" TS_GRADE_WORKER_PROGRAM,
                                        "%s/../libexec/tstep/" TS_GRADE_WORKER_PROGRAM};
    for (int i = 0; i < 2; i++) {
        if (snprintf(W.exe, sizeof W.exe, where[i], self) < (int)sizeof W.exe &&
            access(W.exe, X_OK) == 0)
            return TS_OK;
    }
    return ts_error(TS_ERR_UNSUPPORTED,
                    "the grader's worker program %s is neither in %s nor in "
                    "%s/../libexec/tstep (make builds it beside build/tstep, make install into "
                    "libexec/tstep)",
                    TS_GRADE_WORKER_PROGRAM, self, self);
}

int ts_grade_worker_open(const ts_grade_options *opt, char *why, size_t size)
{
    int st = worker_program(); /* not there: this installation's fault */
    if (st) {
        snprintf(why, size, "%s", ts_error_detail());
        return st;
    }
    for (int i = 0; i < W.nplugins; i++)
        free(W.plugins[i]);
    W.nplugins = 0;
    for (int i = 0; i < opt->nplugins && i < 16; i++) {
        W.plugins[i] = realpath(opt->plugins[i], NULL);
        if (!W.plugins[i]) {
            snprintf(why, size, "%s: %s", opt->plugins[i], strerror(errno));
            return ts_error(TS_ERR_INPUT, "--plugin %s", why);
        }
        W.nplugins++;
    }
    W.sandboxed = opt->sandbox;
    W.memory_mb = opt->memory_limit;
    W.time_limit = opt->time_limit > 0 ? opt->time_limit : TS_GRADE_TIME_LIMIT;
    W.deadline_ms = now_ms() + 1000L * W.time_limit;
    int s = worker_start();
    char fate[TEXT_LEN], note[TEXT_LEN];
    if (s > 0) {
        snprintf(why, size, "%s", W.why);
        return TS_ERR_INPUT;
    }
    if (s < 0) {
        ts_grade_worker_end(fate, sizeof fate, note, sizeof note);
        snprintf(why, size, "%s", fate);
        return TS_ERR_IO;
    }
    return TS_OK;
}

void ts_grade_worker_close(void) { worker_quit(); }

void ts_grade_worker_begin(const ts_grade_options *opt)
{
    W.time_limit = opt->time_limit > 0 ? opt->time_limit : TS_GRADE_TIME_LIMIT;
    W.deadline_ms = now_ms() + 1000L * W.time_limit;
    W.fate = FATE_NONE;
    W.noticelen = 0;
    W.notice[0] = '\0';
    if (!W.running)
        worker_start();
}

/* The signal that ended the worker (through bwrap: its exit code 128 + signal). */
static int death_signal(void)
{
    int st = W.wstatus;
    if (WIFSIGNALED(st))
        return WTERMSIG(st);
    if (W.sandboxed && WIFEXITED(st) && WEXITSTATUS(st) > 128 && WEXITSTATUS(st) < 128 + 65)
        return WEXITSTATUS(st) - 128;
    return 0;
}

static void died_text(char *fate, size_t size)
{
    int sig = death_signal();
    if (sig == SIGSYS)
        snprintf(fate, size, "killed by the sandbox: a forbidden system call");
    else if (sig == SIGXCPU)
        snprintf(fate, size, "CPU time limit %d s exceeded",
                 W.time_limit * (TS_GRADE_CHECK_COUNT + 1));
    else if (sig)
        snprintf(fate, size, "crashed (signal %d: %s)", sig, strsignal(sig));
    else
        snprintf(fate, size, "exited with status %d in the middle of the check",
                 WIFEXITED(W.wstatus) ? WEXITSTATUS(W.wstatus) : -1);
}

void ts_grade_worker_end(char *fate, size_t size, char *note, size_t nsize)
{
    *fate = *note = '\0';
    if (W.running)
        drain_ready(0);
    unsigned long long bytes = 0;
    if (W.noticelen && sscanf(W.notice, "alloc %llu", &bytes) == 1)
        snprintf(note, nsize, "memory limit %ld MB exceeded (an allocation of %.3g MB failed)",
                 W.memory_mb, (double)bytes / 1048576.0);
    switch (W.fate) {
    case FATE_NONE: return;
    case FATE_TIMEOUT: snprintf(fate, size, "timed out: time limit %d s exceeded", W.time_limit);
        break;
    case FATE_PROTOCOL: snprintf(fate, size, "answered out of protocol (%s)", W.why); break;
    case FATE_START: snprintf(fate, size, "could not start: %s", W.why); break;
    default: died_text(fate, size);
    }
    W.fate = FATE_NONE;
}

size_t ts_grade_worker_output(char *buf, size_t size)
{
    size_t n = W.outlen < size - 1 ? W.outlen : size - 1;
    memcpy(buf, W.out, n);
    untrusted_text(buf, n);
    if (W.dropped && n + 64 < size)
        n += (size_t)snprintf(buf + n, size - n, "\n[%zu more bytes not kept]\n", W.dropped);
    W.outlen = W.dropped = 0;
    return n;
}

void ts_grade_worker_alloc_arm(int on) { W.armed = on; }
long ts_grade_worker_alloc_count(void) { return W.allocs; }

/* The grader's sandbox: a worker that runs a submission is started under
 * bubblewrap (Debian's bubblewrap: of the file system only /usr, the
 * loader's files and the program and the submission, read-only, a private
 * 64 MB tmpfs on /tmp as the only writable place (the program and
 * the submission bound read-only in it, under /tmp/.grader), no network, its
 * own PID namespace that dies with the grader, no capabilities), and
 * limits itself before it loads the submission (setrlimit,
 * PR_SET_NO_NEW_PRIVS, a libseccomp filter that kills the process on
 * network, process creation, exec, ptrace, mount, signals sent to other
 * processes, and the TIOCSTI and TIOCLINUX ioctls).  The worker stays in the
 * grader's session (no --new-session): in a session of its own the
 * scheduler's autogroup delayed every round trip of the protocol, 1.2-2.1 s
 * a grade against 0.7-0.9 s; the ioctl rule is what --new-session was for.  Killing bwrap kills the namespace's init and so
 * every process the submission could have started.  Without the sandbox
 * (--no-sandbox, for trusted code or a machine without namespaces) the
 * worker is a plain child in its own process group. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "grade_worker.h"
#include "tstep/status.h"
#include "core/ext.h"

#define BWRAP "bwrap"
#define TMPFS_BYTES "67108864"

/* bwrap's options, before the worker's own command line: of the host's
 * files only what a program needs to start (the system's programs and
 * libraries, the loader's cache, the BLAS alternatives), read-only, so a
 * submission cannot read other students' files, the grader's folders or
 * /etc's secrets; not /usr/local, nor an installed tstep library (hidden
 * below), which holds every reference stepper; none of the grader's
 * environment (its variables may hold secrets, and what the worker prints
 * reaches the student); /dev/tty is /dev/null, so the grader's terminal is
 * out of reach (the worker stays in the grader's session, docs/grading.md) */
static const char *const bwrap_args[] = {
    BWRAP, "--ro-bind", "/usr", "/usr", "--ro-bind-try", "/lib", "/lib",
    "--ro-bind-try", "/lib64", "/lib64", "--ro-bind-try", "/bin", "/bin",
    "--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
    "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--tmpfs", "/usr/local",
    "--dev", "/dev", "--ro-bind", "/dev/null", "/dev/tty", "--proc", "/proc",
    "--size", TMPFS_BYTES, "--tmpfs", "/tmp", "--unshare-all", "--die-with-parent",
    "--cap-drop", "ALL", "--clearenv", "--setenv", "OMP_NUM_THREADS", "1",
    "--setenv", TS_GRADE_WORKER_MARK, "1", "--chdir", "/tmp", NULL};

/* An installed tstep's libraries and program (every reference stepper is
 * in them) under the folders the sandbox shows. */
static const char *const installed[] = {"/usr/lib/libtstep*", "/usr/lib/*/libtstep*",
                                        "/usr/lib64/libtstep*", "/usr/bin/tstep*"};

#define SANDBOX_ARGS 160

/* bwrap's command line for the worker's argv and its binds (pairs from,
 * to), into all[] (SANDBOX_ARGS); *found holds the glob of the installed
 * files hidden (globfree after the exec).  Made before the fork: glob
 * allocates. */
static void sandbox_command(const char *const *argv, const char *const *binds, const char **all,
                            glob_t *found)
{
    int n = 0, flags = 0;
    memset(found, 0, sizeof *found);
    for (size_t i = 0; i < sizeof installed / sizeof *installed; i++, flags = GLOB_APPEND)
        glob(installed[i], flags | GLOB_NOSORT, NULL, found);
    for (int i = 0; bwrap_args[i]; i++)
        all[n++] = bwrap_args[i];
    for (size_t i = 0; i < found->gl_pathc && n < SANDBOX_ARGS - 60; i++) {
        all[n++] = "--ro-bind";
        all[n++] = "/dev/null";
        all[n++] = found->gl_pathv[i];
    }
    for (int i = 0; binds && binds[i] && binds[i + 1] && n < SANDBOX_ARGS - 24; i += 2) {
        all[n++] = "--ro-bind";
        all[n++] = binds[i];
        all[n++] = binds[i + 1];
    }
    all[n++] = "--";
    for (int i = 0; argv[i] && n < SANDBOX_ARGS - 1; i++)
        all[n++] = argv[i];
    all[n] = NULL;
}

/* In the child: the pipes onto fds 0..5, every other fd closed, then exec
 * (the worker itself, or bwrap's command line `all`). */
static void child_exec(const char *const *argv, const char *const *all, int sandboxed,
                       const int fd[6])
{
    int null = open("/dev/null", O_RDONLY);
    int tmp[6];
    for (int i = 0; i < 6; i++) /* above 5 first, so that no dup2 overwrites a source */
        tmp[i] = fcntl(i == 0 ? null : fd[i], F_DUPFD, 16);
    for (int i = 0; i < 6; i++)
        dup2(tmp[i], i);
    for (int i = 6; i < 1024; i++)
        close(i);
    if (!sandboxed) { /* trusted code (--no-sandbox): the environment as it is */
        setenv(TS_GRADE_WORKER_MARK, "1", 1);
        setpgid(0, 0);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    /* bwrap itself without the environment too: it is the sandbox's PID 1,
       and /proc/1/environ inside shows what it was started with, whatever
       --clearenv gives its child */
    static char *const no_env[] = {NULL};
    execvpe(BWRAP, (char *const *)all, no_env);
    _exit(127);
}

int ts_sandbox_start(const char *const *argv, const char *const *binds, int sandboxed,
                     ts_sandbox *sb)
{
    int req[2], rep[2], out[2], note[2];
    if (pipe(req) || pipe(rep) || pipe(out) || pipe(note))
        return ts_error(TS_ERR_IO, "grade: pipe failed: %s", strerror(errno));
    const char *all[SANDBOX_ARGS];
    glob_t found;
    sandbox_command(argv, binds, all, &found);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        const int fd[6] = {-1, out[1], out[1], req[0], rep[1], note[1]};
        child_exec(argv, all, sandboxed, fd);
    }
    globfree(&found);
    if (pid < 0)
        return ts_error(TS_ERR_IO, "grade: fork failed: %s", strerror(errno));
    close(req[0]), close(rep[1]), close(out[1]), close(note[1]);
    if (!sandboxed)
        setpgid(pid, pid); /* also here: no race with a kill before the child's own */
    *sb = (ts_sandbox){.pid = pid, .req = req[1], .rep = rep[0], .output = out[0],
                       .notice = note[0], .sandboxed = sandboxed};
    fcntl(sb->req, F_SETFD, FD_CLOEXEC);
    fcntl(sb->rep, F_SETFD, FD_CLOEXEC);
    fcntl(sb->output, F_SETFD, FD_CLOEXEC);
    fcntl(sb->notice, F_SETFD, FD_CLOEXEC);
    signal(SIGPIPE, SIG_IGN); /* a worker that died: EPIPE, not the grader's death */
    return TS_OK;
}

static void close_fds(ts_sandbox *sb)
{
    int *fds[] = {&sb->req, &sb->rep, &sb->output, &sb->notice};
    for (int i = 0; i < 4; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
}

int ts_sandbox_reap(ts_sandbox *sb, int ms, int *status)
{
    for (int waited = 0;; waited += 5) {
        pid_t r = waitpid(sb->pid, status, WNOHANG);
        if (r == sb->pid || (r < 0 && errno == ECHILD)) {
            sb->pid = -1;
            return 1;
        }
        if (waited >= ms)
            return 0;
        struct timespec d = {0, 5000000};
        nanosleep(&d, NULL);
    }
}

void ts_sandbox_kill(ts_sandbox *sb, int *status)
{
    int st = 0;
    if (sb->pid > 0) {
        /* bwrap: its death takes the PID namespace (--die-with-parent);
           without it, the process group */
        kill(sb->sandboxed ? sb->pid : -sb->pid, SIGKILL);
        kill(sb->pid, SIGKILL);
        while (waitpid(sb->pid, &st, 0) < 0 && errno == EINTR)
            ;
        sb->pid = -1;
    }
    if (status)
        *status = st;
    close_fds(sb);
}

int ts_sandbox_works(char *why, size_t size)
{
    static int known = -1;
    static char reason[200];
    if (known < 0) {
        const char *argv[] = {"/bin/true", NULL};
        ts_sandbox sb;
        int st = 0;
        known = 0;
        if (ts_sandbox_start(argv, NULL, 1, &sb) == TS_OK) {
            char buf[160] = "";
            ssize_t n = 0;
            struct pollfd p = {.fd = sb.output, .events = POLLIN};
            if (poll(&p, 1, 5000) > 0 && (n = read(sb.output, buf, sizeof buf - 1)) > 0)
                buf[n] = '\0';
            if (!ts_sandbox_reap(&sb, 5000, &st))
                ts_sandbox_kill(&sb, &st);
            close_fds(&sb);
            known = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            buf[strcspn(buf, "\n")] = '\0';
            snprintf(reason, sizeof reason, "%s",
                     WIFEXITED(st) && WEXITSTATUS(st) == 127 ? "bwrap not found (apt-get install "
                                                               "bubblewrap)"
                     : *buf                                  ? buf
                                                             : "bwrap failed");
        }
    }
    if (!known && why)
        snprintf(why, size, "%s", reason);
    return known;
}

/* --- in the worker ------------------------------------------------------------ */

int ts_sandbox_limit_self(const ts_sandbox_limits *l)
{
    /* found before the limits, which would keep the loader from opening it */
    const ts_seccomp_ops *sc = NULL;
    if (l->seccomp && !(sc = ts_ext_need("seccomp", "grade worker: the system call filter",
                                         "libseccomp")))
        return TS_ERR_UNSUPPORTED;
    struct rlimit as = {(rlim_t)l->memory_mb << 20, (rlim_t)l->memory_mb << 20};
    struct rlimit cpu = {(rlim_t)l->cpu_s, (rlim_t)l->cpu_s + 1};
    struct rlimit fsize = {(rlim_t)l->file_bytes, (rlim_t)l->file_bytes};
    struct rlimit zero = {0, 0}, files = {64, 64};
    if (setrlimit(RLIMIT_AS, &as) || setrlimit(RLIMIT_CPU, &cpu) ||
        setrlimit(RLIMIT_FSIZE, &fsize) || setrlimit(RLIMIT_CORE, &zero) ||
        setrlimit(RLIMIT_NPROC, &zero) || setrlimit(RLIMIT_NOFILE, &files))
        return ts_error(TS_ERR_IO, "grade worker: setrlimit: %s", strerror(errno));
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        return ts_error(TS_ERR_IO, "grade worker: PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
    if (sc && sc->load())
        return ts_error(TS_ERR_IO, "grade worker: the seccomp filter could not be loaded");
    return TS_OK;
}

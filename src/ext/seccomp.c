/* The grader worker's system call filter (libseccomp), part of the
 * extension: it kills the process on network, process creation, exec,
 * ptrace, mount, signals sent to other processes, and the TIOCSTI and
 * TIOCLINUX ioctls (src/analysis/sandbox.c loads it after the worker's
 * rlimits; the sandbox as a whole is described there). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "analysis/grade_worker.h"
#include "ext/ext.h"

static int filter_load(void)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return -1;
    static const char *const killed[] = {
        "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
        "fork", "vfork", "execve", "execveat", "ptrace", "mount", "umount2", "unshare",
        "setns", "pivot_root", "chroot", "process_vm_readv", "process_vm_writev",
        "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
        "userfaultfd", "keyctl", "add_key", "request_key", "tkill", "open_by_handle_at",
        NULL};
    int rc = 0;
    const uint32_t kill_it = SCMP_ACT_KILL_PROCESS;
    for (int i = 0; killed[i] && !rc; i++) {
        int nr = seccomp_syscall_resolve_name(killed[i]);
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, kill_it, nr, 0);
    }
    /* a thread may be created (OpenMP), a process not; signals to self only */
    if (!rc)
        rc = seccomp_rule_add(ctx, kill_it, SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    if (!rc)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    /* no typing into the grader's terminal (the worker keeps its session) */
    if (!rc)
        rc = seccomp_rule_add(ctx, kill_it, SCMP_SYS(ioctl), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCSTI));
    if (!rc)
        rc = seccomp_rule_add(ctx, kill_it, SCMP_SYS(ioctl), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCLINUX));
    if (!rc)
        rc = seccomp_rule_add(ctx, kill_it, SCMP_SYS(kill), 1,
                              SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)getpid()));
    if (!rc)
        rc = seccomp_rule_add(ctx, kill_it, SCMP_SYS(tgkill), 1,
                              SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)getpid()));
    if (!rc)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc;
}

const ts_seccomp_ops ts_ext_seccomp = {.load = filter_load};

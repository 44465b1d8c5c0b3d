/* sandbox.c - Landlock and seccomp limits a worker puts on itself
 * (sandbox.h says what and why). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__has_include)
#if __has_include(<linux/landlock.h>)
#include <linux/landlock.h>
#define KBV_HAVE_LANDLOCK_H 1
#endif
#endif

#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif

#if defined(KBV_HAVE_LANDLOCK_H) && defined(SYS_landlock_create_ruleset)
#define KBV_LANDLOCK 1
#endif

static int landlock_abi(void)
{
#ifdef KBV_LANDLOCK
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi > 0 ? (int)abi : 0;
#else
    return 0;
#endif
}

void sandbox_probe(sandbox_support *s)
{
    s->landlock_abi = landlock_abi();
#ifdef SANDBOX_ARCH
    /* 0: no filter yet, 2: filtered already (a container's), which a
     * filter of ours stacks on; -1 (EINVAL): no seccomp in this kernel. */
    s->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
#else
    s->seccomp = 0;
#endif
}

const char *sandbox_describe(const sandbox_support *s, char *buf, size_t n)
{
    if (s->landlock_abi > 0 && s->seccomp)
        snprintf(buf, n, "landlock abi %d, seccomp", s->landlock_abi);
    else if (s->landlock_abi > 0)
        snprintf(buf, n, "landlock abi %d", s->landlock_abi);
    else if (s->seccomp)
        snprintf(buf, n, "seccomp");
    else
        snprintf(buf, n, "none");
    return buf;
}

#ifdef KBV_LANDLOCK
/* The rights that write to the file system at the kernel's ABI: every one
 * Landlock has but reading, listing, executing and device ioctls (the
 * CUDA driver's descriptors are opened before, and reading is how the
 * libraries load their modules). */
static uint64_t write_rights(int abi)
{
    uint64_t r = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                 LANDLOCK_ACCESS_FS_MAKE_SYM;
#ifdef LANDLOCK_ACCESS_FS_REFER
    if (abi >= 2) r |= LANDLOCK_ACCESS_FS_REFER;
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
    if (abi >= 3) r |= LANDLOCK_ACCESS_FS_TRUNCATE;
#endif
    (void)abi;
    return r;
}

static int allow_beneath(int ruleset, const char *dir, uint64_t rights, kbv_err *e)
{
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return err_set(e, KBV_ERUNTIME, "sandbox: %s: %s", dir, strerror(errno));
    struct landlock_path_beneath_attr pb = {.allowed_access = rights, .parent_fd = fd};
    long rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
    int saved = errno;
    close(fd);
    if (rc != 0) return err_set(e, KBV_ERUNTIME, "sandbox: landlock rule for %s: %s", dir, strerror(saved));
    return 0;
}

static int apply_landlock(int abi, const char *writable_dir, kbv_err *e)
{
    struct landlock_ruleset_attr ra;
    memset(&ra, 0, sizeof ra);
    ra.handled_access_fs = write_rights(abi);
    size_t size = offsetof(struct landlock_ruleset_attr, handled_access_fs) + sizeof ra.handled_access_fs;
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &ra, size, 0);
    if (ruleset < 0) return err_set(e, KBV_ERUNTIME, "sandbox: landlock ruleset: %s", strerror(errno));
    /* /proc/self too: the runtime names its threads by writing
     * /proc/self/task/<tid>/comm, and writing the process's own files
     * there gives a candidate nothing it lacks in the process itself. */
    int rc = allow_beneath(ruleset, "/dev", ra.handled_access_fs, e);
    if (!rc) rc = allow_beneath(ruleset, "/proc/self", ra.handled_access_fs, e);
    if (!rc && writable_dir) rc = allow_beneath(ruleset, writable_dir, ra.handled_access_fs, e);
    if (!rc && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
        rc = err_set(e, KBV_ERUNTIME, "sandbox: landlock restrict: %s", strerror(errno));
    close(ruleset);
    return rc;
}
#endif

#ifdef SANDBOX_ARCH
#define DENY_NR(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

/* The first argument's low 32 bits (a pid_t) equal to v: allowed. */
#define ALLOW_ARG(v) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(v), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
/* System call nr allowed only with this process as its first argument. */
#define SELF_ONLY(nr)                                                                                            \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(nr), 0, 4),                                                   \
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])), ALLOW_ARG(self),            \
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

static int apply_seccomp(kbv_err *e)
{
    uint32_t self = (uint32_t)getpid();
    struct sock_filter f[] = {
        /* Another architecture's system calls (int 0x80 on x86-64) have
         * other numbers: refused whole. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
        /* x32 numbers, the same calls by another number */
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
        DENY_NR(SYS_ptrace),
        DENY_NR(SYS_process_vm_readv),
        DENY_NR(SYS_process_vm_writev),
        DENY_NR(SYS_kcmp),
        DENY_NR(SYS_bpf),
        DENY_NR(SYS_perf_event_open),
        DENY_NR(SYS_userfaultfd),
        DENY_NR(SYS_seccomp),
#ifdef SYS_pidfd_getfd
        DENY_NR(SYS_pidfd_getfd),
#endif
#ifdef SYS_io_uring_setup
        DENY_NR(SYS_io_uring_setup),
        DENY_NR(SYS_io_uring_enter),
        DENY_NR(SYS_io_uring_register),
#endif
        /* Signals reach this process only (its process group with kill:
         * collect makes each worker a group of its own), so that a
         * candidate cannot stop kbv-collect or another pair's worker. */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kill, 0, 8),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        ALLOW_ARG(self),
        ALLOW_ARG(0),
        ALLOW_ARG(-(uint32_t)self),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        SELF_ONLY(SYS_tkill),
        SELF_ONLY(SYS_tgkill),
        SELF_ONLY(SYS_rt_sigqueueinfo),
        SELF_ONLY(SYS_rt_tgsigqueueinfo),
#ifdef SYS_pidfd_send_signal
        DENY_NR(SYS_pidfd_send_signal),
#endif
        /* No process but this one: a program the candidate started could
         * open a CUDA context of its own and keep the GPU busy while the
         * baselines are timed, out of reach of the worker's interposers
         * and synchronises.  clone3 passes its flags in memory, which a
         * filter cannot read, so it answers ENOSYS, on which glibc makes
         * its threads with clone; clone is allowed for a thread of this
         * process (CLONE_THREAD) only, so fork, vfork, posix_spawn and
         * system fail here with EPERM, and so does every exec. */
#ifdef SYS_clone3
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#ifdef SYS_fork
        DENY_NR(SYS_fork),
#endif
#ifdef SYS_vfork
        DENY_NR(SYS_vfork),
#endif
        DENY_NR(SYS_execve),
#ifdef SYS_execveat
        DENY_NR(SYS_execveat),
#endif
        /* Nor a socket: through one, a daemon already running (systemd
         * over D-Bus, a container engine's API, on a Unix path or on
         * localhost) could start the program for the candidate, and
         * Landlock limits neither a Unix path's connect nor, below ABI 4,
         * TCP.  The worker and CUDA make none once CUDA has started;
         * socketpair stays, as it reaches no other process. */
        DENY_NR(SYS_socket),
        /* prctl(PR_SET_SECCOMP, ...), the other way to add a filter */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_SECCOMP, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = (unsigned short)(sizeof f / sizeof f[0]), .filter = f};
    long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
    if (rc > 0) return err_set(e, KBV_ERUNTIME, "sandbox: seccomp filter: thread %ld cannot take it", rc);
    if (rc != 0) return err_set(e, KBV_ERUNTIME, "sandbox: seccomp filter: %s", strerror(errno));
    return 0;
}
#endif

int sandbox_enter(const char *writable_dir, int require, sandbox_support *applied, kbv_err *e)
{
    sandbox_support s;
    sandbox_probe(&s);
    applied->landlock_abi = 0;
    applied->seccomp = 0;
    if (require && (s.landlock_abi <= 0 || !s.seccomp)) {
        char d[64];
        return err_set(e, KBV_ERUNTIME, "sandbox: required, but this kernel offers %s (Landlock and seccomp needed)",
                       sandbox_describe(&s, d, sizeof d));
    }
    if (s.landlock_abi <= 0 && !s.seccomp) return 0;
    /* Both need it without CAP_SYS_ADMIN; it also keeps a set-user-ID
     * program from gaining what the worker lacks.  Threads started later
     * inherit it, which the seal's TSYNC needs. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return err_set(e, KBV_ERUNTIME, "sandbox: no_new_privs: %s", strerror(errno));
#ifdef KBV_LANDLOCK
    if (s.landlock_abi > 0) {
        int rc = apply_landlock(s.landlock_abi, writable_dir, e);
        if (rc) return rc;
        applied->landlock_abi = s.landlock_abi;
    }
#else
    (void)writable_dir;
#endif
    return 0;
}

int sandbox_seal(sandbox_support *applied, kbv_err *e)
{
    sandbox_support s;
    sandbox_probe(&s);
#ifdef SANDBOX_ARCH
    /* TSYNC puts the filter on the threads the CUDA runtime and driver
     * have started since sandbox_enter too, or fails (a thread already
     * under a filter that is not an ancestor of this one). */
    if (s.seccomp) {
        int rc = apply_seccomp(e);
        if (rc) return rc;
        applied->seccomp = 1;
    }
#else
    (void)s;
    (void)applied;
    (void)e;
#endif
    return 0;
}

int sandbox_apply(const char *writable_dir, int require, sandbox_support *applied, kbv_err *e)
{
    int rc = sandbox_enter(writable_dir, require, applied, e);
    if (!rc) rc = sandbox_seal(applied, e);
    return rc;
}

/* What the trial child of sandbox_try sends back. */
typedef struct {
    int rc;
    sandbox_support got;
    char msg[KBV_ERR_MSG_MAX];
} trial_report;

int sandbox_try(const char *writable_dir, int require, sandbox_support *applied, kbv_err *e)
{
    /* The child writes its outcome, then its message, on a pipe. */
    int p[2];
    if (pipe(p) != 0) return err_set(e, KBV_ERUNTIME, "sandbox: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(p[0]);
        close(p[1]);
        return err_set(e, KBV_ERUNTIME, "sandbox: fork: %s", strerror(saved));
    }
    if (pid == 0) {
        close(p[0]);
        trial_report out;
        memset(&out, 0, sizeof out);
        kbv_err ce = {0};
        out.rc = sandbox_apply(writable_dir, require, &out.got, &ce);
        memcpy(out.msg, ce.msg, sizeof out.msg);
        ssize_t w = write(p[1], &out, sizeof out);
        _exit(w == (ssize_t)sizeof out ? 0 : 1);
    }
    close(p[1]);
    trial_report in;
    size_t have = 0;
    while (have < sizeof in) {
        ssize_t r = read(p[0], (char *)&in + have, sizeof in - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        have += (size_t)r;
    }
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (have != sizeof in) return err_set(e, KBV_ERUNTIME, "sandbox: the trial process reported nothing");
    *applied = in.got;
    if (in.rc) {
        in.msg[sizeof in.msg - 1] = 0;
        return err_set(e, in.rc, "%s", in.msg);
    }
    return 0;
}

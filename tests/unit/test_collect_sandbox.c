/* Unit tests of sandbox.c, the limits a worker puts on itself: after
 * sandbox_apply a process writes files only beneath the folder it named
 * and /dev, still reads elsewhere, and is refused ptrace, another
 * process's memory, a seccomp filter of its own, any new process (its
 * threads stay allowed, and the seal reaches threads started before it)
 * and any new socket (a socketpair stays); sandbox_enter alone still lets
 * a process start and open a socket; sandbox_try reports
 * the same without limiting its caller.  Each check runs in a child
 * process, since the limits cannot be lifted.  Skipped on a kernel
 * without Landlock or seccomp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"

/* The failed expectation's line in the child's exit status (0: all held). */
#define EXPECT(cond)                                                                                               \
    do {                                                                                                           \
        if (!(cond)) _exit(__LINE__ % 250 + 1);                                                                    \
    } while (0)

static int can_write(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return -errno;
    close(fd);
    return 0;
}

/* No socket of any family, through which a daemon could be asked to
 * start a program; a socketpair, which reaches no other process, stays.
 * 0 when so. */
static int socket_refused(void)
{
    static const int families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        errno = 0;
        int fd = socket(families[i], SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 || errno != EPERM) return __LINE__;
    }
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return __LINE__;
    close(pair[0]);
    close(pair[1]);
    return 0;
}

/* Every way of starting a process fails with EPERM (system's shell too);
 * 0 when all do.  Run on the thread that checks it. */
static int spawn_refused(void)
{
    errno = 0;
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid >= 0 || errno != EPERM) return __LINE__;
#ifdef SYS_fork
    errno = 0;
    if (syscall(SYS_fork) >= 0 || errno != EPERM) return __LINE__;
#endif
    /* clone3's flags are out of the filter's sight: ENOSYS, whatever asked */
#ifdef SYS_clone3
    errno = 0;
    if (syscall(SYS_clone3, NULL, 0) >= 0 || errno != ENOSYS) return __LINE__;
#endif
    errno = 0;
    if (syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL) >= 0 || errno != EPERM) return __LINE__;
    /* an exec that succeeded would end the test's process with status 1 */
    char *argv[] = {"false", NULL}, *envp[] = {NULL};
    errno = 0;
    if (execve("/bin/false", argv, envp) == 0 || errno != EPERM) return __LINE__;
#ifdef SYS_execveat
    errno = 0;
    if (syscall(SYS_execveat, AT_FDCWD, "/bin/false", argv, envp, 0) == 0 || errno != EPERM) return __LINE__;
#endif
    pid_t sp = 0;
    if (posix_spawn(&sp, "/bin/false", NULL, NULL, argv, envp) == 0) return __LINE__;
    int st = system("true");
    if (st == 0) return __LINE__;
    return 0;
}

static void confined_child(const char *allowed, const char *outside, pid_t parent)
{
    sandbox_support got;
    kbv_err e = {0};
    EXPECT(sandbox_apply(allowed, 1, &got, &e) == 0);
    EXPECT(got.landlock_abi > 0 && got.seccomp == 1);
    char p[4200];
    snprintf(p, sizeof p, "%s/inside", allowed);
    EXPECT(can_write(p) == 0);
    snprintf(p, sizeof p, "%s/sub", allowed);
    EXPECT(mkdir(p, 0700) == 0);
    /* outside: neither a new file nor a write to an existing one */
    snprintf(p, sizeof p, "%s/new", outside);
    EXPECT(can_write(p) == -EACCES);
    snprintf(p, sizeof p, "%s/existing", outside);
    EXPECT(open(p, O_WRONLY | O_APPEND) < 0 && errno == EACCES);
    EXPECT(unlink(p) != 0 && errno == EACCES);
    /* reading stays allowed, and so do the device nodes */
    int fd = open(p, O_RDONLY);
    EXPECT(fd >= 0);
    close(fd);
    fd = open("/dev/null", O_WRONLY);
    EXPECT(fd >= 0);
    close(fd);
    /* its own /proc files (thread names) yes, its parent's no */
    snprintf(p, sizeof p, "/proc/self/task/%d/comm", (int)getpid());
    fd = open(p, O_WRONLY);
    EXPECT(fd >= 0);
    close(fd);
    snprintf(p, sizeof p, "/proc/%d/comm", (int)parent);
    EXPECT(open(p, O_WRONLY) < 0 && errno == EACCES);
    /* the parent's memory, through ptrace or process_vm_readv */
    EXPECT(ptrace(PTRACE_ATTACH, parent, 0, 0) != 0 && errno == EPERM);
    /* Landlock alone refuses the attach to a process outside its domain;
     * being traced by one is seccomp's to refuse */
    EXPECT(ptrace(PTRACE_TRACEME, 0, 0, 0) != 0 && errno == EPERM);
    char buf[8], here[8] = {0};
    struct iovec local = {buf, sizeof buf}, remote = {here, sizeof here};
    EXPECT(process_vm_readv(parent, &local, 1, &remote, 1, 0) < 0 && errno == EPERM);
    /* a filter of the candidate's own, by either call */
    EXPECT(syscall(SYS_seccomp, 1 /* SECCOMP_SET_MODE_FILTER */, 0, NULL) != 0 && errno == EPERM);
    EXPECT(prctl(PR_SET_SECCOMP, 2, 0, 0, 0) != 0 && errno == EPERM);
    /* signals: to itself yes, to its parent (kbv-collect's place) no */
    EXPECT(kill(getpid(), 0) == 0);
    EXPECT(kill(parent, 0) != 0 && errno == EPERM);
    EXPECT(syscall(SYS_tgkill, parent, parent, 0) != 0 && errno == EPERM);
    /* and no process of its own, nor a socket to ask a daemon for one */
    EXPECT(spawn_refused() == 0);
    EXPECT(socket_refused() == 0);
    _exit(0);
}

static void *spawn_refused_thread(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)spawn_refused();
}

static void *wait_for_seal(void *arg)
{
    /* started before sandbox_seal: it must hold here too (TSYNC) */
    int *fd = arg;
    char c;
    if (read(fd[0], &c, 1) != 1) return (void *)(intptr_t)__LINE__;
    return (void *)(intptr_t)spawn_refused();
}

static void staged_child(const char *allowed)
{
    sandbox_support got;
    kbv_err e = {0};
    EXPECT(sandbox_enter(allowed, 1, &got, &e) == 0);
    EXPECT(got.landlock_abi > 0 && got.seccomp == 0);
    /* stage one leaves process creation alone (the driver's helper) */
    pid_t pid = fork();
    if (pid == 0) _exit(7);
    EXPECT(pid > 0);
    int st = 0;
    EXPECT(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 7);
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT(sock >= 0);
    close(sock);
    int fd[2];
    EXPECT(pipe(fd) == 0);
    pthread_t early;
    EXPECT(pthread_create(&early, NULL, wait_for_seal, fd) == 0);
    EXPECT(sandbox_seal(&got, &e) == 0);
    EXPECT(got.seccomp == 1);
    EXPECT(write(fd[1], "s", 1) == 1);
    void *res = NULL;
    EXPECT(pthread_join(early, &res) == 0);
    EXPECT(res == NULL);
    /* the sealing thread, and a thread made afterwards (through clone3's
     * ENOSYS and glibc's clone), are refused alike */
    EXPECT(spawn_refused() == 0);
    EXPECT(socket_refused() == 0);
    pthread_t late;
    EXPECT(pthread_create(&late, NULL, spawn_refused_thread, NULL) == 0);
    EXPECT(pthread_join(late, &res) == 0);
    EXPECT(res == NULL);
    _exit(0);
}

static int have_sandbox(void)
{
    sandbox_support s;
    sandbox_probe(&s);
    return s.landlock_abi > 0 && s.seccomp;
}

static void test_confined(void **state)
{
    (void)state;
    if (!have_sandbox()) skip();
    char allowed[] = "/tmp/kbv-sbx-in.XXXXXX", outside[] = "/tmp/kbv-sbx-out.XXXXXX";
    assert_non_null(mkdtemp(allowed));
    assert_non_null(mkdtemp(outside));
    char p[4200];
    snprintf(p, sizeof p, "%s/existing", outside);
    assert_int_equal(can_write(p), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) confined_child(allowed, outside, parent);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    /* a non-zero status is the failed EXPECT's line (mod 250, plus 1) */
    assert_int_equal(WEXITSTATUS(st), 0);
    /* the parent is not limited, and the child's refused file is absent */
    snprintf(p, sizeof p, "%s/new", outside);
    assert_int_equal(access(p, F_OK), -1);
    assert_int_equal(can_write(p), 0);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", allowed, outside);
    assert_int_equal(system(cmd), 0);
}

static void test_staged(void **state)
{
    (void)state;
    if (!have_sandbox()) skip();
    char allowed[] = "/tmp/kbv-sbx-st.XXXXXX";
    assert_non_null(mkdtemp(allowed));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) staged_child(allowed);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    /* a non-zero status is the failed EXPECT's line (mod 250, plus 1) */
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(rmdir(allowed), 0);
}

static void test_try(void **state)
{
    (void)state;
    if (!have_sandbox()) skip();
    sandbox_support got;
    kbv_err e = {0};
    assert_int_equal(sandbox_try("/tmp", 1, &got, &e), 0);
    assert_true(got.landlock_abi > 0);
    assert_int_equal(got.seccomp, 1);
    char d[64];
    assert_non_null(strstr(sandbox_describe(&got, d, sizeof d), "landlock abi "));
    /* the caller itself stays free */
    char p[] = "/tmp/kbv-sbx-try.XXXXXX";
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    close(fd);
    unlink(p);
    /* a folder that is not there is the child's error, reported */
    assert_int_not_equal(sandbox_try("/nonexistent/kbv", 1, &got, &e), 0);
    assert_non_null(strstr(e.msg, "/nonexistent/kbv"));
}

static void test_describe(void **state)
{
    (void)state;
    char d[64];
    sandbox_support none = {0, 0}, both = {4, 1}, sec = {0, 1};
    assert_string_equal(sandbox_describe(&none, d, sizeof d), "none");
    assert_string_equal(sandbox_describe(&both, d, sizeof d), "landlock abi 4, seccomp");
    assert_string_equal(sandbox_describe(&sec, d, sizeof d), "seccomp");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_confined),
        cmocka_unit_test(test_staged),
        cmocka_unit_test(test_try),
        cmocka_unit_test(test_describe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests of the worker limits that kbv-collect adds for hostile
 * candidates (super.c), with /bin/sh standing in for the worker: a process
 * that leaves the worker's process group with setsid survives the group
 * kill but not super_reap_strays; a worker dies with its supervisor
 * (PR_SET_PDEATHSIG); a worker has no file descriptor above 3, however high
 * the supervisor's are; a worker runs under limits on open files, file
 * size, core files, CPU time and processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "super.h"

typedef struct {
    char line[256];
    int n;
} sink;

static int first_line(void *ctx, const char *line, size_t len, int authentic, kbv_err *e)
{
    (void)e;
    (void)authentic;
    sink *s = ctx;
    if (s->n++ == 0) snprintf(s->line, sizeof s->line, "%.*s", (int)len, line);
    return 0;
}

static void run_sh(const char *script, sink *s, super_result *r)
{
    char tmpl[] = "/tmp/kbv-test-strays-XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    super_spec sp = {"/bin/sh", argv, dir, NULL, 20, 1 << 20, NULL};
    super_child *c = NULL;
    kbv_err e;
    assert_int_equal(super_start(&sp, &c, &e), 0);
    memset(s, 0, sizeof *s);
    assert_int_equal(super_finish(c, first_line, s, r, &e), 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_setsid_stray_is_reaped(void **state)
{
    (void)state;
    super_guard_parent();
    sink s;
    super_result r;
    /* The stray reports its pid on fd 3, then sleeps in a session of its
     * own; the worker exits at once. */
    run_sh("setsid sh -c 'echo $$ >&3; exec sleep 100' </dev/null >/dev/null 2>&1 & sleep 0.5; exit 0", &s, &r);
    assert_int_equal(r.exited, 1);
    assert_int_equal(r.code, 0);
    long pid = strtol(s.line, NULL, 10);
    assert_true(pid > 1);
    /* Alive after the group kill: it left the group. */
    assert_int_equal(kill((pid_t)pid, 0), 0);
    assert_true(super_reap_strays(NULL, 0) >= 1);
    errno = 0;
    assert_int_equal(kill((pid_t)pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_int_equal(super_reap_strays(NULL, 0), 0);
}

static void test_worker_dies_with_supervisor(void **state)
{
    (void)state;
    /* A middle process supervises a worker that would sleep for 100 s and
     * is then killed with SIGKILL: the worker must follow it, and comes to
     * us (a subreaper) to be reaped. */
    super_guard_parent();
    char tmpl[] = "/tmp/kbv-test-strays-XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    pid_t mid = fork();
    assert_true(mid >= 0);
    if (mid == 0) {
        char *argv[] = {"sh", "-c", "echo $$ >pid.tmp && mv pid.tmp pid && exec sleep 100", NULL};
        super_spec sp = {"/bin/sh", argv, dir, NULL, 200, 1 << 20, NULL};
        super_child *c = NULL;
        kbv_err e;
        if (super_start(&sp, &c, &e) != 0) _exit(1);
        pause();
        _exit(0);
    }
    /* The worker writes its pid into its folder. */
    char path[128];
    snprintf(path, sizeof path, "%s/pid", dir);
    int w = 0;
    for (int k = 0; k < 500 && w <= 0; k++) {
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%d", &w) != 1) w = 0;
            fclose(f);
        }
        if (w <= 0) usleep(10000);
    }
    assert_true(w > 1);
    assert_int_equal(kill(w, 0), 0);
    kill(mid, SIGKILL);
    waitpid(mid, NULL, 0);
    /* The worker was reparented (to us: we are a subreaper) and killed. */
    int st = 0;
    assert_int_equal(waitpid(w, &st, 0), w);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGKILL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_no_high_fds(void **state)
{
    (void)state;
    int fd = open("/dev/null", O_RDONLY);
    assert_true(fd >= 0);
    int high = fcntl(fd, F_DUPFD, 2000);
    if (high < 0) {
        close(fd);
        skip(); /* RLIMIT_NOFILE below 2001 here */
    }
    sink s;
    super_result r;
    /* The worker lists its open descriptors above 3. */
    run_sh("ls /proc/$$/fd | awk '$1 > 3' | tr '\\n' ' ' >&2; echo done >&3", &s, &r);
    close(high);
    close(fd);
    assert_string_equal(s.line, "done");
    /* ls itself opens one descriptor for the folder it lists, at most. */
    char *end = NULL;
    long n = 0;
    for (const char *t = r.err_tail; *t; t = end) {
        long v = strtol(t, &end, 10);
        if (end == t) break;
        if (v == 2000 || v == high) n++;
    }
    assert_int_equal(n, 0);
}

/* The worker's limits as /proc/self/limits shows them: "<name> <soft> <hard> <unit>". */
static void limit_of(const char *tail, const char *name, char *soft, size_t n)
{
    const char *p = strstr(tail, name);
    soft[0] = 0;
    if (!p) return;
    p += strlen(name);
    while (*p == ' ') p++;
    size_t k = 0;
    while (p[k] && p[k] != ' ' && k + 1 < n) k++;
    memcpy(soft, p, k);
    soft[k] = 0;
}

static void test_limits(void **state)
{
    (void)state;
    sink s;
    super_result r;
    run_sh("cat /proc/self/limits >&2; echo done >&3", &s, &r);
    assert_string_equal(s.line, "done");
    char v[64];
    limit_of(r.err_tail, "Max open files", v, sizeof v);
    assert_string_equal(v, "4096");
    limit_of(r.err_tail, "Max file size", v, sizeof v);
    assert_string_equal(v, "1048576"); /* run_sh's fsize_limit */
    limit_of(r.err_tail, "Max core file size", v, sizeof v);
    assert_string_equal(v, "0");
    limit_of(r.err_tail, "Max cpu time", v, sizeof v);
    assert_string_equal(v, "140"); /* 4 x the 20 s wall limit + 60 */
    /* Processes: finite, with room for 4096 more than the user runs now
     * (unless the hard limit was lower already). */
    limit_of(r.err_tail, "Max processes", v, sizeof v);
    assert_string_not_equal(v, "unlimited");
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NPROC, &rl), 0);
    if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= 8192) assert_true(strtol(v, NULL, 10) >= 4096);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_setsid_stray_is_reaped),
        cmocka_unit_test(test_worker_dies_with_supervisor),
        cmocka_unit_test(test_no_high_fds),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

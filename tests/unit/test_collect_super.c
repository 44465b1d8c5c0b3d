/* Unit tests of worker isolation (super.c) with /bin/sh standing in for the
 * worker: records arrive line by line from fd 3 (a torn last line is not
 * delivered), the exit status, a death by signal and the wall-clock limit
 * are told apart, stderr's tail is kept, the child runs in its scratch
 * folder with CUDA_VISIBLE_DEVICES set, and a grandchild that keeps the pipe
 * open does not keep collect waiting.  Also build_capture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build.h"
#include "super.h"

typedef struct {
    char lines[16][256];
    int auth[16];
    int n;
} sink;

static int collect_line(void *ctx, const char *line, size_t len, int authentic, kbv_err *e)
{
    (void)e;
    sink *s = ctx;
    if (s->n < 16) {
        s->auth[s->n] = authentic;
        snprintf(s->lines[s->n++], sizeof s->lines[0], "%.*s", (int)len, line);
    }
    return 0;
}

static const unsigned char test_key[CHAN_KEY_LEN] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                                      17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

static int run_sh(const char *script, double timeout, sink *s, super_result *r)
{
    char tmpl[] = "/tmp/kbv-test-super-XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    super_spec sp = {"/bin/sh", argv, dir, "3", timeout, 1 << 20, test_key};
    super_child *c = NULL;
    kbv_err e;
    assert_int_equal(super_start(&sp, &c, &e), 0);
    memset(s, 0, sizeof *s);
    int rc = super_finish(c, collect_line, s, r, &e);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return rc;
}

static void test_records_and_exit(void **state)
{
    (void)state;
    sink s;
    super_result r;
    assert_int_equal(run_sh("echo '{\"a\":1}' >&3; echo out; echo oops >&2;"
                            "printf '{\"b\":2}\\n{\"c\":' >&3; exit 3",
                            30, &s, &r), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.lines[0], "{\"a\":1}");
    assert_string_equal(s.lines[1], "{\"b\":2}");
    assert_int_equal(r.exited, 1);
    assert_int_equal(r.code, 3);
    assert_int_equal(r.signo, 0);
    assert_int_equal(r.timed_out, 0);
    assert_string_equal(r.err_tail, "oops\n");
    assert_string_equal(r.out_tail, "out\n");
}

/* The key arrives on CHAN_KEY_FD; a line authenticates only with the MAC
 * of the next sequence number: a forged MAC, a replayed line and a bare
 * line do not, and do not advance the sequence. */
static void test_channel(void **state)
{
    (void)state;
    char m0[CHAN_MAC_HEX + 1], m1[CHAN_MAC_HEX + 1];
    kbv_err e;
    assert_int_equal(chan_mac(test_key, 0, "{\"a\":1}", 7, m0, &e), 0);
    assert_int_equal(chan_mac(test_key, 1, "{\"b\":2}", 7, m1, &e), 0);
    char script[1024];
    snprintf(script, sizeof script,
             "k=$(od -An -tx1 <&4 | tr -d ' \\n'); echo \"key $k\" >&3;"
             "echo '%s {\"a\":1}' >&3;"                 /* authentic, seq 0 */
             "echo '%s {\"a\":1}' >&3;"                 /* replayed: seq 1 wants another MAC */
             "echo '%.63s0 {\"b\":2}' >&3;"             /* forged */
             "echo '{\"b\":2}' >&3;"                    /* no MAC */
             "echo '%s {\"b\":2}' >&3",                 /* authentic, seq 1 */
             m0, m0, m1, m1);
    sink s;
    super_result r;
    assert_int_equal(run_sh(script, 30, &s, &r), 0);
    assert_int_equal(s.n, 6);
    assert_string_equal(s.lines[0], "key 0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20");
    assert_int_equal(s.auth[0], 0);
    assert_int_equal(s.auth[1], 1);
    assert_string_equal(s.lines[1], "{\"a\":1}");
    assert_int_equal(s.auth[2], 0);
    assert_int_equal(s.auth[3], 0);
    assert_int_equal(s.auth[4], 0);
    assert_int_equal(s.auth[5], 1);
    assert_string_equal(s.lines[5], "{\"b\":2}");
}

static void test_signal(void **state)
{
    (void)state;
    sink s;
    super_result r;
    assert_int_equal(run_sh("echo '{}' >&3; kill -SEGV $$", 30, &s, &r), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(r.exited, 0);
    assert_int_equal(r.signo, SIGSEGV);
    assert_int_equal(r.timed_out, 0);
}

static void test_timeout(void **state)
{
    (void)state;
    sink s;
    super_result r;
    assert_int_equal(run_sh("echo '{\"started\":1}' >&3; sleep 60", 0.3, &s, &r), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(r.timed_out, 1);
    assert_int_equal(r.signo, SIGKILL);
}

static void test_environment(void **state)
{
    (void)state;
    sink s;
    super_result r;
    /* cwd is the scratch folder, the GPU is set, fds above 3 are closed,
     * core dumps are off. */
    assert_int_equal(run_sh("echo \"{\\\"gpu\\\":\\\"$CUDA_VISIBLE_DEVICES\\\"}\" >&3;"
                            "case $(pwd) in /tmp/kbv-test-super-*) echo '{\"cwd\":1}' >&3;; esac;"
                            "[ -e /proc/self/fd/5 ] || echo '{\"closed\":1}' >&3;"
                            "echo \"{\\\"core\\\":\\\"$(ulimit -c)\\\"}\" >&3",
                            30, &s, &r), 0);
    assert_int_equal(s.n, 4);
    assert_string_equal(s.lines[0], "{\"gpu\":\"3\"}");
    assert_string_equal(s.lines[1], "{\"cwd\":1}");
    assert_string_equal(s.lines[2], "{\"closed\":1}");
    assert_string_equal(s.lines[3], "{\"core\":\"0\"}");
}

static void test_grandchild_holds_pipe(void **state)
{
    (void)state;
    sink s;
    super_result r;
    /* The worker exits at once but leaves a child with the pipe open; the
     * process group is killed when the worker is reaped. */
    assert_int_equal(run_sh("sleep 60 & echo '{\"x\":1}' >&3; exit 0", 30, &s, &r), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(r.exited, 1);
    assert_int_equal(r.code, 0);
    assert_int_equal(r.timed_out, 0);
    /* One that left the process group (setsid) is not killed with it, and
     * still does not keep collect waiting. */
    assert_int_equal(run_sh("setsid sleep 5 & echo '{\"y\":1}' >&3; exit 0", 30, &s, &r), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(r.exited, 1);
    assert_int_equal(r.timed_out, 0);
}

static void test_capture(void **state)
{
    (void)state;
    char *argv[] = {"sh", "-c", "echo hello; echo world >&2; exit 4", NULL};
    char *out = NULL;
    int st = 0;
    kbv_err e;
    assert_int_equal(build_capture(argv, 4096, 30, &out, &st, &e), 0);
    assert_string_equal(out, "hello\nworld\n");
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 4);
    free(out);
    char *argv2[] = {"sh", "-c", "sleep 60", NULL};
    assert_int_equal(build_capture(argv2, 4096, 0.2, &out, &st, &e), 0);
    assert_int_equal(st, -1);
    free(out);
    char buf[4096];
    setenv("KBV_CACHE", "/tmp/somewhere", 1);
    assert_int_equal(build_cache_dir(buf, sizeof buf, &e), 0);
    assert_string_equal(buf, "/tmp/somewhere");
    unsetenv("KBV_CACHE");
    setenv("XDG_CACHE_HOME", "/x", 1);
    assert_int_equal(build_cache_dir(buf, sizeof buf, &e), 0);
    assert_string_equal(buf, "/x/kbv");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_and_exit), cmocka_unit_test(test_channel), cmocka_unit_test(test_signal),
        cmocka_unit_test(test_timeout),          cmocka_unit_test(test_environment),
        cmocka_unit_test(test_grandchild_holds_pipe), cmocka_unit_test(test_capture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

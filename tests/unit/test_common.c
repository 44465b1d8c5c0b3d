/* Unit tests of common/: SHA-256 against the FIPS 180-2 vectors, atomic
 * files, JSON loading errors, the journal (torn lines, gzip, append after an
 * interruption), SHA256SUMS and strict number parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "afile.h"
#include "cli.h"
#include "jio.h"
#include "log.h"
#include "jnl.h"
#include "sha.h"
#include "sums.h"

static char *make_tmpdir(void)
{
    char tmpl[] = "/tmp/kbv-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)))
        if (ent->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* FIPS 180-2, appendix B: the three SHA-256 examples. */
static void sha_fips_vectors(void **state)
{
    (void)state;
    char hex[SHA_HEX_LEN + 1];
    kbv_err e = {0};
    assert_int_equal(sha_hex_buf("abc", 3, hex, &e), 0);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_int_equal(sha_hex_buf(two, strlen(two), hex, &e), 0);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* One million 'a', fed in uneven pieces through the incremental form. */
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    sha_ctx *c;
    assert_int_equal(sha_begin(&c, &e), 0);
    size_t done = 0, step = 1;
    while (done < 1000000) {
        size_t n = 1000000 - done < step ? 1000000 - done : step;
        assert_int_equal(sha_add(c, a + done, n, &e), 0);
        done += n;
        step = step * 3 + 1;
    }
    assert_int_equal(sha_end(c, hex, &e), 0);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

static void sha_of_file_matches_buffer(void **state)
{
    (void)state;
    char *dir = make_tmpdir(), path[512], a[65], b[65];
    snprintf(path, sizeof path, "%s/f", dir);
    write_text(path, "abc");
    kbv_err e = {0};
    assert_int_equal(sha_hex_file(path, a, &e), 0);
    assert_int_equal(sha_hex_buf("abc", 3, b, &e), 0);
    assert_string_equal(a, b);
    snprintf(path, sizeof path, "%s/missing", dir);
    assert_int_equal(sha_hex_file(path, a, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "missing"));
    free(dir);
}

static void afile_commit_and_abort(void **state)
{
    (void)state;
    char *dir = make_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    kbv_err e = {0};
    afile *f;
    /* An aborted write leaves nothing behind. */
    assert_int_equal(afile_open(&f, path, &e), 0);
    fputs("half", afile_fp(f));
    afile_abort(f);
    assert_int_equal(count_entries(dir), 0);
    /* A committed one appears whole under its name, with no temporary. */
    assert_int_equal(afile_write_all(path, "whole\n", 6, &e), 0);
    char *text;
    size_t len;
    assert_int_equal(afile_read_all(path, &text, &len, &e), 0);
    assert_int_equal(len, 6);
    assert_string_equal(text, "whole\n");
    free(text);
    assert_int_equal(count_entries(dir), 1);
    /* A folder that does not exist is the user's error, named. */
    snprintf(path, sizeof path, "%s/no/such/dir/x", dir);
    assert_int_equal(afile_open(&f, path, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "no/such/dir"));
    snprintf(path, sizeof path, "%s/a/b/c", dir);
    assert_int_equal(afile_mkdirs(path, &e), 0);
    assert_int_equal(afile_mkdirs(path, &e), 0);
    free(dir);
}

static void jio_reports_line_and_column(void **state)
{
    (void)state;
    cJSON *v = NULL;
    kbv_err e = {0};
    const char *bad = "{\n  \"a\": 1,\n  \"b\": ]\n}";
    assert_int_equal(jio_parse(bad, strlen(bad), "m.json", &v, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "m.json"));
    assert_non_null(strstr(e.msg, "line 3"));
    const char *trailing = "{} x";
    assert_int_equal(jio_parse(trailing, strlen(trailing), "t.json", &v, &e), KBV_EINPUT);
    const char *good = "{\"s\": \"x\", \"n\": 2.5, \"i\": 3, \"b\": true, \"a\": []}";
    assert_int_equal(jio_parse(good, strlen(good), "g", &v, &e), 0);
    const char *s;
    double d;
    long long i;
    int b;
    const cJSON *arr;
    assert_int_equal(jio_get_str(v, "s", "g", &s, &e), 0);
    assert_string_equal(s, "x");
    assert_int_equal(jio_get_num(v, "n", "g", &d, &e), 0);
    assert_true(d == 2.5);
    assert_int_equal(jio_get_int(v, "i", "g", &i, &e), 0);
    assert_int_equal(i, 3);
    assert_int_equal(jio_get_int(v, "n", "g", &i, &e), KBV_EINPUT);
    assert_int_equal(jio_get_bool(v, "b", "g", &b, &e), 0);
    assert_int_equal(b, 1);
    assert_int_equal(jio_get_arr(v, "a", "g", &arr, &e), 0);
    assert_int_equal(jio_get_str(v, "n", "g", &s, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "\"n\""));
    assert_int_equal(jio_get_num(v, "zz", "g", &d, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "missing"));
    /* Non-finite numbers are written as null (DESIGN.md section 6). */
    jio_add_num(v, "inf", 1.0 / 0.0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(v, "inf")));
    cJSON_Delete(v);
}

static cJSON *record(int k)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "time");
    cJSON_AddNumberToObject(r, "round", k);
    return r;
}

static void jnl_append_read_torn(void **state)
{
    (void)state;
    char *dir = make_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/samples.jsonl", dir);
    kbv_err e = {0};
    jnl_writer *w;
    assert_int_equal(jnl_open_append(path, &w, &e), 0);
    for (int k = 0; k < 3; k++) {
        cJSON *r = record(k);
        assert_int_equal(jnl_append(w, r, &e), 0);
        cJSON_Delete(r);
    }
    assert_int_equal(jnl_close_writer(w, &e), 0);
    /* An interrupted writer leaves half a line behind. */
    FILE *f = fopen(path, "ab");
    fputs("{\"type\":\"ti", f);
    fclose(f);

    jnl_reader *r;
    const char *line;
    size_t len;
    long lineno;
    int torn, n = 0, torn_seen = 0;
    assert_int_equal(jnl_open_dir(dir, &r, &e), 0);
    while (jnl_next(r, &line, &len, &lineno, &torn, &e) == 1) {
        n++;
        assert_int_equal(lineno, n);
        if (torn) {
            torn_seen = 1;
            assert_string_equal(line, "{\"type\":\"ti");
        } else {
            assert_int_equal(strlen(line), len);
        }
    }
    jnl_close(r);
    assert_int_equal(n, 4);
    assert_int_equal(torn_seen, 1);

    /* Appending again cuts the torn tail, so the journal stays well formed. */
    assert_int_equal(jnl_open_append(path, &w, &e), 0);
    cJSON *rec = record(3);
    assert_int_equal(jnl_append(w, rec, &e), 0);
    cJSON_Delete(rec);
    assert_int_equal(jnl_close_writer(w, &e), 0);
    assert_int_equal(jnl_open_file(path, &r, &e), 0);
    n = 0;
    while (jnl_next(r, &line, &len, &lineno, &torn, &e) == 1) {
        cJSON *v;
        assert_int_equal(torn, 0);
        assert_int_equal(jio_parse(line, len, "line", &v, &e), 0);
        assert_int_equal(cJSON_GetObjectItem(v, "round")->valueint, n);
        cJSON_Delete(v);
        n++;
    }
    jnl_close(r);
    assert_int_equal(n, 4);
    free(dir);
}

static void jnl_reads_gzip_and_long_lines(void **state)
{
    (void)state;
    char *dir = make_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/samples.jsonl.gz", dir);
    /* A line longer than the reader's first buffer, between two short ones. */
    size_t big = 3u << 20;
    char *line_big = malloc(big + 1);
    memset(line_big, 'x', big);
    line_big[big] = '\0';
    gzFile gz = gzopen(path, "wb");
    gzputs(gz, "first\n");
    gzputs(gz, line_big);
    gzputs(gz, "\nlast\n");
    gzclose(gz);
    kbv_err e = {0};
    jnl_reader *r;
    const char *line;
    size_t len;
    long lineno;
    int torn;
    assert_int_equal(jnl_open_dir(dir, &r, &e), 0);
    assert_int_equal(jnl_next(r, &line, &len, &lineno, &torn, &e), 1);
    assert_string_equal(line, "first");
    assert_int_equal(jnl_next(r, &line, &len, &lineno, &torn, &e), 1);
    assert_int_equal(len, big);
    assert_int_equal(jnl_next(r, &line, &len, &lineno, &torn, &e), 1);
    assert_string_equal(line, "last");
    assert_int_equal(lineno, 3);
    assert_int_equal(jnl_next(r, &line, &len, &lineno, &torn, &e), 0);
    jnl_close(r);
    free(line_big);
    /* No journal at all is the user's error, naming the folder. */
    char *empty = make_tmpdir();
    assert_int_equal(jnl_open_dir(empty, &r, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, empty));
    free(empty);
    free(dir);
}

static void sums_write_and_verify(void **state)
{
    (void)state;
    char *dir = make_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    write_text(path, "{}\n");
    snprintf(path, sizeof path, "%s/samples.jsonl", dir);
    write_text(path, "{}\n{}\n");
    kbv_err e = {0};
    /* collect seals the raw files */
    assert_int_equal(sums_seal_raw(dir, &e), 0);
    snprintf(path, sizeof path, "%s/report", dir);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/report/a.svg", dir);
    write_text(path, "<svg/>");
    /* render adds its outputs */
    const char *out[] = {"report/"};
    assert_int_equal(sums_update(dir, out, 1, &e), 0);
    snprintf(path, sizeof path, "%s/SHA256SUMS", dir);
    char *text;
    assert_int_equal(afile_read_all(path, &text, NULL, &e), 0);
    /* sorted by path */
    char want[512], h1[65], h2[65], h3[65];
    sha_hex_buf("{}\n", 3, h1, &e);
    sha_hex_buf("<svg/>", 6, h2, &e);
    sha_hex_buf("{}\n{}\n", 6, h3, &e);
    snprintf(want, sizeof want, "%s  manifest.json\n%s  report/a.svg\n%s  samples.jsonl\n", h1, h2, h3);
    assert_string_equal(text, want);
    free(text);
    int n = 0;
    assert_int_equal(sums_verify(dir, NULL, &n, &e), 0);
    assert_int_equal(n, 3);
    snprintf(path, sizeof path, "%s/report/a.svg", dir);
    write_text(path, "<svg />");
    assert_int_equal(sums_verify(dir, NULL, &n, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "1 of 3"));
    /* an update never rewrites a raw file's line: a changed journal stays
     * changed */
    assert_int_equal(sums_update(dir, out, 1, &e), 0);
    snprintf(path, sizeof path, "%s/samples.jsonl", dir);
    write_text(path, "{}\n");
    const char *out2[] = {"analysis.json", "report/"};
    assert_int_equal(sums_update(dir, out2, 2, &e), 0);
    assert_int_equal(sums_verify(dir, NULL, &n, &e), KBV_EINPUT);
    const char *raw[] = {"samples.jsonl"};
    assert_int_equal(sums_update(dir, raw, 1, &e), KBV_EINPUT);
    /* an unlisted file in the root */
    write_text(path, "{}\n{}\n");
    assert_int_equal(sums_verify(dir, NULL, &n, &e), 0);
    snprintf(path, sizeof path, "%s/samples.jsonl.gz", dir);
    write_text(path, "x");
    assert_int_equal(sums_verify(dir, NULL, &n, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "raw file"));
    free(dir);
}

/* The ETA: time per item times the items left; with a work count, only
 * the items that take time count (a resumed run's pairs, missing ones). */
static void progress_eta_counts_work(void **state)
{
    (void)state;
    log_progress p;
    memset(&p, 0, sizeof p);
    p.started = 100.0;
    p.total = 10;
    assert_true(log_progress_eta(&p, 110.0) < 0);          /* nothing done yet */
    p.done = 2;
    assert_true(fabs(log_progress_eta(&p, 110.0) - 40.0) < 1e-9);   /* 5 s an item, 8 left */
    log_progress_set_work(&p, 4);                          /* 6 of the 10 are instant */
    p.done = 7;
    assert_true(log_progress_eta(&p, 110.0) < 0);          /* no timed item finished */
    log_progress_work_done(&p);
    log_progress_work_done(&p);
    assert_true(fabs(log_progress_eta(&p, 110.0) - 10.0) < 1e-9);   /* 5 s a worked item, 2 left */
    log_progress_work_done(&p);
    log_progress_work_done(&p);
    log_progress_work_done(&p);                            /* more than announced: never negative */
    assert_true(log_progress_eta(&p, 110.0) == 0.0);
}

static void cli_numbers_are_strict(void **state)
{
    (void)state;
    kbv_err e = {0};
    long v;
    unsigned long long u;
    double d;
    assert_int_equal(cli_parse_long("--trials", "3", 1, 100, &v, &e), 0);
    assert_int_equal(v, 3);
    assert_int_equal(cli_parse_long("--trials", "3x", 1, 100, &v, &e), KBV_EUSAGE);
    assert_non_null(strstr(e.msg, "--trials"));
    assert_int_equal(cli_parse_long("--trials", "0", 1, 100, &v, &e), KBV_EUSAGE);
    assert_int_equal(cli_parse_long("--trials", "", 1, 100, &v, &e), KBV_EUSAGE);
    assert_int_equal(cli_parse_u64("--seed", "abc", &u, &e), KBV_EUSAGE);
    assert_int_equal(cli_parse_u64("--seed", "-1", &u, &e), KBV_EUSAGE);
    assert_int_equal(cli_parse_u64("--seed", "18446744073709551615", &u, &e), 0);
    assert_true(u == 18446744073709551615ull);
    assert_int_equal(cli_parse_double("--atol", "1e-3", 0, 1, &d, &e), 0);
    assert_true(d == 1e-3);
    assert_int_equal(cli_parse_double("--atol", "nan", 0, 1, &d, &e), KBV_EUSAGE);
    assert_int_equal(err_exit_status(KBV_EUSAGE), 2);
    assert_int_equal(err_exit_status(KBV_EINPUT), 2);
    assert_int_equal(err_exit_status(KBV_ERUNTIME), 1);
}

static void cli_globs_split_on_commas(void **state)
{
    (void)state;
    char long_pattern[600];
    memset(long_pattern, '*', sizeof long_pattern - 1);
    long_pattern[sizeof long_pattern - 1] = '\0';
    assert_true(cli_glob_match(NULL, "L1_001_x"));
    assert_true(cli_glob_match("L1_*", "L1_001_x"));
    assert_false(cli_glob_match("L1_*", "L2_001_x"));
    assert_true(cli_glob_match("L3_0[0-4]*,L2_001_*", "L2_001_x"));
    assert_true(cli_glob_match("L3_0[0-4]*,L2_001_*", "L3_042_y"));
    assert_false(cli_glob_match("L3_0[0-4]*,L2_001_*", "L3_050_y"));
    assert_false(cli_glob_match("", "L1_001_x"));
    assert_true(cli_glob_match("L9_*,,L1_001_x", "L1_001_x"));
    /* a pattern too long to hold matches nothing, not a truncated prefix */
    assert_false(cli_glob_match(long_pattern, "L1_001_x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha_fips_vectors),
        cmocka_unit_test(sha_of_file_matches_buffer),
        cmocka_unit_test(afile_commit_and_abort),
        cmocka_unit_test(jio_reports_line_and_column),
        cmocka_unit_test(jnl_append_read_torn),
        cmocka_unit_test(jnl_reads_gzip_and_long_lines),
        cmocka_unit_test(sums_write_and_verify),
        cmocka_unit_test(cli_numbers_are_strict),
        cmocka_unit_test(cli_globs_split_on_commas),
        cmocka_unit_test(progress_eta_counts_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

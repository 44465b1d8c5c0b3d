/* Unit tests of reading a run (analyze/run.c, analyze/scan.c): the flat
 * scanner against the JSON grammar and strtod, and the reader's errors for
 * malformed lines, unknown sets and problems, bad times and a manifest of
 * another schema; a torn last line is dropped with a warning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rng.h"
#include "run.h"
#include "scan.h"
#include "test_analyze_util.h"

static int scan(const char *s, scan_rec *r) { return scan_flat(s, strlen(s), r); }

static void test_scan_time_line(void **state)
{
    (void)state;
    scan_rec r;
    const char *l = "{\"type\":\"time\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"variant\":\"candidate\","
                    "\"round\":3,\"gpu_ms\":1.234,\"wall_ms\":1.301,\"sm_mhz\":1980}";
    assert_int_equal(scan(l, &r), 1);
    assert_true(scan_is(r.type, "time") && scan_is(r.set, "tuned") && scan_is(r.problem, "L1_019_relu"));
    assert_true(scan_is(r.variant, "candidate"));
    assert_int_equal(r.gpu_kind, SCAN_NUMBER);
    assert_true(r.gpu_ms == 1.234 && r.wall_ms == 1.301);
    /* Whitespace anywhere JSON allows it; null; the first of a repeated key. */
    assert_int_equal(scan(" { \"type\" : \"time\" , \"gpu_ms\" : null , \"gpu_ms\" : 2 , \"x\" : [1] } ", &r), 0);
    assert_int_equal(scan(" { \"type\" : \"time\" , \"gpu_ms\" : null , \"gpu_ms\" : 2 , \"ok\" : true } ", &r), 1);
    assert_int_equal(r.gpu_kind, SCAN_NULL);
    assert_int_equal(scan("{}", &r), 1);
    assert_int_equal(r.gpu_kind, SCAN_ABSENT);
    /* Kept strings with escapes go to the general parser; others are checked. */
    assert_int_equal(scan("{\"set\":\"a\\\"b\"}", &r), 0);
    assert_int_equal(scan("{\"detail\":\"a\\\"b\\/\\n\\t\"}", &r), 1);
    /* \u escapes go to the general parser, which refuses lone surrogates. */
    assert_int_equal(scan("{\"detail\":\"\\u00e9\"}", &r), 0);
    assert_int_equal(scan("{\"detail\":\"bad \\x escape\"}", &r), 0);
    assert_int_equal(scan("{\"detail\":\"\\u12\"}", &r), 0);
}

static void test_scan_rejects(void **state)
{
    (void)state;
    scan_rec r;
    const char *bad[] = {"", "{", "}", "[]", "{\"a\":1", "{\"a\":1}x", "{\"a\":1,}", "{\"a\" 1}", "{a:1}",
                         "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":-}", "{\"a\":1e}", "{\"a\":+1}",
                         "{\"a\":tru}", "{\"a\":nul}", "{\"a\":NaN}", "{\"a\":\"x}", "{\"a\":\"\t\"}",
                         "{\"a\":1 2}", "{\"a\":{}}", "{\"a\":0x10}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (scan(bad[i], &r) != 0) fail_msg("accepted: %s", bad[i]);
    }
}

/* Numbers are read exactly as strtod reads them (correct rounding). */
static void test_scan_numbers(void **state)
{
    (void)state;
    rng g;
    rng_init(&g, 3, 0, 0, 0);
    char line[128];

    for (int i = 0; i < 200000; i++) {
        double v = ldexp(rng_u01(&g) + 0.5, (int)rng_below(&g, 80) - 40);
        if (i % 7 == 0) v = -v;
        char num[64];
        switch (i % 5) {
        case 0: snprintf(num, sizeof num, "%.17g", v); break;
        case 1: snprintf(num, sizeof num, "%.15g", v); break;
        case 2: snprintf(num, sizeof num, "%.6f", v); break;
        case 3: snprintf(num, sizeof num, "%.3e", v); break;
        default: snprintf(num, sizeof num, "%.9g", v); break;
        }
        snprintf(line, sizeof line, "{\"gpu_ms\":%s}", num);
        scan_rec r;
        assert_int_equal(scan(line, &r), 1);
        double want = strtod(num, NULL);
        if (r.gpu_ms != want) fail_msg("%s read as %.17g, strtod says %.17g", num, r.gpu_ms, want);
    }
    const char *edge[] = {"0", "-0", "1e22", "1e23", "123456789012345678901234567890", "9007199254740993",
                          "4.9406564584124654e-324", "1.7976931348623157e308", "0.000000000000000000001",
                          "1E+2", "1e-2", "12345678901234567890e-10"};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
        snprintf(line, sizeof line, "{\"gpu_ms\":%s}", edge[i]);
        scan_rec r;
        assert_int_equal(scan(line, &r), 1);
        assert_true(r.gpu_ms == strtod(edge[i], NULL));
    }
}

/* Whatever line the scanner accepts, cJSON reads the same way: random
 * mutations of a time record (fixed seed), compared member by member. */
static int same_str(scan_str s, const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!s.p) return !v;
    return cJSON_IsString(v) && strlen(v->valuestring) == s.len && memcmp(v->valuestring, s.p, s.len) == 0;
}

static void test_scan_agrees_with_cjson(void **state)
{
    (void)state;
    const char *src = "{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0,"
                      "\"gpu_ms\":1.25,\"wall_ms\":1.3,\"d\":\"x\\n\",\"b\":true,\"z\":null}";
    const char *alphabet = "{}[]\",:\\0123456789e-.+Etfnu \t";
    rng g;
    rng_init(&g, 5, 2, 3, 4);
    char buf[512];
    long accepted = 0;
    for (long it = 0; it < 300000; it++) {
        size_t n = strlen(src);
        memcpy(buf, src, n);
        int muts = 1 + (int)rng_below(&g, 3);
        for (int k = 0; k < muts; k++) {
            size_t pos = rng_below(&g, (uint32_t)n);
            uint32_t op = rng_below(&g, 3);
            if (op == 0) {
                buf[pos] = alphabet[rng_below(&g, (uint32_t)strlen(alphabet))];
            } else if (op == 1 && n > 1) {
                memmove(buf + pos, buf + pos + 1, n - pos - 1);
                n--;
            } else if (n < sizeof buf - 2) {
                memmove(buf + pos + 1, buf + pos, n - pos);
                buf[pos] = alphabet[rng_below(&g, (uint32_t)strlen(alphabet))];
                n++;
            }
        }
        buf[n] = '\0';
        scan_rec r;
        if (!scan_flat(buf, n, &r)) continue;
        accepted++;
        const char *end = NULL;
        cJSON *o = cJSON_ParseWithLengthOpts(buf, n, &end, 0);
        while (o && end && end < buf + n && (*end == ' ' || *end == '\t')) end++;
        int ok = o && cJSON_IsObject(o) && end == buf + n;
        if (ok) {
            ok = same_str(r.type, o, "type") && same_str(r.set, o, "set") && same_str(r.problem, o, "problem") &&
                 same_str(r.variant, o, "variant");
            const cJSON *gm = cJSON_GetObjectItemCaseSensitive(o, "gpu_ms");
            if (r.gpu_kind == SCAN_NUMBER) ok = ok && cJSON_IsNumber(gm) && gm->valuedouble == r.gpu_ms;
            if (r.gpu_kind == SCAN_NULL) ok = ok && cJSON_IsNull(gm);
            if (r.gpu_kind == SCAN_ABSENT) ok = ok && !gm;
        }
        cJSON_Delete(o);
        if (!ok) fail_msg("scanner and cJSON disagree on: %s", buf);
    }
    assert_true(accepted > 10000);
}

static const char *const SETS[] = {"a", "b", NULL};
static const char *const PROBS[] = {"p1", "p2", NULL};

static void test_records(void **state)
{
    (void)state;
    run_data *r = tu_run(SETS, PROBS);
    kbv_err e;
    TU_ADD(r, "{\"type\":\"time\",\"set\":\"b\",\"problem\":\"p2\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":2.5}");
    /* The general parser's path (an escape in a kept string) gives the same
     * record. */
    TU_ADD(r, "{\"type\":\"time\",\"set\":\"\\u0062\",\"problem\":\"p2\",\"variant\":\"fp32\",\"round\":1,"
              "\"gpu_ms\":3.5}");
    TU_ADD(r, "{\"type\":\"memory\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"tf32\",\"peak_bytes\":1024,"
              "\"io_bytes\":512,\"leaked_bytes\":0}");
    TU_ADD(r, "{\"type\":\"check\",\"set\":\"a\",\"problem\":\"p1\",\"dist\":\"D1\",\"trial\":0,\"pass\":false,"
              "\"max_abs_err\":null,\"mismatches\":3,\"tier\":\"none\"}");
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"a\",\"problem\":\"p1\",\"status\":\"ok\"}");
    run_pair *p = run_pair_at(r, 1, 1);
    assert_int_equal(p->times[RUN_V_FP32].n, 2);
    assert_true(p->times[RUN_V_FP32].v[0] == 2.5 && p->times[RUN_V_FP32].v[1] == 3.5);
    assert_null(p->tamper_why);
    p = run_pair_at(r, 0, 0);
    assert_string_equal(p->status, "ok");
    assert_true(p->have_mem[RUN_V_TF32] && p->peak_bytes[RUN_V_TF32] == 1024);
    assert_int_equal(p->n_checks, 1);
    assert_true(isinf(p->checks[0].max_abs_err));  /* null: not finite */
    assert_int_equal(p->checks[0].tier, RUN_TIER_NONE);
    assert_null(p->tamper_why);
    (void)e;
    run_free(r);
}

/* The journal grammar: a record that breaks it is evidence for its pair,
 * never data, and the pair keeps the first reason. */
static void test_grammar(void **state)
{
    (void)state;
    run_data *r = tu_run(SETS, PROBS);
    /* an unknown field; then an unknown type */
    TU_ADD(r, "{\"type\":\"time\",\"set\":\"b\",\"problem\":\"p2\",\"variant\":\"fp32\",\"round\":0,"
              "\"gpu_ms\":3.5,\"x\":[1]}");
    TU_ADD(r, "{\"type\":\"future-record\",\"set\":\"b\",\"problem\":\"p2\"}");
    run_pair *p = run_pair_at(r, 1, 1);
    assert_int_equal(p->times[RUN_V_FP32].n, 0);
    assert_non_null(p->tamper_why);
    assert_non_null(strstr(p->tamper_why, "\"x\""));
    /* rounds out of order, through the fast path */
    TU_ADD(r, "{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"candidate\",\"round\":0,\"gpu_ms\":1}");
    TU_ADD(r, "{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"candidate\",\"round\":2,\"gpu_ms\":1}");
    TU_ADD(r, "{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"candidate\",\"round\":1,\"gpu_ms\":1}");
    p = run_pair_at(r, 0, 0);
    assert_int_equal(p->times[RUN_V_CAND].n, 2);
    assert_non_null(strstr(p->tamper_why, "round 2"));
    /* a record after the status; a tamper record */
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"a\",\"problem\":\"p2\",\"status\":\"crash\"}");
    TU_ADD(r, "{\"type\":\"check\",\"set\":\"a\",\"problem\":\"p2\",\"dist\":\"D1\",\"trial\":0,\"pass\":true}");
    p = run_pair_at(r, 0, 1);
    assert_int_equal(p->n_checks, 0);
    assert_non_null(strstr(p->tamper_why, "after the pair's status"));
    /* a variant the grammar does not know */
    TU_ADD(r, "{\"type\":\"time\",\"set\":\"b\",\"problem\":\"p1\",\"variant\":\"fp16\",\"round\":0,\"gpu_ms\":1}");
    assert_non_null(strstr(run_pair_at(r, 1, 0)->tamper_why, "fp16"));
    TU_ADD(r, "{\"type\":\"tamper\",\"set\":\"b\",\"problem\":\"p1\",\"detail\":\"HMAC mismatch on line 9\"}");
    assert_non_null(strstr(run_pair_at(r, 1, 0)->tamper_why, "fp16"));  /* the first reason stays */
    TU_ADD(r, "{\"type\":\"tamper\",\"set\":\"b\",\"problem\":\"p2\",\"detail\":\"HMAC mismatch on line 9\"}");
    assert_non_null(strstr(run_pair_at(r, 1, 1)->tamper_why, "\"x\""));
    run_free(r);
}

/* Each bad line fails with KBV_EINPUT and a message naming file and line. */
static void expect_error(const char *line, const char *words)
{
    run_data *r = tu_run(SETS, PROBS);
    kbv_err e = {0};
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"b\",\"problem\":\"p2\",\"status\":\"ok\"}");
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"a\",\"problem\":\"p2\",\"status\":\"ok\"}");
    int rc = run_add_line(r, line, strlen(line), "run/samples.jsonl", 3, &e);
    if (rc != KBV_EINPUT) fail_msg("accepted: %s", line);
    if (strncmp(e.msg, "run/samples.jsonl:3: ", 21) != 0 || !strstr(e.msg, words))
        fail_msg("message \"%s\" for %s", e.msg, line);
    run_free(r);
}

static void test_record_errors(void **state)
{
    (void)state;
    expect_error("{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":0}", "gpu_ms");
    expect_error("{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":-1.5}", "positive");
    expect_error("{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":null}", "finite");
    expect_error("{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":\"1\"}", "gpu_ms");
    expect_error("{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0}", "gpu_ms");
    expect_error("{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":1e999}", "finite");
    expect_error("{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":1,\"wall_ms\":0}", "wall_ms");
    expect_error("{\"type\":\"time\",\"set\":\"zz\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":1}", "set \"zz\" is not in the manifest");
    expect_error("{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p9\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":1}", "problem \"p9\" is not in the manifest");
    expect_error("{\"type\":\"status\",\"set\":\"a\",\"problem\":\"p3\",\"status\":\"ok\"}", "problem \"p3\"");
    expect_error("{\"type\":\"status\",\"set\":\"a\",\"problem\":\"p1\",\"status\":\"ok\"", "malformed");
    expect_error("{\"type\":\"status\"} trailing", "after");
    expect_error("[1,2]", "object");
    /* A lone surrogate: the fast path must not accept what cJSON refuses. */
    expect_error("{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":1,"
                 "\"note\":\"\\ud800\"}", "malformed");
    expect_error("", "malformed");
    expect_error("{\"set\":\"a\",\"problem\":\"p1\"}", "type");
    /* a second status or build record, an unknown status, a line repeated */
    expect_error("{\"type\":\"status\",\"set\":\"a\",\"problem\":\"p2\",\"status\":\"crash\"}",
                 "second status record for a/p2 contradicts line 2");
    expect_error("{\"type\":\"status\",\"set\":\"a\",\"problem\":\"p2\",\"status\":\"ok\"}", "repeats line 2");
    expect_error("{\"type\":\"status\",\"set\":\"b\",\"problem\":\"p1\",\"status\":\"fine\"}",
                 "unknown status \"fine\"");
    expect_error("{\"type\":\"check\",\"set\":\"a\",\"problem\":\"p1\",\"dist\":\"D1\"}", "pass");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char *MANIFEST =
    "{\"schema\":\"kbv-run/1\",\"run_id\":\"r\",\"created_utc\":\"2026-01-01T00:00:00Z\","
    "\"config\":{\"seed\":3},\"problems\":[\"p1\"],\"sets\":[{\"name\":\"a\",\"dir\":\"x\",\"files\":{}}]}\n";
static const char *T1 = "{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":1}\n";
static const char *T2 = "{\"type\":\"time\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"round\":1,\"gpu_ms\":1}\n";

static void test_load_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/kbv-test-read-XXXXXX", path[256], text[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    write_file(path, MANIFEST);
    snprintf(path, sizeof path, "%s/samples.jsonl", dir);
    /* A torn last line is dropped. */
    snprintf(text, sizeof text, "%s%s{\"type\":\"time\",\"set\":\"a\",\"pro", T1, T2);
    write_file(path, text);
    run_data *r = NULL;
    kbv_err e = {0};
    assert_int_equal(run_load(dir, &r, &e), 0);
    assert_int_equal(r->dropped_torn, 1);
    assert_int_equal(run_pair_at(r, 0, 0)->times[RUN_V_FP32].n, 2);
    assert_true(r->seed == 3);
    run_free(r);
    /* The same bad line in the middle is an error naming the line. */
    snprintf(text, sizeof text, "%s{\"type\":\"time\",\"set\":\"a\",\"pro\n%s", T1, T2);
    write_file(path, text);
    assert_int_equal(run_load(dir, &r, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "samples.jsonl:2: "));
    /* Every record twice: the second copy is refused, naming both lines. */
    snprintf(text, sizeof text, "%s%s%s", T1, T2, T1);
    write_file(path, text);
    assert_int_equal(run_load(dir, &r, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "samples.jsonl:3: repeats line 1"));
    /* An empty journal, and one with nothing but a torn line. */
    write_file(path, "");
    assert_int_equal(run_load(dir, &r, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "no record"));
    write_file(path, "{\"type\"");
    assert_int_equal(run_load(dir, &r, &e), KBV_EINPUT);
    /* Two journals: which one holds the run cannot be told. */
    write_file(path, T1);
    char gz[300];
    snprintf(gz, sizeof gz, "%s/samples.jsonl.gz", dir);
    write_file(gz, T1);
    assert_int_equal(run_load(dir, &r, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "both samples.jsonl and samples.jsonl.gz"));
    unlink(gz);
    /* A seed that is not an integer. */
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    write_file(path, "{\"schema\":\"kbv-run/1\",\"run_id\":\"r\",\"created_utc\":\"x\",\"config\":{\"seed\":7.5},"
                     "\"problems\":[],\"sets\":[]}");
    assert_int_equal(run_load(dir, &r, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "seed"));
    snprintf(path, sizeof path, "%s/samples.jsonl", dir);
    /* A manifest of another schema. */
    write_file(path, T1);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    write_file(path, "{\"schema\":\"kbv-run/2\",\"run_id\":\"r\",\"created_utc\":\"x\",\"config\":{\"seed\":1},"
                     "\"problems\":[],\"sets\":[]}");
    assert_int_equal(run_load(dir, &r, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "kbv-run/2"));
    /* A problem listed twice. */
    write_file(path, "{\"schema\":\"kbv-run/1\",\"run_id\":\"r\",\"created_utc\":\"x\",\"config\":{\"seed\":1},"
                     "\"problems\":[\"p1\",\"p1\"],\"sets\":[]}");
    assert_int_equal(run_load(dir, &r, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "twice"));
    unlink(path);
    snprintf(path, sizeof path, "%s/samples.jsonl", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_time_line),
        cmocka_unit_test(test_scan_rejects),
        cmocka_unit_test(test_scan_numbers),
        cmocka_unit_test(test_scan_agrees_with_cjson),
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_record_errors),
        cmocka_unit_test(test_load_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

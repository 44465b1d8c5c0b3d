/* Unit tests of common/jgram: the journal grammar of DESIGN.md 5a step 7a
 * on forged, reordered, late and duplicated records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "jgram.h"

/* Feeds one JSON line; returns jgram_feed's result. */
static int feed(jgram *g, const char *line, char *why, size_t why_len)
{
    cJSON *o = cJSON_Parse(line);
    assert_non_null(o);
    int rc = jgram_feed(g, o, why, why_len);
    cJSON_Delete(o);
    return rc;
}

#define T(set, prob, var, r) \
    "{\"type\":\"time\",\"set\":\"" set "\",\"problem\":\"" prob "\",\"variant\":\"" var "\",\"round\":" #r \
    ",\"gpu_ms\":1.5,\"wall_ms\":1.6,\"sm_mhz\":1980}"

static jgram *fresh(void)
{
    jgram *g = NULL;
    kbv_err e = {0};
    assert_int_equal(jgram_new(&g, &e), 0);
    return g;
}

static void accepts_a_clean_pair(void **state)
{
    (void)state;
    jgram *g = fresh();
    char why[256] = "";
    const char *lines[] = {
        "{\"type\":\"build\",\"set\":\"s\",\"problem\":\"p\",\"ok\":true,\"seconds\":1,\"cached\":false,\"key\":\"k\",\"log\":\"\"}",
        "{\"type\":\"static\",\"set\":\"s\",\"problem\":\"p\",\"imports\":[],\"flags\":[],\"defines\":[]}",
        "{\"type\":\"baseline\",\"set\":\"s\",\"problem\":\"p\",\"variant\":\"fp32\",\"choice\":\"x\"}",
        "{\"type\":\"check\",\"set\":\"s\",\"problem\":\"p\",\"dist\":\"D1\",\"trial\":0,\"seed\":7,\"pass\":true,"
        "\"max_abs_err\":null,\"max_rel_err\":0,\"mismatches\":0,\"nonfinite\":0,\"unwritten\":0,\"count\":4,\"tier\":\"fp32\"}",
        "{\"type\":\"probe\",\"set\":\"s\",\"problem\":\"p\",\"probe\":\"physical-floor\",\"pass\":true,\"detail\":\"\","
        "\"floor_ms\":0.1,\"time_ms\":1}",
        T("s", "p", "fp32", 0), T("s", "p", "candidate", 0), T("s", "p", "fp32", 1), T("s", "p", "candidate", 1),
        "{\"type\":\"time\",\"set\":\"s\",\"problem\":\"p\",\"variant\":\"tf32\",\"round\":0,\"gpu_ms\":1,"
        "\"wall_ms\":1,\"same_as\":\"fp32\",\"gt_ms\":1.01}",
        "{\"type\":\"memory\",\"set\":\"s\",\"problem\":\"p\",\"variant\":\"candidate\",\"peak_bytes\":1,\"io_bytes\":1,"
        "\"leaked_bytes\":0,\"driver_delta_bytes\":0,\"untracked_bytes\":0}",
        "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p\",\"status\":\"ok\",\"detail\":\"\",\"seconds\":2.5}",
        /* another pair, interleaved order of its own */
        T("s", "q", "fp32", 0),
        "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"q\",\"status\":\"crash\",\"detail\":\"x\"}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        int rc = feed(g, lines[i], why, sizeof why);
        if (rc) fail_msg("line %zu: %s", i, why);
    }
    const char *w = "x";
    assert_int_equal(jgram_tampered(g, "s", "p", &w), 0);
    assert_null(w);
    assert_int_equal(jgram_tampered(g, "s", "q", &w), 0);
    assert_int_equal(jgram_tampered(g, "nope", "p", &w), 0);
    jgram_free(g);
}

static void forged_records(void **state)
{
    (void)state;
    jgram *g = fresh();
    char why[256];
    const char *w;
    /* an unknown type */
    assert_true(feed(g, "{\"type\":\"bonus\",\"set\":\"s\",\"problem\":\"a\"}", why, sizeof why) > 0);
    assert_non_null(strstr(why, "unknown type"));
    assert_int_equal(jgram_tampered(g, "s", "a", &w), 1);
    assert_non_null(strstr(w, "bonus"));
    /* an unknown key of a known type */
    assert_true(feed(g, "{\"type\":\"time\",\"set\":\"s\",\"problem\":\"b\",\"variant\":\"fp32\",\"round\":0,"
                        "\"gpu_ms\":1,\"speedup\":9}", why, sizeof why) > 0);
    assert_non_null(strstr(why, "speedup"));
    /* a key that a type lacks */
    assert_true(feed(g, "{\"type\":\"time\",\"set\":\"s\",\"problem\":\"c\",\"variant\":\"fp32\",\"gpu_ms\":1}",
                     why, sizeof why) > 0);
    /* a key twice */
    assert_true(feed(g, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"d\",\"status\":\"ok\",\"status\":\"crash\"}",
                     why, sizeof why) > 0);
    /* a tamper record: the supervisor's evidence is the reason */
    assert_true(feed(g, "{\"type\":\"tamper\",\"set\":\"s\",\"problem\":\"e\",\"detail\":\"bad HMAC on line 4\"}",
                     why, sizeof why) > 0);
    assert_int_equal(jgram_tampered(g, "s", "e", &w), 1);
    assert_string_equal(w, "bad HMAC on line 4");
    /* an unknown variant, a fractional round */
    assert_true(feed(g, "{\"type\":\"time\",\"set\":\"s\",\"problem\":\"f\",\"variant\":\"cpu\",\"round\":0,\"gpu_ms\":1}",
                     why, sizeof why) > 0);
    assert_true(feed(g, "{\"type\":\"time\",\"set\":\"s\",\"problem\":\"g\",\"variant\":\"fp32\",\"round\":0.5,\"gpu_ms\":1}",
                     why, sizeof why) > 0);
    /* malformed input marks nothing */
    cJSON *arr = cJSON_Parse("[1,2]");
    assert_true(jgram_feed(g, arr, why, sizeof why) < 0);
    cJSON_Delete(arr);
    assert_true(feed(g, "{\"type\":\"time\",\"problem\":\"h\"}", why, sizeof why) < 0);
    assert_int_equal(jgram_tampered(g, "s", "h", &w), 0);
    /* a NULL why is allowed */
    assert_true(feed(g, "{\"type\":\"bonus\",\"set\":\"s\",\"problem\":\"i\"}", NULL, 0) > 0);
    assert_int_equal(jgram_tampered(g, "s", "i", &w), 1);
    jgram_free(g);
}

static void reordered_rounds(void **state)
{
    (void)state;
    jgram *g = fresh();
    char why[256];
    const char *w;
    assert_int_equal(feed(g, T("s", "p", "fp32", 0), why, sizeof why), 0);
    assert_true(feed(g, T("s", "p", "fp32", 2), why, sizeof why) > 0);
    assert_non_null(strstr(why, "round 2 of fp32 where round 1 was due"));
    /* the violating record was not counted: round 1 is still due */
    assert_int_equal(feed(g, T("s", "p", "fp32", 1), why, sizeof why), 0);
    assert_int_equal(jgram_tampered(g, "s", "p", &w), 1);
    assert_non_null(strstr(w, "round 2"));  /* the first reason stays */
    /* a round that does not start at 0 */
    assert_true(feed(g, T("s", "q", "candidate", 1), why, sizeof why) > 0);
    jgram_free(g);
}

static void duplicated_rounds(void **state)
{
    (void)state;
    jgram *g = fresh();
    char why[256];
    assert_int_equal(feed(g, T("s", "p", "tf32", 0), why, sizeof why), 0);
    assert_int_equal(feed(g, T("s", "p", "tf32", 1), why, sizeof why), 0);
    assert_true(feed(g, T("s", "p", "tf32", 1), why, sizeof why) > 0);
    assert_non_null(strstr(why, "again"));
    /* the fast entry point agrees */
    assert_true(jgram_feed_time(g, "s", 1, "q", 1, "fp32", 4, 1, 0, why, sizeof why) == 0);
    assert_true(jgram_feed_time(g, "s", 1, "q", 1, "fp32", 4, 1, 0, why, sizeof why) > 0);
    assert_true(jgram_feed_time(g, "s", 1, "r", 1, "fp32", 4, 0, 0, why, sizeof why) > 0);
    assert_int_equal(jgram_time_key("gt_ms", 5), 1);
    assert_int_equal(jgram_time_key("speedup", 7), 0);
    jgram_free(g);
}

static void late_records(void **state)
{
    (void)state;
    jgram *g = fresh();
    char why[256];
    const char *w;
    assert_int_equal(feed(g, T("s", "p", "fp32", 0), why, sizeof why), 0);
    assert_int_equal(feed(g, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p\",\"status\":\"ok\"}", why, sizeof why),
                     0);
    assert_true(feed(g, T("s", "p", "fp32", 1), why, sizeof why) > 0);
    assert_non_null(strstr(why, "after the pair's status record"));
    assert_true(feed(g, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p\",\"status\":\"ok\"}", why, sizeof why) > 0);
    assert_int_equal(jgram_tampered(g, "s", "p", &w), 1);
    /* a tamper record after the status keeps its detail */
    assert_int_equal(feed(g, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"t\",\"status\":\"ok\"}", why, sizeof why),
                     0);
    assert_true(feed(g, "{\"type\":\"tamper\",\"set\":\"s\",\"problem\":\"t\",\"detail\":\"late evidence\"}", why,
                     sizeof why) > 0);
    assert_int_equal(jgram_tampered(g, "s", "t", &w), 1);
    assert_string_equal(w, "late evidence");
    /* many pairs: the table grows */
    char set[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(set, sizeof set, "set%d", i);
        assert_int_equal(jgram_feed_time(g, set, strlen(set), "p", 1, "candidate", 9, 1, 0, why, sizeof why), 0);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(set, sizeof set, "set%d", i);
        assert_true(jgram_feed_time(g, set, strlen(set), "p", 1, "candidate", 9, 1, 0, why, sizeof why) > 0);
        assert_int_equal(jgram_tampered(g, set, "p", &w), 1);
    }
    jgram_free(g);
}

/* The BF16 setting's pair: candidate and bf16 rounds are accepted; a
 * baseline of the other setting in the same pair is not. */
static void bf16_pairs(void **state)
{
    (void)state;
    jgram *g = fresh();
    char why[256] = "";
    const char *w;
    const char *ok[] = {
        "{\"type\":\"baseline\",\"set\":\"b\",\"problem\":\"p\",\"variant\":\"bf16\",\"choice\":\"x\"}",
        T("b", "p", "bf16", 0), T("b", "p", "candidate", 0), T("b", "p", "bf16", 1), T("b", "p", "candidate", 1),
        "{\"type\":\"memory\",\"set\":\"b\",\"problem\":\"p\",\"variant\":\"bf16\",\"peak_bytes\":1,\"io_bytes\":1,"
        "\"leaked_bytes\":0,\"driver_delta_bytes\":0,\"untracked_bytes\":0}",
        "{\"type\":\"status\",\"set\":\"b\",\"problem\":\"p\",\"status\":\"ok\",\"detail\":\"\"}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        int rc = feed(g, ok[i], why, sizeof why);
        if (rc) fail_msg("line %zu: %s", i, why);
    }
    assert_int_equal(jgram_tampered(g, "b", "p", &w), 0);
    /* bf16 rounds in a pair that timed fp32 */
    assert_int_equal(feed(g, T("b", "q", "fp32", 0), why, sizeof why), 0);
    assert_true(feed(g, T("b", "q", "bf16", 0), why, sizeof why) > 0);
    assert_non_null(strstr(why, "timed fp32 and tf32"));
    assert_int_equal(jgram_tampered(g, "b", "q", &w), 1);
    /* a tf32 memory record in a pair that timed bf16 */
    assert_int_equal(feed(g, T("b", "r", "bf16", 0), why, sizeof why), 0);
    assert_true(feed(g,
                     "{\"type\":\"memory\",\"set\":\"b\",\"problem\":\"r\",\"variant\":\"tf32\",\"peak_bytes\":1}",
                     why, sizeof why) > 0);
    assert_non_null(strstr(why, "timed bf16"));
    assert_int_equal(jgram_tampered(g, "b", "r", &w), 1);
    jgram_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepts_a_clean_pair), cmocka_unit_test(forged_records),
        cmocka_unit_test(reordered_rounds),     cmocka_unit_test(duplicated_rounds),
        cmocka_unit_test(late_records),         cmocka_unit_test(bf16_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

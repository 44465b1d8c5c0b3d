/* The BF16 setting in analyze (issue 17): a run with an FP32 set and a BF16
 * set that mirrors it.  A BF16 set is timed against the bf16 baseline
 * alone, so every per-baseline list of its analysis names bf16 (and no
 * fp32 or tf32), its summary says its precision and the FP32 set it mirrors,
 * its checks are described at its own tolerance, and a bf16 tier is not a
 * precision finding; the FP32 set of the same run keeps fp32 and tf32. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "analysis.h"
#include "classify.h"
#include "levels.h"
#include "prec.h"
#include "test_analyze_util.h"

/* A manifest with the FP32 set "naive" and the BF16 set "naive-bf16"
 * (compare_with naive), problems L1_1 and L1_2; precision is the BF16 set's
 * "precision" value (NULL: none, i.e. fp32). */
static run_data *bf16_run_n(const char *precision, int two, kbv_err *e, int *rc)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "schema", "kbv-run/1");
    cJSON_AddStringToObject(m, "run_id", "test");
    cJSON_AddStringToObject(m, "created_utc", "2026-11-29T00:00:00Z");
    cJSON *cfg = cJSON_AddObjectToObject(m, "config");
    cJSON_AddNumberToObject(cfg, "seed", 7);
    cJSON_AddNumberToObject(cfg, "atol", 1e-3);
    cJSON_AddNumberToObject(cfg, "rtol", 1e-3);
    cJSON *tb = cJSON_AddObjectToObject(cfg, "tolerance_bf16");
    cJSON_AddNumberToObject(tb, "atol", 0.01);
    cJSON_AddNumberToObject(tb, "rtol", 0.01);
    cJSON *ps = cJSON_AddArrayToObject(m, "problems");
    cJSON_AddItemToArray(ps, cJSON_CreateString("L1_1"));
    cJSON_AddItemToArray(ps, cJSON_CreateString("L1_2"));
    cJSON *ss = cJSON_AddArrayToObject(m, "sets");
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", "naive");
    cJSON_AddItemToArray(ss, s);
    s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", "naive-bf16");
    if (precision) cJSON_AddStringToObject(s, "precision", precision);
    cJSON_AddStringToObject(s, "compare_with", "naive");
    cJSON_AddItemToArray(ss, s);
    if (two) {
        s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "name", "other-bf16");
        cJSON_AddStringToObject(s, "precision", "bf16");
        cJSON_AddItemToArray(ss, s);
    }
    run_data *r = NULL;
    *rc = run_from_manifest(m, &r, e);
    return r;
}

static run_data *bf16_run(const char *precision, kbv_err *e, int *rc)
{
    return bf16_run_n(precision, 0, e, rc);
}

static const cJSON *path(const cJSON *o, const char *p)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", p);
    for (char *tok = strtok(buf, "."); tok && o; tok = strtok(NULL, ".")) {
        if (tok[0] >= '0' && tok[0] <= '9') o = cJSON_GetArrayItem(o, atoi(tok));
        else o = cJSON_GetObjectItemCaseSensitive(o, tok);
    }
    if (!o) fail_msg("no %s", p);
    return o;
}

static int has(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key) != NULL;
}

static double num(const cJSON *o, const char *p)
{
    const cJSON *v = path(o, p);
    if (!cJSON_IsNumber(v)) fail_msg("%s is not a number", p);
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *p)
{
    const cJSON *v = path(o, p);
    if (!cJSON_IsString(v)) fail_msg("%s is not a string", p);
    return v->valuestring;
}

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-12 * fabs((double)(b)) + 1e-15)

/* naive: L1_1 candidate 1 vs fp32 4, tf32 2 (speedups 4 and 2); L1_2
 * candidate 2 vs fp32 2, tf32 1 (1 and 0.5).
 * naive-bf16: L1_1 candidate 2 vs bf16 6 (3), tiers "half" (the bf16
 * checks' tier: not a finding there); L1_2 candidate 4 vs bf16 2 (0.5);
 * peaks 100 against bf16 200 and 300 against 150. */
static run_data *known_run(void)
{
    kbv_err e;
    int rc;
    run_data *r = bf16_run("bf16", &e, &rc);
    if (rc) fail_msg("manifest: %s", e.msg);
    double one[] = {1, 1, 1}, two[] = {2, 2, 2}, four[] = {4, 4, 4}, six[] = {6, 6, 6};
    tu_pass(r, "naive", "L1_1", "fp32");
    tu_times(r, "naive", "L1_1", "candidate", one, 3);
    tu_times(r, "naive", "L1_1", "fp32", four, 3);
    tu_times(r, "naive", "L1_1", "tf32", two, 3);
    tu_pass(r, "naive", "L1_2", "fp32");
    tu_times(r, "naive", "L1_2", "candidate", two, 3);
    tu_times(r, "naive", "L1_2", "fp32", two, 3);
    tu_times(r, "naive", "L1_2", "tf32", one, 3);
    tu_pass(r, "naive-bf16", "L1_1", "half");
    tu_times(r, "naive-bf16", "L1_1", "candidate", two, 3);
    tu_times(r, "naive-bf16", "L1_1", "bf16", six, 3);
    TU_ADD(r, "{\"type\":\"memory\",\"set\":\"naive-bf16\",\"problem\":\"L1_1\",\"variant\":\"candidate\","
              "\"peak_bytes\":100}");
    TU_ADD(r, "{\"type\":\"memory\",\"set\":\"naive-bf16\",\"problem\":\"L1_1\",\"variant\":\"bf16\","
              "\"peak_bytes\":200}");
    TU_ADD(r, "{\"type\":\"baseline\",\"set\":\"naive-bf16\",\"problem\":\"L1_1\",\"variant\":\"bf16\","
              "\"choice\":\"cublasGemmEx bf16\"}");
    tu_pass(r, "naive-bf16", "L1_2", "fp32");
    tu_times(r, "naive-bf16", "L1_2", "candidate", four, 3);
    tu_times(r, "naive-bf16", "L1_2", "bf16", two, 3);
    TU_ADD(r, "{\"type\":\"memory\",\"set\":\"naive-bf16\",\"problem\":\"L1_2\",\"variant\":\"candidate\","
              "\"peak_bytes\":300}");
    TU_ADD(r, "{\"type\":\"memory\",\"set\":\"naive-bf16\",\"problem\":\"L1_2\",\"variant\":\"bf16\","
              "\"peak_bytes\":150}");
    return r;
}

static cJSON *build(run_data *r)
{
    analysis_opts o;
    analysis_default_opts(r, &o);
    o.resamples = 500;
    cJSON *out = NULL;
    kbv_err e;
    if (analysis_build(r, &o, &out, &e) || levels_add(r, &o, out, &e)) fail_msg("analysis: %s", e.msg);
    return out;
}

static void test_manifest(void **state)
{
    (void)state;
    kbv_err e;
    int rc;
    run_data *r = bf16_run("bf16", &e, &rc);
    assert_int_equal(rc, 0);
    int v[RUN_MAX_BL];
    assert_int_equal(prec_baselines(r, 0, v), 2);
    assert_int_equal(v[0], RUN_V_FP32);
    assert_int_equal(v[1], RUN_V_TF32);
    assert_int_equal(prec_baselines(r, 1, v), 1);
    assert_int_equal(v[0], RUN_V_BF16);
    assert_null(r->set_compare_with[0]);
    assert_string_equal(r->set_compare_with[1], "naive");
    assert_int_equal(prec_set_index(r, "naive"), 0);
    assert_int_equal(prec_set_index(r, "none"), -1);
    double atol, rtol;
    prec_tolerance(r, 0, &atol, &rtol);
    NEAR(atol, 1e-3);
    prec_tolerance(r, 1, &atol, &rtol);
    NEAR(atol, 1e-2);
    NEAR(rtol, 1e-2);
    run_free(r);
    /* "fp32" is the FP32 setting, as an absent precision is. */
    r = bf16_run("fp32", &e, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(prec_baselines(r, 1, v), 2);
    run_free(r);
    r = bf16_run("fp16", &e, &rc);
    assert_int_equal(rc, KBV_EINPUT);
    assert_non_null(strstr(e.msg, "naive-bf16"));
    assert_non_null(strstr(e.msg, "precision"));
    run_free(r);
}

static void test_known_answers(void **state)
{
    (void)state;
    run_data *r = known_run();
    cJSON *a = build(r);
    const cJSON *f = path(a, "sets.0"), *b = path(a, "sets.1");

    /* The FP32 set: fp32 and tf32 as before, and its precision. */
    assert_string_equal(str(f, "precision"), "fp32");
    assert_false(has(f, "compare_with"));
    assert_false(has(path(f, "baselines"), "bf16"));
    NEAR(num(f, "baselines.fp32.geomean_speedup_correct.estimate"), 2);
    NEAR(num(f, "baselines.tf32.geomean_speedup_correct.estimate"), 1);
    assert_false(has(path(f, "problems.0.time_ms"), "bf16"));
    assert_int_equal(cJSON_GetArraySize(path(f, "inflation")), 4);

    /* The BF16 set: bf16 alone, everywhere a baseline is listed. */
    assert_string_equal(str(b, "precision"), "bf16");
    assert_string_equal(str(b, "compare_with"), "naive");
    const cJSON *bl = path(b, "baselines");
    assert_int_equal(cJSON_GetArraySize(bl), 1);
    NEAR(num(bl, "bf16.geomean_speedup_correct.estimate"), sqrt(3 * 0.5));
    NEAR(num(bl, "bf16.geomean_speedup_all.estimate"), sqrt(3));
    assert_true(num(bl, "bf16.geomean_speedup_all.n") == 2);
    /* fast_p at p = 0, 0.5, 0.8, 1: 2, 1 (0.5 is not > 0.5), 1, 1 of 2. */
    NEAR(num(bl, "bf16.fast_p.0.estimate"), 1);
    NEAR(num(bl, "bf16.fast_p.1.estimate"), 0.5);
    NEAR(num(bl, "bf16.fast_p.3.estimate"), 0.5);
    assert_int_equal(cJSON_GetArraySize(path(bl, "bf16.fast_p_curve")), ANALYSIS_N_CURVE);
    const cJSON *p1 = path(b, "problems.0");
    NEAR(num(p1, "speedup.bf16.estimate"), 3);
    assert_int_equal(cJSON_GetArraySize(path(p1, "speedup")), 1);
    NEAR(num(p1, "time_ms.bf16"), 6);
    NEAR(num(p1, "time_ms.candidate"), 2);
    assert_false(has(path(p1, "time_ms"), "fp32"));
    assert_false(has(path(p1, "time_ms"), "tf32"));
    assert_true(num(p1, "n_samples.bf16") == 3);
    NEAR(num(p1, "peak_bytes.bf16"), 200);
    /* The bf16 checks' "half" tier is the setting, not a finding. */
    assert_string_equal(str(p1, "class"), "correct");
    assert_int_equal(cJSON_GetArraySize(path(p1, "flags")), 0);
    /* L1_2 uses more memory than the bf16 baseline. */
    assert_string_equal(str(b, "problems.1.flags.0"), "more-memory");
    assert_non_null(strstr(str(b, "problems.1.evidence.1.text"), "bf16 baseline"));
    /* Memory against the bf16 baseline: sqrt(200/100 * 150/300) = 1. */
    NEAR(num(b, "memory.efficiency_geomean.estimate"), 1);
    assert_string_equal(str(b, "memory.baseline"), "bf16");
    /* Inflation: three steps against bf16. */
    const cJSON *inf = path(b, "inflation");
    assert_int_equal(cJSON_GetArraySize(inf), 3);
    assert_string_equal(str(inf, "0.label"), "bf16 baseline, D1 only");
    assert_string_equal(str(inf, "2.step"), "probes");
    NEAR(num(inf, "2.geomean.estimate"), sqrt(1.5));
    /* Levels list bf16 alone too. */
    const cJSON *lv = path(b, "levels.0.baselines");
    assert_int_equal(cJSON_GetArraySize(lv), 1);
    NEAR(num(lv, "bf16.geomean_speedup_correct.estimate"), sqrt(1.5));
    assert_int_equal(cJSON_GetArraySize(path(f, "levels.0.baselines")), 2);
    cJSON_Delete(a);
    run_free(r);
}

/* A failed check of a BF16 pair is described at the BF16 tolerance, and
 * the sweep's point at 1e-2 takes the records' own pass. */
static void test_tolerance(void **state)
{
    (void)state;
    kbv_err e;
    int rc;
    run_data *r = bf16_run("bf16", &e, &rc);
    assert_int_equal(rc, 0);
    double two[] = {2, 2, 2};
    TU_ADD(r, "{\"type\":\"check\",\"set\":\"naive-bf16\",\"problem\":\"L1_1\",\"dist\":\"D1\",\"trial\":0,"
              "\"pass\":false,\"max_abs_err\":0.5,\"max_rel_err\":0.5,\"mismatches\":3,\"count\":64}");
    tu_times(r, "naive-bf16", "L1_1", "candidate", two, 3);
    tu_times(r, "naive-bf16", "L1_1", "bf16", two, 3);
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"naive-bf16\",\"problem\":\"L1_1\",\"status\":\"ok\"}");
    cJSON *a = build(r);
    const cJSON *p = path(a, "sets.1.problems.0");
    assert_string_equal(str(p, "class"), "incorrect");
    const char *t = str(p, "evidence.0.text");
    if (!strstr(t, "outside 0.01 + 0.01|ref|")) fail_msg("evidence \"%s\"", t);
    cJSON_Delete(a);
    run_free(r);
}

/* A pair is timed in one setting: a bf16 time record in a pair that holds
 * fp32 records breaks the grammar, and the pair is tampering. */
static void test_mixed_pair(void **state)
{
    (void)state;
    kbv_err e;
    int rc;
    run_data *r = bf16_run("bf16", &e, &rc);
    assert_int_equal(rc, 0);
    double two[] = {2, 2, 2};
    tu_times(r, "naive", "L1_1", "candidate", two, 3);
    tu_times(r, "naive", "L1_1", "fp32", two, 3);
    tu_times(r, "naive", "L1_1", "bf16", two, 1);
    const run_pair *pr = run_pair_at(r, 0, 0);
    assert_non_null(pr->tamper_why);
    assert_non_null(strstr(pr->tamper_why, "bf16"));
    assert_int_equal(pr->times[RUN_V_BF16].n, 0);
    run_free(r);
}

/* The bf16 baseline timed in two BF16 sets drifts like any baseline: 21
 * samples of 1.0 ms in one set and of 1.3 ms in the other give one entry
 * for baseline bf16 with both sets. */
static void test_drift(void **state)
{
    (void)state;
    kbv_err e;
    int rc;
    run_data *r = bf16_run_n("bf16", 1, &e, &rc);
    assert_int_equal(rc, 0);
    double a[21], b[21], c[21];
    for (int i = 0; i < 21; i++) {
        a[i] = 1.0 + 0.001 * i;
        b[i] = 1.3 + 0.001 * i;
        c[i] = 0.5;
    }
    tu_times(r, "naive-bf16", "L1_1", "candidate", c, 21);
    tu_times(r, "naive-bf16", "L1_1", "bf16", a, 21);
    tu_times(r, "other-bf16", "L1_1", "candidate", c, 21);
    tu_times(r, "other-bf16", "L1_1", "bf16", b, 21);
    cJSON *a_json = build(r);
    const cJSON *d = path(a_json, "baseline_drift");
    assert_int_equal(cJSON_GetArraySize(d), 1);
    assert_string_equal(str(d, "0.baseline"), "bf16");
    assert_string_equal(str(d, "0.problem"), "L1_1");
    assert_int_equal(cJSON_GetArraySize(path(d, "0.sets")), 2);
    NEAR(num(d, "0.drift"), 1.31 / 1.01);
    cJSON_Delete(a_json);
    run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest),
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_mixed_pair),
        cmocka_unit_test(test_drift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

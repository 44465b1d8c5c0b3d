/* Known answers for the baseline drift across sets (analyze/drift.c),
 * worked out by hand: the order-statistic interval of a median, a baseline
 * 10% slower in one set (reported), one within noise and one whose medians
 * differ by 9% with intervals that overlap (both not reported), the order of
 * the list, and the same bytes from two analyses; why a baseline drifts
 * (another algorithm, a lower SM clock, or not explained), from the time
 * records' sm_mhz and the baseline records' choice, the baseline
 * records that are malformed, and a baseline's two input-set modes, which
 * drift only where the records do not name the set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "analysis.h"
#include "drift.h"
#include "test_analyze_util.h"

static const char *const SETS[] = {"a", "b", NULL};
static const char *const PROBS[] = {"p1", "p2", "p3", "p4", NULL};

/* n = 21: P(B <= 5) = 27896 / 2^21 = 0.0133 < 0.025 <= P(B <= 6) = 82160 / 2^21
 * = 0.0392 for B ~ Binomial(21, 1/2), so k = 6 and the interval is
 * [x_(6), x_(16)] (coverage 1 - 2 * 0.0133 = 0.973). */
static void test_median_ci(void **state)
{
    (void)state;
    double x[21], lo, hi;
    for (int i = 0; i < 21; i++) x[i] = i + 1;
    double m = drift_median_ci(x, 21, 0.95, &lo, &hi);
    assert_true(m == 11);
    assert_true(lo == 6);
    assert_true(hi == 16);
    /* n = 5: P(B <= 0) = 1/32 = 0.031 >= 0.025, so no pair of order
     * statistics reaches 95%: the whole range. */
    double y[5] = {1, 2, 3, 4, 5};
    m = drift_median_ci(y, 5, 0.95, &lo, &hi);
    assert_true(m == 3 && lo == 1 && hi == 5);
    /* n = 6: P(B <= 0) = 1/64 = 0.016 < 0.025 <= P(B <= 1) = 7/64: k = 1. */
    double z[6] = {1, 2, 3, 4, 5, 6};
    m = drift_median_ci(z, 6, 0.95, &lo, &hi);
    assert_true(m == 3.5 && lo == 1 && hi == 6);
    /* n = 10: P(B <= 1) = 11/1024 = 0.011, P(B <= 2) = 56/1024 = 0.055: k = 2. */
    double w[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    m = drift_median_ci(w, 10, 0.95, &lo, &hi);
    assert_true(m == 5.5 && lo == 2 && hi == 9);
    double one = 4;
    m = drift_median_ci(&one, 1, 0.95, &lo, &hi);
    assert_true(m == 4 && lo == 4 && hi == 4);
}

/* 21 samples s * (1 + step * (i - 10)), i = 0..20, in a scrambled order. */
static void samples(run_data *r, const char *set, const char *prob, const char *variant, double s, double step)
{
    double v[21];
    for (int i = 0; i < 21; i++) {
        int j = (i * 8) % 21;   /* 8 is coprime with 21: a permutation */
        v[i] = s * (1 + step * (j - 10));
    }
    tu_times(r, set, prob, variant, v, 21);
}

/*  p1 fp32: a = 1.000 (interval [0.995, 1.005]), b = 1.100 ([1.0945, 1.1055]):
 *     drift 1.1, intervals apart: reported.
 *  p1 tf32: a = 1.000, b = 1.002 (steps of 0.001): drift 1.002, within noise.
 *  p2 fp32: a = 11, b = 12 from 1..21 and 2..22 (step 1/11 around 11, 12):
 *     drift 12/11 = 1.0909 > 1.05, but a's interval [6, 16] and b's
 *     [6.545.., 17.45..] overlap: not reported.
 *  p3 tf32: a = 2.4, b = 2.0 (step 0.001): drift 1.2, reported, before p1.
 *  p4: timed in set a only: never compared. */
static run_data *drift_run(void)
{
    run_data *r = tu_run(SETS, PROBS);
    samples(r, "a", "p1", "fp32", 1.0, 0.001);
    samples(r, "b", "p1", "fp32", 1.1, 0.001);
    samples(r, "a", "p1", "tf32", 1.0, 0.001);
    samples(r, "b", "p1", "tf32", 1.002, 0.001);
    samples(r, "a", "p2", "fp32", 11, 1.0 / 11);
    samples(r, "b", "p2", "fp32", 12, 1.0 / 11);
    samples(r, "a", "p3", "tf32", 2.4, 0.001);
    samples(r, "b", "p3", "tf32", 2.0, 0.001);
    samples(r, "a", "p4", "fp32", 1.0, 0.001);
    samples(r, "a", "p4", "tf32", 3.0, 0.001);
    return r;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_non_null(v);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static void check_set(const cJSON *s, const char *name, double med, double lo, double hi)
{
    assert_string_equal(str(s, "set"), name);
    assert_true(fabs(num(s, "median_ms") - med) < 1e-12);
    assert_true(fabs(num(s, "ci_low_ms") - lo) < 1e-12);
    assert_true(fabs(num(s, "ci_high_ms") - hi) < 1e-12);
    assert_true(num(s, "n") == 21);
}

static void test_drift_known(void **state)
{
    (void)state;
    run_data *r = drift_run();
    cJSON *d = NULL;
    kbv_err e;
    assert_int_equal(drift_build(r, 0.95, NULL, &d, &e), 0);
    assert_true(cJSON_IsArray(d));
    assert_int_equal(cJSON_GetArraySize(d), 2);

    const cJSON *x = cJSON_GetArrayItem(d, 0);
    assert_string_equal(str(x, "problem"), "p3");
    assert_string_equal(str(x, "baseline"), "tf32");
    assert_true(fabs(num(x, "drift") - 1.2) < 1e-12);
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(x, "sets");
    assert_int_equal(cJSON_GetArraySize(ss), 2);
    check_set(cJSON_GetArrayItem(ss, 0), "a", 2.4, 2.4 * 0.995, 2.4 * 1.005);
    check_set(cJSON_GetArrayItem(ss, 1), "b", 2.0, 2.0 * 0.995, 2.0 * 1.005);

    x = cJSON_GetArrayItem(d, 1);
    assert_string_equal(str(x, "problem"), "p1");
    assert_string_equal(str(x, "baseline"), "fp32");
    assert_true(fabs(num(x, "drift") - 1.1) < 1e-12);
    ss = cJSON_GetObjectItemCaseSensitive(x, "sets");
    check_set(cJSON_GetArrayItem(ss, 0), "a", 1.0, 0.995, 1.005);
    check_set(cJSON_GetArrayItem(ss, 1), "b", 1.1, 1.1 * 0.995, 1.1 * 1.005);
    cJSON_Delete(d);

    /* At 99.99% the interval is [x_(2), x_(20)] (P(B <= 1) = 22 / 2^21 =
     * 1.0e-5 < 5e-5 <= P(B <= 2) = 232 / 2^21), +-0.9% of the median: p1's
     * and p3's intervals are still apart, so the list stays the same. */
    assert_int_equal(drift_build(r, 0.9999, NULL, &d, &e), 0);
    assert_int_equal(cJSON_GetArraySize(d), 2);
    cJSON_Delete(d);
    run_free(r);
}

/* Equal drifts keep run order: problem, then fp32 before tf32. */
static void test_drift_ties(void **state)
{
    (void)state;
    run_data *r = tu_run(SETS, PROBS);
    samples(r, "a", "p2", "tf32", 1.0, 0.001);
    samples(r, "b", "p2", "tf32", 1.1, 0.001);
    samples(r, "a", "p2", "fp32", 1.0, 0.001);
    samples(r, "b", "p2", "fp32", 1.1, 0.001);
    samples(r, "b", "p1", "tf32", 1.0, 0.001);
    samples(r, "a", "p1", "tf32", 1.1, 0.001);
    cJSON *d = NULL;
    kbv_err e;
    assert_int_equal(drift_build(r, 0.95, NULL, &d, &e), 0);
    assert_int_equal(cJSON_GetArraySize(d), 3);
    const char *want[3][2] = {{"p1", "tf32"}, {"p2", "fp32"}, {"p2", "tf32"}};
    for (int k = 0; k < 3; k++) {
        const cJSON *x = cJSON_GetArrayItem(d, k);
        assert_string_equal(str(x, "problem"), want[k][0]);
        assert_string_equal(str(x, "baseline"), want[k][1]);
    }
    cJSON_Delete(d);
    run_free(r);
}

static char *analyse(run_data *r, int threads)
{
    analysis_opts o;
    analysis_default_opts(r, &o);
    o.resamples = 200;
    o.threads = threads;
    cJSON *a = NULL;
    kbv_err e;
    assert_int_equal(analysis_build(r, &o, &a, &e), 0);
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(a, "baseline_drift")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "baseline_drift")), 2);
    char *s = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return s;
}

/* analysis.json carries the list, and two analyses give the same bytes. */
static void test_drift_in_analysis(void **state)
{
    (void)state;
    run_data *r = drift_run();
    char *a = analyse(r, 1), *b = analyse(r, 1), *c = analyse(r, 2);
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    free(a);
    free(b);
    free(c);
    run_free(r);
}

/* A pair left out by the skip mask does not count: without set b's p3,
 * p3's tf32 baseline has one set and no drift. */
static void test_drift_skip(void **state)
{
    (void)state;
    run_data *r = drift_run();
    unsigned char skip[2 * 4] = {0};
    skip[1 * 4 + 2] = 1;   /* set b, problem p3 */
    cJSON *d = NULL;
    kbv_err e;
    assert_int_equal(drift_build(r, 0.95, skip, &d, &e), 0);
    assert_int_equal(cJSON_GetArraySize(d), 1);
    assert_string_equal(str(cJSON_GetArrayItem(d, 0), "problem"), "p1");
    cJSON_Delete(d);
    run_free(r);
}

/* analyze leaves out the baselines of a pair whose candidate it classes
 * tampering (or a hack): set b's p3 forged a record, so p3's drift, which
 * only that pair made, is not reported. */
static void test_drift_without_disturbed_pairs(void **state)
{
    (void)state;
    run_data *r = drift_run();
    TU_ADD(r, "{\"type\":\"tamper\",\"set\":\"b\",\"problem\":\"p3\",\"detail\":\"forged record\"}");
    analysis_opts o;
    analysis_default_opts(r, &o);
    o.resamples = 200;
    cJSON *a = NULL;
    kbv_err e;
    assert_int_equal(analysis_build(r, &o, &a, &e), 0);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(a, "baseline_drift");
    assert_int_equal(cJSON_GetArraySize(d), 1);
    assert_string_equal(str(cJSON_GetArrayItem(d, 0), "problem"), "p1");
    cJSON_Delete(a);
    run_free(r);
}

/* 21 samples as samples() makes them, the first n_clk of them with sm_mhz
 * clk[i % n_pat] (the others without one); odd samples go through the
 * general parser (a \\u escape sends the line past the fast scanner), so
 * that both readers of sm_mhz are used. */
static void samples_clk(run_data *r, const char *set, const char *prob, const char *variant, double s, double step,
                        const char *const *clk, size_t n_pat, size_t n_clk)
{
    for (int i = 0; i < 21; i++) {
        int j = (i * 8) % 21;
        double v = s * (1 + step * (j - 10));
        char mhz[64] = "";
        if ((size_t)i < n_clk) snprintf(mhz, sizeof mhz, ",\"sm_mhz\":%s", clk[(size_t)i % n_pat]);
        TU_ADD(r, "{\"type\":\"%s\",\"set\":\"%s\",\"problem\":\"%s\",\"variant\":\"%s\",\"round\":%d,"
               "\"gpu_ms\":%.17g,\"wall_ms\":%.17g%s}", i % 2 ? "\\u0074ime" : "time", set, prob, variant, i, v,
               v + 0.01, mhz);
    }
}

static void choice(run_data *r, const char *set, const char *prob, const char *variant, const char *text)
{
    TU_ADD(r, "{\"type\":\"baseline\",\"set\":\"%s\",\"problem\":\"%s\",\"variant\":\"%s\",\"choice\":\"%s\"}", set,
           prob, variant, text);
}

static const cJSON *set_of(const cJSON *x, int k)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(x, "sets"), k);
}

static const cJSON *find_entry(const cJSON *d, const char *prob, const char *bl)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, d)
        if (strcmp(str(x, "problem"), prob) == 0 && strcmp(str(x, "baseline"), bl) == 0) return x;
    fail_msg("no drift entry for %s %s", prob, bl);
    return NULL;
}

/* Every one of p1..p4 drifts by 1.1 (a: 1.0, b: 1.1 ms, intervals apart),
 * so the cause alone differs:
 *  p1 tf32: a at 1980 MHz, b at 1485 for 11 samples and 1980 for 10 (median
 *     1485): clock, ratio 1980 / 1485 = 4/3.  p1 fp32 drifts too, with 20
 *     of b's 21 samples clocked, 10 at 1500 and 10 at 1560 (median 1530),
 *     and a's at 1545 (ratio 1545/1530 = 1.0098 < 1.02): unexplained.
 *  p2 tf32: the same clocks as p1 tf32, but the sets' workers chose other
 *     algorithms (b's twice, after a resume, with one text repeated):
 *     algorithm comes first, and b's choice is "k2 | k3".
 *  p3 tf32: the same choice in both sets and no clock: unexplained, with
 *     the choices shown and no sm_mhz, no clock_ratio.
 *  p4 tf32: a choice in a only, clocks that are not positive numbers
 *     (0, -5, null, a string): unexplained, no sm_mhz. */
static run_data *cause_run(void)
{
    static const char *const fast[] = {"1980"}, *const slow[] = {"1485", "1980"};
    static const char *const fp_b[] = {"1500", "1560"}, *const fp_a[] = {"1545"};
    static const char *const junk[] = {"0", "-5", "null", "\"1980\""};
    run_data *r = tu_run(SETS, PROBS);
    samples_clk(r, "a", "p1", "tf32", 1.0, 0.001, fast, 1, 21);
    samples_clk(r, "b", "p1", "tf32", 1.1, 0.001, slow, 2, 21);
    samples_clk(r, "a", "p1", "fp32", 2.0, 0.001, fp_a, 1, 21);
    samples_clk(r, "b", "p1", "fp32", 2.2, 0.001, fp_b, 2, 20);
    choice(r, "a", "p2", "tf32", "algo 21 tile 128x256");
    choice(r, "b", "p2", "tf32", "k2");
    choice(r, "b", "p2", "fp32", "fp32 kernel");
    samples_clk(r, "a", "p2", "tf32", 1.0, 0.001, fast, 1, 21);
    samples_clk(r, "b", "p2", "tf32", 1.1, 0.001, slow, 2, 21);
    choice(r, "b", "p2", "tf32", "k3");
    /* The same record again, written with other spacing (a journal with a
     * line repeated byte for byte is refused). */
    TU_ADD(r, "{\"type\": \"baseline\", \"set\": \"b\", \"problem\": \"p2\", \"variant\": \"tf32\", \"choice\": \"k2\"}");
    choice(r, "b", "p2", "tf32", "");
    choice(r, "a", "p3", "tf32", "same");
    choice(r, "b", "p3", "tf32", "same");
    samples(r, "a", "p3", "tf32", 1.0, 0.001);
    samples(r, "b", "p3", "tf32", 1.1, 0.001);
    choice(r, "a", "p4", "tf32", "only a");
    samples_clk(r, "a", "p4", "tf32", 1.0, 0.001, junk, 4, 21);
    samples_clk(r, "b", "p4", "tf32", 1.1, 0.001, junk, 4, 21);
    return r;
}

static void test_drift_cause(void **state)
{
    (void)state;
    run_data *r = cause_run();
    cJSON *d = NULL;
    kbv_err e;
    assert_int_equal(drift_build(r, 0.95, NULL, &d, &e), 0);
    assert_int_equal(cJSON_GetArraySize(d), 5);

    const cJSON *x = find_entry(d, "p1", "tf32");
    assert_string_equal(str(x, "cause"), "clock");
    assert_true(fabs(num(x, "clock_ratio") - 4.0 / 3) < 1e-12);
    assert_true(num(set_of(x, 0), "sm_mhz") == 1980);
    assert_true(num(set_of(x, 1), "sm_mhz") == 1485);
    assert_null(cJSON_GetObjectItemCaseSensitive(set_of(x, 0), "choice"));

    x = find_entry(d, "p1", "fp32");
    assert_string_equal(str(x, "cause"), "unexplained");
    assert_true(fabs(num(x, "clock_ratio") - 1545.0 / 1530) < 1e-12);
    assert_true(num(set_of(x, 0), "sm_mhz") == 1545);
    assert_true(num(set_of(x, 1), "sm_mhz") == 1530);

    x = find_entry(d, "p2", "tf32");
    assert_string_equal(str(x, "cause"), "algorithm");
    assert_true(fabs(num(x, "clock_ratio") - 4.0 / 3) < 1e-12);
    assert_string_equal(str(set_of(x, 0), "choice"), "algo 21 tile 128x256");
    assert_string_equal(str(set_of(x, 1), "choice"), "k2 | k3");

    x = find_entry(d, "p3", "tf32");
    assert_string_equal(str(x, "cause"), "unexplained");
    assert_null(cJSON_GetObjectItemCaseSensitive(x, "clock_ratio"));
    assert_string_equal(str(set_of(x, 0), "choice"), "same");
    assert_string_equal(str(set_of(x, 1), "choice"), "same");
    assert_null(cJSON_GetObjectItemCaseSensitive(set_of(x, 0), "sm_mhz"));

    x = find_entry(d, "p4", "tf32");
    assert_string_equal(str(x, "cause"), "unexplained");
    assert_null(cJSON_GetObjectItemCaseSensitive(x, "clock_ratio"));
    assert_string_equal(str(set_of(x, 0), "choice"), "only a");
    assert_null(cJSON_GetObjectItemCaseSensitive(set_of(x, 1), "choice"));
    assert_null(cJSON_GetObjectItemCaseSensitive(set_of(x, 0), "sm_mhz"));
    assert_null(cJSON_GetObjectItemCaseSensitive(set_of(x, 1), "sm_mhz"));
    cJSON_Delete(d);

    /* The same bytes again, and with two threads of analysis. */
    analysis_opts o;
    analysis_default_opts(r, &o);
    o.resamples = 200;
    char *text[2];
    for (int k = 0; k < 2; k++) {
        o.threads = k + 1;
        cJSON *a = NULL;
        assert_int_equal(analysis_build(r, &o, &a, &e), 0);
        text[k] = cJSON_PrintUnformatted(a);
        cJSON_Delete(a);
    }
    assert_string_equal(text[0], text[1]);
    free(text[0]);
    free(text[1]);
    run_free(r);
}

/* A baseline record names a set and problem of the manifest, the fp32 or
 * tf32 variant and a string choice; anything else is an input error naming
 * file and line, as for the other records.  Members it does not know are
 * ignored. */
static void test_baseline_record_errors(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"{\"type\":\"baseline\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"candidate\",\"choice\":\"k\"}",
         "unknown baseline variant \"candidate\""},
        {"{\"type\":\"baseline\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp16\",\"choice\":\"k\"}",
         "unknown baseline variant \"fp16\""},
        {"{\"type\":\"baseline\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"tf32\",\"choice\":21}",
         "\"choice\" must be a string"},
        {"{\"type\":\"baseline\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"tf32\",\"choice\":null}",
         "\"choice\" must be a string"},
        {"{\"type\":\"baseline\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"tf32\"}",
         "\"choice\" must be a string"},
        {"{\"type\":\"baseline\",\"set\":\"a\",\"problem\":\"p1\",\"choice\":\"k\"}", "variant"},
        {"{\"type\":\"baseline\",\"set\":\"zz\",\"problem\":\"p1\",\"variant\":\"tf32\",\"choice\":\"k\"}",
         "set \"zz\" is not in the manifest"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_data *r = tu_run(SETS, PROBS);
        kbv_err e;
        TU_ADD(r, "{\"type\":\"status\",\"set\":\"b\",\"problem\":\"p1\",\"status\":\"ok\"}");
        int rc = tu_add(r, &e, "%s", bad[i][0]);
        if (rc != KBV_EINPUT) fail_msg("accepted: %s", bad[i][0]);
        if (strncmp(e.msg, "samples.jsonl:2: ", 17) != 0 || !strstr(e.msg, bad[i][1]))
            fail_msg("message \"%s\" for %s", e.msg, bad[i][0]);
        run_free(r);
    }
    /* A member the grammar does not know: evidence of tampering, not data. */
    run_data *r = tu_run(SETS, PROBS);
    TU_ADD(r, "{\"type\":\"baseline\",\"set\":\"a\",\"problem\":\"p1\",\"variant\":\"fp32\",\"choice\":\"k\","
              "\"extra\":{\"tile\":[128,256]}}");
    assert_int_equal(run_pair_at(r, 0, 0)->n_choices[RUN_V_FP32], 0);
    assert_non_null(strstr(run_pair_at(r, 0, 0)->tamper_why, "extra"));
    run_free(r);
}

/* Two input-set modes of one baseline, 10% apart: n0 samples of input set
 * 0 at base * (1 + 0.001 * (i - off0)) and then n1 of input set 1 at
 * base * (1.1 + 0.001 * (i - off1)), in rounds 0..n0+n1-1; with named
 * false the records leave the set out. */
static void modes(run_data *r, const char *set, const char *prob, double base, int n0, int off0, int n1,
                  int off1, int named)
{
    for (int i = 0; i < n0 + n1; i++) {
        int k = i >= n0, j = k ? i - n0 : i;
        double v = base * ((k ? 1.1 : 1.0) + 0.001 * (j - (k ? off1 : off0)));
        char iset[32] = "";
        if (named) snprintf(iset, sizeof iset, ",\"input_set\":%d", k);
        TU_ADD(r, "{\"type\":\"time\",\"set\":\"%s\",\"problem\":\"%s\",\"variant\":\"fp32\",\"round\":%d%s,"
               "\"gpu_ms\":%.17g,\"wall_ms\":%.17g}", set, prob, i, iset, v, v + 0.01);
    }
}

/* A drift that is only the share of rounds each input buffer drew:
 * set a drew the fast buffer (input set 0) in 16 of 21 rounds, set b in 5.
 *  p1 (sets named): n = 16 gives k = 4 (P(B <= 3) = 697 / 2^16 = 0.011 <
 *     0.025 <= P(B <= 4) = 2517 / 2^16), the interval [x_(4), x_(13)];
 *     n = 5 gives the whole range (test_median_ci).  a: set 0 1.0005
 *     [0.996, 1.005], set 1 1.102 [1.100, 1.104]: time (1.0005 + 1.102) /
 *     2 = 1.05125, interval [1.048, 1.0545]; b: set 0 1.002 [1.000,
 *     1.004], set 1 1.1005 [1.096, 1.105]: the same.  No drift.
 *  p2: the same samples without the sets: n = 21, [x_(6), x_(16)]; a's
 *     pooled median 1.003 [0.998, 1.008], b's 1.098 [1.093, 1.103]: drift
 *     1.098 / 1.003, intervals apart, reported, as analyze did before the
 *     records named the set.
 *  p3 (sets named): b is p1's b times 1.1: drift 1.1, reported, with the
 *     stratified times and intervals. */
static void test_drift_input_sets(void **state)
{
    (void)state;
    run_data *r = tu_run(SETS, PROBS);
    modes(r, "a", "p1", 1.0, 16, 7, 5, 0, 1);
    modes(r, "b", "p1", 1.0, 5, 0, 16, 7, 1);
    modes(r, "a", "p2", 1.0, 16, 7, 5, 0, 0);
    modes(r, "b", "p2", 1.0, 5, 0, 16, 7, 0);
    modes(r, "a", "p3", 1.0, 16, 7, 5, 0, 1);
    modes(r, "b", "p3", 1.1, 5, 0, 16, 7, 1);
    cJSON *d = NULL;
    kbv_err e;
    assert_int_equal(drift_build(r, 0.95, NULL, &d, &e), 0);
    assert_int_equal(cJSON_GetArraySize(d), 2);
    const cJSON *x = cJSON_GetArrayItem(d, 0);
    assert_string_equal(str(x, "problem"), "p3");
    assert_true(fabs(num(x, "drift") - 1.1) < 1e-12);
    check_set(set_of(x, 0), "a", 1.05125, 1.048, 1.0545);
    check_set(set_of(x, 1), "b", 1.1 * 1.05125, 1.1 * 1.048, 1.1 * 1.0545);
    x = cJSON_GetArrayItem(d, 1);
    assert_string_equal(str(x, "problem"), "p2");
    assert_true(fabs(num(x, "drift") - 1.098 / 1.003) < 1e-12);
    check_set(set_of(x, 0), "a", 1.003, 0.998, 1.008);
    check_set(set_of(x, 1), "b", 1.098, 1.093, 1.103);
    cJSON_Delete(d);
    run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_ci),
        cmocka_unit_test(test_drift_known),
        cmocka_unit_test(test_drift_ties),
        cmocka_unit_test(test_drift_in_analysis),
        cmocka_unit_test(test_drift_skip),
        cmocka_unit_test(test_drift_without_disturbed_pairs),
        cmocka_unit_test(test_drift_cause),
        cmocka_unit_test(test_drift_input_sets),
        cmocka_unit_test(test_baseline_record_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

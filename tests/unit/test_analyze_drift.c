/* Known answers for the baseline drift across sets (analyze/drift.c),
 * worked out by hand: the order-statistic interval of a median, a baseline
 * 10% slower in one set (reported), one within noise and one whose medians
 * differ by 9% with intervals that overlap (both not reported), the order of
 * the list, and the same bytes from two analyses. */
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
    assert_int_equal(drift_build(r, 0.95, &d, &e), 0);
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
    assert_int_equal(drift_build(r, 0.9999, &d, &e), 0);
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
    assert_int_equal(drift_build(r, 0.95, &d, &e), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_ci),
        cmocka_unit_test(test_drift_known),
        cmocka_unit_test(test_drift_ties),
        cmocka_unit_test(test_drift_in_analysis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

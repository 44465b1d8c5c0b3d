/* Known answers for analysis_build (analyze/analysis.c), worked out by hand:
 * medians of odd and even counts, speedups, the geometric means of correct
 * and of all problems, fast_p with its strict ">", memory efficiency, the
 * inflation steps, and identical bytes for any number of threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "analysis.h"
#include "classify.h"
#include "test_analyze_util.h"

static const char *const SETS[] = {"s", NULL};
static const char *const PROBS[] = {"p1", "p2", "p3", "p4", "p5", NULL};

static void mem(run_data *r, const char *p, const char *v, double peak)
{
    TU_ADD(r, "{\"type\":\"memory\",\"set\":\"s\",\"problem\":\"%s\",\"variant\":\"%s\",\"peak_bytes\":%.0f}", p, v,
           peak);
}

/* Speedups are medians of per-round ratios over the rounds both variants
 * hold (rounds 0, 1, ... in the order written):
 *  p1 correct: candidate 3 1 2 (median 2), fp32 10 4 8 6 (median 7; round 3
 *     has no candidate), tf32 2 2 2: fp32 ratios 10/3, 4, 4 (median 4; the
 *     unpaired medians would give 3.5), tf32 ratios 2/3, 2, 1 (median 1);
 *     peaks 100 vs tf32 200 (efficiency 2, less).
 *  p2 correct: candidate 2 2 2 2 (median 2), fp32 and tf32 1 1 1: three
 *     shared rounds, speedups 0.5; peaks 300 vs 150 (efficiency 0.5).
 *  p3 error (crash), no samples.
 *  p4 correct: 5 5 5 against 5 5 5: speedups exactly 1; peaks 100 vs 100.
 *  p5 hidden-fail: candidate 1, fp32 4 (speedup 4), tf32 2 (2). */
static run_data *known_run(void)
{
    run_data *r = tu_run(SETS, PROBS);
    double c1[] = {3, 1, 2}, f1[] = {10, 4, 8, 6}, t1[] = {2, 2, 2};
    double c2[] = {2, 2, 2, 2}, f2[] = {1, 1, 1};
    double c4[] = {5, 5, 5};
    double c5[] = {1}, f5[] = {4}, t5[] = {2};
    tu_pass(r, "s", "p1", "fp32");
    tu_times(r, "s", "p1", "candidate", c1, 3);
    tu_times(r, "s", "p1", "fp32", f1, 4);
    tu_times(r, "s", "p1", "tf32", t1, 3);
    mem(r, "p1", "candidate", 100);
    mem(r, "p1", "tf32", 200);
    mem(r, "p1", "fp32", 200);
    tu_pass(r, "s", "p2", "fp32");
    tu_times(r, "s", "p2", "candidate", c2, 4);
    tu_times(r, "s", "p2", "fp32", f2, 3);
    tu_times(r, "s", "p2", "tf32", f2, 3);
    mem(r, "p2", "candidate", 300);
    mem(r, "p2", "tf32", 150);
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p3\",\"status\":\"crash\"}");
    tu_pass(r, "s", "p4", "fp32");
    tu_times(r, "s", "p4", "candidate", c4, 3);
    tu_times(r, "s", "p4", "fp32", c4, 3);
    tu_times(r, "s", "p4", "tf32", c4, 3);
    mem(r, "p4", "candidate", 100);
    mem(r, "p4", "tf32", 100);
    tu_pass(r, "s", "p5", "fp32");
    TU_ADD(r, "{\"type\":\"check\",\"set\":\"s\",\"problem\":\"p5\",\"dist\":\"D3\",\"trial\":0,\"pass\":false,"
              "\"mismatches\":4}");
    tu_times(r, "s", "p5", "candidate", c5, 1);
    tu_times(r, "s", "p5", "fp32", f5, 1);
    tu_times(r, "s", "p5", "tf32", t5, 1);
    return r;
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

static double num(const cJSON *o, const char *p)
{
    const cJSON *v = path(o, p);
    if (!cJSON_IsNumber(v)) fail_msg("%s is not a number", p);
    return v->valuedouble;
}

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-12 * fabs((double)(b)) + 1e-15)

static cJSON *build(run_data *r, int threads, size_t B)
{
    analysis_opts o;
    analysis_default_opts(r, &o);
    o.threads = threads;
    o.resamples = B;
    cJSON *out = NULL;
    kbv_err e;
    int rc = analysis_build(r, &o, &out, &e);
    if (rc) fail_msg("analysis_build: %s", e.msg);
    return out;
}

static void test_known_answers(void **state)
{
    (void)state;
    run_data *r = known_run();
    cJSON *a = build(r, 1, 2000);
    const cJSON *s = path(a, "sets.0");
    assert_string_equal(path(s, "problems.0.class")->valuestring, "correct");
    assert_string_equal(path(s, "problems.2.class")->valuestring, "error");
    assert_string_equal(path(s, "problems.4.class")->valuestring, "hidden-fail");
    assert_true(num(s, "counts.correct") == 3 && num(s, "counts.error") == 1 && num(s, "counts.hidden-fail") == 1);
    assert_true(num(s, "counts.identity") == 0);

    /* Medians and speedups. */
    assert_true(num(s, "problems.0.time_ms.candidate") == 2);
    assert_true(num(s, "problems.0.time_ms.fp32") == 7);
    assert_true(num(s, "problems.1.time_ms.candidate") == 2);
    NEAR(num(s, "problems.0.speedup.fp32.estimate"), 4);
    assert_true(num(s, "problems.0.speedup.fp32.n") == 3);
    NEAR(num(s, "problems.0.speedup.tf32.estimate"), 1);
    assert_true(num(s, "problems.1.speedup.fp32.n") == 3);
    NEAR(num(s, "problems.1.speedup.fp32.estimate"), 0.5);
    NEAR(num(s, "problems.3.speedup.fp32.estimate"), 1);
    assert_true(cJSON_IsNull(path(s, "problems.2.speedup.fp32")));
    assert_true(cJSON_IsNull(path(s, "problems.2.time_ms.candidate")));
    assert_true(num(s, "problems.0.n_samples.fp32") == 4);
    /* Constant samples: a zero-width interval. */
    assert_true(num(s, "problems.3.speedup.fp32.ci_low") == 1 && num(s, "problems.3.speedup.fp32.ci_high") == 1);
    /* p1: a resample of the three rounds has the median ratio 10/3 when it
     * holds round 0 at least twice (P = 7/27 > 2.5%), else 4 (P = 20/27):
     * the interval is [10/3, 4]. */
    double lo = num(s, "problems.0.speedup.fp32.ci_low"), hi = num(s, "problems.0.speedup.fp32.ci_high");
    NEAR(lo, 10.0 / 3);
    NEAR(hi, 4);

    /* Geometric means: correct = p1, p2, p4. */
    NEAR(num(s, "baselines.fp32.geomean_speedup_correct.estimate"), cbrt(4 * 0.5 * 1));
    assert_true(num(s, "baselines.fp32.geomean_speedup_correct.n") == 3);
    NEAR(num(s, "baselines.tf32.geomean_speedup_correct.estimate"), cbrt(1 * 0.5 * 1));
    /* All five problems: max(1, s) for correct ones, 1 for the others. */
    NEAR(num(s, "baselines.fp32.geomean_speedup_all.estimate"), pow(4, 0.2));
    assert_true(num(s, "baselines.fp32.geomean_speedup_all.n") == 5);
    NEAR(num(s, "baselines.tf32.geomean_speedup_all.estimate"), 1);
    double gl = num(s, "baselines.fp32.geomean_speedup_correct.ci_low");
    double gh = num(s, "baselines.fp32.geomean_speedup_correct.ci_high");
    /* Within the smallest and largest speedups, up to the single precision
     * of the stored replicates (a relative 6e-8 on the log). */
    assert_true(gl <= cbrt(2) && gh >= cbrt(2) && gl >= 0.5 * (1 - 1e-6) && gh <= 4 * (1 + 1e-6));

    /* fast_p over the suite (5 problems), correct only, strict ">". */
    const double want_fp32[6] = {3.0 / 5, 2.0 / 5, 2.0 / 5, 1.0 / 5, 1.0 / 5, 1.0 / 5};
    const double want_tf32[6] = {3.0 / 5, 2.0 / 5, 2.0 / 5, 0, 0, 0};
    for (int k = 0; k < 6; k++) {
        char p[96];
        snprintf(p, sizeof p, "baselines.fp32.fast_p.%d.estimate", k);
        NEAR(num(s, p), want_fp32[k]);
        snprintf(p, sizeof p, "baselines.tf32.fast_p.%d.estimate", k);
        NEAR(num(s, p), want_tf32[k]);
        snprintf(p, sizeof p, "baselines.fp32.fast_p.%d.p", k);
        assert_true(num(s, p) == analysis_fastp_points[k]);
    }
    /* The band of fast_1 = 1/5: every replicate of p1's speedup is above 1
     * and none of p2's or p4's, so the bootstrap over problems counts
     * Binomial(5, 0.2): quantiles 0 (P(X = 0) = 0.328 >= 0.025) and 3/5
     * (P(X <= 2) = 0.942, P(X <= 3) = 0.993); widened to the Clopper-Pearson
     * interval of 1 of 5, [0.00505, 0.71642] (mpmath), it is [0, 0.71642]. */
    assert_true(num(s, "baselines.fp32.fast_p.3.ci_low") == 0);
    assert_true(fabs(num(s, "baselines.fp32.fast_p.3.ci_high") - 0.71641793611808951) < 1e-12);
    /* fast_2 of tf32 is 0 of 5: the bootstrap gives [0, 0], Clopper-Pearson
     * [0, 0.52182]. */
    assert_true(num(s, "baselines.tf32.fast_p.5.ci_low") == 0);
    assert_true(fabs(num(s, "baselines.tf32.fast_p.5.ci_high") - 0.52182375010498151) < 1e-12);
    assert_int_equal(cJSON_GetArraySize(path(s, "baselines.fp32.fast_p_curve")), 61);
    NEAR(num(s, "baselines.fp32.fast_p_curve.0.p"), 0.1);
    NEAR(num(s, "baselines.fp32.fast_p_curve.30.p"), 1);
    NEAR(num(s, "baselines.fp32.fast_p_curve.60.p"), 10);
    /* The curve at p = 1 is fast_1. */
    NEAR(num(s, "baselines.fp32.fast_p_curve.30.estimate"), 0.2);

    /* Memory against tf32 over the correct problems: 2, 0.5 and 1. */
    NEAR(num(s, "memory.efficiency_geomean.estimate"), 1);
    assert_true(num(s, "memory.efficiency_geomean.n") == 3);
    NEAR(num(s, "memory.efficient_share.estimate"), 1.0 / 3);

    /* Inflation: D1 passers (p1, p2, p4, p5), minus hidden-fail, then tf32. */
    assert_string_equal(path(s, "inflation.0.step")->valuestring, "original");
    NEAR(num(s, "inflation.0.geomean.estimate"), pow(4 * 0.5 * 1 * 4, 0.25));
    assert_true(num(s, "inflation.0.geomean.n") == 4);
    NEAR(num(s, "inflation.1.geomean.estimate"), cbrt(2));
    NEAR(num(s, "inflation.2.geomean.estimate"), cbrt(2));
    /* hidden and probes are the same three problems: the same interval. */
    assert_true(num(s, "inflation.1.geomean.ci_low") == num(s, "inflation.2.geomean.ci_low"));
    assert_true(num(s, "inflation.1.geomean.ci_high") == num(s, "inflation.2.geomean.ci_high"));
    NEAR(num(s, "inflation.3.geomean.estimate"), cbrt(0.5));
    cJSON_Delete(a);
    run_free(r);
}

static void test_same_bytes(void **state)
{
    (void)state;
    run_data *r = known_run();
    cJSON *a = build(r, 1, 3000), *b = build(r, 4, 3000);
    char *sa = cJSON_Print(a), *sb = cJSON_Print(b);
    assert_string_equal(sa, sb);
    /* Another seed moves the intervals, not the estimates. */
    analysis_opts o;
    analysis_default_opts(r, &o);
    o.resamples = 3000;
    o.seed = 12345;
    cJSON *c = NULL;
    kbv_err e;
    assert_int_equal(analysis_build(r, &o, &c, &e), 0);
    NEAR(num(path(c, "sets.0"), "problems.0.speedup.fp32.estimate"), 4);
    char *sc = cJSON_Print(c);
    assert_string_not_equal(sa, sc);
    free(sa);
    free(sb);
    free(sc);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    run_free(r);
}

/* No correct problem: the correct geomean is null with n 0. */
static void test_empty(void **state)
{
    (void)state;
    static const char *const one[] = {"p1", NULL};
    run_data *r = tu_run(SETS, one);
    cJSON *a = build(r, 1, 100);
    const cJSON *g = path(a, "sets.0.baselines.fp32.geomean_speedup_correct");
    assert_true(cJSON_IsNull(path(g, "estimate")) && cJSON_IsNull(path(g, "ci_low")));
    assert_true(num(g, "n") == 0);
    assert_true(num(a, "sets.0.counts.error") == 1);
    NEAR(num(a, "sets.0.baselines.fp32.geomean_speedup_all.estimate"), 1);
    assert_true(num(a, "sets.0.baselines.fp32.fast_p.0.estimate") == 0);
    cJSON_Delete(a);
    run_free(r);
}

/* A correct problem with tf32 samples but no fp32 samples: no fp32 speedup,
 * so the two baselines' geometric means cover different problems. */
static void test_one_baseline_missing(void **state)
{
    (void)state;
    static const char *const two[] = {"p1", "p2", NULL};
    run_data *r = tu_run(SETS, two);
    double c[] = {1, 1, 1}, f[] = {4, 4, 4}, t[] = {2, 2, 2};
    tu_pass(r, "s", "p1", "fp32");
    tu_times(r, "s", "p1", "candidate", c, 3);
    tu_times(r, "s", "p1", "fp32", f, 3);
    tu_times(r, "s", "p1", "tf32", t, 3);
    tu_pass(r, "s", "p2", "fp32");
    tu_times(r, "s", "p2", "candidate", c, 3);
    tu_times(r, "s", "p2", "tf32", f, 3);
    cJSON *a = build(r, 1, 500);
    const cJSON *s = path(a, "sets.0");
    assert_true(cJSON_IsNull(path(s, "problems.1.speedup.fp32")));
    NEAR(num(s, "problems.1.speedup.tf32.estimate"), 4);
    NEAR(num(s, "baselines.fp32.geomean_speedup_correct.estimate"), 4);
    assert_true(num(s, "baselines.fp32.geomean_speedup_correct.n") == 1);
    NEAR(num(s, "baselines.tf32.geomean_speedup_correct.estimate"), sqrt(2 * 4));
    assert_true(num(s, "baselines.tf32.geomean_speedup_correct.n") == 2);
    /* geomean_all counts the missing fp32 speedup as 1. */
    NEAR(num(s, "baselines.fp32.geomean_speedup_all.estimate"), 2);
    NEAR(num(s, "baselines.tf32.geomean_speedup_all.estimate"), sqrt(2 * 4));
    cJSON_Delete(a);
    run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_same_bytes),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_one_baseline_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

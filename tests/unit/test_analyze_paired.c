/* Paired speedups (analyze/paired.c, analysis.c) with answers worked out by
 * hand: the reader keeps each sample's round (fast path and general
 * parser), the ratios pair by round (a round one side lacks or holds twice
 * is ignored, though the journal grammar lets no such record through as
 * data), variants that stopped at different counts pair over the rounds
 * they share, the speedup is the median of the per-round ratios with its
 * bootstrap interval over rounds, and the
 * aggregates of a set share their bootstrap draws, so that aggregates over
 * the same values get the same interval. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "analysis.h"
#include "paired.h"
#include "rvec.h"
#include "test_analyze_util.h"

static const char *const SETS[] = {"s", NULL};

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-12 * fabs((double)(b)) + 1e-15)

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

/* One time record with an explicit round (a negative round: none). */
static void rec(run_data *r, const char *prob, const char *variant, long round, double ms)
{
    if (round >= 0)
        TU_ADD(r, "{\"type\":\"time\",\"set\":\"s\",\"problem\":\"%s\",\"variant\":\"%s\",\"round\":%ld,"
                  "\"gpu_ms\":%.17g}", prob, variant, round, ms);
    else
        TU_ADD(r, "{\"type\":\"time\",\"set\":\"s\",\"problem\":\"%s\",\"variant\":\"%s\",\"gpu_ms\":%.17g}",
               prob, variant, ms);
}

static cJSON *build(run_data *r, size_t B)
{
    analysis_opts o;
    analysis_default_opts(r, &o);
    o.resamples = B;
    cJSON *out = NULL;
    kbv_err e;
    if (analysis_build(r, &o, &out, &e)) fail_msg("analysis_build: %s", e.msg);
    return out;
}

/* paired_ratios on vectors built by hand: rounds out of order, a round
 * only one side holds, a round held twice, samples without a round. */
static void test_pair_by_round(void **state)
{
    (void)state;
    double cv[] = {2, 1, 4, 8, 5, 3};
    long cr[] = {1, 0, 3, 7, RUN_NO_ROUND, 5};
    double bv[] = {10, 4, 6, 12, 9, 7, 30};
    long br[] = {3, 0, 1, 3, 5, 9, RUN_NO_ROUND};
    run_vec c = {cv, cr, 6, 6, NULL}, b = {bv, br, 7, 7, NULL};
    double *q = NULL;
    size_t n = 0;
    kbv_err e;
    assert_int_equal(paired_ratios(&c, &b, &q, &n, &e), 0);
    /* Shared rounds 0 (4/1), 1 (6/2) and 5 (9/3); 3 is held twice by the
     * baseline, 7 and 9 by one side only. */
    assert_int_equal(n, 3);
    NEAR(q[0], 4);
    NEAR(q[1], 3);
    NEAR(q[2], 3);
    free(q);
    /* Nothing shared: no ratios, no array. */
    run_vec none = {bv + 5, br + 5, 2, 2, NULL};
    assert_int_equal(paired_ratios(&c, &none, &q, &n, &e), 0);
    assert_int_equal(n, 0);
    assert_null(q);
}

/* The reader keeps the round, on the fast path and through the general
 * parser (a \u escape sends a record there). */
static void test_reader_rounds(void **state)
{
    (void)state;
    static const char *const one[] = {"p", NULL};
    run_data *r = tu_run(SETS, one);
    rec(r, "p", "candidate", 0, 1);
    TU_ADD(r, "{\"type\":\"time\",\"set\":\"\\u0073\",\"problem\":\"p\",\"variant\":\"candidate\",\"round\":1,"
              "\"gpu_ms\":2}");
    rec(r, "p", "candidate", 2, 3);
    const run_pair *pr = run_pair_at(r, 0, 0);
    const run_vec *v = &pr->times[RUN_V_CAND];
    assert_null(pr->tamper_why);
    assert_int_equal(v->n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(v->round[i], (long)i);
        assert_true(v->v[i] == (double)(i + 1));
    }
    run_free(r);
}

/* A tiny journal whose variants stopped at different counts, as collect's
 * variants did before every round held all three; the records of the
 * variants interleave, each variant's rounds in order:
 *   candidate  r0..r4: 1 2 1 4 2
 *   fp32       r0..r6: 3 4 2.5 4 8 1 1   (two rounds more)
 *   tf32       r0..r3: 2 2 2 8           (one round fewer)
 * fp32: shared rounds 0..4, ratios 3, 2, 2.5, 1, 4: median 2.5 (the
 * unpaired medians, 3 / 2, would give 1.5); tf32: shared rounds 0..3,
 * ratios 2, 1, 2, 2: median 2.  time_ms stays the median of every sample:
 * candidate 2, fp32 3, tf32 2. */
static const double T_C[] = {1, 2, 1, 4, 2}, T_F[] = {3, 4, 2.5, 4, 8, 1, 1}, T_T[] = {2, 2, 2, 8};

/* The records, interleaved as order[] says: 'c', 'f', 't' take each
 * variant's next round. */
static run_data *tiny_run(const char *order)
{
    static const char *const one[] = {"p", NULL};
    run_data *r = tu_run(SETS, one);
    tu_pass(r, "s", "p", "fp32");
    long nc = 0, nf = 0, nt = 0;
    for (const char *o = order; *o; o++) {
        if (*o == 'c') rec(r, "p", "candidate", nc, T_C[nc]), nc++;
        else if (*o == 'f') rec(r, "p", "fp32", nf, T_F[nf]), nf++;
        else rec(r, "p", "tf32", nt, T_T[nt]), nt++;
    }
    assert_true(nc == 5 && nf == 7 && nt == 4);
    return r;
}

static void test_paired_speedup(void **state)
{
    (void)state;
    run_data *r = tiny_run("fctcftftfcctcfff");
    cJSON *a = build(r, 10000);
    const cJSON *p = path(a, "sets.0.problems.0");
    assert_string_equal(path(p, "class")->valuestring, "correct");
    NEAR(num(p, "speedup.fp32.estimate"), 2.5);
    assert_true(num(p, "speedup.fp32.n") == 5);
    NEAR(num(p, "speedup.tf32.estimate"), 2);
    assert_true(num(p, "speedup.tf32.n") == 4);
    NEAR(num(p, "time_ms.candidate"), 2);
    NEAR(num(p, "time_ms.fp32"), 3);
    NEAR(num(p, "time_ms.tf32"), 2);
    assert_true(num(p, "n_samples.fp32") == 7 && num(p, "n_samples.tf32") == 4);
    /* fp32, five ratios 1 2 2.5 3 4: a resample's median is the smallest
     * when three of its five rounds are that one's, P(Bin(5, 1/5) >= 3) =
     * 0.058 > 0.025, and likewise the largest: the interval is [1, 4]. */
    NEAR(num(p, "speedup.fp32.ci_low"), 1);
    NEAR(num(p, "speedup.fp32.ci_high"), 4);
    /* tf32, ratios 1 2 2 2: the median is 1 when three or four of the four
     * draws are round 1 (P = 13/256 = 0.051), 1.5 with two (54/256), else
     * 2: the interval is [1, 2]. */
    NEAR(num(p, "speedup.tf32.ci_low"), 1);
    NEAR(num(p, "speedup.tf32.ci_high"), 2);
    /* The exposed function draws from the same stream as problem 0 of
     * set 0. */
    double lo, hi;
    kbv_err e;
    analysis_opts o;
    analysis_default_opts(r, &o);
    NEAR(analysis_paired_ci(T_F, T_C, 5, o.seed, 10000, 0.95, &lo, &hi, &e), 2.5);
    assert_true(lo == num(p, "speedup.fp32.ci_low") && hi == num(p, "speedup.fp32.ci_high"));
    cJSON_Delete(a);
    run_free(r);
}

/* A time record with the round's timed input set (its member as given). */
static void rec_set(run_data *r, const char *variant, long round, const char *iset, double ms)
{
    TU_ADD(r, "{\"type\":\"time\",\"set\":\"s\",\"problem\":\"p\",\"variant\":\"%s\",\"round\":%ld,"
              "\"input_set\":%s,\"gpu_ms\":%.17g}", variant, round, iset, ms);
}

/* Thirteen rounds of one correct pair: rounds 0-4 drew input set 0, where
 * the candidate took c0 and the baselines b0, rounds 5-12 set 1 (c1, b1).
 * The candidate's and fp32's records name the set, tf32's (fp32's times)
 * do not. */
static run_data *two_set_run(double c0, double c1, double b0, double b1)
{
    static const char *const one[] = {"p", NULL};
    run_data *r = tu_run(SETS, one);
    tu_pass(r, "s", "p", "fp32");
    for (long k = 0; k < 13; k++) {
        const char *set = k < 5 ? "0" : "1";
        rec_set(r, "candidate", k, set, k < 5 ? c0 : c1);
        rec_set(r, "fp32", k, set, k < 5 ? b0 : b1);
        rec(r, "p", "tf32", k, k < 5 ? b0 : b1);
    }
    return r;
}

/* time_ms where the records name the round's input set (rvec.h): rounds
 * 0-4 drew set 0, where every variant ran 10% faster, rounds 5-12 set 1.
 * The candidate's and fp32's times are the mean of the two sets' medians
 * (10.5 and 21, where the pooled medians are 11 and 22); tf32's records do
 * not name the set, so its time stays the pooled median (22).  The paired
 * speedup is unchanged: the median of the per-round ratios, 2 in every
 * round. */
static void test_input_set_strata(void **state)
{
    (void)state;
    run_data *r = two_set_run(10, 11, 20, 22);
    const run_pair *pr = run_pair_at(r, 0, 0);
    assert_null(pr->tamper_why);
    assert_int_equal(pr->times[RUN_V_CAND].iset[0], 0);
    assert_int_equal(pr->times[RUN_V_CAND].iset[12], 1);
    assert_int_equal(pr->times[RUN_V_TF32].iset[0], RUN_NO_ISET);
    cJSON *a = build(r, 1000);
    const cJSON *p = path(a, "sets.0.problems.0");
    NEAR(num(p, "time_ms.candidate"), 10.5);
    NEAR(num(p, "time_ms.fp32"), 21);
    NEAR(num(p, "time_ms.tf32"), 22);
    NEAR(num(p, "speedup.fp32.estimate"), 2);
    cJSON_Delete(a);
    run_free(r);
}

/* The speedup where the records name the input set: rounds 0-4 (set 0)
 * have ratio 2, rounds 5-12 (set 1) ratio 2.2, so the pooled median would
 * be 2.2; stratified it is the geometric mean of the sets' medians,
 * sqrt(2 x 2.2), over all 13 rounds, and since each set's ratios are
 * constant, every resample gives the same: a zero-width interval.  tf32's
 * records name no set, so its speedup stays the pooled median. */
static void test_input_set_speedup(void **state)
{
    (void)state;
    run_data *r = two_set_run(10, 10, 20, 22);
    cJSON *a = build(r, 1000);
    const cJSON *p = path(a, "sets.0.problems.0");
    NEAR(num(p, "speedup.fp32.estimate"), sqrt(2 * 2.2));
    NEAR(num(p, "speedup.fp32.ci_low"), sqrt(2 * 2.2));
    NEAR(num(p, "speedup.fp32.ci_high"), sqrt(2 * 2.2));
    assert_true(num(p, "speedup.fp32.n") == 13);
    NEAR(num(p, "speedup.tf32.estimate"), 2.2);
    cJSON_Delete(a);
    run_free(r);

    /* paired_ratios_strata itself: set 0's ratios first (set order), a
     * round whose two records name different sets left out. */
    double cv[12], bv[12];
    long rd[12];
    signed char ck[12], bk[12];
    for (int i = 0; i < 12; i++) {
        rd[i] = i;
        cv[i] = 1;
        bv[i] = i < 6 ? 3 : 2;
        ck[i] = bk[i] = (signed char)(i < 6 ? 1 : 0);
    }
    bk[11] = 1;
    run_vec c = {cv, rd, 12, 12, ck}, b = {bv, rd, 12, 12, bk};
    double *q = NULL;
    size_t n = 0, strata[PAIRED_MAX_STRATA];
    int ns = 0;
    kbv_err e;
    assert_int_equal(paired_ratios_strata(&c, &b, &q, &n, strata, &ns, &e), 0);
    assert_int_equal(ns, 2);
    assert_int_equal(strata[0], 5);
    assert_int_equal(strata[1], 6);
    assert_int_equal(n, 11);
    NEAR(q[0], 2);
    NEAR(q[5], 3);
    free(q);
    /* One set short of RVEC_ISET_MIN: no strata, every ratio kept. */
    bk[11] = 0;
    for (int i = 6; i < 10; i++) ck[i] = bk[i] = 1;
    assert_int_equal(paired_ratios_strata(&c, &b, &q, &n, strata, &ns, &e), 0);
    assert_int_equal(ns, 0);
    assert_int_equal(n, 12);
    free(q);
}

/* A set with fewer than RVEC_ISET_MIN samples is no stratum: with one
 * stratum left the time is the pooled median; input sets that are not an
 * integer in 0..RUN_MAX_ISET are read as none, and the grammar accepts the
 * member whatever its value (it is a statistic's stratum, not evidence). */
static void test_input_set_fallback(void **state)
{
    (void)state;
    double tmp[16];
    /* Five samples of set 0 at 10, four of set 1 at 11: pooled median 10. */
    double v[9] = {10, 10, 10, 10, 10, 11, 11, 11, 11};
    long rd[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    signed char k[9] = {0, 0, 0, 0, 0, 1, 1, 1, 1};
    run_vec x = {v, rd, 9, 9, k};
    NEAR(rvec_centre(&x, tmp), 10);
    /* Six of set 0 and five of set 1 make two strata: (10 + 11) / 2. */
    double v2[11] = {10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11};
    long rd2[11] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    signed char k2[11] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
    run_vec y = {v2, rd2, 11, 11, k2};
    NEAR(rvec_centre(&y, tmp), 10.5);
    /* A third set with too few samples counts for nothing. */
    k2[0] = 2;
    v2[0] = 1000;
    NEAR(rvec_centre(&y, tmp), 10.5);
    /* No input sets at all (a hand-made vector, an older journal): the
     * pooled median of 10 x5, 11 x5 and 1000. */
    run_vec z = {v2, rd2, 11, 11, NULL};
    NEAR(rvec_centre(&z, tmp), 11);
    run_vec none = {NULL, NULL, 0, 0, NULL};
    assert_true(isnan(rvec_centre(&none, tmp)));

    static const char *const one[] = {"p", NULL};
    run_data *r = tu_run(SETS, one);
    const char *odd[] = {"9", "-1", "2.5", "\"0\"", "null", "8"};
    for (long i = 0; i < 6; i++) rec_set(r, "candidate", i, odd[i], 1);
    const run_pair *pr = run_pair_at(r, 0, 0);
    assert_null(pr->tamper_why);
    for (size_t i = 0; i < 6; i++) assert_int_equal(pr->times[RUN_V_CAND].iset[i], RUN_NO_ISET);
    run_free(r);
}

/* The same rounds interleaved in another order give the same bytes. */
static void test_order_free(void **state)
{
    (void)state;
    run_data *r1 = tiny_run("fctcftftfcctcfff"), *r2 = tiny_run("fffffffttttccccc");
    cJSON *a1 = build(r1, 2000), *a2 = build(r2, 2000);
    char *s1 = cJSON_Print(path(a1, "sets")), *s2 = cJSON_Print(path(a2, "sets"));
    assert_string_equal(s1, s2);
    free(s1);
    free(s2);
    cJSON_Delete(a1);
    cJSON_Delete(a2);
    run_free(r1);
    run_free(r2);
}

static void same_interval(const cJSON *x, const cJSON *y, const char *what)
{
    const char *keys[] = {"estimate", "ci_low", "ci_high"};
    for (int k = 0; k < 3; k++)
        if (num(x, keys[k]) != num(y, keys[k]))
            fail_msg("%s: %s %.17g against %.17g", what, keys[k], num(x, keys[k]), num(y, keys[k]));
}

/* Six correct problems, each with tf32 samples equal to its fp32 samples
 * and speedups from 1.3 to 4 with little noise, so that every replicate is
 * above 1: the geometric means over the correct problems and over all
 * problems, the four inflation steps and fast_p all aggregate the same
 * values over the same problems, and must show the same intervals, the tf32
 * ones included. */
static void test_same_values_same_interval(void **state)
{
    (void)state;
    static const char *const probs[] = {"a", "b", "c", "d", "e", "f", NULL};
    const double s[6] = {1.3, 2, 4, 1.5, 3, 2.5};
    run_data *r = tu_run(SETS, probs);
    for (int i = 0; i < 6; i++) {
        double c[9], b[9];
        for (int k = 0; k < 9; k++) {
            /* A round factor that cancels in the ratio, and noise of +-1%. */
            double clock = 1 + 0.1 * (k % 3), jit = 1 + 0.01 * ((k * 7 + i) % 5 - 2) / 2;
            b[k] = 2.0 * clock;
            c[k] = 2.0 * clock / s[i] * jit;
        }
        tu_pass(r, "s", probs[i], "fp32");
        tu_times(r, "s", probs[i], "candidate", c, 9);
        tu_times(r, "s", probs[i], "fp32", b, 9);
        tu_times(r, "s", probs[i], "tf32", b, 9);
    }
    cJSON *a = build(r, 4000);
    const cJSON *set = path(a, "sets.0");
    const cJSON *gc = path(set, "baselines.fp32.geomean_speedup_correct");
    assert_true(num(gc, "ci_low") < num(gc, "estimate") && num(gc, "estimate") < num(gc, "ci_high"));
    same_interval(gc, path(set, "baselines.tf32.geomean_speedup_correct"), "correct fp32/tf32");
    same_interval(gc, path(set, "baselines.fp32.geomean_speedup_all"), "correct/all fp32");
    same_interval(gc, path(set, "baselines.tf32.geomean_speedup_all"), "correct fp32/all tf32");
    for (int k = 0; k < 4; k++) {
        char p[64];
        snprintf(p, sizeof p, "inflation.%d.geomean", k);
        same_interval(gc, path(set, p), p);
    }
    for (int k = 0; k < 6; k++) {
        char p[64], q[64];
        snprintf(p, sizeof p, "baselines.fp32.fast_p.%d", k);
        snprintf(q, sizeof q, "baselines.tf32.fast_p.%d", k);
        same_interval(path(set, p), path(set, q), p);
    }
    for (int k = 0; k < 6; k++) {
        char p[64];
        snprintf(p, sizeof p, "problems.%d.speedup", k);
        same_interval(path(path(set, p), "fp32"), path(path(set, p), "tf32"), p);
    }
    /* fast_1 is 6 of 6: no longer [1, 1] but the Clopper-Pearson
     * [0.025^(1/6), 1]. */
    NEAR(num(set, "baselines.fp32.fast_p.3.estimate"), 1);
    NEAR(num(set, "baselines.fp32.fast_p.3.ci_low"), pow(0.025, 1.0 / 6));
    NEAR(num(set, "baselines.fp32.fast_p.3.ci_high"), 1);
    cJSON_Delete(a);
    run_free(r);
}

/* A hidden-fail joins the original step only: the two later steps, over
 * the same problems, still agree with each other and with the correct
 * geometric mean, while the original step differs. */
static void test_steps_share_draws(void **state)
{
    (void)state;
    static const char *const probs[] = {"a", "b", "c", "d", NULL};
    run_data *r = tu_run(SETS, probs);
    for (int i = 0; i < 4; i++) {
        double c[5], b[5];
        for (int k = 0; k < 5; k++) {
            b[k] = 1 + 0.1 * k;
            c[k] = b[k] / (1 + i) * (1 + 0.02 * ((k + i) % 3));
        }
        tu_pass(r, "s", probs[i], "fp32");
        tu_times(r, "s", probs[i], "candidate", c, 5);
        tu_times(r, "s", probs[i], "fp32", b, 5);
        tu_times(r, "s", probs[i], "tf32", b, 5);
    }
    TU_ADD(r, "{\"type\":\"check\",\"set\":\"s\",\"problem\":\"d\",\"dist\":\"D3\",\"trial\":0,\"pass\":false,"
              "\"mismatches\":4}");
    cJSON *a = build(r, 3000);
    const cJSON *set = path(a, "sets.0");
    assert_string_equal(path(set, "problems.3.class")->valuestring, "hidden-fail");
    const cJSON *gc = path(set, "baselines.fp32.geomean_speedup_correct");
    same_interval(gc, path(set, "inflation.1.geomean"), "hidden");
    same_interval(gc, path(set, "inflation.2.geomean"), "probes");
    same_interval(gc, path(set, "inflation.3.geomean"), "tf32");
    assert_true(num(set, "inflation.0.geomean.n") == 4 && num(set, "inflation.0.geomean.estimate") > num(gc, "estimate"));
    cJSON_Delete(a);
    run_free(r);
}

/* One correct problem whose every round has the ratio 3 (log 3 is not a
 * single-precision number, as the stored replicates are): the geometric
 * mean's interval is [3, 3], not a rounding step beside its estimate. */
static void test_constant_ratio(void **state)
{
    (void)state;
    static const char *const one[] = {"p", NULL};
    run_data *r = tu_run(SETS, one);
    double c[] = {1, 1, 1}, b[] = {3, 3, 3}, t[] = {0.7, 0.7, 0.7};
    tu_pass(r, "s", "p", "fp32");
    tu_times(r, "s", "p", "candidate", c, 3);
    tu_times(r, "s", "p", "fp32", b, 3);
    tu_times(r, "s", "p", "tf32", t, 3);
    cJSON *a = build(r, 1000);
    const cJSON *set = path(a, "sets.0");
    const char *keys[] = {"baselines.fp32.geomean_speedup_correct", "baselines.tf32.geomean_speedup_correct",
                          "baselines.fp32.geomean_speedup_all", "inflation.0.geomean", "inflation.3.geomean"};
    for (int k = 0; k < 5; k++) {
        const cJSON *g = path(set, keys[k]);
        if (!(num(g, "ci_low") == num(g, "estimate") && num(g, "ci_high") == num(g, "estimate")))
            fail_msg("%s: [%.17g, %.17g] around %.17g", keys[k], num(g, "ci_low"), num(g, "ci_high"),
                     num(g, "estimate"));
    }
    NEAR(num(set, "inflation.0.geomean.estimate"), 3);
    NEAR(num(set, "inflation.3.geomean.estimate"), 0.7);
    cJSON_Delete(a);
    run_free(r);
}

/* fast_p's band draws each problem's speedup from its replicates.  One
 * problem, ratios 0.9, 1.1 and 1.2 in its three rounds: speedup 1.1, so
 * fast_1 = 1 of 1; a resample of its rounds has the median 0.9 with
 * P = 7/27 (round 0 at least twice), so the bootstrap counts 0 in about a
 * quarter of the resamples and the band is [0, 1], where the count of
 * problems alone (Binomial(1, 1)) would give [1, 1] and Clopper-Pearson
 * [0.025, 1].  fast_0.5 is above 0.5 in every replicate: the bootstrap
 * gives [1, 1], widened to Clopper-Pearson's [0.025, 1]. */
static void test_fastp_two_level(void **state)
{
    (void)state;
    static const char *const one[] = {"p", NULL};
    run_data *r = tu_run(SETS, one);
    double c[] = {1, 1, 1}, b[] = {0.9, 1.1, 1.2};
    tu_pass(r, "s", "p", "fp32");
    tu_times(r, "s", "p", "candidate", c, 3);
    tu_times(r, "s", "p", "fp32", b, 3);
    tu_times(r, "s", "p", "tf32", b, 3);
    cJSON *a = build(r, 4000);
    const cJSON *set = path(a, "sets.0");
    NEAR(num(set, "problems.0.speedup.fp32.estimate"), 1.1);
    NEAR(num(set, "baselines.fp32.fast_p.3.estimate"), 1);
    assert_true(num(set, "baselines.fp32.fast_p.3.ci_low") == 0);
    assert_true(num(set, "baselines.fp32.fast_p.3.ci_high") == 1);
    NEAR(num(set, "baselines.fp32.fast_p.1.estimate"), 1);
    NEAR(num(set, "baselines.fp32.fast_p.1.ci_low"), 0.025);
    assert_true(num(set, "baselines.fp32.fast_p.1.ci_high") == 1);
    cJSON_Delete(a);
    run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pair_by_round),
        cmocka_unit_test(test_reader_rounds),
        cmocka_unit_test(test_paired_speedup),
        cmocka_unit_test(test_input_set_strata),
        cmocka_unit_test(test_input_set_fallback),
        cmocka_unit_test(test_input_set_speedup),
        cmocka_unit_test(test_order_free),
        cmocka_unit_test(test_same_values_same_interval),
        cmocka_unit_test(test_steps_share_draws),
        cmocka_unit_test(test_constant_ratio),
        cmocka_unit_test(test_fastp_two_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

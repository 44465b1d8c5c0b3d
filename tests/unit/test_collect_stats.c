/* Unit tests of collect's statistics while it runs (cstat.c) and of its
 * seeded generator (common/rng.c): the median, the order-statistic confidence
 * interval of the median (ranks checked against the binomial tables for
 * n = 6, 30 and 100), the stopping rule of DESIGN.md 5a step 7, the
 * pre-roll counts and their --preroll text, and the shuffle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cstat.h"
#include "ostat.h"
#include "rng.h"

static void test_median(void **state)
{
    (void)state;
    double s[8];
    double odd[] = {3, 1, 2};
    double even[] = {4, 1, 3, 2};
    double one[] = {7.5};
    assert_true(cstat_median(odd, 3, s) == 2.0);
    assert_true(cstat_median(even, 4, s) == 2.5);
    assert_true(cstat_median(one, 1, s) == 7.5);
    /* The input is left alone. */
    assert_true(odd[0] == 3 && odd[1] == 1 && odd[2] == 2);
}

static void test_ci_ranks(void **state)
{
    (void)state;
    /* P(Bin(5, 1/2) = 0) = 1/32 > 0.025: no 95% interval from 5 samples. */
    assert_int_equal(ostat_median_rank(5, 0.95), 0);
    /* n = 6: P(B <= 0) = 1/64 <= 0.025 < P(B <= 1) = 7/64, so ranks 1..6. */
    assert_int_equal(ostat_median_rank(6, 0.95), 1);
    /* n = 30: P(B <= 9) = 0.0214, P(B <= 10) = 0.0494: ranks 10..21. */
    assert_int_equal(ostat_median_rank(30, 0.95), 10);
    /* n = 100: P(B <= 39) = 0.0176, P(B <= 40) = 0.0284: ranks 40..61. */
    assert_int_equal(ostat_median_rank(100, 0.95), 40);
    double sorted[30];
    for (int i = 0; i < 30; i++) sorted[i] = i + 1; /* rank r holds r */
    double lo, hi;
    assert_int_equal(ostat_median_ci(sorted, 30, 0.95, &lo, &hi), 0);
    assert_true(lo == 10 && hi == 21);
    assert_int_equal(ostat_median_ci(sorted, 5, 0.95, &lo, &hi), -1);
}

static void test_stopping_rule(void **state)
{
    (void)state;
    cstat_rule r;
    cstat_rule_default(&r);
    assert_int_equal(r.min_samples, 30);
    assert_int_equal(r.max_samples, 500);
    assert_true(r.min_gpu_s == 0.5 && r.rel_halfwidth == 0.01 && r.max_s == 10.0);
    /* The rule applies to the per-round ratios (paired speedups): x is one
     * ratio's series, y a second one. */
    static double x[600], y[600], s[600];
    const double *one[1] = {x};
    const double *two[2] = {x, y};
    for (int i = 0; i < 600; i++) x[i] = y[i] = 1.0;
    /* 29 identical rounds: too few, whatever the time. */
    assert_int_equal(cstat_should_stop_paired(&r, one, NULL, 1, 29, 5.0, 5.0, s), CSTAT_GO_ON);
    /* 30 rounds of a 1 ms candidate are 0.03 s of GPU time: below 0.5 s. */
    assert_int_equal(cstat_should_stop_paired(&r, one, NULL, 1, 30, 0.03, 0.05, s), CSTAT_GO_ON);
    /* With 0.5 s of GPU time and a zero-width interval it stops. */
    assert_int_equal(cstat_should_stop_paired(&r, two, NULL, 2, 30, 0.5, 0.6, s), CSTAT_PRECISE);
    /* Half the ratios 1, half 2: the interval (ranks 10 and 21 of 30) spans
     * 1..2, a half-width of 0.5 against a median of 1.5: not precise. */
    for (int i = 0; i < 600; i++) x[i] = i % 2 ? 2.0 : 1.0;
    assert_int_equal(cstat_should_stop_paired(&r, one, NULL, 1, 30, 1.0, 1.0, s), CSTAT_GO_ON);
    assert_int_equal(cstat_should_stop_paired(&r, one, NULL, 1, 500, 1.0, 1.0, s), CSTAT_MAX_SAMPLES);
    assert_int_equal(cstat_should_stop_paired(&r, one, NULL, 1, 40, 1.0, 10.0, s), CSTAT_MAX_TIME);
    /* 1% of a median of 100 is 1: values 99.5..100.5 around it are narrow
     * enough (half-width 0.5 at most), 98..102 are not; both ratios must be
     * narrow for the rule to stop. */
    for (int i = 0; i < 100; i++) x[i] = 99.5 + (i % 11) * 0.1;
    assert_int_equal(cstat_should_stop_paired(&r, one, NULL, 1, 100, 1.0, 1.0, s), CSTAT_PRECISE);
    for (int i = 0; i < 100; i++) y[i] = i % 2 ? 2.0 : 1.0;
    assert_int_equal(cstat_should_stop_paired(&r, two, NULL, 2, 100, 1.0, 1.0, s), CSTAT_GO_ON);
    for (int i = 0; i < 100; i++) y[i] = 2.0;
    assert_int_equal(cstat_should_stop_paired(&r, two, NULL, 2, 100, 1.0, 1.0, s), CSTAT_PRECISE);
    for (int i = 0; i < 100; i++) x[i] = 98.0 + (i % 5);
    assert_int_equal(cstat_should_stop_paired(&r, two, NULL, 2, 100, 1.0, 1.0, s), CSTAT_GO_ON);
}

/* The rule with the rounds' input sets (iset): two sets whose ratios sit
 * 5% apart make a pooled interval as wide as the gap, while each set's own
 * is narrow; a set with fewer than CSTAT_ISET_MIN rounds is no stratum. */
static void test_stopping_rule_strata(void **state)
{
    (void)state;
    cstat_rule r;
    cstat_rule_default(&r);
    static double x[100], s[200];
    static int iset[100];
    const double *one[1] = {x};
    for (int i = 0; i < 100; i++) {
        iset[i] = i % 2;
        x[i] = i % 2 ? 1.05 : 1.0;
    }
    /* Pooled: half 1.0, half 1.05, the interval spans both (half-width
     * 0.025 against 1% of 1.025); by set, two zero-width intervals. */
    assert_int_equal(cstat_should_stop_paired(&r, one, NULL, 1, 100, 1.0, 1.0, s), CSTAT_GO_ON);
    assert_int_equal(cstat_should_stop_paired(&r, one, iset, 1, 100, 1.0, 1.0, s), CSTAT_PRECISE);
    /* The same ratios said to be all of set 0 but four: one stratum, so
     * the pooled interval, as without sets. */
    for (int i = 0; i < 100; i++) iset[i] = i < 4;
    assert_int_equal(cstat_should_stop_paired(&r, one, iset, 1, 100, 1.0, 1.0, s), CSTAT_GO_ON);
    /* Set 1 with exactly five rounds is a stratum, but five values have no
     * 95% interval of their median (ostat_median_ci): not yet precise. */
    for (int i = 0; i < 100; i++) {
        iset[i] = i < 5;
        x[i] = i < 5 ? 1.05 : 1.0;
    }
    assert_int_equal(cstat_should_stop_paired(&r, one, iset, 1, 100, 1.0, 1.0, s), CSTAT_GO_ON);
    iset[5] = 1;   /* six: the whole range of six equal values */
    x[5] = 1.05;
    assert_int_equal(cstat_should_stop_paired(&r, one, iset, 1, 100, 1.0, 1.0, s), CSTAT_PRECISE);
    /* Set 0 at 1.0, set 1 at 3.9 and 4.1 alternately (50 rounds each; set
     * 1's interval is [3.9, 4.1]): the centre is the geometric mean 2, the
     * interval [sqrt(3.9), sqrt(4.1)] = [1.975, 2.025], a half-width of
     * 0.025 against 0.02: not precise.  At 3.96 and 4.04 the half-width is
     * 0.010 against 0.02: precise. */
    for (int i = 0; i < 100; i++) {
        iset[i] = i % 2;
        x[i] = i % 2 ? ((i / 2) % 2 ? 4.1 : 3.9) : 1.0;
    }
    assert_int_equal(cstat_should_stop_paired(&r, one, iset, 1, 100, 1.0, 1.0, s), CSTAT_GO_ON);
    for (int i = 1; i < 100; i += 2) x[i] = (i / 2) % 2 ? 4.04 : 3.96;
    assert_int_equal(cstat_should_stop_paired(&r, one, iset, 1, 100, 1.0, 1.0, s), CSTAT_PRECISE);
    /* A ratio that is not positive has no logarithm: with 20 of set 1's 50
     * rounds at 0, its interval's lower end is 0, and never precise. */
    for (int i = 1; i < 40; i += 2) x[i] = 0;
    assert_int_equal(cstat_should_stop_paired(&r, one, iset, 1, 100, 1.0, 1.0, s), CSTAT_GO_ON);
}

/* preroll_ms / time, rounded, within [min, max]; off at 0 ms; the most calls
 * for a time that says nothing (0, negative, not a number). */
static void test_preroll(void **state)
{
    (void)state;
    cstat_rule r;
    cstat_rule_default(&r);
    assert_true(r.preroll_ms == 1.0 && r.preroll_min == 0 && r.preroll_max == 32);
    assert_int_equal(cstat_preroll_calls(&r, 0.33), 3);    /* a 0.33 ms GEMM: 0.99 ms */
    assert_int_equal(cstat_preroll_calls(&r, 0.25), 4);    /* exactly 1 ms */
    assert_int_equal(cstat_preroll_calls(&r, 17.0), 0);    /* a long call: the minimum */
    assert_int_equal(cstat_preroll_calls(&r, 1.9), 1);
    assert_int_equal(cstat_preroll_calls(&r, 0.6), 2);
    assert_int_equal(cstat_preroll_calls(&r, 0.001), 32);  /* a 1 us call: the maximum */
    assert_int_equal(cstat_preroll_calls(&r, 0), 32);
    assert_int_equal(cstat_preroll_calls(&r, -1), 32);
    assert_int_equal(cstat_preroll_calls(&r, NAN), 32);

    assert_int_equal(cstat_parse_preroll("2:0:8", &r), 0);
    assert_true(r.preroll_ms == 2.0 && r.preroll_min == 0 && r.preroll_max == 8);
    assert_int_equal(cstat_preroll_calls(&r, 17.0), 0);
    assert_int_equal(cstat_preroll_calls(&r, 0.5), 4);
    assert_int_equal(cstat_parse_preroll("0.5", &r), 0);   /* MS alone keeps MIN and MAX */
    assert_true(r.preroll_ms == 0.5 && r.preroll_min == 0 && r.preroll_max == 8);
    assert_int_equal(cstat_parse_preroll("0", &r), 0);
    assert_int_equal(cstat_preroll_calls(&r, 0.001), 0);   /* off */

    const char *bad[] = {"", "x", "1:", "1:2", "1:3:2", "-1", "1:-1:4", "1:0:1001", "2000", "1:1:4x", "nan", NULL};
    cstat_rule before;
    cstat_rule_default(&r);
    before = r;
    for (int i = 0; bad[i]; i++) {
        assert_int_equal(cstat_parse_preroll(bad[i], &r), -1);
        assert_memory_equal(&r, &before, sizeof r);
    }
}

static void test_rng(void **state)
{
    (void)state;
    /* FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the published test value). */
    assert_true(rng_hash_str(RNG_FNV_INIT, "a") == 0xaf63dc4c8601ec8cull);
    assert_true(rng_hash_str(RNG_FNV_INIT, "") == RNG_FNV_INIT);
    rng a, b;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    for (int i = 0; i < 100; i++) assert_true(rng_next(&a) == rng_next(&b));
    for (int i = 0; i < 1000; i++) assert_true(rng_below64(&a, 3) < 3);
    /* A shuffle is a permutation, and the same seed gives the same one. */
    int x[10], y[10], seen[10] = {0};
    for (int i = 0; i < 10; i++) x[i] = y[i] = i;
    rng_seed(&a, 7);
    rng_seed(&b, 7);
    rng_shuffle(&a, x, 10);
    rng_shuffle(&b, y, 10);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(x[i], y[i]);
        seen[x[i]]++;
    }
    for (int i = 0; i < 10; i++) assert_int_equal(seen[i], 1);
    /* Every order of three variants turns up over many rounds. */
    int orders[6] = {0};
    rng_seed(&a, 1);
    for (int r = 0; r < 600; r++) {
        int v[3] = {0, 1, 2};
        rng_shuffle(&a, v, 3);
        orders[v[0] * 2 + (v[1] > v[2])]++;
    }
    for (int i = 0; i < 6; i++) assert_true(orders[i] > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_ci_ranks),
        cmocka_unit_test(test_stopping_rule),
        cmocka_unit_test(test_stopping_rule_strata),
        cmocka_unit_test(test_preroll),
        cmocka_unit_test(test_rng),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

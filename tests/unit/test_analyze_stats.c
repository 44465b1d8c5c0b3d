/* Unit tests of analyze/stats.c and analyze/medboot.c with answers worked
 * out by hand or by brute force: medians of odd and even counts, quantiles,
 * the normal distribution, binomial quantiles, BCa in a case where it must
 * equal the percentile interval, the regularized incomplete beta function
 * and the Clopper-Pearson interval against values from mpmath (40 digits),
 * and the exact distribution of a bootstrap median against the enumeration
 * of every resample. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "medboot.h"
#include "rng.h"
#include "stats.h"

static void test_median_odd_even(void **state)
{
    (void)state;
    double a[] = {3, 1, 2};
    stats_sort(a, 3);
    assert_true(stats_median_sorted(a, 3) == 2);
    double b[] = {9, 1, 7, 5, 3};
    stats_sort(b, 5);
    assert_true(stats_median_sorted(b, 5) == 5);
    double c[] = {4, 1, 3, 2};  /* (2 + 3) / 2 */
    stats_sort(c, 4);
    assert_true(stats_median_sorted(c, 4) == 2.5);
    double d[] = {10, 1};
    stats_sort(d, 2);
    assert_true(stats_median_sorted(d, 2) == 5.5);
    double e[] = {0.25};
    assert_true(stats_median_sorted(e, 1) == 0.25);
    double f[] = {2, 2, 8, 2, 8, 8};  /* sorted 2 2 2 8 8 8: (2 + 8) / 2 */
    stats_sort(f, 6);
    assert_true(stats_median_sorted(f, 6) == 5);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_sort_and_select(void **state)
{
    (void)state;
    rng r;
    rng_init(&r, 1, 2, 3, 4);
    for (int round = 0; round < 50; round++) {
        size_t n = 1 + rng_below(&r, 3000);
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
        /* Few distinct values in some rounds, so that ties are exercised. */
        uint32_t distinct = round % 3 == 0 ? 5 : 1000000;
        for (size_t i = 0; i < n; i++) x[i] = y[i] = z[i] = (double)rng_below(&r, distinct);
        qsort(y, n, sizeof *y, cmp);
        stats_sort(x, n);
        assert_memory_equal(x, y, n * sizeof *x);
        size_t k = rng_below(&r, (uint32_t)n);
        assert_true(stats_select(z, n, k) == y[k]);
        free(x);
        free(y);
        free(z);
    }
}

static void test_quantile(void **state)
{
    (void)state;
    double x[10000];
    for (int i = 0; i < 10000; i++) x[i] = 10000 - i;  /* the values 1..10000 */
    /* The ceil(q n)-th smallest: 250 and 9750 for the 95% interval. */
    assert_true(stats_quantile(x, 10000, 0.025) == 250);
    assert_true(stats_quantile(x, 10000, 0.975) == 9750);
    double lo, hi;
    for (int i = 0; i < 10000; i++) x[i] = (i * 7919) % 10000 + 1;
    stats_percentile(x, 10000, 0.95, &lo, &hi);
    assert_true(lo == 250 && hi == 9750);
    double s[] = {40, 10, 30, 20};
    assert_true(stats_quantile(s, 4, 0.5) == 20);
    assert_true(stats_quantile(s, 4, 0.51) == 30);
    assert_true(stats_quantile(s, 4, 0) == 10);
    assert_true(stats_quantile(s, 4, 1) == 40);
}

/* The percentile interval's two-sided selection equals reading a sorted
 * copy, for large arrays (where it brackets the ranks from a sample) with
 * and without heavy ties. */
static void test_percentile_matches_sort(void **state)
{
    (void)state;
    rng r;
    rng_init(&r, 11, 0, 0, 0);
    const double levels[] = {0.95, 0.9, 0.5, 0.99, 0.999};
    for (int round = 0; round < 120; round++) {
        size_t n = 2048 + rng_below(&r, 20000);
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        for (size_t i = 0; i < n; i++) {
            double v = round % 4 == 0 ? (double)rng_below(&r, 3) : rng_u01(&r);
            if (round % 4 == 1) v = exp(3 * v);  /* skewed */
            x[i] = y[i] = v;
        }
        qsort(y, n, sizeof *y, cmp);
        double level = levels[round % 5], lo, hi, a = (1 - level) / 2;
        stats_percentile(x, n, level, &lo, &hi);
        size_t klo = (size_t)ceil(a * (double)n - 1e-9), khi = (size_t)ceil((1 - a) * (double)n - 1e-9);
        klo = klo < 1 ? 0 : klo - 1;
        khi = khi < 1 ? 0 : khi - 1;
        assert_true(lo == y[klo]);
        assert_true(hi == y[khi]);
        free(x);
        free(y);
    }
}

static void test_normal(void **state)
{
    (void)state;
    assert_true(fabs(stats_norm_ppf(0.975) - 1.959963984540054) < 1e-12);
    assert_true(fabs(stats_norm_ppf(0.5)) < 1e-15);
    assert_true(fabs(stats_norm_ppf(0.025) + 1.959963984540054) < 1e-12);
    assert_true(fabs(stats_norm_ppf(0.8413447460685429) - 1) < 1e-12);
    assert_true(fabs(stats_norm_cdf(1.96) - 0.9750021048517795) < 1e-14);
    for (double p = 1e-8; p < 1; p *= 1.7)
        assert_true(fabs(stats_norm_cdf(stats_norm_ppf(p)) - p) < 1e-13 * (p < 0.5 ? 1 : p) + 1e-15);
}

static void test_binomial_quantile(void **state)
{
    (void)state;
    /* Binomial(10, 1/2): P(X <= 1) = 11/1024, P(X <= 2) = 56/1024,
     * P(X <= 7) = 968/1024, P(X <= 8) = 1013/1024. */
    assert_int_equal(stats_binom_quantile(10, 0.5, 0.025), 2);
    assert_int_equal(stats_binom_quantile(10, 0.5, 0.975), 8);
    /* Exactly on a cdf value: P(X <= 2) = 56/1024 is enough. */
    assert_int_equal(stats_binom_quantile(10, 0.5, 56.0 / 1024), 2);
    assert_int_equal(stats_binom_quantile(10, 0, 0.975), 0);
    assert_int_equal(stats_binom_quantile(10, 1, 0.025), 10);
    /* Binomial(4, 1/4): P(X = 0) = 81/256 = 0.316. */
    assert_int_equal(stats_binom_quantile(4, 0.25, 0.3), 0);
    assert_int_equal(stats_binom_quantile(4, 0.25, 0.32), 1);
}

/* I_x(a, b) for integer a, b is P(Binomial(a + b - 1, x) >= a): values
 * that can be counted by hand, and two larger ones from mpmath. */
static void test_betainc(void **state)
{
    (void)state;
    static const struct { double a, b, x, want; } cases[] = {
        {2, 3, 0.5, 11.0 / 16},          /* P(Bin(4, 1/2) >= 2) */
        {1, 1, 0.3, 0.3},                /* uniform */
        {3, 1, 0.2, 0.008},              /* x^3 */
        {1, 3, 0.2, 0.488},              /* 1 - 0.8^3 */
        {50, 50, 0.5, 0.5},              /* symmetry */
        {30, 70, 0.25, 0.1358149042834274389},
        {200, 300, 0.41, 0.6776281647721793463},
        {2, 5, 0, 0},
        {2, 5, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = stats_betainc(cases[i].a, cases[i].b, cases[i].x);
        if (fabs(got - cases[i].want) > 1e-13) fail_msg("I_%g(%g, %g) = %.17g, want %.17g", cases[i].x,
                                                        cases[i].a, cases[i].b, got, cases[i].want);
    }
    /* The quantile inverts it. */
    for (double p = 0.001; p < 1; p += 0.0737) {
        double x = stats_beta_ppf(7, 12, p);
        assert_true(fabs(stats_betainc(7, 12, x) - p) < 1e-13);
    }
    assert_true(stats_beta_ppf(3, 4, 0) == 0 && stats_beta_ppf(3, 4, 1) == 1);
}

/* Clopper-Pearson intervals, k of n at the level, against mpmath (the
 * bisection of its betainc to 40 digits). */
static void test_clopper_pearson(void **state)
{
    (void)state;
    static const struct { long k, n; double level, lo, hi; } cases[] = {
        {0, 10, 0.95, 0, 0.30849710781876082},        /* 1 - 0.025^(1/10) */
        {10, 10, 0.95, 0.69150289218123918, 1},
        {3, 10, 0.95, 0.066739511177734467, 0.6524528500599973},
        {1, 5, 0.95, 0.0050507633794680565, 0.71641793611808951},
        {0, 1, 0.95, 0, 0.975},
        {1, 1, 0.95, 0.025, 1},
        {48, 141, 0.95, 0.26279685304077335, 0.42491691618628551},
        {3, 10, 0.9, 0.087264433914150306, 0.60662421610541343},
        {500, 1000, 0.95, 0.46854917297179194, 0.53145082702820806},
        {1, 10000, 0.95, 2.5317775934746866e-6, 0.00055703699794704741},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double lo, hi;
        stats_clopper_pearson(cases[i].k, cases[i].n, cases[i].level, &lo, &hi);
        if (fabs(lo - cases[i].lo) > 1e-12 * (cases[i].lo + 1e-3) || fabs(hi - cases[i].hi) > 1e-12)
            fail_msg("CP(%ld of %ld, %g) = [%.17g, %.17g], want [%.17g, %.17g]", cases[i].k, cases[i].n,
                     cases[i].level, lo, hi, cases[i].lo, cases[i].hi);
    }
    /* The edges are exact: nothing below 0 or above 1, and k = 0 or n gives
     * a bound of exactly 0 or 1. */
    double lo, hi;
    stats_clopper_pearson(0, 141, 0.95, &lo, &hi);
    assert_true(lo == 0 && hi > 0.0258 && hi < 0.0259);
    stats_clopper_pearson(141, 141, 0.95, &lo, &hi);
    assert_true(hi == 1 && lo > 0.9741 && lo < 0.9742);
}

static void test_bca(void **state)
{
    (void)state;
    /* Replicates 1..1000 around theta = 500.5 (half below: no bias
     * correction) and a symmetric jackknife (no acceleration): BCa is the
     * percentile interval, the 25th and 975th smallest. */
    double reps[1000], jack[4] = {1, 2, 3, 4};
    for (int i = 0; i < 1000; i++) reps[i] = 1000 - i;
    double lo, hi;
    stats_bca(500.5, reps, 1000, jack, 4, 0.95, &lo, &hi);
    assert_true(lo == 25 && hi == 975);
    /* All replicates equal the estimate: a zero-width interval. */
    for (int i = 0; i < 1000; i++) reps[i] = 3;
    stats_bca(3, reps, 1000, jack, 4, 0.95, &lo, &hi);
    assert_true(lo == 3 && hi == 3);
    /* A bias: 841 of 1000 replicates below theta gives z0 = Phi^-1(0.841)
     * (about 1), and with no acceleration the levels are
     * Phi(2 z0 -+ 1.96). */
    for (int i = 0; i < 1000; i++) reps[i] = i + 1;
    stats_bca(841.5, reps, 1000, NULL, 0, 0.95, &lo, &hi);
    double z0 = stats_norm_ppf(0.841);
    assert_true(fabs(z0 - 0.998576) < 1e-5);
    double qa = stats_norm_cdf(2 * z0 - 1.959963984540054), qb = stats_norm_cdf(2 * z0 + 1.959963984540054);
    assert_true(lo == ceil(qa * 1000 - 1e-9));
    assert_true(hi == (ceil(qb * 1000 - 1e-9) > 1000 ? 1000 : ceil(qb * 1000 - 1e-9)));
}

/* Every resample of n positions, by enumeration: P[j][l] for the median's
 * middle positions (1-based). */
static void brute(size_t n, double P[9][9])
{
    size_t total = 1, idx[8], s[8];
    for (size_t i = 0; i < n; i++) total *= n;
    memset(P, 0, sizeof(double) * 81);
    for (size_t c = 0; c < total; c++) {
        size_t v = c;
        for (size_t i = 0; i < n; i++) {
            idx[i] = v % n + 1;
            v /= n;
        }
        memcpy(s, idx, n * sizeof *s);
        for (size_t a = 0; a < n; a++)
            for (size_t b = a + 1; b < n; b++)
                if (s[b] < s[a]) { size_t t = s[a]; s[a] = s[b]; s[b] = t; }
        size_t j = n % 2 ? s[n / 2] : s[n / 2 - 1], l = s[n / 2];
        P[j][l] += 1.0 / (double)total;
    }
}

static void test_medboot_exact(void **state)
{
    (void)state;
    kbv_err e;
    medboot *m;
    assert_int_equal(medboot_new(&m, &e), 0);
    for (size_t n = 1; n <= 7; n++) {
        assert_int_equal(medboot_prepare(m, n, &e), 0);
        const medboot_table *t = medboot_get(m, n);
        double P[9][9];
        brute(n, P);
        for (size_t j = 1; j <= n; j++)
            for (size_t l = 1; l <= n; l++)
                assert_true(fabs(medboot_pair_prob(t, j, l) - P[j][l]) < 1e-12);
    }
    /* By hand: n = 3, the median is position 1 when at least two of three
     * draws hit it: 3 (1/3)^2 (2/3) + (1/3)^3 = 7/27. */
    const medboot_table *t3 = medboot_get(m, 3);
    assert_true(fabs(medboot_pair_prob(t3, 1, 1) - 7.0 / 27) < 1e-15);
    assert_true(fabs(medboot_pair_prob(t3, 2, 2) - 13.0 / 27) < 1e-15);
    /* n = 2: (x1, x1), (x2, x2) with 1/4 each, the mean of both with 1/2. */
    const medboot_table *t2 = medboot_get(m, 2);
    assert_true(fabs(medboot_pair_prob(t2, 1, 1) - 0.25) < 1e-15);
    assert_true(fabs(medboot_pair_prob(t2, 1, 2) - 0.5) < 1e-15);
    assert_true(fabs(medboot_pair_prob(t2, 2, 2) - 0.25) < 1e-15);
    /* Large n: probabilities sum to one and J is symmetric about the middle. */
    size_t ns[] = {301, 300, 31, 500};
    for (int k = 0; k < 4; k++) {
        size_t n = ns[k];
        assert_int_equal(medboot_prepare(m, n, &e), 0);
        const medboot_table *t = medboot_get(m, n);
        double sum = 0, mean = 0;
        for (size_t j = 1; j <= n; j++) {
            double pj = 0;
            for (size_t l = j; l <= n && l < j + 40; l++) pj += medboot_pair_prob(t, j, l);
            sum += pj;
            mean += pj * (double)j;
        }
        assert_true(fabs(sum - 1) < 1e-9);
        double want = n % 2 ? (double)(n + 1) / 2 : (double)n / 2;  /* E[J], J the lower middle */
        if (n % 2) assert_true(fabs(mean - want) < 1e-9);
        else assert_true(mean < (double)(n + 1) / 2 && mean > want - 1);
    }
    medboot_free(m);
}

/* The sampler draws from the exact distribution: a chi-square test with a
 * fixed seed (so it never flakes) well inside its 99.9% point. */
static void test_medboot_sampler(void **state)
{
    (void)state;
    kbv_err e;
    medboot *m;
    assert_int_equal(medboot_new(&m, &e), 0);
    size_t ns[] = {5, 6, 8, 12, 31, 30};
    for (int k = 0; k < 6; k++) {
        size_t n = ns[k];
        long N = 1000000;
        assert_int_equal(medboot_prepare(m, n, &e), 0);
        const medboot_table *t = medboot_get(m, n);
        double *F = calloc((n + 1) * (n + 1), sizeof *F);
        rng r;
        rng_init(&r, 42, (uint64_t)k, 0, 0);
        for (long i = 0; i < N; i++) {
            size_t j, l;
            medboot_draw_idx(t, &r, &j, &l);
            assert_true(j <= l && l < n);
            F[(j + 1) * (n + 1) + l + 1] += 1;
        }
        double chi = 0;
        int df = -1;
        for (size_t j = 1; j <= n; j++)
            for (size_t l = j; l <= n; l++) {
                double ex = medboot_pair_prob(t, j, l) * (double)N;
                if (ex < 20) continue;
                chi += (F[j * (n + 1) + l] - ex) * (F[j * (n + 1) + l] - ex) / ex;
                df++;
            }
        /* The 99.9% point of chi-square is below df + 4.5 sqrt(2 df) + 10. */
        assert_true(df > 0);
        assert_true(chi < df + 4.5 * sqrt(2.0 * df) + 10);
        free(F);
    }
    medboot_free(m);
}

/* The draw on the log scale equals the log of the drawn median. */
static void test_medboot_log_draw(void **state)
{
    (void)state;
    kbv_err e;
    medboot *m;
    assert_int_equal(medboot_new(&m, &e), 0);
    size_t n = 10;
    double x[10], lx[10], lm[9], lm2[8];
    for (size_t i = 0; i < n; i++) {
        x[i] = 1 + (double)(i * i);
        lx[i] = log(x[i]);
    }
    for (size_t i = 0; i + 1 < n; i++) lm[i] = log(0.5 * (x[i] + x[i + 1]));
    for (size_t i = 0; i + 2 < n; i++) lm2[i] = log(0.5 * (x[i] + x[i + 2]));
    assert_int_equal(medboot_prepare(m, n, &e), 0);
    const medboot_table *t = medboot_get(m, n);
    rng a, b;
    rng_init(&a, 5, 0, 0, 0);
    rng_init(&b, 5, 0, 0, 0);
    for (int i = 0; i < 100000; i++) {
        double v = medboot_draw(t, x, &a), lv = medboot_draw_log(t, x, lx, lm, lm2, &b);
        assert_true(fabs(log(v) - lv) < 1e-12);
    }
    medboot_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_odd_even),
        cmocka_unit_test(test_sort_and_select),
        cmocka_unit_test(test_quantile),
        cmocka_unit_test(test_percentile_matches_sort),
        cmocka_unit_test(test_normal),
        cmocka_unit_test(test_binomial_quantile),
        cmocka_unit_test(test_betainc),
        cmocka_unit_test(test_clopper_pearson),
        cmocka_unit_test(test_bca),
        cmocka_unit_test(test_medboot_exact),
        cmocka_unit_test(test_medboot_sampler),
        cmocka_unit_test(test_medboot_log_draw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

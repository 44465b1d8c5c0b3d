/* stats.h - the statistics analyze needs: medians, order-statistic
 * quantiles, the normal distribution, binomial quantiles and the BCa
 * interval.  Pure functions; arrays passed in are borrowed, and the ones
 * documented as reordered are permuted in place. */
#ifndef KBV_STATS_H
#define KBV_STATS_H

#include <stddef.h>
#include "ostat.h"

/* Sorts x ascending (doubles that are all finite). */
void stats_sort(double *x, size_t n);

/* DESIGN.md 7: the middle value of sorted x (common/ostat.h); for an even
 * count the mean of the two middle values.  n >= 1. */
#define stats_median_sorted ostat_median_sorted

/* The k-th smallest (0-based) of x[0..n), reordering x (quickselect). */
double stats_select(double *x, size_t n, size_t k);

/* The q-quantile by the inverse of the empirical distribution function
 * (the ceil(q n)-th smallest, at least the first): a value of the sample,
 * so that it commutes with monotone maps such as log and exp.  Reorders x. */
double stats_quantile(double *x, size_t n, double q);

/* Standard normal distribution function and its inverse (p in (0, 1);
 * +-HUGE_VAL at 0 and 1). */
double stats_norm_cdf(double z);
double stats_norm_ppf(double p);

/* Binomial quantiles: common/ostat.h's ostat_binom_quantile. */
#define stats_binom_quantile ostat_binom_quantile

/* The 0-based rank that stats_quantile selects for the q-quantile of n
 * values: ceil(q n) - 1, clamped to 0..n-1. */
size_t stats_quantile_index(size_t n, double q);

/* The regularized incomplete beta function I_x(a, b) (a, b > 0; x is
 * clamped to [0, 1]): the distribution function of Beta(a, b) at x, and
 * P(Binomial(n, x) >= k) = I_x(k, n - k + 1). */
double stats_betainc(double a, double b, double x);

/* The p-quantile of Beta(a, b), p in [0, 1]: the x with I_x(a, b) = p, by
 * bisection to full double precision (monotone and exact, at some
 * microseconds a call). */
double stats_beta_ppf(double a, double b, double p);

/* The Clopper-Pearson interval of k successes in n trials at the given
 * level (0 <= k <= n, n >= 1): [Beta((1-level)/2; k, n-k+1),
 * Beta((1+level)/2; k+1, n-k)], with 0 for k = 0 and 1 for k = n. */
void stats_clopper_pearson(long k, long n, double level, double *lo, double *hi);

/* Percentile interval of bootstrap replicates reps[0..B): the (1-level)/2
 * and (1+level)/2 quantiles.  Reorders reps. */
void stats_percentile(double *reps, size_t B, double level, double *lo, double *hi);

/* BCa interval (Efron 1987) for the estimate theta from bootstrap
 * replicates reps[0..B) (reordered) and the n jackknife (leave-one-out)
 * estimates jack[0..n) that give the acceleration; n < 3 or a degenerate
 * jackknife gives acceleration 0.  Replicates all equal give [theta, theta]
 * when they equal theta.  The bias correction counts ties as half. */
void stats_bca(double theta, double *reps, size_t B, const double *jack, size_t n,
               double level, double *lo, double *hi);

#endif

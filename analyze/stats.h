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

/* ostat.h - order statistics shared by collect and analyze: the binomial
 * quantile behind them and the distribution-free confidence interval of a
 * median, [x_(l), x_(n+1-l)], whose rank l follows from Binomial(n, 1/2).
 * collect's stopping rule and analyze's drift check use this one interval.
 *
 * Pure functions of their arguments (thread-safe: lgamma_r, no globals);
 * arrays are borrowed and never written. */
#ifndef KBV_OSTAT_H
#define KBV_OSTAT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The smallest k in 0..n with P(Binomial(n, q) <= k) >= alpha (a tolerance
 * of 1e-12 keeps exact fractions on the low side). */
long ostat_binom_quantile(long n, double q, double alpha);

/* The 1-based rank l of the lower end of the median's interval at the given
 * level: P(x_(l) <= median) = P(B >= l) with B ~ Binomial(n, 1/2), so
 * [x_(l), x_(n+1-l)] misses the median with probability 2 P(B <= l-1), below
 * 1 - level.  0 when n is too small for the level (n <= 5 at 0.95). */
long ostat_median_rank(size_t n, double level);

/* The median's interval from sorted x[0..n) (n >= 1): 0 with *lo, *hi set,
 * or -1 (and the whole range [x_(1), x_(n)], whose coverage 1 - 2^(1-n) is
 * below the level) when n is too small for the level. */
int ostat_median_ci(const double *sorted, size_t n, double level, double *lo, double *hi);

/* The middle value of sorted x[0..n); for an even count the mean of the two
 * middle values.  n >= 1. */
double ostat_median_sorted(const double *sorted, size_t n);

#ifdef __cplusplus
}
#endif

#endif

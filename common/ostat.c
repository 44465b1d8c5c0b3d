/* ostat.c - order statistics (see ostat.h). */
#include "ostat.h"

#include <math.h>

/* lgamma without its global sign variable (lgamma_r), so that threads may
 * call it. */
static double lgam(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

long ostat_binom_quantile(long n, double q, double alpha)
{
    if (n <= 0 || q <= 0) return 0;
    if (q >= 1) return n;
    /* The pmf in log space from the log-gamma function, so that n of several
     * hundred does not overflow; the O(n) walk is cheap for sample and
     * problem counts.  A tolerance of 1e-12 keeps exact fractions (alpha
     * equal to a cdf value) on the low side. */
    double lq = log(q), l1q = log1p(-q), lgn = lgam((double)n + 1), cdf = 0;
    for (long k = 0; k <= n; k++) {
        cdf += exp(lgn - lgam((double)k + 1) - lgam((double)(n - k) + 1) +
                   (double)k * lq + (double)(n - k) * l1q);
        if (cdf >= alpha - 1e-12)
            return k;
    }
    return n;
}

long ostat_median_rank(size_t n, double level)
{
    /* The smallest k with P(B <= k) >= (1 - level) / 2 is the largest rank
     * l = k with P(B <= l - 1) below that tail. */
    long k = ostat_binom_quantile((long)n, 0.5, (1 - level) / 2);
    long half = (long)(n + 1) / 2;
    return k > half ? half : k;
}

int ostat_median_ci(const double *x, size_t n, double level, double *lo, double *hi)
{
    long l = ostat_median_rank(n, level);
    size_t i = l >= 1 ? (size_t)l - 1 : 0;
    if (i > (n - 1) / 2) i = (n - 1) / 2;
    *lo = x[i];
    *hi = x[n - 1 - i];
    return l >= 1 ? 0 : -1;
}

double ostat_median_sorted(const double *x, size_t n)
{
    if (n % 2)
        return x[n / 2];
    return 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

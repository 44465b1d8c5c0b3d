/* stats.c - see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

/* lgamma without its global sign variable (lgamma_r), so that threads may
 * call it. */
static double lgam(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

static void insertion_sort(double *x, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double v = x[i];
        size_t j = i;
        while (j > 0 && x[j - 1] > v) {
            x[j] = x[j - 1];
            j--;
        }
        x[j] = v;
    }
}

/* Quicksort (median of three, Hoare partition) down to short runs, which
 * insertion sort finishes; recursion on the smaller side bounds the depth.
 * qsort's comparison callback costs more than the sort itself here. */
void stats_sort(double *x, size_t n)
{
    while (n > 24) {
        size_t mid = n / 2;
        double a = x[0], b = x[mid], c = x[n - 1];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (x[i] < pivot) i++;
            while (x[j] > pivot) j--;
            if (i >= j) break;
            double t = x[i]; x[i] = x[j]; x[j] = t;
            i++;
            j--;
        }
        /* x[0..j] <= pivot <= x[j+1..n). */
        size_t left = j + 1, right = n - left;
        if (left < right) {
            stats_sort(x, left);
            x += left;
            n = right;
        } else {
            stats_sort(x + left, right);
            n = left;
        }
    }
    insertion_sort(x, n);
}

double stats_select(double *x, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (hi > lo) {
        /* Median-of-three pivot, then Hoare partition, which also copes with
         * long runs of equal values (a degenerate bootstrap). */
        size_t mid = lo + (hi - lo) / 2;
        double a = x[lo], b = x[mid], c = x[hi];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        for (;;) {
            while (x[i] < pivot) i++;
            while (x[j] > pivot) j--;
            if (i >= j) break;
            double t = x[i]; x[i] = x[j]; x[j] = t;
            i++;
            j--;
        }
        /* Now x[lo..j] <= pivot <= x[j+1..hi]. */
        if (k <= j)
            hi = j;
        else
            lo = j + 1;
    }
    return x[k];
}

static size_t quantile_index(size_t n, double q);

double stats_quantile(double *x, size_t n, double q)
{
    return stats_select(x, n, quantile_index(n, q));
}

size_t stats_quantile_index(size_t n, double q)
{
    return quantile_index(n, q);
}

double stats_norm_cdf(double z)
{
    return 0.5 * erfc(-z / sqrt(2.0));
}

double stats_norm_ppf(double p)
{
    if (!(p > 0)) return -HUGE_VAL;
    if (!(p < 1)) return HUGE_VAL;
    /* Acklam's rational approximation (relative error about 1e-9), then
     * two Halley steps on erfc, which bring it to full double precision. */
    static const double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                -2.759285104469687e+02, 1.383577518672690e+02,
                                -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                -1.556989798598866e+02, 6.680131188771972e+01,
                                -1.328068155288572e+01};
    static const double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                -2.400758277161838e+00, -2.549732539343734e+00,
                                4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[4] = {7.784695709041462e-03, 3.224671290700398e-01,
                                2.445134137142996e+00, 3.754408661907416e+00};
    const double plow = 0.02425;
    double x, q, r;
    if (p < plow) {
        q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p <= 1 - plow) {
        q = p - 0.5;
        r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    } else {
        q = sqrt(-2 * log1p(-p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    for (int it = 0; it < 2; it++) {
        double e = stats_norm_cdf(x) - p;
        double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
        x = x - u / (1 + x * u / 2);
    }
    return x;
}

/* The small epsilon keeps q n = 250 (q = 0.025, n = 10000) from becoming
 * 251 through the rounding of q. */
static size_t quantile_index(size_t n, double q)
{
    double pos = ceil(q * (double)n - 1e-9);
    size_t k = pos < 1 ? 0 : (size_t)pos - 1;
    return k >= n ? n - 1 : k;
}

/* The continued fraction of I_x(a, b) (Numerical Recipes 6.4, modified
 * Lentz), which converges fast for x < (a + 1) / (a + b + 2). */
static double betacf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-16;
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 100000; m++) {
        double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps) break;
    }
    return h;
}

double stats_betainc(double a, double b, double x)
{
    if (!(x > 0)) return 0;
    if (!(x < 1)) return 1;
    /* x^a (1-x)^b / B(a, b), in logs so that large counts do not overflow. */
    double lbt = lgam(a + b) - lgam(a) - lgam(b) + a * log(x) + b * log1p(-x);
    double bt = exp(lbt);
    /* The fraction for x or, through I_x(a, b) = 1 - I_{1-x}(b, a), for
     * 1 - x, whichever side converges. */
    if (x < (a + 1) / (a + b + 2)) return bt * betacf(a, b, x) / a;
    return 1 - bt * betacf(b, a, 1 - x) / b;
}

double stats_beta_ppf(double a, double b, double p)
{
    if (!(p > 0)) return 0;
    if (!(p < 1)) return 1;
    /* Bisection: I_x is increasing in x, so the bracket always holds the
     * root, and the loop ends when the midpoint is one of its ends (the
     * bracket is two neighbouring doubles), at most some 1100 halvings. */
    double lo = 0, hi = 1;
    for (;;) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        if (stats_betainc(a, b, mid) < p) lo = mid;
        else hi = mid;
    }
    return hi;
}

void stats_clopper_pearson(long k, long n, double level, double *lo, double *hi)
{
    double a = (1 - level) / 2;
    if (n <= 0 || k < 0 || k > n) {
        *lo = *hi = NAN;
        return;
    }
    *lo = k == 0 ? 0 : stats_beta_ppf((double)k, (double)(n - k + 1), a);
    *hi = k == n ? 1 : stats_beta_ppf((double)(k + 1), (double)(n - k), 1 - a);
}

/* The k1-th and k2-th smallest (k1 <= k2) of x[0..n), reordering x.
 * For large n: the sorted values of a regular sample of x bracket each rank
 * with a margin of about five standard errors of the sample's quantile; one
 * pass counts the values below each bracket and gathers those inside, and
 * the answer is selected among the few gathered.  A bracket that misses (it
 * cannot, in practice, for the random replicates of a bootstrap) falls back
 * to selection over everything, so the result is always exact. */
static void select2(double *x, size_t n, size_t k1, size_t k2, double *v1, double *v2)
{
    enum { M = 256 };
    if (n < 8 * M) {
        *v2 = stats_select(x, n, k2);
        *v1 = k1 < k2 ? stats_select(x, k2, k1) : *v2;
        return;
    }
    double smp[M], lo[2], hi[2];
    size_t ks[2] = {k1, k2};
    for (size_t j = 0; j < M; j++) smp[j] = x[j * n / M + (n / M) / 2];
    stats_sort(smp, M);
    for (int t = 0; t < 2; t++) {
        double q = ((double)ks[t] + 0.5) / (double)n;
        double r = q * M, margin = 8 + 5 * sqrt(M * q * (1 - q));
        long a = (long)floor(r - margin), b = (long)ceil(r + margin);
        lo[t] = a <= 0 ? -HUGE_VAL : smp[a];
        hi[t] = b >= M - 1 ? HUGE_VAL : smp[b];
    }
    size_t cap = n / 4 + 16, below[2] = {0, 0}, got[2] = {0, 0};
    double *buf = malloc(2 * cap * sizeof *buf);
    if (!buf) goto fallback;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        for (int t = 0; t < 2; t++) {
            if (v < lo[t]) below[t]++;
            else if (v <= hi[t] && got[t] < cap) buf[t * cap + got[t]++] = v;
        }
    }
    double out[2];
    for (int t = 0; t < 2; t++) {
        if (got[t] >= cap || ks[t] < below[t] || ks[t] >= below[t] + got[t]) {
            free(buf);
            goto fallback;
        }
        out[t] = stats_select(buf + t * cap, got[t], ks[t] - below[t]);
    }
    free(buf);
    *v1 = out[0];
    *v2 = out[1];
    return;
fallback:
    *v2 = stats_select(x, n, k2);
    *v1 = k1 < k2 ? stats_select(x, k2, k1) : *v2;
}

void stats_percentile(double *reps, size_t B, double level, double *lo, double *hi)
{
    double a = (1 - level) / 2;
    select2(reps, B, quantile_index(B, a), quantile_index(B, 1 - a), lo, hi);
}

void stats_bca(double theta, double *reps, size_t B, const double *jack, size_t n,
               double level, double *lo, double *hi)
{
    size_t less = 0, equal = 0;
    for (size_t b = 0; b < B; b++) {
        less += reps[b] < theta;
        equal += reps[b] == theta;
    }
    if (equal == B) {
        *lo = *hi = theta;
        return;
    }
    double p0 = ((double)less + 0.5 * (double)equal) / (double)B;
    double pmin = 0.5 / (double)B;
    if (p0 < pmin) p0 = pmin;
    if (p0 > 1 - pmin) p0 = 1 - pmin;
    double z0 = stats_norm_ppf(p0);

    double acc = 0;
    if (jack && n >= 3) {
        double mean = 0, s2 = 0, s3 = 0;
        for (size_t i = 0; i < n; i++) mean += jack[i];
        mean /= (double)n;
        for (size_t i = 0; i < n; i++) {
            double dv = mean - jack[i];
            s2 += dv * dv;
            s3 += dv * dv * dv;
        }
        if (s2 > 0)
            acc = s3 / (6 * pow(s2, 1.5));
    }

    double za = stats_norm_ppf((1 - level) / 2), zb = -za;
    double qa, qb;
    double da = 1 - acc * (z0 + za), db = 1 - acc * (z0 + zb);
    /* A non-positive denominator means the acceleration swamps the level;
     * the interval then runs to the end of the replicates. */
    qa = da > 0 ? stats_norm_cdf(z0 + (z0 + za) / da) : 0;
    qb = db > 0 ? stats_norm_cdf(z0 + (z0 + zb) / db) : 1;
    size_t ka = quantile_index(B, qa), kb = quantile_index(B, qb);
    if (ka <= kb) {
        select2(reps, B, ka, kb, lo, hi);
    } else {
        *lo = stats_select(reps, B, ka);
        *hi = stats_select(reps, B, kb);
    }
}

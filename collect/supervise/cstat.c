#include "cstat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ostat.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cstat_median(const double *x, int n, double *scratch)
{
    memcpy(scratch, x, (size_t)n * sizeof *x);
    qsort(scratch, (size_t)n, sizeof *scratch, cmp_double);
    if (n % 2) return scratch[n / 2];
    return 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
}

void cstat_rule_default(cstat_rule *r)
{
    r->min_samples = 30;
    r->min_gpu_s = 0.5;
    r->ci_level = 0.95;
    r->rel_halfwidth = 0.01;
    r->max_samples = 500;
    r->max_s = 10.0;
    /* 0.1 s was too short: on the H200 a memory-bound tf32 GEMM over a
     * 4 GB weight (L2_059) ran its first ~12 timed rounds, about 0.3 s of
     * load after a 0.1 s warm-up, 13% slower than the rest, at an SM clock
     * that read 1980 MHz throughout, in two runs alike. */
    r->warm_min_rounds = 3;
    r->warm_min_s = 0.5;
    r->warm_max_s = 1.5;
    /* The variant that ran before decides how fast a timed call is, not
     * only the call itself: in the H200 run of 4d81aa8, tf32 GEMMs ran up to
     * 22% slower (median over problems 9%) right after a long FMA-bound
     * candidate than right after the fp32 baseline, at an SM clock that
     * read 1980 MHz throughout; the spread kept the paired ratios' interval
     * wide, so such pairs ran to the 500-round limit, and the baseline's
     * median depended on the candidate it was paired with. */
    r->preroll_ms = 1.0;
    r->preroll_min = 0;
    r->preroll_max = 32;
}

int cstat_preroll_calls(const cstat_rule *r, double est_ms)
{
    if (!(r->preroll_ms > 0)) return 0;
    double want = est_ms > 0 && isfinite(est_ms) ? floor(r->preroll_ms / est_ms + 0.5) : (double)r->preroll_max;
    if (want < r->preroll_min) want = r->preroll_min;
    if (want > r->preroll_max) want = r->preroll_max;
    return (int)want;
}

int cstat_parse_preroll(const char *text, cstat_rule *r)
{
    double ms;
    int lo, hi, used = 0;
    if (sscanf(text, "%lf%n", &ms, &used) == 1 && text[used] == '\0') {
        lo = r->preroll_min;
        hi = r->preroll_max;
    } else if (sscanf(text, "%lf:%d:%d%n", &ms, &lo, &hi, &used) != 3 || text[used] != '\0') {
        return -1;
    }
    if (!(ms >= 0 && ms <= 1000) || lo < 0 || hi < lo || hi > 1000) return -1;
    r->preroll_ms = ms;
    r->preroll_min = lo;
    r->preroll_max = hi;
    return 0;
}

/* Whether the interval of one ratio's centre is narrow enough: the median
 * of x[0..n) with its order-statistic interval, or, when iset names the
 * round's input set and at least two sets hold CSTAT_ISET_MIN rounds, the
 * geometric mean of those sets' medians with the geometric means of their
 * intervals' ends (rounds of a thinner set count for nothing), as analyze
 * takes the stratified speedup.  scratch holds 2n doubles. */
static int ratio_precise(const cstat_rule *r, const double *x, const int *iset, int n, double *scratch)
{
    int count[CSTAT_MAX_ISETS] = {0}, strata = 0;
    for (int i = 0; iset && i < n; i++)
        if (iset[i] >= 0 && iset[i] < CSTAT_MAX_ISETS) count[iset[i]]++;
    for (int k = 0; k < CSTAT_MAX_ISETS; k++) strata += count[k] >= CSTAT_ISET_MIN;
    double med, lo, hi;
    if (strata < 2) {
        med = cstat_median(x, n, scratch); /* leaves scratch sorted */
        if (ostat_median_ci(scratch, (size_t)n, r->ci_level, &lo, &hi)) return 0;
    } else {
        double *gather = scratch + n, lm = 0, ll = 0, lh = 0;
        for (int k = 0; k < CSTAT_MAX_ISETS; k++) {
            if (count[k] < CSTAT_ISET_MIN) continue;
            int m = 0;
            for (int i = 0; i < n; i++)
                if (iset[i] == k) gather[m++] = x[i];
            double mk = cstat_median(gather, m, scratch), lk, hk;
            if (ostat_median_ci(scratch, (size_t)m, r->ci_level, &lk, &hk)) return 0;
            /* A ratio is a positive time over a positive time; anything
             * else has no logarithm and no precision. */
            if (!(mk > 0 && lk > 0 && hk > 0)) return 0;
            lm += log(mk);
            ll += log(lk);
            lh += log(hk);
        }
        med = exp(lm / strata);
        lo = exp(ll / strata);
        hi = exp(lh / strata);
    }
    return (hi - lo) / 2.0 < r->rel_halfwidth * med;
}

int cstat_should_stop_paired(const cstat_rule *r, const double *const *ratios, const int *iset, int n_ratios, int n,
                             double cand_gpu_s, double wall_s, double *scratch)
{
    if (n >= r->max_samples) return CSTAT_MAX_SAMPLES;
    if (wall_s >= r->max_s) return CSTAT_MAX_TIME;
    if (n < r->min_samples || cand_gpu_s < r->min_gpu_s) return CSTAT_GO_ON;
    for (int k = 0; k < n_ratios; k++)
        if (!ratio_precise(r, ratios[k], iset, n, scratch)) return CSTAT_GO_ON;
    return CSTAT_PRECISE;
}

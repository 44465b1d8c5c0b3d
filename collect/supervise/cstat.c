#include "cstat.h"

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
}

int cstat_should_stop_paired(const cstat_rule *r, const double *const *ratios, int n_ratios, int n,
                             double cand_gpu_s, double wall_s, double *scratch)
{
    if (n >= r->max_samples) return CSTAT_MAX_SAMPLES;
    if (wall_s >= r->max_s) return CSTAT_MAX_TIME;
    if (n < r->min_samples || cand_gpu_s < r->min_gpu_s) return CSTAT_GO_ON;
    for (int k = 0; k < n_ratios; k++) {
        double med = cstat_median(ratios[k], n, scratch); /* leaves scratch sorted */
        double lo, hi;
        if (ostat_median_ci(scratch, (size_t)n, r->ci_level, &lo, &hi)) return CSTAT_GO_ON;
        if (!((hi - lo) / 2.0 < r->rel_halfwidth * med)) return CSTAT_GO_ON;
    }
    return CSTAT_PRECISE;
}

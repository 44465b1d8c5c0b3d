/* cstat.h - the statistics collect needs while it runs: the median, its
 * distribution-free confidence interval from order statistics, and the
 * stopping rule of DESIGN.md 5a step 7.  Pure functions of their arguments. */
#ifndef KBV_CSTAT_H
#define KBV_CSTAT_H

/* Median of n values (n > 0); scratch holds n doubles (may alias nothing). */
double cstat_median(const double *x, int n, double *scratch);

/* The median's confidence interval is common/ostat.h's ostat_median_ci. */

typedef struct {
    int min_samples;        /* 30 */
    double min_gpu_s;       /* 0.5 s of GPU time */
    double ci_level;        /* 0.95 */
    double rel_halfwidth;   /* 0.01: half-width of the CI below 1% of the median */
    int max_samples;        /* 500 */
    double max_s;           /* 10 s of the variant's own timed wall time */
    /* Warm-up before the first timed round: whole rounds, at least
     * warm_min_rounds of them and warm_min_s seconds, until the SM clock is
     * steady, at most warm_max_s. */
    int warm_min_rounds;    /* 3 */
    double warm_min_s;      /* 0.5 s */
    double warm_max_s;      /* 1.5 s */
} cstat_rule;

void cstat_rule_default(cstat_rule *r);

enum {
    CSTAT_GO_ON = 0,
    CSTAT_PRECISE = 1,      /* enough samples and time, and the CI is narrow */
    CSTAT_MAX_SAMPLES = 2,
    CSTAT_MAX_TIME = 3
};

/* The paired rule of DESIGN.md 5a step 7: n rounds so far, each holding
 * every variant; ratios[k][0..n-1] (k < n_ratios) are the per-round
 * speedups (baseline time / candidate time of one round), cand_gpu_s the
 * candidate's GPU time and wall_s the largest wall time of one variant.
 * It may stop when every ratio's median has a CI half-width under
 * rel_halfwidth of the median (with min_samples rounds and min_gpu_s
 * reached), or at max_samples rounds or max_s.  scratch holds n doubles. */
int cstat_should_stop_paired(const cstat_rule *r, const double *const *ratios, int n_ratios, int n,
                             double cand_gpu_s, double wall_s, double *scratch);

#endif

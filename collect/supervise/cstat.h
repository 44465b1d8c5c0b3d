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
    double max_s;           /* 10 s of the pair's timed wall time: every
                             * variant's calls and pre-rolls, summed */
    /* Warm-up before the first timed round: whole rounds, at least
     * warm_min_rounds of them and warm_min_s seconds, until the SM clock is
     * steady, at most warm_max_s. */
    int warm_min_rounds;    /* 3 */
    double warm_min_s;      /* 0.5 s */
    double warm_max_s;      /* 1.5 s */
    /* Pre-roll: before each timed call the same variant runs untimed on
     * the other input set, so that the timed call starts from the state
     * its own work leaves the GPU in, not from whatever variant ran before
     * it (cstat_preroll_calls).  preroll_ms 0 turns it off. */
    double preroll_ms;      /* 1 ms of the variant's own work */
    int preroll_min;        /* 0: a call over 2 ms runs without */
    int preroll_max;        /* 32 calls at most */
} cstat_rule;

void cstat_rule_default(cstat_rule *r);

/* The pre-roll calls of a variant whose call takes est_ms (its median over
 * the warm-up): preroll_ms / est_ms rounded to the nearest within [preroll_min,
 * preroll_max]; 0 when preroll_ms is 0; preroll_max when est_ms is not a
 * positive number. */
int cstat_preroll_calls(const cstat_rule *r, double est_ms);

/* Sets r's pre-roll from the text "MS" or "MS:MIN:MAX" (--preroll):
 * 0 <= MS <= 1000, 0 <= MIN <= MAX <= 1000; "0" turns it off.  Returns 0,
 * or -1 with r unchanged when the text is not of that form. */
int cstat_parse_preroll(const char *text, cstat_rule *r);

enum {
    CSTAT_GO_ON = 0,
    CSTAT_PRECISE = 1,      /* enough samples and time, and the CI is narrow */
    CSTAT_MAX_SAMPLES = 2,
    CSTAT_MAX_TIME = 3
};

/* The fewest rounds of one timed input set that make it a stratum of the
 * rule, and the most sets the rule tells apart; analyze's stratified
 * speedup uses the same minimum (analyze/rvec.h, RVEC_ISET_MIN). */
#define CSTAT_ISET_MIN 5
#define CSTAT_MAX_ISETS 8

/* The paired rule of DESIGN.md 5a step 7: n rounds so far, each holding
 * every variant; ratios[k][0..n-1] (k < n_ratios) are the per-round
 * speedups (baseline time / candidate time of one round), iset[0..n-1]
 * the rounds' timed input sets (NULL: not known), cand_gpu_s the
 * candidate's GPU time and wall_s the rounds' wall time so far, every
 * variant's timed calls and pre-rolls summed.
 * It may stop when every ratio's centre has a CI half-width under
 * rel_halfwidth of the centre (with min_samples rounds and min_gpu_s
 * reached), or at max_samples rounds or max_s.  The centre is the median
 * with its order-statistic interval, or, where at least two input sets
 * hold CSTAT_ISET_MIN rounds, the geometric mean of the sets' medians with
 * the geometric means of their intervals' ends: the statistic analyze
 * reports, so that the rule judges the interval the report will show, and
 * a pair whose two input buffers run a few percent apart is not kept
 * running by the spread between them.  scratch holds 2n doubles. */
int cstat_should_stop_paired(const cstat_rule *r, const double *const *ratios, const int *iset, int n_ratios, int n,
                             double cand_gpu_s, double wall_s, double *scratch);

#endif

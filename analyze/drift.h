/* drift.h - baseline drift across the sets of a run.
 *
 * collect times the fp32 and tf32 baselines afresh for every (set, problem)
 * pair, and the GEMM and convolution baselines pick their algorithm by
 * timing at their first call, so the same problem's baseline can come out
 * slower in one set than in another.  A baseline that ran slow in one pair
 * inflates that pair's speedup; this module finds such problems.
 *
 * For every problem and baseline with samples in two or more sets, drift =
 * max time / min time over those sets, a set's time being the variant's
 * time_ms (rvec_centre: the median, or where the records name two timed
 * input sets, the mean of their medians, so that the share of rounds each
 * input buffer drew does not pass for drift).  It is reported when drift >
 * DRIFT_LIMIT and the confidence intervals of the slowest and of the
 * fastest set's time do not overlap (rvec_centre_ci).  The interval of a
 * median is the
 * distribution-free order-statistic (binomial) interval: [x_(k), x_(n+1-k)]
 * with k the smallest count such that P(Binomial(n, 1/2) <= k) >= (1 -
 * level) / 2, which covers the median with probability at least level; it
 * needs no random numbers, so the result is deterministic.
 */
#ifndef KBV_DRIFT_H
#define KBV_DRIFT_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "err.h"
#include "run.h"

#define DRIFT_LIMIT 1.05
/* The smallest ratio of the fastest to the slowest set's median SM clock
 * that explains a drift by the clock: NVML reports the clock in steps of
 * some 15 MHz, so 2% (about 40 MHz at 1980) is a few steps, more than the
 * wobble of a set's median clock at full speed. */
#define DRIFT_CLOCK_LIMIT 1.02

/* The order-statistic interval of the median of sorted x[0..n) (n >= 1) at
 * the given level.  With too few samples for the level (n <= 5 at 0.95) it
 * is the whole range [x_(1), x_(n)], whose coverage 1 - 2^(1-n) is then
 * below the level.  Returns the median. */
double drift_median_ci(const double *x_sorted, size_t n, double level, double *lo, double *hi);

/* The "baseline_drift" array of analysis.json for r: one entry per flagged
 * (problem, baseline), {"problem", "baseline", "drift", "clock_ratio",
 * "cause", "sets": [{"set", "median_ms", "ci_low_ms", "ci_high_ms", "n",
 * "sm_mhz", "choice"}, ... every set with samples, in run order]}, sorted
 * by drift descending, ties in run order of the problem, then fp32 before
 * tf32.  skip (NULL for none, else one byte per pair, [set * n_problems +
 * problem], borrowed) leaves pairs out: analyze leaves out those whose
 * candidate was classed a hack or tampering, since such a candidate may
 * disturb the GPU around its baselines' calls, and the drift is the
 * baseline's own.
 *
 * A set's "sm_mhz" is the median SM clock of the baseline's samples in that
 * set that carry one (absent when none does); its "choice" is the text of
 * the set's baseline records for that variant, the distinct ones joined
 * with " | " in journal order (absent without a record).  "clock_ratio" is
 * the fastest set's sm_mhz / the slowest set's (absent unless both are
 * known).  "cause" is "algorithm" when the slowest and the fastest set both
 * have a choice and the texts differ, else "clock" when clock_ratio >=
 * DRIFT_CLOCK_LIMIT, else "unexplained".  The slowest and fastest sets are
 * those of the largest and smallest median, the first set winning a tie.
 * *out owned by the caller. */
int drift_build(const run_data *r, double level, const unsigned char *skip, cJSON **out, kbv_err *e);

#endif

/* analysis.h - the numbers of DESIGN.md section 7, as the analysis.json tree
 * of section 6 (and notes/analysis_schema.md).
 *
 * A speedup is the median over the rounds that the candidate and the
 * baseline share of baseline time / candidate time (paired.h), with a
 * percentile-bootstrap interval over rounds whose resampled medians are
 * drawn from their exact distribution (medboot.h).  Every aggregate of a set
 * (geometric means, inflation steps, memory efficiency, fast_p) is
 * bootstrapped over problems on the same draws: the same resampled problems
 * and, for each, the same replicate of its speedup, so that two aggregates
 * over the same values get the same interval.  Geometric means carry
 * two-level BCa intervals with jackknife acceleration over problems; fast_p
 * carries the two-level percentile interval widened to the Clopper-Pearson
 * interval of k/N, the efficient share the exact bootstrap-over-problems
 * interval (the quantiles of Binomial(N, k/N)) widened likewise.  Every
 * random stream is keyed by (seed, set, problem or resample, purpose), so
 * that the result is the same, byte for byte, whatever the number of
 * threads.
 */
#ifndef KBV_ANALYSIS_H
#define KBV_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "err.h"
#include "run.h"

typedef struct analysis_opts {
    uint64_t seed;        /* bootstrap seed; run_load gives the manifest's config.seed */
    size_t resamples;     /* bootstrap resamples, 10000 by default */
    double level;         /* confidence level, 0.95 */
    int threads;          /* worker threads over sets, >= 1 */
} analysis_opts;

/* Defaults for r: its seed, 10000 resamples, 0.95, one thread. */
void analysis_default_opts(const run_data *r, analysis_opts *o);

/* Builds the analysis.json tree of r; *out is owned by the caller. */
int analysis_build(const run_data *r, const analysis_opts *o, cJSON **out, kbv_err *e);

/* The fast_p points of DESIGN.md 7 and the log grid of the curve. */
#define ANALYSIS_N_FASTP 6
extern const double analysis_fastp_points[ANALYSIS_N_FASTP];
#define ANALYSIS_N_CURVE 61
double analysis_curve_point(int k);   /* 10^(-1 + k/30), k = 0..60 */

/* Exposed for tests: the speedup of n rounds, base[i] and cand[i] being the
 * times of round i, as analysis_build computes it: the median of the ratios
 * base[i] / cand[i], returned, and its percentile-bootstrap interval over
 * rounds (pairs resampled together) with B resamples, from the stream that
 * analysis_build uses for set 0, problem 0.  NAN with *e set
 * on failure. */
double analysis_paired_ci(const double *base, const double *cand, size_t n, uint64_t seed, size_t B, double level,
                          double *lo, double *hi, kbv_err *e);

#endif

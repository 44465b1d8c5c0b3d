/* analysis.h - the numbers of DESIGN.md section 7, as the analysis.json tree
 * of section 6 (and notes/analysis_schema.md).
 *
 * Speedups carry percentile-bootstrap intervals whose resampled medians are
 * drawn from their exact distribution (medboot.h); geometric means carry
 * two-level (problems, then samples) BCa intervals with jackknife
 * acceleration over problems; fast_p and the efficient share carry the
 * bootstrap-over-problems percentile interval, computed exactly: resampling
 * N problems and counting those that qualify gives Binomial(N, k/N), so its
 * quantiles are those of the bootstrap with infinitely many resamples.
 * Every random stream is keyed by (seed, set, problem, purpose), so that the
 * result is the same, byte for byte, whatever the number of threads.
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

/* Exposed for tests: the percentile-bootstrap interval of the ratio of
 * medians median(base) / median(cand) of two sorted samples, with B
 * resamples, using exact median draws; the stream is (seed, 0, 0, purpose
 * RNG_P_*).  Returns the point ratio. */
double analysis_ratio_ci(const double *base_sorted, size_t nb, const double *cand_sorted, size_t nc,
                         uint64_t seed, size_t B, double level, double *lo, double *hi, kbv_err *e);

#endif

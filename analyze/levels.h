/* levels.h - the breakdowns of a set that the report's appendix shows
 * beside the headline (issue 18), added to an analysis.json tree after
 * analysis_build:
 *
 *   sets[i].levels: [{level, n_problems, counts {per class},
 *       baselines {fp32, tf32: {geomean_speedup_correct, geomean_speedup_all,
 *       fast_p [{p, estimate, ci_low, ci_high}]}}}]
 *     one entry per level ("L1", "L2", ...: the prefix of the problem ids up
 *     to the first '_'), in order of first appearance; the same estimate
 *     objects as the set's, with n.  The geometric means' intervals are BCa
 *     bootstrap over the level's problems with each problem's point speedup
 *     (not the two-level bootstrap of the set's own means: a level has too
 *     few problems for the timing noise to matter beside the spread between
 *     problems), fast_p's the exact bootstrap-over-problems percentile
 *     interval, as for the set.
 *   sets[i].failures: {by_distribution: [{dist, checked, failed, skipped}],
 *       by_probe: [{probe, run, failed}]}
 *     pairs (a problem with a candidate in that set) counted once per
 *     distribution or probe: checked = with at least one check of the
 *     distribution that was not skipped, failed = with a failing one,
 *     skipped = whose checks of it were all skipped (non-finite reference);
 *     a probe's run = pairs with a decided record, failed = with a failing
 *     one.
 *   sets[i].fast_p_share_ci: [[ci_low, ci_high] for k = 0..n_problems]
 *     the interval of fast_p when k of the set's problems qualify (it
 *     depends on k alone), so that the report can draw fast_p's band over
 *     its whole axis.
 *   sets[i].tolerance_sweep: {n_problems, points: [{tolerance, n_correct,
 *       share_correct, exact}]}
 *     how many problems would be correct if atol = rtol = tolerance, from
 *     the check records' max_abs_err, max_rel_err and tier (see levels.c
 *     for the approximation; exact says the point is exact).
 *
 * Everything is computed from the journal (r) and the set's problems as
 * analysis_build wrote them, and is deterministic.
 */
#ifndef KBV_LEVELS_H
#define KBV_LEVELS_H

#include <cjson/cJSON.h>
#include "analysis.h"
#include "err.h"
#include "run.h"

/* Adds levels, failures and tolerance_sweep to every set of root (the tree
 * analysis_build made from r with o; root stays owned by the caller). */
int levels_add(const run_data *r, const analysis_opts *o, cJSON *root, kbv_err *e);

/* The tolerances of the sweep: LEVELS_N_TOL points from 1e-5 to 1e-1. */
#define LEVELS_N_TOL 13
extern const double levels_tolerances[LEVELS_N_TOL];

/* Exposed for tests: whether a check record passes at atol = rtol = t,
 * by the approximation levels.c documents (1 pass, 0 fail); *exact says
 * whether the answer is exact. */
int levels_check_passes(const run_check *c, double t, int *exact);

#endif

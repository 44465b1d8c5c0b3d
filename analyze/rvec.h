/* rvec.h - a pair's time samples as run.c keeps them (run_vec, run_mhz),
 * the conversions of a time record's members, and the variant's time that
 * analysis.json reports (time_ms).
 *
 * The vectors and spans are owned by their run_pair (run.h); these
 * functions grow them and never free them (run_free does).
 */
#ifndef KBV_RVEC_H
#define KBV_RVEC_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "err.h"
#include "run.h"

/* Appends one sample with its round (RUN_NO_ROUND: none) and input set
 * (RUN_NO_ISET: none).  0, or KBV_ENOMEM. */
int rvec_push(run_vec *v, double x, long round, int iset, kbv_err *e);
/* Counts n samples at clock mhz into m (nothing when mhz is 0, not known).
 * 0, or KBV_ENOMEM. */
int rvec_mhz_push(run_mhz *m, double mhz, size_t n, kbv_err *e);

/* A record's round: an integral number in 0..RUN_MAX_ROUND, else
 * RUN_NO_ROUND. */
long rvec_round_of(double x);
/* A record's clock: its sm_mhz when kind is SCAN_NUMBER and mhz a positive
 * finite number, else 0 (not known). */
double rvec_clock_of(int kind, double mhz);
/* The record o's "input_set" when it is an integer in 0..RUN_MAX_ISET, else
 * RUN_NO_ISET.  o is borrowed. */
int rvec_iset_of(const cJSON *o);

/* The fewest samples an input set needs to count as a stratum. */
#define RVEC_ISET_MIN 5

/* Counts the values of iset[0..n) (input sets, RUN_NO_ISET for none;
 * NULL: none known) per set into count, and returns how many sets hold at
 * least RVEC_ISET_MIN: the strata of rvec_centre and of the stratified
 * speedup (paired.h). */
int rvec_strata(const signed char *iset, size_t n, size_t count[RUN_MAX_ISET + 1]);

/* The variant's time (time_ms; NAN without samples): the median of its
 * samples, or, where the records name the round's timed input set and at
 * least two sets hold RVEC_ISET_MIN samples each, the mean of those sets'
 * medians (samples of a set with fewer, or of no set, then count for
 * nothing).  Why: the sets live in distinct buffers, whose placements can
 * run a bandwidth-bound call 5% apart; the share of rounds each set drew
 * is chance, so the pooled median lands on either mode by chance, while
 * the mean of the modes does not.  tmp holds v->n values. */
double rvec_centre(const run_vec *v, double *tmp);

/* rvec_centre with an interval at the given level (0 < level < 1) in *lo
 * and *hi (NAN without samples): the order-statistic interval of the
 * median (ostat_median_ci) where the pooled median is the centre, and
 * where the sets' medians are, the mean of the sets' interval ends, which
 * holds the mean of the sets' true medians whenever every set's interval
 * holds its own, so it covers at least as often as they all do together.
 * With level 0 (or lo or hi NULL) it is rvec_centre.  tmp holds v->n
 * values. */
double rvec_centre_ci(const run_vec *v, double level, double *tmp, double *lo, double *hi);

#endif

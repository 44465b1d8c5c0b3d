/* paired.h - a candidate's time against a baseline's, round by round.
 *
 * collect times the variants of a (set, problem) pair in rounds, each round
 * holding one sample of each variant in a shuffled order, so that the two
 * samples of a round ran under the same clocks and the same state of the
 * GPU.  DESIGN.md 7 defines the speedup on those pairs: the median over the
 * rounds both variants hold of baseline time / candidate time.  A round that
 * one variant lacks is ignored (an old journal whose variants stopped at
 * different counts uses the rounds they share), and so are a round that a
 * variant holds more than once and a sample without a round: such a round
 * has no single pair.  The journal grammar (run.h) lets no such record
 * through as data; the pairing does not rest on it.
 */
#ifndef KBV_PAIRED_H
#define KBV_PAIRED_H

#include <stddef.h>
#include "err.h"
#include "run.h"

/* The ratios base / cand over the rounds both hold exactly once, in
 * ascending round order: *out (owned by the caller, NULL when *n is 0) gets
 * *n values.  cand and base are borrowed.  0, or KBV_ENOMEM. */
int paired_ratios(const run_vec *cand, const run_vec *base, double **out, size_t *n, kbv_err *e);

/* At most this many strata (the input sets rvec.h counts). */
#define PAIRED_MAX_STRATA (RUN_MAX_ISET + 1)

/* The same ratios, grouped by the round's timed input set (rvec.h), as the
 * speedup takes them: where at least two sets hold RVEC_ISET_MIN ratios
 * each (a ratio's set is the one both records of its round name), *out
 * holds only those sets' ratios, set after set in ascending order, and
 * strata[0..*n_strata) their counts; otherwise *n_strata is 0 and *out is
 * paired_ratios' list.  Ownership as paired_ratios. */
int paired_ratios_strata(const run_vec *cand, const run_vec *base, double **out, size_t *n,
                         size_t strata[PAIRED_MAX_STRATA], int *n_strata, kbv_err *e);

/* Every pair's ratios against each baseline of its set (prec.h), as the
 * speedup takes them (paired_ratios_strata): entry k = (set * n_problems +
 * problem) * RUN_MAX_BL + the baseline's slot.  Filled by paired_table_build
 * (0, or KBV_ENOMEM with nothing left to free), freed by paired_table_free;
 * read-only in between, so threads may share it. */
typedef struct paired_table {
    double **ratios;                      /* owned, and each entry */
    size_t *n;                            /* owned: ratios of each entry */
    size_t (*strata)[PAIRED_MAX_STRATA];  /* owned: the sets' counts, in order */
    int *n_strata;                        /* owned: 0 where not stratified */
    size_t len;                           /* entries */
} paired_table;

int paired_table_build(const run_data *r, paired_table *t, kbv_err *e);
void paired_table_free(paired_table *t);

#endif

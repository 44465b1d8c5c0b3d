/* floorchk.h - collect's own check of the physical-floor probe (DESIGN.md
 * 5a step 6), from what reaches the journal.
 *
 * The worker judges the floor with the calibration and the median it holds
 * in its memory, which the candidate shares (5a step 7a, "What this does
 * not stop").  collect keeps each accepted candidate time sample of a pair
 * and the probe's verdict as they arrive on the authenticated channel, and
 * at the pair's end works the floor out again from the suite's read-only
 * tables and the calibration it handed the worker: a probe that passed
 * where the journalled median is below the floor is evidence of tampering.
 *
 * The caller owns a floorchk per running pair: zeroed (memset) is empty;
 * floorchk_free releases the samples.
 */
#ifndef KBV_FLOORCHK_H
#define KBV_FLOORCHK_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "suite.h"

typedef struct {
    double *ms;        /* the candidate's gpu_ms per timed sample; owned */
    int n, cap;
    int probe;         /* the worker's physical-floor probe: 0 not seen, 1 passed, 2 failed */
} floorchk;

/* Notes one accepted record of the pair (rec is the caller's): a
 * candidate time sample or the physical-floor probe; other records are
 * ignored.  0, or -1 when out of memory. */
int floorchk_note(floorchk *f, const cJSON *rec);

/* 1 when the worker's probe passed while the median of the noted samples
 * is below what the floor allows (verdict_floor_pass) for problem p in the
 * setting (bf16) at the calibration (copy_gbps, tf32_tflops), with the
 * figures in why (n bytes); else 0. */
int floorchk_contradicts(const floorchk *f, const suite_problem *p, int bf16, double copy_gbps, double tf32_tflops,
                         char *why, size_t n);

void floorchk_free(floorchk *f);

#endif

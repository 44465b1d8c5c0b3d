/* prec.h - the precision setting of a run's sets (DESIGN.md 5 and 6.1):
 * which baselines a set is timed against, with which tolerance, and which
 * FP32 set a BF16 set mirrors.
 *
 * A set's manifest entry may say "precision": "fp32" or "bf16" (absent:
 * fp32, as in every run from before the BF16 setting) and, for a BF16 set,
 * "compare_with": the name of the FP32 set it mirrors.  An FP32 pair is
 * timed against the fp32 and tf32 baselines, a BF16 pair against bf16
 * alone; analyze lists a pair's speedups under the names of its set's
 * baselines, so that one set of code serves both settings.
 */
#ifndef KBV_PREC_H
#define KBV_PREC_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "err.h"
#include "run.h"

/* Reads config.tolerance_bf16 and every set's precision and compare_with
 * into r (set_precision, set_compare_with, atol_bf16, rtol_bf16; the
 * strings stay borrowed from the manifest).  KBV_EINPUT, naming the set,
 * for a precision other than fp32 and bf16 or a tolerance that is not a
 * number. */
int prec_read(run_data *r, const cJSON *config, const cJSON *sets, kbv_err *e);

/* The baselines set is timed against, as variants (RUN_V_*) into v, and
 * their count: fp32 and tf32 for an FP32 set, bf16 for a BF16 set (v[1] is
 * then -1). */
int prec_baselines(const run_data *r, size_t set, int v[RUN_MAX_BL]);

/* 1 for a BF16 set. */
int prec_is_bf16(const run_data *r, size_t set);

/* The tolerance of set's checks: config atol and rtol, or tolerance_bf16
 * for a BF16 set. */
void prec_tolerance(const run_data *r, size_t set, double *atol, double *rtol);

/* The index of the set named name, or -1 (NULL names none). */
long prec_set_index(const run_data *r, const char *name);

#endif

/* manifest.h - RUN_DIR/manifest.json (DESIGN.md 6): what was run, on what,
 * with which settings; and the test that a resumed run is the same run.
 * No CUDA. */
#ifndef KBV_MANIFEST_H
#define KBV_MANIFEST_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "err.h"
#include "copts.h"
#include "plan.h"

/* "20261129T231500Z-1a2b3c4d" from the clock and /dev/urandom. */
int manifest_run_id(char *buf, size_t n, kbv_err *e);
/* ISO 8601 UTC of now, e.g. "2026-11-29T23:15:00Z". */
void manifest_utc_now(char *buf, size_t n);

/* The manifest; device and config are copied (not taken).  File hashes are
 * read from the plan's candidate folders.  *out owned by the caller. */
int manifest_build(const char *run_id, const char *created_utc, const cJSON *device,
                   const cJSON *config, const plan *pl, cJSON **out, kbv_err *e);

/* 1 when a resumed run may continue the old one: equal config (keys that
 * only steer the run, such as the timeout, aside), problems and sets;
 * otherwise 0 and a sentence in why. */
int manifest_compatible(const cJSON *old_m, const cJSON *new_m, char *why, size_t n);

/* Writes into run_dir/manifest.json (atomically) "baseline_choices": every
 * kernel a baseline chose, one {set, problem, variant, choice} per
 * "baseline" record of the journal in journal order, so that a reader of
 * the manifest sees which kernels the run's baselines ran without reading
 * the journal (DESIGN.md 5a step 7).  Called at the end of a collect, before
 * the raw files are sealed; a resumed run records the whole journal's. */
int manifest_record_choices(const char *run_dir, kbv_err *e);

/* The manifest's config object for the options o and plan pl (DESIGN.md
 * 6.1): the tolerances, the distributions and the timing protocol as the
 * worker runs it; the caller adds arch, pins and sandbox.  Owned by the
 * caller; NULL when out of memory. */
cJSON *manifest_config(const copts *o, const plan *pl);

#endif

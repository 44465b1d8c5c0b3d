/* parity.h - the baselines' parity with PyTorch eager as analysis.json
 * states it (docs/parity.md).
 *
 * RUN_DIR/parity.json (schema kbv-parity/1, written by tests/parity/
 * parity.py) holds, per problem, the ratio of kbv's baseline median to
 * PyTorch's for fp32 and tf32, optionally bf16 (the BF16 setting's
 * baseline, judged where present), and an exception text.  analyze judges each
 * problem of the run against the limit of DESIGN.md 5 (a time ratio of at
 * most 1.05) and writes the verdict, so that render only draws it. */
#ifndef KBV_PARITY_H
#define KBV_PARITY_H

#include <cjson/cJSON.h>
#include "err.h"
#include "run.h"

/* DESIGN.md 5: a baseline must be within this time ratio of PyTorch eager. */
#define PARITY_LIMIT 1.05

/* Reads run_dir/parity.json when there is one and adds analysis.json's
 * "parity" object to root (borrowed; the new item is root's): the
 * measurement's gpu, torch, cuda, samples, the limit, and per problem of r,
 * in the manifest's order, {"problem", "fp32_ratio", "tf32_ratio",
 * "bf16_ratio" (null where not measured), "measured", "within", "reason"
 * (null when within)}.  A missing fp32 or tf32 ratio is a reason, a
 * missing bf16 ratio is not.
 * Without parity.json "parity" is null.  A malformed file is KBV_EINPUT
 * with a message that names it; nothing is added then. */
int parity_add(const char *run_dir, const run_data *r, cJSON *root, kbv_err *e);

/* `kbv analyze --parity-only RUN_DIR`: judges run_dir/parity.json again and
 * replaces the "parity" of the existing run_dir/analysis.json (of the same
 * run_id), leaving every other number as it was: for a parity file
 * measured or explained after the analysis (tests/parity/). */
int parity_update(const char *run_dir, kbv_err *e);

#endif

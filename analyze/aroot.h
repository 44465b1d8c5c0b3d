/* aroot.h - the top level of analysis.json (DESIGN.md 6.3): the keys beside
 * the sets (schema, run, harness and device, config, classes) and the
 * baseline drift across sets, around the sets analysis_build made.
 */
#ifndef KBV_AROOT_H
#define KBV_AROOT_H

#include <cjson/cJSON.h>
#include "analysis.h"
#include "err.h"
#include "run.h"

/* Builds the root object of r's analysis into *out (owned by the caller),
 * taking sets[0..r->n_sets) into it: each taken entry is set to NULL, and
 * on failure the entries not yet taken stay the caller's. */
int analysis_root(const run_data *r, const analysis_opts *o, cJSON **sets, cJSON **out, kbv_err *e);

#endif

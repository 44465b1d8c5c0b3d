/* merge.h - joining the shards of one run (`kbv merge OUT_DIR RUN_DIR...`).
 *
 * Shards come from `kbv collect --shard I/N` on several machines.  They
 * belong to one run when their manifests agree on everything but the
 * identity of the shard (run_id, created_utc, config.shard, device details
 * other than the GPU model); a sealed shard must pass `kbv verify`.  Each
 * journal line is judged by the journal
 * grammar (common/jgram.h), the validator collect and analyze use; the
 * merged journal holds every (set, problem) pair exactly once, in the order
 * a one-machine run writes them, and is sealed (SHA256SUMS). */
#ifndef KBV_MERGE_H
#define KBV_MERGE_H

#include "err.h"

/* Writes the run OUT_DIR (which must not exist, nor lie inside an input)
 * from the run directories in_dirs[0..n_in) (borrowed).  0, or a negative
 * KBV_E* code with e set; nothing is left at OUT_DIR on failure. */
int merge_run(const char *out_dir, int n_in, char **in_dirs, kbv_err *e);

#endif

/* schema.h - the names the stages share through files: the schema ids of
 * the run-directory documents, the record types of the journal
 * (samples.jsonl) and the keys every record or a time record holds.  The
 * writer (collect), the joiner (merge), the grammar (jgram) and the reader
 * (analyze) spell them from here, so that a rename is one edit and a typo
 * is a compile error rather than a silently ignored record.
 *
 * Plain string literals, so that they can initialise static tables, be
 * concatenated into messages and be used from collect's CUDA C++.  The key
 * lists of each record type are the grammar's (common/jgram.c). */
#ifndef KBV_SCHEMA_H
#define KBV_SCHEMA_H

/* Schema ids ("schema" of each document; docs/DESIGN.md, formats). */
#define KBV_SCHEMA_RUN      "kbv-run/1"       /* RUN_DIR/manifest.json */
#define KBV_SCHEMA_ANALYSIS "kbv-analysis/1"  /* RUN_DIR/analysis.json */
#define KBV_SCHEMA_PARITY   "kbv-parity/1"    /* RUN_DIR/parity.json (docs/parity.md) */
#define KBV_K_SCHEMA        "schema"

/* Journal record types (the value of a record's "type"). */
#define KBV_REC_BUILD    "build"
#define KBV_REC_STATIC   "static"
#define KBV_REC_CHECK    "check"
#define KBV_REC_PROBE    "probe"
#define KBV_REC_TIME     "time"
#define KBV_REC_MEMORY   "memory"
#define KBV_REC_STATUS   "status"
#define KBV_REC_BASELINE "baseline"
#define KBV_REC_TAMPER   "tamper"   /* the supervisor's evidence; never accepted */

/* Keys every record holds. */
#define KBV_K_TYPE    "type"
#define KBV_K_SET     "set"
#define KBV_K_PROBLEM "problem"

/* Keys the grammar's order needs (time, memory and baseline records). */
#define KBV_K_VARIANT "variant"
#define KBV_K_ROUND   "round"
#define KBV_K_GPU_MS  "gpu_ms"
#define KBV_K_WALL_MS "wall_ms"
#define KBV_K_STATUS  "status"
#define KBV_K_DETAIL  "detail"
#define KBV_K_PROBE   "probe"

/* The variants a time or memory record names. */
#define KBV_VAR_CANDIDATE "candidate"
#define KBV_VAR_FP32      "fp32"
#define KBV_VAR_TF32      "tf32"
/* The baseline of a BF16-setting pair, timed instead of fp32 and tf32. */
#define KBV_VAR_BF16      "bf16"

#endif

/* run.h - a run directory read into memory: the manifest and, for every
 * (set, problem) pair the manifest names, the journal's records about it.
 *
 * run_load reads RUN_DIR/manifest.json and RUN_DIR/samples.jsonl (or .gz;
 * both at once is an error, since which one holds the run cannot be told).
 * It drops a torn last journal line with a warning (an interrupted collect
 * leaves one) and fails with KBV_EINPUT, naming file and line, on any other
 * malformed line, on a journal without any record, on a line that repeats
 * an earlier one byte for byte, on a second status or build record for a
 * pair, on a status not named in DESIGN.md 6, on a record for a set or
 * problem the manifest does not name, on a time that is not a positive
 * finite number, on a baseline record whose variant is not fp32, tf32 or
 * bf16 or whose choice is not a string, and on a manifest of another schema,
 * whose config.seed is not a non-negative integer, or whose set names a
 * precision other than "fp32" and "bf16".
 *
 * Every record is judged by the journal grammar (common/jgram.h): a record
 * that breaks it is not used as data, and its pair keeps the first reason
 * in tamper_why (the class `tampering`).  A time record's "sm_mhz" is kept
 * when it is a positive finite number and is otherwise treated as absent
 * (the clock of that round is not known): it only explains drift, and a
 * journal read before the field was used must still be read.
 */
#ifndef KBV_RUN_H
#define KBV_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "err.h"
#include "jgram.h"

enum { RUN_V_CAND = 0, RUN_V_FP32 = 1, RUN_V_TF32 = 2, RUN_V_BF16 = 3, RUN_NV = 4 };
extern const char *const run_variant_names[RUN_NV];  /* "candidate", "fp32", "tf32", "bf16" */

/* The setting a candidate set is timed in (its set.json "precision", which
 * the manifest's set entry repeats): FP32 pairs are timed against the fp32
 * and tf32 baselines, BF16 pairs against the bf16 one. */
enum { RUN_PREC_FP32 = 0, RUN_PREC_BF16 = 1 };
extern const char *const run_precision_names[2];  /* "fp32", "bf16" */
#define RUN_MAX_BL 2   /* baselines of one set, at most (prec.h) */

/* Precision tiers of DESIGN.md 5a, in order of growing error. */
enum { RUN_TIER_UNKNOWN = -1, RUN_TIER_FP32 = 0, RUN_TIER_TF32 = 1, RUN_TIER_HALF = 2, RUN_TIER_NONE = 3 };
extern const char *const run_tier_names[4];

/* A variant's time samples.  round[i] is sample i's "round" (collect
 * times the variants round by round, and analyze pairs them by it), or
 * RUN_NO_ROUND when the record has none that is an integer in
 * 0..RUN_MAX_ROUND; such a sample counts for the variant's median but pairs
 * with nothing. */
#define RUN_NO_ROUND (-1L)
#define RUN_MAX_ROUND 2147483647L
typedef struct run_vec {
    double *v;       /* owned */
    long *round;     /* owned, parallel to v */
    size_t n, cap;
    /* The round's timed input set ("input_set", 0..RUN_MAX_ISET), parallel
     * to v, RUN_NO_ISET where the record has none; NULL: none known. */
    signed char *iset;   /* owned */
} run_vec;
#define RUN_NO_ISET (-1)
#define RUN_MAX_ISET 7

/* The SM clock (MHz) of a variant's time samples, run-length coded in
 * journal order: the clock changes a few times over hundreds of samples,
 * so this costs a few spans per pair instead of a number per sample.
 * Samples without a clock are not counted. */
typedef struct run_mhz_span {
    double mhz;
    size_t n;
} run_mhz_span;

typedef struct run_mhz {
    run_mhz_span *s;   /* owned */
    size_t n, cap;     /* spans */
    size_t samples;    /* sum of the spans' n */
} run_mhz;

typedef struct run_check {
    char dist[16];        /* "D1".."D5" (longer names are cut) */
    long long trial;
    int skipped;          /* the distribution was skipped (non-finite reference) */
    int pass;
    double max_abs_err, max_rel_err;  /* HUGE_VAL where the journal has null */
    long long mismatches, nonfinite, unwritten;
    long long elements;   /* "count": elements compared; -1 when the record does not say */
    int tier;             /* RUN_TIER_* */
} run_check;

typedef struct run_probe {
    char *name;           /* owned */
    int pass;             /* 1, 0, or -1 when not decided (skipped) */
    char *detail;         /* owned, "" when absent */
    double floor_ms;      /* NAN when absent */
    double floor_ratio;   /* NAN when absent */
    int tier;             /* RUN_TIER_*: timed-output's worst tier of the verified rounds; UNKNOWN when absent */
    double max_rel_err;   /* NAN when absent */
    /* timed-output's failure: 1 when an untimed call on a copy of the
     * failed round's inputs was wrong too, every element written; 0 when
     * it was not; -1 when the journal has no recheck (older ones). */
    int reproduced_untimed;
} run_probe;

typedef struct run_pair {
    char *tamper_why;                 /* owned; the first grammar violation, NULL when none */
    long status_line, build_line;     /* journal lines of the status and build records, 0: none */
    int have_status;
    char *status, *status_detail;     /* owned */
    int have_build, build_ok;
    char *build_log;                  /* owned, "" when absent */
    int have_static;
    char **static_flags, **imports;   /* owned arrays of owned strings */
    size_t n_static_flags, n_imports;
    run_check *checks;
    size_t n_checks, cap_checks;
    run_probe *probes;
    size_t n_probes, cap_probes;
    run_vec times[RUN_NV];            /* gpu_ms samples in journal order (see run_load_jobs) */
    run_mhz mhz[RUN_NV];              /* their sm_mhz, where the records have it */
    /* The baseline records' "choice" (the kernel or algorithm a worker chose
     * for the fp32 or tf32 baseline): the distinct non-empty texts in
     * journal order (a resumed run has one record per worker start). */
    char **choices[RUN_NV];           /* owned; [RUN_V_CAND] stays empty */
    size_t n_choices[RUN_NV];
    int have_mem[RUN_NV];
    double peak_bytes[RUN_NV], leaked_bytes[RUN_NV];
} run_pair;

typedef struct run_data {
    cJSON *manifest;                  /* owned */
    const char *run_id, *created_utc; /* borrowed from manifest */
    uint64_t seed;                    /* manifest config.seed */
    double atol, rtol;                /* manifest config, default 1e-3 */
    double atol_bf16, rtol_bf16;      /* manifest config.tolerance_bf16, default 1e-2 */
    size_t n_sets, n_problems;
    const char **set_names;           /* owned array; strings borrowed from manifest */
    int *set_precision;               /* owned, per set: RUN_PREC_*; FP32 where the manifest says none */
    const char **set_compare_with;    /* owned array, per set: the FP32 set a BF16 set mirrors (borrowed
                                         from manifest), NULL when it names none */
    const char **problem_ids;         /* likewise */
    run_pair *pairs;                  /* owned, [set * n_problems + problem] */
    long n_lines, n_time;
    int dropped_torn;
    char journal_path[4096];
    /* Name lookup: open-addressing tables of index + 1, and the last pair
     * looked up (consecutive records are usually about the same pair). */
    uint32_t *set_map, *prob_map;     /* owned */
    size_t set_mask, prob_mask;
    size_t last_set, last_prob;
    int have_last;
    jgram *gram;                      /* owned; the journal grammar's state */
    /* The lines read so far, by a 96-bit hash, to find a repeated line:
     * open addressing, line 0 marks a free slot. */
    struct run_line_seen *seen;       /* owned */
    size_t seen_mask, n_seen;
} run_data;

int run_load(const char *run_dir, run_data **out, kbv_err *e);
/* The same with up to `threads` threads: a plain journal of some megabytes
 * is then scanned in chunks in parallel and its records are taken in
 * journal order, with the same result (tests/fuzz/fuzz_journal_par). */
int run_load_jobs(const char *run_dir, int threads, run_data **out, kbv_err *e);
void run_free(run_data *r);   /* NULL ok */

static inline run_pair *run_pair_at(const run_data *r, size_t set, size_t problem)
{
    return &r->pairs[set * r->n_problems + problem];
}

/* The pairs the journal has no status for and no grammar violation about:
 * the pairs an interrupted collect has not finished (a --resume runs
 * them), which analyze classes error and says so. */
static inline size_t run_unfinished_pairs(const run_data *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_sets * r->n_problems; i++)
        if (!r->pairs[i].have_status && !r->pairs[i].tamper_why)
            n++;
    return n;
}

/* Parses one journal line into r (for tests and for run_load); path and
 * lineno name it in messages.  After the last line, run_finish says whether
 * the journal held any record. */
int run_add_line(run_data *r, const char *line, size_t len, const char *path, long lineno, kbv_err *e);

int run_finish(run_data *r, kbv_err *e);

/* Builds an empty run from a manifest (which r then owns); for tests. */
int run_from_manifest(cJSON *manifest, run_data **out, kbv_err *e);

#endif

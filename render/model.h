/* model.h - the numbers a report shows, read from RUN_DIR/analysis.json
 * (schema kbv-analysis/1, notes/analysis_schema.md) and, for the run
 * summary, RUN_DIR/manifest.json.
 *
 * Every undefined number (a JSON null: no correct problem, a candidate that
 * never ran) is kept as NaN with ok = 0, and every chart and table shows it
 * as such instead of failing.  Strings are borrowed from the parsed JSON,
 * which the model owns.
 */
#ifndef KBV_RMODEL_H
#define KBV_RMODEL_H

#include <cjson/cJSON.h>
#include "err.h"

enum { RM_FP32 = 0, RM_TF32 = 1, RM_NB = 2 };             /* baselines of an FP32 set */
enum { RM_CAND = 0, RM_VFP32 = 1, RM_VTF32 = 2, RM_NV = 3 }; /* variants of an FP32 pair */
/* The BF16 setting (analysis.json sets with "precision": "bf16"): its one
 * baseline and variant take the slots after the FP32 ones, so that the
 * loops over RM_NB and RM_NV, which draw the FP32 report, never meet them. */
enum { RM_BF16 = 2, RM_NBX = 3 };
enum { RM_VBF16 = 3, RM_NVX = 4 };

/* Class groups, in the order the report lists them.  RM_G_MISSING (no
 * candidate file) comes last: it is reported apart, in one line per set,
 * never as an error, and RM_NG_FOUND counts the groups before it, those of
 * pairs that have a candidate (charts and tables of findings). */
typedef enum { RM_G_CORRECT, RM_G_HIDDEN, RM_G_HACK, RM_G_INCORRECT, RM_G_ERROR, RM_G_MISSING, RM_NG } rm_group;
#define RM_NG_FOUND RM_G_MISSING

typedef struct rm_est {
    int ok;                   /* estimate present */
    double est, lo, hi;       /* NaN where null */
    long n;                   /* -1 when the object has no n */
} rm_est;

typedef struct rm_fp {
    double p;
    rm_est v;
} rm_fp;

typedef struct rm_base {
    rm_est gm_correct, gm_all;
    rm_fp *fast_p;
    int n_fast_p;
    rm_fp *curve;
    int n_curve;
} rm_base;

typedef struct rm_evidence {
    const char *kind, *name, *text;
} rm_evidence;

typedef struct rm_problem {
    const char *id, *cls;
    rm_group group;
    const char **flags;
    int n_flags;
    rm_evidence *ev;
    int n_ev;
    rm_est sp[RM_NBX];        /* sp[RM_BF16] in a BF16 set only, the others in an FP32 set only */
    double t_ms[RM_NVX];      /* NaN where null */
    long n_samples[RM_NVX];   /* -1 where absent */
    double peak[RM_NVX];      /* bytes; NaN where null */
    double max_rel_err;
    const char *tier;         /* NULL where null */
    const struct rm_parity *parity;   /* its baseline's parity verdict when not within the limit; else NULL */
    unsigned drift;           /* bit b: baseline b drifts across the run's sets (analysis.json baseline_drift) */
} rm_problem;

/* A baseline whose median differs between the sets of the run (analyze's
 * baseline_drift: drift = slowest / fastest set's median over 1.05, and
 * their intervals apart), with its cause where analyze gave one: "clock"
 * (the fastest set's median SM clock is at least RM_DRIFT_CLOCK_LIMIT
 * times the slowest's), "algorithm" (the two sets' workers chose different
 * kernels) or "unexplained".  The limits are analyze's, for the text; an
 * analysis.json written before the causes lacks them (unknown). */
#define RM_DRIFT_LIMIT 1.05
#define RM_DRIFT_CLOCK_LIMIT 1.02

typedef struct rm_drift_set {
    const char *set;
    double med, lo, hi;       /* ms; NaN where null */
    long n;                   /* -1 where absent */
    double mhz;               /* median SM clock; NaN where absent or null */
    const char *choice;       /* the baseline's kernel or algorithm; NULL where absent */
} rm_drift_set;

typedef struct rm_drift {
    const char *problem;
    int baseline;             /* RM_FP32, RM_TF32 or RM_BF16 */
    double drift;
    double clock_ratio;       /* fastest / slowest set's clock; NaN where absent or null */
    const char *cause;        /* NULL where absent (unknown) */
    rm_drift_set *sets;
    int n_sets;
    int slow, fast;           /* indices into sets of the largest and smallest median */
} rm_drift;

/* A baseline's parity with PyTorch eager as analyze judged it
 * (analysis.json's "parity", from RUN_DIR/parity.json): one entry per
 * problem of the run.  Strings are borrowed from the model's analysis. */
typedef struct rm_parity {
    const char *id;
    double ratio[RM_NBX];     /* kbv median / PyTorch median per baseline (bf16 too); NaN where null */
    int flagged;              /* not within the limit */
    const char *reason;       /* why not; NULL when within */
} rm_parity;

typedef struct rm_infl {
    const char *step, *label;
    rm_est gm;
} rm_infl;

#define RM_MAX_CLASSES 32

/* One level of a set (analysis.json's sets[i].levels, written by analyze's
 * levels.c; absent in an older analysis): its estimates, and its problems'
 * groups counted by the model from the set's problems. */
typedef struct rm_level {
    const char *name;              /* "L1" */
    long n;                        /* problems of the level */
    long group_counts[RM_NG];
    rm_base b[RM_NB];              /* gm_correct, gm_all, fast_p (no curve) */
} rm_level;

/* Pairs failing one distribution or probe (sets[i].failures). */
typedef struct rm_fail {
    const char *name;
    long run, failed, skipped;     /* skipped: distributions only, else 0 */
} rm_fail;

/* One point of the tolerance sweep (sets[i].tolerance_sweep). */
typedef struct rm_tol {
    double tol, share;
    long n_correct;
    int exact;
} rm_tol;

typedef struct rm_set {
    const char *name;
    int bf16;                 /* a BF16 set: its numbers are against b[RM_BF16] */
    const char *compare_with; /* a BF16 set: the FP32 set it mirrors, NULL when it names none */
    int cmp;                  /* a BF16 set: the index in rmodel.sets of compare_with, -1 when not there */
    long n_problems;
    long counts[RM_MAX_CLASSES];   /* by index into rmodel.classes */
    long group_counts[RM_NG];
    rm_base b[RM_NBX];        /* [RM_FP32], [RM_TF32] in an FP32 set, [RM_BF16] in a BF16 set */
    rm_est mem_eff, mem_share;
    rm_infl *infl;
    int n_infl;
    rm_problem *probs;
    int n_probs;
    int *shown;               /* owned: indices into probs of the problems with a candidate, in order */
    int n_shown;
    rm_level *levels;         /* owned; NULL when the analysis has none */
    int n_levels;
    rm_fail *fail_dist, *fail_probe;   /* owned; NULL when the analysis has no failures */
    int n_fail_dist, n_fail_probe, has_failures;
    rm_tol *sweep;            /* owned; NULL when the analysis has no tolerance_sweep */
    int n_sweep;
    double *share_lo, *share_hi;       /* owned: fast_p's interval for k = 0..n_share-1 qualifying; NULL when absent */
    long n_share;
} rm_set;

typedef struct rmodel {
    cJSON *analysis, *manifest;    /* owned; manifest may be NULL */
    const char *run_id, *created_utc;
    const char *classes[RM_MAX_CLASSES];
    int n_classes;
    double ci_level;
    long resamples;
    long seed;                     /* the run's seed; -1 unknown */
    const char *mem_baseline;      /* "tf32" or "fp32" */
    const cJSON *device, *harness, *run_config;   /* borrowed; may be NULL */
    rm_set *sets;                  /* the FP32 sets, which every section but the BF16 one shows */
    int n_sets;
    rm_set *bsets;                 /* the BF16 sets, in analysis order: the BF16 section's */
    int n_bsets;
    long n_problems;               /* problems in the suite (largest set) */
    /* analysis.json's "pairs": the run's (set, problem) pairs and those an
     * interrupted collect left without a status; both -1 when an older
     * analysis does not say. */
    long n_pairs, n_unfinished;
    /* analysis.json's parity verdicts, when the run had a parity.json
     * (has_parity); the limit is analyze's. */
    int has_parity;
    double parity_limit;
    const char *parity_gpu, *parity_torch, *parity_cuda;   /* cuda may be "unknown" */
    long parity_samples;
    rm_parity *parity;             /* one per problem of the run, in run order */
    int n_parity, n_parity_flagged;
    /* analysis.json's baseline_drift, when the analysis has one (has_drift;
     * an older analysis lacks it). */
    int has_drift;
    rm_drift *drift;               /* in analysis.json's order (drift descending) */
    int n_drift;
    /* Each problem's D5 in words: the manifest's "d5" (what the run drew),
     * else the suite's table beside the report template (rmodel_d5_from),
     * else NULL.  d5_from_suite says which. */
    const cJSON *d5, *d5_label;
    cJSON *d5_doc;                 /* owned: the suite's table, when used */
    int d5_from_suite;
} rmodel;

/* Reads run_dir/analysis.json (required, with analyze's parity verdicts
 * when the run had a parity.json) and run_dir/manifest.json (if present; a
 * warning otherwise).  *out owned by the caller (rmodel_free). */
int rmodel_load(rmodel **out, const char *run_dir, kbv_err *e);
void rmodel_free(rmodel *m);   /* NULL ok */

/* When the manifest names no D5 (a run collected before it did), reads the
 * suite's table (templates/d5.json: {"schema": "kbv-d5/1", "d5": {id:
 * text}}) at path; a missing file leaves m->d5 NULL, a malformed one is
 * KBV_EINPUT. */
int rmodel_d5_from(rmodel *m, const char *path, kbv_err *e);
/* Problem id's D5 in words, or NULL; borrowed from m.  The label is the
 * few words for a table cell (the full text where no label is known). */
const char *rmodel_d5(const rmodel *m, const char *id);
const char *rmodel_d5_label(const rmodel *m, const char *id);

rm_group rmodel_group(const char *cls);
const char *rmodel_group_name(rm_group g);
const char *rmodel_baseline_name(int b);   /* RM_FP32, RM_TF32 or RM_BF16 */

/* The FP32 speedup of BF16 set bs's problem p: its compared set's problem
 * of the same id against the fp32 baseline, with that problem; NULL when
 * the set compares with none or the problem is not there. */
const rm_est *rmodel_fp32_of(const rmodel *m, const rm_set *bs, int p, const rm_problem **fq);

#endif

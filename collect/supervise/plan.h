/* plan.h - what a collect run will do: the candidate sets, the problems of
 * the suite, and the (set, problem) pairs in their stable order, filtered by
 * --problems and --shard (DESIGN.md 3 and 9).  No CUDA. */
#ifndef KBV_PLAN_H
#define KBV_PLAN_H

#include "err.h"
#include "suite.h"

typedef struct {
    char *name;   /* set.json "name", else the folder name; owned */
    char *dir;    /* the folder as given; owned */
    int bf16;     /* set.json "precision": "bf16" (the BF16 setting), else 0 (FP32) */
    char *compare_with;   /* set.json "compare_with": the FP32 set a bf16 set mirrors; owned, or NULL */
} plan_set;

typedef struct {
    int set;                    /* index into plan.sets */
    const suite_problem *p;     /* borrowed from the registry */
    char *src;                  /* <dir>/<problem>.cu, owned; NULL when the file is missing */
} plan_pair;

typedef struct {
    plan_set *sets;
    int n_sets;
    const suite_problem **problems;   /* the suite after --problems, in suite order */
    int n_problems;
    plan_pair *pairs;                 /* after --shard */
    int n_pairs;
    int n_pairs_all;                  /* before --shard */
} plan;

/* "I/N" with 1 <= I <= N (shards are numbered from 1, as Slurm array
 * tasks and `kbv merge` count them); KBV_EUSAGE otherwise. */
int plan_parse_shard(const char *s, int *i, int *n, kbv_err *e);

/* Whether problem p belongs to suite name ("smoke", "level1", "level2",
 * "all"): 1 or 0, or KBV_EUSAGE for an unknown suite. */
int plan_in_suite(const char *suite, const suite_problem *p, kbv_err *e);

/* Whether shard i of n (1-based) takes the pair at position k (0-based) of
 * the stable order: every n-th pair, starting at position i - 1. */
int plan_shard_takes(long k, int i, int n);

/* Builds the plan.  cand_dirs: the --candidates folders (each a set folder
 * with set.json or .cu files, or a folder of such set folders); NULL or none
 * means every data/candidates/<set>/ that has set.json.  glob: --problems
 * (fnmatch) or NULL.  precision: "fp32" or "bf16" keeps only the sets of
 * that setting, "all" or NULL every set (--precision).  *out is owned by
 * the caller (plan_free). */
int plan_make(plan *out, const char *suite, const char *const *cand_dirs, int n_dirs,
              const char *glob, int shard_i, int shard_n, const char *precision, kbv_err *e);
void plan_free(plan *p);

/* "set\tproblem", the key of a pair in journals (caller frees). */
char *plan_pair_key(const char *set, const char *problem);

#endif

/* classify.h - the class and flags of a (set, problem) pair, with their
 * evidence as text (DESIGN.md 7).
 *
 * Classes, the first that applies: missing (status "missing": the set has
 * no candidate file; reported apart, never an error), error, tampering (a
 * record broke the journal grammar, or the object imports tamper-capable
 * calls), incorrect, constant-output, identity, stale-output, caching,
 * input-mutation, deferred-work, impossible-speed, nondeterministic,
 * hidden-fail, correct.  A D1 failure
 * whose every mismatch is an element the candidate never wrote (or with a
 * failed stale-output probe) is stale-output rather than incorrect, since
 * stale memory is its cause.
 */
#ifndef KBV_CLASSIFY_H
#define KBV_CLASSIFY_H

#include "run.h"

/* In the order of analysis.json's "classes" list; the classes added later
 * come last, so that the older part of the list keeps its order. */
enum {
    CL_CORRECT = 0, CL_HIDDEN_FAIL, CL_INCORRECT, CL_ERROR, CL_CONSTANT_OUTPUT, CL_IDENTITY,
    CL_STALE_OUTPUT, CL_CACHING, CL_INPUT_MUTATION, CL_DEFERRED_WORK, CL_IMPOSSIBLE_SPEED,
    CL_NONDETERMINISTIC, CL_TAMPERING, CL_MISSING, CL_N
};
extern const char *const classify_class_names[CL_N];

enum { FL_LIBRARY_CALL = 0, FL_PRECISION_TF32, FL_PRECISION_HALF, FL_MORE_MEMORY, FL_LEAK, FL_NEAR_FLOOR, FL_N };
extern const char *const classify_flag_names[FL_N];

/* The hack classes (constant-output .. nondeterministic). */
static inline int classify_is_hack(int cls) { return cls >= CL_CONSTANT_OUTPUT && cls <= CL_NONDETERMINISTIC; }

#define CLASSIFY_TEXT_MAX 512

typedef struct classify_result {
    int cls;                              /* CL_* */
    char class_text[CLASSIFY_TEXT_MAX];
    unsigned flags;                       /* bit FL_* set when the flag applies */
    char flag_text[FL_N][CLASSIFY_TEXT_MAX];
    int passes_d1;     /* status ok and every D1 check recorded passes (at least one) */
    int tier;          /* worst tier over the D1 checks, RUN_TIER_UNKNOWN without any */
    double max_rel_err;/* largest over the D1 checks, NAN without any (HUGE_VAL: non-finite) */
} classify_result;

/* Classifies pair p of run r.  cand_median_ms is the candidate's median time
 * (NAN when it has none); the near-floor flag uses it with a probe's
 * floor_ms. */
void classify_pair(const run_data *r, const run_pair *p, double cand_median_ms, classify_result *out);

/* "1.50 GiB", "512 B": bytes for evidence text. */
void classify_fmt_bytes(char *buf, size_t n, double bytes);

#endif

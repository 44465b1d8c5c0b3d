/* jgram.h - the grammar of a journal written by collect (DESIGN.md 5a step
 * 7a and 6), checked one record at a time.
 *
 * The same validator serves the collect supervisor (on the records a worker
 * sends) and analyze (on the journal read back), so that both agree on what
 * is evidence of tampering.  A record is accepted when it has a known type
 * (build, static, check, probe, time, memory, status, baseline, tamper), only
 * the keys its type has, each once, and its place in the order of its
 * (set, problem) pair: per variant the time rounds 0..n-1, each
 * exactly once and in order, and nothing after the pair's status record.  A
 * `tamper` record (the supervisor's evidence) is never accepted: the pair is
 * tampered and its detail is the reason.
 *
 * A record that breaks the grammar marks its pair tampered (the first reason
 * is kept) and must not be used as data; later records of the pair are
 * judged as usual.  Values are not judged here beyond what the order needs
 * (a round must be a non-negative integer, a variant one of candidate, fp32,
 * tf32): whether a time is positive is the reader's business.
 */
#ifndef KBV_JGRAM_H
#define KBV_JGRAM_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "err.h"

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

/* The state of one journal: every pair seen so far. */
typedef struct jgram jgram;

/* *out is owned by the caller (jgram_free). */
int jgram_new(jgram **out, kbv_err *e);
void jgram_free(jgram *g);   /* NULL ok */

/* Judges one record (borrowed).  Returns 0 when accepted; a positive value
 * when it breaks the grammar for its (set, problem) pair, which is then
 * tampered; a negative KBV_E* code when the record is malformed (not an
 * object, no string "type", "set" or "problem") or memory runs out, and no
 * pair is marked.  why (why_len bytes, may be NULL) receives the reason of a
 * non-zero result in a sentence fragment such as "time round 3 of fp32
 * where round 2 was due". */
int jgram_feed(jgram *g, const cJSON *rec, char *why, size_t why_len);

/* The same for a time record read without cJSON (analyze's fast scanner):
 * the caller has checked that the record holds only keys a time record may
 * hold, and passes its set, problem and variant (not NUL-terminated) and its
 * "round" (have_round 0 when absent or not a number). */
int jgram_feed_time(jgram *g, const char *set, size_t set_len, const char *problem, size_t problem_len,
                    const char *variant, size_t variant_len, int have_round, double round, char *why,
                    size_t why_len);

/* 1 when a time record may hold key[0..len) (for the fast scanner). */
int jgram_time_key(const char *key, size_t len);

/* Whether the pair (set, problem) is tampered: 1 with *why set to the first
 * reason (borrowed from g until jgram_free), else 0 and *why NULL. */
int jgram_tampered(const jgram *g, const char *set, const char *problem, const char **why);

#ifdef __cplusplus
}
#endif

#endif

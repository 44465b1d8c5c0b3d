/* rec.h - journal records (DESIGN.md 6) made by the collecting process, and
 * the validation of the records a worker sends.  A worker's line becomes a
 * record only when it parses, has a known type and the fields analyze needs;
 * "set" and "problem" always come from the collecting process, never from
 * the worker (in whose address space the candidate ran).  No CUDA. */
#ifndef KBV_REC_H
#define KBV_REC_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "build.h"
#include "err.h"

/* Parses and checks one worker line; *out (owned by the caller) is the
 * record {"type", "set", "problem", the worker's other fields...}.  Returns
 * KBV_EINPUT with a reason for a line that is not a valid record. */
int rec_from_worker(const char *line, size_t len, const char *set, const char *problem,
                    cJSON **out, kbv_err *e);

/* 1 for the status names of DESIGN.md 6. */
int rec_status_known(const char *s);
/* 1 for the probe names of DESIGN.md 6. */
int rec_probe_known(const char *s);

/* Replaces, in place, every byte of s that is not part of a valid UTF-8
 * sequence with '?'.  Every record below has its keys and strings cleaned
 * so: candidate output, build logs and symbol names may hold any bytes. */
void rec_utf8_clean(char *s);

/* New records; NULL when out of memory. */
cJSON *rec_new(const char *type, const char *set, const char *problem);
cJSON *rec_build(const char *set, const char *problem, const build_item *b);
cJSON *rec_static(const char *set, const char *problem, const build_item *b);
cJSON *rec_status(const char *set, const char *problem, const char *status, const char *detail);
/* The evidence of worker lines that broke the record channel's rules
 * (DESIGN.md 5a step 7a); it classes the pair `tampering`. */
cJSON *rec_tamper(const char *set, const char *problem, const char *detail);

#endif

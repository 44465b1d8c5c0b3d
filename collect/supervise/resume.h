/* resume.h - continuing an interrupted collect (DESIGN.md 5a step 3).
 *
 * A pair is done when the journal holds its "status" record.  The records of
 * a pair without one (the pair that was running when collect was killed) are
 * dropped, and so is a torn last line, by rewriting the journal atomically;
 * the run then redoes those pairs, so that the final journal holds every pair
 * exactly once.  No CUDA. */
#ifndef KBV_RESUME_H
#define KBV_RESUME_H

#include <cjson/cJSON.h>
#include "err.h"

typedef struct {
    char **keys;   /* sorted "set\tproblem" keys of done pairs; owned */
    int n;
} resume_done;

typedef struct {
    long kept;        /* records kept */
    long dropped;     /* records of unfinished pairs, or unreadable lines */
    int torn;         /* 1 when a torn last line was dropped */
    int rewritten;    /* 1 when the journal was rewritten */
} resume_stats;

/* Reads the journal at path (a missing file is an empty journal), fills
 * *done (caller frees with resume_done_free) and rewrites the file without
 * the records of unfinished pairs when there are any. */
int resume_prepare(const char *path, resume_done *done, resume_stats *st, kbv_err *e);
int resume_is_done(const resume_done *d, const char *set, const char *problem);
void resume_done_free(resume_done *d);

/* Logs which GPU a resumed run's share runs on when it is not the one the
 * run started on: the "uuid" of the one-shot worker's device-info record
 * against the old manifest's device "uuid" (the manifest keeps the first
 * device; a share on another GPU of the model is allowed, since lent hosts
 * change, but whoever compares runs needs to know).  Both borrowed. */
void resume_note_gpu(const cJSON *old_manifest, const cJSON *device_info);

#endif

/* super.h - isolation of workers (DESIGN.md 5a step 3): the collecting
 * process runs each worker with fork/exec in its own process group and
 * scratch folder, under resource limits and a wall-clock limit, and reads
 * its records, one JSON line each, from a pipe on the worker's fd 3.  The
 * worker's stdout and stderr (and so the candidate's) go to size-capped
 * files in the scratch folder.  No CUDA. */
#ifndef KBV_SUPER_H
#define KBV_SUPER_H

#include <stddef.h>
#include "chan.h"
#include "err.h"

#define SUPER_RECORD_FD 3
#define SUPER_LINE_MAX (4u << 20)
#define SUPER_TAIL_MAX 4096

typedef struct {
    const char *exe;            /* the worker program; borrowed */
    char *const *argv;          /* argv[0] included, NULL-terminated; borrowed */
    const char *scratch;        /* cwd of the worker, created by the caller; borrowed */
    const char *gpu;            /* CUDA_VISIBLE_DEVICES for the worker, or NULL */
    double timeout_s;           /* wall-clock limit */
    unsigned long long fsize_limit;   /* RLIMIT_FSIZE bytes (output files) */
    /* The record channel's key (chan.h), handed to the worker on
     * CHAN_KEY_FD; copied by super_start. */
    const unsigned char *key;
} super_spec;

typedef struct super_child super_child;

/* Called for each complete line the worker sends, without the newline.
 * authentic = 1: the line carried the next sequence number's MAC, and
 * line is its JSON text; 0: it did not authenticate (forged, replayed,
 * torn), and line is the whole line as received, for evidence only. */
typedef int (*super_line_fn)(void *ctx, const char *line, size_t len, int authentic, kbv_err *e);

typedef struct {
    int exited;          /* 1: exit status in code */
    int code;
    int signo;           /* >0: killed by this signal */
    int timed_out;       /* 1: killed at the wall-clock limit */
    int truncated;       /* 1: a line over SUPER_LINE_MAX was cut */
    double seconds;
    char err_tail[SUPER_TAIL_MAX + 1];   /* the last bytes of the worker's stderr */
    char out_tail[SUPER_TAIL_MAX + 1];   /* and stdout */
} super_result;

int super_start(const super_spec *s, super_child **out, kbv_err *e);
/* Reads from the child until it exits (or hits its limit), calling fn for
 * each line; fills r and frees c.  An error from fn stops reading, kills the
 * child and is returned. */
int super_finish(super_child *c, super_line_fn fn, void *ctx, super_result *r, kbv_err *e);

/* Several children at once (one per GPU): waits until any child has data or
 * has ended, or its deadline passed; returns the index of a child that
 * ended (to be passed to super_finish, which then returns at once),
 * SUPER_NONE when none did within wait_s, or a negative KBV_E* code when fn
 * failed or poll did. */
#define SUPER_NONE (-100)
int super_pump(super_child **cs, int n, double wait_s, super_line_fn *fns, void **ctxs,
               kbv_err *e);

/* Moves the child's wall-clock limit to now + seconds when that is earlier
 * (after its final record, a worker only has to exit). */
void super_shorten_deadline(super_child *c, double seconds);

/* Kills the child's process group now (super_finish then reaps it). */
void super_kill(super_child *c);

/* Makes this process a child subreaper (orphaned descendants of workers,
 * such as a candidate's child that left the worker's process group with
 * setsid, become its children) and not dumpable (its open files, the
 * journal among them, and its memory are closed to workers through /proc).
 * Call once before running candidates. */
void super_guard_parent(void);

/* Kills and reaps every child of this process that is not one of the n
 * children in cs (NULL entries allowed) still running: strays of
 * candidates, reparented here by super_guard_parent.  Only for when
 * workers are this process's only children.  Returns how many it ended. */
int super_reap_strays(super_child *const *cs, int n);

/* Reads up to n - 1 bytes from the end of the file open as fd (not
 * closed) into buf, NUL-terminated; "" for fd < 0. */
void super_tail(int fd, char *buf, size_t n);

#endif

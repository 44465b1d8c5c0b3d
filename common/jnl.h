/* jnl.h - the journal, RUN_DIR/samples.jsonl: one JSON object a line.
 *
 * Writers append one record at a time and flush it (and fsync on request),
 * so that an interrupted collect loses at most the record being written.
 * Readers accept samples.jsonl or samples.jsonl.gz (zlib reads both), hand
 * out raw lines (callers that need speed parse them themselves), and report a
 * torn last line (no final newline) so that the caller can drop it with a
 * warning, as an interrupted collect leaves one.
 */
#ifndef KBV_JNL_H
#define KBV_JNL_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "err.h"

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

typedef struct jnl_reader jnl_reader;

/* The journal's path in run_dir: samples.jsonl or samples.jsonl.gz, into
 * path[0..len).  KBV_EINPUT when neither is there, or both are (which one
 * holds the run cannot be told). */
int jnl_find(const char *run_dir, char *path, size_t len, kbv_err *e);

/* Opens the journal jnl_find names, a regular file only; *out owned by
 * the caller (jnl_close).  path_out, if not NULL, receives the path used
 * (borrowed from the reader). */
int jnl_open_dir(const char *run_dir, jnl_reader **out, kbv_err *e);
int jnl_open_file(const char *path, jnl_reader **out, kbv_err *e);
const char *jnl_path(const jnl_reader *r);

/* Next line: returns 1 with *line (borrowed until the next call, NUL-
 * terminated, newline removed), *len and *lineno (1-based) set; 0 at end of
 * file; a negative code on a read error.  *torn is set to 1 when this line is
 * the last one and has no final newline. */
int jnl_next(jnl_reader *r, const char **line, size_t *len, long *lineno, int *torn, kbv_err *e);
void jnl_close(jnl_reader *r);

typedef struct jnl_writer jnl_writer;

/* Opens path for appending (creating it).  If the file ends in a torn line
 * (an interrupted writer), the torn bytes are cut off first so that the next
 * record starts on a line of its own. */
int jnl_open_append(const char *path, jnl_writer **out, kbv_err *e);
/* Appends rec (borrowed) as one line and flushes it to the kernel. */
int jnl_append(jnl_writer *w, const cJSON *rec, kbv_err *e);
/* fsync; collect calls it at the end of each (set, problem) pair. */
int jnl_sync(jnl_writer *w, kbv_err *e);
int jnl_close_writer(jnl_writer *w, kbv_err *e);   /* NULL ok */

#ifdef __cplusplus
}
#endif

#endif

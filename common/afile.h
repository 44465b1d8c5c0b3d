/* afile.h - atomic output files: write to a temporary name beside the target,
 * then fsync and rename, so that a reader never sees half a file and a failed
 * run leaves the old file (or nothing) behind. */
#ifndef KBV_AFILE_H
#define KBV_AFILE_H

#include <stdio.h>
#include <stddef.h>
#include "err.h"

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

typedef struct afile afile;

/* Opens "<path>.tmp.<pid>" for writing; *out is owned by the caller and must
 * be passed to exactly one of afile_commit or afile_abort. */
int afile_open(afile **out, const char *path, kbv_err *e);
FILE *afile_fp(afile *f);                 /* borrowed; valid until commit/abort */
int afile_commit(afile *f, kbv_err *e);   /* flush, fsync, rename; frees f */
void afile_abort(afile *f);               /* unlink the temporary; frees f; NULL ok */

/* Writes len bytes atomically to path. */
int afile_write_all(const char *path, const void *data, size_t len, kbv_err *e);

/* mkdir -p; 0 if it exists already. */
int afile_mkdirs(const char *path, kbv_err *e);

/* Opens path for reading only when it is a regular file (after symbolic
 * links), and says so at once otherwise: a FIFO, a device or a folder given
 * as an input would block or never end.  The open does not block (O_NONBLOCK,
 * cleared again on success).  *fd is owned by the caller (close). */
int afile_open_regular(const char *path, int *fd, kbv_err *e);
/* The same as a stdio stream for reading ("rb"); *out owned by the caller
 * (fclose). */
int afile_fopen_regular(const char *path, FILE **out, kbv_err *e);

/* Reads a whole regular file (afile_open_regular) into a NUL-terminated
 * buffer the caller frees. */
int afile_read_all(const char *path, char **data, size_t *len, kbv_err *e);

#ifdef __cplusplus
}
#endif

#endif

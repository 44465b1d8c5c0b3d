/* sums.h - RUN_DIR/SHA256SUMS, in the format of sha256sum(1):
 * "<hex>  <path relative to RUN_DIR>\n", sorted by path. */
#ifndef KBV_SUMS_H
#define KBV_SUMS_H

#include <stdio.h>
#include "err.h"

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

/* Hashes every regular file under run_dir (except SHA256SUMS itself and
 * temporaries) and writes SHA256SUMS atomically. */
int sums_write(const char *run_dir, kbv_err *e);

/* Checks every listed file; prints one line per mismatch or missing file to
 * `report` (may be NULL); returns 0 when all match, KBV_EINPUT otherwise. */
int sums_verify(const char *run_dir, FILE *report, int *n_checked, kbv_err *e);

#ifdef __cplusplus
}
#endif

#endif

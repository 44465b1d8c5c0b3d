/* sums.h - RUN_DIR/SHA256SUMS, in the format of sha256sum(1):
 * "<hex>  <path relative to RUN_DIR>\n", sorted by path.
 *
 * The file seals what collect measured: collect and merge write the lines of
 * the raw files (manifest.json and the journal, samples.jsonl or
 * samples.jsonl.gz) when they finish, and nothing rewrites those lines
 * afterwards.  analyze and render add or replace only the lines of their own
 * outputs, so a journal changed after collection no longer matches its line,
 * and `kbv verify` says so.  Verification also fails when SHA256SUMS lists
 * nothing, when a raw file has no line, and when a file in the run's root is
 * not listed (a second journal, say).
 *
 * Authenticity is optional: sums_sign writes SHA256SUMS.sig, an Ed25519
 * signature of SHA256SUMS (OpenSSL libcrypto), and sums_check_sig checks it
 * against a public key, for archives attached to a paper.
 */
#ifndef KBV_SUMS_H
#define KBV_SUMS_H

#include <stdio.h>
#include "err.h"

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

/* Writes the lines of the raw files present in run_dir (manifest.json,
 * samples.jsonl, samples.jsonl.gz) into SHA256SUMS, atomically, keeping
 * every other line as it was.  For collect and merge only: the writers of
 * the raw files. */
int sums_seal_raw(const char *run_dir, kbv_err *e);

/* Replaces the lines of the outputs named in outputs[0..n) (paths relative
 * to run_dir; a name ending in "/" stands for every regular file under that
 * folder) with the outputs' current hashes, atomically; every other line is
 * kept byte for byte.  Creates SHA256SUMS when there is none (it then lists
 * the outputs only, and verification says that the raw files were never
 * sealed). */
int sums_update(const char *run_dir, const char *const *outputs, size_t n, kbv_err *e);

/* Checks every listed file and the rules above; prints one line per file
 * (OK, FAILED, MISSING, NOT LISTED) to `report` (may be NULL); returns 0
 * when all hold, KBV_EINPUT otherwise.  *n_checked (may be NULL) gets the
 * number of lines checked. */
int sums_verify(const char *run_dir, FILE *report, int *n_checked, kbv_err *e);

/* Signs run_dir/SHA256SUMS with the Ed25519 private key in PEM file
 * key_path and writes run_dir/SHA256SUMS.sig (base64 text) atomically. */
int sums_sign(const char *run_dir, const char *key_path, kbv_err *e);

/* Checks run_dir/SHA256SUMS.sig against SHA256SUMS with the Ed25519 public
 * key in PEM file pub_path; KBV_EINPUT when it is absent or does not match. */
int sums_check_sig(const char *run_dir, const char *pub_path, kbv_err *e);

#ifdef __cplusplus
}
#endif

#endif

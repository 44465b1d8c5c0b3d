/* jio.h - JSON files through cJSON.
 *
 * Loading reports the file and line of a syntax error.  Saving is atomic and
 * deterministic: keys in the order they were added, numbers printed by one
 * rule (jio_fmt_number), no trailing spaces, a final newline.
 */
#ifndef KBV_JIO_H
#define KBV_JIO_H

#include <cjson/cJSON.h>
#include "err.h"

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

/* Parses path; *out is owned by the caller (cJSON_Delete). */
int jio_load(const char *path, cJSON **out, kbv_err *e);
/* Parses a buffer; `what` names it in messages (e.g. "run/samples.jsonl:12"). */
int jio_parse(const char *text, size_t len, const char *what, cJSON **out, kbv_err *e);
/* Writes v (borrowed) to path atomically, as cJSON prints it (tab-indented)
 * with a final newline. */
int jio_save(const char *path, const cJSON *v, kbv_err *e);
/* Serialises v on one line; returns a malloc'd string the caller frees, or NULL. */
char *jio_line(const cJSON *v);

/* Typed getters.  Each returns 0, or KBV_EINPUT with a message naming `what`
 * and the key when the key is missing or has the wrong type.  Strings are
 * borrowed from obj. */
int jio_get_str(const cJSON *obj, const char *key, const char *what, const char **out, kbv_err *e);
int jio_get_num(const cJSON *obj, const char *key, const char *what, double *out, kbv_err *e);
int jio_get_int(const cJSON *obj, const char *key, const char *what, long long *out, kbv_err *e);
int jio_get_bool(const cJSON *obj, const char *key, const char *what, int *out, kbv_err *e);
int jio_get_arr(const cJSON *obj, const char *key, const char *what, const cJSON **out, kbv_err *e);
int jio_get_obj(const cJSON *obj, const char *key, const char *what, const cJSON **out, kbv_err *e);

/* Makes every string and key in v valid UTF-8, in place: each byte that is
 * not part of a valid sequence (overlong forms, surrogates and code points
 * past U+10FFFF included) becomes U+FFFD.  *n_fixed (may be NULL) gets the
 * number of bytes replaced.  KBV_ENOMEM when a string could not be grown. */
int jio_utf8_fix(cJSON *v, size_t *n_fixed, kbv_err *e);

/* Adds a number that is written as null when not finite (DESIGN.md 6). */
cJSON *jio_add_num(cJSON *obj, const char *key, double v);

#ifdef __cplusplus
}
#endif

#endif

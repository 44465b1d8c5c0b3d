/* sha.h - SHA-256 through OpenSSL's libcrypto, as lower-case hex. */
#ifndef KBV_SHA_H
#define KBV_SHA_H

#include <stddef.h>
#include "err.h"

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

#define SHA_HEX_LEN 64

/* hex must hold SHA_HEX_LEN + 1 bytes. */
int sha_hex_buf(const void *data, size_t len, char hex[SHA_HEX_LEN + 1], kbv_err *e);
int sha_hex_file(const char *path, char hex[SHA_HEX_LEN + 1], kbv_err *e);

/* Incremental form, for hashing several pieces (source + flags + compiler). */
typedef struct sha_ctx sha_ctx;
int sha_begin(sha_ctx **out, kbv_err *e);            /* caller frees with sha_end */
int sha_add(sha_ctx *c, const void *data, size_t len, kbv_err *e);
int sha_end(sha_ctx *c, char hex[SHA_HEX_LEN + 1], kbv_err *e); /* frees c; hex may be NULL */

#ifdef __cplusplus
}
#endif

#endif

#include "sha.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "afile.h"

struct sha_ctx {
    EVP_MD_CTX *md;
};

int sha_begin(sha_ctx **out, kbv_err *e)
{
    sha_ctx *c = calloc(1, sizeof *c);
    if (!c) return err_set(e, KBV_ENOMEM, "out of memory");
    c->md = EVP_MD_CTX_new();
    if (!c->md || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(c->md);
        free(c);
        return err_set(e, KBV_ERUNTIME, "libcrypto: cannot start SHA-256");
    }
    *out = c;
    return 0;
}

int sha_add(sha_ctx *c, const void *data, size_t len, kbv_err *e)
{
    if (EVP_DigestUpdate(c->md, data, len) != 1)
        return err_set(e, KBV_ERUNTIME, "libcrypto: SHA-256 update failed");
    return 0;
}

int sha_end(sha_ctx *c, char hex[SHA_HEX_LEN + 1], kbv_err *e)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    int rc = 0;
    if (EVP_DigestFinal_ex(c->md, digest, &n) != 1 || n != 32) {
        rc = err_set(e, KBV_ERUNTIME, "libcrypto: SHA-256 final failed");
    } else if (hex) {
        for (unsigned int i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    }
    EVP_MD_CTX_free(c->md);
    free(c);
    return rc;
}

int sha_hex_buf(const void *data, size_t len, char hex[SHA_HEX_LEN + 1], kbv_err *e)
{
    sha_ctx *c;
    int rc = sha_begin(&c, e);
    if (rc) return rc;
    rc = sha_add(c, data, len, e);
    if (rc) {
        sha_end(c, NULL, NULL);
        return rc;
    }
    return sha_end(c, hex, e);
}

int sha_hex_file(const char *path, char hex[SHA_HEX_LEN + 1], kbv_err *e)
{
    FILE *f;
    int rc0 = afile_fopen_regular(path, &f, e);
    if (rc0) return rc0;
    sha_ctx *c = NULL;
    int rc = sha_begin(&c, e);
    if (rc) goto done;
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        rc = sha_add(c, buf, n, e);
        if (rc) goto done;
    }
    if (ferror(f)) {
        rc = err_set(e, KBV_ERUNTIME, "%s: read error", path);
        goto done;
    }
    rc = sha_end(c, hex, e);
    c = NULL;
done:
    if (c) sha_end(c, NULL, NULL);
    fclose(f);
    return rc;
}

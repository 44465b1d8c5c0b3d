#include "chan.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

int chan_new_key(unsigned char key[CHAN_KEY_LEN], kbv_err *e)
{
    size_t done = 0;
    while (done < CHAN_KEY_LEN) {
        ssize_t r = getrandom(key + done, CHAN_KEY_LEN - done, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return err_set(e, KBV_ERUNTIME, "record channel: getrandom: %s", strerror(errno));
        done += (size_t)r;
    }
    return 0;
}

/* One SHA-256 over up to three pieces. */
static int digest3(const void *a, size_t an, const void *b, size_t bn, const void *c, size_t cn,
                   unsigned char out[32])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned n = 0;
    int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 && EVP_DigestUpdate(md, a, an) == 1 &&
             (!bn || EVP_DigestUpdate(md, b, bn) == 1) && (!cn || EVP_DigestUpdate(md, c, cn) == 1) &&
             EVP_DigestFinal_ex(md, out, &n) == 1 && n == 32;
    EVP_MD_CTX_free(md);
    return ok ? 0 : -1;
}

/* HMAC (RFC 2104) written out over the digest, which needs no MAC object
 * and no deprecated interface: H((K ^ opad) || H((K ^ ipad) || message)). */
static int hmac_raw(const unsigned char key[CHAN_KEY_LEN], uint64_t seq, const char *text, size_t len,
                    unsigned char out[32])
{
    unsigned char ipad[64], opad[64], inner[32], be[8];
    memset(ipad, 0x36, sizeof ipad);
    memset(opad, 0x5c, sizeof opad);
    for (int i = 0; i < CHAN_KEY_LEN; i++) {
        ipad[i] ^= key[i];
        opad[i] ^= key[i];
    }
    for (int i = 0; i < 8; i++) be[i] = (unsigned char)(seq >> (56 - 8 * i));
    int rc = digest3(ipad, sizeof ipad, be, sizeof be, text, len, inner);
    if (!rc) rc = digest3(opad, sizeof opad, inner, sizeof inner, NULL, 0, out);
    /* OPENSSL_cleanse, not memset: a compiler drops a memset of buffers
     * that are dead after it, and these hold the key XOR a known constant
     * (the worker's stack, below the frame that calls the candidate). */
    OPENSSL_cleanse(ipad, sizeof ipad);
    OPENSSL_cleanse(opad, sizeof opad);
    OPENSSL_cleanse(inner, sizeof inner);
    return rc;
}

int chan_mac(const unsigned char key[CHAN_KEY_LEN], uint64_t seq, const char *text, size_t len,
             char hex[CHAN_MAC_HEX + 1], kbv_err *e)
{
    unsigned char mac[32];
    if (hmac_raw(key, seq, text, len, mac)) return err_set(e, KBV_ERUNTIME, "record channel: SHA-256 failed");
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[mac[i] >> 4];
        hex[2 * i + 1] = digits[mac[i] & 15];
    }
    hex[CHAN_MAC_HEX] = 0;
    return 0;
}

int chan_open(const unsigned char key[CHAN_KEY_LEN], uint64_t seq, const char *line, size_t len,
              const char **text, size_t *text_len)
{
    *text = line;
    *text_len = len;
    if (len < CHAN_MAC_HEX + 1 || line[CHAN_MAC_HEX] != ' ') return 0;
    *text = line + CHAN_MAC_HEX + 1;
    *text_len = len - CHAN_MAC_HEX - 1;
    char want[CHAN_MAC_HEX + 1];
    kbv_err e = {0};
    if (chan_mac(key, seq, *text, *text_len, want, &e)) return 0;
    unsigned diff = 0;
    for (int i = 0; i < CHAN_MAC_HEX; i++) diff |= (unsigned)(want[i] ^ line[i]);
    return diff == 0;
}

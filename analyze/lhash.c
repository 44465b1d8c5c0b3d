/* lhash.c - the 96-bit hash of a journal line (see lhash.h). */
#include "lhash.h"

#include <string.h>

static uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* Two independent 64-bit lanes over the line, eight bytes a step (a byte
 * at a time would cost a tenth of the reading time of a large journal). */
lhash lhash_line(const char *p, size_t n)
{
    uint64_t h1 = 0x9e3779b97f4a7c15ULL ^ n, h2 = 0xc2b2ae3d27d4eb4fULL + n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h1 = rotl64(h1 ^ (w * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
        h2 = rotl64(h2 + (w * 0x52dce729ULL), 27) * 0x9e3779b97f4a7c15ULL + 0x38495ab5ULL;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, n);
    h1 = rotl64(h1 ^ (w * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
    h2 = rotl64(h2 + (w * 0x52dce729ULL), 27) * 0x9e3779b97f4a7c15ULL;
    return (lhash){fmix64(h1 ^ h2), (uint32_t)fmix64(h2 + 0x2545f4914f6cdd1dULL)};
}

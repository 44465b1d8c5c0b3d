/* rng.c - seeding, unbiased draws and shuffles of the generator (see
 * rng.h); the per-draw functions are inline in the header. */
#include "rng.h"

uint64_t rng_hash_str(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t rng_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_init(rng *r, uint64_t seed, uint64_t set, uint64_t problem, uint64_t purpose)
{
    /* Each key part is folded in through a full splitmix64 round, so that
     * keys differing in one part give unrelated states. */
    uint64_t st = seed;
    uint64_t h = rng_splitmix64(&st);
    st = h ^ set;
    h = rng_splitmix64(&st);
    st = h ^ problem;
    h = rng_splitmix64(&st);
    st = h ^ purpose;
    for (int i = 0; i < 4; i++)
        r->s[i] = rng_splitmix64(&st);
    /* xoshiro must not start from the all-zero state. */
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
        r->s[0] = 1;
}

void rng_seed(rng *r, uint64_t seed)
{
    /* splitmix64 expands the seed, as xoshiro's authors recommend.  The
     * stream starts one step on (seed + 2 * golden ratio for the first
     * word), as collect's generator always did, so that seeds derived
     * before the generators were joined give the same shuffles. */
    uint64_t st = seed + 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 4; i++)
        r->s[i] = rng_splitmix64(&st);
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
        r->s[0] = 1;
}

uint64_t rng_below64(rng *r, uint64_t n)
{
    /* Rejection of the short top range keeps every value equally likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= limit);
    return x % n;
}

void rng_shuffle(rng *r, int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below64(r, (uint64_t)i + 1);
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

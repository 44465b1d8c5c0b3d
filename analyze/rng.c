/* rng.c - seeding of the bootstrap streams (see rng.h). */
#include "rng.h"

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

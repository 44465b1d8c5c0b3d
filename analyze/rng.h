/* rng.h - the bootstrap's pseudo-random numbers: xoshiro256** seeded through
 * splitmix64.  Each stream is keyed by (run seed, set index, problem index
 * or bootstrap resample index, purpose), so that a result never depends on the order in which pairs are
 * processed or on how work is split between threads. */
#ifndef KBV_RNG_H
#define KBV_RNG_H

#include <stdint.h>

typedef struct rng {
    uint64_t s[4];
} rng;

/* What a stream is for; part of the key.  The numbers stay as they were
 * when a purpose is retired, so that the others keep their streams. */
enum {
    RNG_P_RATIO = 2,     /* per-problem draws of the median of the paired ratios; the same
                            stream for both baselines (see analysis.c) */
    RNG_G_PICKS = 21     /* the problem picks of a set's bootstrap resample (key: set, resample, purpose) */
};

/* The problem index used for set-level streams (levels.c). */
#define RNG_NO_PROBLEM UINT64_MAX

/* splitmix64 step: advances *state and returns the next output. */
uint64_t rng_splitmix64(uint64_t *state);

/* Seeds r from the key. */
void rng_init(rng *r, uint64_t seed, uint64_t set, uint64_t problem, uint64_t purpose);

static inline uint64_t rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** (Blackman and Vigna). */
static inline uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rng_rotl(s[3], 45);
    return out;
}

/* Uniform on [0, 1) with 53 random bits. */
static inline double rng_u01(rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n >= 1 and < 2^32 (Lemire's multiply-shift; the
 * bias, below n / 2^32, is far under the Monte Carlo error). */
static inline uint32_t rng_below(rng *r, uint32_t n)
{
    return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

#endif

/* rng.h - the one pseudo-random generator of kbv: xoshiro256** (Blackman
 * and Vigna) seeded through splitmix64.
 *
 * analyze keys its bootstrap streams by (run seed, set, problem, purpose)
 * with rng_init, so that a result never depends on the order in which pairs
 * are processed or on how work is split between threads; collect seeds from
 * one word with rng_seed (shuffled timing rounds, derived seeds).  Input
 * values are not drawn here: they come from cuRAND's Philox on the GPU.
 *
 * Ownership: the state lives in the caller's struct; nothing is allocated.
 * The functions are pure apart from advancing that state, so any number of
 * threads may use their own generators at once. */
#ifndef KBV_RNG_H
#define KBV_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rng {
    uint64_t s[4];
} rng;

/* The key part rng_init takes for a stream that belongs to no problem. */
#define RNG_NO_PROBLEM UINT64_MAX

/* FNV-1a over a string, continuing from h (start with RNG_FNV_INIT): how
 * collect derives a seed from a problem id. */
#define RNG_FNV_INIT 0xcbf29ce484222325ull
uint64_t rng_hash_str(uint64_t h, const char *s);

/* splitmix64 step: advances *state and returns the next output. */
uint64_t rng_splitmix64(uint64_t *state);

/* The splitmix64 output for state x (a bijective mix of one word). */
static inline uint64_t rng_mix(uint64_t x) { return rng_splitmix64(&x); }

/* Seeds r from a four-part key (analyze's bootstrap streams). */
void rng_init(rng *r, uint64_t seed, uint64_t set, uint64_t problem, uint64_t purpose);

/* Seeds r from one word (collect's shuffles); never the all-zero state. */
void rng_seed(rng *r, uint64_t seed);

static inline uint64_t rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256**: the next 64 random bits.  Inline because the bootstrap
 * draws hundreds of millions of them. */
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
 * bias, below n / 2^32, is far under the bootstrap's Monte Carlo error). */
static inline uint32_t rng_below(rng *r, uint32_t n)
{
    return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform integer in [0, n), n > 0, exactly unbiased (rejection), for
 * choices an adversary could exploit (collect's secret timing order). */
uint64_t rng_below64(rng *r, uint64_t n);

/* Fisher-Yates shuffle of a[0..n) with rng_below64. */
void rng_shuffle(rng *r, int *a, int n);

#ifdef __cplusplus
}
#endif

#endif

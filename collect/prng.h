/* prng.h - a small seeded generator for the collect stage (shuffled timing
 * rounds, derived seeds).  Not for input values: those come from cuRAND's
 * Philox on the GPU (gen.cu).  The state lives in the caller's struct. */
#ifndef KBV_PRNG_H
#define KBV_PRNG_H

#include <stdint.h>

typedef struct { uint64_t s[4]; } prng;

/* FNV-1a over a string, continuing from h (start with PRNG_FNV_INIT). */
#define PRNG_FNV_INIT 0xcbf29ce484222325ull
uint64_t prng_hash_str(uint64_t h, const char *s);
/* The splitmix64 finaliser: a bijective mix of one word. */
uint64_t prng_mix(uint64_t x);

void prng_seed(prng *r, uint64_t seed);
uint64_t prng_next(prng *r);                 /* xoshiro256** */
uint64_t prng_below(prng *r, uint64_t n);    /* uniform in [0, n), n > 0, unbiased */
void prng_shuffle(prng *r, int *a, int n);   /* Fisher-Yates */

#endif

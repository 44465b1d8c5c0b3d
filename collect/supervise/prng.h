/* prng.h - the names collect's worker uses for the generator, forwarded to
 * the one implementation in common/rng.h (nothing here computes).  New code
 * uses rng.h directly; this header goes once the worker is switched over. */
#ifndef KBV_PRNG_H
#define KBV_PRNG_H

#include <stdint.h>
#include "rng.h"

typedef rng prng;

#define PRNG_FNV_INIT RNG_FNV_INIT
static inline uint64_t prng_hash_str(uint64_t h, const char *s) { return rng_hash_str(h, s); }
static inline uint64_t prng_mix(uint64_t x) { return rng_mix(x); }
static inline void prng_seed(prng *r, uint64_t seed) { rng_seed(r, seed); }
static inline uint64_t prng_next(prng *r) { return rng_next(r); }
static inline uint64_t prng_below(prng *r, uint64_t n) { return rng_below64(r, n); }
static inline void prng_shuffle(prng *r, int *a, int n) { rng_shuffle(r, a, n); }

#endif

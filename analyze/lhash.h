/* lhash.h - a 96-bit hash of a journal line, by which analyze finds a line
 * that repeats an earlier one byte for byte (a copied record would count
 * its samples twice).  Not cryptographic: a journal's writer is trusted to
 * be collect, and a tampering writer is caught by the journal grammar and
 * SHA256SUMS; 96 bits make an accidental collision among a few million
 * lines negligible.  A pure function of the bytes. */
#ifndef KBV_LHASH_H
#define KBV_LHASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct lhash {
    uint64_t a;
    uint32_t b;
} lhash;

/* The hash of p[0..n). */
lhash lhash_line(const char *p, size_t n);

#endif

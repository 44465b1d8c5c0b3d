/* sbuf.h - a growable byte buffer (text or binary), the one used by every
 * stage that builds output in memory (prompts, CSV and LaTeX tables,
 * template expansion, PNG and SVG encoding).
 *
 * Ownership: the caller owns the sbuf struct (usually on its stack, zero
 * initialised: `sbuf b = {0};`) and, through it, the storage b.s.  sb_free
 * releases the storage; sb_take hands it to the caller instead.
 *
 * On an allocation failure the buffer sets `failed` and ignores every later
 * append, so that a caller checks once, at the end, instead of after every
 * call.  The contents are always followed by a NUL byte (not counted in len)
 * once anything was appended, so that text can be used as a C string. */
#ifndef KBV_SBUF_H
#define KBV_SBUF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sbuf {
    char *s;        /* owned; NULL until the first append */
    size_t len;     /* bytes used, without the trailing NUL */
    size_t cap;     /* bytes allocated */
    int failed;     /* an append failed for lack of memory */
} sbuf;

/* Appends n bytes of s (which may hold NUL bytes). */
void sb_add(sbuf *b, const char *s, size_t n);
/* Appends the C string s. */
void sb_puts(sbuf *b, const char *s);
/* Appends printf-formatted text. */
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Makes room for at least n more bytes; 0, or -1 (and failed) without
 * memory.  Only a hint: appends grow the buffer themselves. */
int sb_reserve(sbuf *b, size_t n);
/* Releases the storage and zeroes b. */
void sb_free(sbuf *b);
/* Hands the storage to the caller (who frees it) and zeroes b; an empty
 * buffer gives an allocated "" so that the result is never NULL.  NULL (and
 * the storage freed) when the buffer failed or memory ran out; *len, when
 * len is not NULL, is the length. */
char *sb_take(sbuf *b, size_t *len);

#ifdef __cplusplus
}
#endif

#endif

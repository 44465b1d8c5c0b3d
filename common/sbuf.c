/* sbuf.c - the growable byte buffer (see sbuf.h). */
#include "sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sb_reserve(sbuf *b, size_t n)
{
    if (b->failed)
        return -1;
    if (b->len + n + 1 <= b->cap)
        return 0;
    /* Doubling keeps appends amortised constant; 256 bytes is a line or two,
     * so short texts take one allocation. */
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) {
        if (cap > (size_t)-1 / 2) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char *g = realloc(b->s, cap);
    if (!g) {
        b->failed = 1;
        return -1;
    }
    b->s = g;
    b->cap = cap;
    return 0;
}

void sb_add(sbuf *b, const char *s, size_t n)
{
    if (sb_reserve(b, n) != 0)
        return;
    if (n)
        memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void sb_puts(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

void sb_printf(sbuf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        sb_add(b, small, (size_t)n);
        return;
    }
    /* Long text is formatted straight into the buffer, after making room. */
    if (sb_reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sb_free(sbuf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

char *sb_take(sbuf *b, size_t *len)
{
    if (!b->failed && !b->s)
        sb_reserve(b, 0);
    if (b->failed) {
        sb_free(b);
        if (len)
            *len = 0;
        return NULL;
    }
    b->s[b->len] = 0;
    char *s = b->s;
    if (len)
        *len = b->len;
    memset(b, 0, sizeof *b);
    return s;
}

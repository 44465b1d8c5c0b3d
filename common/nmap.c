/* nmap.c - see nmap.h. */
#include "nmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct nmap {
    const char *const *names;   /* borrowed */
    uint32_t *slot;             /* owned; index + 1, 0 for a free slot */
    size_t mask;
};

static uint64_t hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    return h;
}

int nmap_build(const char *const *names, size_t n, nmap **out, kbv_err *e)
{
    nmap *m = calloc(1, sizeof *m);
    size_t size = 16;
    while (size < 2 * n) size *= 2;
    if (n >= UINT32_MAX || !m || !(m->slot = calloc(size, sizeof *m->slot))) {
        free(m);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    m->names = names;
    m->mask = size - 1;
    for (size_t i = 0; i < n; i++) {
        if (!names[i]) continue;
        size_t len = strlen(names[i]);
        size_t h = (size_t)hash(names[i], len) & m->mask;
        int dup = 0;
        while (m->slot[h] && !dup) {
            dup = strcmp(names[m->slot[h] - 1], names[i]) == 0;
            h = (h + 1) & m->mask;
        }
        if (!dup) m->slot[h] = (uint32_t)(i + 1);
    }
    *out = m;
    return 0;
}

void nmap_free(nmap *m)
{
    if (!m) return;
    free(m->slot);
    free(m);
}

long nmap_find_n(const nmap *m, const char *p, size_t len)
{
    size_t h = (size_t)hash(p, len) & m->mask;
    while (m->slot[h]) {
        const char *s = m->names[m->slot[h] - 1];
        if (strncmp(s, p, len) == 0 && s[len] == '\0') return (long)m->slot[h] - 1;
        h = (h + 1) & m->mask;
    }
    return -1;
}

long nmap_find(const nmap *m, const char *name)
{
    return nmap_find_n(m, name, strlen(name));
}

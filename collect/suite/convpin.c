/* convpin.c - see convpin.h. */
#include "convpin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The geometry part of a pin ("transposed,nd,n,...") into buf. */
static int geom_text(char *buf, size_t len, const conv_geom *g)
{
    int n = snprintf(buf, len, "%d,%d,%lld,%lld,%lld,%lld", g->transposed, g->nd, g->n, g->cin, g->cout,
                     g->groups);
    for (int i = 0; i < g->nd && n >= 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, ",%lld,%lld,%d,%d,%d,%d", g->in[i], g->out[i], g->k[i], g->s[i],
                      g->p[i], g->d[i]);
    return n >= 0 && (size_t)n < len ? n : -1;
}

static int role_ok(char role)
{
    return role == 'f' || role == 't' || role == 'r' || role == 'b';
}

int convpin_format(char *buf, size_t len, char role, const conv_geom *g, const convpin_choice *c)
{
    char key[512];
    int n = -1;
    if (len > 0) buf[0] = 0;
    if (!role_ok(role) || geom_text(key, sizeof key, g) < 0) return -1;
    switch (c->kind) {
    case CONVPIN_LEGACY:
        n = snprintf(buf, len, "conv.%c:%s=a%dm%d", role, key, c->algo, c->math);
        break;
    case CONVPIN_GRAPH:
        n = snprintf(buf, len, "conv.%c:%s=g%de%lld/a%dm%d", role, key, c->plan, c->engine, c->algo, c->math);
        break;
    case CONVPIN_DIRECT:
        n = snprintf(buf, len, "conv.%c:%s=d", role, key);
        break;
    }
    if (n < 0 || (size_t)n >= len) {
        if (len > 0) buf[0] = 0;
        return -1;
    }
    return n;
}

/* A non-negative decimal at *s, advancing it; -1 when there is none. */
static long long number(const char **s, const char *end)
{
    const char *p = *s;
    long long v = 0;
    if (p >= end || *p < '0' || *p > '9') return -1;
    while (p < end && *p >= '0' && *p <= '9') {
        if (v > 1000000000000LL) return -1;
        v = v * 10 + (*p++ - '0');
    }
    *s = p;
    return v;
}

/* "a<algo>m<math>" exactly filling [s, end) into c. */
static int legacy_part(const char *s, const char *end, convpin_choice *c)
{
    long long a, m;
    if (s >= end || *s++ != 'a' || (a = number(&s, end)) < 0) return -1;
    if (s >= end || *s++ != 'm' || (m = number(&s, end)) < 0 || s != end) return -1;
    if (a > 1000 || m > 1000) return -1;
    c->algo = (int)a;
    c->math = (int)m;
    return 0;
}

static int parse_choice(const char *s, const char *end, convpin_choice *c)
{
    memset(c, 0, sizeof *c);
    if (end - s == 1 && *s == 'd') {
        c->kind = CONVPIN_DIRECT;
        return 0;
    }
    if (s < end && *s == 'g') {
        const char *slash = memchr(s, '/', (size_t)(end - s));
        long long plan, engine;
        s++;
        if (!slash || (plan = number(&s, slash)) < 0 || plan > 1000) return -1;
        if (s >= slash || *s++ != 'e' || (engine = number(&s, slash)) < 0 || s != slash) return -1;
        c->kind = CONVPIN_GRAPH;
        c->plan = (int)plan;
        c->engine = engine;
        return legacy_part(slash + 1, end, c);
    }
    c->kind = CONVPIN_LEGACY;
    return legacy_part(s, end, c);
}

int convpin_find(const char *text, char role, const conv_geom *g, convpin_choice *c)
{
    char head[600];
    if (!text || !role_ok(role)) return 0;
    int hn = snprintf(head, sizeof head, "conv.%c:", role);
    if (geom_text(head + hn, sizeof head - (size_t)hn, g) < 0) return 0;
    size_t hlen = strlen(head);
    for (const char *s = text; *s;) {
        const char *end = strchr(s, ';');
        if (!end) end = s + strlen(s);
        if ((size_t)(end - s) > hlen && memcmp(s, head, hlen) == 0 && s[hlen] == '=')
            return parse_choice(s + hlen + 1, end, c) == 0 ? 1 : -1;
        s = *end ? end + 1 : end;
    }
    return 0;
}

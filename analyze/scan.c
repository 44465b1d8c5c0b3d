/* scan.c - see scan.h. */
#include "scan.h"
#include "schema.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int scan_is(scan_str s, const char *lit)
{
    size_t n = strlen(lit);
    return s.p && s.len == n && memcmp(s.p, lit, n) == 0;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* Reads a string starting at the opening quote; *escaped says whether it
 * holds an escape (its bytes are then not its value).  Returns the position
 * after the closing quote, or NULL when it is not a valid JSON string. */
static const char *read_string(const char *p, const char *end, scan_str *out, int *escaped)
{
    const char *start = ++p;
    *escaped = 0;
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            out->p = start;
            out->len = (size_t)(p - start);
            return p + 1;
        }
        if (c < 0x20) return NULL;
        if (c == '\\') {
            *escaped = 1;
            if (++p >= end) return NULL;
            switch (*p) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                p++;
                break;
            case 'u':
                /* cJSON refuses some \u escapes (lone surrogates); leaving
                 * every one to it keeps the two readers in agreement. */
                return NULL;
            default:
                return NULL;
            }
            continue;
        }
        p++;
    }
    return NULL;
}

static const double pow10_exact[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Reads a JSON number; *val gets its value, correctly rounded: when the
 * decimal mantissa fits in 53 bits and the power of ten is at most 22, one
 * multiplication or division of two exact doubles rounds once (Clinger's fast
 * path); otherwise strtod.  Returns the position after it, or NULL. */
static const char *read_number(const char *p, const char *end, double *val)
{
    const char *start = p;
    int neg = 0;
    uint64_t mant = 0;
    int digits = 0, exp10 = 0;
    if (p < end && *p == '-') { neg = 1; p++; }
    if (p >= end) return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') {
            if (digits < 19) { mant = mant * 10 + (uint64_t)(*p - '0'); if (mant) digits++; }
            else exp10++;
            p++;
        }
    } else {
        return NULL;
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') {
            if (digits < 19) { mant = mant * 10 + (uint64_t)(*p - '0'); if (mant) digits++; exp10--; }
            p++;
        }
    }
    int slow = digits >= 19;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, e = 0;
        if (p < end && (*p == '+' || *p == '-')) { eneg = *p == '-'; p++; }
        if (p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') {
            if (e < 100000) e = e * 10 + (*p - '0');
            p++;
        }
        exp10 += eneg ? -e : e;
    }
    if (!slow && mant < (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        double v = (double)mant;
        v = exp10 < 0 ? v / pow10_exact[-exp10] : v * pow10_exact[exp10];
        *val = neg ? -v : v;
        return p;
    }
    /* The number is followed by a delimiter, so strtod stops where the
     * grammar check did. */
    char buf[64];
    size_t n = (size_t)(p - start);
    if (n >= sizeof buf) {
        char *tmp = malloc(n + 1);
        if (!tmp) return NULL;
        memcpy(tmp, start, n);
        tmp[n] = '\0';
        *val = strtod(tmp, NULL);
        free(tmp);
    } else {
        memcpy(buf, start, n);
        buf[n] = '\0';
        *val = strtod(buf, NULL);
    }
    return p;
}

enum {
    K_TYPE = 1, K_SET = 2, K_PROBLEM = 4, K_VARIANT = 8, K_GPU = 16, K_WALL = 32, K_MHZ = 64,
    K_ROUND = 128, K_SAME_AS = 256, K_GT = 512
};

/* The member a key names, by length first: one comparison for most keys. */
static unsigned key_bit(const char *p, size_t n)
{
    switch (n) {
    case 3: return memcmp(p, KBV_K_SET, 3) == 0 ? K_SET : 0;
    case 5:
        if (memcmp(p, KBV_K_ROUND, 5) == 0) return K_ROUND;
        if (memcmp(p, "gt_ms", 5) == 0) return K_GT;
        return 0;
    case 4: return memcmp(p, KBV_K_TYPE, 4) == 0 ? K_TYPE : 0;
    case 6:
        if (memcmp(p, KBV_K_GPU_MS, 6) == 0) return K_GPU;
        if (memcmp(p, "sm_mhz", 6) == 0) return K_MHZ;
        return 0;
    case 7:
        if (memcmp(p, KBV_K_PROBLEM, 7) == 0) return K_PROBLEM;
        if (memcmp(p, KBV_K_VARIANT, 7) == 0) return K_VARIANT;
        if (memcmp(p, KBV_K_WALL_MS, 7) == 0) return K_WALL;
        if (memcmp(p, "same_as", 7) == 0) return K_SAME_AS;
        return 0;
    default: return 0;
    }
}

int scan_flat(const char *line, size_t len, scan_rec *out)
{
    const char *p = line, *end = line + len;
    memset(out, 0, sizeof *out);
    unsigned seen = 0;

    p = skip_ws(p, end);
    if (p >= end || *p != '{') return 0;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') {
        p = skip_ws(p + 1, end);
        return p == end;
    }
    for (;;) {
        scan_str key, sval = {0};
        int kesc, vesc = 0;
        if (p >= end || *p != '"') return 0;
        if (!(p = read_string(p, end, &key, &kesc))) return 0;
        p = skip_ws(p, end);
        if (p >= end || *p != ':') return 0;
        p = skip_ws(p + 1, end);
        if (p >= end) return 0;

        int kind;
        double num = 0;
        char c = *p;
        if (c == '"') {
            if (!(p = read_string(p, end, &sval, &vesc))) return 0;
            kind = SCAN_OTHER;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (!(p = read_number(p, end, &num))) return 0;
            kind = SCAN_NUMBER;
        } else if (end - p >= 4 && memcmp(p, "null", 4) == 0) {
            p += 4;
            kind = SCAN_NULL;
        } else if (end - p >= 4 && memcmp(p, "true", 4) == 0) {
            p += 4;
            kind = SCAN_OTHER;
        } else if (end - p >= 5 && memcmp(p, "false", 5) == 0) {
            p += 5;
            kind = SCAN_OTHER;
        } else {
            return 0;  /* nested value or not JSON: the general parser decides */
        }

        if (!kesc) {
            unsigned bit = key_bit(key.p, key.len);
            scan_str *dst = bit == K_TYPE ? &out->type : bit == K_SET ? &out->set
                          : bit == K_PROBLEM ? &out->problem : bit == K_VARIANT ? &out->variant : NULL;
            if (!bit || (seen & bit)) out->odd_keys++;
            if (bit && !(seen & bit)) {
                seen |= bit;
                if (dst) {
                    /* A kept string with an escape, or a kept member that is
                     * not a string, goes to the general parser. */
                    if (c != '"' || vesc) return 0;
                    *dst = sval;
                } else if (bit == K_GPU) {
                    out->gpu_kind = kind;
                    out->gpu_ms = num;
                } else if (bit == K_MHZ) {
                    out->mhz_kind = kind;
                    out->sm_mhz = num;
                } else if (bit == K_ROUND) {
                    out->round_kind = kind;
                    out->round = num;
                } else if (bit == K_SAME_AS || bit == K_GT) {
                    /* kept by no one; allowed by the grammar */
                } else {
                    out->wall_kind = kind;
                    out->wall_ms = num;
                }
            }
        } else {
            /* An escaped key might spell one of ours. */
            return 0;
        }

        p = skip_ws(p, end);
        if (p >= end) return 0;
        if (*p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        if (*p != '}') return 0;
        p = skip_ws(p + 1, end);
        return p == end;
    }
}

/* fuzz_edit.h - structure-aware mutations for the JSON readers.
 *
 * Random bytes rarely get past a JSON parser, so the harnesses also take
 * inputs that edit a real file instead: the bytes, one JSON node at a time,
 * keep a number or put an edge value in its place (0, -1, null as a
 * non-finite value is written, 1e308, a denormal, 2^31, 9.3e18, a raw
 * double), keep a string or put an odd one there, drop a key, and cut an
 * array short.  A byte below 160 keeps its node, so mutations stay local.
 */
#ifndef KBV_FUZZ_EDIT_H
#define KBV_FUZZ_EDIT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

typedef struct {
    const uint8_t *p;
    size_t n;
} fuzz_bytes;

static inline unsigned fuzz_take(fuzz_bytes *b)
{
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}

static const char *const fuzz_odd_strings[] = {
    "", "correct", "hidden-fail", "identity", "error", "incorrect", "tf32", "fp32", "candidate", "{{run_id}}",
    "}}", "\xff\xfe", "a very long name that goes on and on and on and on and on and on and on and on and on",
    "0", "null", "%s%n", "&<>\"'\\_^#$", "L1_019_relu", "tuned", "hacky", "time", "status", "check", "probe",
    "memory", "build", "static", "D1", "D5", "kbv-run/1", "kbv-analysis/1", "half", "none", "ok", "crash"};

static inline void fuzz_edit(cJSON *v, fuzz_bytes *b)
{
    if (!b->n) return;
    if (cJSON_IsNumber(v)) {
        unsigned c = fuzz_take(b);
        if (c < 160) return;
        static const double edge[] = {0, -1, 1, 1e308, -1e308, 4.9e-324, 1e-300, 0.5, 1e9, 2147483648.0,
                                      -2147483649.0, 9.3e18, 1.8446744073709552e19, 1e-3};
        double x;
        if (c < 160 + sizeof edge / sizeof *edge) {
            x = edge[c - 160];
        } else if (c < 200) {
            v->type = cJSON_NULL;   /* a non-finite value, as written */
            return;
        } else {
            uint64_t u = 0;
            for (int i = 0; i < 8; i++) u = u << 8 | fuzz_take(b);
            memcpy(&x, &u, sizeof x);
            if (!isfinite(x)) x = 1e300;   /* JSON has no such number */
        }
        cJSON_SetNumberValue(v, x);
        return;
    }
    if (cJSON_IsString(v)) {
        unsigned c = fuzz_take(b);
        if (c < 160) return;
        if (c >= 250) {   /* another type in a string's place */
            v->type = c == 250 ? cJSON_True : cJSON_NULL;
            return;
        }
        cJSON_SetValuestring(v, fuzz_odd_strings[c % (sizeof fuzz_odd_strings / sizeof *fuzz_odd_strings)]);
        return;
    }
    if (cJSON_IsArray(v)) {
        unsigned c = fuzz_take(b);
        if (c >= 240) {
            int keep = (int)(c - 240);
            while (cJSON_GetArraySize(v) > keep) cJSON_DeleteItemFromArray(v, cJSON_GetArraySize(v) - 1);
        }
    }
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        cJSON *it = v->child;
        while (it && b->n) {
            cJSON *next = it->next;
            if (cJSON_IsObject(v) && fuzz_take(b) == 255)
                cJSON_Delete(cJSON_DetachItemViaPointer(v, it));   /* a missing key */
            else
                fuzz_edit(it, b);
            it = next;
        }
    }
}

/* A repository file, read once (the harnesses run from the repository
 * root); NULL when it is not there. */
static inline char *fuzz_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *g = realloc(buf, cap);
            if (!g) abort();
            buf = g;
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got < 4096) break;
    }
    fclose(f);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* Edits one JSON document (text) with the bytes; returns a malloc'd text
 * the caller frees, or NULL when text does not parse. */
static inline char *fuzz_edit_doc(const char *text, fuzz_bytes *b)
{
    cJSON *j = cJSON_Parse(text);
    if (!j) return NULL;
    fuzz_edit(j, b);
    char *out = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!out) abort();
    return out;
}

/* Edits a journal (one JSON object a line), line by line, while bytes
 * last; returns a malloc'd journal, *len set. */
static inline char *fuzz_edit_lines(const char *text, fuzz_bytes *b, size_t *len)
{
    size_t cap = strlen(text) * 2 + 1024, n = 0;
    char *out = malloc(cap);
    if (!out) abort();
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        char *line = strndup(p, l);
        if (!line) abort();
        char *ed = b->n ? fuzz_edit_doc(line, b) : NULL;
        const char *put = ed ? ed : line;
        size_t pl = strlen(put);
        if (n + pl + 2 > cap) {
            cap = 2 * (n + pl + 2);
            char *g = realloc(out, cap);
            if (!g) abort();
            out = g;
        }
        memcpy(out + n, put, pl);
        n += pl;
        out[n++] = '\n';
        free(ed);
        free(line);
        p = nl ? nl + 1 : p + l;
    }
    out[n] = 0;
    *len = n;
    return out;
}

#endif

#include "jio.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"

/* Turns the position where cJSON stopped into "line L, column C". */
static void locate(const char *text, const char *stop, long *line, long *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < stop && *p; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

int jio_parse(const char *text, size_t len, const char *what, cJSON **out, kbv_err *e)
{
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!v) {
        long line, col;
        locate(text, end ? end : text + len, &line, &col);
        return err_set(e, KBV_EINPUT, "%s: malformed JSON at line %ld, column %ld", what, line, col);
    }
    /* Anything but whitespace after the value is an error too. */
    for (const char *p = end; p && p < text + len; p++) {
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
            long line, col;
            locate(text, p, &line, &col);
            cJSON_Delete(v);
            return err_set(e, KBV_EINPUT, "%s: unexpected text after the JSON value at line %ld, column %ld",
                           what, line, col);
        }
    }
    *out = v;
    return 0;
}

int jio_load(const char *path, cJSON **out, kbv_err *e)
{
    char *text = NULL;
    size_t len = 0;
    int rc = afile_read_all(path, &text, &len, e);
    if (rc) return rc;
    rc = jio_parse(text, len, path, out, e);
    free(text);
    return rc;
}

int jio_save(const char *path, const cJSON *v, kbv_err *e)
{
    char *s = cJSON_Print(v);
    if (!s) return err_set(e, KBV_ENOMEM, "%s: cannot serialise JSON", path);
    size_t n = strlen(s);
    char *buf = malloc(n + 2);
    if (!buf) {
        free(s);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    memcpy(buf, s, n);
    buf[n] = '\n';
    free(s);
    int rc = afile_write_all(path, buf, n + 1, e);
    free(buf);
    return rc;
}

char *jio_line(const cJSON *v) { return cJSON_PrintUnformatted(v); }

static int get(const cJSON *obj, const char *key, const char *what, const cJSON **item, kbv_err *e)
{
    *item = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (!*item) return err_set(e, KBV_EINPUT, "%s: missing \"%s\"", what, key);
    return 0;
}

int jio_get_str(const cJSON *obj, const char *key, const char *what, const char **out, kbv_err *e)
{
    const cJSON *it;
    int rc = get(obj, key, what, &it, e);
    if (rc) return rc;
    if (!cJSON_IsString(it)) return err_set(e, KBV_EINPUT, "%s: \"%s\" must be a string", what, key);
    *out = it->valuestring;
    return 0;
}

int jio_get_num(const cJSON *obj, const char *key, const char *what, double *out, kbv_err *e)
{
    const cJSON *it;
    int rc = get(obj, key, what, &it, e);
    if (rc) return rc;
    if (!cJSON_IsNumber(it)) return err_set(e, KBV_EINPUT, "%s: \"%s\" must be a number", what, key);
    *out = it->valuedouble;
    return 0;
}

int jio_get_int(const cJSON *obj, const char *key, const char *what, long long *out, kbv_err *e)
{
    double d;
    int rc = jio_get_num(obj, key, what, &d, e);
    if (rc) return rc;
    if (d != floor(d) || fabs(d) > 9007199254740992.0)
        return err_set(e, KBV_EINPUT, "%s: \"%s\" must be an integer", what, key);
    *out = (long long)d;
    return 0;
}

int jio_get_bool(const cJSON *obj, const char *key, const char *what, int *out, kbv_err *e)
{
    const cJSON *it;
    int rc = get(obj, key, what, &it, e);
    if (rc) return rc;
    if (!cJSON_IsBool(it)) return err_set(e, KBV_EINPUT, "%s: \"%s\" must be true or false", what, key);
    *out = cJSON_IsTrue(it);
    return 0;
}

int jio_get_arr(const cJSON *obj, const char *key, const char *what, const cJSON **out, kbv_err *e)
{
    int rc = get(obj, key, what, out, e);
    if (rc) return rc;
    if (!cJSON_IsArray(*out)) return err_set(e, KBV_EINPUT, "%s: \"%s\" must be an array", what, key);
    return 0;
}

int jio_get_obj(const cJSON *obj, const char *key, const char *what, const cJSON **out, kbv_err *e)
{
    int rc = get(obj, key, what, out, e);
    if (rc) return rc;
    if (!cJSON_IsObject(*out)) return err_set(e, KBV_EINPUT, "%s: \"%s\" must be an object", what, key);
    return 0;
}

cJSON *jio_add_num(cJSON *obj, const char *key, double v)
{
    if (!isfinite(v)) return cJSON_AddNullToObject(obj, key);
    return cJSON_AddNumberToObject(obj, key, v);
}

/* The length of the valid UTF-8 sequence at p[0..n), or 0 when none starts
 * there (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF). */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c == 0xe0) { len = 3; lo = 0xa0; }
    else if (c == 0xed) { len = 3; hi = 0x9f; }
    else if (c >= 0xe1 && c <= 0xef) len = 3;
    else if (c == 0xf0) { len = 4; lo = 0x90; }
    else if (c == 0xf4) { len = 4; hi = 0x8f; }
    else if (c >= 0xf1 && c <= 0xf3) len = 4;
    else return 0;
    if (n < len) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xbf) return 0;
    return len;
}

/* A fixed copy of s when it needs one: *out NULL when s is valid. */
static int utf8_fixed_copy(const char *s, char **out, size_t *n_fixed)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), bad = 0;
    *out = NULL;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(u + i, n - i);
        if (!k) { bad++; i++; }
        else i += k;
    }
    if (!bad) return 0;
    char *d = malloc(n + 2 * bad + 1);  /* each bad byte grows to three */
    if (!d) return KBV_ENOMEM;
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(u + i, n - i);
        if (!k) {
            memcpy(d + j, "\xef\xbf\xbd", 3);
            j += 3;
            i++;
        } else {
            memcpy(d + j, s + i, k);
            j += k;
            i += k;
        }
    }
    d[j] = '\0';
    *out = d;
    *n_fixed += bad;
    return 0;
}

/* Fixes one node's key and string, then its children; the depth is bounded
 * by cJSON's own nesting limit for parsed trees and by the code that built
 * any other. */
static int fix_node(cJSON *it, size_t *fixed)
{
    char *copy;
    if (it->string && !(it->type & cJSON_StringIsConst)) {
        if (utf8_fixed_copy(it->string, &copy, fixed)) return KBV_ENOMEM;
        if (copy) {
            free(it->string);
            it->string = copy;
        }
    }
    if (cJSON_IsString(it) && it->valuestring && !(it->type & cJSON_IsReference)) {
        if (utf8_fixed_copy(it->valuestring, &copy, fixed)) return KBV_ENOMEM;
        if (copy) {
            free(it->valuestring);
            it->valuestring = copy;
        }
    }
    for (cJSON *c = it->child; c; c = c->next)
        if (fix_node(c, fixed)) return KBV_ENOMEM;
    return 0;
}

int jio_utf8_fix(cJSON *v, size_t *n_fixed, kbv_err *e)
{
    size_t fixed = 0;
    int rc = v ? fix_node(v, &fixed) : 0;
    if (n_fixed) *n_fixed = fixed;
    return rc ? err_set(e, KBV_ENOMEM, "out of memory") : 0;
}

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

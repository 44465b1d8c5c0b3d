#include "rec.h"
#include "schema.h"

#include <string.h>

#include "jio.h"
#include "verdict.h"

static int is_one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0) return 1;
    return 0;
}

int rec_status_known(const char *s)
{
    static const char *const st[] = {"ok", "compile-error", "crash", "timeout", "launch-error",
                                     "missing", NULL};
    return s && is_one_of(s, st);
}

int rec_probe_known(const char *s)
{
    static const char *const pr[] = {"input-independence", "identity", "caching",
                                     "input-mutation", "determinism", "deferred-work",
                                     "physical-floor", "timed-output", "timed-inputs", "clock-agreement",
                                     "environment", NULL};
    return s && is_one_of(s, pr);
}

static int need(const cJSON *o, const char *key, int (*is)(const cJSON *), const char *type,
                kbv_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || !is(v))
        return err_set(e, KBV_EINPUT, "a %s record without a valid \"%s\"", type, key);
    return 0;
}

static int is_str(const cJSON *v) { return cJSON_IsString(v) != 0; }
static int is_bool(const cJSON *v) { return cJSON_IsBool(v) != 0; }
/* A number, or null (a non-finite value written by cJSON). */
static int is_num(const cJSON *v) { return cJSON_IsNumber(v) || cJSON_IsNull(v); }

static int valid(const cJSON *o, const char *type, kbv_err *e)
{
    static const char *const variants[] = {KBV_VAR_CANDIDATE, KBV_VAR_FP32, KBV_VAR_TF32, KBV_VAR_BF16, NULL};
    int rc = 0;
    if (strcmp(type, KBV_REC_CHECK) == 0) {
        if (!rc) rc = need(o, "dist", is_str, type, e);
        if (!rc) rc = need(o, "trial", is_num, type, e);
        if (!rc) rc = need(o, "pass", is_bool, type, e);
    } else if (strcmp(type, KBV_REC_PROBE) == 0) {
        if (!rc) rc = need(o, KBV_K_PROBE, is_str, type, e);
        if (!rc) rc = need(o, "pass", is_bool, type, e);
        if (!rc && !rec_probe_known(cJSON_GetObjectItemCaseSensitive(o, KBV_K_PROBE)->valuestring))
            rc = err_set(e, KBV_EINPUT, "a probe record with an unknown probe name");
    } else if (strcmp(type, KBV_REC_TIME) == 0 || strcmp(type, KBV_REC_MEMORY) == 0) {
        if (!rc) rc = need(o, KBV_K_VARIANT, is_str, type, e);
        if (!rc && !is_one_of(cJSON_GetObjectItemCaseSensitive(o, KBV_K_VARIANT)->valuestring, variants))
            rc = err_set(e, KBV_EINPUT, "a %s record with an unknown variant", type);
        if (!rc && type[0] == 't') rc = need(o, KBV_K_GPU_MS, is_num, type, e);
        if (!rc && type[0] == 't') rc = need(o, KBV_K_ROUND, is_num, type, e);
        if (!rc && type[0] == 'm') rc = need(o, "peak_bytes", is_num, type, e);
    } else if (strcmp(type, KBV_REC_BASELINE) == 0) {
        /* which kernel a baseline chose by timing (fp32, tf32 or bf16: not the candidate) */
        if (!rc) rc = need(o, KBV_K_VARIANT, is_str, type, e);
        if (!rc && !is_one_of(cJSON_GetObjectItemCaseSensitive(o, KBV_K_VARIANT)->valuestring, variants + 1))
            rc = err_set(e, KBV_EINPUT, "a baseline record with an unknown variant");
        if (!rc) rc = need(o, "choice", is_str, type, e);
    } else if (strcmp(type, KBV_REC_STATUS) == 0) {
        if (!rc) rc = need(o, KBV_K_STATUS, is_str, type, e);
        if (!rc && !rec_status_known(cJSON_GetObjectItemCaseSensitive(o, KBV_K_STATUS)->valuestring))
            rc = err_set(e, KBV_EINPUT, "a status record with an unknown status");
    } else {
        rc = err_set(e, KBV_EINPUT, "unknown record type '%.40s'", type);
    }
    /* The set and the problem are the collecting process's to say; which
     * other keys a type may carry is the journal grammar's (jgram.h). */
    if (!rc && (cJSON_GetObjectItemCaseSensitive(o, KBV_K_SET) || cJSON_GetObjectItemCaseSensitive(o, KBV_K_PROBLEM)))
        rc = err_set(e, KBV_EINPUT, "a %s record that names its own set or problem", type);
    return rc;
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when the bytes
 * there are not one (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF). */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int n;
    unsigned lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return n;
}

void rec_utf8_clean(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        int n = utf8_len(p);
        if (n == 0) {
            *p++ = '?';
        } else {
            p += n;
        }
    }
}

/* Every key and string of a record made valid UTF-8 in place: candidates
 * put bytes of their choice into output tails, build logs, symbol names and
 * worker lines, and a JSON file must be UTF-8 (RFC 8259) for its readers,
 * years later, to accept it. */
static void clean_strings(cJSON *o)
{
    for (cJSON *it = o ? o->child : NULL; it; it = it->next) {
        if (it->string) rec_utf8_clean(it->string);
        if (cJSON_IsString(it) && it->valuestring) rec_utf8_clean(it->valuestring);
        if (cJSON_IsObject(it) || cJSON_IsArray(it)) clean_strings(it);
    }
}

cJSON *rec_new(const char *type, const char *set, const char *problem)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    if (!cJSON_AddStringToObject(o, KBV_K_TYPE, type) || !cJSON_AddStringToObject(o, KBV_K_SET, set) ||
        !cJSON_AddStringToObject(o, KBV_K_PROBLEM, problem)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int rec_from_worker(const char *line, size_t len, const char *set, const char *problem,
                    cJSON **out, kbv_err *e)
{
    *out = NULL;
    cJSON *in = cJSON_ParseWithLength(line, len);
    if (!cJSON_IsObject(in)) {
        cJSON_Delete(in);
        return err_set(e, KBV_EINPUT, "a line that is not a JSON object");
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(in, KBV_K_TYPE);
    if (!cJSON_IsString(t)) {
        cJSON_Delete(in);
        return err_set(e, KBV_EINPUT, "a record without a type");
    }
    int rc = valid(in, t->valuestring, e);
    if (rc) {
        cJSON_Delete(in);
        return rc;
    }
    cJSON *o = rec_new(t->valuestring, set, problem);
    if (!o) {
        cJSON_Delete(in);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    /* Move the worker's other fields over, in their order. */
    cJSON *it = in->child;
    while (it) {
        cJSON *next = it->next;
        if (strcmp(it->string, KBV_K_TYPE) && strcmp(it->string, KBV_K_SET) && strcmp(it->string, KBV_K_PROBLEM) &&
            !cJSON_GetObjectItemCaseSensitive(o, it->string)) {
            cJSON *moved = cJSON_DetachItemViaPointer(in, it);
            cJSON_AddItemToObject(o, moved->string, moved);
        }
        it = next;
    }
    cJSON_Delete(in);
    clean_strings(o);
    *out = o;
    return 0;
}

cJSON *rec_build(const char *set, const char *problem, const build_item *b)
{
    cJSON *o = rec_new(KBV_REC_BUILD, set, problem);
    if (!o) return NULL;
    cJSON_AddBoolToObject(o, "ok", b->ok);
    jio_add_num(o, "seconds", b->seconds);
    cJSON_AddBoolToObject(o, "cached", b->cached);
    cJSON_AddStringToObject(o, "key", b->key);
    cJSON_AddStringToObject(o, "log", b->log ? b->log : "");
    clean_strings(o);
    return o;
}

cJSON *rec_static(const char *set, const char *problem, const build_item *b)
{
    cJSON *o = rec_new(KBV_REC_STATIC, set, problem);
    if (!o) return NULL;
    cJSON *imp = cJSON_AddArrayToObject(o, "imports");
    for (int i = 0; imp && i < b->n_imports; i++)
        cJSON_AddItemToArray(imp, cJSON_CreateString(b->imports[i]));
    cJSON *fl = cJSON_AddArrayToObject(o, "flags");
    for (int i = 0; fl && i < SCAN_N_FLAGS; i++)
        if (b->flags & (1u << i)) cJSON_AddItemToArray(fl, cJSON_CreateString(verdict_scan_flag_name(i)));
    cJSON *def = cJSON_AddArrayToObject(o, "defines");
    for (int i = 0; def && i < b->n_defines; i++)
        cJSON_AddItemToArray(def, cJSON_CreateString(b->defines[i]));
    clean_strings(o);
    return o;
}

cJSON *rec_status(const char *set, const char *problem, const char *status, const char *detail)
{
    cJSON *o = rec_new(KBV_REC_STATUS, set, problem);
    if (!o) return NULL;
    cJSON_AddStringToObject(o, KBV_K_STATUS, status);
    cJSON_AddStringToObject(o, KBV_K_DETAIL, detail ? detail : "");
    clean_strings(o);
    return o;
}

cJSON *rec_tamper(const char *set, const char *problem, const char *detail)
{
    cJSON *o = rec_new(KBV_REC_TAMPER, set, problem);
    if (!o) return NULL;
    cJSON_AddStringToObject(o, KBV_K_DETAIL, detail);
    clean_strings(o);
    return o;
}

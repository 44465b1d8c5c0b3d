/* tmpl.c - report.json templates (see tmpl.h). */
#include "tmpl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jio.h"
#include "sbuf.h"

const char *const tmpl_global_names[] = {
    "run_id", "date", "device", "driver", "cuda", "harness_commit", "harness_version", "seed",
    "n_sets", "n_problems", "ci_pct", "resamples", "mem_baseline", "atol", "rtol", "trials", "warmup_calls",
    "warmup_ms", "min_rounds", "max_rounds", "min_gpu_s", "max_s", "max_s_of", "stop_by_set", "ci_halfwidth_pct",
    "d5_source",
    "n_bf16_sets", "atol_bf16", "rtol_bf16", "atol_bf16_scale", "bf16_tol_note", NULL};
const char *const tmpl_set_names[] = {
    "set", "set_n", "set_correct", "set_hidden", "set_hack", "set_incorrect", "set_error", "set_missing",
    "set_found", NULL};
static const char *const forest_names[] = {"part", "parts", "part_note", "first", "last", NULL};
const char *const tmpl_verdict_names[] = {
    "fp32", "fp32_ci", "fp32_verdict", "tf32", "tf32_ci", "tf32_verdict", "joiner", NULL};
const char *const tmpl_parity_names[] = {
    "parity_gpu", "parity_torch", "parity_cuda", "parity_samples", "parity_limit", "n_parity", NULL};
const char *const tmpl_drift_names[] = {"n_drift", "drift_limit", "clock_limit", NULL};
const char *const tmpl_bf16_names[] = {"compare_with", "n_points", "n_both", NULL};
static const char *const baseline_names[] = {"baseline", "baseline_desc", NULL};
static const char *const scatter_names[] = {"n_points", NULL};
static const char *const hack_names[] = {"n_findings", NULL};
static const char *const page_names[] = {"page", "pages", NULL};

static const char *const sec_keys[SEC_N] = {"summary", "headline", "inflation", "fast_p", "forest",
                                            "scatter", "classes", "hacks", "problems", "parity", "drift",
                                            "methods", "levels", "failures", "tolerance", "bf16"};
static const char *const lbl_keys[LBL_N] = {"speedup_axis", "fast_p_x", "fast_p_y", "memory_axis",
                                            "scatter_x", "count_axis", "inflation_axis", "open_marker",
                                            "filled_marker", "page", "continued"};

void tvars_set(tvars *v, const char *name, const char *fmt, ...)
{
    int i;
    for (i = 0; i < v->n; i++)
        if (strcmp(v->v[i].name, name) == 0)
            break;
    if (i == v->n) {
        if (v->n == TVARS_MAX)
            return;
        v->n++;
        snprintf(v->v[i].name, sizeof v->v[i].name, "%s", name);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->v[i].value, sizeof v->v[i].value, fmt, ap);
    va_end(ap);
}

static int valid_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

int tmpl_expand(const tmpl *t, const char *where, const char *s, const tvars *v, char **out, kbv_err *e)
{
    *out = NULL;
    sbuf o = {0};
    sb_reserve(&o, strlen(s) + 64);
    const char *p = s;
    while (*p) {
        const char *add = p;
        size_t n = 1;
        if (p[0] == '{' && p[1] == '{') {
            const char *q = p + 2;
            while (valid_name_char(*q))
                q++;
            if (q == p + 2 || q[0] != '}' || q[1] != '}') {
                sb_free(&o);
                return err_set(e, KBV_EINPUT, "%s: %s: malformed placeholder at \"%.20s\" "
                               "(expected {{name}}, name of a-z, 0-9, _)", t->path, where, p);
            }
            size_t nl = (size_t)(q - p - 2);
            int found = -1;
            for (int i = 0; i < v->n; i++)
                if (strlen(v->v[i].name) == nl && memcmp(v->v[i].name, p + 2, nl) == 0)
                    found = i;
            if (found < 0) {
                sb_free(&o);
                return err_set(e, KBV_EINPUT, "%s: %s: unknown placeholder {{%.*s}}", t->path, where,
                               (int)nl, p + 2);
            }
            add = v->v[found].value;
            n = strlen(add);
            p = q + 2;
        } else if (p[0] == '}' && p[1] == '}') {
            sb_free(&o);
            return err_set(e, KBV_EINPUT, "%s: %s: '}}' without '{{'", t->path, where);
        } else {
            p++;
        }
        sb_add(&o, add, n);
    }
    *out = sb_take(&o, NULL);
    if (!*out)
        return err_set(e, KBV_ENOMEM, "out of memory expanding %s", where);
    return 0;
}

static void add_names(tvars *v, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        tvars_set(v, names[i], "x");
}

/* Checks the placeholders of s against the names of its scope. */
static int check(const tmpl *t, const char *where, const char *s, const char *const *extra1,
                 const char *const *extra2, const char *const *extra3, kbv_err *e)
{
    tvars v = {0};
    char *o = NULL;
    add_names(&v, tmpl_global_names);
    if (extra1)
        add_names(&v, extra1);
    if (extra2)
        add_names(&v, extra2);
    if (extra3)
        add_names(&v, extra3);
    int rc = tmpl_expand(t, where, s, &v, &o, e);
    free(o);
    return rc;
}

static int get_text(const tmpl *t, const cJSON *o, const char *key, const char *where, int required,
                    const char **out, kbv_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NULL;
    if (!v) {
        if (required)
            return err_set(e, KBV_EINPUT, "%s: missing '%s%s%s'", t->path, where, *where ? "." : "", key);
        return 0;
    }
    if (!cJSON_IsString(v))
        return err_set(e, KBV_EINPUT, "%s: '%s%s%s' must be a string", t->path, where, *where ? "." : "", key);
    *out = v->valuestring;
    return 0;
}

static int only_keys(const tmpl *t, const cJSON *o, const char *const *allowed, const char *where, kbv_err *e)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        int ok = 0;
        for (int i = 0; allowed[i]; i++)
            if (strcmp(it->string, allowed[i]) == 0)
                ok = 1;
        if (!ok)
            return err_set(e, KBV_EINPUT, "%s: unknown key '%s%s%s'", t->path, where, *where ? "." : "", it->string);
    }
    return 0;
}

/* The methods section's "items": [{"term": ..., "text": ...}], each text
 * with the global placeholders only. */
static int load_items(tmpl *t, const cJSON *sec, tsection *s, const char *where, kbv_err *e)
{
    static const char *const keys[] = {"term", "text", NULL};
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(sec, "items"), *it;
    if (!arr)
        return 0;
    if (s->id != SEC_METHODS)
        return err_set(e, KBV_EINPUT, "%s: %s: 'items' is a field of the methods section only", t->path, where);
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > TMPL_MAX_ITEMS)
        return err_set(e, KBV_EINPUT, "%s: %s.items must be an array of at most %d objects", t->path, where,
                       TMPL_MAX_ITEMS);
    cJSON_ArrayForEach(it, arr) {
        char w[96];
        int rc;
        snprintf(w, sizeof w, "%s.items[%d]", where, s->n_items);
        if (!cJSON_IsObject(it))
            return err_set(e, KBV_EINPUT, "%s: '%s' must be an object", t->path, w);
        titem *x = &s->items[s->n_items];
        if ((rc = only_keys(t, it, keys, w, e)) || (rc = get_text(t, it, "term", w, 1, &x->term, e)) ||
            (rc = get_text(t, it, "text", w, 1, &x->text, e)) || (rc = check(t, w, x->term, NULL, NULL, NULL, e)) ||
            (rc = check(t, w, x->text, NULL, NULL, NULL, e)))
            return rc;
        s->n_items++;
    }
    return 0;
}

static int load_sections(tmpl *t, const cJSON *arr, kbv_err *e)
{
    static const char *const keys[] = {"id", "title", "intro", "caption", "figure_caption", "empty", "missing",
                                       "items", "compare_caption", NULL};
    if (!cJSON_IsArray(arr))
        return err_set(e, KBV_EINPUT, "%s: 'sections' must be an array", t->path);
    const cJSON *it;
    int rc, seen[SEC_N] = {0};
    cJSON_ArrayForEach(it, arr) {
        char where[64];
        snprintf(where, sizeof where, "sections[%d]", t->n_sections);
        if (!cJSON_IsObject(it))
            return err_set(e, KBV_EINPUT, "%s: '%s' must be an object", t->path, where);
        if ((rc = only_keys(t, it, keys, where, e)))
            return rc;
        const char *id;
        if ((rc = get_text(t, it, "id", where, 1, &id, e)))
            return rc;
        int k = -1;
        for (int i = 0; i < SEC_N; i++)
            if (strcmp(id, sec_keys[i]) == 0)
                k = i;
        if (k < 0)
            return err_set(e, KBV_EINPUT, "%s: %s: unknown section id '%s'", t->path, where, id);
        if (seen[k]++)
            return err_set(e, KBV_EINPUT, "%s: %s: section '%s' appears twice", t->path, where, id);
        snprintf(where, sizeof where, "sections[%s]", id);
        tsection *s = &t->sections[t->n_sections];
        s->id = (sec_id)k;
        if ((rc = get_text(t, it, "title", where, 1, &s->title, e)) ||
            (rc = get_text(t, it, "intro", where, 0, &s->intro, e)) ||
            (rc = get_text(t, it, "caption", where, 0, &s->caption, e)) ||
            (rc = get_text(t, it, "figure_caption", where, 0, &s->figure_caption, e)) ||
            (rc = get_text(t, it, "empty", where, 0, &s->empty, e)) ||
            (rc = get_text(t, it, "missing", where, 0, &s->missing, e)) ||
            (rc = get_text(t, it, "compare_caption", where, 0, &s->compare_caption, e)))
            return rc;
        if (s->compare_caption && k != SEC_BF16)
            return err_set(e, KBV_EINPUT, "%s: %s: 'compare_caption' is a field of the bf16 section only", t->path,
                           where);
        if ((rc = load_items(t, it, s, where, e)))
            return rc;
        if (s->missing && k != SEC_PARITY && k != SEC_DRIFT && k != SEC_LEVELS && k != SEC_FAILURES &&
            k != SEC_TOLERANCE)
            return err_set(e, KBV_EINPUT, "%s: %s: 'missing' is a field of the parity, drift, levels, failures "
                           "and tolerance sections only",
                           t->path, where);
        /* Which placeholders each field may use depends on what it describes:
         * a per-set figure knows its set, a per-baseline one its baseline. */
        const char *const *cap1 = NULL, *const *cap2 = NULL;
        if (k == SEC_FAST_P || k == SEC_LEVELS)
            cap1 = baseline_names;
        else if (k == SEC_FOREST || k == SEC_PROBLEMS)
            cap1 = tmpl_set_names;
        /* A forest is drawn in parts of a page each, each with its caption. */
        if (k == SEC_FOREST)
            cap2 = forest_names;
        else if (k == SEC_SCATTER)
            cap1 = scatter_names;
        else if (k == SEC_HACKS)
            cap1 = hack_names;
        else if (k == SEC_PARITY)
            cap1 = tmpl_parity_names;
        else if (k == SEC_DRIFT)
            cap1 = tmpl_drift_names;
        char w2[96];
        const char *fields[] = {s->title, s->intro, s->caption, s->figure_caption, s->empty, s->missing};
        const char *names[] = {"title", "intro", "caption", "figure_caption", "empty", "missing"};
        for (int f = 0; f < 6; f++) {
            if (!fields[f])
                continue;
            snprintf(w2, sizeof w2, "%s.%s", where, names[f]);
            /* fast_p: the table's caption is about every baseline, each
             * figure's caption about one. */
            /* parity, drift: without parity.json or baseline_drift there is
             * nothing to fill their placeholders of 'missing' with. */
            const char *const *scope = f < 2 || f == 5 ? NULL : cap1;
            if (k == SEC_FAST_P || k == SEC_LEVELS)
                scope = f == 3 ? baseline_names : NULL;
            if ((rc = check(t, w2, fields[f], scope, cap2, NULL, e)))
                return rc;
        }
        /* Each BF16 set's comparison knows its set and what it compares. */
        snprintf(w2, sizeof w2, "%s.compare_caption", where);
        if (s->compare_caption && (rc = check(t, w2, s->compare_caption, tmpl_set_names, tmpl_bf16_names, NULL, e)))
            return rc;
        t->n_sections++;
    }
    return 0;
}

int tmpl_load(tmpl *t, const char *path, kbv_err *e)
{
    static const char *const top[] = {"title", "subtitle", "labels", "verdict", "sections", NULL};
    static const char *const vkeys[] = {"sentence", "no_correct", "above", "below", "overlap", "same",
                                        "differ", NULL};
    int rc;
    memset(t, 0, sizeof *t);
    t->path = path;
    if ((rc = jio_load(path, &t->root, e)))
        return rc;
    const cJSON *r = t->root;
    if (!cJSON_IsObject(r)) {
        rc = err_set(e, KBV_EINPUT, "%s: expected a JSON object", path);
        goto fail;
    }
    if ((rc = only_keys(t, r, top, "", e)) ||
        (rc = get_text(t, r, "title", "", 1, &t->title, e)) ||
        (rc = get_text(t, r, "subtitle", "", 1, &t->subtitle, e)) ||
        (rc = check(t, "title", t->title, NULL, NULL, NULL, e)) ||
        (rc = check(t, "subtitle", t->subtitle, NULL, NULL, NULL, e)))
        goto fail;
    const cJSON *lb = cJSON_GetObjectItemCaseSensitive(r, "labels");
    if (!cJSON_IsObject(lb)) {
        rc = err_set(e, KBV_EINPUT, "%s: 'labels' must be an object", path);
        goto fail;
    }
    const char *lk[LBL_N + 1];
    for (int i = 0; i < LBL_N; i++)
        lk[i] = lbl_keys[i];
    lk[LBL_N] = NULL;
    if ((rc = only_keys(t, lb, lk, "labels", e)))
        goto fail;
    for (int i = 0; i < LBL_N; i++) {
        char w[64];
        snprintf(w, sizeof w, "labels.%s", lbl_keys[i]);
        if ((rc = get_text(t, lb, lbl_keys[i], "labels", 1, &t->labels[i], e)) ||
            (rc = check(t, w, t->labels[i], i == LBL_PAGE ? page_names : NULL, NULL, NULL, e)))
            goto fail;
    }
    const cJSON *vd = cJSON_GetObjectItemCaseSensitive(r, "verdict");
    if (!cJSON_IsObject(vd)) {
        rc = err_set(e, KBV_EINPUT, "%s: 'verdict' must be an object", path);
        goto fail;
    }
    if ((rc = only_keys(t, vd, vkeys, "verdict", e)) ||
        (rc = get_text(t, vd, "sentence", "verdict", 1, &t->verdict_sentence, e)) ||
        (rc = get_text(t, vd, "no_correct", "verdict", 1, &t->verdict_none, e)) ||
        (rc = get_text(t, vd, "above", "verdict", 1, &t->verdict_above, e)) ||
        (rc = get_text(t, vd, "below", "verdict", 1, &t->verdict_below, e)) ||
        (rc = get_text(t, vd, "overlap", "verdict", 1, &t->verdict_overlap, e)) ||
        (rc = get_text(t, vd, "same", "verdict", 1, &t->verdict_same, e)) ||
        (rc = get_text(t, vd, "differ", "verdict", 1, &t->verdict_differ, e)) ||
        (rc = check(t, "verdict.sentence", t->verdict_sentence, tmpl_set_names, tmpl_verdict_names, NULL, e)) ||
        (rc = check(t, "verdict.no_correct", t->verdict_none, tmpl_set_names, NULL, NULL, e)))
        goto fail;
    if ((rc = load_sections(t, cJSON_GetObjectItemCaseSensitive(r, "sections"), e)))
        goto fail;
    return 0;
fail:
    tmpl_free(t);
    return rc;
}

void tmpl_free(tmpl *t)
{
    cJSON_Delete(t->root);
    t->root = NULL;
}

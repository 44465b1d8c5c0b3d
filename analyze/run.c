/* run.c - reading a run directory (see run.h). */
#include "run.h"
#include "prec.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jio.h"
#include "lhash.h"
#include "jnl.h"
#include "log.h"
#include "rvec.h"
#include "scan.h"

const char *const run_variant_names[RUN_NV] = {"candidate", "fp32", "tf32", "bf16"};
const char *const run_precision_names[2] = {"fp32", "bf16"};
const char *const run_tier_names[4] = {"fp32", "tf32", "half", "none"};

/* --- name tables ---------------------------------------------------------- */

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Builds a table for names[0..n); KBV_EINPUT on a repeated name. */
static int map_build(const char **names, size_t n, const char *what, uint32_t **map, size_t *mask,
                     kbv_err *e)
{
    size_t size = 16;
    while (size < 2 * n) size *= 2;
    *map = calloc(size, sizeof **map);
    if (!*map) return err_set(e, KBV_ENOMEM, "out of memory");
    *mask = size - 1;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        size_t h = (size_t)hash_bytes(names[i], len) & *mask;
        while ((*map)[h]) {
            if (strcmp(names[(*map)[h] - 1], names[i]) == 0)
                return err_set(e, KBV_EINPUT, "manifest.json: %s \"%s\" is listed twice", what, names[i]);
            h = (h + 1) & *mask;
        }
        (*map)[h] = (uint32_t)(i + 1);
    }
    return 0;
}

/* Index of name p[0..n) or -1. */
static long map_find(const uint32_t *map, size_t mask, const char **names, const char *p, size_t n)
{
    size_t h = (size_t)hash_bytes(p, n) & mask;
    while (map[h]) {
        const char *s = names[map[h] - 1];
        if (strncmp(s, p, n) == 0 && s[n] == '\0') return (long)map[h] - 1;
        h = (h + 1) & mask;
    }
    return -1;
}

/* The last pair looked up: consecutive records are usually about the same
 * pair, so a comparison saves the hashing. */
typedef struct find_cache {
    size_t set, prob;
    int have;
} find_cache;

static int find_pair_c(const run_data *r, find_cache *c, const char *set, size_t set_len, const char *prob,
                       size_t prob_len, const char *what, size_t *out, kbv_err *e)
{
    if (c->have) {
        const char *s = r->set_names[c->set], *p = r->problem_ids[c->prob];
        if (strncmp(s, set, set_len) == 0 && s[set_len] == '\0' &&
            strncmp(p, prob, prob_len) == 0 && p[prob_len] == '\0') {
            *out = c->set * r->n_problems + c->prob;
            return 0;
        }
    }
    long si = map_find(r->set_map, r->set_mask, r->set_names, set, set_len);
    if (si < 0)
        return err_set(e, KBV_EINPUT, "%s: set \"%.*s\" is not in the manifest", what, (int)set_len, set);
    long pi = map_find(r->prob_map, r->prob_mask, r->problem_ids, prob, prob_len);
    if (pi < 0)
        return err_set(e, KBV_EINPUT, "%s: problem \"%.*s\" is not in the manifest", what, (int)prob_len, prob);
    c->set = (size_t)si;
    c->prob = (size_t)pi;
    c->have = 1;
    *out = c->set * r->n_problems + c->prob;
    return 0;
}

static int find_pair(run_data *r, const char *set, size_t set_len, const char *prob, size_t prob_len,
                     const char *what, run_pair **out, kbv_err *e)
{
    find_cache c = {r->last_set, r->last_prob, r->have_last};
    size_t k;
    int rc = find_pair_c(r, &c, set, set_len, prob, prob_len, what, &k, e);
    if (rc) return rc;
    r->last_set = c.set;
    r->last_prob = c.prob;
    r->have_last = c.have;
    *out = &r->pairs[k];
    return 0;
}

/* --- repeated lines -------------------------------------------------------- */

/* A collect writes every record once; a line that repeats an earlier one
 * byte for byte was copied in, and would count its samples twice. */
typedef struct run_line_seen {
    uint64_t a;
    uint32_t b;
    uint32_t line;    /* 1-based; 0 marks a free slot */
} run_line_seen;

/* Records line lineno with hash h; KBV_EINPUT when an earlier line had the
 * same text. */
static int seen_add(run_data *r, lhash h, const char *path, long lineno, kbv_err *e)
{
    if (2 * (r->n_seen + 1) > (r->seen ? r->seen_mask + 1 : 0)) {
        size_t size = r->seen ? 2 * (r->seen_mask + 1) : 1024;
        run_line_seen *t = calloc(size, sizeof *t);
        if (!t) return err_set(e, KBV_ENOMEM, "out of memory");
        for (size_t i = 0; r->seen && i <= r->seen_mask; i++) {
            if (!r->seen[i].line) continue;
            size_t k = (size_t)r->seen[i].a & (size - 1);
            while (t[k].line) k = (k + 1) & (size - 1);
            t[k] = r->seen[i];
        }
        free(r->seen);
        r->seen = t;
        r->seen_mask = size - 1;
    }
    size_t k = (size_t)h.a & r->seen_mask;
    while (r->seen[k].line) {
        if (r->seen[k].a == h.a && r->seen[k].b == h.b)
            return err_set(e, KBV_EINPUT, "%s:%ld: repeats line %lu byte for byte (a duplicated record)", path,
                           lineno, (unsigned long)r->seen[k].line);
        k = (k + 1) & r->seen_mask;
    }
    r->seen[k] = (run_line_seen){h.a, h.b, lineno > 0 && lineno < (long)UINT32_MAX ? (uint32_t)lineno : UINT32_MAX};
    r->n_seen++;
    return 0;
}

/* Keeps the first grammar violation of a pair as its evidence. */
static int note_tamper(run_pair *pr, const char *why, kbv_err *e)
{
    if (pr->tamper_why) return 0;
    if (!(pr->tamper_why = strdup(why))) return err_set(e, KBV_ENOMEM, "out of memory");
    return 0;
}

/* --- records -------------------------------------------------------------- */

/* One time sample, its round and its clock (0: not known). */
static int push_time(run_pair *pr, int v, double gpu, long round, int iset, double mhz, kbv_err *e)
{
    int rc = rvec_push(&pr->times[v], gpu, round, iset, e);
    return rc ? rc : rvec_mhz_push(&pr->mhz[v], mhz, 1, e);
}

static int variant_index(const char *p, size_t n)
{
    for (int v = 0; v < RUN_NV; v++)
        if (strlen(run_variant_names[v]) == n && memcmp(run_variant_names[v], p, n) == 0) return v;
    return -1;
}

/* A time must be a positive finite number; wall_ms may be absent. */
static int add_time(run_data *r, run_pair *pr, const char *variant, size_t vlen, int gpu_kind, double gpu,
                    int wall_kind, double wall, long round, int iset, double mhz, const char *what, kbv_err *e)
{
    int v = variant_index(variant, vlen);
    if (v < 0)
        return err_set(e, KBV_EINPUT, "%s: unknown variant \"%.*s\" (candidate, fp32, tf32 or bf16)", what,
                       (int)vlen, variant);
    if (gpu_kind != SCAN_NUMBER || !(gpu > 0) || !isfinite(gpu))
        return err_set(e, KBV_EINPUT, "%s: \"gpu_ms\" must be a positive finite number", what);
    if (wall_kind != SCAN_ABSENT && (wall_kind != SCAN_NUMBER || !(wall > 0) || !isfinite(wall)))
        return err_set(e, KBV_EINPUT, "%s: \"wall_ms\" must be a positive finite number", what);
    r->n_time++;
    return push_time(pr, v, gpu, round, iset, mhz, e);
}

static char *dup_str(const char *s)
{
    return strdup(s ? s : "");
}

static const char *opt_str(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* A number field: *out gets its value, HUGE_VAL for null (a non-finite
 * value as written), dflt when absent; KBV_EINPUT for another type. */
static int opt_num(const cJSON *o, const char *key, double dflt, double *out, const char *what, kbv_err *e)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) { *out = dflt; return 0; }
    if (cJSON_IsNull(it)) { *out = HUGE_VAL; return 0; }
    if (!cJSON_IsNumber(it)) return err_set(e, KBV_EINPUT, "%s: \"%s\" must be a number", what, key);
    *out = it->valuedouble;
    return 0;
}

static int opt_count(const cJSON *o, const char *key, long long *out, const char *what, kbv_err *e)
{
    double v = 0;
    int rc = opt_num(o, key, 0, &v, what, e);
    if (rc) return rc;
    if (!(v >= 0) || v > 9e18) return err_set(e, KBV_EINPUT, "%s: \"%s\" must be a count", what, key);
    *out = (long long)v;
    return 0;
}

static int str_list(const cJSON *o, const char *key, char ***out, size_t *n, const char *what, kbv_err *e)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key);
    for (size_t i = 0; i < *n; i++) free((*out)[i]);
    free(*out);
    *out = NULL;
    *n = 0;
    if (!arr || cJSON_IsNull(arr)) return 0;
    if (!cJSON_IsArray(arr)) return err_set(e, KBV_EINPUT, "%s: \"%s\" must be an array", what, key);
    size_t cnt = (size_t)cJSON_GetArraySize(arr);
    if (!cnt) return 0;
    *out = calloc(cnt, sizeof **out);
    if (!*out) return err_set(e, KBV_ENOMEM, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        if (!cJSON_IsString(it)) return err_set(e, KBV_EINPUT, "%s: \"%s\" must hold strings", what, key);
        if (!((*out)[*n] = strdup(it->valuestring))) return err_set(e, KBV_ENOMEM, "out of memory");
        (*n)++;
    }
    return 0;
}

static int tier_index(const char *s)
{
    if (!s) return RUN_TIER_UNKNOWN;
    for (int t = 0; t < 4; t++)
        if (strcmp(s, run_tier_names[t]) == 0) return t;
    return RUN_TIER_UNKNOWN;
}

static int add_check(run_pair *pr, const cJSON *o, const char *what, kbv_err *e)
{
    const char *dist;
    int rc = jio_get_str(o, "dist", what, &dist, e);
    if (rc) return rc;
    if (pr->n_checks == pr->cap_checks) {
        size_t cap = pr->cap_checks ? 2 * pr->cap_checks : 8;
        run_check *p = realloc(pr->checks, cap * sizeof *p);
        if (!p) return err_set(e, KBV_ENOMEM, "out of memory");
        pr->checks = p;
        pr->cap_checks = cap;
    }
    run_check c;
    memset(&c, 0, sizeof c);
    snprintf(c.dist, sizeof c.dist, "%s", dist);
    const cJSON *sk = cJSON_GetObjectItemCaseSensitive(o, "skipped");
    c.skipped = cJSON_IsTrue(sk);
    const cJSON *pass = cJSON_GetObjectItemCaseSensitive(o, "pass");
    if (cJSON_IsBool(pass)) c.pass = cJSON_IsTrue(pass);
    else if (!c.skipped) return err_set(e, KBV_EINPUT, "%s: \"pass\" must be true or false", what);
    double trial = 0, el = -1;
    if ((rc = opt_num(o, "trial", 0, &trial, what, e)) ||
        (rc = opt_num(o, "max_abs_err", NAN, &c.max_abs_err, what, e)) ||
        (rc = opt_num(o, "max_rel_err", NAN, &c.max_rel_err, what, e)) ||
        (rc = opt_count(o, "mismatches", &c.mismatches, what, e)) ||
        (rc = opt_count(o, "nonfinite", &c.nonfinite, what, e)) ||
        (rc = opt_count(o, "unwritten", &c.unwritten, what, e)))
        return rc;
    /* Converting a double outside long long's range is undefined. */
    c.trial = trial > -9e18 && trial < 9e18 ? (long long)trial : 0;
    c.elements = -1;
    /* collect writes "count"; the other spellings are accepted too. */
    static const char *const el_keys[] = {"count", "elements", "numel", "n_elements"};
    for (int k = 0; k < 4; k++) {
        if (!cJSON_GetObjectItemCaseSensitive(o, el_keys[k])) continue;
        if ((rc = opt_num(o, el_keys[k], -1, &el, what, e))) return rc;
        if (el >= 0 && el < 9e18) c.elements = (long long)el;
        break;
    }
    c.tier = tier_index(opt_str(o, "tier"));
    pr->checks[pr->n_checks++] = c;
    return 0;
}

static int add_probe(run_pair *pr, const cJSON *o, const char *what, kbv_err *e)
{
    const char *name;
    int rc = jio_get_str(o, KBV_K_PROBE, what, &name, e);
    if (rc) return rc;
    run_probe p;
    memset(&p, 0, sizeof p);
    const cJSON *pass = cJSON_GetObjectItemCaseSensitive(o, "pass");
    if (cJSON_IsBool(pass)) p.pass = cJSON_IsTrue(pass);
    else if (!pass || cJSON_IsNull(pass)) p.pass = -1;
    else return err_set(e, KBV_EINPUT, "%s: \"pass\" must be true, false or null", what);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "skipped"))) p.pass = -1;
    if ((rc = opt_num(o, "floor_ms", NAN, &p.floor_ms, what, e)) ||
        (rc = opt_num(o, "floor_ratio", NAN, &p.floor_ratio, what, e)) ||
        (rc = opt_num(o, "max_rel_err", NAN, &p.max_rel_err, what, e)))
        return rc;
    p.tier = tier_index(opt_str(o, "tier"));
    const cJSON *again = cJSON_GetObjectItemCaseSensitive(o, "reproduced_untimed");
    if (!again || cJSON_IsNull(again)) p.reproduced_untimed = -1;
    else if (cJSON_IsBool(again)) p.reproduced_untimed = cJSON_IsTrue(again);
    else return err_set(e, KBV_EINPUT, "%s: \"reproduced_untimed\" must be true, false or null", what);
    if (pr->n_probes == pr->cap_probes) {
        size_t cap = pr->cap_probes ? 2 * pr->cap_probes : 8;
        run_probe *q = realloc(pr->probes, cap * sizeof *q);
        if (!q) return err_set(e, KBV_ENOMEM, "out of memory");
        pr->probes = q;
        pr->cap_probes = cap;
    }
    p.name = dup_str(name);
    p.detail = dup_str(opt_str(o, KBV_K_DETAIL));
    if (!p.name || !p.detail) {
        free(p.name);
        free(p.detail);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    pr->probes[pr->n_probes++] = p;
    return 0;
}

static int replace_str(char **dst, const char *s, kbv_err *e)
{
    char *d = dup_str(s);
    if (!d) return err_set(e, KBV_ENOMEM, "out of memory");
    free(*dst);
    *dst = d;
    return 0;
}

/* A baseline record: the kernel or algorithm a worker chose for the fp32,
 * tf32 or bf16 baseline of its pair.  Each worker start writes one, so a resumed
 * run repeats it; a text already kept is not kept twice.  An empty text
 * names nothing and is not kept. */
static int add_choice(run_pair *pr, const cJSON *o, const char *what, kbv_err *e)
{
    const char *variant;
    int rc;
    if ((rc = jio_get_str(o, KBV_K_VARIANT, what, &variant, e))) return rc;
    int v = variant_index(variant, strlen(variant));
    if (v != RUN_V_FP32 && v != RUN_V_TF32 && v != RUN_V_BF16)
        return err_set(e, KBV_EINPUT, "%s: unknown baseline variant \"%s\" (fp32, tf32 or bf16)", what, variant);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "choice");
    if (!cJSON_IsString(c)) return err_set(e, KBV_EINPUT, "%s: \"choice\" must be a string", what);
    if (!*c->valuestring) return 0;
    for (size_t i = 0; i < pr->n_choices[v]; i++)
        if (strcmp(pr->choices[v][i], c->valuestring) == 0) return 0;
    char **p = realloc(pr->choices[v], (pr->n_choices[v] + 1) * sizeof *p);
    if (!p) return err_set(e, KBV_ENOMEM, "out of memory");
    pr->choices[v] = p;
    if (!(p[pr->n_choices[v]] = strdup(c->valuestring))) return err_set(e, KBV_ENOMEM, "out of memory");
    pr->n_choices[v]++;
    return 0;
}

/* The status names of DESIGN.md 6. */
static int status_known(const char *s)
{
    static const char *const names[] = {"ok", "compile-error", "crash", "timeout", "launch-error", "missing"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(s, names[i]) == 0) return 1;
    return 0;
}

static int add_record(run_data *r, const cJSON *o, const char *what, long lineno, kbv_err *e)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, KBV_K_TYPE);
    if (!cJSON_IsString(type)) return err_set(e, KBV_EINPUT, "%s: record without a string \"type\"", what);
    const char *t = type->valuestring;
    static const char *const known[] = {KBV_REC_BUILD, KBV_REC_STATIC, KBV_REC_CHECK, KBV_REC_PROBE, KBV_REC_TIME, KBV_REC_MEMORY, KBV_REC_STATUS, KBV_REC_BASELINE};
    int k = -1;
    for (int i = 0; i < 8; i++)
        if (strcmp(t, known[i]) == 0) k = i;

    const char *set, *prob;
    int rc;
    if ((rc = jio_get_str(o, KBV_K_SET, what, &set, e)) || (rc = jio_get_str(o, KBV_K_PROBLEM, what, &prob, e)))
        return rc;
    run_pair *pr;
    if ((rc = find_pair(r, set, strlen(set), prob, strlen(prob), what, &pr, e))) return rc;

    /* A pair has one status and one build record; a second one that says
     * something else cannot be told apart from the first, so the journal is
     * wrong rather than the candidate (a repeated identical line was caught
     * before).  An unknown status has no meaning to class by. */
    if (k == 6) {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, KBV_K_STATUS);
        if (cJSON_IsString(st) && !status_known(st->valuestring))
            return err_set(e, KBV_EINPUT,
                           "%s: unknown status \"%.40s\" (ok, compile-error, crash, timeout, launch-error, missing)",
                           what, st->valuestring);
        if (pr->status_line)
            return err_set(e, KBV_EINPUT, "%s: a second status record for %s/%s contradicts line %ld", what, set,
                           prob, pr->status_line);
        pr->status_line = lineno;
    } else if (k == 0) {
        if (pr->build_line)
            return err_set(e, KBV_EINPUT, "%s: a second build record for %s/%s contradicts line %ld", what, set,
                           prob, pr->build_line);
        pr->build_line = lineno;
    }
    char why[512];
    rc = jgram_feed(r->gram, o, why, sizeof why);
    if (rc < 0) return err_set(e, rc, "%s: %s", what, why);
    if (rc > 0) return note_tamper(pr, why, e);  /* evidence, never data */

    switch (k) {
    case 0: { /* build */
        int ok;
        if ((rc = jio_get_bool(o, "ok", what, &ok, e))) return rc;
        pr->have_build = 1;
        pr->build_ok = ok;
        return replace_str(&pr->build_log, opt_str(o, "log"), e);
    }
    case 1: /* static */
        pr->have_static = 1;
        if ((rc = str_list(o, "flags", &pr->static_flags, &pr->n_static_flags, what, e))) return rc;
        return str_list(o, "imports", &pr->imports, &pr->n_imports, what, e);
    case 2:
        return add_check(pr, o, what, e);
    case 3:
        return add_probe(pr, o, what, e);
    case 4: { /* time, when the fast scanner left it to us */
        const char *variant;
        if ((rc = jio_get_str(o, KBV_K_VARIANT, what, &variant, e))) return rc;
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, KBV_K_GPU_MS);
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, KBV_K_WALL_MS);
        int gk = !g ? SCAN_ABSENT : cJSON_IsNumber(g) ? SCAN_NUMBER : cJSON_IsNull(g) ? SCAN_NULL : SCAN_OTHER;
        int wk = !w ? SCAN_ABSENT : cJSON_IsNumber(w) ? SCAN_NUMBER : cJSON_IsNull(w) ? SCAN_NULL : SCAN_OTHER;
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "sm_mhz");
        double mhz = cJSON_IsNumber(c) ? rvec_clock_of(SCAN_NUMBER, c->valuedouble) : 0;
        const cJSON *rd = cJSON_GetObjectItemCaseSensitive(o, "round");
        long round = cJSON_IsNumber(rd) ? rvec_round_of(rd->valuedouble) : RUN_NO_ROUND;
        return add_time(r, pr, variant, strlen(variant), gk, gk == SCAN_NUMBER ? g->valuedouble : 0, wk,
                        wk == SCAN_NUMBER ? w->valuedouble : 0, round, rvec_iset_of(o), mhz, what, e);
    }
    case 5: { /* memory */
        const char *variant;
        double peak = 0, leaked = 0;
        if ((rc = jio_get_str(o, KBV_K_VARIANT, what, &variant, e))) return rc;
        int v = variant_index(variant, strlen(variant));
        if (v < 0) return err_set(e, KBV_EINPUT, "%s: unknown variant \"%s\"", what, variant);
        if ((rc = jio_get_num(o, "peak_bytes", what, &peak, e))) return rc;
        if (!(peak >= 0)) return err_set(e, KBV_EINPUT, "%s: \"peak_bytes\" must not be negative", what);
        if ((rc = opt_num(o, "leaked_bytes", 0, &leaked, what, e))) return rc;
        pr->have_mem[v] = 1;
        pr->peak_bytes[v] = peak;
        pr->leaked_bytes[v] = isfinite(leaked) && leaked > 0 ? leaked : 0;
        return 0;
    }
    case 6: { /* status */
        const char *st;
        if ((rc = jio_get_str(o, KBV_K_STATUS, what, &st, e))) return rc;
        pr->have_status = 1;
        if ((rc = replace_str(&pr->status, st, e))) return rc;
        return replace_str(&pr->status_detail, opt_str(o, KBV_K_DETAIL), e);
    }
    default:
        return add_choice(pr, o, what, e);
    }
}

/* The fast path for a time record: 1 with the pair's index, the variant,
 * the round and the time when line is a well-formed time record that needs
 * nothing else; 0 when the general parser must decide (it also words any
 * error, and the grammar judges odd keys). */
static int fast_time(const run_data *r, find_cache *c, const char *line, size_t len, size_t *pair, int *variant,
                     double *round, double *gpu, double *mhz)
{
    scan_rec sr;
    if (!scan_flat(line, len, &sr) || !scan_is(sr.type, KBV_REC_TIME) || !sr.set.p || !sr.problem.p || !sr.variant.p ||
        sr.odd_keys || sr.round_kind != SCAN_NUMBER)
        return 0;
    if (find_pair_c(r, c, sr.set.p, sr.set.len, sr.problem.p, sr.problem.len, NULL, pair, NULL)) return 0;
    int v = variant_index(sr.variant.p, sr.variant.len);
    if (v < 0 || sr.gpu_kind != SCAN_NUMBER || !(sr.gpu_ms > 0) || !isfinite(sr.gpu_ms)) return 0;
    if (sr.wall_kind != SCAN_ABSENT && (sr.wall_kind != SCAN_NUMBER || !(sr.wall_ms > 0) || !isfinite(sr.wall_ms)))
        return 0;
    *variant = v;
    *round = sr.round;
    *gpu = sr.gpu_ms;
    *mhz = rvec_clock_of(sr.mhz_kind, sr.sm_mhz);
    return 1;
}

/* A time sample the fast path read: judged by the grammar, then kept. */
static int take_time(run_data *r, size_t k, int v, double round, double gpu, double mhz, const char *path,
                     long lineno, kbv_err *e)
{
    const char *set = r->set_names[k / r->n_problems], *prob = r->problem_ids[k % r->n_problems];
    const char *var = run_variant_names[v];
    char why[512];
    int rc = jgram_feed_time(r->gram, set, strlen(set), prob, strlen(prob), var, strlen(var), 1, round, why,
                             sizeof why);
    if (rc < 0) return err_set(e, rc, "%s:%ld: %s", path, lineno, why);
    if (rc > 0) return note_tamper(&r->pairs[k], why, e);
    r->n_time++;
    /* The fast path takes no record with an input set (an odd key to the
     * scanner). */
    return push_time(&r->pairs[k], v, gpu, rvec_round_of(round), RUN_NO_ISET, mhz, e);
}

/* run_add_line with the line's hash already computed. */
static int add_line_h(run_data *r, const char *line, size_t len, lhash h, const char *path, long lineno,
                      kbv_err *e)
{
    r->n_lines++;
    int rc = seen_add(r, h, path, lineno, e);
    if (rc) return rc;
    /* The fast path reports nothing: a time record it cannot take (an
     * unknown name, a bad time) goes on to the general parser, which words
     * the error with file and line. */
    find_cache c = {r->last_set, r->last_prob, r->have_last};
    size_t k;
    int v;
    double round, gpu, mhz;
    if (fast_time(r, &c, line, len, &k, &v, &round, &gpu, &mhz)) {
        r->last_set = c.set;
        r->last_prob = c.prob;
        r->have_last = c.have;
        return take_time(r, k, v, round, gpu, mhz, path, lineno, e);
    }
    char what[4200];
    snprintf(what, sizeof what, "%s:%ld", path, lineno);
    const char *endp = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(line, len, &endp, 0);
    if (!o) {
        long col = endp && endp >= line ? (long)(endp - line) + 1 : 1;
        return err_set(e, KBV_EINPUT, "%s: malformed JSON near column %ld", what, col);
    }
    while (endp && endp < line + len && (*endp == ' ' || *endp == '\t' || *endp == '\r')) endp++;
    if (endp && endp < line + len)
        rc = err_set(e, KBV_EINPUT, "%s: text after the JSON record", what);
    else if (!cJSON_IsObject(o))
        rc = err_set(e, KBV_EINPUT, "%s: a record must be a JSON object", what);
    else
        rc = add_record(r, o, what, lineno, e);
    cJSON_Delete(o);
    return rc;
}

int run_add_line(run_data *r, const char *line, size_t len, const char *path, long lineno, kbv_err *e)
{
    return add_line_h(r, line, len, lhash_line(line, len), path, lineno, e);
}

int run_finish(run_data *r, kbv_err *e)
{
    /* The table of lines is needed no longer. */
    free(r->seen);
    r->seen = NULL;
    r->n_seen = 0;
    if (r->n_lines == 0)
        return err_set(e, KBV_EINPUT, "%s: the journal holds no record", r->journal_path[0] ? r->journal_path : "journal");
    return 0;
}

/* --- manifest ------------------------------------------------------------- */

int run_from_manifest(cJSON *manifest, run_data **out, kbv_err *e)
{
    const char *what = "manifest.json";
    run_data *r = calloc(1, sizeof *r);
    int rc;
    if (!r) {
        cJSON_Delete(manifest);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    r->manifest = manifest;
    if ((rc = jgram_new(&r->gram, e))) goto fail;
    const char *schema;
    const cJSON *config, *problems, *sets, *it;
    double seed = 0;
    if ((rc = jio_get_str(manifest, KBV_K_SCHEMA, what, &schema, e))) goto fail;
    if (strcmp(schema, KBV_SCHEMA_RUN) != 0) {
        rc = err_set(e, KBV_EINPUT, "%s: schema \"%s\" is not kbv-run/1", what, schema);
        goto fail;
    }
    if ((rc = jio_get_str(manifest, "run_id", what, &r->run_id, e)) ||
        (rc = jio_get_str(manifest, "created_utc", what, &r->created_utc, e)) ||
        (rc = jio_get_obj(manifest, "config", what, &config, e)) ||
        (rc = jio_get_num(config, "seed", "manifest.json: config", &seed, e)) ||
        (rc = jio_get_arr(manifest, "problems", what, &problems, e)) ||
        (rc = jio_get_arr(manifest, "sets", what, &sets, e)))
        goto fail;
    if (!(seed >= 0) || seed >= 18446744073709551616.0 || seed != floor(seed)) {
        rc = err_set(e, KBV_EINPUT, "%s: config.seed must be a non-negative integer", what);
        goto fail;
    }
    r->seed = (uint64_t)seed;
    r->atol = r->rtol = 1e-3;
    if ((rc = opt_num(config, "atol", 1e-3, &r->atol, "manifest.json: config", e)) ||
        (rc = opt_num(config, "rtol", 1e-3, &r->rtol, "manifest.json: config", e)))
        goto fail;

    r->n_problems = (size_t)cJSON_GetArraySize(problems);
    r->n_sets = (size_t)cJSON_GetArraySize(sets);
    r->problem_ids = calloc(r->n_problems + 1, sizeof *r->problem_ids);
    r->set_names = calloc(r->n_sets + 1, sizeof *r->set_names);
    r->pairs = calloc(r->n_sets * r->n_problems + 1, sizeof *r->pairs);
    if (!r->problem_ids || !r->set_names || !r->pairs) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto fail;
    }
    size_t i = 0;
    cJSON_ArrayForEach(it, problems) {
        /* A problem is its id, or an object with an "id". */
        const char *id = cJSON_IsString(it) ? it->valuestring : opt_str(it, "id");
        if (!id) {
            rc = err_set(e, KBV_EINPUT, "%s: problems[%zu] is not an id", what, i);
            goto fail;
        }
        r->problem_ids[i++] = id;
    }
    i = 0;
    cJSON_ArrayForEach(it, sets) {
        const char *name = cJSON_IsString(it) ? it->valuestring : opt_str(it, "name");
        if (!name) {
            rc = err_set(e, KBV_EINPUT, "%s: sets[%zu] has no \"name\"", what, i);
            goto fail;
        }
        r->set_names[i++] = name;
    }
    if ((rc = prec_read(r, config, sets, e)) ||
        (rc = map_build(r->problem_ids, r->n_problems, KBV_K_PROBLEM, &r->prob_map, &r->prob_mask, e)) ||
        (rc = map_build(r->set_names, r->n_sets, KBV_K_SET, &r->set_map, &r->set_mask, e)))
        goto fail;
    *out = r;
    return 0;
fail:
    run_free(r);
    return rc;
}

/* --- reading in parallel -------------------------------------------------- */

/* A plain journal of some size is mapped and cut at line boundaries into
 * chunks scanned by threads.  The first chunk is read like any journal; the
 * others keep the time records the fast path reads (the bulk of a journal)
 * and set aside every other line, each with its line number and hash.
 * After the threads join, each chunk's records are taken in line order, so
 * that the result, the grammar's verdicts and the first error reported are
 * those of reading the file from start to end. */

typedef struct tsample {
    size_t pair;
    int variant;
    double round, gpu, mhz;
    long line;            /* within the chunk, 1-based */
    lhash h;
} tsample;

typedef struct deferred {
    size_t off, len;
    long line;            /* within the chunk, 1-based */
    lhash h;
} deferred;

typedef struct chunk {
    const run_data *r;
    const char *base, *p, *end;
    tsample *ts;
    size_t nts, cap_ts;
    deferred *def;
    size_t ndef, cap;
    long lines;
    int torn;             /* the chunk (the last one) ends in a line with no newline */
    int rc;
    pthread_t tid;
} chunk;

static void *chunk_main(void *arg)
{
    chunk *h = arg;
    find_cache c = {0, 0, 0};
    const char *p = h->p;
    while (p < h->end) {
        const char *nl = memchr(p, '\n', (size_t)(h->end - p));
        if (!nl) {
            h->torn = 1;
            break;
        }
        size_t len = (size_t)(nl - p);
        if (len && p[len - 1] == '\r') len--;
        h->lines++;
        size_t k;
        int v;
        double round, gpu, mhz;
        lhash lh = lhash_line(p, len);
        if (fast_time(h->r, &c, p, len, &k, &v, &round, &gpu, &mhz)) {
            if (h->nts == h->cap_ts) {
                size_t cap = h->cap_ts ? 2 * h->cap_ts : 4096;
                tsample *t = realloc(h->ts, cap * sizeof *t);
                if (!t) {
                    h->rc = KBV_ENOMEM;
                    return NULL;
                }
                h->ts = t;
                h->cap_ts = cap;
            }
            h->ts[h->nts++] = (tsample){k, v, round, gpu, mhz, h->lines, lh};
        } else {
            if (h->ndef == h->cap) {
                size_t cap = h->cap ? 2 * h->cap : 1024;
                deferred *d = realloc(h->def, cap * sizeof *d);
                if (!d) {
                    h->rc = KBV_ENOMEM;
                    return NULL;
                }
                h->def = d;
                h->cap = cap;
            }
            h->def[h->ndef++] = (deferred){(size_t)(p - h->base), len, h->lines, lh};
        }
        p = nl + 1;
    }
    return NULL;
}

static void chunk_free(chunk *h)
{
    free(h->ts);
    free(h->def);
}

static void warn_torn(run_data *r, long lineno)
{
    log_warn("analyze", "%s:%ld: dropped a torn last line (an interrupted collect)", r->journal_path, lineno);
    r->dropped_torn = 1;
}

/* Takes a scanned chunk's records in line order; before is the number of
 * lines ahead of the chunk. */
static int chunk_take(run_data *r, const char *text, const chunk *h, long before, kbv_err *e)
{
    size_t i = 0, j = 0;
    int rc = 0;
    while (!rc && (i < h->nts || j < h->ndef)) {
        if (j >= h->ndef || (i < h->nts && h->ts[i].line < h->def[j].line)) {
            const tsample *t = &h->ts[i++];
            long lineno = before + t->line;
            r->n_lines++;
            if (!(rc = seen_add(r, t->h, r->journal_path, lineno, e)))
                rc = take_time(r, t->pair, t->variant, t->round, t->gpu, t->mhz, r->journal_path, lineno, e);
        } else {
            const deferred *d = &h->def[j++];
            rc = add_line_h(r, text + d->off, d->len, d->h, r->journal_path, before + d->line, e);
        }
    }
    return rc;
}

/* Reads the mapped journal text[0..size) with nt chunks (2 <= nt <= 8). */
static int load_chunks(run_data *r, const char *text, size_t size, int nt, kbv_err *e)
{
    chunk ch[8];
    int rc = 0, started = 0;
    memset(ch, 0, sizeof ch);
    /* Cut points just after a newline near each share of the file. */
    size_t cut[9];
    cut[0] = 0;
    for (int t = 1; t < nt; t++) {
        size_t at = size / (size_t)nt * (size_t)t;
        if (at < cut[t - 1]) at = cut[t - 1];
        const char *nl = at < size ? memchr(text + at, '\n', size - at) : NULL;
        cut[t] = nl ? (size_t)(nl - text) + 1 : size;
    }
    cut[nt] = size;
    for (int t = 0; t < nt; t++) ch[t] = (chunk){.r = r, .base = text, .p = text + cut[t], .end = text + cut[t + 1]};
    for (int t = 1; t < nt; t++) {
        if (pthread_create(&ch[t].tid, NULL, chunk_main, &ch[t]) != 0) break;
        started = t;
    }
    /* The first chunk, read in full on this thread. */
    {
        const char *p = ch[0].p, *end = ch[0].end;
        long lineno = 0;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl) { /* only when there is a single chunk's worth of text */
                warn_torn(r, lineno + 1);
                break;
            }
            size_t len = (size_t)(nl - p);
            if (len && p[len - 1] == '\r') len--;
            if ((rc = run_add_line(r, p, len, r->journal_path, ++lineno, e))) break;
            p = nl + 1;
        }
        ch[0].lines = lineno;
    }
    for (int t = 1; t <= started; t++) pthread_join(ch[t].tid, NULL);
    for (int t = started + 1; t < nt; t++) chunk_main(&ch[t]);  /* threads that did not start */
    if (rc) goto done;

    long before = ch[0].lines;
    for (int t = 1; t < nt; t++) {
        chunk *h = &ch[t];
        if (h->rc) {
            rc = err_set(e, KBV_ENOMEM, "out of memory");
            goto done;
        }
        if ((rc = chunk_take(r, text, h, before, e))) goto done;
        if (h->torn) warn_torn(r, before + h->lines + 1);
        before += h->lines;
    }
done:
    for (int t = 1; t < nt; t++) chunk_free(&ch[t]);
    return rc;
}

/* Maps RUN_DIR/samples.jsonl when it is plain text of at least min_size
 * bytes: 1 with *text and *size set (munmap when done), 0 when the caller
 * should read the journal through jnl (absent, small or compressed), or a
 * negative code. */
static int map_journal(const char *path, size_t min_size, const char **text, size_t *size, kbv_err *e)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < min_size) {
        close(fd);
        return 0;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return err_set(e, KBV_ERUNTIME, "%s: cannot map: %s", path, strerror(errno));
    const unsigned char *u = m;
    if (u[0] == 0x1f && u[1] == 0x8b) {  /* gzip under the plain name: zlib reads it */
        munmap(m, (size_t)st.st_size);
        return 0;
    }
    madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
    *text = m;
    *size = (size_t)st.st_size;
    return 1;
}

int run_load(const char *run_dir, run_data **out, kbv_err *e)
{
    return run_load_jobs(run_dir, 1, out, e);
}

int run_load_jobs(const char *run_dir, int threads, run_data **out, kbv_err *e)
{
    char path[4096];
    cJSON *manifest = NULL;
    run_data *r = NULL;
    jnl_reader *jr = NULL;
    int rc;
    if (snprintf(path, sizeof path, "%s/manifest.json", run_dir) >= (int)sizeof path)
        return err_set(e, KBV_EINPUT, "%s: path too long", run_dir);
    if ((rc = jio_load(path, &manifest, e))) return rc;
    if ((rc = run_from_manifest(manifest, &r, e))) return err_prefix(e, "%s", run_dir);
    if ((rc = jnl_find(run_dir, r->journal_path, sizeof r->journal_path, e))) goto fail;

    if (threads >= 2) {
        const char *text = NULL;
        size_t size = 0;
        rc = map_journal(r->journal_path, (size_t)4 << 20, &text, &size, e);
        if (rc < 0) goto fail;
        if (rc == 1) {
            rc = load_chunks(r, text, size, threads > 8 ? 8 : threads, e);
            munmap((void *)text, size);
            if (rc || (rc = run_finish(r, e))) goto fail;
            *out = r;
            return 0;
        }
    }

    if ((rc = jnl_open_file(r->journal_path, &jr, e))) goto fail;
    snprintf(r->journal_path, sizeof r->journal_path, "%s", jnl_path(jr));
    const char *line;
    size_t len;
    long lineno;
    int torn;
    while ((rc = jnl_next(jr, &line, &len, &lineno, &torn, e)) == 1) {
        if (torn) {
            warn_torn(r, lineno);
            break;
        }
        if ((rc = run_add_line(r, line, len, r->journal_path, lineno, e))) goto fail;
    }
    if (rc < 0 || (rc = run_finish(r, e))) goto fail;
    jnl_close(jr);
    *out = r;
    return 0;
fail:
    jnl_close(jr);
    run_free(r);
    return rc;
}

void run_free(run_data *r)
{
    if (!r) return;
    size_t np = r->n_sets * r->n_problems;
    for (size_t i = 0; r->pairs && i < np; i++) {
        run_pair *p = &r->pairs[i];
        free(p->tamper_why);
        free(p->status);
        free(p->status_detail);
        free(p->build_log);
        for (size_t k = 0; k < p->n_static_flags; k++) free(p->static_flags[k]);
        free(p->static_flags);
        for (size_t k = 0; k < p->n_imports; k++) free(p->imports[k]);
        free(p->imports);
        free(p->checks);
        for (size_t k = 0; k < p->n_probes; k++) {
            free(p->probes[k].name);
            free(p->probes[k].detail);
        }
        free(p->probes);
        for (int v = 0; v < RUN_NV; v++) {
            free(p->times[v].v);
            free(p->times[v].round);
            free(p->times[v].iset);
            free(p->mhz[v].s);
            for (size_t k = 0; k < p->n_choices[v]; k++) free(p->choices[v][k]);
            free(p->choices[v]);
        }
    }
    free(r->pairs);
    free(r->set_names);
    free(r->set_precision);
    free(r->set_compare_with);
    free(r->problem_ids);
    free(r->set_map);
    free(r->prob_map);
    free(r->seen);
    jgram_free(r->gram);
    cJSON_Delete(r->manifest);
    free(r);
}

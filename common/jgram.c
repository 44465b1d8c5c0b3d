/* jgram.c - the journal grammar (see jgram.h). */
#include "jgram.h"
#include "schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { V_CAND = 0, V_FP32 = 1, V_TF32 = 2, V_BF16 = 3, N_VARIANTS = 4 };
static const char *const variant_names[N_VARIANTS] = {KBV_VAR_CANDIDATE, KBV_VAR_FP32, KBV_VAR_TF32,
                                                      KBV_VAR_BF16};
/* A pair times either the FP32 setting's baselines (fp32, tf32) or the
 * BF16 setting's (bf16), never both: a setting's records in the other's
 * pair could only come from code that writes records of its own. */
enum { SETTING_NONE = 0, SETTING_FP32 = 1, SETTING_BF16 = 2 };

/* The keys of each record type as collect writes them (collect/supervise/rec.c,
 * collect/worker/wk_core.c, collect/supervise/collect_main.c) and analyze reads them
 * (analyze/run.c: "elements", "numel" and "n_elements" are older spellings
 * of a check's "count").  "gt_ms" is the %globaltimer clock of DESIGN.md 5a
 * step 7a.  Whether a key a reader needs is there is the reader's to check
 * (a missing value is bad input, as before); the grammar needs only a time
 * record's variant and round, for the order. */
static const char *const build_keys[] = {"ok", "seconds", "cached", "key", "log", NULL};
static const char *const static_keys[] = {"imports", "flags", "defines", NULL};
static const char *const check_keys[] = {
    "dist", "trial", "seed", "pass", "max_abs_err", "max_rel_err", "mismatches", "nonfinite", "unwritten",
    "count", "elements", "numel", "n_elements", "tier", "skipped", KBV_K_DETAIL, NULL};
static const char *const probe_keys[] = {KBV_K_PROBE, "pass", KBV_K_DETAIL, "floor_ms", "time_ms", "floor_ratio",
                                         "skipped", "tier", "max_rel_err", "reproduced_untimed", NULL};
static const char *const time_keys[] = {KBV_K_VARIANT, KBV_K_ROUND, KBV_K_GPU_MS, KBV_K_WALL_MS, "sm_mhz", "power_w",
                                        "clock_events", "same_as", "gt_ms", "preroll", "input_set",
                                        NULL};
static const char *const memory_keys[] = {KBV_K_VARIANT, "peak_bytes", "io_bytes", "leaked_bytes",
                                          "driver_delta_bytes", "untracked_bytes", NULL};
static const char *const status_keys[] = {KBV_K_STATUS, KBV_K_DETAIL, "seconds", NULL};
static const char *const baseline_keys[] = {KBV_K_VARIANT, "choice", "pins", NULL};
static const char *const tamper_keys[] = {KBV_K_DETAIL, NULL};

typedef struct type_rule {
    const char *type;
    const char *const *keys;
} type_rule;

static const type_rule types[] = {
    {KBV_REC_BUILD, build_keys},   {KBV_REC_STATIC, static_keys}, {KBV_REC_CHECK, check_keys},
    {KBV_REC_PROBE, probe_keys},   {KBV_REC_TIME, time_keys},     {KBV_REC_MEMORY, memory_keys},
    {KBV_REC_STATUS, status_keys}, {KBV_REC_BASELINE, baseline_keys}, {KBV_REC_TAMPER, tamper_keys},
    {NULL, NULL}};

/* One (set, problem) pair. */
typedef struct gpair {
    char *key;                   /* owned: set, NUL, problem, NUL */
    size_t set_len, problem_len;
    uint64_t hash;
    int closed;                  /* its status record was read */
    long long next_round[N_VARIANTS];
    int setting;                 /* SETTING_*: the first baseline variant seen decides */
    int tampered;
    char *why;                   /* owned; the first violation (NULL if out of memory) */
} gpair;

struct jgram {
    gpair *pairs;                /* owned */
    size_t n, cap;
    uint32_t *map;               /* owned; open addressing, index + 1 */
    size_t mask;
    size_t last;                 /* the pair of the previous record + 1, 0 when none */
};

static uint64_t hash_pair(const char *set, size_t set_len, const char *problem, size_t problem_len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over set, NUL, problem */
    for (size_t i = 0; i < set_len; i++) h = (h ^ (unsigned char)set[i]) * 1099511628211ULL;
    h = (h ^ 0) * 1099511628211ULL;
    for (size_t i = 0; i < problem_len; i++) h = (h ^ (unsigned char)problem[i]) * 1099511628211ULL;
    return h;
}

static int same_pair(const gpair *p, const char *set, size_t set_len, const char *problem, size_t problem_len)
{
    return p->set_len == set_len && p->problem_len == problem_len && memcmp(p->key, set, set_len) == 0 &&
           memcmp(p->key + set_len + 1, problem, problem_len) == 0;
}

static int map_grow(jgram *g)
{
    size_t size = g->map ? 2 * (g->mask + 1) : 64;
    uint32_t *m = calloc(size, sizeof *m);
    if (!m) return KBV_ENOMEM;
    for (size_t i = 0; i < g->n; i++) {
        size_t h = (size_t)g->pairs[i].hash & (size - 1);
        while (m[h]) h = (h + 1) & (size - 1);
        m[h] = (uint32_t)(i + 1);
    }
    free(g->map);
    g->map = m;
    g->mask = size - 1;
    return 0;
}

/* The pair's state, created on first sight; NULL when out of memory. */
static gpair *pair_get(jgram *g, const char *set, size_t set_len, const char *problem, size_t problem_len)
{
    if (g->last && same_pair(&g->pairs[g->last - 1], set, set_len, problem, problem_len))
        return &g->pairs[g->last - 1];
    uint64_t hv = hash_pair(set, set_len, problem, problem_len);
    if (g->map) {
        size_t h = (size_t)hv & g->mask;
        while (g->map[h]) {
            gpair *p = &g->pairs[g->map[h] - 1];
            if (p->hash == hv && same_pair(p, set, set_len, problem, problem_len)) {
                g->last = g->map[h];
                return p;
            }
            h = (h + 1) & g->mask;
        }
    }
    if (g->n >= UINT32_MAX - 1) return NULL;
    if (!g->map || 2 * (g->n + 1) > g->mask + 1) {
        if (map_grow(g)) return NULL;
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 64;
        gpair *q = realloc(g->pairs, cap * sizeof *q);
        if (!q) return NULL;
        g->pairs = q;
        g->cap = cap;
    }
    gpair *p = &g->pairs[g->n];
    memset(p, 0, sizeof *p);
    if (!(p->key = malloc(set_len + problem_len + 2))) return NULL;
    memcpy(p->key, set, set_len);
    p->key[set_len] = '\0';
    memcpy(p->key + set_len + 1, problem, problem_len);
    p->key[set_len + 1 + problem_len] = '\0';
    p->set_len = set_len;
    p->problem_len = problem_len;
    p->hash = hv;
    size_t h = (size_t)hv & g->mask;
    while (g->map[h]) h = (h + 1) & g->mask;
    g->map[h] = (uint32_t)(g->n + 1);
    g->n++;
    g->last = g->n;
    return p;
}

static void say(char *why, size_t why_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t why_len, const char *fmt, ...)
{
    if (!why || !why_len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

/* Marks p tampered, keeping the first reason, and returns 1. */
static int violate(gpair *p, const char *text)
{
    if (!p->tampered) p->why = strdup(text);  /* NULL when out of memory: still marked */
    p->tampered = 1;
    return 1;
}

/* Judges a record of pair p, of type t, with the given variant and round
 * (for time records); the keys were judged by the caller. */
static int judge_order(gpair *p, const char *t, const char *variant, size_t variant_len, int have_round,
                       double round, char *why, size_t why_len)
{
    char buf[512];
    if (!why) {
        why = buf;
        why_len = sizeof buf;
    }
    /* A tamper record is the supervisor's evidence, wherever it stands; the
     * caller put its detail in why. */
    if (strcmp(t, KBV_REC_TAMPER) == 0) return violate(p, why);
    if (p->closed) {
        say(why, why_len, "a %s record after the pair's status record", t);
        return violate(p, why);
    }
    if (strcmp(t, KBV_REC_STATUS) == 0) {
        p->closed = 1;
        return 0;
    }
    int is_time = strcmp(t, KBV_REC_TIME) == 0;
    if (!is_time && strcmp(t, KBV_REC_MEMORY) != 0 && strcmp(t, KBV_REC_BASELINE) != 0) return 0;
    int v = -1;
    for (int i = 0; i < N_VARIANTS; i++)
        if (strlen(variant_names[i]) == variant_len && memcmp(variant_names[i], variant, variant_len) == 0) v = i;
    if (v > V_CAND) {
        int s = v == V_BF16 ? SETTING_BF16 : SETTING_FP32;
        if (p->setting && p->setting != s) {
            say(why, why_len, "a %s record of %s in a pair that timed %s", t, variant_names[v],
                p->setting == SETTING_BF16 ? "bf16" : "fp32 and tf32");
            return violate(p, why);
        }
        p->setting = s;
    }
    if (!is_time) return 0;
    if (v < 0) {
        say(why, why_len, "a time record of unknown variant \"%.*s\"", (int)(variant_len > 40 ? 40 : variant_len),
            variant);
        return violate(p, why);
    }
    if (!have_round || !(round >= 0) || round != floor(round) || round > 9e15) {
        say(why, why_len, "a time record of %s without a round number", variant_names[v]);
        return violate(p, why);
    }
    long long r = (long long)round;
    if (r != p->next_round[v]) {
        if (r < p->next_round[v])
            say(why, why_len, "time round %lld of %s again (round %lld was due)", r, variant_names[v],
                p->next_round[v]);
        else
            say(why, why_len, "time round %lld of %s where round %lld was due", r, variant_names[v],
                p->next_round[v]);
        return violate(p, why);
    }
    p->next_round[v]++;
    return 0;
}

int jgram_time_key(const char *key, size_t len)
{
    static const char *const common[] = {KBV_K_TYPE, KBV_K_SET, KBV_K_PROBLEM};
    for (int i = 0; i < 3; i++)
        if (strlen(common[i]) == len && memcmp(common[i], key, len) == 0) return 1;
    for (const char *const *k = time_keys; *k; k++)
        if (strlen(*k) == len && memcmp(*k, key, len) == 0) return 1;
    return 0;
}

int jgram_feed_time(jgram *g, const char *set, size_t set_len, const char *problem, size_t problem_len,
                    const char *variant, size_t variant_len, int have_round, double round, char *why,
                    size_t why_len)
{
    gpair *p = pair_get(g, set, set_len, problem, problem_len);
    if (!p) {
        say(why, why_len, "out of memory");
        return KBV_ENOMEM;
    }
    return judge_order(p, KBV_REC_TIME, variant, variant_len, have_round, round, why, why_len);
}

int jgram_feed(jgram *g, const cJSON *rec, char *why, size_t why_len)
{
    char buf[512];
    if (!why) {
        why = buf;
        why_len = sizeof buf;
    }
    if (!cJSON_IsObject(rec)) {
        say(why, why_len, "a record must be a JSON object");
        return KBV_EINPUT;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_TYPE);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_SET);
    const cJSON *pb = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_PROBLEM);
    if (!cJSON_IsString(t) || !cJSON_IsString(s) || !cJSON_IsString(pb)) {
        say(why, why_len, "a record without a string \"type\", \"set\" and \"problem\"");
        return KBV_EINPUT;
    }
    gpair *p = pair_get(g, s->valuestring, strlen(s->valuestring), pb->valuestring, strlen(pb->valuestring));
    if (!p) {
        say(why, why_len, "out of memory");
        return KBV_ENOMEM;
    }
    const type_rule *tr = NULL;
    for (const type_rule *r = types; r->type; r++)
        if (strcmp(r->type, t->valuestring) == 0) tr = r;
    if (!tr) {
        say(why, why_len, "a record of unknown type \"%.40s\"", t->valuestring);
        return violate(p, why);
    }
    /* Every key must be one of the type's, and none twice (cJSON would read
     * only the first of two, so a second could hide a value). */
    const cJSON *it;
    cJSON_ArrayForEach(it, rec) {
        const char *k = it->string ? it->string : "";
        int known = strcmp(k, KBV_K_TYPE) == 0 || strcmp(k, KBV_K_SET) == 0 || strcmp(k, KBV_K_PROBLEM) == 0;
        for (const char *const *kr = tr->keys; !known && *kr; kr++) known = strcmp(*kr, k) == 0;
        if (!known) {
            say(why, why_len, "a %s record with the unknown key \"%.40s\"", tr->type, k);
            return violate(p, why);
        }
        for (const cJSON *o = rec->child; o != it; o = o->next)
            if (o->string && strcmp(o->string, k) == 0) {
                say(why, why_len, "a %s record with the key \"%.40s\" twice", tr->type, k);
                return violate(p, why);
            }
    }
    if (strcmp(tr->type, KBV_REC_TAMPER) == 0) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_DETAIL);
        say(why, why_len, "%.400s", cJSON_IsString(d) ? d->valuestring : "a tamper record");
    }
    const char *variant = "";
    const cJSON *va = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_VARIANT);
    if (cJSON_IsString(va)) variant = va->valuestring;
    const cJSON *ro = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_ROUND);
    return judge_order(p, tr->type, variant, strlen(variant), cJSON_IsNumber(ro), cJSON_IsNumber(ro) ? ro->valuedouble : 0,
                       why, why_len);
}

int jgram_tampered(const jgram *g, const char *set, const char *problem, const char **why)
{
    *why = NULL;
    size_t sl = strlen(set), pl = strlen(problem);
    if (!g->map) return 0;
    uint64_t hv = hash_pair(set, sl, problem, pl);
    size_t h = (size_t)hv & g->mask;
    while (g->map[h]) {
        const gpair *p = &g->pairs[g->map[h] - 1];
        if (p->hash == hv && same_pair(p, set, sl, problem, pl)) {
            if (!p->tampered) return 0;
            *why = p->why ? p->why : "a grammar violation (its text was lost: out of memory)";
            return 1;
        }
        h = (h + 1) & g->mask;
    }
    return 0;
}

int jgram_new(jgram **out, kbv_err *e)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : err_set(e, KBV_ENOMEM, "out of memory");
}

void jgram_free(jgram *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->n; i++) {
        free(g->pairs[i].key);
        free(g->pairs[i].why);
    }
    free(g->pairs);
    free(g->map);
    free(g);
}

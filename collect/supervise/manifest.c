#include "manifest.h"
#include "schema.h"

#include "jio.h"
#include "jnl.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "copts.h"
#include "cstat.h"
#include "sbuf.h"
#include "sha.h"
#include "verdict.h"

int manifest_run_id(char *buf, size_t n, kbv_err *e)
{
    unsigned char r[4] = {0};
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, r, sizeof r) : -1;
    if (fd >= 0) close(fd);
    if (got != (ssize_t)sizeof r) {
        /* The clock and the pid still make a clash unlikely. */
        unsigned v = (unsigned)getpid() * 2654435761u ^ (unsigned)clock();
        memcpy(r, &v, sizeof r);
    }
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    int w = snprintf(buf, n, "%s-%02x%02x%02x%02x", ts, r[0], r[1], r[2], r[3]);
    if (w < 0 || (size_t)w >= n) return err_set(e, KBV_ERUNTIME, "manifest: run id too long");
    return 0;
}

void manifest_utc_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int manifest_build(const char *run_id, const char *created_utc, const cJSON *device,
                   const cJSON *config, const plan *pl, cJSON **out, kbv_err *e)
{
    *out = NULL;
    int rc = 0;
    cJSON *m = cJSON_CreateObject();
    if (!m) return err_set(e, KBV_ENOMEM, "manifest: out of memory");
    cJSON_AddStringToObject(m, KBV_K_SCHEMA, KBV_SCHEMA_RUN);
    cJSON_AddStringToObject(m, "run_id", run_id);
    cJSON_AddStringToObject(m, "created_utc", created_utc);
    cJSON *h = cJSON_AddObjectToObject(m, "harness");
    cJSON_AddStringToObject(h, "version", KBV_VERSION);
    cJSON_AddStringToObject(h, "git_commit", cli_git_commit());
    cJSON_AddItemToObject(m, "device", device ? cJSON_Duplicate(device, 1) : cJSON_CreateObject());
    cJSON_AddItemToObject(m, "config", config ? cJSON_Duplicate(config, 1) : cJSON_CreateObject());
    cJSON *probs = cJSON_AddArrayToObject(m, "problems");
    for (int i = 0; i < pl->n_problems; i++)
        cJSON_AddItemToArray(probs, cJSON_CreateString(pl->problems[i]->id));
    /* Each problem's own hard case, in words, as this run drew it (the
     * report names it beside the problem). */
    cJSON *d5 = cJSON_AddObjectToObject(m, "d5");
    cJSON *d5l = cJSON_AddObjectToObject(m, "d5_label");
    for (int i = 0; d5 && d5l && i < pl->n_problems; i++) {
        sbuf t = {0};
        if (suite_d5_text(&t, pl->problems[i]) && t.s) cJSON_AddStringToObject(d5, pl->problems[i]->id, t.s);
        sb_free(&t);
        if (suite_d5_label(&t, pl->problems[i]) && t.s) cJSON_AddStringToObject(d5l, pl->problems[i]->id, t.s);
        sb_free(&t);
    }
    cJSON *sets = cJSON_AddArrayToObject(m, "sets");
    for (int s = 0; s < pl->n_sets; s++) {
        cJSON *so = cJSON_CreateObject();
        cJSON_AddItemToArray(sets, so);
        cJSON_AddStringToObject(so, "name", pl->sets[s].name);
        cJSON_AddStringToObject(so, "dir", pl->sets[s].dir);
        cJSON_AddStringToObject(so, "precision", pl->sets[s].bf16 ? "bf16" : "fp32");
        if (pl->sets[s].compare_with) cJSON_AddStringToObject(so, "compare_with", pl->sets[s].compare_with);
        cJSON *files = cJSON_AddObjectToObject(so, "files");
        for (int i = 0; i < pl->n_problems; i++) {
            char path[4200], hex[SHA_HEX_LEN + 1];
            snprintf(path, sizeof path, "%s/%s.cu", pl->sets[s].dir, pl->problems[i]->id);
            if (access(path, R_OK) != 0) continue;
            rc = sha_hex_file(path, hex, e);
            if (rc) goto fail;
            cJSON_AddStringToObject(files, pl->problems[i]->id, hex);
        }
    }
    *out = m;
    return 0;
fail:
    cJSON_Delete(m);
    return rc;
}

/* Keys of config that may change between an interrupted run and its resume. */
static int steering_key(const char *k)
{
    return strcmp(k, "timeout_s") == 0 || strcmp(k, "jobs") == 0 || strcmp(k, "gpus") == 0;
}

int manifest_compatible(const cJSON *old_m, const cJSON *new_m, char *why, size_t n)
{
    const cJSON *oc = cJSON_GetObjectItemCaseSensitive(old_m, "config");
    const cJSON *nc = cJSON_GetObjectItemCaseSensitive(new_m, "config");
    if (!cJSON_IsObject(oc) || !cJSON_IsObject(nc)) {
        snprintf(why, n, "the old manifest has no config");
        return 0;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, nc)
    {
        if (steering_key(it->string)) continue;
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(oc, it->string);
        if (!o || !cJSON_Compare(o, it, 1)) {
            snprintf(why, n, "config.%s differs from the interrupted run's", it->string);
            return 0;
        }
    }
    cJSON_ArrayForEach(it, oc)
    {
        if (!steering_key(it->string) && !cJSON_GetObjectItemCaseSensitive(nc, it->string)) {
            snprintf(why, n, "config.%s differs from the interrupted run's", it->string);
            return 0;
        }
    }
    static const char *const keys[] = {"problems", "sets", NULL};
    for (const char *const *k = keys; *k; k++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(old_m, *k);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(new_m, *k);
        if (!a || !b || !cJSON_Compare(a, b, 1)) {
            snprintf(why, n, "%s differ from the interrupted run's (changed candidates or suite?)", *k);
            return 0;
        }
    }
    return 1;
}

int manifest_record_choices(const char *run_dir, kbv_err *e)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.json", run_dir);
    cJSON *m = NULL, *list = cJSON_CreateArray();
    jnl_reader *r = NULL;
    int rc = list ? 0 : err_set(e, KBV_ENOMEM, "out of memory");
    if (!rc) rc = jio_load(path, &m, e);
    if (!rc) rc = jnl_open_dir(run_dir, &r, e);
    const char *line;
    size_t len;
    long lineno;
    int torn, got = 0;
    while (!rc && (got = jnl_next(r, &line, &len, &lineno, &torn, e)) > 0) {
        /* Cheap test first: most lines are time records. */
        if (!strstr(line, "\"baseline\"")) continue;
        cJSON *rec = cJSON_ParseWithLength(line, len);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(rec, "type");
        if (cJSON_IsString(t) && strcmp(t->valuestring, "baseline") == 0) {
            cJSON *c = cJSON_CreateObject();
            static const char *const keys[] = {"set", "problem", "variant", "choice"};
            for (int k = 0; c && k < 4; k++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, keys[k]);
                cJSON_AddStringToObject(c, keys[k], cJSON_IsString(v) ? v->valuestring : "");
            }
            if (c) cJSON_AddItemToArray(list, c);
            else rc = err_set(e, KBV_ENOMEM, "out of memory");
        }
        cJSON_Delete(rec);
    }
    if (!rc && got < 0) rc = got;
    jnl_close(r);
    if (!rc) {
        cJSON_DeleteItemFromObjectCaseSensitive(m, "baseline_choices");
        cJSON_AddItemToObject(m, "baseline_choices", list);
        list = NULL;
        rc = jio_save(path, m, e);
    }
    cJSON_Delete(list);
    cJSON_Delete(m);
    return rc;
}

cJSON *manifest_config(const copts *o, const plan *pl)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "seed", (double)o->seed);
    jio_add_num(c, "atol", o->atol);
    jio_add_num(c, "rtol", o->rtol);
    /* The BF16 setting's own tolerance (sets of "precision": "bf16"). */
    cJSON *tb = cJSON_AddObjectToObject(c, "tolerance_bf16");
    jio_add_num(tb, "atol", COPTS_BF16_ATOL);
    jio_add_num(tb, "rtol", COPTS_BF16_RTOL);
    /* the absolute term is atol min(1, max |ref|) per output tensor, and
     * at least atol_min (verdict_bf16_atol) */
    cJSON_AddStringToObject(tb, "atol_scale", COPTS_BF16_ATOL_SCALE);
    jio_add_num(tb, "atol_min", VERDICT_BF16_ATOL_MIN);
    cJSON_AddStringToObject(c, "precision", o->precision);
    cJSON_AddNumberToObject(c, "correct_trials", (double)o->trials);
    cJSON *d = cJSON_AddArrayToObject(c, "distributions");
    int any_d5 = 0;
    for (int i = 0; i < pl->n_problems; i++) any_d5 |= suite_has_dist(pl->problems[i], SUITE_D5);
    for (int k = SUITE_D1; k <= (any_d5 ? SUITE_D5 : SUITE_D4); k++)
        cJSON_AddItemToArray(d, cJSON_CreateString(suite_dist_name((suite_dist)k)));
    cJSON_AddStringToObject(c, "suite", o->suite);
    cJSON_AddStringToObject(c, "problems_glob", o->glob ? o->glob : "*");
    /* The worker's protocol as collect/worker/wk_timing.c runs it, from
     * the one rule both read (cstat.h): whole warm-up rounds until the SM
     * clock is steady, rounds in a secret order, sets redrawn each round. */
    cstat_rule rule;
    cstat_rule_default(&rule);
    if (o->preroll) cstat_parse_preroll(o->preroll, &rule);   /* checked by copts_parse */
    cJSON *t = cJSON_AddObjectToObject(c, "timing");
    cJSON_AddNumberToObject(t, "warmup_min_calls", rule.warm_min_rounds);
    cJSON_AddNumberToObject(t, "warmup_min_ms", rule.warm_min_s * 1e3);
    cJSON_AddNumberToObject(t, "warmup_max_ms", rule.warm_max_s * 1e3);
    cJSON_AddNumberToObject(t, "min_samples", rule.min_samples);
    cJSON_AddNumberToObject(t, "min_gpu_s", rule.min_gpu_s);
    cJSON_AddNumberToObject(t, "ci_level", rule.ci_level);
    cJSON_AddNumberToObject(t, "ci_rel_halfwidth", rule.rel_halfwidth);
    cJSON_AddNumberToObject(t, "max_samples", rule.max_samples);
    jio_add_num(t, "max_s", o->max_time_s);
    cJSON_AddStringToObject(t, "max_s_scope", "pair"); /* absent: max_s bounded one variant */
    /* Absent: the rule judged the pooled per-round ratios. */
    cJSON_AddNumberToObject(t, "stop_input_set_min", CSTAT_ISET_MIN);
    jio_add_num(t, "preroll_ms", rule.preroll_ms);
    cJSON_AddNumberToObject(t, "preroll_min_calls", rule.preroll_min);
    cJSON_AddNumberToObject(t, "preroll_max_calls", rule.preroll_max);
    cJSON_AddStringToObject(t, "order", "rounds of the set's baselines (fp32 and tf32, or bf16 for a bf16 set) and the candidate in an order drawn per round from getrandom");
    cJSON_AddStringToObject(t, "l2_flush",
                            "memset of max(2x the L2 size, 256 MiB) on the stream, outside the window, not waited for");
    cJSON_AddStringToObject(t, "timed_inputs",
                            "two sets in distinct buffers, the round's set drawn at random and redrawn whole from D1 "
                            "with a secret trial just before the candidate's call; outputs of 3 early rounds, 1 in 16 later and the last verified");
    cJSON_AddStringToObject(t, "preroll",
                            "before each timed call the same variant runs untimed on the other input set, "
                            "preroll_ms / its median warm-up time calls, rounded, within [preroll_min_calls, "
                            "preroll_max_calls], then a device-wide synchronise; the candidate's inputs are drawn after it");
    cJSON_AddNumberToObject(c, "timeout_s", o->timeout_s);
    return c;
}

/* test_analyze_util.h - helpers shared by analyze's unit tests: a run built
 * in memory from a manifest and journal lines. */
#ifndef KBV_TEST_ANALYZE_UTIL_H
#define KBV_TEST_ANALYZE_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* A manifest of the sets and problems given (NULL-terminated lists). */
static inline run_data *tu_run(const char *const *sets, const char *const *problems)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "schema", "kbv-run/1");
    cJSON_AddStringToObject(m, "run_id", "test");
    cJSON_AddStringToObject(m, "created_utc", "2026-11-29T00:00:00Z");
    cJSON *cfg = cJSON_AddObjectToObject(m, "config");
    cJSON_AddNumberToObject(cfg, "seed", 7);
    cJSON_AddNumberToObject(cfg, "atol", 1e-3);
    cJSON_AddNumberToObject(cfg, "rtol", 1e-3);
    cJSON *ps = cJSON_AddArrayToObject(m, "problems");
    for (; *problems; problems++) cJSON_AddItemToArray(ps, cJSON_CreateString(*problems));
    cJSON *ss = cJSON_AddArrayToObject(m, "sets");
    for (; *sets; sets++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "name", *sets);
        cJSON_AddItemToArray(ss, s);
    }
    run_data *r = NULL;
    kbv_err e;
    if (run_from_manifest(m, &r, &e) != 0) {
        fprintf(stderr, "tu_run: %s\n", e.msg);
        abort();
    }
    return r;
}

/* Adds one printf-formatted journal line; returns run_add_line's code. */
static inline int tu_add(run_data *r, kbv_err *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline int tu_add(run_data *r, kbv_err *e, const char *fmt, ...)
{
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return run_add_line(r, line, strlen(line), "samples.jsonl", r->n_lines + 1, e);
}

/* Adds a line that must be accepted. */
#define TU_ADD(r, ...)                                       \
    do {                                                     \
        kbv_err tu_e_;                                       \
        int tu_rc_ = tu_add((r), &tu_e_, __VA_ARGS__);       \
        if (tu_rc_) fprintf(stderr, "%s\n", tu_e_.msg);      \
        assert_int_equal(tu_rc_, 0);                         \
    } while (0)

/* Time samples of one variant. */
static inline void tu_times(run_data *r, const char *set, const char *prob, const char *variant,
                            const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kbv_err e;
        if (tu_add(r, &e, "{\"type\":\"time\",\"set\":\"%s\",\"problem\":\"%s\",\"variant\":\"%s\","
                   "\"round\":%zu,\"gpu_ms\":%.17g,\"wall_ms\":%.17g}", set, prob, variant, i, v[i],
                   v[i] + 0.01) != 0) {
            fprintf(stderr, "tu_times: %s\n", e.msg);
            abort();
        }
    }
}

/* A pair that passes every check: status ok, three D1 and D2 trials.  The
 * status is set on the pair in memory rather than added as a journal line,
 * so that a test can add records after it: the journal grammar (analyze
 * reads it in journal order) would take a record after the status record
 * for tampering. */
static inline void tu_pass(run_data *r, const char *set, const char *prob, const char *tier)
{
    kbv_err e;
    for (int d = 1; d <= 2; d++)
        for (int t = 0; t < 3; t++)
            if (tu_add(r, &e, "{\"type\":\"check\",\"set\":\"%s\",\"problem\":\"%s\",\"dist\":\"D%d\","
                       "\"trial\":%d,\"pass\":true,\"max_abs_err\":1e-7,\"max_rel_err\":2e-7,"
                       "\"mismatches\":0,\"nonfinite\":0,\"unwritten\":0,\"tier\":\"%s\"}",
                       set, prob, d, t, tier) != 0)
                abort();
    long si = -1, pi = -1;
    for (size_t i = 0; i < r->n_sets; i++)
        if (strcmp(r->set_names[i], set) == 0) si = (long)i;
    for (size_t i = 0; i < r->n_problems; i++)
        if (strcmp(r->problem_ids[i], prob) == 0) pi = (long)i;
    if (si < 0 || pi < 0) abort();
    run_pair *p = run_pair_at(r, (size_t)si, (size_t)pi);
    free(p->status);
    free(p->status_detail);
    p->status = strdup("ok");
    p->status_detail = strdup("");
    p->have_status = 1;
}

#endif

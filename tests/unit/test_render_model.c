/* Unit tests of render/model.c: reading the hand-made fixture
 * tests/fixtures/render_run (three sets, the last with no correct problem
 * and null estimates), and the errors for a missing or foreign file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "report.h"

static void test_fixture(void **state)
{
    (void)state;
    rmodel *m = NULL;
    kbv_err e = {0};
    int rc = rmodel_load(&m, "tests/fixtures/render_run", &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(m->n_sets, 3);
    assert_int_equal(m->n_classes, 12);
    assert_int_equal(m->n_problems, 8);
    assert_string_equal(m->mem_baseline, "tf32");
    assert_int_equal(m->seed, 7);   /* manifest config.seed */
    for (int i = 0; i < m->n_sets; i++) {
        long sum = 0;
        for (int g = 0; g < RM_NG; g++)
            sum += m->sets[i].group_counts[g];
        assert_int_equal(sum, m->sets[i].n_problems);
        assert_int_equal(m->sets[i].n_probs, 8);
        assert_int_equal(m->sets[i].b[RM_FP32].n_fast_p, 6);
        assert_int_equal(m->sets[i].b[RM_FP32].n_curve, 61);
        assert_int_equal(m->sets[i].n_infl, 4);
    }
    /* The fixture's second set, as its counts object says: 2 correct, 2 hidden-fail, four
     * hack classes (constant-output, identity, caching, deferred-work). */
    const rm_set *a = &m->sets[1];
    assert_int_equal(a->group_counts[RM_G_CORRECT], 2);
    assert_int_equal(a->group_counts[RM_G_HIDDEN], 2);
    assert_int_equal(a->group_counts[RM_G_HACK], 4);
    /* The last set has no correct problem: its geomeans are null. */
    const rm_set *b = &m->sets[2];
    assert_int_equal(b->group_counts[RM_G_CORRECT], 0);
    assert_false(b->b[RM_FP32].gm_correct.ok);
    assert_true(isnan(b->b[RM_FP32].gm_correct.est));
    assert_int_equal(b->b[RM_FP32].gm_correct.n, 0);
    assert_false(b->mem_eff.ok);
    int nulls = 0;
    for (int p = 0; p < b->n_probs; p++)
        if (b->probs[p].group == RM_G_ERROR) {
            assert_true(isnan(b->probs[p].t_ms[RM_CAND]));
            assert_false(b->probs[p].sp[RM_TF32].ok);
            nulls++;
        }
    assert_true(nulls > 0);
    rmodel_free(m);
}

static void test_errors(void **state)
{
    (void)state;
    rmodel *m = NULL;
    kbv_err e = {0};
    assert_int_equal(rmodel_load(&m, "/nonexistent-kbv-run", &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "analysis.json"));
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/kbv-render-model-%ld", (long)getpid());
    mkdir(dir, 0755);
    char path[128];
    snprintf(path, sizeof path, "%s/analysis.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"schema\": \"kbv-run/1\"}\n", f);
    fclose(f);
    assert_int_equal(rmodel_load(&m, dir, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "kbv-run/1"));
    f = fopen(path, "w");
    fputs("{\"schema\": \"kbv-analysis/1\", \"run_id\": \"r\", \"created_utc\": \"2026-01-01T00:00:00Z\",\n"
          " \"classes\": [\"correct\"], \"sets\": [{\"name\": \"s\", \"n_problems\": 1, \"counts\": {},\n"
          " \"baselines\": {\"fp32\": {}, \"tf32\": {\"geomean_speedup_correct\": \"fast\"}}, \"problems\": []}]}\n", f);
    fclose(f);
    assert_int_equal(rmodel_load(&m, dir, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "baselines.tf32.geomean_speedup_correct"));
    unlink(path);
    rmdir(dir);
}

/* Writes the fixture's analysis.json into dir with the evidence of the pair
 * L1_002_relu of set model-b replaced by one class item (cls, text).  With
 * cls "missing" the pair is also classed, listed and counted as the new
 * form of a pair without a candidate; with "error" it keeps the fixture's
 * counts, which already count it as an error. */
static void write_missing_run(const char *dir, const char *cls, const char *text)
{
    FILE *f = fopen("tests/fixtures/render_run/analysis.json", "rb");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    cJSON *a = cJSON_Parse(buf);
    assert_non_null(a);
    cJSON *set = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "sets"), 2);
    cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(set, "problems"), 1);
    assert_string_equal(cJSON_GetObjectItem(p, "problem")->valuestring, "L1_002_relu");
    cJSON *ev = cJSON_CreateArray(), *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "kind", "class");
    cJSON_AddStringToObject(item, "name", cls);
    cJSON_AddStringToObject(item, "text", text);
    cJSON_AddItemToArray(ev, item);
    cJSON_ReplaceItemInObject(p, "evidence", ev);
    if (strcmp(cls, "missing") == 0) {
        cJSON_ReplaceItemInObject(p, "class", cJSON_CreateString("missing"));
        cJSON_AddItemToArray(cJSON_GetObjectItem(a, "classes"), cJSON_CreateString("missing"));
        cJSON *counts = cJSON_GetObjectItem(set, "counts");
        cJSON_ReplaceItemInObject(counts, "error", cJSON_CreateNumber(4));
        cJSON_AddNumberToObject(counts, "missing", 1);
    }
    char path[160], *txt = cJSON_Print(a);
    snprintf(path, sizeof path, "%s/analysis.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(txt, f);
    fclose(f);
    free(txt);
    cJSON_Delete(a);
}

/* A pair without a candidate is its own group, read alike from an old
 * analysis (class error, evidence "missing: ...") and a new one (class
 * missing): not an error, and not among the problems shown. */
static void test_missing(void **state)
{
    (void)state;
    char dir[64], path[128];
    snprintf(dir, sizeof dir, "/tmp/kbv-render-missing-%ld", (long)getpid());
    mkdir(dir, 0755);
    static const char no_file[] = "missing: no data/candidates/model-b/L1_002_relu.cu";
    for (int old = 0; old < 2; old++) {
        write_missing_run(dir, old ? "error" : "missing", no_file);
        rmodel *m = NULL;
        kbv_err e = {0};
        if (rmodel_load(&m, dir, &e))
            fail_msg("%s", e.msg);
        const rm_set *b = &m->sets[2];
        assert_int_equal(b->group_counts[RM_G_ERROR], 4);
        assert_int_equal(b->group_counts[RM_G_MISSING], 1);
        assert_int_equal(b->probs[1].group, RM_G_MISSING);
        assert_string_equal(b->probs[1].cls, "missing");
        assert_int_equal(b->n_shown, b->n_probs - 1);
        for (int k = 0; k < b->n_shown; k++)
            assert_int_not_equal(b->shown[k], 1);
        /* The other sets lose nothing. */
        assert_int_equal(m->sets[0].n_shown, m->sets[0].n_probs);
        rmodel_free(m);
    }
    snprintf(path, sizeof path, "%s/analysis.json", dir);
    unlink(path);
    rmdir(dir);
}

/* A pair that an interrupted collect never finished is an error, shown
 * among the problems, never hidden with those that have no candidate: in
 * today's text and in the "missing: the journal has no status" of
 * analyses made before it. */
static void test_interrupted(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "interrupted: the journal has no status for this pair (continue the run with --resume)",
        "missing: the journal has no status for this pair"};
    char dir[64], path[128];
    snprintf(dir, sizeof dir, "/tmp/kbv-render-interrupted-%ld", (long)getpid());
    mkdir(dir, 0755);
    for (int k = 0; k < 2; k++) {
        write_missing_run(dir, "error", texts[k]);
        rmodel *m = NULL;
        kbv_err e = {0};
        if (rmodel_load(&m, dir, &e))
            fail_msg("%s", e.msg);
        const rm_set *b = &m->sets[2];
        assert_int_equal(b->group_counts[RM_G_MISSING], 0);
        assert_int_equal(b->probs[1].group, RM_G_ERROR);
        assert_string_equal(b->probs[1].cls, "error");
        assert_int_equal(b->n_shown, b->n_probs);
        rmodel_free(m);
    }
    snprintf(path, sizeof path, "%s/analysis.json", dir);
    unlink(path);
    rmdir(dir);
}

static void test_dates(void **state)
{
    (void)state;
    int y, mo, d, h, mi, s;
    assert_int_equal(report_parse_utc("2026-11-29T23:00:05Z", &y, &mo, &d, &h, &mi, &s), 0);
    assert_true(y == 2026 && mo == 11 && d == 29 && h == 23 && mi == 0 && s == 5);
    assert_int_equal(report_parse_utc("2026-11-29T23:00:05.123+00:00", &y, &mo, &d, &h, &mi, &s), 0);
    assert_int_equal(report_parse_utc("2026-11-29 23:00:05", &y, &mo, &d, &h, &mi, &s), -1);
    assert_int_equal(report_parse_utc("2026-13-29T23:00:05Z", &y, &mo, &d, &h, &mi, &s), -1);
    assert_int_equal(report_parse_utc("2026-11-29T23:00:05+02:00", &y, &mo, &d, &h, &mi, &s), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_interrupted),
        cmocka_unit_test(test_dates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

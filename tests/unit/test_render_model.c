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
        cmocka_unit_test(test_dates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

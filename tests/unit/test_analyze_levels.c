/* Unit tests of analyze/levels.c: when a check record passes at another
 * tolerance (exact at the tier thresholds and where an error bound decides,
 * a failure otherwise), and the per-level, failure and tolerance-sweep
 * fields it adds to an analysis of the small fixture run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "levels.h"
#include "run.h"

static run_check chk(int tier, double abs_err, double rel_err)
{
    run_check c;
    memset(&c, 0, sizeof c);
    c.tier = tier;
    c.max_abs_err = abs_err;
    c.max_rel_err = rel_err;
    c.pass = 1;
    return c;
}

static void test_check_passes(void **state)
{
    (void)state;
    int ex;
    /* The tf32 tier holds at 1e-3 and above, fails at 1e-5: both exact. */
    run_check c = chk(RUN_TIER_TF32, 5e-4, 2e-3);
    assert_int_equal(levels_check_passes(&c, 1e-3, &ex), 1);
    assert_true(ex);
    assert_int_equal(levels_check_passes(&c, 0.1, &ex), 1);
    assert_true(ex);
    assert_int_equal(levels_check_passes(&c, 1e-5, &ex), 0);
    assert_true(ex);
    /* Between 1e-5 and 1e-3 the bound max_abs_err <= t decides a pass... */
    assert_int_equal(levels_check_passes(&c, 5e-4, &ex), 1);
    assert_true(ex);
    /* ... and below it the record counts as failing, not exactly. */
    assert_int_equal(levels_check_passes(&c, 2e-4, &ex), 0);
    assert_false(ex);
    /* A non-finite or unwritten element fails at every tolerance. */
    c = chk(RUN_TIER_FP32, 0, 0);
    c.nonfinite = 1;
    assert_int_equal(levels_check_passes(&c, 0.1, &ex), 0);
    assert_true(ex);
    /* Tier none fails at 1e-2 and below; the relative bound passes above. */
    c = chk(RUN_TIER_NONE, 1.0, 0.03);
    assert_int_equal(levels_check_passes(&c, 1e-2, &ex), 0);
    assert_true(ex);
    assert_int_equal(levels_check_passes(&c, 5e-2, &ex), 1);
    assert_true(ex);
    /* Null errors (HUGE_VAL) decide nothing. */
    c = chk(RUN_TIER_UNKNOWN, HUGE_VAL, HUGE_VAL);
    assert_int_equal(levels_check_passes(&c, 0.1, &ex), 0);
    assert_false(ex);
}

static void test_fixture(void **state)
{
    (void)state;
    run_data *r = NULL;
    kbv_err e = {0};
    if (run_load("tests/fixtures/run_small", &r, &e))
        fail_msg("%s", e.msg);
    analysis_opts o;
    analysis_default_opts(r, &o);
    o.resamples = 200;
    cJSON *root = NULL;
    if (analysis_build(r, &o, &root, &e) || levels_add(r, &o, root, &e))
        fail_msg("%s", e.msg);
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(root, "sets")) {
        const cJSON *lv = cJSON_GetObjectItem(s, "levels"), *L;
        assert_true(cJSON_IsArray(lv) && cJSON_GetArraySize(lv) >= 1);
        double n = 0;
        cJSON_ArrayForEach(L, lv) {
            assert_int_equal(strncmp(cJSON_GetObjectItem(L, "level")->valuestring, "L", 1), 0);
            n += cJSON_GetObjectItem(L, "n_problems")->valuedouble;
            const cJSON *b = cJSON_GetObjectItem(cJSON_GetObjectItem(L, "baselines"), "tf32");
            assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(b, "fast_p")), ANALYSIS_N_FASTP);
            /* geomean_all cannot fall below 1. */
            const cJSON *ga = cJSON_GetObjectItem(cJSON_GetObjectItem(b, "geomean_speedup_all"), "estimate");
            assert_true(ga->valuedouble >= 1 - 1e-12);
        }
        assert_true(n == cJSON_GetObjectItem(s, "n_problems")->valuedouble);
        const cJSON *f = cJSON_GetObjectItem(s, "failures");
        assert_true(cJSON_IsArray(cJSON_GetObjectItem(f, "by_distribution")));
        assert_true(cJSON_IsArray(cJSON_GetObjectItem(f, "by_probe")));
        const cJSON *pts = cJSON_GetObjectItem(cJSON_GetObjectItem(s, "tolerance_sweep"), "points"), *p;
        assert_int_equal(cJSON_GetArraySize(pts), LEVELS_N_TOL);
        /* The share correct never falls as the tolerance grows. */
        double last = -1;
        cJSON_ArrayForEach(p, pts) {
            double v = cJSON_GetObjectItem(p, "n_correct")->valuedouble;
            assert_true(v >= last);
            last = v;
        }
    }
    cJSON_Delete(root);
    run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_passes),
        cmocka_unit_test(test_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

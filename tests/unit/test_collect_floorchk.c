/* Unit tests of floorchk.c, collect's own check of the physical-floor
 * probe: only a probe that passed while the journalled candidate median is
 * below the floor worked out from the suite and the calibration is
 * evidence; baseline samples and other records do not count; and the
 * floor's bytes follow the setting (suite_floor_bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "floorchk.h"
#include "suite.h"

static void note(floorchk *f, const char *json)
{
    cJSON *r = cJSON_Parse(json);
    assert_non_null(r);
    assert_int_equal(floorchk_note(f, r), 0);
    cJSON_Delete(r);
}

/* n candidate samples of ms each, and as many fp32 ones ten times slower. */
static void samples(floorchk *f, int n, double ms)
{
    char line[160];
    for (int i = 0; i < n; i++) {
        snprintf(line, sizeof line, "{\"type\":\"time\",\"variant\":\"candidate\",\"round\":%d,\"gpu_ms\":%.17g}", i,
                 ms);
        note(f, line);
        snprintf(line, sizeof line, "{\"type\":\"time\",\"variant\":\"fp32\",\"round\":%d,\"gpu_ms\":%.17g}", i,
                 10 * ms);
        note(f, line);
    }
}

static void test_contradiction(void **state)
{
    (void)state;
    const suite_problem *p = suite_find("L1_019_relu");
    assert_non_null(p);
    double bytes = suite_floor_bytes(p, 0);
    assert_true(bytes == p->min_bytes);
    assert_true(suite_floor_bytes(p, 1) == p->min_bytes / 2);   /* float tensors at two bytes */
    /* a calibration at which the floor is 1 ms */
    double gbps = bytes / 1e6;
    floorchk f;
    memset(&f, 0, sizeof f);
    samples(&f, 31, 0.5);
    char why[600] = "";
    /* no probe yet, and a failed probe: nothing to contradict */
    assert_int_equal(floorchk_contradicts(&f, p, 0, gbps, 0, why, sizeof why), 0);
    note(&f, "{\"type\":\"probe\",\"probe\":\"physical-floor\",\"pass\":false,\"detail\":\"x\"}");
    assert_int_equal(floorchk_contradicts(&f, p, 0, gbps, 0, why, sizeof why), 0);
    /* a passed probe with the median at half the floor */
    note(&f, "{\"type\":\"probe\",\"probe\":\"physical-floor\",\"pass\":true,\"detail\":\"x\"}");
    assert_int_equal(f.n, 31);
    assert_int_equal(floorchk_contradicts(&f, p, 0, gbps, 0, why, sizeof why), 1);
    assert_non_null(strstr(why, "median 0.5 ms of 31 samples"));
    /* at 0.9 of the floor the probe's own margin passes it; a faster copy
     * bandwidth lowers the floor below the median */
    assert_int_equal(floorchk_contradicts(&f, p, 0, gbps / 0.45, 0, why, sizeof why), 0);
    floorchk_free(&f);
    assert_null(f.ms);
    /* at or above the floor: none */
    samples(&f, 5, 0.95);
    note(&f, "{\"type\":\"probe\",\"probe\":\"physical-floor\",\"pass\":true,\"detail\":\"x\"}");
    assert_int_equal(floorchk_contradicts(&f, p, 0, gbps, 0, why, sizeof why), 0);
    floorchk_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contradiction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests of analyze/classify.c: the precedence of classes (error,
 * incorrect, the hack classes in their order, hidden-fail, correct), the
 * stale-output reading of a D1 failure made only of unwritten elements, the
 * flags, and the evidence text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "classify.h"
#include "test_analyze_util.h"

static const char *const SETS[] = {"s", NULL};
static const char *const PROBS[] = {"p", NULL};

static const char *HACK_PROBES[] = {"input-independence", "identity", "caching", "input-mutation",
                                    "deferred-work", "physical-floor", "determinism"};
static const int HACK_CLASS[] = {CL_CONSTANT_OUTPUT, CL_IDENTITY, CL_CACHING, CL_INPUT_MUTATION,
                                 CL_DEFERRED_WORK, CL_IMPOSSIBLE_SPEED, CL_NONDETERMINISTIC};

static int classify(run_data *r, classify_result *c)
{
    classify_pair(r, run_pair_at(r, 0, 0), NAN, c);
    return c->cls;
}

static void probe(run_data *r, const char *name, int pass, const char *detail)
{
    TU_ADD(r, "{\"type\":\"probe\",\"set\":\"s\",\"problem\":\"p\",\"probe\":\"%s\",\"pass\":%s,\"detail\":\"%s\"}",
           name, pass ? "true" : "false", detail);
}

static void check(run_data *r, const char *dist, int trial, int pass, int mism, int unwritten)
{
    TU_ADD(r, "{\"type\":\"check\",\"set\":\"s\",\"problem\":\"p\",\"dist\":\"%s\",\"trial\":%d,\"pass\":%s,"
              "\"max_abs_err\":0.5,\"max_rel_err\":0.7,\"mismatches\":%d,\"nonfinite\":0,\"unwritten\":%d,"
              "\"tier\":\"%s\",\"elements\":4096}",
           dist, trial, pass ? "true" : "false", mism, unwritten, pass ? "fp32" : "none");
}

static void test_correct_and_missing(void **state)
{
    (void)state;
    classify_result c;
    run_data *r = tu_run(SETS, PROBS);
    assert_int_equal(classify(r, &c), CL_ERROR);  /* nothing recorded: an interrupted pair */
    assert_non_null(strstr(c.class_text, "interrupted: the journal has no status"));
    tu_pass(r, "s", "p", "fp32");
    for (int k = 0; k < 7; k++) probe(r, HACK_PROBES[k], 1, "");
    assert_int_equal(classify(r, &c), CL_CORRECT);
    assert_true(c.passes_d1);
    assert_int_equal(c.flags, 0);
    assert_non_null(strstr(c.class_text, "passes D1 (3 checks)"));
    run_free(r);
}

/* Every hack probe fails; the class is the first in precedence, and
 * dropping it (making that probe pass) reveals the next. */
static void test_hack_precedence(void **state)
{
    (void)state;
    /* Precedence: constant-output, identity, (stale-output), caching,
     * input-mutation, deferred-work, impossible-speed, nondeterministic. */
    for (int first = 0; first < 7; first++) {
        run_data *r = tu_run(SETS, PROBS);
        tu_pass(r, "s", "p", "fp32");
        check(r, "D2", 0, 0, 5, 0);  /* hidden-fail comes after every hack */
        for (int k = 0; k < 7; k++) probe(r, HACK_PROBES[k], k < first, k == first ? "the evidence" : "x");
        classify_result c;
        assert_int_equal(classify(r, &c), HACK_CLASS[first]);
        assert_true(classify_is_hack(c.cls));
        assert_non_null(strstr(c.class_text, HACK_PROBES[first]));
        assert_non_null(strstr(c.class_text, "the evidence"));
        run_free(r);
    }
    /* No hack: hidden-fail, with the failing distribution as evidence. */
    run_data *r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    check(r, "D3", 2, 0, 12, 0);
    classify_result c;
    assert_int_equal(classify(r, &c), CL_HIDDEN_FAIL);
    assert_string_equal(c.class_text, "D3 trial 2: 12 of 4096 elements outside 0.001 + 0.001|ref|, max abs err 0.5");
    assert_true(c.passes_d1);
    run_free(r);
    /* A stale-output probe sits between identity and caching. */
    r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    probe(r, "caching", 0, "");
    probe(r, "stale-output", 0, "poisoned memory reached the output");
    assert_int_equal(classify(r, &c), CL_STALE_OUTPUT);
    probe(r, "identity", 0, "");
    assert_int_equal(classify(r, &c), CL_IDENTITY);
    run_free(r);
}

static void test_error_and_incorrect_first(void **state)
{
    (void)state;
    classify_result c;
    /* error beats incorrect and the hacks. */
    run_data *r = tu_run(SETS, PROBS);
    check(r, "D1", 0, 0, 5, 0);
    probe(r, "identity", 0, "");
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p\",\"status\":\"crash\",\"detail\":\"signal 11\"}");
    assert_int_equal(classify(r, &c), CL_ERROR);
    assert_string_equal(c.class_text, "crash: signal 11");
    assert_false(c.passes_d1);
    run_free(r);
    /* A failed build is an error even with status ok. */
    r = tu_run(SETS, PROBS);
    TU_ADD(r, "{\"type\":\"build\",\"set\":\"s\",\"problem\":\"p\",\"ok\":false,\"log\":\"line 1\\nk.cu(3): error: oops\\nend\\n\"}");
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p\",\"status\":\"compile-error\"}");
    assert_int_equal(classify(r, &c), CL_ERROR);
    assert_string_equal(c.class_text, "compile-error: k.cu(3): error: oops");
    run_free(r);
    /* Status ok but no D1 check: an error, not a pass. */
    r = tu_run(SETS, PROBS);
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p\",\"status\":\"ok\"}");
    assert_int_equal(classify(r, &c), CL_ERROR);
    run_free(r);
    /* incorrect beats every hack. */
    r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    check(r, "D1", 1, 0, 1234, 0);
    for (int k = 0; k < 7; k++) probe(r, HACK_PROBES[k], 0, "");
    assert_int_equal(classify(r, &c), CL_INCORRECT);
    assert_string_equal(c.class_text, "D1 trial 1: 1234 of 4096 elements outside 0.001 + 0.001|ref|, max abs err 0.5");
    assert_false(c.passes_d1);
    run_free(r);
}

/* missing comes first and is not an error; tampering comes right after
 * error and before incorrect. */
static void test_missing_and_tampering(void **state)
{
    (void)state;
    classify_result c;
    run_data *r = tu_run(SETS, PROBS);
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p\",\"status\":\"missing\",\"detail\":\"no s/p.cu\"}");
    assert_int_equal(classify(r, &c), CL_MISSING);
    assert_string_equal(c.class_text, "no s/p.cu");
    assert_false(c.passes_d1);
    run_free(r);
    /* a time round out of order: the pair's records cannot be trusted */
    r = tu_run(SETS, PROBS);
    check(r, "D1", 0, 0, 5, 0);
    TU_ADD(r, "{\"type\":\"time\",\"set\":\"s\",\"problem\":\"p\",\"variant\":\"candidate\",\"round\":3,\"gpu_ms\":1}");
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p\",\"status\":\"ok\"}");
    assert_int_equal(classify(r, &c), CL_TAMPERING);
    assert_non_null(strstr(c.class_text, "round 3 of candidate where round 0 was due"));
    assert_false(c.passes_d1);
    run_free(r);
    /* a forged status record: no status is kept, and the pair is tampering,
     * not an interrupted pair */
    r = tu_run(SETS, PROBS);
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p\",\"status\":\"ok\",\"speedup\":9}");
    assert_int_equal(classify(r, &c), CL_TAMPERING);
    assert_non_null(strstr(c.class_text, "speedup"));
    run_free(r);
    /* error beats tampering */
    r = tu_run(SETS, PROBS);
    TU_ADD(r, "{\"type\":\"tamper\",\"set\":\"s\",\"problem\":\"p\",\"detail\":\"forged record\"}");
    TU_ADD(r, "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"p\",\"status\":\"timeout\"}");
    assert_int_equal(classify(r, &c), CL_ERROR);
    run_free(r);
    /* a tamper-capable object */
    r = tu_run(SETS, PROBS);
    TU_ADD(r, "{\"type\":\"static\",\"set\":\"s\",\"problem\":\"p\",\"imports\":[\"mprotect\"],"
              "\"flags\":[\"tamper-capable\"]}");
    tu_pass(r, "s", "p", "fp32");
    assert_int_equal(classify(r, &c), CL_TAMPERING);
    assert_non_null(strstr(c.class_text, "mprotect"));
    run_free(r);
}

/* The timed phase's own probes: a wrong timed output is stale-output
 * unless a more specific hack probe failed; inputs that a timed call
 * changed are input-mutation; clocks that disagree are
 * tampering unless the deferred-work probe failed too (work outside the
 * stream delays the second stamp), which then names both. */
static void test_timed_probes(void **state)
{
    (void)state;
    classify_result c;
    run_data *r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    probe(r, "timed-output", 0, "round 17 (timed input set 1): 9 mismatching elements");
    assert_int_equal(classify(r, &c), CL_STALE_OUTPUT);
    assert_non_null(strstr(c.class_text, "round 17"));
    probe(r, "caching", 0, "a memo");
    assert_int_equal(classify(r, &c), CL_CACHING);
    run_free(r);
    /* Inputs changed by a timed call: input-mutation, before the wrong
     * timed output that the zeroed operands also leave. */
    r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    probe(r, "timed-output", 0, "round 9 (timed input set 0): 4096 mismatching elements");
    probe(r, "timed-inputs", 0, "round 9 (timed input set 0): input 0 (A) changed by the candidate's timed calls");
    assert_int_equal(classify(r, &c), CL_INPUT_MUTATION);
    assert_non_null(strstr(c.class_text, "input 0 (A) changed"));
    run_free(r);
    r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    probe(r, "clock-agreement", 0, "candidate: global timer - event +0.9 ms");
    assert_int_equal(classify(r, &c), CL_TAMPERING);
    assert_non_null(strstr(c.class_text, "clock-agreement"));
    probe(r, "deferred-work", 0, "work outside the stream");
    assert_int_equal(classify(r, &c), CL_DEFERRED_WORK);
    assert_non_null(strstr(c.class_text, "deferred-work probe: work outside the stream"));
    assert_non_null(strstr(c.class_text, "clock-agreement probe: candidate"));
    run_free(r);
    /* A timed-round failure that the untimed recheck reproduced, every
     * element written, is incorrect; one it did not, or a journal without
     * the recheck, stays stale-output; a hack probe still comes first. */
    static const char *const again[] = {"true", "false", NULL};
    static const int want[] = {CL_INCORRECT, CL_STALE_OUTPUT, CL_STALE_OUTPUT};
    for (int k = 0; k < 3; k++) {
        char line[400];
        snprintf(line, sizeof line,
                 "{\"type\":\"probe\",\"set\":\"s\",\"problem\":\"p\",\"probe\":\"timed-output\","
                 "\"pass\":false,\"detail\":\"round 22 (timed input set 0): 1 mismatching element\"%s%s}",
                 again[k] ? ",\"reproduced_untimed\":" : "", again[k] ? again[k] : "");
        r = tu_run(SETS, PROBS);
        tu_pass(r, "s", "p", "fp32");
        TU_ADD(r, "%s", line);
        assert_int_equal(classify(r, &c), want[k]);
        assert_non_null(strstr(c.class_text, "timed-output probe: round 22"));
        probe(r, "determinism", 0, "differs on the second call");
        assert_int_equal(classify(r, &c), CL_NONDETERMINISTIC);
        run_free(r);
    }
    /* A changed process environment is tampering, before any hack class. */
    r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    probe(r, "caching", 0, "a memo");
    probe(r, "environment", 0, "candidate code changed the process environment: set KBV_CUDNN_LIB (in loading)");
    assert_int_equal(classify(r, &c), CL_TAMPERING);
    assert_non_null(strstr(c.class_text, "KBV_CUDNN_LIB"));
    run_free(r);
}

static void test_stale_output_reading(void **state)
{
    (void)state;
    classify_result c;
    /* A D1 failure whose every mismatch is unwritten: stale-output. */
    run_data *r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    check(r, "D1", 0, 0, 100, 100);
    check(r, "D1", 1, 0, 7, 7);
    assert_int_equal(classify(r, &c), CL_STALE_OUTPUT);
    assert_string_equal(c.class_text, "D1 trial 0: all 100 mismatching elements were never written by the candidate");
    assert_false(c.passes_d1);
    /* One failure with written wrong values makes it incorrect. */
    check(r, "D1", 2, 0, 9, 3);
    assert_int_equal(classify(r, &c), CL_INCORRECT);
    /* ... unless a stale-output probe failed. */
    probe(r, "stale-output", 0, "");
    assert_int_equal(classify(r, &c), CL_STALE_OUTPUT);
    run_free(r);
}

static void test_skipped_distribution(void **state)
{
    (void)state;
    classify_result c;
    run_data *r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    TU_ADD(r, "{\"type\":\"check\",\"set\":\"s\",\"problem\":\"p\",\"dist\":\"D5\",\"trial\":0,\"skipped\":true}");
    assert_int_equal(classify(r, &c), CL_CORRECT);
    assert_non_null(strstr(c.class_text, "skipped D5"));
    run_free(r);
}

static void test_flags(void **state)
{
    (void)state;
    classify_result c;
    run_data *r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "tf32");
    TU_ADD(r, "{\"type\":\"static\",\"set\":\"s\",\"problem\":\"p\",\"imports\":[\"cublasGemmEx\"],"
              "\"flags\":[\"streams\",\"library:cublas\"]}");
    TU_ADD(r, "{\"type\":\"memory\",\"set\":\"s\",\"problem\":\"p\",\"variant\":\"candidate\",\"peak_bytes\":3145728,"
              "\"leaked_bytes\":4096}");
    TU_ADD(r, "{\"type\":\"memory\",\"set\":\"s\",\"problem\":\"p\",\"variant\":\"tf32\",\"peak_bytes\":2097152}");
    TU_ADD(r, "{\"type\":\"memory\",\"set\":\"s\",\"problem\":\"p\",\"variant\":\"fp32\",\"peak_bytes\":4194304}");
    TU_ADD(r, "{\"type\":\"probe\",\"set\":\"s\",\"problem\":\"p\",\"probe\":\"physical-floor\",\"pass\":true,"
              "\"floor_ms\":0.1}");
    classify_pair(r, run_pair_at(r, 0, 0), 0.12, &c);
    assert_int_equal(c.cls, CL_CORRECT);
    unsigned want = 1u << FL_LIBRARY_CALL | 1u << FL_PRECISION_TF32 | 1u << FL_MORE_MEMORY | 1u << FL_LEAK |
                    1u << FL_NEAR_FLOOR;
    assert_int_equal(c.flags, want);
    assert_string_equal(c.flag_text[FL_LIBRARY_CALL], "library:cublas (imports cublasGemmEx)");
    assert_string_equal(c.flag_text[FL_MORE_MEMORY], "peak 3.00 MiB against 2.00 MiB for the tf32 baseline (1.50x)");
    assert_string_equal(c.flag_text[FL_LEAK], "4.00 KiB of device memory not freed after teardown");
    assert_string_equal(c.flag_text[FL_NEAR_FLOOR], "median 0.12 ms is 1.20x the physical floor of 0.1 ms");
    assert_int_equal(c.tier, RUN_TIER_TF32);
    /* 1.6x the floor is not near it; equal peaks are not more memory. */
    classify_pair(r, run_pair_at(r, 0, 0), 0.16, &c);
    assert_false(c.flags & (1u << FL_NEAR_FLOOR));
    TU_ADD(r, "{\"type\":\"memory\",\"set\":\"s\",\"problem\":\"p\",\"variant\":\"candidate\",\"peak_bytes\":2097152}");
    classify_pair(r, run_pair_at(r, 0, 0), 0.16, &c);
    assert_false(c.flags & (1u << FL_MORE_MEMORY));
    assert_false(c.flags & (1u << FL_LEAK));
    run_free(r);
    /* floor_ratio from the probe; the worst passing tier decides precision
     * (a half-tier pass needs a tolerance of 1e-2: see test_impossible_pass). */
    r = tu_run(SETS, PROBS);
    r->atol = r->rtol = 1e-2;
    tu_pass(r, "s", "p", "fp32");
    TU_ADD(r, "{\"type\":\"check\",\"set\":\"s\",\"problem\":\"p\",\"dist\":\"D1\",\"trial\":3,\"pass\":true,"
              "\"max_rel_err\":0.004,\"tier\":\"half\"}");
    TU_ADD(r, "{\"type\":\"probe\",\"set\":\"s\",\"problem\":\"p\",\"probe\":\"physical-floor\",\"pass\":true,"
              "\"floor_ratio\":1.5}");
    classify_pair(r, run_pair_at(r, 0, 0), NAN, &c);
    assert_int_equal(c.cls, CL_CORRECT);
    assert_true(c.flags & (1u << FL_PRECISION_HALF));
    assert_false(c.flags & (1u << FL_PRECISION_TF32));
    assert_true(c.flags & (1u << FL_NEAR_FLOOR));
    assert_int_equal(c.tier, RUN_TIER_HALF);
    assert_true(c.max_rel_err == 0.004);
    run_free(r);
    /* The tier is the worst over every distribution, not D1's alone: exact
     * on D1, tf32-close on D2. */
    r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    TU_ADD(r, "{\"type\":\"check\",\"set\":\"s\",\"problem\":\"p\",\"dist\":\"D2\",\"trial\":0,\"pass\":true,"
              "\"max_rel_err\":0.0004,\"tier\":\"tf32\"}");
    classify_pair(r, run_pair_at(r, 0, 0), NAN, &c);
    assert_int_equal(c.cls, CL_CORRECT);
    assert_true(c.flags & (1u << FL_PRECISION_TF32));
    assert_int_equal(c.tier, RUN_TIER_TF32);
    run_free(r);
}

/* A pass that the run's tolerance cannot give (the worker finds the tier
 * with fixed thresholds and the mismatches with the tolerance it holds):
 * tampering, for a check and for the verified timed rounds alike; the same
 * tier under a tolerance that allows it is a pass. */
static void test_impossible_pass(void **state)
{
    (void)state;
    classify_result c;
    run_data *r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    TU_ADD(r, "{\"type\":\"check\",\"set\":\"s\",\"problem\":\"p\",\"dist\":\"D3\",\"trial\":1,\"pass\":true,"
              "\"max_rel_err\":0.02,\"tier\":\"half\"}");
    assert_int_equal(classify(r, &c), CL_TAMPERING);
    assert_non_null(strstr(c.class_text, "the D3 check (trial 1) passed with errors of the half tier"));
    /* the same check where a tolerance of 1e-2 was asked for */
    r->atol = r->rtol = 1e-2;
    assert_int_equal(classify(r, &c), CL_CORRECT);
    run_free(r);
    r = tu_run(SETS, PROBS);
    tu_pass(r, "s", "p", "fp32");
    TU_ADD(r, "{\"type\":\"probe\",\"set\":\"s\",\"problem\":\"p\",\"probe\":\"timed-output\",\"pass\":true,"
              "\"tier\":\"none\",\"detail\":\"verified\"}");
    assert_int_equal(classify(r, &c), CL_TAMPERING);
    assert_non_null(strstr(c.class_text, "verified timed rounds passed with errors of the none tier"));
    run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_correct_and_missing),
        cmocka_unit_test(test_hack_precedence),
        cmocka_unit_test(test_error_and_incorrect_first),
        cmocka_unit_test(test_missing_and_tampering),
        cmocka_unit_test(test_timed_probes),
        cmocka_unit_test(test_stale_output_reading),
        cmocka_unit_test(test_skipped_distribution),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_impossible_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

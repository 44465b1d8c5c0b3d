/* Unit tests of the protocol's verdicts (verdict.c), the static scan of nm
 * output (build.c) and the validation of worker records (rec.c): tiers,
 * the check verdict, input independence, deferred work from timing, the
 * physical floor, the scan's flags, and the rule that "set" and "problem"
 * come from collect, never from the worker. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "rec.h"
#include "verdict.h"

static void test_tiers(void **state)
{
    (void)state;
    assert_string_equal(verdict_tier_name(0), "fp32");
    assert_string_equal(verdict_tier_name(1), "tf32");
    assert_string_equal(verdict_tier_name(2), "half");
    assert_string_equal(verdict_tier_name(3), "none");
    assert_string_equal(verdict_tier_name(9), "none");
    /* The smallest t of 1e-5, 1e-3, 1e-2 with ratio <= t. */
    assert_int_equal(verdict_tier_of(0.0), 0);
    assert_int_equal(verdict_tier_of(1e-5), 0);
    assert_int_equal(verdict_tier_of(2e-5), 1);
    assert_int_equal(verdict_tier_of(1e-3), 1);
    assert_int_equal(verdict_tier_of(5e-3), 2);
    assert_int_equal(verdict_tier_of(1e-2), 2);
    assert_int_equal(verdict_tier_of(0.02), 3);
    assert_int_equal(verdict_tier_of(NAN), 3);
    assert_int_equal(verdict_tier_worse(0, 2), 2);
    assert_int_equal(verdict_tier_worse(3, 1), 3);
}

/* The BF16 setting's element test with verdict_bf16_atol's absolute term. */
static int bf16_elem_pass(double out, double ref, double ref_absmax)
{
    return fabs(out - ref) <= verdict_bf16_atol(1e-2, ref_absmax) + 1e-2 * fabs(ref);
}

static void test_bf16_atol(void **state)
{
    (void)state;
    /* tau min(1, max |ref|): KernelBench-Verified's tau at a scale of 1 or
     * more, proportionally smaller below it, never below float32's
     * epsilon (an all-zero or all-non-finite reference gets that floor) */
    const double eps = 1.1920928955078125e-7;
    assert_true(VERDICT_BF16_ATOL_MIN == eps);
    assert_true(fabs(verdict_bf16_atol(1e-2, 1.0) - (1e-2)) <= 0);
    assert_true(fabs(verdict_bf16_atol(1e-2, 250.0) - (1e-2)) <= 0);
    assert_true(fabs(verdict_bf16_atol(1e-2, 0.25) - (2.5e-3)) <= 1e-18);
    assert_true(fabs(verdict_bf16_atol(1e-2, 1e-4) - (1e-6)) <= 1e-20);
    assert_true(verdict_bf16_atol(1e-2, 1e-5) == eps);
    assert_true(verdict_bf16_atol(1e-2, 0.0) == eps);
    assert_true(verdict_bf16_atol(1e-2, -1.0) == eps);
    assert_true(verdict_bf16_atol(1e-2, NAN) == eps);
    /* never looser than the fixed rule, whatever the scale */
    for (double m = 1e-8; m < 1e4; m *= 3.7) assert_true(verdict_bf16_atol(1e-2, m) <= 1e-2);
    /* t-bf16-wrong's softmax (tests/gpu/sets/bf16-wrong): rows of 393216
     * values whose outputs are near 2.5e-6 (largest about 4.3e-6), off by
     * up to 1.1e-5 where its bfloat16 row sums stalled.  The fixed rule
     * passed it; the scaled one fails it. */
    double sm_max = 4.3e-6;
    assert_true(fabs(1.36e-5 - 2.5e-6) <= 1e-2 + 1e-2 * 2.5e-6);
    assert_false(bf16_elem_pass(1.36e-5, 2.5e-6, sm_max));
    /* a correct bfloat16 softmax rounds each output once: off by at most
     * 2^-9 of the value, inside the relative term alone */
    double r = 2.5e-6, o = r * (1.0 + 1.0 / 512.0);
    assert_true(bf16_elem_pass(o, r, sm_max));
    /* an element near zero in a tensor of unit scale keeps the absolute
     * term of the fixed rule: a cancellation error of 5e-3 passes */
    assert_true(bf16_elem_pass(5e-3, 0.0, 3.0));
    /* ... and in a tensor scaled by 0.01 (D3) one of 5e-5 does, 5e-4 not */
    assert_true(bf16_elem_pass(5e-5, 0.0, 0.01));
    assert_false(bf16_elem_pass(5e-4, 0.0, 0.01));
    /* an output 5% off fails at every scale (fb-incorrect on D1 and D3) */
    assert_false(bf16_elem_pass(1.05, 1.0, 1.0));
    assert_false(bf16_elem_pass(0.0105, 0.01, 0.01));
    assert_true(bf16_elem_pass(0.0105, 0.01, 1.0) == (0.0005 <= 1e-2 + 1e-4));
    /* L2_023 in run b94a4b07: a mean of group-normalised values, whose
     * reference is float32 rounding noise about 0 (max |ref| about 3e-8),
     * and a kernel 3.78e-8 from it.  Scaled alone the term was 3e-10 and
     * failed it; the floor passes it, and nothing much further off. */
    assert_true(bf16_elem_pass(-1.2e-8, 2.58e-8, 3e-8));
    assert_false(bf16_elem_pass(3e-7, 2.58e-8, 3e-8));
    /* zeros for a tensor whose values reach 1e-6 still fail */
    assert_false(bf16_elem_pass(0.0, 1e-6, 1e-6));
}

static void test_check_pass(void **state)
{
    (void)state;
    assert_true(verdict_check_pass(0, 0, 0));
    assert_false(verdict_check_pass(1, 0, 0));
    assert_false(verdict_check_pass(0, 1, 0));
    assert_false(verdict_check_pass(0, 0, 1));
}

static void test_independence(void **state)
{
    (void)state;
    int a = -1, b = -1;
    /* Calls 0 and 1: equal outputs, different references: constant output. */
    uint64_t out1[] = {1, 1, 2}, ref1[] = {5, 6, 7};
    assert_int_equal(verdict_independence(out1, ref1, 3, &a, &b), 0);
    assert_int_equal(a, 0);
    assert_int_equal(b, 1);
    /* Equal outputs where the references are equal too are fine. */
    uint64_t out2[] = {1, 1, 3}, ref2[] = {5, 5, 7};
    assert_int_equal(verdict_independence(out2, ref2, 3, &a, &b), 1);
    uint64_t out3[] = {1, 2, 3};
    assert_int_equal(verdict_independence(out3, ref1, 3, &a, &b), 1);
    /* The pair may be anywhere. */
    uint64_t out4[] = {1, 2, 3, 2}, ref4[] = {5, 6, 7, 8};
    assert_int_equal(verdict_independence(out4, ref4, 4, &a, &b), 0);
    assert_int_equal(a, 1);
    assert_int_equal(b, 3);
}

static void test_deferred_timing(void **state)
{
    (void)state;
    char why[400];
    /* Work on another stream: 0.005 ms in the event window, 3 ms of wall
     * time, against a baseline whose wall time is its event time + 0.02. */
    assert_int_equal(verdict_deferred_timing(0.005, 3.0, 3.0, 3.02, why, sizeof why), 0);
    assert_non_null(strstr(why, "not on the given stream"));
    /* An honest kernel: wall = event + launch overhead. */
    assert_int_equal(verdict_deferred_timing(3.0, 3.02, 3.0, 3.02, why, sizeof why), 1);
    /* A tiny kernel whose wall time is mostly launch overhead, like the
     * baseline's: excess 0.026 vs 0.016 ms, not more by 0.05 ms. */
    assert_int_equal(verdict_deferred_timing(0.004, 0.030, 0.004, 0.020, why, sizeof why), 1);
}

static void test_floor(void **state)
{
    (void)state;
    /* relu at 4096 x 393216: 2 x 4 x 1610612736 bytes = 12884901888 at
     * 4000 GB/s is 3.221225472 ms; its 1.6e9 FLOPs at 2 x 400 TFLOP/s are
     * 0.002 ms; the floor is the larger. */
    double f = verdict_floor_ms(12884901888.0, 1.610612736e9, 4000, 400);
    assert_true(fabs(f - 3.221225472) < 1e-9);
    /* A GEMM 4096^3: 1.37438953472e11 FLOPs at 2 x 400 TFLOP/s = 0.1718 ms,
     * above its 201326592 bytes / 4000 GB/s = 0.0503 ms. */
    f = verdict_floor_ms(201326592.0, 1.37438953472e11, 4000, 400);
    assert_true(fabs(f - 0.17179869184) < 1e-9);
    /* Unknown rates drop their terms. */
    assert_true(verdict_floor_ms(1e9, 1e9, 0, 0) == 0);
    /* Fails below 0.9 x floor. */
    assert_int_equal(verdict_floor_pass(2.8, 3.221225472), 0);
    assert_int_equal(verdict_floor_pass(2.95, 3.221225472), 1);
    assert_int_equal(verdict_floor_pass(1.0, 0), 1);
}

static void test_scan_flags(void **state)
{
    (void)state;
    assert_true(verdict_scan_import("cublasGemmEx") & SCAN_LIB_CUBLAS);
    assert_false(verdict_scan_import("cublasLtMatmul") & SCAN_LIB_CUBLAS);
    assert_true(verdict_scan_import("cublasLtMatmul") & SCAN_LIB_CUBLASLT);
    assert_true(verdict_scan_import("cudnnConvolutionForward") & SCAN_LIB_CUDNN);
    assert_true(verdict_scan_import("cudaStreamCreateWithFlags") & SCAN_STREAMS);
    assert_true(verdict_scan_import("cudaGraphLaunch") & SCAN_GRAPHS);
    assert_true(verdict_scan_import("pthread_create") & SCAN_THREADS);
    assert_true(verdict_scan_import("dlopen") & SCAN_DLOPEN);
    assert_true(verdict_scan_import("fork") & SCAN_PROCESS);
    assert_true(verdict_scan_import("cudaMalloc") & SCAN_ALLOCATES);
    assert_int_equal(verdict_scan_import("cudaLaunchKernel"), 0);
    assert_true(verdict_scan_define("cudaEventElapsedTime") & SCAN_DEFINES_CUDA);
    assert_true(verdict_scan_define("cudaEventElapsedTime") & SCAN_DEFINES_TIMING);
    assert_true(verdict_scan_define("cuMemAlloc_v2") & SCAN_DEFINES_CUDA);
    assert_true(verdict_scan_define("clock_gettime") & SCAN_DEFINES_TIMING);
    assert_int_equal(verdict_scan_define("kbv_forward"), 0);
    assert_int_equal(verdict_scan_define("custom_kernel"), 0);
    assert_string_equal(verdict_scan_flag_name(0), "library:cublas");
    assert_true(verdict_scan_boring("__cudaRegisterFunction"));
    assert_false(verdict_scan_boring("cublasSgemm_v2"));
    /* Any procfs path in the object's bytes, not only /proc/self. */
    static const char self[] = "\x7f""ELF..../proc/self/mem..", pid[] = "..%s/proc/%d/mem..",
                      thread[] = "/proc/thread-self/mem", plain[] = "proc/ and /procfs are words";
    assert_int_equal(verdict_scan_bytes(self, sizeof self - 1), SCAN_TAMPER);
    assert_int_equal(verdict_scan_bytes(pid, sizeof pid - 1), SCAN_TAMPER);
    assert_int_equal(verdict_scan_bytes(thread, sizeof thread - 1), SCAN_TAMPER);
    assert_int_equal(verdict_scan_bytes(plain, sizeof plain - 1), 0);
    assert_int_equal(verdict_scan_bytes(NULL, 0), 0);

    static const char nm[] =
        "                 U __cudaRegisterFatBinary\n"
        "                 U cublasSgemm_v2@libcublas.so.13\n"
        "                 U cudaMalloc@libcudart.so.13\n"
        "                 U pthread_create@GLIBC_2.34\n"
        "                 w __gmon_start__\n"
        "0000000000001139 T kbv_forward\n"
        "0000000000001200 T cudaEventElapsedTime\n"
        "0000000000004010 B some_state\n";
    build_item it;
    memset(&it, 0, sizeof it);
    kbv_err e;
    assert_int_equal(build_scan_text(nm, &it, &e), 0);
    /* Sorted, versions cut, registration plumbing left out. */
    assert_int_equal(it.n_imports, 3);
    assert_string_equal(it.imports[0], "cublasSgemm_v2");
    assert_string_equal(it.imports[1], "cudaMalloc");
    assert_string_equal(it.imports[2], "pthread_create");
    assert_int_equal(it.n_defines, 1);
    assert_string_equal(it.defines[0], "cudaEventElapsedTime");
    unsigned want = SCAN_LIB_CUBLAS | SCAN_ALLOCATES | SCAN_THREADS | SCAN_DEFINES_CUDA | SCAN_DEFINES_TIMING;
    assert_int_equal(it.flags, want);
    cJSON *r = rec_static("s", "p", &it);
    char *line = cJSON_PrintUnformatted(r);
    assert_non_null(strstr(line, "\"flags\":[\"library:cublas\",\"threads\",\"defines:cuda\",\"defines:timing\",\"allocates\"]"));
    free(line);
    cJSON_Delete(r);
    build_item_clear(&it);
}

static void test_worker_records(void **state)
{
    (void)state;
    cJSON *o = NULL;
    kbv_err e;
    /* Set and problem come from the collecting process; the key order is
     * type, set, problem, then the worker's fields. */
    const char *l1 = "{\"type\":\"check\",\"dist\":\"D1\",\"trial\":0,\"pass\":true}";
    assert_int_equal(rec_from_worker(l1, strlen(l1), "good", "L1_019_relu", &o, &e), 0);
    char *s = cJSON_PrintUnformatted(o);
    assert_string_equal(s, "{\"type\":\"check\",\"set\":\"good\",\"problem\":\"L1_019_relu\",\"dist\":\"D1\",\"trial\":0,\"pass\":true}");
    free(s);
    cJSON_Delete(o);
    const char *bad[] = {
        "not json",
        "[1,2]",
        "{\"dist\":\"D1\"}",
        "{\"type\":\"bogus\"}",
        "{\"type\":\"check\",\"dist\":\"D1\",\"trial\":0}",
        "{\"type\":\"check\",\"dist\":\"D1\",\"trial\":0,\"pass\":1}",
        "{\"type\":\"probe\",\"probe\":\"made-up\",\"pass\":true}",
        "{\"type\":\"time\",\"variant\":\"fp16\",\"round\":0,\"gpu_ms\":1}",
        "{\"type\":\"time\",\"variant\":\"fp32\",\"round\":0}",
        "{\"type\":\"memory\",\"variant\":\"tf32\"}",
        "{\"type\":\"status\",\"status\":\"fine\"}",
        "{\"type\":\"build\",\"ok\":true}",
        "{\"type\":\"baseline\",\"variant\":\"candidate\",\"choice\":\"x\"}",
        "{\"type\":\"baseline\",\"variant\":\"tf32\",\"choice\":7}",
        "{\"type\":\"baseline\",\"choice\":\"x\"}",
        /* set and problem are the collecting process's to say, and only
         * the collecting process writes tamper records (other keys are the
         * journal grammar's, tests/unit/test_common_jgram.c) */
        "{\"type\":\"check\",\"set\":\"evil\",\"dist\":\"D1\",\"trial\":0,\"pass\":true}",
        "{\"type\":\"tamper\",\"detail\":\"x\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o = NULL;
        assert_int_equal(rec_from_worker(bad[i], strlen(bad[i]), "s", "p", &o, &e), KBV_EINPUT);
        assert_null(o);
    }
    const char *good[] = {
        "{\"type\":\"probe\",\"probe\":\"physical-floor\",\"pass\":false,\"floor_ms\":3.2,\"time_ms\":null}",
        "{\"type\":\"time\",\"variant\":\"candidate\",\"round\":3,\"gpu_ms\":1.5,\"wall_ms\":1.6}",
        "{\"type\":\"memory\",\"variant\":\"fp32\",\"peak_bytes\":10,\"io_bytes\":8}",
        "{\"type\":\"status\",\"status\":\"launch-error\",\"detail\":\"x\"}",
        "{\"type\":\"baseline\",\"variant\":\"tf32\",\"choice\":\"cuBLASLt algo 6\"}",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(rec_from_worker(good[i], strlen(good[i]), "s", "p", &o, &e), 0);
        cJSON_Delete(o);
    }
    assert_true(rec_status_known("compile-error"));
    assert_false(rec_status_known("error"));
    assert_true(rec_probe_known("deferred-work"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiers),           cmocka_unit_test(test_check_pass),
        cmocka_unit_test(test_bf16_atol),
        cmocka_unit_test(test_independence),    cmocka_unit_test(test_deferred_timing),
        cmocka_unit_test(test_floor),           cmocka_unit_test(test_scan_flags),
        cmocka_unit_test(test_worker_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests of the static scan (verdict.c, build.c) on the symbols of the
 * hostile candidates in tests/gpu/hostile: the nm -D lines below are those
 * of the real objects (nvcc 13, sm_90), cut to the lines that matter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "build.h"
#include "verdict.h"

static int has_define(const build_item *it, const char *name)
{
    for (int i = 0; i < it->n_defines; i++)
        if (strcmp(it->defines[i], name) == 0) return 1;
    return 0;
}

static void test_driver_entry_point(void **state)
{
    (void)state;
    /* h-search reaches cuMemGetAddressRange (and could reach cuMemAlloc,
     * past the worker's interposer) through the runtime's entry point. */
    assert_true(verdict_scan_import("cudaGetDriverEntryPointByVersion") & SCAN_DLOPEN);
    assert_true(verdict_scan_import("cudaGetDriverEntryPoint") & SCAN_DLOPEN);
    assert_true(verdict_scan_import("cuGetProcAddress_v2") & SCAN_DLOPEN);
}

static void test_interposers(void **state)
{
    (void)state;
    const char *nm = "                 U cudaLaunchKernel@libcudart.so.13\n"
                     "                 U dladdr@GLIBC_2.34\n"
                     "                 U dlopen@GLIBC_2.34\n"
                     "00000000000013f0 T clock_gettime\n"
                     "0000000000001470 T cudaEventRecord\n"
                     "0000000000001480 T cudaStreamSynchronize\n"
                     "00000000000015b0 T kbv_forward\n";
    build_item it;
    memset(&it, 0, sizeof it);
    kbv_err e;
    assert_int_equal(build_scan_text(nm, &it, &e), 0);
    assert_true(it.flags & SCAN_DEFINES_TIMING);
    assert_true(it.flags & SCAN_DEFINES_CUDA);
    assert_true(it.flags & SCAN_DLOPEN);
    assert_true(has_define(&it, "clock_gettime"));
    assert_true(has_define(&it, "cudaEventRecord"));
    assert_true(has_define(&it, "cudaStreamSynchronize"));
    assert_false(has_define(&it, "kbv_forward"));
    build_item_clear(&it);

    const char *nm2 = "0000000000001480 T cudaFree\n"
                      "0000000000001410 T cudaMalloc\n"
                      "0000000000001390 T cudaEventElapsedTime\n";
    memset(&it, 0, sizeof it);
    assert_int_equal(build_scan_text(nm2, &it, &e), 0);
    assert_true(it.flags & SCAN_DEFINES_CUDA);
    assert_true(it.flags & SCAN_DEFINES_TIMING); /* cudaEventElapsedTime */
    assert_int_equal(it.n_defines, 3);
    build_item_clear(&it);
}

/* A raw system call in the object's own code (the GOT patch of
 * tests/gpu/hostile/gotasm) is tamper-capable; calls through the PLT are
 * not. */
static void test_syscall_instruction(void **state)
{
    (void)state;
    build_item it;
    memset(&it, 0, sizeof it);
    kbv_err e;
    const char *plain = "0000000000001100 <kbv_forward>:\n    1100:\tpush   %rbp\n"
                        "    1104:\tcall   1030 <cudaLaunchKernel@plt>\n    1109:\tret\n";
    assert_int_equal(build_scan_asm_text(plain, &it, &e), 0);
    assert_false(it.flags & SCAN_TAMPER);
    assert_int_equal(it.n_imports, 0);
    const char *raw = "0000000000001200 <raw_mprotect>:\n    1200:\tmov    %rdi,%r8\n    1203:\tsyscall\n"
                      "    1205:\tret\n    1210:\tsyscall\n";
    assert_int_equal(build_scan_asm_text(raw, &it, &e), 0);
    assert_true(it.flags & SCAN_TAMPER);
    assert_int_equal(it.n_imports, 1);
    assert_string_equal(it.imports[0], "<syscall instruction>");
    build_item_clear(&it);
    memset(&it, 0, sizeof it);
    assert_int_equal(build_scan_asm_text("    1300:\tint    $0x80\n", &it, &e), 0);
    assert_true(it.flags & SCAN_TAMPER);
    build_item_clear(&it);
}

static void test_exit_is_not_flagged(void **state)
{
    (void)state;
    /* Imported by nvcc's host stub of any non-static __device__ function. */
    assert_false(verdict_scan_import("exit") & SCAN_PROCESS);
    assert_true(verdict_scan_import("_exit") & SCAN_PROCESS);
    assert_true(verdict_scan_import("fork") & SCAN_PROCESS);
    assert_true(verdict_scan_import("system") & SCAN_PROCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_driver_entry_point),
        cmocka_unit_test(test_interposers),
        cmocka_unit_test(test_syscall_instruction),
        cmocka_unit_test(test_exit_is_not_flagged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

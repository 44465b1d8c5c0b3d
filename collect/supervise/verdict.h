/* verdict.h - the decisions of the verification protocol that need no GPU:
 * tier names, the check verdict, the probe verdicts (DESIGN.md 5a steps 5
 * and 6) and the static scan's flags (step 2).  The worker measures; these
 * functions judge, so that the judging is unit-tested on the CPU. */
#ifndef KBV_VERDICT_H
#define KBV_VERDICT_H

#include <stddef.h>
#include <stdint.h>

/* "fp32", "tf32", "half", "none" for tiers 0..3 (cmp_stats.tier). */
const char *verdict_tier_name(int tier);
/* The tier of an error ratio max |out - ref| / (1 + |ref|): the smallest
 * t of 1e-5, 1e-3, 1e-2 with ratio <= t, else 3; a NaN ratio is 3. */
int verdict_tier_of(double ratio);
/* Combines two tiers (of two outputs): the worse one. */
int verdict_tier_worse(int a, int b);

/* The absolute term of the BF16 setting's tolerance for one output
 * tensor: tau min(1, ref_absmax), where ref_absmax is the largest |ref| of
 * the tensor's finite reference values (0 when it has none).  An element
 * passes when |out - ref| <= that + rtol |ref| (DESIGN 5b): never looser
 * than KernelBench-Verified's tau, and as strict, in proportion, for a
 * tensor whose values are all small, where a fixed tau would pass any
 * output of the right sign and size (a softmax over 393216 values has
 * outputs near 2.5e-6).  A NaN or negative ref_absmax counts as 0.
 *
 * The term never falls below VERDICT_BF16_ATOL_MIN, float32's epsilon:
 * the reference is a float32 computation, and an output whose values are
 * all rounding noise about 0 (the mean of group-normalised values, about
 * 1e-8) cannot be checked more finely than the reference's own rounding
 * of the O(1) values it cancelled; scaled by max |ref| alone the term fell
 * to 1e-10 there and failed a kernel 4e-8 from the reference.  It is
 * still 10^5 times below KernelBench-Verified's tau, and it passes nothing
 * that differs from the reference by more than a float32 rounding. */
#define VERDICT_BF16_ATOL_MIN 0x1p-23
double verdict_bf16_atol(double tau, double ref_absmax);

/* A check passes when no element mismatches (non-finite outputs where the
 * reference is finite and poison left unwritten count as mismatches). */
int verdict_check_pass(int64_t mismatches, int64_t nonfinite, int64_t unwritten);

/* Input independence over k check calls: out_fp[i] and ref_fp[i] are the
 * fingerprints of the candidate's and the reference's outputs of call i.
 * Fails (returns 0 and the pair in *a, *b) when two calls gave the same
 * output while their references differ; returns 1 otherwise. */
int verdict_independence(const uint64_t *out_fp, const uint64_t *ref_fp, int k, int *a, int *b);

/* Deferred work from timing: medians of the candidate's event time and wall
 * time (call + device-wide synchronise) and the same for the fp32 baseline.
 * Fails (0) when more than half of the candidate's wall time lies outside its
 * event window and the excess is larger than the baseline's by > 0.05 ms and
 * by > 25% of the candidate's wall time.  Writes one sentence to why. */
int verdict_deferred_timing(double cand_gpu, double cand_wall, double base_gpu, double base_wall,
                            char *why, size_t n);

/* The physical floor in ms: max(min_bytes / copy bandwidth, flops / (2 x
 * tf32 rate)); the factor 2 leaves room for half-precision tensor cores.
 * A rate that is not positive drops its term; 0 when both are dropped. */
double verdict_floor_ms(double min_bytes, double flops, double copy_gbps, double tf32_tflops);
/* Passes (1) when time_ms >= 0.9 floor_ms (10% for measurement noise). */
int verdict_floor_pass(double time_ms, double floor_ms);

/* --- static scan (nm -D of the candidate's shared object) ------------------ */

/* Flag bits from the scan; the names are those in the "static" record. */
enum {
    SCAN_LIB_CUBLAS = 1 << 0,
    SCAN_LIB_CUBLASLT = 1 << 1,
    SCAN_LIB_CUDNN = 1 << 2,
    SCAN_LIB_CURAND = 1 << 3,
    SCAN_LIB_CUFFT = 1 << 4,
    SCAN_LIB_CUSPARSE = 1 << 5,
    SCAN_LIB_CUSOLVER = 1 << 6,
    SCAN_LIB_NCCL = 1 << 7,
    SCAN_STREAMS = 1 << 8,
    SCAN_GRAPHS = 1 << 9,
    SCAN_THREADS = 1 << 10,
    SCAN_DLOPEN = 1 << 11,
    SCAN_PROCESS = 1 << 12,
    SCAN_DEFINES_CUDA = 1 << 13,
    SCAN_DEFINES_TIMING = 1 << 14,
    SCAN_ALLOCATES = 1 << 15,
    SCAN_DEVICE_SYNC = 1 << 16,
    /* Calls that can change the worker's code, bindings or memory behind
     * its back (page protections, the link map, raw system calls, another
     * process's memory) or a "/proc/" path: the pair is classed
     * `tampering` (DESIGN.md 5a step 7a). */
    SCAN_TAMPER = 1 << 17,
    /* Device memory that the worker cannot count and poison (CUDA arrays). */
    SCAN_UNTRACKED_ALLOC = 1 << 18,
    SCAN_N_FLAGS = 19
};
/* The name of flag bit i (0 <= i < SCAN_N_FLAGS), e.g. "library:cublas". */
const char *verdict_scan_flag_name(int bit);
/* Flags an imported (undefined) symbol raises. */
unsigned verdict_scan_import(const char *sym);
/* Flags a defined symbol raises (interposition of CUDA or timing calls). */
unsigned verdict_scan_define(const char *sym);
/* Flags raised by the bytes of the shared object itself (a "/proc/"
 * string: the way to another view of the worker's memory and files). */
unsigned verdict_scan_bytes(const void *data, size_t n);
/* 1 when an import is plumbing that the record leaves out (C++ runtime,
 * CUDA registration stubs). */
int verdict_scan_boring(const char *sym);

#endif

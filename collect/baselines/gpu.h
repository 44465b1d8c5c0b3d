/* gpu.h - the GPU side of collect, with C linkage (implemented in .cu
 * files).  Every function enqueues on the given stream unless it says it
 * synchronises, returns 0 or a negative KBV_E* code, and fills kbv_err.
 * Device pointers are owned by the caller unless stated.
 */
#ifndef KBV_GPU_H
#define KBV_GPU_H

#include <stddef.h>
#include <stdint.h>
#include "kbv.h"
#include "err.h"
#include "suite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- inputs (gen.cu) -------------------------------------------------------
 * Fills input `index` of p for (seed, dist, trial) with cuRAND's Philox4x32-10
 * device generator.  The key is derived from (run seed, problem id, dist,
 * trial, input index) alone, and each group of four elements uses its own
 * Philox subsequence, so the values do not depend on the launch shape and are
 * identical in every process. */
int gen_fill(const suite_problem *p, int index, suite_dist dist, uint64_t seed,
             int trial, void *dev, cudaStream_t s, kbv_err *e);

/* The poison: a quiet NaN whose payload (0xDEAD) no arithmetic produces;
 * an output element that still holds these exact bits was never written. */
#define GEN_POISON_F32_BITS 0x7FC0DEADu

/* Fills n floats with a NaN whose payload marks "never written". */
int gen_poison_f32(void *dev, size_t n_floats, cudaStream_t s, kbv_err *e);

/* The poison of a bfloat16 output (the BF16 setting): a quiet NaN whose
 * payload no bfloat16 arithmetic or rounding of a float produces (both give
 * 0x7FC0, 0x7FFF or their negatives). */
#define GEN_POISON_BF16_BITS 0x7FDEu
/* Fills n bfloat16 elements with GEN_POISON_BF16_BITS. */
int gen_poison_bf16(void *dev, size_t n, cudaStream_t s, kbv_err *e);
/* dst[i] = src[i] rounded to bfloat16, to nearest, ties to even (as
 * PyTorch's .to(torch.bfloat16)); a NaN stays a quiet NaN.  src and dst
 * must not overlap. */
int gen_narrow_bf16(const float *src, void *dst, int64_t n, cudaStream_t s, kbv_err *e);
/* dst[i] = the bfloat16 src[i] as a float (exact).  No overlap. */
int gen_widen_bf16(const void *src, float *dst, int64_t n, cudaStream_t s, kbv_err *e);
/* Fills bytes with a byte pattern (scrubbing free memory, poisoning). */
int gen_fill_bytes(void *dev, size_t n, unsigned char pattern, cudaStream_t s, kbv_err *e);

/* --- comparison (compare.cu) ---------------------------------------------- */
typedef struct {
    double max_abs_err;
    double max_rel_err;
    int64_t mismatches;   /* |out - ref| > atol + rtol |ref|, or non-finite where ref is finite */
    int64_t nonfinite;    /* non-finite outputs where the reference is finite */
    int64_t unwritten;    /* elements still holding the poison NaN */
    int64_t count;
    int tier;             /* 0 fp32 (1e-5), 1 tf32 (1e-3), 2 half (1e-2), 3 none */
} cmp_stats;

/* Compares out with ref (n elements of dtype); synchronises s.  For
 * KBV_BF16, out holds bfloat16 values (poison GEN_POISON_BF16_BITS) and ref
 * floats: the BF16 setting's reference is computed in fp32. */
int cmp_tensors(const void *out, const void *ref, int64_t n, kbv_dtype dtype,
                double atol, double rtol, cudaStream_t s, cmp_stats *st, kbv_err *e);
/* *m = the largest |ref[i]| of n float values on the device, non-finite
 * ones left out (0 when none is finite): the scale of a BF16-setting
 * reference tensor (verdict_bf16_atol).  Synchronises s. */
int cmp_absmax(const float *ref, int64_t n, cudaStream_t s, double *m, kbv_err *e);
/* A 64-bit fingerprint of a device buffer (probes: identity, caching,
 * mutation, determinism, deferred work); synchronises s. */
int cmp_fingerprint(const void *dev, size_t bytes, cudaStream_t s, uint64_t *fp, kbv_err *e);
/* 1 when the two buffers are bitwise equal; synchronises s. */
int cmp_equal(const void *a, const void *b, size_t bytes, cudaStream_t s, int *equal, kbv_err *e);

/* --- baselines (baseline.cu and the .cu files of collect/baselines/problems) -----------------------
 * One baseline instance per problem and worker: handles, workspaces and any
 * tables, created once (not timed).  Its device allocations go through
 * base_alloc so that its peak memory is counted like a candidate's. */
typedef struct base_ctx base_ctx;

/* BASE_BF16 runs on bfloat16 tensors (the BF16 setting): cuBLAS and cuDNN
 * in bfloat16 with fp32 accumulation where a family has that path, else
 * the fallback that base_choice names (inputs widened, the tf32 baseline,
 * outputs rounded to bfloat16), whose parity with PyTorch is not claimed. */
typedef enum { BASE_FP32 = 0, BASE_TF32 = 1, BASE_BF16 = 2 } base_variant;

/* pins: NULL, or kernel choices of an earlier run (base_pins text of
 * either variant, joined by ';'), read during the call only: the products
 * and convolutions they name run the named kernel instead of timing a
 * choice (base_pin).  KBV_EINPUT for malformed text. */
int base_create(const suite_problem *p, const kbv_call *example, const char *pins, base_ctx **out,
                kbv_err *e);
/* Enqueues the problem's computation on call->stream. */
int base_run(base_ctx *b, base_variant v, const kbv_call *call, kbv_err *e);
/* Enqueues the correctness reference: the fp32 baseline, except that a
 * family whose timed fp32 kernel may trade accuracy for speed as PyTorch's
 * does (a convolution through an FFT or Winograd transform) runs an exact
 * one instead.  Every check compares with this, never with base_run. */
int base_run_reference(base_ctx *b, const kbv_call *call, kbv_err *e);
/* Bytes of workspace the baseline holds (counted toward its peak). */
size_t base_workspace_bytes(const base_ctx *b);
/* What variant v runs, where the baseline chose it by timing among a
 * library's kernels (for the journal's "baseline" record): e.g.
 * "cuBLASLt algo 6 tile 21 stages 17 splitK 1 swizzle 0 cluster 0".  ""
 * for a baseline without a choice, or before its first run.  Owned by b,
 * valid until base_destroy. */
const char *base_choice(const base_ctx *b, base_variant v);
/* Pins: the GEMM kernel choices variant v made by timing, as text that
 * base_pin takes back ("KEY=default" or "KEY=lt:HEX" joined by ';', KEY the
 * comma-separated shape, layout and alignment of one product; for a
 * convolution "conv.<role>:<shape>=<choice>", convpin.h), so that a
 * later run on the same GPU and libraries makes the same choices without
 * searching or timing.  "" before the first run or without a library
 * choice.  Owned by b. */
const char *base_pins(const base_ctx *b, base_variant v);
/* Before the first run: makes the products that pins (as base_pins writes
 * them, either variant's) name run the named kernel instead of timing a
 * choice; a pinned cuBLASLt algorithm that the library refuses for the
 * shape is timed as before.  Convolution pins are skipped: a convolution
 * chooses at create, so base_create takes them.  KBV_EINPUT for malformed
 * text. */
int base_pin(base_ctx *b, const char *pins, kbv_err *e);
void base_destroy(base_ctx *b);   /* NULL ok */
/* 1 when the baseline can run on this host (e.g. cuDNN found), else 0 and a reason. */
int base_available(const suite_problem *p, const char **why);

#ifdef __cplusplus
}
#endif

#endif

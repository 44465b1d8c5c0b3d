/* base_stub.h - what kbv's baseline kernels take from
 * collect/baselines/problems/base_impl.h, for the CPU harnesses of
 * test_chain_ew.py, test_l3_net.py, test_l3_baseline.py,
 * test_vlad_baseline.py and test_reduce_baseline.py: the context (blas: a
 * cuBLAS handle the harness never dereferences; ws, the family's
 * workspace, which a harness that needs it grows with its own
 * base_need_ws),
 * the error helpers, the grid size (EMU_GRID_CAP blocks at most, so that
 * the grid-stride loops go round), cuBLAS's product as a plain loop in
 * double (base_gemm's contract: row-major, ta/tb, leading dimensions and
 * batch strides, alpha and beta), its bfloat16 form (base_gemm_bf16's),
 * the row softmax in both types (softmax.cu's) and cudaMemcpy2DAsync.  The harness includes emu.h first; the
 * device helpers of base_impl.h itself (block_sum2, the bfloat16 vector
 * accesses) are taken from that file as they are (srcparts.py). */
#pragma once
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifndef EMU_GRID_CAP
#define EMU_GRID_CAP 16
#endif

enum base_variant { BASE_FP32 = 0, BASE_TF32 = 1, BASE_BF16 = 2 };
struct kbv_err { int code; char msg[256]; };
enum { KBV_EINPUT = -2, KBV_ENOMEM = -3, KBV_ERUNTIME = -4 };
struct base_ctx { const suite_problem *p; int sm_count; void *state; char choice[3][512]; void *blas; void *ws; size_t ws_bytes; };

static int err_set(kbv_err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", e->msg);
    return code;
}
static int base_cuda_err(kbv_err *, const base_ctx *, const char *what, cudaError_t)
{
    fprintf(stderr, "cuda error: %s\n", what);
    return -5;
}
static void base_note_choice(base_ctx *, base_variant, const char *, ...) {}
static unsigned base_grid(const base_ctx *, long long items, int threads, int)
{
    long long b = (items + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > EMU_GRID_CAP ? EMU_GRID_CAP : b);
}
static int base_gemm(base_ctx *, base_variant, int ta, int tb, long long m, long long n, long long k, float alpha,
                     const float *A, long long lda, long long sa, const float *B, long long ldb, long long sb,
                     float beta, float *C, long long ldc, long long sc, long long batch, cudaStream_t, kbv_err *)
{
    for (long long q = 0; q < batch; q++)
        for (long long i = 0; i < m; i++)
            for (long long j = 0; j < n; j++) {
                double acc = 0.0;
                for (long long t = 0; t < k; t++)
                    acc += (double)(ta ? A[q * sa + t * lda + i] : A[q * sa + i * lda + t]) *
                           (double)(tb ? B[q * sb + j * ldb + t] : B[q * sb + t * ldb + j]);
                float *c = C + q * sc + i * ldc + j;
                *c = (float)(alpha * acc + (beta != 0.0f ? beta * *c : 0.0));
            }
    return 0;
}
static void base_softmax_rows(const float *x, float *y, long long rows, long long d, int, cudaStream_t)
{
    for (long long r = 0; r < rows; r++) {
        double m = -INFINITY, s = 0.0;
        for (long long j = 0; j < d; j++) m = fmax(m, x[r * d + j]);
        for (long long j = 0; j < d; j++) s += exp(x[r * d + j] - m);
        for (long long j = 0; j < d; j++) y[r * d + j] = (float)(exp(x[r * d + j] - m) / s);
    }
}
/* base_gemm_bf16's contract: bfloat16 operands and output, float
 * accumulation, one rounding (a harness that takes gemm.cu's own, on
 * cuBLAS's emulated column-major contract, defines
 * BASE_STUB_REAL_GEMM_BF16) */
#ifndef BASE_STUB_REAL_GEMM_BF16
static int base_gemm_bf16(base_ctx *, int ta, int tb, long long m, long long n, long long k, float alpha,
                          const void *A_, long long lda, long long sa, const void *B_, long long ldb, long long sb,
                          void *C_, long long ldc, long long sc, long long batch, cudaStream_t, kbv_err *)
{
    const __nv_bfloat16 *A = (const __nv_bfloat16 *)A_, *B = (const __nv_bfloat16 *)B_;
    __nv_bfloat16 *C = (__nv_bfloat16 *)C_;
    for (long long q = 0; q < batch; q++)
        for (long long i = 0; i < m; i++)
            for (long long j = 0; j < n; j++) {
                float acc = 0.0f;
                for (long long t = 0; t < k; t++)
                    acc += __bfloat162float(A[q * sa + (ta ? t * lda + i : i * lda + t)]) *
                           __bfloat162float(B[q * sb + (tb ? j * ldb + t : t * ldb + j)]);
                C[q * sc + i * ldc + j] = __float2bfloat16_rn(alpha * acc);
            }
    return 0;
}
#endif
/* the bfloat16 row softmax (softmax.cu's contract; in place allowed) */
static void base_softmax_rows_bf16(const void *x, void *y, long long rows, long long d, int, cudaStream_t)
{
    const __nv_bfloat16 *p = (const __nv_bfloat16 *)x;
    __nv_bfloat16 *q = (__nv_bfloat16 *)y;
    for (long long r = 0; r < rows; r++) {
        double m = -INFINITY, s = 0.0;
        for (long long j = 0; j < d; j++) m = fmax(m, __bfloat162float(p[r * d + j]));
        for (long long j = 0; j < d; j++) s += exp(__bfloat162float(p[r * d + j]) - m);
        for (long long j = 0; j < d; j++)
            q[r * d + j] = __float2bfloat16_rn((float)(exp(__bfloat162float(p[r * d + j]) - m) / s));
    }
}
static cudaError_t cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, cudaMemcpyKind,
                                     cudaStream_t)
{
    for (size_t r = 0; r < h; r++) memcpy((char *)d + r * dp, (const char *)s + r * sp, w);
    return cudaSuccess;
}

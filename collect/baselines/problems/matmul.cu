/* matmul.cu - matrix-product baselines through cuBLAS and cuBLASLt.
 *
 * kbv's tensors are row-major and cuBLAS is column-major.  A row-major
 * [r, c] buffer read as column-major is its transpose [c, r], so the
 * row-major product C = op(A) op(B) is computed as the column-major
 * product C^T = op(B)^T op(A)^T: B's buffer is passed first, A's second,
 * and a buffer stored transposed in row-major terms is passed with
 * CUBLAS_OP_T.
 *
 * fp32 uses CUBLAS_COMPUTE_32F with CUBLAS_DEFAULT_MATH (what PyTorch runs
 * when TF32 is off: IEEE float32 FMA, no tensor cores); tf32 uses
 * CUBLAS_COMPUTE_32F_FAST_TF32 (what PyTorch runs with allow_tf32).
 *
 * bf16 (the BF16 setting) is what PyTorch runs for bfloat16 tensors:
 * cublasGemmEx (strided batched for bmm) with CUDA_R_16BF operands and
 * output and CUBLAS_COMPUTE_32F (tensor cores, float accumulation), the
 * library's own kernel choice; tril/triu and diag are kbv's kernels on
 * bfloat16 with float arithmetic.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"

namespace {

struct gemm_shape {
    int ta, tb;                  /* A or B stored transposed */
    int64_t m, n, k, batch;
    int64_t stride_a, stride_b, stride_c;   /* elements between batches; 0 = shared */
};

int shape_of(const base_ctx *b, const kbv_call *c, gemm_shape *g, kbv_err *e)
{
    const kbv_tensor *A = &c->inputs[0], *B = &c->inputs[1];
    *g = gemm_shape{ 0, 0, 0, 0, 0, 1, 0, 0, 0 };
    switch (b->p->op) {
    case OP_MM: case OP_MM_TA: case OP_MM_TB: case OP_MM_TAB: case OP_TRIL_MM: case OP_TRIU_MM:
        if (A->ndim != 2 || B->ndim != 2) break;
        g->ta = b->p->op == OP_MM_TA || b->p->op == OP_MM_TAB;
        g->tb = b->p->op == OP_MM_TB || b->p->op == OP_MM_TAB;
        g->m = g->ta ? A->shape[1] : A->shape[0];
        g->k = g->ta ? A->shape[0] : A->shape[1];
        g->n = g->tb ? B->shape[0] : B->shape[1];
        if ((g->tb ? B->shape[1] : B->shape[0]) != g->k) break;
        return 0;
    case OP_BMM:
        if (A->ndim != 3 || B->ndim != 3 || A->shape[0] != B->shape[0] || A->shape[2] != B->shape[1])
            break;
        g->batch = A->shape[0];
        g->m = A->shape[1];
        g->k = A->shape[2];
        g->n = B->shape[2];
        g->stride_a = g->m * g->k;
        g->stride_b = g->k * g->n;
        g->stride_c = g->m * g->n;
        return 0;
    case OP_MM3D: case OP_MM4D: {
        /* A[..., K] @ B[K, N]: the leading dimensions of A are rows of one
         * GEMM, since A and C are contiguous. */
        if (B->ndim != 2 || A->shape[A->ndim - 1] != B->shape[0]) break;
        int64_t rows = 1;
        for (int i = 0; i < A->ndim - 1; i++) rows *= A->shape[i];
        g->m = rows;
        g->k = B->shape[0];
        g->n = B->shape[1];
        return 0;
    }
    default:
        break;
    }
    return err_set(e, KBV_EINPUT, "baseline %s: matmul shapes do not match op %d", b->p->id,
                   b->p->op);
}

/* tril/triu of a row-major [n, n] matrix in place: zero the elements
 * above (lower) or below (upper) the diagonal, as torch.tril/triu do. */
__global__ void tri_mask(float *c, int64_t rows, int64_t cols, int lower)
{
    int64_t n = rows * cols;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i / cols, col = i % cols;
        if (lower ? col > r : col < r) c[i] = 0.0f;
    }
}

/* diag(a) @ B: row i of B scaled by a[i]; float4 along the rows when the
 * row length allows. */
__global__ void diag_scale(const float *__restrict__ a, const float *__restrict__ bm,
                           float *__restrict__ c, int64_t rows, int64_t cols)
{
    if (cols % 4 == 0) {
        int64_t c4 = cols / 4, n4 = rows * c4;
        const float4 *b4 = reinterpret_cast<const float4 *>(bm);
        float4 *o4 = reinterpret_cast<float4 *>(c);
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
             i += (int64_t)gridDim.x * blockDim.x) {
            float s = a[i / c4];
            float4 v = b4[i];
            o4[i] = make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
        }
    } else {
        int64_t n = rows * cols;
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
             i += (int64_t)gridDim.x * blockDim.x)
            c[i] = a[i / cols] * bm[i];
    }
}

int run_diag(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    const kbv_tensor *A = &c->inputs[0], *B = &c->inputs[1];
    if (A->ndim != 1 || B->ndim != 2 || B->shape[0] != A->shape[0])
        return err_set(e, KBV_EINPUT, "baseline %s: diag shapes", b->p->id);
    int64_t rows = B->shape[0], cols = B->shape[1];
    diag_scale<<<base_grid(b, rows * cols / 4 + 1, 256, 8), 256, 0, c->stream>>>(
        (const float *)A->data, (const float *)B->data, (float *)c->outputs[0].data, rows, cols);
    cudaError_t ce = cudaGetLastError();
    return ce == cudaSuccess ? 0 : base_cuda_err(e, b, "diag launch", ce);
}

int run(base_ctx *b, base_variant v, const kbv_call *c, kbv_err *e);

__device__ __forceinline__ float bf_get(__nv_bfloat16 h) { return __bfloat162float(h); }

__global__ void tri_mask_bf16(__nv_bfloat16 *c, int64_t rows, int64_t cols, int lower)
{
    int64_t n = rows * cols;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i / cols, col = i % cols;
        if (lower ? col > r : col < r) c[i] = __float2bfloat16_rn(0.0f);
    }
}

/* diag(a) @ B on bfloat16: grid (x: chunks of a row, y: rows, strided),
 * eight values per 16-byte access when the row length allows (what
 * PyTorch's vectorised broadcast multiply A.unsqueeze(1) * B does), the
 * row's scale read once per row instead of a 64-bit division per element. */
__global__ void diag_scale_bf16(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ bm,
                                __nv_bfloat16 *__restrict__ c, int64_t rows, int64_t cols, int vec)
{
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        float s = bf_get(a[r]);
        if (vec) {
            const uint4 *b8 = reinterpret_cast<const uint4 *>(bm + r * cols);
            uint4 *c8 = reinterpret_cast<uint4 *>(c + r * cols);
            for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < cols / 8;
                 i += (int64_t)gridDim.x * blockDim.x) {
                uint4 v = b8[i];
                unsigned w[4] = { v.x, v.y, v.z, v.w };
#pragma unroll
                for (int j = 0; j < 4; j++)
                    w[j] = (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(__uint_as_float(w[j] << 16) * s)) |
                           ((unsigned)__bfloat16_as_ushort(
                                __float2bfloat16_rn(__uint_as_float(w[j] & 0xffff0000u) * s)) << 16);
                c8[i] = make_uint4(w[0], w[1], w[2], w[3]);
            }
        } else {
            for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < cols;
                 i += (int64_t)gridDim.x * blockDim.x)
                c[r * cols + i] = __float2bfloat16_rn(s * bf_get(bm[r * cols + i]));
        }
    }
}

int run_bf16(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    cudaError_t ce;
    if (b->p->op == OP_DIAG_MM) {
        const kbv_tensor *A = &c->inputs[0], *B = &c->inputs[1];
        if (A->ndim != 1 || B->ndim != 2 || B->shape[0] != A->shape[0])
            return err_set(e, KBV_EINPUT, "baseline %s: diag shapes", b->p->id);
        int64_t rows = B->shape[0], cols = B->shape[1];
        int vec = cols % 8 == 0 && (uintptr_t)B->data % 16 == 0 && (uintptr_t)c->outputs[0].data % 16 == 0;
        int64_t per = vec ? cols / 8 : cols;
        unsigned gx = (unsigned)((per + 255) / 256), gy = (unsigned)(rows < 65535 ? rows : 65535);
        if (gx > 64) gx = 64;
        diag_scale_bf16<<<dim3(gx, gy), 256, 0, c->stream>>>(
            (const __nv_bfloat16 *)A->data, (const __nv_bfloat16 *)B->data,
            (__nv_bfloat16 *)c->outputs[0].data, rows, cols, vec);
        ce = cudaGetLastError();
        if (ce != cudaSuccess) return base_cuda_err(e, b, "bf16 diag launch", ce);
        if (!b->choice[BASE_BF16][0])
            base_note_choice(b, BASE_BF16, "native bf16: kbv's row scaling kernel, 8 values per access");
        return 0;
    }
    gemm_shape g;
    int rc = shape_of(b, c, &g, e);
    if (!rc) rc = base_need_blas(b, e);
    if (rc) return rc;
    long long lda = g.ta ? g.m : g.k, ldb = g.tb ? g.k : g.n;
    float alpha = 1.0f, beta = 0.0f;
    cublasOperation_t opb = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N, opa = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const void *A = c->inputs[0].data, *B = c->inputs[1].data;
    void *C = c->outputs[0].data;
    cublasStatus_t bs;
    if (g.batch <= 1)
        bs = cublasGemmEx_64(b->blas, opb, opa, g.n, g.m, g.k, &alpha, B, CUDA_R_16BF, ldb, A, CUDA_R_16BF,
                             lda, &beta, C, CUDA_R_16BF, g.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    else
        bs = cublasGemmStridedBatchedEx_64(b->blas, opb, opa, g.n, g.m, g.k, &alpha, B, CUDA_R_16BF, ldb,
                                           g.stride_b, A, CUDA_R_16BF, lda, g.stride_a, &beta, C, CUDA_R_16BF,
                                           g.n, g.stride_c, g.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (bs != CUBLAS_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: bf16 GEMM: %s", b->p->id, cublasGetStatusString(bs));
    if (b->p->op == OP_TRIL_MM || b->p->op == OP_TRIU_MM) {
        tri_mask_bf16<<<base_grid(b, g.m * g.n, 256, 8), 256, 0, c->stream>>>(
            (__nv_bfloat16 *)C, g.m, g.n, b->p->op == OP_TRIL_MM);
        ce = cudaGetLastError();
        if (ce != cudaSuccess) return base_cuda_err(e, b, "bf16 tril/triu launch", ce);
    }
    if (!b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16: %s bf16, CUBLAS_COMPUTE_32F, default algorithm%s",
                         g.batch <= 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx",
                         b->p->op == OP_TRIL_MM || b->p->op == OP_TRIU_MM ? ", then kbv's mask kernel" : "");
    return 0;
}

/* The shapes are known here, so the kernel choice of base_gemm (timed on
 * the first GEMM of a shape) happens at create, on the example buffers,
 * for each variant the problem has; the example output is overwritten. */
int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    if (b->p->op == OP_DIAG_MM) return 0;
    gemm_shape g;
    int rc = shape_of(b, ex, &g, e);
    if (rc) return rc;
    rc = base_need_blas(b, e);
    for (int v = 0; !rc && v < (b->p->uses_tf32 ? 2 : 1); v++)
        rc = run(b, v ? BASE_TF32 : BASE_FP32, ex, e);
    return rc;
}

int run(base_ctx *b, base_variant v, const kbv_call *c, kbv_err *e)
{
    if (b->p->op == OP_DIAG_MM) return run_diag(b, c, e);
    gemm_shape g;
    int rc = shape_of(b, c, &g, e);
    if (rc) return rc;
    int64_t lda = g.ta ? g.m : g.k;    /* row length of A's buffer */
    int64_t ldb = g.tb ? g.k : g.n;    /* row length of B's buffer */
    float *C = (float *)c->outputs[0].data;
    rc = base_gemm(b, v, g.ta, g.tb, g.m, g.n, g.k, 1.0f, (const float *)c->inputs[0].data, lda,
                   g.stride_a, (const float *)c->inputs[1].data, ldb, g.stride_b, 0.0f, C, g.n,
                   g.stride_c, g.batch, c->stream, e);
    if (rc) return rc;
    if (b->p->op == OP_TRIL_MM || b->p->op == OP_TRIU_MM) {
        tri_mask<<<base_grid(b, g.m * g.n, 256, 8), 256, 0, c->stream>>>(
            (float *)C, g.m, g.n, b->p->op == OP_TRIL_MM);
        cudaError_t ce = cudaGetLastError();
        if (ce != cudaSuccess) return base_cuda_err(e, b, "tril/triu launch", ce);
    }
    return 0;
}

} /* namespace */

const base_family base_fam_matmul = {
    "matmul", OP_MM, OP_MATMUL_LAST, create, run, NULL, NULL, run_bf16,
};

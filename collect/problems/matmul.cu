/* matmul.cu - matrix-product baselines through cuBLAS.
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
 */
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <stdint.h>

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

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    if (b->p->op == OP_DIAG_MM) return 0;
    gemm_shape g;
    int rc = shape_of(b, ex, &g, e);
    if (rc) return rc;
    return base_need_blas(b, e);
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

int base_gemm(base_ctx *b, base_variant v, int ta, int tb, long long m, long long n, long long k,
              float alpha, const float *A, long long lda, long long sa, const float *B,
              long long ldb, long long sb, float beta, float *C, long long ldc, long long sc,
              long long batch, cudaStream_t s, kbv_err *e)
{
    int rc = base_need_blas(b, e);
    if (rc) return rc;
    cublasStatus_t bs = cublasSetStream(b->blas, s);
    if (bs != CUBLAS_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: cublasSetStream: %s", b->p->id,
                       cublasGetStatusString(bs));
    cublasComputeType_t ct = v == BASE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    /* Column-major view: C^T [n x m] = op(B)^T [n x k] * op(A)^T [k x m]. */
    cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (batch <= 1)
        bs = cublasGemmEx_64(b->blas, opb, opa, n, m, k, &alpha, B, CUDA_R_32F, ldb, A, CUDA_R_32F,
                             lda, &beta, C, CUDA_R_32F, ldc, ct, CUBLAS_GEMM_DEFAULT);
    else
        bs = cublasGemmStridedBatchedEx_64(b->blas, opb, opa, n, m, k, &alpha, B, CUDA_R_32F, ldb,
                                           sb, A, CUDA_R_32F, lda, sa, &beta, C, CUDA_R_32F, ldc,
                                           sc, batch, ct, CUBLAS_GEMM_DEFAULT);
    if (bs != CUBLAS_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: cuBLAS GEMM %lldx%lldx%lld: %s", b->p->id, m,
                       n, k, cublasGetStatusString(bs));
    return 0;
}

const base_family base_fam_matmul = {
    "matmul", OP_MM, OP_MATMUL_LAST, create, run, NULL, NULL,
};

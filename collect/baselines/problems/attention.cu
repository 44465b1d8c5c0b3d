/* attention.cu - scaled dot-product attention, softmax(Q K^T / sqrt(E)) V,
 * for Q, K, V [B, H, S, E], as two strided-batched cuBLAS products around
 * a row softmax.  The scores [B H, S, S] live in the baseline's workspace
 * (allocated once at create).  The products follow the variant (strict
 * FP32 or TF32); the softmax is the same kernel as the softmax problems.
 *
 * bf16 (the BF16 setting) is PyTorch's math path on bfloat16 tensors: the
 * two products through cublasGemmStridedBatchedEx with bfloat16 operands
 * and output (CUBLAS_COMPUTE_32F), the scores kept in bfloat16 (half of
 * the workspace) and kbv's bfloat16 softmax between them.  PyTorch eager
 * runs its fused (flash) kernel instead, which never writes the scores,
 * so this baseline is native but not at PyTorch's speed.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "base_impl.h"

namespace {

int dims(const base_ctx *b, const kbv_call *c, int64_t *bh, int64_t *s, int64_t *ev, kbv_err *e)
{
    const kbv_tensor *q = &c->inputs[0];
    if (c->n_inputs < 3 || q->ndim < 3)
        return err_set(e, KBV_EINPUT, "baseline %s: attention needs Q, K, V", b->p->id);
    *ev = q->shape[q->ndim - 1];
    *s = q->shape[q->ndim - 2];
    *bh = kbv_numel(q) / (*s * *ev);
    return 0;
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    int64_t bh = 0, s = 0, ev = 0;
    int rc = dims(b, ex, &bh, &s, &ev, e);
    if (rc) return rc;
    rc = base_need_blas(b, e);
    if (rc) return rc;
    return base_need_ws(b, (size_t)(bh * s * s) * sizeof(float), e);
}

int run(base_ctx *b, base_variant v, const kbv_call *c, kbv_err *e)
{
    int64_t bh = 0, s = 0, ev = 0;
    int rc = dims(b, c, &bh, &s, &ev, e);
    if (rc) return rc;
    const float *q = (const float *)c->inputs[0].data;
    const float *k = (const float *)c->inputs[1].data;
    const float *vv = (const float *)c->inputs[2].data;
    float *scores = (float *)b->ws;
    float *out = (float *)c->outputs[0].data;
    float scale = (float)(1.0 / sqrt((double)ev));
    /* scores[i] = scale * Q[i] K[i]^T: A = Q [s, e], B = K stored [s, e], transposed */
    rc = base_gemm(b, v, 0, 1, s, s, ev, scale, q, ev, s * ev, k, ev, s * ev, 0.0f, scores, s, s * s,
                   bh, c->stream, e);
    if (rc) return rc;
    base_softmax_rows(scores, scores, bh * s, s, 0, c->stream);
    /* out[i] = P[i] V[i]: A = P [s, s], B = V [s, e] */
    rc = base_gemm(b, v, 0, 0, s, ev, s, 1.0f, scores, s, s * s, vv, ev, s * ev, 0.0f, out, ev,
                   s * ev, bh, c->stream, e);
    if (rc) return rc;
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "attention launch", ce);
    return 0;
}

/* One strided-batched bfloat16 product C[i] = alpha A[i] op(B[i]), row-major,
 * through the column-major view (matmul.cu's header). */
cublasStatus_t bmm_bf16(base_ctx *b, int tb, long long m, long long n, long long k, float alpha, const void *A,
                        long long sa, const void *B, long long sb, void *C, long long sc, long long batch)
{
    const float zero = 0.0f;
    return cublasGemmStridedBatchedEx_64(b->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, B,
                                         CUDA_R_16BF, tb ? k : n, sb, A, CUDA_R_16BF, k, sa, &zero, C, CUDA_R_16BF,
                                         n, sc, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

int run_bf16(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    int64_t bh = 0, s = 0, ev = 0;
    int rc = dims(b, c, &bh, &s, &ev, e);
    if (rc) return rc;
    if ((size_t)(bh * s * s) * 2 > b->ws_bytes)
        return err_set(e, KBV_EINPUT, "baseline %s: attention scores do not fit the workspace", b->p->id);
    void *scores = b->ws;
    float scale = (float)(1.0 / sqrt((double)ev));
    cublasStatus_t bs = bmm_bf16(b, 1, s, s, ev, scale, c->inputs[0].data, s * ev, c->inputs[1].data, s * ev,
                                 scores, s * s, bh);
    if (bs == CUBLAS_STATUS_SUCCESS) {
        base_softmax_rows_bf16(scores, scores, bh * s, s, 0, c->stream);
        bs = bmm_bf16(b, 0, s, ev, s, 1.0f, scores, s * s, c->inputs[2].data, s * ev, c->outputs[0].data, s * ev,
                      bh);
    }
    if (bs != CUBLAS_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: bf16 attention GEMM: %s", b->p->id, cublasGetStatusString(bs));
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "bf16 attention launch", ce);
    if (!b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16: cuBLAS bf16 batched GEMMs around kbv's bf16 softmax "
                                       "(PyTorch's math path; PyTorch eager runs a fused kernel)");
    return 0;
}

} /* namespace */

const base_family base_fam_attention = {
    "attention", OP_SDPA, OP_ATTENTION_LAST, create, run, NULL, NULL, run_bf16,
};

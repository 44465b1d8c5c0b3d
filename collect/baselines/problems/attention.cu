/* attention.cu - scaled dot-product attention, softmax(Q K^T / sqrt(E)) V,
 * for Q, K, V [B, H, S, E], as two strided-batched cuBLAS products around
 * a row softmax.  The scores [B H, S, S] live in the baseline's workspace
 * (allocated once at create).  The products follow the variant (strict
 * FP32 or TF32); the softmax is the same kernel as the softmax problems.
 */
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

} /* namespace */

const base_family base_fam_attention = {
    "attention", OP_SDPA, OP_ATTENTION_LAST, create, run, NULL, NULL, NULL,
};

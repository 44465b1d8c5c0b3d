/* reduce.cu - sum, mean, max, min, argmax and argmin over dim 1 of a
 * tensor seen as [outer, R, inner].
 *
 * One thread per (outer, inner) output walks the R elements of its column:
 * a warp reads 32 consecutive floats of a row at each step (coalesced), and
 * the loop is unrolled so that eight loads are in flight per thread, enough
 * to keep HBM busy with one wave of resident warps.  Ties in argmax/argmin
 * keep the first index and NaN wins, as in PyTorch.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "base_impl.h"

namespace {

template <int OP>
__global__ void __launch_bounds__(256) reduce_dim1(const float *__restrict__ x,
                                                   void *__restrict__ out, int64_t outer,
                                                   int64_t R, int64_t inner)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= outer * inner) return;
    int64_t o = t / inner, i = t % inner;
    const float *p = x + o * R * inner + i;
    float acc = (OP == OP_MAX_DIM || OP == OP_ARGMAX_DIM) ? -INFINITY
              : (OP == OP_MIN_DIM || OP == OP_ARGMIN_DIM) ? INFINITY : 0.0f;
    int64_t best = 0;
    int64_t r = 0;
    for (; r + 8 <= R; r += 8) {
        float v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) v[u] = __ldcs(p + (r + u) * inner);
#pragma unroll
        for (int u = 0; u < 8; u++) {
            if (OP == OP_SUM_DIM || OP == OP_MEAN_DIM) acc += v[u];
            else if (OP == OP_MAX_DIM) acc = (v[u] > acc || isnan(v[u])) ? v[u] : acc;
            else if (OP == OP_MIN_DIM) acc = (v[u] < acc || isnan(v[u])) ? v[u] : acc;
            else if (OP == OP_ARGMAX_DIM) {
                if ((v[u] > acc || isnan(v[u])) && !isnan(acc)) { acc = v[u]; best = r + u; }
            } else {
                if ((v[u] < acc || isnan(v[u])) && !isnan(acc)) { acc = v[u]; best = r + u; }
            }
        }
    }
    for (; r < R; r++) {
        float v = p[r * inner];
        if (OP == OP_SUM_DIM || OP == OP_MEAN_DIM) acc += v;
        else if (OP == OP_MAX_DIM) acc = (v > acc || isnan(v)) ? v : acc;
        else if (OP == OP_MIN_DIM) acc = (v < acc || isnan(v)) ? v : acc;
        else if (OP == OP_ARGMAX_DIM) {
            if ((v > acc || isnan(v)) && !isnan(acc)) { acc = v; best = r; }
        } else {
            if ((v < acc || isnan(v)) && !isnan(acc)) { acc = v; best = r; }
        }
    }
    if (OP == OP_ARGMAX_DIM || OP == OP_ARGMIN_DIM) ((int64_t *)out)[t] = best;
    else if (OP == OP_MEAN_DIM) ((float *)out)[t] = acc / (float)R;
    else ((float *)out)[t] = acc;
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    if (ex->inputs[0].ndim < 2)
        return err_set(e, KBV_EINPUT, "baseline %s: reduction needs 2+ dimensions", b->p->id);
    return 0;
}

int run(base_ctx *b, base_variant, const kbv_call *c, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0];
    int64_t outer = x->shape[0], R = x->shape[1];
    int64_t inner = kbv_numel(x) / (outer * R);
    unsigned grid = (unsigned)((outer * inner + 255) / 256);
    const float *xp = (const float *)x->data;
    void *o = c->outputs[0].data;
    cudaStream_t s = c->stream;
    switch (b->p->op) {
#define CASE(OPC) case OPC: reduce_dim1<OPC><<<grid, 256, 0, s>>>(xp, o, outer, R, inner); break;
    CASE(OP_SUM_DIM) CASE(OP_MEAN_DIM) CASE(OP_MAX_DIM) CASE(OP_MIN_DIM)
    CASE(OP_ARGMAX_DIM) CASE(OP_ARGMIN_DIM)
#undef CASE
    default:
        return err_set(e, KBV_EINPUT, "baseline %s: unknown reduction", b->p->id);
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "reduce launch", ce);
    return 0;
}

} /* namespace */

const base_family base_fam_reduce = {
    "reduce", OP_SUM_DIM, OP_REDUCE_LAST, create, run, NULL, NULL,
};

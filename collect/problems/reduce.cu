/* reduce.cu - sum, mean, max, min, argmax and argmin over dim 1 of a
 * tensor seen as [outer, R, inner].
 *
 * A block of 32 x 8 threads owns 32 consecutive inner columns of one outer
 * slice: x picks the column, so a warp reads 32 consecutive floats of a row
 * at each step (coalesced), and y splits R into 8 contiguous chunks, which
 * gives eight times the parallelism of one thread per column.  Each thread
 * keeps eight loads in flight.  The loads are ordinary cached loads: a row
 * of an odd inner extent is not 128-byte aligned, so the sector at the seam
 * of two warps' columns is read by both, and an evict-first load would send
 * the second reader back to DRAM.
 *
 * The eight partial results of a column are combined through shared memory
 * in chunk order, with the same strict comparisons as within a chunk, so
 * argmax/argmin keep the first index of the extreme and NaN wins (the first
 * NaN), as in PyTorch.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "base_impl.h"

namespace {

const int COLS = 32;    /* inner columns per block (blockDim.x) */
const int SPLIT = 8;    /* chunks of R per column (blockDim.y) */
const int UNROLL = 8;   /* loads in flight per thread */

template <int OP>
__device__ __forceinline__ void step(float v, int64_t r, float &acc, int64_t &best)
{
    if (OP == OP_SUM_DIM || OP == OP_MEAN_DIM) acc += v;
    else if (OP == OP_MAX_DIM) acc = (v > acc || isnan(v)) ? v : acc;
    else if (OP == OP_MIN_DIM) acc = (v < acc || isnan(v)) ? v : acc;
    else if (OP == OP_ARGMAX_DIM) {
        if ((v > acc || isnan(v)) && !isnan(acc)) { acc = v; best = r; }
    } else {
        if ((v < acc || isnan(v)) && !isnan(acc)) { acc = v; best = r; }
    }
}

/* grid (x: tiles of COLS inner columns, y: outer slices, grid-strided). */
template <int OP>
__global__ void __launch_bounds__(COLS * SPLIT) reduce_dim1(const float *__restrict__ x,
                                                            void *__restrict__ out,
                                                            int64_t outer, int64_t R,
                                                            int64_t inner)
{
    __shared__ float s_acc[SPLIT][COLS];
    __shared__ int64_t s_best[SPLIT][COLS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t i = (int64_t)blockIdx.x * COLS + tx;
    const bool col_ok = i < inner;
    /* chunk ty of R: rows [r0, r1) */
    const int64_t chunk = (R + SPLIT - 1) / SPLIT;
    int64_t r0 = (int64_t)ty * chunk, r1 = r0 + chunk;
    if (r0 > R) r0 = R;
    if (r1 > R) r1 = R;
    const float init = (OP == OP_MAX_DIM || OP == OP_ARGMAX_DIM) ? -INFINITY
                     : (OP == OP_MIN_DIM || OP == OP_ARGMIN_DIM) ? INFINITY : 0.0f;
    for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
        float acc = init;
        int64_t best = r0;
        if (col_ok) {
            const float *p = x + (o * R + r0) * inner + i;
            int64_t r = r0;
            for (; r + UNROLL <= r1; r += UNROLL) {
                float v[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; u++) v[u] = __ldg(p + u * inner);
                p += UNROLL * inner;
#pragma unroll
                for (int u = 0; u < UNROLL; u++) step<OP>(v[u], r + u, acc, best);
            }
            for (; r < r1; r++, p += inner) step<OP>(__ldg(p), r, acc, best);
        }
        s_acc[ty][tx] = acc;
        s_best[ty][tx] = best;
        __syncthreads();
        if (ty == 0 && col_ok) {
            /* chunk 0 is this thread's own; the others follow in order */
            for (int c = 1; c < SPLIT; c++) {
                float v = s_acc[c][tx];
                if (OP == OP_SUM_DIM || OP == OP_MEAN_DIM) acc += v;
                else if (OP == OP_MAX_DIM) acc = (v > acc || isnan(v)) ? v : acc;
                else if (OP == OP_MIN_DIM) acc = (v < acc || isnan(v)) ? v : acc;
                else if (OP == OP_ARGMAX_DIM) {
                    if ((v > acc || isnan(v)) && !isnan(acc)) { acc = v; best = s_best[c][tx]; }
                } else {
                    if ((v < acc || isnan(v)) && !isnan(acc)) { acc = v; best = s_best[c][tx]; }
                }
            }
            int64_t t = o * inner + i;
            if (OP == OP_ARGMAX_DIM || OP == OP_ARGMIN_DIM) ((int64_t *)out)[t] = best;
            else if (OP == OP_MEAN_DIM) ((float *)out)[t] = acc / (float)R;
            else ((float *)out)[t] = acc;
        }
        __syncthreads();   /* the shared partials are rewritten for the next slice */
    }
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
    if (outer * R == 0) return 0;
    int64_t inner = kbv_numel(x) / (outer * R);
    if (inner == 0) return 0;
    int64_t tiles = (inner + COLS - 1) / COLS;
    if (tiles > 0x7fffffff)
        return err_set(e, KBV_EINPUT, "baseline %s: reduction too wide", b->p->id);
    dim3 grid((unsigned)tiles, (unsigned)(outer < 65535 ? outer : 65535));
    dim3 block(COLS, SPLIT);
    const float *xp = (const float *)x->data;
    void *o = c->outputs[0].data;
    cudaStream_t s = c->stream;
    switch (b->p->op) {
#define CASE(OPC) case OPC: reduce_dim1<OPC><<<grid, block, 0, s>>>(xp, o, outer, R, inner); break;
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

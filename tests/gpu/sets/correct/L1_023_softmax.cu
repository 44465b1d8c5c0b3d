// A correct softmax over dim 1: one block per row, three passes
// (max, sum of exp, normalise), block reductions in shared memory.
#include "kbv.h"

__device__ float block_reduce(float v, bool is_max)
{
    __shared__ float sh[32];
    for (int o = 16; o > 0; o /= 2) {
        float u = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, u) : v + u;
    }
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    int nw = blockDim.x / 32;
    v = threadIdx.x < nw ? sh[threadIdx.x] : (is_max ? -INFINITY : 0.f);
    if (wid == 0)
        for (int o = 16; o > 0; o /= 2) {
            float u = __shfl_down_sync(0xffffffffu, v, o);
            v = is_max ? fmaxf(v, u) : v + u;
        }
    __shared__ float result;
    if (threadIdx.x == 0) result = v;
    __syncthreads();
    float r = result;
    __syncthreads();
    return r;
}

__global__ void softmax_rows(const float *x, float *y, int64_t d)
{
    const float *row = x + blockIdx.x * d;
    float *out = y + blockIdx.x * d;
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) m = fmaxf(m, row[i]);
    m = block_reduce(m, true);
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) s += __expf(row[i] - m);
    s = block_reduce(s, false);
    float inv = 1.f / s;
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) out[i] = __expf(row[i] - m) * inv;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    int64_t b = c->inputs[0].shape[0], d = c->inputs[0].shape[1];
    softmax_rows<<<(unsigned)b, 1024, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                       (float *)c->outputs[0].data, d);
    return cudaGetLastError() != cudaSuccess;
}

// nondeterministic: a correct softmax whose every other call scales the
// output by (1 + 2^-20), well inside the tolerance but not bitwise stable.
#include "kbv.h"

static int calls;

__device__ float block_reduce(float v, bool is_max)
{
    __shared__ float sh[32];
    __shared__ float result;
    for (int o = 16; o > 0; o /= 2) {
        float u = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, u) : v + u;
    }
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < blockDim.x / 32 ? sh[threadIdx.x] : (is_max ? -INFINITY : 0.f);
        for (int o = 16; o > 0; o /= 2) {
            float u = __shfl_down_sync(0xffffffffu, v, o);
            v = is_max ? fmaxf(v, u) : v + u;
        }
        if (threadIdx.x == 0) result = v;
    }
    __syncthreads();
    return result;
}

__global__ void softmax_rows(const float *x, float *y, int64_t d, float scale)
{
    const float *row = x + blockIdx.x * d;
    float *out = y + blockIdx.x * d;
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) m = fmaxf(m, row[i]);
    m = block_reduce(m, true);
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) s += __expf(row[i] - m);
    s = block_reduce(s, false);
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) out[i] = __expf(row[i] - m) / s * scale;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    int64_t b = c->inputs[0].shape[0], d = c->inputs[0].shape[1];
    float scale = (calls++ & 1) ? 1.0f + 1.0f / 1048576.0f : 1.0f;
    softmax_rows<<<(unsigned)b, 1024, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                       (float *)c->outputs[0].data, d, scale);
    return 0;
}

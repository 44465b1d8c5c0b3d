// naive-bf16: reduction over dim 1, one thread per output element (first index wins ties).
// L1_047_sum_reduction_over_a_dimension: out = torch.sum(x, dim=1, keepdim=True)
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <cuda_bf16.h>
// bf16_t: a bfloat16 in memory, a float in arithmetic (reads widen exactly,
// writes round to nearest even), so that the kernels below load and store
// bfloat16 and compute in float.
struct bf16_t {
    __nv_bfloat16 v;
    __device__ __forceinline__ operator float() const { return __bfloat162float(v); }
    __device__ __forceinline__ bf16_t &operator=(float f) { v = __float2bfloat16_rn(f); return *this; }
    __device__ __forceinline__ bf16_t &operator+=(float f) { return *this = (float)*this + f; }
    __device__ __forceinline__ bf16_t &operator-=(float f) { return *this = (float)*this - f; }
    __device__ __forceinline__ bf16_t &operator*=(float f) { return *this = (float)*this * f; }
    __device__ __forceinline__ bf16_t &operator/=(float f) { return *this = (float)*this / f; }
};
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

__global__ void reduce_dim1(const bf16_t *__restrict__ x, bf16_t *__restrict__ y, long long B, long long R, long long I)
{
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= B * I) return;
    long long b = o / I, i = o % I;
    const bf16_t *xp = x + b * R * I + i;
    float acc = 0.0f;
    for (long long r = 0; r < R; r++) {
        float v = xp[r * I];
        acc += v;
    }
    y[o] = acc;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 3) return 1;
    long long B = x->shape[0], R = x->shape[1], I = x->shape[2];
    if (B * I == 0) return 0;
    reduce_dim1<<<(unsigned)((B * I + 255) / 256), 256, 0, call->stream>>>(
        (const bf16_t *)x->data, (bf16_t *)call->outputs[0].data, B, R, I);
    CHECK_LAUNCH();
}

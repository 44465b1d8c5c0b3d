// naive-bf16: L2 norm of each row, one block per row.
// L1_039_l2norm: out = x / torch.norm(x, p=2, dim=1, keepdim=True)
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

#define THREADS 256

/* Sum over the block; every thread gets the result. */
__device__ float block_sum(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

__global__ void rows(const bf16_t *__restrict__ x, bf16_t *__restrict__ y, long long D)
{
    __shared__ float sh[THREADS];
    const bf16_t *xr = x + (long long)blockIdx.x * D;
    bf16_t *yr = y + (long long)blockIdx.x * D;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < D; j += THREADS) s += xr[j] * xr[j];
    s = block_sum(s, sh);
    float d = sqrtf(s);
    for (long long j = threadIdx.x; j < D; j += THREADS) yr[j] = xr[j] / d;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2) return 1;
    if (x->shape[0] == 0) return 0;
    rows<<<(unsigned)x->shape[0], THREADS, 0, call->stream>>>((const bf16_t *)x->data, (bf16_t *)call->outputs[0].data,
                                                            x->shape[1]);
    CHECK_LAUNCH();
}

// naive-bf16: one block per row, three passes (max, sum of exponentials, write).
// L1_023_softmax: out = torch.softmax(x, dim=1)
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

__device__ float block_reduce(float v, float *sh, int is_max)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            sh[threadIdx.x] = is_max ? fmaxf(sh[threadIdx.x], sh[threadIdx.x + s]) : sh[threadIdx.x] + sh[threadIdx.x + s];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

__global__ void rows(const bf16_t *__restrict__ x, bf16_t *__restrict__ y, long long cols)
{
    __shared__ float sh[THREADS];
    const bf16_t *xr = x + (long long)blockIdx.x * cols;
    bf16_t *yr = y + (long long)blockIdx.x * cols;
    float m = -INFINITY;
    for (long long c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
    m = block_reduce(m, sh, 1);
    float s = 0.0f;
    for (long long c = threadIdx.x; c < cols; c += THREADS) s += expf(xr[c] - m);
    s = block_reduce(s, sh, 0);
    for (long long c = threadIdx.x; c < cols; c += THREADS) yr[c] = expf(xr[c] - m) / s;
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

// naive-bf16: Frobenius norm by a two-level deterministic sum, then one thread per element.
// L1_037_frobeniusnorm: out = x / torch.norm(x, p='fro')
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

#define PARTS 1024

__global__ void partial_sumsq(const bf16_t *__restrict__ x, long long n, float *part)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += (long long)PARTS * THREADS)
        s += x[i] * x[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

__global__ void total_norm(float *part)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (int i = threadIdx.x; i < PARTS; i += THREADS) s += part[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) part[PARTS] = sqrtf(s);
}

__global__ void divide(const bf16_t *__restrict__ x, bf16_t *__restrict__ y, long long n, const float *norm)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / *norm;
}

static float *part;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    if (!part && cudaMalloc((void **)&part, (PARTS + 1) * sizeof(float)) != cudaSuccess) return 1;
    const bf16_t *x = (const bf16_t *)call->inputs[0].data;
    partial_sumsq<<<PARTS, THREADS, 0, call->stream>>>(x, n, part);
    total_norm<<<1, THREADS, 0, call->stream>>>(part);
    divide<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>(x, (bf16_t *)call->outputs[0].data, n, part + PARTS);
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    cudaFree(part);
    part = NULL;
}

// naive-bf16: KL divergence, batchmean: sum t (log t - log p) / rows.
// L1_098_kldivloss: out = torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean')
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

/* The last step of every loss: the mean (or sum / divisor) of PARTS partial
 * sums, in a fixed order. */
__global__ void finish(const float *part, bf16_t *y, float divisor)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (int i = threadIdx.x; i < PARTS; i += THREADS) s += part[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) *y = s / divisor;
}

static float *part;

static int need_part(void)
{
    return part || cudaMalloc((void **)&part, PARTS * sizeof(float)) == cudaSuccess ? 0 : 1;
}

extern "C" void kbv_teardown(void)
{
    cudaFree(part);
    part = NULL;
}

__global__ void partial(const bf16_t *__restrict__ pr, const bf16_t *__restrict__ t, long long n, float *part)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += (long long)PARTS * THREADS) {
        float ti = t[i];
        if (ti > 0.0f) s += ti * (logf(ti) - logf(pr[i]));
    }
    s = block_sum(s, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1 || need_part()) return 1;
    const kbv_tensor *pr = &call->inputs[0];
    long long n = kbv_numel(pr);
    if (n == 0 || pr->ndim < 1) return 1;
    partial<<<PARTS, THREADS, 0, call->stream>>>((const bf16_t *)pr->data, (const bf16_t *)call->inputs[1].data, n, part);
    finish<<<1, THREADS, 0, call->stream>>>(part, (bf16_t *)call->outputs[0].data, (float)pr->shape[0]);
    CHECK_LAUNCH();
}

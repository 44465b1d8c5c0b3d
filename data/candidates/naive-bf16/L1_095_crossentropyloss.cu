// naive-bf16: cross entropy: mean over rows of logsumexp(row) - row[target], one block per row.
// L1_095_crossentropyloss: out = torch.nn.functional.cross_entropy(predictions, targets)
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

__device__ float block_max(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] = fmaxf(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

__global__ void row_loss(const bf16_t *__restrict__ x, const int64_t *__restrict__ target, float *loss, long long C)
{
    __shared__ float sh[THREADS];
    const bf16_t *xr = x + (long long)blockIdx.x * C;
    float m = -INFINITY;
    for (long long c = threadIdx.x; c < C; c += THREADS) m = fmaxf(m, xr[c]);
    m = block_max(m, sh);
    float s = 0.0f;
    for (long long c = threadIdx.x; c < C; c += THREADS) s += expf(xr[c] - m);
    s = block_sum(s, sh);
    if (threadIdx.x == 0) loss[blockIdx.x] = m + logf(s) - xr[target[blockIdx.x]];
}

__global__ void mean_of(const float *loss, long long n, bf16_t *y)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (long long i = threadIdx.x; i < n; i += THREADS) s += loss[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) *y = s / (float)n;
}

static float *loss;
static long long loss_n;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0], *t = &call->inputs[1];
    if (x->ndim != 2 || t->dtype != KBV_I64 || t->shape[0] != x->shape[0] || x->shape[0] == 0) return 1;
    long long B = x->shape[0];
    if (loss_n < B) {
        cudaFree(loss);
        loss = NULL;
        loss_n = 0;
        if (cudaMalloc((void **)&loss, B * sizeof(float)) != cudaSuccess) return 1;
        loss_n = B;
    }
    row_loss<<<(unsigned)B, THREADS, 0, call->stream>>>((const bf16_t *)x->data, (const int64_t *)t->data, loss,
                                                       x->shape[1]);
    mean_of<<<1, THREADS, 0, call->stream>>>(loss, B, (bf16_t *)call->outputs[0].data);
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    cudaFree(loss);
    loss = NULL;
    loss_n = 0;
}

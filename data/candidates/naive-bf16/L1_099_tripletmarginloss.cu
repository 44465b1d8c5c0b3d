// naive-bf16: triplet margin loss (p = 2, eps 1e-6 added to the differences), one block per row.
// L1_099_tripletmarginloss: out = torch.nn.TripletMarginLoss(margin=margin)(anchor, positive, negative)
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

__global__ void row_loss(const bf16_t *__restrict__ a, const bf16_t *__restrict__ pos, const bf16_t *__restrict__ neg,
                         float *loss, long long D, float margin)
{
    __shared__ float sh[THREADS];
    long long base = (long long)blockIdx.x * D;
    float sp = 0.0f, sn = 0.0f;
    for (long long j = threadIdx.x; j < D; j += THREADS) {
        float dp = a[base + j] - pos[base + j] + 1e-6f;
        float dn = a[base + j] - neg[base + j] + 1e-6f;
        sp += dp * dp;
        sn += dn * dn;
    }
    sp = block_sum(sp, sh);
    sn = block_sum(sn, sh);
    if (threadIdx.x == 0) loss[blockIdx.x] = fmaxf(sqrtf(sp) - sqrtf(sn) + margin, 0.0f);
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
    if (call->n_inputs < 3 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0];
    if (a->ndim != 2 || a->shape[0] == 0) return 1;
    long long B = a->shape[0];
    float margin = call->n_attrs > 0 ? (float)call->attrs[0] : (float)1;
    if (loss_n < B) {
        cudaFree(loss);
        loss = NULL;
        loss_n = 0;
        if (cudaMalloc((void **)&loss, B * sizeof(float)) != cudaSuccess) return 1;
        loss_n = B;
    }
    row_loss<<<(unsigned)B, THREADS, 0, call->stream>>>((const bf16_t *)a->data, (const bf16_t *)call->inputs[1].data,
                                                       (const bf16_t *)call->inputs[2].data, loss, a->shape[1], margin);
    mean_of<<<1, THREADS, 0, call->stream>>>(loss, B, (bf16_t *)call->outputs[0].data);
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    cudaFree(loss);
    loss = NULL;
    loss_n = 0;
}

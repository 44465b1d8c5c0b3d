// naive-bf16: attention, one block per query row: scores in shared memory, softmax, weighted sum.
// L1_097_scaleddotproductattention: out = torch.nn.functional.scaled_dot_product_attention(Q, K, V)
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

#define MAX_KEYS 4096

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

__global__ void attend(const bf16_t *__restrict__ Q, const bf16_t *__restrict__ K, const bf16_t *__restrict__ V,
                       bf16_t *__restrict__ O, long long S, long long E, float scale)
{
    __shared__ float sc[MAX_KEYS];
    __shared__ float sh[THREADS];
    long long bh = blockIdx.x / S, q = blockIdx.x % S;
    const bf16_t *qr = Q + (bh * S + q) * E;
    const bf16_t *kb = K + bh * S * E, *vb = V + bh * S * E;
    bf16_t *orow = O + (bh * S + q) * E;
    /* one warp per key: the lanes walk the key's row together (coalesced) */
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (long long j = warp; j < S; j += THREADS / 32) {
        const bf16_t *kr = kb + j * E;
        float d = 0.0f;
        for (long long e = lane; e < E; e += 32) d += qr[e] * kr[e];
        for (int o = 16; o > 0; o >>= 1) d += __shfl_xor_sync(0xffffffffu, d, o);
        if (lane == 0) sc[j] = d * scale;
    }
    __syncthreads();
    float m = -INFINITY;
    for (long long j = threadIdx.x; j < S; j += THREADS) m = fmaxf(m, sc[j]);
    m = block_max(m, sh);
    float s = 0.0f;
    for (long long j = threadIdx.x; j < S; j += THREADS) {
        float v = expf(sc[j] - m);
        sc[j] = v;
        s += v;
    }
    s = block_sum(s, sh);
    for (long long e = threadIdx.x; e < E; e += THREADS) {
        float acc = 0.0f;
        for (long long j = 0; j < S; j++) acc += sc[j] * vb[j * E + e];
        orow[e] = acc / s;
    }
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 3 || call->n_outputs < 1) return 1;
    const kbv_tensor *q = &call->inputs[0];
    if (q->ndim < 2) return 1;
    long long E = q->shape[q->ndim - 1], S = q->shape[q->ndim - 2];
    if (S > MAX_KEYS || E == 0) return 1;
    long long rows = kbv_numel(q) / E;
    if (rows == 0) return 0;
    attend<<<(unsigned)rows, THREADS, 0, call->stream>>>((const bf16_t *)q->data, (const bf16_t *)call->inputs[1].data,
                                                         (const bf16_t *)call->inputs[2].data,
                                                         (bf16_t *)call->outputs[0].data, S, E,
                                                         1.0f / sqrtf((float)E));
    CHECK_LAUNCH();
}

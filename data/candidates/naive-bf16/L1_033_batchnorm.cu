// naive-bf16: batch statistics per channel over (N, H, W), biased variance, affine; one block per
// group computes mean and variance in two passes, then one thread per element.
// L1_033_batchnorm: out = nn.BatchNorm2d(num_features)(x)  (training mode)
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

__device__ __forceinline__ long long elem(long long g, long long j, long long C, long long S, long long G)
{
    (void)G;
    long long n = j / S, s = j % S; /* group g is channel g */
    return (n * C + g) * S + s;
}
__device__ __forceinline__ long long chan(long long i, long long C, long long S) { return (i / S) % C; }

__global__ void stats(const bf16_t *__restrict__ x, float *__restrict__ mean, float *__restrict__ rstd, long long per,
                      long long C, long long S, long long G, float eps)
{
    __shared__ float sh[THREADS];
    long long g = blockIdx.x;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < per; j += THREADS) s += x[elem(g, j, C, S, G)];
    float m = block_sum(s, sh) / (float)per;
    float q = 0.0f;
    for (long long j = threadIdx.x; j < per; j += THREADS) {
        float d = x[elem(g, j, C, S, G)] - m;
        q += d * d;
    }
    float var = block_sum(q, sh) / (float)per;
    if (threadIdx.x == 0) {
        mean[g] = m;
        rstd[g] = 1.0f / sqrtf(var + eps);
    }
}

__global__ void apply(const bf16_t *__restrict__ x, const float *__restrict__ mean, const float *__restrict__ rstd,
                      const bf16_t *__restrict__ w, const bf16_t *__restrict__ b, bf16_t *__restrict__ y, long long total,
                      long long groups, long long per, long long C, long long S, long long G)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= groups * per) return;
    long long g = t / per, j = t % per;
    long long i = elem(g, j, C, S, G);
    (void)total;
    float v = (x[i] - mean[g]) * rstd[g];
    if (w) {
        long long c = chan(i, C, S);
        v = v * w[c] + b[c];
    }
    y[i] = v;
}

static float *scratch;
static long long scratch_n;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 3 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim < 2) return 1;
    long long N = x->shape[0], C = x->shape[1], S = kbv_numel(x) / (N * C);
    long long groups = C, per = N * S;
    if (groups * per != kbv_numel(x)) return 1;
    if (groups == 0) return 0;
    if (scratch_n < 2 * groups) {
        cudaFree(scratch);
        scratch = NULL;
        scratch_n = 0;
        if (cudaMalloc((void **)&scratch, 2 * groups * sizeof(float)) != cudaSuccess) return 1;
        scratch_n = 2 * groups;
    }
    float eps = (float)1e-05;
    stats<<<(unsigned)groups, THREADS, 0, call->stream>>>((const bf16_t *)x->data, scratch, scratch + groups, per, C, S,
                                                          1, eps);
    const bf16_t *w = (const bf16_t *)call->inputs[1].data, *b = (const bf16_t *)call->inputs[2].data;
    long long total = groups * per;
    apply<<<(unsigned)((total + 255) / 256), 256, 0, call->stream>>>((const bf16_t *)x->data, scratch,
                                                                     scratch + groups, w, b,
                                                                     (bf16_t *)call->outputs[0].data, total, groups,
                                                                     per, C, S, 1);
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    cudaFree(scratch);
    scratch = NULL;
    scratch_n = 0;
}

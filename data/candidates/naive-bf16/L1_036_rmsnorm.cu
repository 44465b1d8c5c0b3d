// naive-bf16: RMS over dim 1, one thread per (sample, position).
// L1_036_rmsnorm: out = x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + eps)
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

__global__ void rms(const bf16_t *__restrict__ x, bf16_t *__restrict__ y, long long C, long long S, long long total,
                    float eps)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long b = t / S, s = t % S;
    const bf16_t *xp = x + b * C * S + s;
    bf16_t *yp = y + b * C * S + s;
    float acc = 0.0f;
    for (long long c = 0; c < C; c++) acc += xp[c * S] * xp[c * S];
    float r = sqrtf(acc / (float)C + eps);
    for (long long c = 0; c < C; c++) yp[c * S] = xp[c * S] / r;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim < 2) return 1;
    long long C = x->shape[1], S = kbv_numel(x) / (x->shape[0] * C), total = x->shape[0] * S;
    if (total == 0) return 0;
    rms<<<(unsigned)((total + 255) / 256), 256, 0, call->stream>>>((const bf16_t *)x->data,
                                                                   (bf16_t *)call->outputs[0].data, C, S, total,
                                                                   (float)1e-05);
    CHECK_LAUNCH();
}

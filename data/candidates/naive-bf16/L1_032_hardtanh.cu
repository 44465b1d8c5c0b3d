// naive-bf16: elementwise, one element per thread.
// L1_032_hardtanh: out = torch.nn.functional.hardtanh(x, min_val=-1., max_val=1.)
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

__device__ __forceinline__ float f(float x, float a0, float a1)
{
    (void)a0;
    (void)a1;
    return fminf(fmaxf(x, a0), a1);
}

__global__ void elementwise(const bf16_t *__restrict__ x, bf16_t *__restrict__ y, long long n, float a0, float a1)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = f(x[i], a0, a1);
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    float a0 = call->n_attrs > 0 ? (float)call->attrs[0] : -1.0f;
    float a1 = call->n_attrs > 1 ? (float)call->attrs[1] : 1.0f;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    elementwise<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>((const bf16_t *)call->inputs[0].data,
                                                                      (bf16_t *)call->outputs[0].data, n, a0, a1);
    CHECK_LAUNCH();
}

// naive-bf16: scan along dim 1, one thread per row, sequential.
// L1_091_cumsum_reverse: out = torch.cumsum(x.flip(1), dim=1).flip(1)
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

__global__ void scan_rows(const bf16_t *__restrict__ x, const bf16_t *__restrict__ mask, bf16_t *__restrict__ y,
                          long long rows, long long D)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const bf16_t *xr = x + i * D;
    const bf16_t *mr = mask ? mask + i * D : xr;
    (void)mr;
    bf16_t *yr = y + i * D;
    float s = 0.0f;
    for (long long j = D - 1; j >= 0; j--) {
        float v = xr[j];
        s += v;
        yr[j] = s;
    }
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2) return 1;
    long long rows = x->shape[0], D = x->shape[1];
    if (rows == 0) return 0;
    scan_rows<<<(unsigned)((rows + 127) / 128), 128, 0, call->stream>>>((const bf16_t *)x->data, (const bf16_t *)0, (bf16_t *)call->outputs[0].data, rows, D);
    CHECK_LAUNCH();
}

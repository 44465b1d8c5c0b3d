// naive-bf16: diag(A) @ B is a row scaling: C[i, j] = A[i] B[i, j].
// L1_012_matmul_with_diagonal_matrices: out = torch.diag(A) @ B
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

__global__ void row_scale(const bf16_t *__restrict__ d, const bf16_t *__restrict__ B, bf16_t *__restrict__ C,
                          long long N, long long M)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N * M) C[i] = d[i / M] * B[i];
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
    if (a->ndim != 1 || b->ndim != 2 || b->shape[0] != a->shape[0]) return 1;
    long long N = b->shape[0], M = b->shape[1];
    if (N * M == 0) return 0;
    row_scale<<<(unsigned)((N * M + 255) / 256), 256, 0, call->stream>>>(
        (const bf16_t *)a->data, (const bf16_t *)b->data, (bf16_t *)call->outputs[0].data, N, M);
    CHECK_LAUNCH();
}

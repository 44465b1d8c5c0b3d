// naive-bf16: FP32 matrix product, 16x16 shared-memory tiles, strided operands; a
// one-block-per-row dot product when the result has one column.
// L1_011_4d_tensor_matrix_multiplication: out = torch.einsum('bijl,lk->bijk', A, B)
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

#define TILE 16

/* C[b, m, n] = sum_k A[b, m, k] B[b, k, n], operands addressed by strides;
 * mask 1 keeps n <= m (tril), 2 keeps n >= m (triu), zeros elsewhere. */
__global__ void gemm_strided(const bf16_t *__restrict__ A, const bf16_t *__restrict__ B, bf16_t *__restrict__ C,
                             long long M, long long N, long long K, long long sAb, long long sAm, long long sAk,
                             long long sBb, long long sBk, long long sBn, int mask)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    long long bz = blockIdx.z;
    const bf16_t *a = A + bz * sAb, *b = B + bz * sBb;
    bf16_t *c = C + bz * M * N;
    /* row tiles on x (up to 2^31 - 1 of them), column tiles on y */
    long long row = (long long)blockIdx.x * TILE + threadIdx.y, col = (long long)blockIdx.y * TILE + threadIdx.x;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += TILE) {
        long long ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? a[row * sAm + ka * sAk] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? b[kb * sBk + col * sBn] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        if ((mask == 1 && col > row) || (mask == 2 && col < row)) acc = 0.0f;
        c[row * N + col] = acc;
    }
}

/* One block per row when the result is a single column (matrix-vector). */
__global__ void gemv_rows(const bf16_t *__restrict__ A, const bf16_t *__restrict__ x, bf16_t *__restrict__ y,
                          long long K, long long sAm, long long sAk, long long sBk)
{
    __shared__ float sh[256];
    const bf16_t *a = A + (long long)blockIdx.x * sAm;
    float s = 0.0f;
    for (long long k = threadIdx.x; k < K; k += 256) s += a[k * sAk] * x[k * sBk];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int o = 128; o > 0; o >>= 1) {
        if (threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = sh[0];
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
    /* einsum bijl,lk->bijk: one product with b * i * j rows */
    if (a->ndim != 4 || b->ndim != 2 || a->shape[3] != b->shape[0]) return 1;
    long long M = a->shape[0] * a->shape[1] * a->shape[2], K = a->shape[3], N = b->shape[1], batch = 1;
    long long sAb = 0, sAm = K, sAk = 1, sBb = 0, sBk = N, sBn = 1;
    int mask = 0;
    if (kbv_numel(&call->outputs[0]) != batch * M * N) return 1;
    if (M == 0 || N == 0) return 0;
    const bf16_t *Ap = (const bf16_t *)a->data, *Bp = (const bf16_t *)b->data;
    bf16_t *Cp = (bf16_t *)call->outputs[0].data;
    if (N == 1 && batch == 1 && mask == 0) {
        gemv_rows<<<(unsigned)M, 256, 0, call->stream>>>(Ap, Bp, Cp, K, sAm, sAk, sBk);
    } else {
        if ((N + TILE - 1) / TILE > 65535 || batch > 65535) return 1;
        dim3 block(TILE, TILE), grid((unsigned)((M + TILE - 1) / TILE), (unsigned)((N + TILE - 1) / TILE), (unsigned)batch);
        gemm_strided<<<grid, block, 0, call->stream>>>(Ap, Bp, Cp, M, N, K, sAb, sAm, sAk, sBb, sBk, sBn, mask);
    }
    CHECK_LAUNCH();
}

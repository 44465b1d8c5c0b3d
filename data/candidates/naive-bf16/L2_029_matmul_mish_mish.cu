// naive-bf16: linear layer (16x16 tiled FP32), then the rest of the expression step by step,
// each a plain kernel over the buffer.
// L2_029_matmul_mish_mish: out = mish(mish(self.linear(x)))
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

struct prm { const bf16_t *p[8]; };
#define P0 (P.p[0])
#define P1 (P.p[1])
#define P2 (P.p[2])
#define P3 (P.p[3])
#define P4 (P.p[4])
#define P5 (P.p[5])
#define P6 (P.p[6])
#define P7 (P.p[7])

__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }
__device__ __forceinline__ float mish(float v) { return v * tanhf(v > 20.0f ? v : log1pf(expf(v))); }

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

/* y [M, N] = x [M, K] W^T (W stored [N, K]) + b, 16x16 shared-memory tiles. */
#define TILE 16
__global__ void linear(const bf16_t *__restrict__ x, const bf16_t *__restrict__ W, const bf16_t *__restrict__ b,
                       float *__restrict__ y, long long M, long long N, long long K)
{
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    long long row = (long long)blockIdx.x * TILE + threadIdx.y, col = (long long)blockIdx.y * TILE + threadIdx.x;
    long long wrow = (long long)blockIdx.y * TILE + threadIdx.y; /* the W row this thread loads */
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += TILE) {
        long long k = k0 + threadIdx.x;
        xs[threadIdx.y][threadIdx.x] = (row < M && k < K) ? x[row * K + k] : 0.0f;
        ws[threadIdx.x][threadIdx.y] = (wrow < N && k < K) ? W[wrow * K + k] : 0.0f; /* ws[k][n] */
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) acc += xs[threadIdx.y][kk] * ws[kk][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) y[row * N + col] = acc + (b ? b[col] : 0.0f);
}

/* In place: v -> the step's expression; c is the feature (column) of a linear
 * output or the channel of a convolution output. */
__global__ void step_pre(float *__restrict__ y, long long total, long long C, long long S, prm P)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long c = (t / S) % C;
    (void)c;
    float v = y[t];
    v = mish(mish(v));
    y[t] = v;
}
static float *scratch;
static size_t scratch_bytes;

static int need(size_t bytes)
{
    if (scratch_bytes >= bytes) return 0;
    cudaFree(scratch);
    scratch = NULL;
    scratch_bytes = 0;
    if (cudaMalloc((void **)&scratch, bytes) != cudaSuccess) return 1;
    scratch_bytes = bytes;
    return 0;
}

static float *ybuf;
static size_t ybuf_bytes;

static int ybuf_need(size_t bytes)
{
    if (ybuf_bytes >= bytes) return 0;
    cudaFree(ybuf);
    ybuf = NULL;
    ybuf_bytes = 0;
    if (cudaMalloc((void **)&ybuf, bytes) != cudaSuccess) return 1;
    ybuf_bytes = bytes;
    return 0;
}

__global__ void narrow_out(const float *__restrict__ y, bf16_t *__restrict__ out, long long n)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) out[t] = y[t];
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 3 || call->n_outputs < 1) return 1;
    prm P = {};
    for (int i = 0; i < call->n_inputs && i < 8; i++) P.p[i] = (const bf16_t *)call->inputs[i].data;
    const kbv_tensor *x = &call->inputs[0], *o = &call->outputs[0];
    cudaStream_t st = call->stream;
    const kbv_tensor *w = &call->inputs[1];
    if (x->ndim != 2 || w->ndim != 2 || w->shape[1] != x->shape[1]) return 1;
    long long M = x->shape[0], K = x->shape[1], C = w->shape[0], S = 1, N0 = M;
    long long total = M * C;
    if (ybuf_need((size_t)total * sizeof(float))) return 1;
    float *y = ybuf; /* the chain in float, rounded into the output at the end */
    if (kbv_numel(o) != total) return 1;
    if ((C + TILE - 1) / TILE > 65535) return 1;
    dim3 block(TILE, TILE), grid((unsigned)((M + TILE - 1) / TILE), (unsigned)((C + TILE - 1) / TILE));
    linear<<<grid, block, 0, st>>>((const bf16_t *)x->data, P1, P2, y, M, C, K);
    unsigned eb = (unsigned)((total + THREADS - 1) / THREADS);
    (void)eb;
    step_pre<<<eb, THREADS, 0, st>>>(y, total, C, S, P);
    narrow_out<<<eb, THREADS, 0, st>>>(y, (bf16_t *)o->data, total);
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    cudaFree(ybuf);
    ybuf = NULL;
    ybuf_bytes = 0;
    cudaFree(scratch);
    scratch = NULL;
    scratch_bytes = 0;
}

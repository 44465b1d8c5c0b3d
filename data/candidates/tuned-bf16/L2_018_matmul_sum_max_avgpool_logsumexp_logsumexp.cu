// tuned-bf16 (hand-written): L2_018_matmul_sum_max_avgpool_logsumexp_logsumexp:
// out = logsumexp(logsumexp(mean(max(sum(linear(x), dim=1, keepdim=True)))))
//
// An algebraic rewrite that removes the product.  After the row sum the
// tensor is [N, 1], so the max, the mean and both log-sum-exps reduce a
// dimension of size 1 and return their input (logsumexp(v) = v + log 1);
// the row sum of x W^T + b is x[n] . c + sum(b) with c[k] = sum_j W[j,k],
// W's column sums.  Two streaming passes: the column sums (W read once,
// 128 MiB in bfloat16), then one dot product per row of x (16 MiB) plus
// the bias sum, float products and double block sums.  Any baseline runs
// the 1024 x 8192 x 8192 product first (137 GFLOP, about 0.2 ms on the
// H200's bfloat16 tensor cores at best); this is bound by reading W once,
// about 0.035 ms: expected 4-6x against the bf16 baseline.  The
// registry's floor_flops counts the rewrite's operations (DESIGN 5a step
// 6).  Accuracy: the same sums in another order, float and double.
#include "kbv.h"
#include <math.h>
#include <stdint.h>
#include <cuda_bf16.h>

#define THREADS 256
/* Row slices of W for the column sums: SLICES x K float partial sums,
 * 4 MiB for K = 8192, enough blocks (K / 2048 x SLICES) to keep every
 * SM's loads in flight. */
#define SLICES 128

/* Scratch from kbv_setup, sized for the example call (the checks and the
 * timed calls have its shapes): the partial column sums and the column
 * sums themselves. */
static float *g_part, *g_csum;
static long long g_k;

__device__ __forceinline__ float lo16(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi16(unsigned w) { return __uint_as_float(w & 0xffff0000u); }

/* part[s][k] = sum of W[h][k] over the rows h of slice s, in float; grid
 * (ceil(K / (8 THREADS)), SLICES).  With K a multiple of 8 (and W 16-byte
 * aligned) each thread sums eight neighbouring columns, one 16-byte load
 * per row, the loads of four rows in flight; else eight columns THREADS
 * apart, one value at a time. */
__global__ void __launch_bounds__(THREADS) col_part(const __nv_bfloat16 *__restrict__ W, float *__restrict__ part,
                                                    long long H, long long K, int vec)
{
    long long per = (H + gridDim.y - 1) / gridDim.y;
    long long h0 = (long long)blockIdx.y * per, h1 = h0 + per < H ? h0 + per : H;
    float a[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    if (vec) {
        long long g = (long long)blockIdx.x * THREADS + threadIdx.x, k8 = K / 8;
        if (g >= k8) return;
        const uint4 *p = reinterpret_cast<const uint4 *>(W) + g;
#pragma unroll 4
        for (long long h = h0; h < h1; h++) {
            uint4 v = __ldcs(p + h * k8);
            a[0] += lo16(v.x); a[1] += hi16(v.x); a[2] += lo16(v.y); a[3] += hi16(v.y);
            a[4] += lo16(v.z); a[5] += hi16(v.z); a[6] += lo16(v.w); a[7] += hi16(v.w);
        }
        float *q = part + (long long)blockIdx.y * K + 8 * g;
#pragma unroll
        for (int j = 0; j < 8; j++) q[j] = a[j];
    } else {
        long long c0 = (long long)blockIdx.x * THREADS * 8 + threadIdx.x;
        for (long long h = h0; h < h1; h++)
#pragma unroll
            for (int j = 0; j < 8; j++)
                if (c0 + j * THREADS < K) a[j] += __bfloat162float(W[h * K + c0 + j * THREADS]);
#pragma unroll
        for (int j = 0; j < 8; j++)
            if (c0 + j * THREADS < K) part[(long long)blockIdx.y * K + c0 + j * THREADS] = a[j];
    }
}

/* csum[k] = scale * (the SLICES partial sums of column k, added in double). */
__global__ void col_finish(const float *__restrict__ part, float *__restrict__ csum, long long K, int slices,
                           float scale)
{
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= K) return;
    double s = 0.0;
    for (int i = 0; i < slices; i++) s += part[(long long)i * K + k];
    csum[k] = (float)(s * scale);
}

/* The sum of v over the block (every thread gets it), in double. */
__device__ __forceinline__ double block_sum(double v)
{
    __shared__ double sh[THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    double t = 0.0;
    for (int w = 0; w < THREADS / 32; w++) t += sh[w];
    return t;
}

/* x[n] . csum for the block's row n: eight values per 16-byte load of x
 * when K is a multiple of 8, float products, the block's sum in double. */
__device__ __forceinline__ double row_dot(const __nv_bfloat16 *__restrict__ xr, const float *__restrict__ csum,
                                          long long K, int vec)
{
    float acc = 0.0f;
    if (vec) {
        const uint4 *x8 = reinterpret_cast<const uint4 *>(xr);
        const float4 *c4 = reinterpret_cast<const float4 *>(csum);
        for (long long i = threadIdx.x; i < K / 8; i += THREADS) {
            uint4 v = __ldcs(x8 + i);
            float4 c0 = c4[2 * i], c1 = c4[2 * i + 1];
            acc = fmaf(lo16(v.x), c0.x, acc); acc = fmaf(hi16(v.x), c0.y, acc);
            acc = fmaf(lo16(v.y), c0.z, acc); acc = fmaf(hi16(v.y), c0.w, acc);
            acc = fmaf(lo16(v.z), c1.x, acc); acc = fmaf(hi16(v.z), c1.y, acc);
            acc = fmaf(lo16(v.w), c1.z, acc); acc = fmaf(hi16(v.w), c1.w, acc);
        }
    } else {
        for (long long k = threadIdx.x; k < K; k += THREADS) acc = fmaf(__bfloat162float(xr[k]), csum[k], acc);
    }
    return block_sum((double)acc);
}

/* The sum of the n values of a bfloat16 vector (a and b may be NULL; b is
 * subtracted), by the whole block, in double; every thread gets it. */
__device__ __forceinline__ double vec_sum(const __nv_bfloat16 *a, const __nv_bfloat16 *b, long long n)
{
    float s = 0.0f;
    for (long long i = threadIdx.x; i < n; i += THREADS)
        s += (a ? __bfloat162float(a[i]) : 0.0f) - (b ? __bfloat162float(b[i]) : 0.0f);
    return block_sum((double)s);
}

extern "C" int kbv_setup(const kbv_call *example)
{
    if (example->n_inputs < 2) return 1;
    g_k = example->inputs[1].shape[1];
    if (cudaMalloc((void **)&g_part, (size_t)(SLICES * g_k) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&g_csum, (size_t)(g_k + 8) * sizeof(float)) != cudaSuccess) return 1;
    return 0;
}

extern "C" void kbv_teardown(void)
{
    if (g_part) cudaFree(g_part);
    if (g_csum) cudaFree(g_csum);
    g_part = g_csum = NULL;
}

/* The column sums of W [H, K], times scale, into g_csum; 0 or 1. */
static int column_sums(const kbv_tensor *w, float scale, int vec, cudaStream_t st)
{
    long long H = w->shape[0], K = w->shape[1];
    if (!g_part || K != g_k || H == 0) return 1;
    int slices = H < SLICES ? (int)H : SLICES;
    dim3 grid((unsigned)((K + 8 * THREADS - 1) / (8 * THREADS)), (unsigned)slices);
    col_part<<<grid, THREADS, 0, st>>>((const __nv_bfloat16 *)w->data, g_part, H, K, vec);
    col_finish<<<(unsigned)((K + 255) / 256), 256, 0, st>>>(g_part, g_csum, K, slices, scale);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

__global__ void __launch_bounds__(THREADS) rows_out(const __nv_bfloat16 *__restrict__ x, const float *__restrict__ csum,
                                                    const __nv_bfloat16 *__restrict__ bias, long long H,
                                                    __nv_bfloat16 *__restrict__ out, long long K, int vec)
{
    double d = row_dot(x + (long long)blockIdx.x * K, csum, K, vec);
    double b = vec_sum(bias, NULL, H);
    if (threadIdx.x == 0) out[blockIdx.x] = __float2bfloat16_rn((float)(d + b));
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 3 || call->n_outputs < 1 || call->inputs[0].dtype != KBV_BF16) return 1;
    const kbv_tensor *x = &call->inputs[0], *w = &call->inputs[1], *b = &call->inputs[2];
    if (x->ndim != 2 || w->ndim != 2 || w->shape[1] != x->shape[1] || kbv_numel(b) != w->shape[0]) return 1;
    long long N = x->shape[0], K = x->shape[1], H = w->shape[0];
    if (kbv_numel(&call->outputs[0]) != N || N > 2147483647LL) return 1;
    int vec = K % 8 == 0 && (uintptr_t)x->data % 16 == 0 && (uintptr_t)w->data % 16 == 0;
    if (column_sums(w, 1.0f, vec, call->stream)) return 1;
    if (N) rows_out<<<(unsigned)N, THREADS, 0, call->stream>>>((const __nv_bfloat16 *)x->data, g_csum,
                                                                (const __nv_bfloat16 *)b->data, H,
                                                                (__nv_bfloat16 *)call->outputs[0].data, K, vec);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

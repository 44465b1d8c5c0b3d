#!/usr/bin/env python3
"""gen-tuned-candidates.py - writes the families of data/candidates/tuned/
that share one kernel design:

  - elementwise activations with float4 streaming loads (level 1);
  - TF32 tensor-core matrix products (WMMA m16n16k8, 128x128x32 tiles, a
    3-stage cp.async pipeline) for plain, batched and row-merged products
    (level 1) and for linear layers with their elementwise tail fused into
    the epilogue (level 2), followed where the expression needs it by one
    kernel for a row sum, a row softmax, a group norm or a batch norm;
  - level-3 MLPs: one such product per linear layer, in 3xTF32, with the
    bias and the ReLU after it in the epilogue;
  - level-3 ReLU self-attention (50): c_attn as such a 3xTF32 product,
    then one fused causal attention kernel that visits only the key tiles
    at or before each query tile and never writes the T x T scores (not
    written into the set: see family()).

    scripts/gen-tuned-candidates.py [--force] [--bf16] [BUILD_DIR]

--bf16 writes data/candidates/tuned-bf16/ instead, for the BF16 setting
(kbv collect --precision bf16): the elementwise activations on bfloat16
tensors, 16-byte loads and stores of eight values, four of them in
flight per thread, streaming cache hints, float arithmetic and rounding
to nearest even on the store; and the level-2 linear layers with an
elementwise tail as one bfloat16 tensor-core product (WMMA m16n16k16,
float accumulators) with the bias and tail in its epilogue.

Reads the registry through BUILD_DIR/kbv-list and BUILD_DIR/kbv-prompt
(default build/).  Hand-written tuned files (without this script's mark)
are never replaced; generated ones only with --force.
"""
import json
import os
import subprocess
import sys

import naive_l3

MARK = "Written by scripts/gen-tuned-candidates.py"

HEAD = '''// tuned: {what}
// {id}: out = {expr}
// {mark} from the registry.
#include "kbv.h"
#include <math.h>
#include <stdint.h>
'''

# --- elementwise ------------------------------------------------------------------

ELEMENTWISE = {
    5: ("x * a0", "3.14f", "0.0f"),
    20: ("x > 0.0f ? x : x * a0", "0.01f", "0.0f"),
    21: ("1.0f / (1.0f + __expf(-x))", None, None),
    22: ("tanhf(x)", None, None),
    25: ("x / (1.0f + __expf(-x))", None, None),
    26: ("0.5f * x * (1.0f + erff(x * 0.70710678118654752f))", None, None),
    27: ("1.0507009873554805f * (x > 0.0f ? x : 1.6732632423543772f * expm1f(x))", None, None),
    28: ("fminf(fmaxf(fmaf(x, 1.0f / 6.0f, 0.5f), 0.0f), 1.0f)", None, None),
    29: ("x > 20.0f ? x : log1pf(__expf(x))", None, None),
    30: ("__fdividef(x, 1.0f + fabsf(x))", None, None),
    31: ("x > 0.0f ? x : a0 * expm1f(x)", "1.0f", "0.0f"),
    32: ("fminf(fmaxf(x, a0), a1)", "-1.0f", "1.0f"),
    88: ("0.5f * x * (1.0f + tanhf(0.7978845608028654f * fmaf(0.044715f * x, x * x, x)))", None, None),
}

def gen_elementwise(p):
    body, d0, d1 = ELEMENTWISE[p["number"]]
    return HEAD.format(what="elementwise with 16-byte loads and stores, four float4 in flight per\n// thread, streaming cache hints; a scalar tail for sizes that are not multiples of 4.\n// Fast-math intrinsics only where their error (a few ulp) is far below the tolerance.",
                       mark=MARK, **p) + '''
#define THREADS 256
#define UNROLL 4

__device__ __forceinline__ float f(float x, float a0, float a1)
{{
    (void)a0;
    (void)a1;
    return {body};
}}

__global__ void __launch_bounds__(THREADS) map_vec4(const float4 *__restrict__ x, float4 *__restrict__ y, long long n4,
                                                    float a0, float a1)
{{
    long long base = (long long)blockIdx.x * THREADS * UNROLL + threadIdx.x;
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {{
        long long i = base + (long long)u * THREADS;
        if (i < n4) v[u] = __ldcs(x + i);
    }}
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {{
        long long i = base + (long long)u * THREADS;
        if (i < n4) __stcs(y + i, make_float4(f(v[u].x, a0, a1), f(v[u].y, a0, a1), f(v[u].z, a0, a1), f(v[u].w, a0, a1)));
    }}
}}

__global__ void map_tail(const float *__restrict__ x, float *__restrict__ y, long long start, long long n, float a0, float a1)
{{
    long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = f(x[i], a0, a1);
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    float a0 = call->n_attrs > 0 ? (float)call->attrs[0] : {d0};
    float a1 = call->n_attrs > 1 ? (float)call->attrs[1] : {d1};
    const float *x = (const float *)call->inputs[0].data;
    float *y = (float *)call->outputs[0].data;
    long long n = kbv_numel(&call->inputs[0]), done = 0;
    if (n == 0) return 0;
    if ((uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0) {{
        long long n4 = n / 4;
        if (n4 > 0)
            map_vec4<<<(unsigned)((n4 + THREADS * UNROLL - 1) / (THREADS * UNROLL)), THREADS, 0, call->stream>>>(
                (const float4 *)x, (float4 *)y, n4, a0, a1);
        done = n4 * 4;
    }}
    if (done < n) map_tail<<<(unsigned)((n - done + 255) / 256), 256, 0, call->stream>>>(x, y, done, n, a0, a1);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}}
'''.format(body=body, d0=d0 or "0.0f", d1=d1 or "0.0f")

# The same maps in the BF16 setting; ReLU (hand-written in tuned/) joins them.
ELEMENTWISE_BF16 = dict(ELEMENTWISE)
ELEMENTWISE_BF16[19] = ("fmaxf(x, 0.0f)", None, None)

def gen_elementwise_bf16(p):
    body, d0, d1 = ELEMENTWISE_BF16[p["number"]]
    return HEAD.format(what="elementwise on bfloat16 (the BF16 setting): 16-byte loads and stores of\n// eight values, four in flight per thread, streaming cache hints, float arithmetic,\n// results rounded to nearest even; a scalar tail for sizes that are not multiples of 8.",
                       mark=MARK, **p).replace("// tuned: ", "// tuned-bf16: ", 1) + '''#include <cuda_bf16.h>

#define THREADS 256
#define UNROLL 4

__device__ __forceinline__ float f(float x, float a0, float a1)
{{
    (void)a0;
    (void)a1;
    return {body};
}}

/* Two bfloat16 values in a word, low half first: widened exactly, mapped,
 * rounded back. */
__device__ __forceinline__ unsigned f2(unsigned w, float a0, float a1)
{{
    float lo = __uint_as_float(w << 16), hi = __uint_as_float(w & 0xffff0000u);
    return (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(f(lo, a0, a1))) |
           ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(f(hi, a0, a1))) << 16);
}}

__global__ void __launch_bounds__(THREADS) map_vec8(const uint4 *__restrict__ x, uint4 *__restrict__ y, long long n8,
                                                    float a0, float a1)
{{
    long long base = (long long)blockIdx.x * THREADS * UNROLL + threadIdx.x;
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {{
        long long i = base + (long long)u * THREADS;
        if (i < n8) v[u] = __ldcs(x + i);
    }}
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {{
        long long i = base + (long long)u * THREADS;
        if (i < n8) __stcs(y + i, make_uint4(f2(v[u].x, a0, a1), f2(v[u].y, a0, a1), f2(v[u].z, a0, a1), f2(v[u].w, a0, a1)));
    }}
}}

__global__ void map_tail(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, long long start, long long n,
                         float a0, float a1)
{{
    long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2bfloat16_rn(f(__bfloat162float(x[i]), a0, a1));
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 1 || call->n_outputs < 1 || call->inputs[0].dtype != KBV_BF16) return 1;
    float a0 = call->n_attrs > 0 ? (float)call->attrs[0] : {d0};
    float a1 = call->n_attrs > 1 ? (float)call->attrs[1] : {d1};
    const __nv_bfloat16 *x = (const __nv_bfloat16 *)call->inputs[0].data;
    __nv_bfloat16 *y = (__nv_bfloat16 *)call->outputs[0].data;
    long long n = kbv_numel(&call->inputs[0]), done = 0;
    if (n == 0) return 0;
    if ((uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0) {{
        long long n8 = n / 8;
        if (n8 > 0)
            map_vec8<<<(unsigned)((n8 + THREADS * UNROLL - 1) / (THREADS * UNROLL)), THREADS, 0, call->stream>>>(
                (const uint4 *)x, (uint4 *)y, n8, a0, a1);
        done = n8 * 8;
    }}
    if (done < n) map_tail<<<(unsigned)((n - done + 255) / 256), 256, 0, call->stream>>>(x, y, done, n, a0, a1);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}}
'''.format(body=body, d0=d0 or "0.0f", d1=d1 or "0.0f")

# --- TF32 tensor-core products ------------------------------------------------------

GEMM_CORE = r'''
#include <mma.h>
#include <type_traits>
using namespace nvcuda;

/* Block tile BM x BN x BK, 8 warps in 2 x 4, each warp 64 x 32 of C as
 * 4 x 2 WMMA 16x16 accumulators; STAGES tiles in flight through cp.async.
 * Operands are rounded to TF32 (round to nearest) and accumulated in FP32.
 * With SPLIT3, each operand is also split into hi = tf32(x) and lo =
 * tf32(x - hi), and a*b is taken as lo_a*hi_b + hi_a*lo_b + hi_a*hi_b
 * ("3xTF32"): about FP32 accuracy for three tensor-core products. */
#define BM 128
#define BN 128
#define BK 32
#define STAGES 3
#define THREADS 256
#define LDA (BK + 4)      /* A tile [BM][BK], row-major */
#define LDB_NN (BN + 4)   /* B tile [BK][BN] when B is [K, N] */
#define LDB_NT (BK + 4)   /* B tile [BN][BK] when B is given as W [N, K] */
#define A_STAGE (BM * LDA)
#define B_STAGE_NN (BK * LDB_NN)
#define B_STAGE_NT (BN * LDB_NT)
#define B_STAGE (B_STAGE_NN > B_STAGE_NT ? B_STAGE_NN : B_STAGE_NT)
#define LDS 36            /* epilogue staging, per warp [64][LDS] */
#define SMEM_MAIN ((A_STAGE + B_STAGE) * STAGES * (int)sizeof(float))
#define SMEM_EPI (8 * 64 * LDS * (int)sizeof(float))
#define SMEM_BYTES (SMEM_MAIN > SMEM_EPI ? SMEM_MAIN : SMEM_EPI)

__device__ __forceinline__ void cp_async16(float *smem, const float *gmem)
{
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ __forceinline__ void cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* One k-block of A (rows bm.., [M, K] row-major with leading dimension lda)
 * and of B into a stage.  NT: B is W [N, K] (a linear layer's weight). */
template <bool NT>
__device__ __forceinline__ void load_stage(float *As, float *Bs, const float *A, const float *B, long long lda,
                                           long long ldb, long long bm, long long bn, int kt)
{
    int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        int idx = t + i * THREADS;
        int r = idx >> 3, c4 = (idx & 7) * 4;
        cp_async16(As + r * LDA + c4, A + (bm + r) * lda + (long long)kt * BK + c4);
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        int idx = t + i * THREADS;
        if (NT) {
            int r = idx >> 3, c4 = (idx & 7) * 4; /* W row bn + r, k columns */
            cp_async16(Bs + r * LDB_NT + c4, B + (bn + r) * ldb + (long long)kt * BK + c4);
        } else {
            int r = idx >> 5, c4 = (idx & 31) * 4;
            cp_async16(Bs + r * LDB_NN + c4, B + ((long long)kt * BK + r) * ldb + bn + c4);
        }
    }
}

/* Accumulates the block's 128 x 128 tile of A B (or A W^T) over K. */
template <bool NT>
__device__ __forceinline__ void mma_tile(float *smem, const float *A, const float *B, long long lda, long long ldb,
                                         long long bm, long long bn, int K,
                                         wmma::fragment<wmma::accumulator, 16, 16, 8, float> (&acc)[4][2])
{
    float *As = smem, *Bs = smem + STAGES * A_STAGE;
    int warp = threadIdx.x >> 5;
    int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
    int KT = K / BK;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT) load_stage<NT>(As + s * A_STAGE, Bs + s * B_STAGE, A, B, lda, ldb, bm, bn, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < KT; kt++) {
        /* tile kt has landed when at most STAGES-2 newer groups are pending;
         * the barrier also frees the stage of tile kt-1 for refilling */
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        int nt = kt + STAGES - 1;
        if (nt < KT) load_stage<NT>(As + (nt % STAGES) * A_STAGE, Bs + (nt % STAGES) * B_STAGE, A, B, lda, ldb, bm, bn, nt);
        cp_async_commit();
        const float *as = As + (kt % STAGES) * A_STAGE;
        const float *bs = Bs + (kt % STAGES) * B_STAGE;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            /* B fragments first, then one A fragment at a time: fewer live
             * registers than holding all four A fragments. */
            typedef typename std::conditional<NT, wmma::col_major, wmma::row_major>::type b_layout;
            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, b_layout> fb[2];
#if SPLIT3
            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, b_layout> fb_lo[2];
#endif
#pragma unroll
            for (int j = 0; j < 2; j++) {
                if (NT) /* element (k, n) at bs[n * LDB_NT + k]: column-major B */
                    wmma::load_matrix_sync(fb[j], bs + (wn + j * 16) * LDB_NT + kk, LDB_NT);
                else
                    wmma::load_matrix_sync(fb[j], bs + kk * LDB_NN + wn + j * 16, LDB_NN);
#pragma unroll
                for (int e = 0; e < fb[j].num_elements; e++) {
                    float hi = wmma::__float_to_tf32(fb[j].x[e]);
#if SPLIT3
                    fb_lo[j].x[e] = wmma::__float_to_tf32(fb[j].x[e] - hi);
#endif
                    fb[j].x[e] = hi;
                }
            }
#pragma unroll
            for (int i = 0; i < 4; i++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
                wmma::load_matrix_sync(fa, as + (wm + i * 16) * LDA + kk, LDA);
#if SPLIT3
                wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa_lo;
#endif
#pragma unroll
                for (int e = 0; e < fa.num_elements; e++) {
                    float hi = wmma::__float_to_tf32(fa.x[e]);
#if SPLIT3
                    fa_lo.x[e] = wmma::__float_to_tf32(fa.x[e] - hi);
#endif
                    fa.x[e] = hi;
                }
#pragma unroll
                for (int j = 0; j < 2; j++) {
#if SPLIT3
                    /* 3xTF32: the small cross terms first, then hi * hi */
                    wmma::mma_sync(acc[i][j], fa_lo, fb[j], acc[i][j]);
                    wmma::mma_sync(acc[i][j], fa, fb_lo[j], acc[i][j]);
#endif
                    wmma::mma_sync(acc[i][j], fa, fb[j], acc[i][j]);
                }
            }
        }
    }
    cp_async_wait<0>();
    __syncthreads(); /* the pipeline's shared memory may now be reused */
}

/* Plain FP32 tiled fallback for shapes that do not fit the tiles:
 * C[b] = A[b] B[b] (NT: B given as W [N, K]), bias and epilogue applied. */
template <bool NT>
__global__ void gemm_fallback(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                              const float *__restrict__ bias, long long M, long long N, long long K, long long sA,
                              long long sB, long long sC, prm P)
{
    __shared__ float as[16][16];
    __shared__ float bs[16][17];
    const float *a = A + blockIdx.z * sA, *b = B + blockIdx.z * sB;
    float *c = C + blockIdx.z * sC;
    long long row = (long long)blockIdx.x * 16 + threadIdx.y, col = (long long)blockIdx.y * 16 + threadIdx.x;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += 16) {
        long long ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? a[row * K + ka] : 0.0f;
        if (NT) bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? b[col * K + kb] : 0.0f;
        else bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? b[kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 16; k++) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) c[row * N + col] = epilogue(acc + (bias ? bias[col] : 0.0f), col, P);
}

/* C = epilogue(A B + bias) for every batch (blockIdx.z), staged through
 * shared memory so that each warp writes whole 128-byte rows. */
template <bool NT>
__global__ void __launch_bounds__(THREADS, SPLIT3 ? 1 : 2)
gemm_tf32(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
          const float *__restrict__ bias, int M, int N, int K, long long sA, long long sB, long long sC, prm P)
{
    extern __shared__ __align__(128) float smem[];
    long long bm = (long long)blockIdx.y * BM, bn = (long long)blockIdx.x * BN;
    const float *a = A + blockIdx.z * sA, *b = B + blockIdx.z * sB;
    float *c = C + blockIdx.z * sC;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[4][2];
    mma_tile<NT>(smem, a, b, K, NT ? K : N, bm, bn, K, acc);
    (void)M;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
    float *stage = smem + warp * 64 * LDS;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(stage + i * 16 * LDS + j * 16, acc[i][j], LDS, wmma::mem_row_major);
    __syncwarp();
    long long col = bn + wn + lane;
    float bv = bias ? bias[col] : 0.0f;
    for (int r = 0; r < 64; r++)
        c[(bm + wm + r) * N + col] = epilogue(stage[r * LDS + lane] + bv, col, P);
}

static int configured;

template <bool NT> static int configure(void)
{
    if (configured) return 0;
    if (cudaFuncSetAttribute(gemm_tf32<NT>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES) != cudaSuccess)
        return 1;
    configured = 1;
    return 0;
}

/* Runs C[b] = epilogue(A[b] B[b] + bias) for `batch` products of M x N x K
 * with element strides sA, sB, sC between batches. */
template <bool NT>
static int run_gemm(const float *A, const float *B, float *C, const float *bias, long long M, long long N,
                    long long K, long long batch, long long sA, long long sB, long long sC, const prm &P,
                    cudaStream_t st)
{
    if (M == 0 || N == 0 || batch == 0) return 0;
    int fits = M % BM == 0 && N % BN == 0 && K % BK == 0 && K > 0 && M < (1LL << 31) && N < (1LL << 31) &&
               K < (1LL << 31) && M / BM <= 65535 && batch <= 65535 && (uintptr_t)A % 16 == 0 &&
               (uintptr_t)B % 16 == 0 && sA % 4 == 0 && sB % 4 == 0;
    if (fits) {
        if (configure<NT>()) return 1;
        dim3 grid((unsigned)(N / BN), (unsigned)(M / BM), (unsigned)batch);
        gemm_tf32<NT><<<grid, THREADS, SMEM_BYTES, st>>>(A, B, C, bias, (int)M, (int)N, (int)K, sA, sB, sC, P);
    } else {
        if ((N + 15) / 16 > 65535 || batch > 65535) return 1;
        dim3 grid((unsigned)((M + 15) / 16), (unsigned)((N + 15) / 16), (unsigned)batch), block(16, 16);
        gemm_fallback<NT><<<grid, block, 0, st>>>(A, B, C, bias, M, N, K, sA, sB, sC, P);
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
'''

GEMM_CORE_BF16 = r'''
#include <mma.h>
#include <cuda_bf16.h>
#include <type_traits>
using namespace nvcuda;
typedef __nv_bfloat16 bf16;

/* The BF16 setting's product: block tile BM x BN x BK, 8 warps in 2 x 4,
 * each warp 64 x 32 of C as 4 x 2 WMMA 16x16x16 bfloat16 products with
 * float accumulators; STAGES tiles in flight through cp.async (16 bytes =
 * eight bfloat16 per copy).  bfloat16 products are exact in float, so
 * only the order of the float sums differs from the fp32 reference. */
#define BM 128
#define BN 128
#define BK 32
#define STAGES 3
#define THREADS 256
#define LDA (BK + 8)      /* bfloat16 elements: rows 16-byte aligned, WMMA's ldm a multiple of 8 */
#define LDB_NN (BN + 8)
#define LDB_NT (BK + 8)
#define A_STAGE (BM * LDA)
#define B_STAGE_NN (BK * LDB_NN)
#define B_STAGE_NT (BN * LDB_NT)
#define B_STAGE (B_STAGE_NN > B_STAGE_NT ? B_STAGE_NN : B_STAGE_NT)
#define LDS 36            /* epilogue staging in float, per warp [64][LDS] */
#define SMEM_MAIN ((A_STAGE + B_STAGE) * STAGES * (int)sizeof(bf16))
#define SMEM_EPI (8 * 64 * LDS * (int)sizeof(float))
#define SMEM_BYTES (SMEM_MAIN > SMEM_EPI ? SMEM_MAIN : SMEM_EPI)

__device__ __forceinline__ void cp_async16(bf16 *smem, const bf16 *gmem)
{
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ __forceinline__ void cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* One k-block of A ([M, K] row-major, leading dimension lda) and of B into
 * a stage: 512 copies of 16 bytes per operand, two per thread.  NT: B is
 * W [N, K] (a linear layer's weight). */
template <bool NT>
__device__ __forceinline__ void load_stage(bf16 *As, bf16 *Bs, const bf16 *A, const bf16 *B, long long lda,
                                           long long ldb, long long bm, long long bn, int kt)
{
    int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        int idx = t + i * THREADS;
        int r = idx >> 2, c8 = (idx & 3) * 8;
        cp_async16(As + r * LDA + c8, A + (bm + r) * lda + (long long)kt * BK + c8);
    }
#pragma unroll
    for (int i = 0; i < 2; i++) {
        int idx = t + i * THREADS;
        if (NT) {
            int r = idx >> 2, c8 = (idx & 3) * 8; /* W row bn + r, k columns */
            cp_async16(Bs + r * LDB_NT + c8, B + (bn + r) * ldb + (long long)kt * BK + c8);
        } else {
            int r = idx >> 4, c8 = (idx & 15) * 8;
            cp_async16(Bs + r * LDB_NN + c8, B + ((long long)kt * BK + r) * ldb + bn + c8);
        }
    }
}

/* Accumulates the block's 128 x 128 tile of A B (or A W^T) over K. */
template <bool NT>
__device__ __forceinline__ void mma_tile(bf16 *smem, const bf16 *A, const bf16 *B, long long lda, long long ldb,
                                         long long bm, long long bn, int K,
                                         wmma::fragment<wmma::accumulator, 16, 16, 16, float> (&acc)[4][2])
{
    bf16 *As = smem, *Bs = smem + STAGES * A_STAGE;
    int warp = threadIdx.x >> 5;
    int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
    int KT = K / BK;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT) load_stage<NT>(As + s * A_STAGE, Bs + s * B_STAGE, A, B, lda, ldb, bm, bn, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < KT; kt++) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        int nt = kt + STAGES - 1;
        if (nt < KT) load_stage<NT>(As + (nt % STAGES) * A_STAGE, Bs + (nt % STAGES) * B_STAGE, A, B, lda, ldb, bm, bn, nt);
        cp_async_commit();
        const bf16 *as = As + (kt % STAGES) * A_STAGE;
        const bf16 *bs = Bs + (kt % STAGES) * B_STAGE;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            typedef typename std::conditional<NT, wmma::col_major, wmma::row_major>::type b_layout;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, b_layout> fb[2];
#pragma unroll
            for (int j = 0; j < 2; j++) {
                if (NT) /* element (k, n) at bs[n * LDB_NT + k]: column-major B */
                    wmma::load_matrix_sync(fb[j], bs + (wn + j * 16) * LDB_NT + kk, LDB_NT);
                else
                    wmma::load_matrix_sync(fb[j], bs + kk * LDB_NN + wn + j * 16, LDB_NN);
            }
#pragma unroll
            for (int i = 0; i < 4; i++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> fa;
                wmma::load_matrix_sync(fa, as + (wm + i * 16) * LDA + kk, LDA);
#pragma unroll
                for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa, fb[j], acc[i][j]);
            }
        }
    }
    cp_async_wait<0>();
    __syncthreads(); /* the pipeline's shared memory may now be reused */
}

/* Plain tiled fallback for shapes that do not fit the tiles. */
template <bool NT>
__global__ void gemm_fallback(const bf16 *__restrict__ A, const bf16 *__restrict__ B, bf16 *__restrict__ C,
                              const bf16_t *__restrict__ bias, long long M, long long N, long long K, long long sA,
                              long long sB, long long sC, prm P)
{
    __shared__ float as[16][16];
    __shared__ float bs[16][17];
    const bf16 *a = A + blockIdx.z * sA, *b = B + blockIdx.z * sB;
    bf16 *c = C + blockIdx.z * sC;
    long long row = (long long)blockIdx.x * 16 + threadIdx.y, col = (long long)blockIdx.y * 16 + threadIdx.x;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += 16) {
        long long ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? __bfloat162float(a[row * K + ka]) : 0.0f;
        if (NT) bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? __bfloat162float(b[col * K + kb]) : 0.0f;
        else bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? __bfloat162float(b[kb * N + col]) : 0.0f;
        __syncthreads();
        for (int k = 0; k < 16; k++) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) c[row * N + col] = __float2bfloat16_rn(epilogue(acc + (bias ? (float)bias[col] : 0.0f), col, P));
}

/* C = epilogue(A B + bias) for every batch (blockIdx.z), staged through
 * shared memory in float so that each warp writes whole rows. */
template <bool NT>
__global__ void __launch_bounds__(THREADS, 2)
gemm_bf16(const bf16 *__restrict__ A, const bf16 *__restrict__ B, bf16 *__restrict__ C,
          const bf16_t *__restrict__ bias, int M, int N, int K, long long sA, long long sB, long long sC, prm P)
{
    extern __shared__ __align__(128) float smem[];
    long long bm = (long long)blockIdx.y * BM, bn = (long long)blockIdx.x * BN;
    const bf16 *a = A + blockIdx.z * sA, *b = B + blockIdx.z * sB;
    bf16 *c = C + blockIdx.z * sC;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
    mma_tile<NT>(reinterpret_cast<bf16 *>(smem), a, b, K, NT ? K : N, bm, bn, K, acc);
    (void)M;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
    float *stage = smem + warp * 64 * LDS;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(stage + i * 16 * LDS + j * 16, acc[i][j], LDS, wmma::mem_row_major);
    __syncwarp();
    long long col = bn + wn + lane;
    float bv = bias ? (float)bias[col] : 0.0f;
    for (int r = 0; r < 64; r++)
        c[(bm + wm + r) * N + col] = __float2bfloat16_rn(epilogue(stage[r * LDS + lane] + bv, col, P));
}

static int configured;

template <bool NT> static int configure(void)
{
    if (configured) return 0;
    if (cudaFuncSetAttribute(gemm_bf16<NT>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES) != cudaSuccess)
        return 1;
    configured = 1;
    return 0;
}

template <bool NT>
static int run_gemm(const bf16 *A, const bf16 *B, bf16 *C, const bf16_t *bias, long long M, long long N,
                    long long K, long long batch, long long sA, long long sB, long long sC, const prm &P,
                    cudaStream_t st)
{
    if (M == 0 || N == 0 || batch == 0) return 0;
    int fits = M % BM == 0 && N % BN == 0 && K % BK == 0 && K > 0 && M < (1LL << 31) && N < (1LL << 31) &&
               K < (1LL << 31) && M / BM <= 65535 && batch <= 65535 && (uintptr_t)A % 16 == 0 &&
               (uintptr_t)B % 16 == 0 && sA % 8 == 0 && sB % 8 == 0;
    if (fits) {
        if (configure<NT>()) return 1;
        dim3 grid((unsigned)(N / BN), (unsigned)(M / BM), (unsigned)batch);
        gemm_bf16<NT><<<grid, THREADS, SMEM_BYTES, st>>>(A, B, C, bias, (int)M, (int)N, (int)K, sA, sB, sC, P);
    } else {
        if ((N + 15) / 16 > 65535 || batch > 65535) return 1;
        dim3 grid((unsigned)((M + 15) / 16), (unsigned)((N + 15) / 16), (unsigned)batch), block(16, 16);
        gemm_fallback<NT><<<grid, block, 0, st>>>(A, B, C, bias, M, N, K, sA, sB, sC, P);
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
'''

GEMM_PRM = r'''
struct prm { const float *p[8]; };
#define P0 (P.p[0])
#define P1 (P.p[1])
#define P2 (P.p[2])
#define P3 (P.p[3])
#define P4 (P.p[4])
#define P5 (P.p[5])

__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }
__device__ __forceinline__ float mish(float v) { return v * tanhf(v > 20.0f ? v : log1pf(expf(v))); }
__device__ __forceinline__ float sigm(float v) { return 1.0f / (1.0f + expf(-v)); }
'''

# level 1: how the forward call sees the product
L1_GEMM = {
    1: "mm", 2: "mm", 13: "mm", 7: "mm", 9: "mm", 3: "bmm", 10: "rows3", 11: "rows4", 17: "tb",
}

L1_SETUP = {
    "mm": '''    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return 1;
    long long M = a->shape[0], K = a->shape[1], N = b->shape[1], batch = 1, sA = 0, sB = 0, sC = 0;''',
    "bmm": '''    if (a->ndim != 3 || b->ndim != 3 || a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) return 1;
    long long batch = a->shape[0], M = a->shape[1], K = a->shape[2], N = b->shape[2];
    long long sA = M * K, sB = K * N, sC = M * N;''',
    "rows3": '''    /* A [N0, M, K] @ B [K, L] is one product with N0 * M rows */
    if (a->ndim != 3 || b->ndim != 2 || a->shape[2] != b->shape[0]) return 1;
    long long M = a->shape[0] * a->shape[1], K = a->shape[2], N = b->shape[1], batch = 1, sA = 0, sB = 0, sC = 0;''',
    "tb": '''    /* B stored [N, K]: C = A B^T, the layout of a linear layer's weight */
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[1]) return 1;
    long long M = a->shape[0], K = a->shape[1], N = b->shape[0], batch = 1, sA = 0, sB = 0, sC = 0;''',
    "rows4": '''    /* einsum bijl,lk->bijk is one product with b * i * j rows */
    if (a->ndim != 4 || b->ndim != 2 || a->shape[3] != b->shape[0]) return 1;
    long long M = a->shape[0] * a->shape[1] * a->shape[2], K = a->shape[3], N = b->shape[1], batch = 1;
    long long sA = 0, sB = 0, sC = 0;''',
}

def gen_l1_gemm(p):
    kind = L1_GEMM[p["number"]]
    return HEAD.format(what="TF32 tensor-core matrix product (WMMA m16n16k8 fragments, 128x128x32\n// block tiles, 3-stage cp.async pipeline), operands rounded to TF32, FP32 accumulation.\n// Expected to beat the strict-FP32 baseline and to lose to cuBLAS in TF32 mode;\n// kbv should flag precision-tf32.  Shapes that do not fit the tiles take a plain FP32 kernel.",
                       mark=MARK, **p) + GEMM_PRM + '''
__device__ __forceinline__ float epilogue(float v, long long col, const prm &P)
{
    (void)col;
    (void)P;
    return v;
}

/* plain TF32: inputs U[0,1) make |C| grow like K and the TF32 error like
 * sqrt(K), far inside the tolerance */
#define SPLIT3 0
''' + GEMM_CORE + '''
extern "C" int kbv_setup(const kbv_call *example)
{{
    (void)example;
    return configure<{nt}>();
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
{setup}
    if (kbv_numel(&call->outputs[0]) != batch * M * N) return 1;
    prm P = {{}};
    return run_gemm<{nt}>((const float *)a->data, (const float *)b->data, (float *)call->outputs[0].data, NULL, M, N,
                           K, batch, sA, sB, sC, P, call->stream);
}}
'''.format(setup=L1_SETUP[kind], nt="true" if kind == "tb" else "false")

# level 2: linear layer (x [M, K], W [N, K]) + bias, then an elementwise tail
# that depends on the value and its column only.  "bias" names the input
# added before the tail (2: the linear bias; for a bias-free gemm the tail
# adds its own parameter).
L2_GEMM = {
    9: ("P2", "fmaxf((v - {subtract_value}f) * {multiply_value}f, 0.0f)"),
    12: ("P2", "v = v * {multiplier}f; v = v > 0.0f ? v : v * {negative_slope}f"),
    29: ("P2", "mish(mish(v))"),
    40: ("P2", "v * {scaling_factor}f + v"),
    53: ("P2", "gelu(fminf(fmaxf(v * {scaling_factor}f, {hardtanh_min}f), {hardtanh_max}f))"),
    59: ("P2", "v * sigm(v) * {scaling_factor}f"),
    63: ("P2", "fmaxf(v, 0.0f) / {divisor}f"),
    68: ("P2", "fminf(v, P3[0]) - P3[0]"),
    70: ("P2", "sigm(v) * {scaling_factor}f + v"),
    76: ("NULL", "fmaxf(v + P2[col], 0.0f)"),
    81: ("P2", "v = v * sigm(v); v = v / 2.0f; v = fminf(fmaxf(v, -1.0f), 1.0f); v = tanhf(v); v = fminf(fmaxf(v, -1.0f), 1.0f)"),
    86: ("P2", "gelu(v / {divisor}f)"),
    95: ("P2", "v = v + P3[col]; v = v * sigm(v); v = tanhf(v); v = gelu(v); v = fminf(fmaxf(v, -1.0f), 1.0f)"),
}

BF16_TYPE = '''#include <cuda_bf16.h>
// bf16_t: a bfloat16 parameter read as a float by the epilogue.
struct bf16_t {
    __nv_bfloat16 v;
    __device__ __forceinline__ operator float() const { return __bfloat162float(v); }
};
'''

def gen_l2_gemm_bf16(p):
    bias, tail = L2_GEMM[p["number"]]
    tail = fill(tail, p)
    stmt = tail if "v = " in tail else "v = %s" % tail
    return HEAD.format(what="fused linear layer of the BF16 setting: bfloat16 tensor-core product (WMMA\n// m16n16k16, float accumulators), 128x128x32 tiles, 3-stage cp.async pipeline, with the\n// bias and the whole elementwise tail applied in float in the epilogue and one bfloat16\n// write of the output.",
                       mark=MARK, **p).replace("// tuned: ", "// tuned-bf16: ", 1) + BF16_TYPE + \
        GEMM_PRM.replace("const float *p[8]", "const bf16_t *p[8]") + '''
/* the rest of the expression, per element; col is the output feature */
__device__ __forceinline__ float epilogue(float v, long long col, const prm &P)
{{
    (void)col;
    (void)P;
    {stmt};
    return v;
}}
'''.format(stmt=stmt) + GEMM_CORE_BF16 + '''
extern "C" int kbv_setup(const kbv_call *example)
{{
    (void)example;
    return configure<true>();
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < {nin} || call->n_outputs < 1 || call->inputs[0].dtype != KBV_BF16) return 1;
    prm P = {{}};
    for (int i = 0; i < call->n_inputs && i < 8; i++) P.p[i] = (const bf16_t *)call->inputs[i].data;
    const kbv_tensor *x = &call->inputs[0], *w = &call->inputs[1];
    if (x->ndim != 2 || w->ndim != 2 || w->shape[1] != x->shape[1]) return 1;
    long long M = x->shape[0], K = x->shape[1], N = w->shape[0];
    if (kbv_numel(&call->outputs[0]) != M * N) return 1;
    return run_gemm<true>((const bf16 *)x->data, (const bf16 *)w->data, (bf16 *)call->outputs[0].data, {bias}, M,
                          N, K, 1, 0, 0, 0, P, call->stream);
}}
'''.format(nin=len(p["inputs"]), bias=bias)

def fill(expr, p):
    return expr.format(**{a["name"]: repr(float(a["value"])) for a in p["attrs"]})

def gen_l2_gemm(p):
    bias, tail = L2_GEMM[p["number"]]
    tail = fill(tail, p)
    stmt = tail if "v = " in tail else "v = %s" % tail
    return HEAD.format(what="fused linear layer: tensor-core product in 3xTF32 (each operand split into\n// two TF32 parts, three WMMA products per step: about FP32 accuracy; plain TF32 would sit\n// too close to the 1e-3 tolerance with zero-mean weights at x3 inputs), 128x128x32 tiles,\n// 3-stage cp.async pipeline, with the bias and the whole elementwise tail applied in the\n// epilogue, one write of the output.  Expected to be near or above the strict-FP32\n// baseline and well below cuBLAS in TF32 mode.",
                       mark=MARK, **p) + GEMM_PRM + '''
/* the rest of the expression, per element; col is the output feature */
__device__ __forceinline__ float epilogue(float v, long long col, const prm &P)
{{
    (void)col;
    (void)P;
    {stmt};
    return v;
}}

/* 3xTF32: with zero-mean weights |y| stays near 0.3-1 while plain TF32's
 * error is 1e-4-4e-4, too close to the 1e-3 tolerance at x3 inputs */
#define SPLIT3 1
'''.format(stmt=stmt) + GEMM_CORE + '''
extern "C" int kbv_setup(const kbv_call *example)
{{
    (void)example;
    return configure<true>();
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < {nin} || call->n_outputs < 1) return 1;
    prm P = {{}};
    for (int i = 0; i < call->n_inputs && i < 8; i++) P.p[i] = (const float *)call->inputs[i].data;
    const kbv_tensor *x = &call->inputs[0], *w = &call->inputs[1];
    if (x->ndim != 2 || w->ndim != 2 || w->shape[1] != x->shape[1]) return 1;
    long long M = x->shape[0], K = x->shape[1], N = w->shape[0];
    if (kbv_numel(&call->outputs[0]) != M * N) return 1;
    return run_gemm<true>((const float *)x->data, (const float *)w->data, (float *)call->outputs[0].data, {bias}, M,
                          N, K, 1, 0, 0, 0, P, call->stream);
}}
'''.format(nin=len(p["inputs"]), bias=bias)


# level 2: linear layer on the tensor cores with the elementwise part before
# the reduction or normalisation fused into its epilogue, then one small
# kernel for the rest (row sums, row softmax, group norm within rows, batch
# norm over rows).  The product dominates the time, so these too should
# beat the strict-FP32 baseline and lose to the TF32 one.
L2_GEMM_POST = {
    # number: (bias, epilogue before the rest, rest, dict of the rest's parameters)
    14: ("NULL", "v / 2.0f", "rowsum", dict(fin="v * {scaling_factor}f")),
    56: ("P2", "sigm(v)", "rowsum", dict(fin="v")),
    99: ("P2", "gelu(v)", "softmax", dict()),
    30: ("P2", "v", "groupnorm", dict(groups="{num_groups}", w=3, b=4, post="fminf(fmaxf(v, {hardtanh_min}f), {hardtanh_max}f)")),
    62: ("P2", "v", "groupnorm", dict(groups="{num_groups}", w=3, b=4, post="v = v > 0.0f ? v : v * {negative_slope}f; v = v + v")),
    88: ("P2", "v", "groupnorm", dict(groups="{num_groups}", w=3, b=4, post="v = v * sigm(v); v = v * P5[c]; v = v * sigm(v)")),
    33: ("P2", "v * P3[col]", "batchnorm", dict(w=4, b=5, post="v")),
    41: ("P2", "v", "batchnorm", dict(w=3, b=4, post="fmaxf(gelu(v), 0.0f)")),
}

POST_KERNELS = {
    "rowsum": r"""
/* out[m] = fin(sum of row m of y [M, N]), one block per row, fixed order. */
__global__ void rest(const float *__restrict__ y, float *__restrict__ out, long long M, long long N, prm P)
{{
    __shared__ float sh[32];
    (void)M;
    (void)P;
    const float *r = y + (long long)blockIdx.x * N;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < N; j += 256) s += r[j];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {{
        float v = 0.0f;
        for (int w = 0; w < 8; w++) v += sh[w];
        {fin};
        out[blockIdx.x] = v;
    }}
}}
""",
    "softmax": r"""
/* In place: softmax over each row of y [M, N], one block per row (the row,
 * 32 KiB, stays in cache between the passes). */
__global__ void rest(float *__restrict__ y, long long M, long long N)
{{
    __shared__ float sh[32];
    __shared__ float bc;
    (void)M;
    float *r = y + (long long)blockIdx.x * N;
    float m = -INFINITY;
    for (long long j = threadIdx.x; j < N; j += 256) m = fmaxf(m, r[j]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x == 0) {{
        float t = -INFINITY;
        for (int w = 0; w < 8; w++) t = fmaxf(t, sh[w]);
        bc = t;
    }}
    __syncthreads();
    m = bc;
    __syncthreads();
    float s = 0.0f;
    for (long long j = threadIdx.x; j < N; j += 256) s += expf(r[j] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {{
        float t = 0.0f;
        for (int w = 0; w < 8; w++) t += sh[w];
        bc = t;
    }}
    __syncthreads();
    float inv = 1.0f / bc;
    for (long long j = threadIdx.x; j < N; j += 256) r[j] = expf(r[j] - m) * inv;
}}
""",
    "groupnorm": r"""
/* In place: group norm within rows of y [M, N] (groups of N / G contiguous
 * features), one warp per (row, group), two-pass statistics, then the
 * affine transform and the rest of the expression. */
__global__ void rest(float *__restrict__ y, long long groups, long long per, long long N, float eps, prm P)
{{
    long long g = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    int lane = threadIdx.x & 31;
    if (g >= groups) return;
    float *r = y + g * per;
    long long c0 = (g * per) % N;
    float s = 0.0f;
    for (long long j = lane; j < per; j += 32) s += r[j];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    float mean = s / (float)per;
    float q = 0.0f;
    for (long long j = lane; j < per; j += 32) {{
        float d = r[j] - mean;
        q += d * d;
    }}
    for (int o = 16; o > 0; o >>= 1) q += __shfl_xor_sync(0xffffffffu, q, o);
    float rstd = rsqrtf(q / (float)per + eps);
    for (long long j = lane; j < per; j += 32) {{
        long long c = c0 + j;
        float v = (r[j] - mean) * rstd * P{w}[c] + P{b}[c];
        {post};
        r[j] = v;
    }}
}}
""",
    "batchnorm": r"""
/* Batch statistics of each column of y [M, N] (training mode, biased
 * variance): a block takes 32 columns, its 32 warps stride over the rows,
 * so every load is a coalesced 128-byte row piece.  Then, in place, the
 * affine transform and the rest of the expression. */
__global__ void __launch_bounds__(1024) col_stats(const float *__restrict__ y, float2 *__restrict__ st, long long M,
                                                  long long N, float eps)
{{
    __shared__ float sh[32][33];
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    long long col = (long long)blockIdx.x * 32 + tx;
    float s = 0.0f;
    if (col < N) {{
#pragma unroll 8
        for (long long r = ty; r < M; r += 32) s += y[r * N + col];
    }}
    sh[ty][tx] = s;
    __syncthreads();
    float mean = 0.0f;
    for (int k = 0; k < 32; k++) mean += sh[k][tx];
    mean /= (float)M;
    __syncthreads();
    float q = 0.0f;
    if (col < N) {{
#pragma unroll 8
        for (long long r = ty; r < M; r += 32) {{
            float d = y[r * N + col] - mean;
            q += d * d;
        }}
    }}
    sh[ty][tx] = q;
    __syncthreads();
    if (ty == 0 && col < N) {{
        float var = 0.0f;
        for (int k = 0; k < 32; k++) var += sh[k][tx];
        st[col] = make_float2(mean, rsqrtf(var / (float)M + eps));
    }}
}}

__global__ void rest(float *__restrict__ y, const float2 *__restrict__ st, long long total, long long N, prm P)
{{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long c = t % N;
    float2 m = st[c];
    float v = (y[t] - m.x) * m.y * P{w}[c] + P{b}[c];
    {post};
    y[t] = v;
}}
""",
}

EPI_TMPL = """
/* the steps between the product and the KIND, per element */
__device__ __forceinline__ float epilogue(float v, long long col, const prm &P)
{
    (void)col;
    (void)P;
    PRE;
    return v;
}

/* 3xTF32: plain TF32's error is too close to the 1e-3 tolerance here */
#define SPLIT3 1
"""

FWD_SETUP = """
extern "C" int kbv_setup(const kbv_call *example)
{
    (void)example;
    return configure<true>();
}
"""

FWD_ROWSUM_STATE = """static float *scratch;
static size_t scratch_bytes;

extern "C" void kbv_teardown(void)
{
    cudaFree(scratch);
    scratch = NULL;
    scratch_bytes = 0;
}
"""

FWD_BN_STATE = """static float2 *stats;
static long long stats_n;

extern "C" void kbv_teardown(void)
{
    cudaFree(stats);
    stats = NULL;
    stats_n = 0;
}
"""

FWD_HEAD = """extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < NIN || call->n_outputs < 1) return 1;
    prm P = {};
    for (int i = 0; i < call->n_inputs && i < 8; i++) P.p[i] = (const float *)call->inputs[i].data;
    const kbv_tensor *x = &call->inputs[0], *w = &call->inputs[1];
    if (x->ndim != 2 || w->ndim != 2 || w->shape[1] != x->shape[1]) return 1;
    long long M = x->shape[0], K = x->shape[1], N = w->shape[0];
    float *out = (float *)call->outputs[0].data;
    cudaStream_t st = call->stream;"""

FWD_ROWSUM = """    if (kbv_numel(&call->outputs[0]) != M) return 1;
    size_t bytes = (size_t)(M * N) * sizeof(float);
    if (scratch_bytes < bytes) {
        cudaFree(scratch);
        scratch = NULL;
        scratch_bytes = 0;
        if (cudaMalloc((void **)&scratch, bytes) != cudaSuccess) return 1;
        scratch_bytes = bytes;
    }
    if (run_gemm<true>((const float *)x->data, (const float *)w->data, scratch, BIAS, M, N, K, 1, 0, 0, 0, P, st))
        return 1;
    rest<<<(unsigned)M, 256, 0, st>>>(scratch, out, M, N, P);"""

FWD_INPLACE = """    if (kbv_numel(&call->outputs[0]) != M * N) return 1;
    if (run_gemm<true>((const float *)x->data, (const float *)w->data, out, BIAS, M, N, K, 1, 0, 0, 0, P, st))
        return 1;"""

FWD_SOFTMAX = """    rest<<<(unsigned)M, 256, 0, st>>>(out, M, N);"""

FWD_GN = """    long long G = GROUPS; /* num_groups */
    if (N % G != 0) return 1;
    long long groups = M * G, per = N / G;
    rest<<<(unsigned)((groups + 7) / 8), 256, 0, st>>>(out, groups, per, N, (float)EPS, P);"""

FWD_BN = """    if (stats_n < N) {
        cudaFree(stats);
        stats = NULL;
        stats_n = 0;
        if (cudaMalloc((void **)&stats, N * sizeof(float2)) != cudaSuccess) return 1;
        stats_n = N;
    }
    col_stats<<<(unsigned)((N + 31) / 32), 1024, 0, st>>>(out, stats, M, N, (float)EPS);
    rest<<<(unsigned)((M * N + 255) / 256), 256, 0, st>>>(out, stats, M * N, N, P);"""

FWD_TAIL = """    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""

def gen_l2_gemm_post(p):
    bias, pre, kind, prm_ = L2_GEMM_POST[p["number"]]
    pre = fill(pre, p)
    pre_stmt = pre if "v = " in pre else "v = %s" % pre
    args = {k: (fill(v, p) if isinstance(v, str) else v) for k, v in prm_.items()}
    for k in ("fin", "post"):
        if k in args:
            args[k] = args[k] if "v = " in args[k] else "v = %s" % args[k]
    kern = POST_KERNELS[kind].format(**args)
    eps = repr(float(next((a["value"] for a in p["attrs"] if a["name"] == "eps"), 1e-5)))
    what = ("linear layer on the tensor cores in 3xTF32 (each operand split into two TF32\n"
            "// parts, three WMMA products per step: about FP32 accuracy), 128x128x32 tiles, 3-stage\n"
            "// cp.async pipeline, with the bias and the elementwise steps before the %s fused\n"
            "// into its epilogue, then one small kernel for the %s.  The product dominates: expected\n"
            "// near or above the strict-FP32 baseline and well below the TF32 one." % (kind, kind))
    parts = [HEAD.format(what=what, mark=MARK, **p), GEMM_PRM,
             EPI_TMPL.replace("KIND", kind).replace("PRE", pre_stmt), GEMM_CORE, kern, FWD_SETUP]
    if kind == "rowsum":
        parts.append(FWD_ROWSUM_STATE)
    if kind == "batchnorm":
        parts.append(FWD_BN_STATE)
    body = [FWD_HEAD.replace("NIN", str(len(p["inputs"])))]
    if kind == "rowsum":
        body.append(FWD_ROWSUM.replace("BIAS", bias))
    else:
        body.append(FWD_INPLACE.replace("BIAS", bias))
        if kind == "softmax":
            body.append(FWD_SOFTMAX)
        elif kind == "groupnorm":
            body.append(FWD_GN.replace("GROUPS", str(int(float(args["groups"])))).replace("EPS", eps))
        else:
            body.append(FWD_BN.replace("EPS", eps))
    body.append(FWD_TAIL)
    parts.append("\n".join(body))
    return "".join(parts)


# level 3: MLPs (a chain of linear layers and ReLUs, collect/suite/problems/net.h),
# one fused product per layer, activations through two buffers of kbv_setup.
L3_MLP = (1, 2, 3)

def gen_l3_mlp(p):
    parsed = naive_l3.parse_layers(p.get("layers", ""))
    if not parsed:
        return None
    layers = [L for L in parsed[0] if L["kind"] != "K_DROPOUT"]
    rows = []
    for i, L in enumerate(layers):
        if L["kind"] == "K_RELU":
            continue
        if L["kind"] != "K_LINEAR" or L["b"] < 0:
            return None
        relu = i + 1 < len(layers) and layers[i + 1]["kind"] == "K_RELU"
        rows.append("    { %dLL, %dLL, %dLL, %dLL, %d }," % (L["in"][1], L["out"][1], L["w"], L["b"], relu))
    M = layers[0]["in"][0]
    most = max(L["out"][1] for L in layers)
    return HEAD.format(what="the MLP layer by layer, each linear layer one tensor-core product in\n// 3xTF32 (about FP32 accuracy) on 128x128x32 tiles with a 3-stage cp.async pipeline, its\n// bias and the ReLU after it applied in the epilogue: one write of each activation, no\n// separate bias or ReLU pass.  Expected to beat the strict-FP32 baseline and lose to\n// cuBLAS in TF32 mode.",
                       mark=MARK, **p) + '''
/* relu: whether the epilogue applies a ReLU (the layer's next module) */
struct prm { const float *p[8]; int relu; };

__device__ __forceinline__ float epilogue(float v, long long col, const prm &P)
{
    (void)col;
    return P.relu ? fmaxf(v, 0.0f) : v;
}

/* 3xTF32: zero-mean weights, outputs of order 0.1-1 */
#define SPLIT3 1
''' + GEMM_CORE + '''
/* in and out features, the offsets of the weight and the bias in params,
 * and whether a ReLU follows */
struct layer {{ long long in, out, w, b; int relu; }};
static const layer NET[] = {{
{rows}
}};
#define N_LAYERS ((int)(sizeof NET / sizeof NET[0]))
#define ROWS {M}LL
#define MOST {most}LL

static float *act[2];

extern "C" int kbv_setup(const kbv_call *example)
{{
    (void)example;
    for (int i = 0; i < 2; i++)
        if (cudaMalloc((void **)&act[i], (size_t)(ROWS * MOST) * sizeof(float)) != cudaSuccess) return 1;
    return configure<true>();
}}

extern "C" void kbv_teardown(void)
{{
    for (int i = 0; i < 2; i++) {{
        cudaFree(act[i]);
        act[i] = NULL;
    }}
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs != 2 || call->n_outputs != 1 || !act[0]) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2 || x->shape[0] != ROWS || x->shape[1] != NET[0].in) return 1;
    if (kbv_numel(&call->outputs[0]) != ROWS * NET[N_LAYERS - 1].out) return 1;
    const float *params = (const float *)call->inputs[1].data;
    const float *cur = (const float *)x->data;
    for (int l = 0; l < N_LAYERS; l++) {{
        float *dst = l == N_LAYERS - 1 ? (float *)call->outputs[0].data : act[l & 1];
        prm P = {{}};
        P.relu = NET[l].relu;
        if (run_gemm<true>(cur, params + NET[l].w, dst, params + NET[l].b, ROWS, NET[l].out, NET[l].in, 1, 0, 0,
                           0, P, call->stream))
            return 1;
        cur = dst;
    }}
    return 0;
}}
'''.format(rows="\n".join(rows), M=M, most=most)


def gen_l3_relu_attn(p):
    """50: c_attn (3xTF32 product with its bias), then relu(q k^T / sqrt(64))
    v under the causal mask, one block per (64 queries, sample and head)."""
    parsed = naive_l3.parse_layers(p.get("layers", ""))
    if not parsed:
        return None
    layers = [L for L in parsed[0] if L["kind"] != "K_DROPOUT"]
    if len(layers) != 2 or layers[0]["kind"] != "K_LINEAR" or layers[1]["kind"] != "K_ATTN" or layers[0]["b"] < 0:
        return None
    lin, att = layers
    C, H = att["out"][2], att["g"]
    if att["k"] != 3 or C != 64 * H or len(lin["in"]) != 3:
        return None
    return HEAD.format(what="c_attn as one tensor-core product in 3xTF32 (about FP32 accuracy) with its\n"
                            "// bias in the epilogue, then one fused kernel for the causal ReLU attention: per\n"
                            "// block 64 queries of one sample and head, the key tiles at or before them only\n"
                            "// (about half of the T x T scores), scores and relu(scores) v in registers and\n"
                            "// shared memory (the scores never reach global memory).  Expected to beat the\n"
                            "// strict-FP32 baseline (full T x T products, a ReLU pass over the scores) and\n"
                            "// lose to its TF32 mode.", mark=MARK, **p) + '''
struct prm { const float *p[8]; int relu; };

__device__ __forceinline__ float epilogue(float v, long long col, const prm &P)
{
    (void)col;
    (void)P;
    return v;
}

/* 3xTF32: zero-mean weights */
#define SPLIT3 1
''' + GEMM_CORE + '''
#define HEADS {H}
#define C_EMBD {C}
#define W_OFF {w}LL
#define B_OFF {b}LL
#define QT 64             /* queries a block */
#define KT 32             /* keys a step */
#define HD 64             /* head size */
#define LQ (HD + 4)       /* shared rows padded, float4-aligned */
#define LS (KT + 4)

/* y[b, i, h HD + c] = sum over keys j <= i of relu(q_i . k_j / sqrt(HD)) v_j[c]
 * for qkv [B, T, 3C] (q, k, v side by side, head h at columns h HD).
 * Thread (ty, tx) of 16 x 16: scores of rows 4 ty.., keys 2 tx.. of a
 * step; outputs of rows 4 ty.., columns 4 tx... */
__global__ void __launch_bounds__(256) relu_attn(const float *__restrict__ qkv, float *__restrict__ y, int T)
{
    __shared__ __align__(16) float qs[QT * LQ];
    __shared__ __align__(16) float ks[KT * LQ];
    __shared__ __align__(16) float vs[KT * LQ];
    __shared__ __align__(16) float ss[QT * LS];
    const int tid = threadIdx.x, ty = tid >> 4, tx = tid & 15;
    const int q0 = blockIdx.x * QT, bb = blockIdx.y / HEADS, h = blockIdx.y % HEADS;
    const long long row3 = 3LL * C_EMBD;
    const float *base = qkv + (long long)bb * T * row3 + h * HD;
    const float scale = 0.125f;   /* 1 / sqrt(HD) */
    for (int i = tid; i < QT * HD / 4; i += 256) {
        int r = i / (HD / 4), c = (i % (HD / 4)) * 4;
        float4 v = q0 + r < T ? *reinterpret_cast<const float4 *>(base + (long long)(q0 + r) * row3 + c)
                              : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        *reinterpret_cast<float4 *>(&qs[r * LQ + c]) = v;
    }
    float acc[4][4];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) acc[r][c] = 0.0f;
    const int kend = min(T, q0 + QT);   /* the causal mask ends every later key tile */
    for (int k0 = 0; k0 < kend; k0 += KT) {
        __syncthreads();
        for (int i = tid; i < KT * HD / 4; i += 256) {
            int r = i / (HD / 4), c = (i % (HD / 4)) * 4;
            float4 kv = make_float4(0.0f, 0.0f, 0.0f, 0.0f), vv = kv;
            if (k0 + r < T) {
                const float *src = base + (long long)(k0 + r) * row3 + c;
                kv = *reinterpret_cast<const float4 *>(src + C_EMBD);
                vv = *reinterpret_cast<const float4 *>(src + 2 * C_EMBD);
            }
            *reinterpret_cast<float4 *>(&ks[r * LQ + c]) = kv;
            *reinterpret_cast<float4 *>(&vs[r * LQ + c]) = vv;
        }
        __syncthreads();
        float s[4][2];
        for (int r = 0; r < 4; r++) s[r][0] = s[r][1] = 0.0f;
        for (int c = 0; c < HD; c += 4) {
            float4 a[4], b2[2];
            for (int r = 0; r < 4; r++) a[r] = *reinterpret_cast<const float4 *>(&qs[(4 * ty + r) * LQ + c]);
            for (int j = 0; j < 2; j++) b2[j] = *reinterpret_cast<const float4 *>(&ks[(2 * tx + j) * LQ + c]);
            for (int r = 0; r < 4; r++)
                for (int j = 0; j < 2; j++)
                    s[r][j] += a[r].x * b2[j].x + a[r].y * b2[j].y + a[r].z * b2[j].z + a[r].w * b2[j].w;
        }
        for (int r = 0; r < 4; r++)
            for (int j = 0; j < 2; j++) {
                int qi = q0 + 4 * ty + r, kj = k0 + 2 * tx + j;
                ss[(4 * ty + r) * LS + 2 * tx + j] = kj <= qi && kj < T ? fmaxf(s[r][j] * scale, 0.0f) : 0.0f;
            }
        __syncthreads();
        for (int j = 0; j < KT; j += 4) {
            float4 w4[4], v4[4];
            for (int r = 0; r < 4; r++) w4[r] = *reinterpret_cast<const float4 *>(&ss[(4 * ty + r) * LS + j]);
            for (int u = 0; u < 4; u++) v4[u] = *reinterpret_cast<const float4 *>(&vs[(j + u) * LQ + 4 * tx]);
            for (int r = 0; r < 4; r++) {
                const float wr[4] = { w4[r].x, w4[r].y, w4[r].z, w4[r].w };
                for (int u = 0; u < 4; u++) {
                    acc[r][0] += wr[u] * v4[u].x;
                    acc[r][1] += wr[u] * v4[u].y;
                    acc[r][2] += wr[u] * v4[u].z;
                    acc[r][3] += wr[u] * v4[u].w;
                }
            }
        }
    }
    for (int r = 0; r < 4; r++) {
        int qi = q0 + 4 * ty + r;
        if (qi < T)
            *reinterpret_cast<float4 *>(y + ((long long)bb * T + qi) * C_EMBD + h * HD + 4 * tx) =
                make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
    }
}

static float *qkv_buf;
static long long qkv_len;

extern "C" int kbv_setup(const kbv_call *example)
{
    (void)example;
    return configure<true>();
}

extern "C" void kbv_teardown(void)
{
    cudaFree(qkv_buf);
    qkv_buf = NULL;
    qkv_len = 0;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs != 2 || call->n_outputs != 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 3 || x->shape[2] != C_EMBD || x->shape[1] < 1 || x->shape[1] > 65535LL * QT) return 1;
    long long B = x->shape[0], T = x->shape[1], rows = B * T;
    if (kbv_numel(&call->outputs[0]) != rows * C_EMBD || B * HEADS > 65535) return 1;
    if (qkv_len < rows * 3 * C_EMBD) {
        cudaFree(qkv_buf);
        qkv_buf = NULL;
        qkv_len = 0;
        if (cudaMalloc((void **)&qkv_buf, (size_t)(rows * 3 * C_EMBD) * sizeof(float)) != cudaSuccess) return 1;
        qkv_len = rows * 3 * C_EMBD;
    }
    const float *params = (const float *)call->inputs[1].data;
    prm P = {};
    if (run_gemm<true>((const float *)x->data, params + W_OFF, qkv_buf, params + B_OFF, rows, 3 * C_EMBD, C_EMBD,
                       1, 0, 0, 0, P, call->stream))
        return 1;
    dim3 grid((unsigned)((T + QT - 1) / QT), (unsigned)(B * HEADS));
    relu_attn<<<grid, 256, 0, call->stream>>>(qkv_buf, (float *)call->outputs[0].data, (int)T);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
'''.replace("{H}", str(H)).replace("{C}", str(C)).replace("{w}", str(lin["w"])).replace("{b}", str(lin["b"]))


def family(p, bf16=False):
    n = p["number"]
    if bf16:
        if p["level"] == 1 and n in ELEMENTWISE_BF16: return gen_elementwise_bf16
        if p["level"] == 2 and n in L2_GEMM: return gen_l2_gemm_bf16
        return None
    if p["level"] == 1:
        if n in ELEMENTWISE: return gen_elementwise
        if n in L1_GEMM: return gen_l1_gemm
    if p["level"] == 2 and n in L2_GEMM:
        return gen_l2_gemm
    if p["level"] == 2 and n in L2_GEMM_POST:
        return gen_l2_gemm_post
    if p["level"] == 3 and n in L3_MLP:
        return gen_l3_mlp
    # gen_l3_relu_attn (L3_050) is not written into the set: on the H200
    # (e8efded) its FP32 sums of relu(scores) v, in another order than
    # cuBLAS's, failed D2 at 1e-3 + 1e-3 |ref| (1872 of 12.6M outputs, up to
    # 0.139 where the terms cancel), so it cannot be expected correct;
    # tests/emu/test_l3.py still checks its arithmetic.
    return None

def main():
    args = [a for a in sys.argv[1:] if a not in ("--force", "--bf16")]
    force = "--force" in sys.argv[1:]
    bf16 = "--bf16" in sys.argv[1:]
    build = args[0] if args else "build"
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    listing = subprocess.run([os.path.join(build, "kbv-list"), "--json"], check=True, capture_output=True, text=True)
    problems = json.loads(listing.stdout)["problems"]
    tmpl = os.path.join(build, ".gen-tuned-expr.txt")
    with open(tmpl, "w") as f:
        f.write("{{number}}\n{{expr}}\n@@layers@@\n{{layers}}")
    outdir = os.path.join(root, "data", "candidates", "tuned-bf16" if bf16 else "tuned")
    os.makedirs(outdir, exist_ok=True)
    wrote, kept = [], []
    for p in problems:
        out = subprocess.run([os.path.join(build, "kbv-prompt"), "--template", tmpl, p["id"]], check=True,
                             capture_output=True, text=True).stdout.split("\n", 1)
        p["number"] = int(out[0])
        p["expr"], _, p["layers"] = out[1].partition("\n@@layers@@\n")
        p["expr"] = p["expr"].strip()
        fam = family(p, bf16)
        if not fam:
            continue
        path = os.path.join(outdir, p["id"] + ".cu")
        if os.path.exists(path):
            with open(path) as f:
                generated = MARK in f.read()
            if not force or not generated:
                kept.append(p["id"])
                continue
        with open(path + ".tmp", "w") as f:
            f.write(fam(p))
        os.replace(path + ".tmp", path)
        wrote.append(p["id"])
    os.unlink(tmpl)
    print("wrote %d, kept %d" % (len(wrote), len(kept)))
    for w in wrote:
        print("  " + w)

if __name__ == "__main__":
    main()

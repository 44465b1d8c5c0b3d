// tuned: c_attn as one tensor-core product in 3xTF32 (about FP32 accuracy) with its
// bias in the epilogue, then one fused kernel for the causal ReLU attention: per
// block 64 queries of one sample and head, the key tiles at or before them only
// (about half of the T x T scores), scores and relu(scores) v in registers and
// shared memory (the scores never reach global memory).  Expected to beat the
// strict-FP32 baseline (full T x T products, a ReLU pass over the scores) and
// lose to its TF32 mode.
// L3_050_reluselfattention: out = q, k, v = c_attn(x).split(768, 2), 12 heads, relu(masked_fill(q k^T / sqrt(64), causal, -inf)) v, heads side by side (no output projection)
// Written by scripts/gen-tuned-candidates.py from the registry.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

struct prm { const float *p[8]; int relu; };

__device__ __forceinline__ float epilogue(float v, long long col, const prm &P)
{
    (void)col;
    (void)P;
    return v;
}

/* 3xTF32: zero-mean weights */
#define SPLIT3 1

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

#define HEADS 12
#define C_EMBD 768
#define W_OFF 0LL
#define B_OFF 1769472LL
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

// tuned: the MLP layer by layer, each linear layer one tensor-core product in
// 3xTF32 (about FP32 accuracy) on 128x128x32 tiles with a 3-stage cp.async pipeline, its
// bias and the ReLU after it applied in the epilogue: one write of each activation, no
// separate bias or ReLU pass.  Expected to beat the strict-FP32 baseline and lose to
// cuBLAS in TF32 mode.
// L3_001_mlp: out = self.network(x), network = Linear(16384, 16384), ReLU, Linear(16384, 16384), ReLU, Linear(16384, 8192)
// Written by scripts/gen-tuned-candidates.py from the registry.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

/* relu: whether the epilogue applies a ReLU (the layer's next module) */
struct prm { const float *p[8]; int relu; };

__device__ __forceinline__ float epilogue(float v, long long col, const prm &P)
{
    (void)col;
    return P.relu ? fmaxf(v, 0.0f) : v;
}

/* 3xTF32: zero-mean weights, outputs of order 0.1-1 */
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

/* in and out features, the offsets of the weight and the bias in params,
 * and whether a ReLU follows */
struct layer { long long in, out, w, b; int relu; };
static const layer NET[] = {
    { 16384LL, 16384LL, 0LL, 268435456LL, 1 },
    { 16384LL, 16384LL, 268451840LL, 536887296LL, 1 },
    { 16384LL, 8192LL, 536903680LL, 671121408LL, 0 },
};
#define N_LAYERS ((int)(sizeof NET / sizeof NET[0]))
#define ROWS 128LL
#define MOST 16384LL

static float *act[2];

extern "C" int kbv_setup(const kbv_call *example)
{
    (void)example;
    for (int i = 0; i < 2; i++)
        if (cudaMalloc((void **)&act[i], (size_t)(ROWS * MOST) * sizeof(float)) != cudaSuccess) return 1;
    return configure<true>();
}

extern "C" void kbv_teardown(void)
{
    for (int i = 0; i < 2; i++) {
        cudaFree(act[i]);
        act[i] = NULL;
    }
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs != 2 || call->n_outputs != 1 || !act[0]) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2 || x->shape[0] != ROWS || x->shape[1] != NET[0].in) return 1;
    if (kbv_numel(&call->outputs[0]) != ROWS * NET[N_LAYERS - 1].out) return 1;
    const float *params = (const float *)call->inputs[1].data;
    const float *cur = (const float *)x->data;
    for (int l = 0; l < N_LAYERS; l++) {
        float *dst = l == N_LAYERS - 1 ? (float *)call->outputs[0].data : act[l & 1];
        prm P = {};
        P.relu = NET[l].relu;
        if (run_gemm<true>(cur, params + NET[l].w, dst, params + NET[l].b, ROWS, NET[l].out, NET[l].in, 1, 0, 0,
                           0, P, call->stream))
            return 1;
        cur = dst;
    }
    return 0;
}

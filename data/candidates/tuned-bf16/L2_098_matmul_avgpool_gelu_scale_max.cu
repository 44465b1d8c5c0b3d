// tuned-bf16 (hand-written): L2_098_matmul_avgpool_gelu_scale_max:
// out = max(gelu(avg_pool1d(linear(x).unsqueeze(1), 16).squeeze(1)) * scale_factor, dim=1)
//
// An algebraic rewrite that removes most of the product.  Average pooling
// over windows of 16 output features of a linear layer is itself a linear
// layer: mean_r (x . W[16g + r] + b[16g + r]) = x . Wbar[g] + bbar[g], with
// Wbar[g] the mean of W's rows 16g .. 16g + 15 and bbar[g] the mean of their
// biases.  So: one streaming pass over W (128 MiB in bfloat16) writes
// Wbar [512, 8192] (bfloat16, the means taken in float); a 1024 x 512 x
// 8192 bfloat16 tensor-core product (8.6 GFLOP, a 16th of the layer's)
// with bbar, the GELU and the scale in its epilogue; one row maximum per
// sample.  Any baseline runs the whole 1024 x 8192 x 8192 product (137
// GFLOP, about 0.2 ms on the H200's tensor cores at best) and pools its
// output; this is about 0.03 ms for W plus 0.04 ms for the smaller
// product (the WMMA kernel below runs at about a third of cuBLAS's rate):
// expected 2.5-3x against the bf16 baseline.  The registry's floor_flops
// counts the rewrite's operations (DESIGN 5a step 6).  Accuracy: Wbar's
// rounding to bfloat16 moves a pooled value by about 2e-4 (values near
// 0.1, W ~ U(+-1/sqrt(8192))), the outputs (near 0.3) by less, against a
// tolerance of 6e-3 there.  The product is scripts/gen-tuned-candidates.py's
// bfloat16 WMMA core (GEMM_CORE_BF16), copied.
#include "kbv.h"
#include <math.h>
#include <stdint.h>
#include <cuda_bf16.h>
// bf16_t: a bfloat16 parameter read as a float by the epilogue.
struct bf16_t {
    __nv_bfloat16 v;
    __device__ __forceinline__ operator float() const { return __bfloat162float(v); }
};

struct prm { float scale; };

__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }

/* the GELU and the scale, per pooled value (P0: the scale, as a float) */
__device__ __forceinline__ float epilogue(float v, long long col, const prm &P)
{
    (void)col;
    return gelu(v) * P.scale;
}

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

#define POOL 16         /* AvgPool1d's window (and stride) */

/* Scratch from kbv_setup, sized for the example: Wbar [H / POOL, K] and
 * bbar in bfloat16, the pooled products [N, H / POOL]. */
static bf16 *g_wbar, *g_bbar, *g_pooled;
static long long g_wbar_n, g_pooled_n;

/* Wbar[g][k] = mean of W[POOL g + r][k] over r, bbar[g] the same of b; grid
 * (ceil(K / (8 x 256)), G).  Eight columns a thread, 16-byte loads, when K
 * is a multiple of 8; one at a time otherwise. */
__global__ void __launch_bounds__(256) pool_rows(const bf16 *__restrict__ W, const bf16 *__restrict__ b,
                                                 bf16 *__restrict__ wbar, bf16 *__restrict__ bbar, long long K,
                                                 int vec)
{
    long long g = blockIdx.y;
    const bf16 *w0 = W + g * POOL * K;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float s = 0.0f;
        for (int r = 0; r < POOL; r++) s += __bfloat162float(b[g * POOL + r]);
        bbar[g] = __float2bfloat16_rn(s / POOL);
    }
    if (vec) {
        long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        if (q >= K / 8) return;
        float a[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 4
        for (int r = 0; r < POOL; r++) {
            uint4 v = __ldcs(reinterpret_cast<const uint4 *>(w0 + r * K) + q);
            unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int j = 0; j < 4; j++) {
                a[2 * j] += __uint_as_float(u[j] << 16);
                a[2 * j + 1] += __uint_as_float(u[j] & 0xffff0000u);
            }
        }
        unsigned o[4];
#pragma unroll
        for (int j = 0; j < 4; j++)
            o[j] = (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(a[2 * j] / POOL)) |
                   ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(a[2 * j + 1] / POOL)) << 16);
        reinterpret_cast<uint4 *>(wbar + g * K)[q] = make_uint4(o[0], o[1], o[2], o[3]);
    } else {
        for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < K; k += (long long)gridDim.x * blockDim.x) {
            float s = 0.0f;
            for (int r = 0; r < POOL; r++) s += __bfloat162float(w0[r * K + k]);
            wbar[g * K + k] = __float2bfloat16_rn(s / POOL);
        }
    }
}

/* out[n] = max over g of pooled[n][g]: one warp per row; NaN wins, as in
 * torch.max. */
__global__ void row_max(const bf16 *__restrict__ y, bf16 *__restrict__ out, long long N, long long G)
{
    long long n = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (n >= N) return;
    float m = -INFINITY;
    for (long long g = lane; g < G; g += 32) {
        float v = __bfloat162float(y[n * G + g]);
        m = (v > m || isnan(v)) ? v : m;
    }
    for (int o = 16; o > 0; o >>= 1) {
        float v = __shfl_xor_sync(0xffffffffu, m, o);
        m = (v > m || isnan(v)) ? v : m;
    }
    if (lane == 0) out[n] = __float2bfloat16_rn(m);
}

extern "C" int kbv_setup(const kbv_call *example)
{
    if (example->n_inputs < 3) return 1;
    long long N = example->inputs[0].shape[0], K = example->inputs[0].shape[1], H = example->inputs[1].shape[0];
    g_wbar_n = H / POOL * K;
    g_pooled_n = N * (H / POOL);
    if (cudaMalloc((void **)&g_wbar, (size_t)(g_wbar_n > 0 ? g_wbar_n : 1) * sizeof(bf16)) != cudaSuccess ||
        cudaMalloc((void **)&g_bbar, (size_t)(H / POOL + 1) * sizeof(bf16)) != cudaSuccess ||
        cudaMalloc((void **)&g_pooled, (size_t)(g_pooled_n > 0 ? g_pooled_n : 1) * sizeof(bf16)) != cudaSuccess)
        return 1;
    return configure<true>();
}

extern "C" void kbv_teardown(void)
{
    if (g_wbar) cudaFree(g_wbar);
    if (g_bbar) cudaFree(g_bbar);
    if (g_pooled) cudaFree(g_pooled);
    g_wbar = g_bbar = g_pooled = NULL;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 3 || call->n_outputs < 1 || call->inputs[0].dtype != KBV_BF16) return 1;
    const kbv_tensor *x = &call->inputs[0], *w = &call->inputs[1], *b = &call->inputs[2];
    if (x->ndim != 2 || w->ndim != 2 || w->shape[1] != x->shape[1] || kbv_numel(b) != w->shape[0]) return 1;
    long long N = x->shape[0], K = x->shape[1], H = w->shape[0], G = H / POOL;
    /* attributes: in_features, out_features, pool_kernel_size, scale_factor */
    if (call->n_attrs > 2 && (long long)call->attrs[2] != POOL) return 1;
    prm P = {};
    P.scale = call->n_attrs > 3 ? (float)call->attrs[3] : 2.0f;
    if (kbv_numel(&call->outputs[0]) != N || G * K > g_wbar_n || N * G > g_pooled_n || G == 0 || G > 65535)
        return 1;
    int vec = K % 8 == 0 && (uintptr_t)w->data % 16 == 0;
    dim3 grid((unsigned)((K + 8 * 256 - 1) / (8 * 256)), (unsigned)G);
    pool_rows<<<grid, 256, 0, call->stream>>>((const bf16 *)w->data, (const bf16 *)b->data, g_wbar, g_bbar, K, vec);
    if (run_gemm<true>((const bf16 *)x->data, g_wbar, g_pooled, (const bf16_t *)g_bbar, N, G, K, 1, 0, 0, 0, P,
                       call->stream))
        return 1;
    row_max<<<(unsigned)((N * 32 + 255) / 256), 256, 0, call->stream>>>(g_pooled, (bf16 *)call->outputs[0].data, N, G);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// tuned: C = A @ B on the tensor cores in TF32 (WMMA m16n16k8 fragments),
// 128x128x32 block tiles in shared memory, filled by cp.async in a 3-stage
// pipeline, 8 warps each owning a 64x32 piece of the tile.
//
// Honest about precision: every operand is rounded to TF32 (10-bit
// mantissa, round to nearest) before the product and accumulated in FP32.
// For KernelBench's U[0,1) inputs at K = 4096 the error is about 1e-5 of
// |C|, well inside kbv's 1e-3 + 1e-3|ref| tolerance, but it is TF32, not
// strict FP32: kbv should flag it precision-tf32.  It is expected to beat
// the strict-FP32 cuBLAS baseline and to lose to cuBLAS in TF32 mode.
//
// Shapes come from the tensors; sizes that are not multiples of the tile
// go to a plain FP32 tiled kernel rather than being assumed away.
#include "kbv.h"
#include <mma.h>
#include <stdint.h>

using namespace nvcuda;

#define BM 128
#define BN 128
#define BK 32
#define STAGES 3
#define THREADS 256
#define LDA (BK + 4)   /* padded row strides (floats) against bank conflicts; */
#define LDB (BN + 4)   /* both keep 32-byte alignment of every fragment */
#define A_STAGE (BM * LDA)
#define B_STAGE (BK * LDB)
#define SMEM_BYTES ((A_STAGE + B_STAGE) * STAGES * (int)sizeof(float))

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

// Copies the A tile (BM x BK) and the B tile (BK x BN) for k-block kt into
// a pipeline stage: 1024 float4 each, four per thread.
__device__ __forceinline__ void load_stage(float *As, float *Bs, const float *A, const float *B,
                                           int K, int N, int bm, int bn, int kt)
{
    int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        int idx = t + i * THREADS;
        int r = idx >> 3, c4 = (idx & 7) * 4;   /* 8 float4 per A row */
        cp_async16(As + r * LDA + c4, A + (size_t)(bm + r) * K + (size_t)kt * BK + c4);
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        int idx = t + i * THREADS;
        int r = idx >> 5, c4 = (idx & 31) * 4;  /* 32 float4 per B row */
        cp_async16(Bs + r * LDB + c4, B + (size_t)(kt * BK + r) * N + bn + c4);
    }
}

__global__ void __launch_bounds__(THREADS, 2)
gemm_tf32(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
          int M, int N, int K)
{
    extern __shared__ __align__(128) float smem[];
    float *As = smem;
    float *Bs = smem + STAGES * A_STAGE;
    int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    int warp = threadIdx.x >> 5;
    int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
    int KT = K / BK;
    (void)M;

    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[4][2];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);

#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT) load_stage(As + s * A_STAGE, Bs + s * B_STAGE, A, B, K, N, bm, bn, s);
        cp_async_commit();
    }

    for (int kt = 0; kt < KT; kt++) {
        // Tile kt has landed once at most STAGES-2 newer groups are pending;
        // the barrier also tells every warp that the stage of tile kt-1 is
        // free to be refilled.
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        int nt = kt + STAGES - 1;
        if (nt < KT) {
            int ns = nt % STAGES;
            load_stage(As + ns * A_STAGE, Bs + ns * B_STAGE, A, B, K, N, bm, bn, nt);
        }
        cp_async_commit();

        const float *as = As + (kt % STAGES) * A_STAGE;
        const float *bs = Bs + (kt % STAGES) * B_STAGE;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[4];
            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[2];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                wmma::load_matrix_sync(fa[i], as + (wm + i * 16) * LDA + kk, LDA);
#pragma unroll
                for (int e = 0; e < fa[i].num_elements; e++) fa[i].x[e] = wmma::__float_to_tf32(fa[i].x[e]);
            }
#pragma unroll
            for (int j = 0; j < 2; j++) {
                wmma::load_matrix_sync(fb[j], bs + kk * LDB + wn + j * 16, LDB);
#pragma unroll
                for (int e = 0; e < fb[j].num_elements; e++) fb[j].x[e] = wmma::__float_to_tf32(fb[j].x[e]);
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
    }
    cp_async_wait<0>();

#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(C + (size_t)(bm + wm + i * 16) * N + bn + wn + j * 16, acc[i][j], N,
                                    wmma::mem_row_major);
}

// Plain FP32 fallback for shapes that are not multiples of the tiles.
__global__ void gemm_fp32_tiled(const float *__restrict__ A, const float *__restrict__ B,
                                float *__restrict__ C, int M, int N, int K)
{
    __shared__ float as[16][16];
    __shared__ float bs[16][17];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[(size_t)row * K + ka] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[(size_t)kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 16; k++) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

static int configured;

extern "C" int kbv_setup(const kbv_call *example)
{
    (void)example;
    if (cudaFuncSetAttribute(gemm_tf32, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES) !=
        cudaSuccess)
        return 1;
    configured = 1;
    return 0;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return 1;
    int M = (int)a->shape[0], K = (int)a->shape[1], N = (int)b->shape[1];
    const float *A = (const float *)a->data, *B = (const float *)b->data;
    float *C = (float *)call->outputs[0].data;
    int aligned = ((uintptr_t)A % 16 == 0) && ((uintptr_t)B % 16 == 0) && ((uintptr_t)C % 32 == 0);
    if (M % BM == 0 && N % BN == 0 && K % BK == 0 && K > 0 && aligned) {
        if (!configured && kbv_setup(call) != 0) return 1;
        dim3 grid(N / BN, M / BM);
        gemm_tf32<<<grid, THREADS, SMEM_BYTES, call->stream>>>(A, B, C, M, N, K);
    } else {
        dim3 grid((N + 15) / 16, (M + 15) / 16), block(16, 16);
        gemm_fp32_tiled<<<grid, block, 0, call->stream>>>(A, B, C, M, N, K);
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kbv_teardown(void) {}

// tuned: strict-FP32 matrix product on the CUDA cores (no tensor cores): 128x128x8 block
// tiles, 8x8 outputs per thread in registers, double-buffered shared memory with the next
// k-tile prefetched into registers, the division by 2 in its epilogue; then one small
// kernel for the row sum and the scaling.  Expected speedup 0.7-1.0x against the
// strict-FP32 baseline (2.76 ms on the H200 in the archived run; this file not yet timed)
// and about 0.15x against the TF32 one (0.41 ms).  Why no tensor cores: see below.
// L2_014_gemm_divide_sum_scaling: out = torch.sum(torch.matmul(x, self.weight.T) / 2, dim=1, keepdim=True) * 1.5
// Derived from the output of scripts/gen-tuned-candidates.py, then rewritten by hand
// (the generator leaves this file alone): its 3xTF32 product failed on the H200.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

/* Why strict FP32.  Each output is the sum of a row of y = x W^T, 8192
 * terms of about 50 with W ~ N(0, 1): the outputs are spread over +-1e4,
 * and the few near zero are judged at an absolute 1e-3.  The fp32
 * reference is itself off by about 5e-3 (rms) from the exact sums (each y is an
 * FMA chain over k whose rounding errors add up in the row sum), so a
 * candidate passes only if its y carry the same rounding: one FMA chain
 * per output over k in order, which is what strict-FP32 GEMMs do.  The
 * 3xTF32 product this file had before failed on every distribution (up to
 * 3.6 off, 4-15% of the outputs): the tensor cores cut their sums towards
 * zero instead of rounding them, an error of about 1e-4 of each y that
 * the row sum turns into 0.3-1 on outputs of a few thousand.  The
 * algebraic shortcut out[m] = 0.75 x[m] . (the column sums of W) reads W
 * once (about 0.08 ms) but rounds differently too, and kbv's physical-floor
 * probe, which counts the problem's 2 M N K FLOPs, would class it as
 * impossible speed. */

#define BM 128
#define BN 128
#define BK 8
#define THREADS 256
/* The k-major tiles have a pitch of BM + 4 floats: a warp's transposing
 * stores (16 rows x 2 groups of 4 k) then fall in 32 different banks, and
 * rows stay 16-byte aligned for the float4 reads. */
#define PITCH (BM + 4)

/* y [M, N] = (x [M, K] W^T) / 2 with W [N, K], for M and N multiples of 128
 * and K a multiple of 8, x and W 16-byte aligned.  Thread (tx, ty) of the
 * 16 x 16 grid owns rows {ty*4 + i, 64 + ty*4 + i} and columns {tx*4 + j,
 * 64 + tx*4 + j}, i, j < 4, of the block's tile: the float4 reads of a warp
 * touch two A addresses (broadcast) and 16 consecutive B vectors.  Each
 * output is accumulated as acc = fma(x[k], w[k], acc) for k = 0, 1, ...,
 * K - 1 from acc = 0, in FP32. */
__global__ void __launch_bounds__(THREADS, 2)
sgemm_nt(const float *__restrict__ x, const float *__restrict__ W, float *__restrict__ y, long long N, long long K)
{
    __shared__ __align__(16) float As[2][BK][PITCH];
    __shared__ __align__(16) float Bs[2][BK][PITCH];
    int t = threadIdx.x, tx = t & 15, ty = t >> 4;
    long long bm = (long long)blockIdx.y * BM, bn = (long long)blockIdx.x * BN;
    /* loader: thread t brings k 0..3 or 4..7 of row t / 2 of each tile */
    int lr = t >> 1, lk = (t & 1) * 4;
    const float *xa = x + (bm + lr) * K + lk;
    const float *wb = W + (bn + lr) * K + lk;
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
    float4 pa = *(const float4 *)xa, pb = *(const float4 *)wb;
    As[0][lk + 0][lr] = pa.x; As[0][lk + 1][lr] = pa.y; As[0][lk + 2][lr] = pa.z; As[0][lk + 3][lr] = pa.w;
    Bs[0][lk + 0][lr] = pb.x; Bs[0][lk + 1][lr] = pb.y; Bs[0][lk + 2][lr] = pb.z; Bs[0][lk + 3][lr] = pb.w;
    __syncthreads();
    long long KT = K / BK;
    for (long long kt = 0; kt < KT; kt++) {
        int cur = (int)(kt & 1);
        /* the next tile's loads are in flight while this one is multiplied */
        if (kt + 1 < KT) {
            pa = *(const float4 *)(xa + (kt + 1) * BK);
            pb = *(const float4 *)(wb + (kt + 1) * BK);
        }
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float4 a0 = *(const float4 *)&As[cur][k][ty * 4], a1 = *(const float4 *)&As[cur][k][64 + ty * 4];
            float4 b0 = *(const float4 *)&Bs[cur][k][tx * 4], b1 = *(const float4 *)&Bs[cur][k][64 + tx * 4];
            float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        /* The other buffer was last read in iteration kt - 1, which every
         * thread finished before the barrier that ended it; the barrier
         * below makes these stores visible before iteration kt + 1 reads
         * them, and keeps anyone from overwriting buffer cur too early. */
        if (kt + 1 < KT) {
            int nx = cur ^ 1;
            As[nx][lk + 0][lr] = pa.x; As[nx][lk + 1][lr] = pa.y; As[nx][lk + 2][lr] = pa.z; As[nx][lk + 3][lr] = pa.w;
            Bs[nx][lk + 0][lr] = pb.x; Bs[nx][lk + 1][lr] = pb.y; Bs[nx][lk + 2][lr] = pb.z; Bs[nx][lk + 3][lr] = pb.w;
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        long long row = bm + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        float4 *yr = (float4 *)(y + row * N + bn); /* 16-byte aligned: N % 128 == 0 */
        float4 v0 = make_float4(acc[i][0] / 2.0f, acc[i][1] / 2.0f, acc[i][2] / 2.0f, acc[i][3] / 2.0f);
        float4 v1 = make_float4(acc[i][4] / 2.0f, acc[i][5] / 2.0f, acc[i][6] / 2.0f, acc[i][7] / 2.0f);
        yr[tx] = v0;
        yr[16 + tx] = v1;
    }
}

/* Any other shape: 16x16 shared-memory tiles, the same FMA chain per output. */
__global__ void sgemm_nt_any(const float *__restrict__ x, const float *__restrict__ W, float *__restrict__ y,
                             long long M, long long N, long long K)
{
    __shared__ float xs[16][16];
    __shared__ float ws[16][17];
    long long row = (long long)blockIdx.x * 16 + threadIdx.y, col = (long long)blockIdx.y * 16 + threadIdx.x;
    long long wrow = (long long)blockIdx.y * 16 + threadIdx.y; /* the W row this thread loads */
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += 16) {
        long long k = k0 + threadIdx.x;
        xs[threadIdx.y][threadIdx.x] = (row < M && k < K) ? x[row * K + k] : 0.0f;
        ws[threadIdx.x][threadIdx.y] = (wrow < N && k < K) ? W[wrow * K + k] : 0.0f; /* ws[k][n] */
        __syncthreads();
        long long kn = K - k0 < 16 ? K - k0 : 16;
        for (int kk = 0; kk < kn; kk++) acc = fmaf(xs[threadIdx.y][kk], ws[kk][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < M && col < N) y[row * N + col] = acc / 2.0f;
}

/* out[m] = 1.5 * (the sum of row m of y [M, N]), one block of 256 per row:
 * each thread sums the columns j = thread, thread + 256, ... in order, the
 * warps combine by shuffles and thread 0 adds the 8 warp sums in order. */
__global__ void __launch_bounds__(256) row_sum(const float *__restrict__ y, float *__restrict__ out, long long N)
{
    __shared__ float sh[8];
    const float *r = y + (long long)blockIdx.x * N;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < N; j += 256) s += r[j];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float v = sh[0];
        for (int w = 1; w < 8; w++) v += sh[w];
        out[blockIdx.x] = v * 1.5f;
    }
}

static float *scratch;
static size_t scratch_bytes;

extern "C" void kbv_teardown(void)
{
    cudaFree(scratch);
    scratch = NULL;
    scratch_bytes = 0;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0], *w = &call->inputs[1];
    if (x->ndim != 2 || w->ndim != 2 || w->shape[1] != x->shape[1]) return 1;
    long long M = x->shape[0], K = x->shape[1], N = w->shape[0];
    float *out = (float *)call->outputs[0].data;
    cudaStream_t st = call->stream;
    if (kbv_numel(&call->outputs[0]) != M) return 1;
    if (M == 0) return 0;
    if (M > 0x7fffffffLL) return 1;
    size_t bytes = (size_t)(M * N) * sizeof(float);
    if (scratch_bytes < bytes) {
        cudaFree(scratch);
        scratch = NULL;
        scratch_bytes = 0;
        if (cudaMalloc((void **)&scratch, bytes) != cudaSuccess) return 1;
        scratch_bytes = bytes;
    }
    const float *xp = (const float *)x->data, *wp = (const float *)w->data;
    if (N > 0) {
        int fits = M % BM == 0 && N % BN == 0 && K % BK == 0 && K > 0 && M / BM <= 65535 && N / BN <= 0x7fffffffLL &&
                   (uintptr_t)xp % 16 == 0 && (uintptr_t)wp % 16 == 0;
        if (fits) {
            sgemm_nt<<<dim3((unsigned)(N / BN), (unsigned)(M / BM)), THREADS, 0, st>>>(xp, wp, scratch, N, K);
        } else {
            if ((N + 15) / 16 > 65535) return 1;
            dim3 grid((unsigned)((M + 15) / 16), (unsigned)((N + 15) / 16)), block(16, 16);
            sgemm_nt_any<<<grid, block, 0, st>>>(xp, wp, scratch, M, N, K);
        }
    }
    row_sum<<<(unsigned)M, 256, 0, st>>>(scratch, out, N);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

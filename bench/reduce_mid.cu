/* reduce_mid.cu - a standalone microbenchmark for sum over dim 1 of a
 * float32 tensor [128, 4096, 4095] (KernelBench L1_047; L1_048 is the same
 * reduction divided by R).  It times kbv's current streaming two-pass
 * reduction (V0, collect/baselines/problems/reduce.cu for OP_SUM with the plan
 * make_plan gives this shape) against variants of it, a PyTorch-like
 * column-walking kernel, and a "flat4" kernel that reads with aligned
 * float4 loads, plus read-ceiling kernels that just sum the whole buffer.
 *
 * Every variant is verified twice before it is timed: once on integer data
 * in {-2..2}, where every partial sum is an integer far below 2^24 and so
 * exact in float32 whatever the summation order (the output must equal the
 * float64 reference exactly; this catches any missing or doubled element),
 * and once on U(-1,1) data against the float64 reference with the bound
 * |out - ref| <= 1e-4 * sum|x| + 1e-6 (see TOL_REL below).  A variant that
 * fails either check, or fails to launch, is reported as FAILED and not
 * timed.  Timing follows kbv's cold-L2 method: a memset of a flush buffer
 * (max(2 x L2, 256 MiB)) on the stream outside the event window, start
 * event, launch(es), stop event, synchronize; 3 warm-up rounds, then 20
 * timed rounds, each round running every variant once in an order rotated
 * by one per round so that clock drift is shared by all variants.
 *
 * usage: reduce_mid [CSV] [--samples=N] [--only=SUBSTR]... [--skip=SUBSTR]...
 *                   [--shape=OUTER,R,INNER] [--verify-only]
 * CSV: where to write the sorted results as CSV.  --only/--skip select
 * variants by a substring of their names (after a variant lost the CUDA
 * context, rerun with --skip).  --shape and --verify-only serve the CPU
 * emulator check (bench/emu-check.sh) and quick checks of other shapes.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

/* The suite's shape (collect/suite/problems/l1_reduce.c: RD_B, RD_R, RD_I; all
 * of L1_047..L1_053 share it, so there is no second shape to guard).
 * --shape=O,R,I replaces it, for checks on small shapes. */
const int64_t SUITE_OUTER = 128, SUITE_R = 4096, SUITE_INNER = 4095;

/* Verification bound for U(-1,1) data.  Recursive float32 summation of n
 * terms errs by at most about n * u * sum|x| (u = 2^-24 = 6e-8).  Every
 * variant here adds at most ~1100 terms in one chain (the longest: a
 * 1024-row chunk, then up to 64 partials), so the worst case stays below
 * 1.1e3 * 6e-8 = 6.6e-5 of sum|x|, inside 1e-4; the 1e-6 covers outputs
 * whose sum|x| is tiny.  A wrong index (a missing or doubled row) errs by
 * one |x|, about 0.5, while 1e-4 * sum|x| is about 0.2 here: with 524160
 * outputs such a bug fails somewhere, and the exact integer check catches
 * it anyway. */
const double TOL_REL = 1e-4, TOL_ABS = 1e-6;

#define CK(call)                                                                        \
    do {                                                                                \
        cudaError_t ck_e = (call);                                                      \
        if (ck_e != cudaSuccess) {                                                      \
            fprintf(stderr, "reduce_mid: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,   \
                    cudaGetErrorString(ck_e));                                          \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* ------------------------------------------------------------------------
 * Loads with cache hints.  H_LDG is __ldg (ld.global.nc); L2_256B asks the
 * L2 to fetch the 256-byte block around the sector (a prefetch of the
 * neighbours); L1NA does not allocate the line in L1. */
enum { H_LDG = 0, H_L2_256 = 1, H_L1NA = 2, H_L1NA_L2_256 = 3 };

const char *hint_name(int h)
{
    return h == H_LDG ? "ldg" : h == H_L2_256 ? "L2_256B" : h == H_L1NA ? "L1_no_alloc" : "L1_no_alloc+L2_256B";
}

template <int H>
__device__ __forceinline__ float ld1(const float *p)
{
    if constexpr (H == H_LDG) {
        return __ldg(p);
    } else {
        float v;
        if constexpr (H == H_L2_256)
            asm("ld.global.nc.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(p));
        else if constexpr (H == H_L1NA)
            asm("ld.global.nc.L1::no_allocate.f32 %0, [%1];" : "=f"(v) : "l"(p));
        else
            asm("ld.global.nc.L1::no_allocate.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(p));
        return v;
    }
}

template <int H>
__device__ __forceinline__ float4 ld4(const float4 *p)
{
    if constexpr (H == H_LDG) {
        return __ldg(p);
    } else {
        float4 v;
        if constexpr (H == H_L2_256)
            asm("ld.global.nc.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
                : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
        else if constexpr (H == H_L1NA)
            asm("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
                : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
        else
            asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
                : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
        return v;
    }
}

/* ------------------------------------------------------------------------
 * Data and reference. */
__device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* mode 0: U(-1,1) as k * 2^-23 with k in [-2^23, 2^23), exact in float;
 * mode 1: integers in {-2..2}. */
__global__ void fill(float *x, int64_t n, uint64_t seed, int mode)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t h = mix64((uint64_t)i ^ (seed * 0xD1B54A32D192ED03ull));
        x[i] = mode == 0 ? (float)((int64_t)(h >> 40) - (1ll << 23)) * (1.0f / 8388608.0f)
                         : (float)((int)((h >> 32) % 5u) - 2);
    }
}

/* One thread per output, float64 accumulators; adjacent threads read
 * adjacent columns, so the walk is coalesced. */
__global__ void reference(const float *x, double *ref, double *abssum, int64_t outer, int64_t R,
                          int64_t inner)
{
    const int64_t n = outer * inner;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < n;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = t / inner, i = t - o * inner;
        const float *p = x + o * R * inner + i;
        double s = 0.0, a = 0.0;
        for (int64_t r = 0; r < R; r++) {
            const double v = (double)p[r * inner];
            s += v;
            a += fabs(v);
        }
        ref[t] = s;
        abssum[t] = a;
    }
}

/* ------------------------------------------------------------------------
 * Read ceilings: sum the whole buffer, the way a copy reads it.  Each
 * thread sums in float (as a reduction would), the block in double, one
 * double partial per block (summed on the host for verification). */
__device__ __forceinline__ void block_sum_to(double v, double *dst)
{
    __shared__ double s_w[32];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0) s_w[w] = v;
    __syncthreads();
    if (w == 0) {
        const int nw = (int)(blockDim.x >> 5);
        v = lane < nw ? s_w[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0) *dst = v;
    }
}

/* Grid-strided float4 loads, U in flight per thread. */
template <int U>
__global__ void __launch_bounds__(256) ceil_f4_gs(const float4 *__restrict__ x, int64_t n4,
                                                  double *__restrict__ part)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (; i + (U - 1) * stride < n4; i += U * stride) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = __ldg(x + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; u++) s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < n4; i += stride) {
        const float4 v = __ldg(x + i);
        s += (v.x + v.y) + (v.z + v.w);
    }
    block_sum_to((double)s, part + blockIdx.x);
}

/* Grid-strided scalar loads: can 4-byte loads alone reach the ceiling? */
template <int U>
__global__ void __launch_bounds__(256) ceil_f1_gs(const float *__restrict__ x, int64_t n,
                                                  double *__restrict__ part)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        float v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = __ldg(x + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; u++) s += v[u];
    }
    for (; i < n; i += stride) s += __ldg(x + i);
    block_sum_to((double)s, part + blockIdx.x);
}

/* Each block streams its own contiguous range (one wave of blocks): the
 * access shape of many far-apart streams, as the two-pass kernels have,
 * but with float4 loads. */
template <int U>
__global__ void __launch_bounds__(256) ceil_f4_range(const float4 *__restrict__ x, int64_t n4,
                                                     double *__restrict__ part)
{
    const int64_t per = (n4 + gridDim.x - 1) / gridDim.x;
    const int64_t b0 = (int64_t)blockIdx.x * per;
    const int64_t b1 = b0 + per < n4 ? b0 + per : n4;
    int64_t i = b0 + threadIdx.x;
    const int64_t st = blockDim.x;
    float s = 0.0f;
    for (; i + (U - 1) * st < b1; i += U * st) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = __ldg(x + i + u * st);
#pragma unroll
        for (int u = 0; u < U; u++) s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < b1; i += st) {
        const float4 v = __ldg(x + i);
        s += (v.x + v.y) + (v.z + v.w);
    }
    block_sum_to((double)s, part + blockIdx.x);
}

/* ------------------------------------------------------------------------
 * V0: kbv's reduce_pass1 / reduce_pass2 (collect/baselines/problems/reduce.cu) for
 * OP_SUM, the same code with the argmax/argmin bookkeeping (dead for sum)
 * left out. */
const int KBV_TPB = 256;
const int KBV_MIN_BLOCKS_PER_SM = 4;
const int KBV_P2_THREADS = 256;

template <int CPT, int RU>
__global__ void __launch_bounds__(KBV_TPB, KBV_MIN_BLOCKS_PER_SM)
kbv_pass1(const float *__restrict__ x, float *__restrict__ pval, float *__restrict__ out, int R,
          int64_t inner, int chunks, int tiles, int rows)
{
    const int TPB = KBV_TPB;
    const int64_t bid = blockIdx.x;
    const int tile = (int)(bid % tiles);
    const int64_t oc = bid / tiles;
    const int c = (int)(oc % chunks);
    const int64_t o = oc / chunks;
    const int64_t col = (int64_t)tile * (CPT * TPB) + threadIdx.x;
    const int64_t left = inner - col;
    const int nk = left <= 0 ? 0 : left >= (int64_t)CPT * TPB ? CPT : (int)((left + TPB - 1) / TPB);
    const int r0 = c * rows;
    const int r1 = (int64_t)r0 + rows < (int64_t)R ? r0 + rows : R;
    const float ini = 0.0f;
    float acc[CPT];
#pragma unroll
    for (int k = 0; k < CPT; k++) acc[k] = ini;
    if (nk > 0) {
        const float *p = x + (o * R + r0) * inner + col;
        int r = r0;
        for (; r + RU <= r1; r += RU) {
            float v[RU][CPT];
#pragma unroll
            for (int u = 0; u < RU; u++)
#pragma unroll
                for (int k = 0; k < CPT; k++) v[u][k] = k < nk ? __ldg(p + u * inner + k * TPB) : ini;
            p += RU * inner;
#pragma unroll
            for (int u = 0; u < RU; u++)
#pragma unroll
                for (int k = 0; k < CPT; k++) acc[k] += v[u][k];
        }
        for (; r < r1; r++, p += inner) {
            float v[CPT];
#pragma unroll
            for (int k = 0; k < CPT; k++) v[k] = k < nk ? __ldg(p + k * TPB) : ini;
#pragma unroll
            for (int k = 0; k < CPT; k++) acc[k] += v[k];
        }
    }
    if (chunks == 1) {
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (k < nk) out[o * inner + col + k * TPB] = acc[k];
    } else {
        const int64_t base = oc * inner + col;
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (k < nk) pval[base + k * TPB] = acc[k];
    }
}

/* Also pass 2 of every variant whose partials are [outer, chunks, inner]. */
__global__ void __launch_bounds__(KBV_P2_THREADS) kbv_pass2(const float *__restrict__ pval,
                                                            float *__restrict__ out, int64_t outer,
                                                            int64_t inner, int chunks)
{
    const int64_t n = outer * inner;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < n;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = t / inner, i = t - o * inner;
        const int64_t base = o * chunks * inner + i;
        float acc = pval[base];
#pragma unroll 4
        for (int c = 1; c < chunks; c++) acc += pval[base + (int64_t)c * inner];
        out[t] = acc;
    }
}

/* kbv's single-pass kernel (reduce_single for OP_SUM): block 32 x 8, x a
 * column, y one of 8 contiguous chunks of R, 8 loads in flight. */
const int KS_COLS = 32, KS_SPLIT = 8, KS_UNROLL = 8;

__global__ void __launch_bounds__(KS_COLS * KS_SPLIT) kbv_single(const float *__restrict__ x,
                                                                 float *__restrict__ out,
                                                                 int64_t outer, int64_t R,
                                                                 int64_t inner)
{
    __shared__ float s_acc[KS_SPLIT][KS_COLS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t i = (int64_t)blockIdx.x * KS_COLS + tx;
    const bool col_ok = i < inner;
    const int64_t chunk = (R + KS_SPLIT - 1) / KS_SPLIT;
    int64_t r0 = (int64_t)ty * chunk, r1 = r0 + chunk;
    if (r0 > R) r0 = R;
    if (r1 > R) r1 = R;
    for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
        float acc = 0.0f;
        if (col_ok) {
            const float *p = x + (o * R + r0) * inner + i;
            int64_t r = r0;
            for (; r + KS_UNROLL <= r1; r += KS_UNROLL) {
                float v[KS_UNROLL];
#pragma unroll
                for (int u = 0; u < KS_UNROLL; u++) v[u] = __ldg(p + u * inner);
                p += KS_UNROLL * inner;
#pragma unroll
                for (int u = 0; u < KS_UNROLL; u++) acc += v[u];
            }
            for (; r < r1; r++, p += inner) acc += __ldg(p);
        }
        s_acc[ty][tx] = acc;
        __syncthreads();
        if (ty == 0 && col_ok) {
            for (int c = 1; c < KS_SPLIT; c++) acc += s_acc[c][tx];
            out[o * inner + i] = acc;
        }
        __syncthreads();
    }
}

/* ------------------------------------------------------------------------
 * Semaphore finish: the last of `need` blocks sharing counter *cnt learns
 * so (threadfence-reduction pattern: every writer fences its partials,
 * then one thread counts).  No block ever waits, so a bug here gives a
 * wrong result, never a hang.  The last block resets the counter for the
 * next launch. */
__device__ __forceinline__ bool last_block(int *cnt, int need)
{
    __shared__ int s_last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        const int prev = atomicAdd(cnt, 1);
        s_last = prev == need - 1;
        if (s_last) *cnt = 0;
    }
    __syncthreads();
    if (s_last) __threadfence();
    return s_last != 0;
}

/* ------------------------------------------------------------------------
 * "tp": kbv's pass 1 generalised.  TPB threads, CPT columns per thread
 * (stride TPB), RU rows per step (RU * CPT loads in flight), MINB blocks
 * per SM for the register bound, H the load hint.  ILV false: chunk c takes
 * the contiguous rows [c * rows, (c + 1) * rows), as kbv; ILV true: the
 * rows are cut into steps of RU rows and chunk c takes steps c, c + chunks,
 * c + 2 * chunks, ... so that the blocks of one slice, running together,
 * read one contiguous window of rows (a smaller DRAM page / TLB footprint).
 * SEM: the last chunk block of a (slice, tile) sums the partials in chunk
 * order and writes the output (no pass 2). */
template <int TPB, int CPT, int RU, int MINB, int H, bool ILV, bool SEM>
__global__ void __launch_bounds__(TPB, MINB)
tp_pass1(const float *__restrict__ x, float *__restrict__ pval, float *__restrict__ out,
         int *__restrict__ cnt, int R, int64_t inner, int chunks, int tiles, int rows)
{
    const int64_t bid = blockIdx.x;
    const int tile = (int)(bid % tiles);
    const int64_t oc = bid / tiles;
    const int c = (int)(oc % chunks);
    const int64_t o = oc / chunks;
    const int64_t col = (int64_t)tile * (CPT * TPB) + threadIdx.x;
    const int64_t left = inner - col;
    const int nk = left <= 0 ? 0 : left >= (int64_t)CPT * TPB ? CPT : (int)((left + TPB - 1) / TPB);
    float acc[CPT];
#pragma unroll
    for (int k = 0; k < CPT; k++) acc[k] = 0.0f;
    if (nk > 0) {
        const float *xs = x + o * R * inner + col;
        if (!ILV) {
            const int r0 = c * rows;
            const int r1 = (int64_t)r0 + rows < (int64_t)R ? r0 + rows : R;
            const float *p = xs + (int64_t)r0 * inner;
            int r = r0;
            for (; r + RU <= r1; r += RU) {
                float v[RU][CPT];
#pragma unroll
                for (int u = 0; u < RU; u++)
#pragma unroll
                    for (int k = 0; k < CPT; k++) v[u][k] = k < nk ? ld1<H>(p + u * inner + k * TPB) : 0.0f;
                p += RU * inner;
#pragma unroll
                for (int u = 0; u < RU; u++)
#pragma unroll
                    for (int k = 0; k < CPT; k++) acc[k] += v[u][k];
            }
            for (; r < r1; r++, p += inner) {
#pragma unroll
                for (int k = 0; k < CPT; k++) acc[k] += k < nk ? ld1<H>(p + k * TPB) : 0.0f;
            }
        } else {
            for (int64_t r = (int64_t)c * RU; r < R; r += (int64_t)chunks * RU) {
                const float *p = xs + r * inner;
                if (r + RU <= R) {
                    float v[RU][CPT];
#pragma unroll
                    for (int u = 0; u < RU; u++)
#pragma unroll
                        for (int k = 0; k < CPT; k++)
                            v[u][k] = k < nk ? ld1<H>(p + u * inner + k * TPB) : 0.0f;
#pragma unroll
                    for (int u = 0; u < RU; u++)
#pragma unroll
                        for (int k = 0; k < CPT; k++) acc[k] += v[u][k];
                } else {
                    for (int64_t rr = r; rr < R; rr++, p += inner) {
#pragma unroll
                        for (int k = 0; k < CPT; k++) acc[k] += k < nk ? ld1<H>(p + k * TPB) : 0.0f;
                    }
                }
            }
        }
    }
    if (chunks == 1) {
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (k < nk) out[o * inner + col + k * TPB] = acc[k];
        return;
    }
    const int64_t base = oc * inner + col;
#pragma unroll
    for (int k = 0; k < CPT; k++)
        if (k < nk) pval[base + k * TPB] = acc[k];
    if (SEM && last_block(cnt + o * tiles + tile, chunks)) {
#pragma unroll
        for (int k = 0; k < CPT; k++) {
            if (k < nk) {
                const float *pp = pval + o * chunks * inner + col + k * TPB;
                float s = __ldcg(pp);
                for (int cc = 1; cc < chunks; cc++) s += __ldcg(pp + (int64_t)cc * inner);
                out[o * inner + col + k * TPB] = s;
            }
        }
    }
}

/* ------------------------------------------------------------------------
 * "pt": PyTorch-like column walking (reduce_kernel<512, 1> for a reduction
 * over a non-innermost dim): a block of 32 x 16 threads owns 32 consecutive
 * columns of one slice; thread (x, y) reads rows y, y + 16, y + 32, ... of
 * its R-chunk, VT of them in flight into VT separate accumulators, then the
 * 16 partials meet in shared memory.  Blocks with consecutive ids take
 * consecutive column tiles, so the blocks running together read whole rows
 * of a few slices.  GY > 1 splits R over blocks: partials
 * [outer, GY, inner] and pass 2, or the semaphore finish. */
const int PT_X = 32, PT_Y = 16;

template <int VT, int H, bool SEM>
__global__ void __launch_bounds__(PT_X * PT_Y, 4)
pt_pass1(const float *__restrict__ x, float *__restrict__ pval, float *__restrict__ out,
         int *__restrict__ cnt, int R, int64_t inner, int ctiles, int gy, int rpg)
{
    __shared__ float s_acc[PT_Y][PT_X + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t bid = blockIdx.x;
    const int ct = (int)(bid % ctiles);
    const int64_t og = bid / ctiles;
    const int g = (int)(og % gy);
    const int64_t o = og / gy;
    const int64_t col = (int64_t)ct * PT_X + tx;
    const bool ok = col < inner;
    const int r0 = g * rpg;
    const int r1 = (int64_t)r0 + rpg < (int64_t)R ? r0 + rpg : R;
    float a[VT];
#pragma unroll
    for (int u = 0; u < VT; u++) a[u] = 0.0f;
    if (ok) {
        const float *p = x + o * R * inner + col;
        int r = r0 + ty;
        for (; r + (VT - 1) * PT_Y < r1; r += VT * PT_Y) {
            float v[VT];
#pragma unroll
            for (int u = 0; u < VT; u++) v[u] = ld1<H>(p + (int64_t)(r + u * PT_Y) * inner);
#pragma unroll
            for (int u = 0; u < VT; u++) a[u] += v[u];
        }
        for (; r < r1; r += PT_Y) a[0] += ld1<H>(p + (int64_t)r * inner);
    }
    float acc = a[0];
#pragma unroll
    for (int u = 1; u < VT; u++) acc += a[u];
    s_acc[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && ok) {
        for (int yy = 1; yy < PT_Y; yy++) acc += s_acc[yy][tx];
        if (gy == 1) out[o * inner + col] = acc;
        else pval[og * inner + col] = acc;
    }
    if (SEM && gy > 1 && last_block(cnt + o * ctiles + ct, gy)) {
        if (ty == 0 && ok) {
            const float *pp = pval + o * gy * inner + col;
            float s = __ldcg(pp);
            for (int gg = 1; gg < gy; gg++) s += __ldcg(pp + (int64_t)gg * inner);
            out[o * inner + col] = s;
        }
    }
}

/* ------------------------------------------------------------------------
 * "flat4": aligned float4 streaming.  A row of 4095 floats is not 16-byte
 * aligned, but a group of 4 rows is 4 * inner floats, a multiple of 4, and
 * each slice starts aligned (R * inner is a multiple of 4 since R is), so
 * every group of rows 4g..4g+3 starts on a 16-byte boundary.  Seen flat,
 * a group is `inner` float4 windows; window q of every group holds the
 * flat positions 4q..4q+3 of that group, i.e. the same four (row-in-group,
 * column) pairs j * inner + col, whatever the group.  So a thread that owns
 * window q in every group keeps four consistent accumulators, reads only
 * aligned float4s and needs no shuffles.  Each chunk block leaves its
 * accumulators as partials [outer, chunks, 4 * inner] in flat order (one
 * float4 store per window), and pass 2 sums, for column col, the 4 * chunks
 * partials at j * inner + col (chunk by chunk, j = 0..3 within).  This works
 * for any inner as long as R % 4 == 0 and x is 16-byte aligned.
 *
 * TPB threads; WPT windows per thread (q = tile * TPB * WPT + t + j * TPB),
 * GU groups per step (GU * WPT float4 loads in flight).  ILV as in tp, in
 * steps of GU groups.  SEM: the last of the tiles * chunks blocks of a
 * slice finishes the whole slice. */
template <int TPB, int WPT, int GU, int MINB, int H, bool ILV, bool SEM>
__global__ void __launch_bounds__(TPB, MINB)
flat_pass1(const float *__restrict__ x, float *__restrict__ pval, float *__restrict__ out,
           int *__restrict__ cnt, int R, int inner, int chunks, int tiles, int gpc)
{
    const int64_t bid = blockIdx.x;
    const int tile = (int)(bid % tiles);
    const int64_t oc = bid / tiles;
    const int c = (int)(oc % chunks);
    const int64_t o = oc / chunks;
    const int ngroups = R / 4;
    const float4 *xs = reinterpret_cast<const float4 *>(x) + o * ngroups * (int64_t)inner;
    const int q0 = tile * (TPB * WPT) + (int)threadIdx.x;
    const int left = inner - q0;
    const int nk = left <= 0 ? 0 : left >= TPB * WPT ? WPT : (left + TPB - 1) / TPB;
    float4 acc[WPT];
#pragma unroll
    for (int j = 0; j < WPT; j++) acc[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (nk > 0) {
        const int64_t g0 = ILV ? (int64_t)c * GU : (int64_t)c * gpc;
        const int64_t g1 = ILV ? ngroups : (g0 + gpc < ngroups ? g0 + gpc : ngroups);
        const int64_t gstep = ILV ? (int64_t)chunks * GU : GU;
        for (int64_t g = g0; g < g1; g += gstep) {
            const float4 *p = xs + g * inner + q0;
            if (g + GU <= g1) {
                float4 v[GU][WPT];
#pragma unroll
                for (int u = 0; u < GU; u++)
#pragma unroll
                    for (int j = 0; j < WPT; j++)
                        v[u][j] = j < nk ? ld4<H>(p + (int64_t)u * inner + j * TPB) : zero;
#pragma unroll
                for (int u = 0; u < GU; u++)
#pragma unroll
                    for (int j = 0; j < WPT; j++) {
                        acc[j].x += v[u][j].x;
                        acc[j].y += v[u][j].y;
                        acc[j].z += v[u][j].z;
                        acc[j].w += v[u][j].w;
                    }
            } else {
                for (int64_t gg = g; gg < g1; gg++, p += inner) {
#pragma unroll
                    for (int j = 0; j < WPT; j++) {
                        const float4 v = j < nk ? ld4<H>(p + j * TPB) : zero;
                        acc[j].x += v.x;
                        acc[j].y += v.y;
                        acc[j].z += v.z;
                        acc[j].w += v.w;
                    }
                }
                if (!ILV) break;
            }
        }
    }
    float4 *pv = reinterpret_cast<float4 *>(pval) + oc * inner;
#pragma unroll
    for (int j = 0; j < WPT; j++)
        if (j < nk) pv[q0 + j * TPB] = acc[j];
    if (SEM && last_block(cnt + o, tiles * chunks)) {
        const float *ps = pval + o * chunks * 4 * (int64_t)inner;
        for (int col = threadIdx.x; col < inner; col += TPB) {
            float s = 0.0f;
            for (int cc = 0; cc < chunks; cc++)
#pragma unroll
                for (int j = 0; j < 4; j++) s += __ldcg(ps + ((int64_t)cc * 4 + j) * inner + col);
            out[o * (int64_t)inner + col] = s;
        }
    }
}

__global__ void __launch_bounds__(256) flat_pass2(const float *__restrict__ pval,
                                                  float *__restrict__ out, int64_t outer,
                                                  int64_t inner, int chunks)
{
    const int64_t n = outer * inner;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < n;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = t / inner, i = t - o * inner;
        const float *p = pval + o * chunks * 4 * inner + i;
        float s = 0.0f;
        for (int c = 0; c < chunks; c++)
#pragma unroll
            for (int j = 0; j < 4; j++) s += p[((int64_t)c * 4 + j) * inner];
        out[t] = s;
    }
}

/* ------------------------------------------------------------------------
 * Host side. */
struct Bufs {
    int64_t outer = SUITE_OUTER, R = SUITE_R, inner = SUITE_INNER;
    float *x = nullptr;
    float *out = nullptr;
    float *ws = nullptr;       /* partials */
    size_t ws_bytes = 0;
    int *cnt = nullptr;        /* semaphore counters, zero between launches */
    size_t cnt_n = 0;
    double *part = nullptr;    /* ceiling per-block partials */
    size_t part_n = 0;
    int sm = 132;
};

struct Variant {
    std::string name, family;
    bool total_only = false;          /* a ceiling: verified by its total */
    int part_blocks = 0;              /* ceiling: partials it writes */
    size_t ws_need = 0;
    size_t cnt_need = 0;
    const void *kfn = nullptr;        /* the main kernel, for attributes */
    int kthreads = 0;
    std::function<cudaError_t(cudaStream_t)> launch;
    /* results */
    bool failed = false;
    std::string why;
    double err_norm = 0.0, err_rel = 0.0;
    std::vector<float> ms;
    double med = 0.0, mn = 0.0, mx = 0.0;
    int regs = -1, occ = -1;
    size_t local = 0;
};

unsigned grid_cap(const Bufs &b, int64_t items, int threads, int per_sm)
{
    int64_t need = (items + threads - 1) / threads;
    const int64_t cap = (int64_t)b.sm * per_sm;
    if (need > cap) need = cap;
    if (need < 1) need = 1;
    return (unsigned)need;
}

cudaError_t launched()
{
    return cudaGetLastError();
}

/* kbv's make_plan for this shape, op sum (collect/baselines/problems/reduce.cu). */
struct KbvPlan {
    int cpt, tiles, chunks, rows;
};

KbvPlan kbv_plan(const Bufs &b)
{
    const int sm = b.sm;
    const int TPB = 256, MAX_CPT = 8, MINB = 4, WAVES = 4, MIN_CHUNK_ROWS = 32;
    const int64_t tile_max = (int64_t)MAX_CPT * TPB;
    const int64_t tiles = (b.inner + tile_max - 1) / tile_max;
    const int64_t per_tile = (b.inner + tiles - 1) / tiles;
    int cpt = 1;
    while ((int64_t)cpt * TPB < per_tile) cpt *= 2;
    const int64_t slices = b.outer * tiles;
    const int64_t target = (int64_t)(sm > 0 ? sm : 132) * MINB * WAVES;
    int64_t chunks = slices >= target ? 1 : target / slices;
    const int64_t most = b.R / MIN_CHUNK_ROWS;
    if (chunks > most) chunks = most;
    if (chunks < 1) chunks = 1;
    const int64_t rows = (b.R + chunks - 1) / chunks;
    chunks = (b.R + rows - 1) / rows;
    return KbvPlan{ cpt, (int)tiles, (int)chunks, (int)rows };
}

void add_v0(std::vector<Variant> &vs, const Bufs &b)
{
    const KbvPlan pl = kbv_plan(b);
    Variant v;
    char nm[160];
    snprintf(nm, sizeof nm, "V0 kbv two-pass tpb=256 cpt=%d ru=4 minb=4 chunks=%d tiles=%d", pl.cpt,
             pl.chunks, pl.tiles);
    v.name = nm;
    v.family = "V0";
    if (pl.cpt != 8) {
        v.failed = true;
        v.why = "kbv plan gives cpt != 8 (this program instantiates cpt 8 only)";
        vs.push_back(v);
        return;
    }
    v.ws_need = pl.chunks > 1 ? (size_t)b.outer * pl.chunks * b.inner * sizeof(float) : 0;
    v.kfn = (const void *)kbv_pass1<8, 4>;
    v.kthreads = KBV_TPB;
    const Bufs bb = b;
    v.launch = [bb, pl](cudaStream_t s) {
        const unsigned blocks = (unsigned)(bb.outer * pl.tiles * pl.chunks);
        kbv_pass1<8, 4><<<blocks, KBV_TPB, 0, s>>>(bb.x, bb.ws, bb.out, (int)bb.R, bb.inner, pl.chunks,
                                                   pl.tiles, pl.rows);
        cudaError_t e = launched();
        if (e != cudaSuccess || pl.chunks == 1) return e;
        kbv_pass2<<<grid_cap(bb, bb.outer * bb.inner, KBV_P2_THREADS, 16), KBV_P2_THREADS, 0, s>>>(
            bb.ws, bb.out, bb.outer, bb.inner, pl.chunks);
        return launched();
    };
    vs.push_back(v);
}

void add_single(std::vector<Variant> &vs, const Bufs &b)
{
    Variant v;
    v.name = "kbv single-pass 32x8 split=8 unroll=8";
    v.family = "single";
    v.kfn = (const void *)kbv_single;
    v.kthreads = KS_COLS * KS_SPLIT;
    const Bufs bb = b;
    v.launch = [bb](cudaStream_t s) {
        const dim3 grid((unsigned)((bb.inner + KS_COLS - 1) / KS_COLS), (unsigned)(bb.outer < 65535 ? bb.outer : 65535));
        kbv_single<<<grid, dim3(KS_COLS, KS_SPLIT), 0, s>>>(bb.x, bb.out, bb.outer, bb.R, bb.inner);
        return launched();
    };
    vs.push_back(v);
}

template <int TPB, int CPT, int RU, int MINB, int H, bool ILV, bool SEM>
void add_tp(std::vector<Variant> &vs, const Bufs &b, int chunks_want)
{
    const int tiles = (int)((b.inner + (int64_t)CPT * TPB - 1) / ((int64_t)CPT * TPB));
    const int rows = (int)((b.R + chunks_want - 1) / chunks_want);
    const int chunks = (int)((b.R + rows - 1) / rows);
    Variant v;
    char nm[200];
    snprintf(nm, sizeof nm, "tp tpb=%d cpt=%d ru=%d minb=%d chunks=%d tiles=%d hint=%s order=%s fin=%s",
             TPB, CPT, RU, MINB, chunks, tiles, hint_name(H), ILV ? "interleaved" : "contig",
             chunks == 1 ? "none" : SEM ? "semaphore" : "pass2");
    v.name = nm;
    v.family = "tp";
    v.ws_need = chunks > 1 ? (size_t)b.outer * chunks * b.inner * sizeof(float) : 0;
    v.cnt_need = SEM ? (size_t)b.outer * tiles : 0;
    v.kfn = (const void *)tp_pass1<TPB, CPT, RU, MINB, H, ILV, SEM>;
    v.kthreads = TPB;
    const Bufs bb = b;
    v.launch = [bb, tiles, rows, chunks](cudaStream_t s) {
        const unsigned blocks = (unsigned)(bb.outer * tiles * chunks);
        tp_pass1<TPB, CPT, RU, MINB, H, ILV, SEM><<<blocks, TPB, 0, s>>>(
            bb.x, bb.ws, bb.out, bb.cnt, (int)bb.R, bb.inner, chunks, tiles, rows);
        cudaError_t e = launched();
        if (e != cudaSuccess || chunks == 1 || SEM) return e;
        kbv_pass2<<<grid_cap(bb, bb.outer * bb.inner, KBV_P2_THREADS, 16), KBV_P2_THREADS, 0, s>>>(
            bb.ws, bb.out, bb.outer, bb.inner, chunks);
        return launched();
    };
    vs.push_back(v);
}

template <int VT, int H, bool SEM>
void add_pt(std::vector<Variant> &vs, const Bufs &b, int gy)
{
    const int ctiles = (int)((b.inner + PT_X - 1) / PT_X);
    const int rpg = (int)((b.R + gy - 1) / gy);
    Variant v;
    char nm[200];
    snprintf(nm, sizeof nm, "pt block=32x16 vt=%d minb=4 gy=%d hint=%s fin=%s", VT, gy, hint_name(H),
             gy == 1 ? "none" : SEM ? "semaphore" : "pass2");
    v.name = nm;
    v.family = "pt";
    v.ws_need = gy > 1 ? (size_t)b.outer * gy * b.inner * sizeof(float) : 0;
    v.cnt_need = SEM ? (size_t)b.outer * ctiles : 0;
    v.kfn = (const void *)pt_pass1<VT, H, SEM>;
    v.kthreads = PT_X * PT_Y;
    const Bufs bb = b;
    v.launch = [bb, ctiles, rpg, gy](cudaStream_t s) {
        const unsigned blocks = (unsigned)(bb.outer * gy * ctiles);
        pt_pass1<VT, H, SEM><<<blocks, dim3(PT_X, PT_Y), 0, s>>>(bb.x, bb.ws, bb.out, bb.cnt, (int)bb.R,
                                                                bb.inner, ctiles, gy, rpg);
        cudaError_t e = launched();
        if (e != cudaSuccess || gy == 1 || SEM) return e;
        kbv_pass2<<<grid_cap(bb, bb.outer * bb.inner, KBV_P2_THREADS, 16), KBV_P2_THREADS, 0, s>>>(
            bb.ws, bb.out, bb.outer, bb.inner, gy);
        return launched();
    };
    vs.push_back(v);
}

template <int TPB, int WPT, int GU, int MINB, int H, bool ILV, bool SEM>
void add_flat(std::vector<Variant> &vs, const Bufs &b, int chunks_want)
{
    const int ngroups = (int)(b.R / 4);
    const int tiles = (int)((b.inner + (int64_t)TPB * WPT - 1) / ((int64_t)TPB * WPT));
    const int gpc = (ngroups + chunks_want - 1) / chunks_want;
    const int chunks = (ngroups + gpc - 1) / gpc;
    Variant v;
    char nm[200];
    snprintf(nm, sizeof nm, "flat4 tpb=%d wpt=%d gu=%d minb=%d chunks=%d tiles=%d hint=%s order=%s fin=%s",
             TPB, WPT, GU, MINB, chunks, tiles, hint_name(H), ILV ? "interleaved" : "contig",
             SEM ? "semaphore" : "pass2");
    v.name = nm;
    v.family = "flat4";
    if (b.R % 4 != 0) {
        v.failed = true;
        v.why = "R % 4 != 0";
        vs.push_back(v);
        return;
    }
    v.ws_need = (size_t)b.outer * chunks * 4 * b.inner * sizeof(float);
    v.cnt_need = SEM ? (size_t)b.outer : 0;
    v.kfn = (const void *)flat_pass1<TPB, WPT, GU, MINB, H, ILV, SEM>;
    v.kthreads = TPB;
    const Bufs bb = b;
    v.launch = [bb, tiles, gpc, chunks](cudaStream_t s) {
        const unsigned blocks = (unsigned)(bb.outer * tiles * chunks);
        flat_pass1<TPB, WPT, GU, MINB, H, ILV, SEM><<<blocks, TPB, 0, s>>>(
            bb.x, bb.ws, bb.out, bb.cnt, (int)bb.R, (int)bb.inner, chunks, tiles, gpc);
        cudaError_t e = launched();
        if (e != cudaSuccess || SEM) return e;
        flat_pass2<<<grid_cap(bb, bb.outer * bb.inner, 256, 16), 256, 0, s>>>(bb.ws, bb.out, bb.outer, bb.inner, chunks);
        return launched();
    };
    vs.push_back(v);
}

enum { CEIL_F4_GS, CEIL_F1_GS, CEIL_F4_RANGE };

void add_ceiling(std::vector<Variant> &vs, const Bufs &b, int kind, int per_sm)
{
    Variant v;
    const int blocks = b.sm * per_sm;
    char nm[200];
    snprintf(nm, sizeof nm, "ceiling %s blocks=%dxSM tpb=256",
             kind == CEIL_F4_GS ? "float4 grid-stride unroll=4"
             : kind == CEIL_F1_GS ? "float grid-stride unroll=8"
                                  : "float4 block-contiguous-ranges unroll=4",
             per_sm);
    v.name = nm;
    v.family = "ceiling";
    v.total_only = true;
    v.part_blocks = blocks;
    v.kfn = kind == CEIL_F4_GS ? (const void *)ceil_f4_gs<4>
          : kind == CEIL_F1_GS ? (const void *)ceil_f1_gs<8> : (const void *)ceil_f4_range<4>;
    v.kthreads = 256;
    if (kind != CEIL_F1_GS && (b.outer * b.R * b.inner) % 4 != 0) {
        v.failed = true;
        v.why = "numel % 4 != 0";
        vs.push_back(v);
        return;
    }
    const Bufs bb = b;
    v.launch = [bb, kind, blocks](cudaStream_t s) {
        const int64_t n = bb.outer * bb.R * bb.inner;
        if (kind == CEIL_F4_GS)
            ceil_f4_gs<4><<<blocks, 256, 0, s>>>(reinterpret_cast<const float4 *>(bb.x), n / 4, bb.part);
        else if (kind == CEIL_F1_GS)
            ceil_f1_gs<8><<<blocks, 256, 0, s>>>(bb.x, n, bb.part);
        else
            ceil_f4_range<4><<<blocks, 256, 0, s>>>(reinterpret_cast<const float4 *>(bb.x), n / 4, bb.part);
        return launched();
    };
    vs.push_back(v);
}

/* The variant list.  Parameters are template arguments, so each line is
 * one instantiation; see bench/README.md for the register counts. */
void build_variants(std::vector<Variant> &vs, const Bufs &b)
{
    add_ceiling(vs, b, CEIL_F4_GS, 4);
    add_ceiling(vs, b, CEIL_F4_GS, 8);
    add_ceiling(vs, b, CEIL_F1_GS, 4);
    add_ceiling(vs, b, CEIL_F4_RANGE, 4);

    add_v0(vs, b);
    add_single(vs, b);

    /* tp at V0's configuration: the generic kernel should match V0 */
    add_tp<256, 8, 4, 4, H_LDG, false, false>(vs, b, 8);
    /* waves: chunk counts */
    add_tp<256, 8, 4, 4, H_LDG, false, false>(vs, b, 4);
    add_tp<256, 8, 4, 4, H_LDG, false, false>(vs, b, 16);
    add_tp<256, 8, 4, 4, H_LDG, false, false>(vs, b, 32);
    /* blocks per SM 2 / 8 */
    add_tp<256, 8, 8, 2, H_LDG, false, false>(vs, b, 8);
    add_tp<256, 4, 4, 8, H_LDG, false, false>(vs, b, 8);
    add_tp<256, 2, 8, 8, H_LDG, false, false>(vs, b, 4);
    /* columns per thread, threads per block */
    add_tp<256, 4, 8, 4, H_LDG, false, false>(vs, b, 8);
    add_tp<256, 2, 16, 4, H_LDG, false, false>(vs, b, 4);
    add_tp<128, 8, 4, 8, H_LDG, false, false>(vs, b, 8);
    add_tp<512, 8, 4, 2, H_LDG, false, false>(vs, b, 8);
    add_tp<512, 4, 8, 2, H_LDG, false, false>(vs, b, 8);
    /* load hints */
    add_tp<256, 8, 4, 4, H_L2_256, false, false>(vs, b, 8);
    add_tp<256, 8, 4, 4, H_L1NA, false, false>(vs, b, 8);
    add_tp<256, 8, 4, 4, H_L1NA_L2_256, false, false>(vs, b, 8);
    /* row order: the chunk blocks of a slice read one window together */
    add_tp<256, 8, 4, 4, H_LDG, true, false>(vs, b, 8);
    add_tp<256, 8, 4, 4, H_LDG, true, false>(vs, b, 32);
    add_tp<256, 8, 4, 4, H_L2_256, true, false>(vs, b, 8);
    /* finish without pass 2 */
    add_tp<256, 8, 4, 4, H_LDG, false, true>(vs, b, 8);

    /* PyTorch-like */
    add_pt<4, H_LDG, false>(vs, b, 1);
    add_pt<8, H_LDG, false>(vs, b, 1);
    add_pt<4, H_L2_256, false>(vs, b, 1);
    add_pt<4, H_LDG, false>(vs, b, 4);
    add_pt<4, H_LDG, true>(vs, b, 4);

    /* aligned float4 streaming */
    add_flat<256, 4, 2, 4, H_LDG, false, false>(vs, b, 4);
    add_flat<256, 4, 2, 4, H_LDG, false, false>(vs, b, 8);
    add_flat<256, 4, 2, 4, H_LDG, false, false>(vs, b, 16);
    add_flat<256, 4, 1, 4, H_LDG, false, false>(vs, b, 4);
    add_flat<256, 2, 4, 4, H_LDG, false, false>(vs, b, 4);
    add_flat<256, 4, 4, 2, H_LDG, false, false>(vs, b, 4);
    add_flat<512, 2, 2, 2, H_LDG, false, false>(vs, b, 4);
    add_flat<128, 4, 2, 8, H_LDG, false, false>(vs, b, 4);
    add_flat<256, 4, 2, 4, H_L2_256, false, false>(vs, b, 4);
    add_flat<256, 4, 2, 4, H_L1NA, false, false>(vs, b, 4);
    add_flat<256, 4, 2, 4, H_LDG, true, false>(vs, b, 4);
    add_flat<256, 4, 2, 4, H_LDG, true, false>(vs, b, 16);
    add_flat<256, 4, 2, 4, H_LDG, false, true>(vs, b, 4);
}

/* ------------------------------------------------------------------------
 * Verification. */

/* After an error the context may be dead (an illegal address is sticky);
 * then nothing more can run. */
bool context_alive(float *probe)
{
    (void)cudaGetLastError();
    if (cudaDeviceSynchronize() != cudaSuccess) return false;
    if (cudaMemset(probe, 0, sizeof(float)) != cudaSuccess) return false;
    return cudaDeviceSynchronize() == cudaSuccess;
}

struct Ref {
    std::vector<double> sum, abssum;
    double total = 0.0, abstotal = 0.0;
};

void compute_ref(const Bufs &b, double *d_ref, double *d_abs, Ref &ref)
{
    const int64_t n = b.outer * b.inner;
    reference<<<(unsigned)((n + 255) / 256), 256>>>(b.x, d_ref, d_abs, b.outer, b.R, b.inner);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    ref.sum.resize((size_t)n);
    ref.abssum.resize((size_t)n);
    CK(cudaMemcpy(ref.sum.data(), d_ref, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ref.abssum.data(), d_abs, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));
    ref.total = 0.0;
    ref.abstotal = 0.0;
    for (int64_t i = 0; i < n; i++) {
        ref.total += ref.sum[(size_t)i];
        ref.abstotal += ref.abssum[(size_t)i];
    }
}

/* Runs v once on poisoned outputs and partials and checks it.  exact: the
 * integer data set, where the output must equal the reference.  Returns
 * false (with v.why) on failure; *dead when the context was lost. */
bool verify(Variant &v, const Bufs &b, const Ref &ref, bool exact, cudaStream_t s, bool *dead)
{
    const int64_t n = b.outer * b.inner;
    const char *set = exact ? "integer data" : "U(-1,1) data";
    char msg[300];
    /* poison: NaN everywhere, so nothing left by another variant can pass */
    cudaError_t e = cudaMemsetAsync(b.out, 0xff, (size_t)n * sizeof(float), s);
    if (e == cudaSuccess) e = cudaMemsetAsync(b.cnt, 0, b.cnt_n * sizeof(int), s);
    if (e == cudaSuccess && b.ws_bytes) e = cudaMemsetAsync(b.ws, 0xff, b.ws_bytes, s);
    if (e == cudaSuccess) e = cudaMemsetAsync(b.part, 0xff, b.part_n * sizeof(double), s);
    if (e == cudaSuccess) e = v.launch(s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        snprintf(msg, sizeof msg, "launch/run (%s): %s", set, cudaGetErrorString(e));
        v.why = msg;
        *dead = !context_alive(b.out);
        return false;
    }
    if (v.total_only) {
        std::vector<double> part((size_t)v.part_blocks);
        e = cudaMemcpy(part.data(), b.part, part.size() * sizeof(double), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            v.why = std::string("copy back: ") + cudaGetErrorString(e);
            *dead = !context_alive(b.out);
            return false;
        }
        double t = 0.0;
        for (double d : part) t += d;
        const double diff = fabs(t - ref.total);
        const double tol = exact ? 0.0 : TOL_REL * ref.abstotal + TOL_ABS;
        if (!(diff <= tol)) {
            snprintf(msg, sizeof msg, "%s: total %.17g, reference %.17g", set, t, ref.total);
            v.why = msg;
            return false;
        }
        if (!exact) v.err_norm = ref.abstotal > 0 ? diff / ref.abstotal : diff;
        return true;
    }
    std::vector<float> out((size_t)n);
    e = cudaMemcpy(out.data(), b.out, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        v.why = std::string("copy back: ") + cudaGetErrorString(e);
        *dead = !context_alive(b.out);
        return false;
    }
    int64_t bad = 0, first = -1;
    double worst_norm = 0.0, worst_rel = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double r = ref.sum[(size_t)i], o = (double)out[(size_t)i];
        const double diff = fabs(o - r);
        const double tol = exact ? 0.0 : TOL_REL * ref.abssum[(size_t)i] + TOL_ABS;
        if (!(diff <= tol)) {
            if (first < 0) first = i;
            bad++;
            continue;
        }
        const double a = ref.abssum[(size_t)i];
        if (a > 0 && diff / a > worst_norm) worst_norm = diff / a;
        if (fabs(r) >= 1.0 && diff / fabs(r) > worst_rel) worst_rel = diff / fabs(r);
    }
    if (bad) {
        snprintf(msg, sizeof msg, "%s: %lld of %lld outputs wrong; first [%lld, %lld] = %.9g, reference %.9g",
                 set, (long long)bad, (long long)n, (long long)(first / b.inner), (long long)(first % b.inner),
                 (double)out[(size_t)first], ref.sum[(size_t)first]);
        v.why = msg;
        return false;
    }
    if (!exact) {
        v.err_norm = worst_norm;
        v.err_rel = worst_rel;
    }
    return true;
}

bool selected(const std::string &name, const std::vector<std::string> &only,
              const std::vector<std::string> &skip)
{
    for (const std::string &s : skip)
        if (name.find(s) != std::string::npos) return false;
    if (only.empty()) return true;
    for (const std::string &s : only)
        if (name.find(s) != std::string::npos) return true;
    return false;
}

double median_of(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + v[n / 2]);
}

/* CSV fields are our own names (no commas or quotes); the failure reason
 * may hold commas, so it is quoted with quotes doubled. */
std::string csv_quote(const std::string &s)
{
    std::string q = "\"";
    for (char ch : s) {
        if (ch == '"') q += '"';
        q += ch;
    }
    return q + "\"";
}

} /* namespace */

int main(int argc, char **argv)
{
    const char *csv = nullptr;
    int samples = 20;
    const int warmups = 3;
    bool verify_only = false;
    Bufs b;
    std::vector<std::string> only, skip;
    for (int i = 1; i < argc; i++) {
        long long so = 0, sr = 0, si = 0;
        char tail = 0;
        if (!strncmp(argv[i], "--samples=", 10)) samples = atoi(argv[i] + 10);
        else if (!strncmp(argv[i], "--only=", 7)) only.push_back(argv[i] + 7);
        else if (!strncmp(argv[i], "--skip=", 7)) skip.push_back(argv[i] + 7);
        else if (!strcmp(argv[i], "--verify-only")) verify_only = true;
        else if (!strncmp(argv[i], "--shape=", 8) &&
                 sscanf(argv[i] + 8, "%lld,%lld,%lld%c", &so, &sr, &si, &tail) == 3 && so > 0 && sr > 0 &&
                 si > 0 && sr < (1ll << 30) && si < (1ll << 30) && so * sr * si < (1ll << 40)) {
            b.outer = so;
            b.R = sr;
            b.inner = si;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [CSV] [--samples=N] [--only=SUBSTR]... [--skip=SUBSTR]... "
                            "[--shape=OUTER,R,INNER] [--verify-only]\n", argv[0]);
            return 2;
        } else csv = argv[i];
    }
    if (samples < 1 || samples > 1000) {
        fprintf(stderr, "reduce_mid: --samples must be 1..1000\n");
        return 2;
    }

    int dev = 0;
    CK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    b.sm = prop.multiProcessorCount;
    const int64_t n = b.outer * b.R * b.inner;
    const double in_bytes = (double)n * sizeof(float);
    printf("device: %s, %d SMs, L2 %d MiB, cc %d.%d\n", prop.name, prop.multiProcessorCount,
           prop.l2CacheSize >> 20, prop.major, prop.minor);
    printf("shape: x [%lld, %lld, %lld] float32 (%.3f GB), sum over dim 1\n", (long long)b.outer,
           (long long)b.R, (long long)b.inner, in_bytes * 1e-9);
    {
        const KbvPlan pl = kbv_plan(b);
        printf("kbv plan: cpt %d, tiles %d, chunks %d, rows %d, %lld pass-1 blocks\n", pl.cpt, pl.tiles,
               pl.chunks, pl.rows, (long long)(b.outer * pl.tiles * pl.chunks));
    }

    /* The variants are built with a provisional Bufs only to learn their
     * workspace needs; the real pointers are filled in below and the list
     * rebuilt. */
    std::vector<Variant> vs;
    build_variants(vs, b);
    size_t ws_need = 0, cnt_need = 0, part_need = 1;
    for (const Variant &v : vs) {
        ws_need = std::max(ws_need, v.ws_need);
        cnt_need = std::max(cnt_need, v.cnt_need);
        part_need = std::max(part_need, (size_t)v.part_blocks);
    }
    size_t flush_bytes = (size_t)2 * (size_t)prop.l2CacheSize;
    if (flush_bytes < ((size_t)256 << 20)) flush_bytes = (size_t)256 << 20;

    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    const size_t need = (size_t)in_bytes + ws_need + flush_bytes + (size_t)b.outer * b.inner * (4 + 16) + (64u << 20);
    if (need > free_b) {
        fprintf(stderr, "reduce_mid: needs %.2f GB of device memory, %.2f GB free\n", need * 1e-9, free_b * 1e-9);
        return 1;
    }
    void *flush = nullptr;
    double *d_ref = nullptr, *d_abs = nullptr;
    CK(cudaMalloc(&b.x, (size_t)in_bytes));
    CK(cudaMalloc(&b.out, (size_t)b.outer * b.inner * sizeof(float)));
    b.ws_bytes = ws_need;
    if (ws_need) CK(cudaMalloc(&b.ws, ws_need));
    b.cnt_n = cnt_need > 0 ? cnt_need : 1;
    CK(cudaMalloc(&b.cnt, b.cnt_n * sizeof(int)));
    CK(cudaMemset(b.cnt, 0, b.cnt_n * sizeof(int)));
    b.part_n = part_need;
    CK(cudaMalloc(&b.part, b.part_n * sizeof(double)));
    CK(cudaMalloc(&flush, flush_bytes));
    CK(cudaMalloc(&d_ref, (size_t)b.outer * b.inner * sizeof(double)));
    CK(cudaMalloc(&d_abs, (size_t)b.outer * b.inner * sizeof(double)));
    if (((uintptr_t)b.x & 15) != 0 || ((uintptr_t)b.ws & 15) != 0) {
        fprintf(stderr, "reduce_mid: allocation not 16-byte aligned\n");
        return 1;
    }
    vs.clear();
    build_variants(vs, b);
    {
        std::vector<Variant> kept;
        for (Variant &v : vs)
            if (selected(v.name, only, skip)) kept.push_back(std::move(v));
        vs.swap(kept);
    }
    if (vs.empty()) {
        fprintf(stderr, "reduce_mid: no variant selected\n");
        return 2;
    }
    printf("%zu variants; workspace %.1f MB; flush %zu MiB; %d warm-up + %d timed rounds\n", vs.size(),
           ws_need * 1e-6, flush_bytes >> 20, warmups, samples);

    for (Variant &v : vs) {
        if (!v.kfn) continue;
        cudaFuncAttributes a;
        if (cudaFuncGetAttributes(&a, v.kfn) == cudaSuccess) {
            v.regs = a.numRegs;
            v.local = a.localSizeBytes;
        }
        int occ = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, v.kfn, v.kthreads, 0) == cudaSuccess) v.occ = occ;
        (void)cudaGetLastError();
    }

    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const unsigned fill_blocks = (unsigned)b.sm * 8;
    bool dead = false;
    const char *lost_after = nullptr;

    /* pass 1 of verification: integer data, exact */
    fill<<<fill_blocks, 256>>>(b.x, n, 12345, 1);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    {
        Ref ref;
        compute_ref(b, d_ref, d_abs, ref);
        for (Variant &v : vs) {
            if (v.failed || dead) continue;
            if (!verify(v, b, ref, true, s, &dead)) {
                v.failed = true;
                printf("verify  FAILED  %s: %s\n", v.name.c_str(), v.why.c_str());
                if (dead) lost_after = v.name.c_str();
            }
            fflush(stdout);
        }
    }
    /* pass 2: U(-1,1) data against float64 with the TOL bound */
    if (!dead) {
        fill<<<fill_blocks, 256>>>(b.x, n, 2024, 0);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        Ref ref;
        compute_ref(b, d_ref, d_abs, ref);
        for (Variant &v : vs) {
            if (v.failed || dead) continue;
            if (!verify(v, b, ref, false, s, &dead)) {
                v.failed = true;
                printf("verify  FAILED  %s: %s\n", v.name.c_str(), v.why.c_str());
                if (dead) lost_after = v.name.c_str();
            } else {
                printf("verify  ok      %s  (err/sum|x| %.2e)\n", v.name.c_str(), v.err_norm);
            }
            fflush(stdout);
        }
    }
    if (dead) {
        printf("CUDA context lost after %s; the remaining variants are not run "
               "(rerun with --skip=<that name's substring>)\n", lost_after ? lost_after : "?");
        for (Variant &v : vs)
            if (!v.failed && v.why.empty()) {
                v.failed = true;
                v.why = "not run: context lost";
            }
    }

    if (verify_only) {
        int nf = 0;
        for (const Variant &v : vs) nf += v.failed;
        printf("verify-only: %d passed, %d failed\n", (int)vs.size() - nf, nf);
        return nf || dead ? 1 : 0;
    }

    /* timing, interleaved: round r runs every variant once, starting at
     * variant r mod V */
    if (!dead && !verify_only) {
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        const int nv = (int)vs.size();
        for (int r = 0; r < warmups + samples && !dead; r++) {
            for (int k = 0; k < nv && !dead; k++) {
                Variant &v = vs[(size_t)((k + r) % nv)];
                if (v.failed) continue;
                /* the counters are zero after every complete launch;
                 * clearing them costs nothing outside the window */
                cudaError_t e = cudaMemsetAsync(b.cnt, 0, b.cnt_n * sizeof(int), s);
                if (e == cudaSuccess) e = cudaMemsetAsync(flush, (r * nv + k) & 0xff, flush_bytes, s);
                if (e == cudaSuccess) e = cudaEventRecord(e0, s);
                if (e == cudaSuccess) e = v.launch(s);
                if (e == cudaSuccess) e = cudaEventRecord(e1, s);
                if (e == cudaSuccess) e = cudaEventSynchronize(e1);
                float ms = 0.0f;
                if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, e0, e1);
                if (e != cudaSuccess) {
                    v.failed = true;
                    v.why = std::string("timing run: ") + cudaGetErrorString(e);
                    printf("time    FAILED  %s: %s\n", v.name.c_str(), v.why.c_str());
                    dead = !context_alive(b.out);
                    continue;
                }
                if (r >= warmups) v.ms.push_back(ms);
            }
        }
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }
    for (Variant &v : vs) {
        if (v.failed || v.ms.empty()) {
            if (!v.failed) {
                v.failed = true;
                v.why = "no samples";
            }
            continue;
        }
        v.med = median_of(v.ms);
        v.mn = *std::min_element(v.ms.begin(), v.ms.end());
        v.mx = *std::max_element(v.ms.begin(), v.ms.end());
    }

    double v0 = 0.0;
    for (const Variant &v : vs)
        if (v.family == "V0" && !v.failed) v0 = v.med;

    std::vector<Variant *> order;
    for (Variant &v : vs) order.push_back(&v);
    std::stable_sort(order.begin(), order.end(), [](const Variant *a, const Variant *c) {
        if (a->failed != c->failed) return !a->failed;
        return !a->failed && a->med < c->med;
    });

    printf("\n%9s %9s %9s %8s %8s %5s %6s %4s %9s  %s\n", "median_ms", "min_ms", "max_ms", "GB/s", "ms/V0",
           "regs", "spillB", "occ", "err/sum|x|", "variant");
    for (const Variant *v : order) {
        if (v->failed) {
            printf("%9s %9s %9s %8s %8s %5d %6zu %4d %9s  %s  [%s]\n", "FAILED", "-", "-", "-", "-", v->regs,
                   v->local, v->occ, "-", v->name.c_str(), v->why.c_str());
            continue;
        }
        printf("%9.4f %9.4f %9.4f %8.1f %8.3f %5d %6zu %4d %9.2e  %s\n", v->med, v->mn, v->mx,
               in_bytes / (v->med * 1e-3) * 1e-9, v0 > 0 ? v->med / v0 : 0.0, v->regs, v->local, v->occ,
               v->err_norm, v->name.c_str());
    }
    const Variant *best = nullptr;
    for (const Variant *v : order)
        if (!v->failed && v->family != "ceiling") {
            best = v;
            break;
        }
    if (best)
        printf("BEST %s %.4f %.1f %.3f\n", best->name.c_str(), best->med, in_bytes / (best->med * 1e-3) * 1e-9,
               v0 > 0 ? best->med / v0 : 0.0);
    else
        printf("BEST none (every variant failed)\n");

    int rc = 0;
    if (csv) {
        FILE *f = fopen(csv, "w");
        if (!f) {
            fprintf(stderr, "reduce_mid: cannot write %s\n", csv);
            rc = 1;
        } else {
            fprintf(f, "rank,family,variant,status,median_ms,min_ms,max_ms,gbps,ms_ratio_to_v0,regs,spill_bytes,"
                       "blocks_per_sm,err_over_abssum,max_rel_err,samples,note\n");
            int rank = 0;
            for (const Variant *v : order) {
                rank++;
                if (v->failed)
                    fprintf(f, "%d,%s,%s,FAILED,,,,,,%d,%zu,%d,,,0,%s\n", rank, v->family.c_str(), v->name.c_str(),
                            v->regs, v->local, v->occ, csv_quote(v->why).c_str());
                else
                    fprintf(f, "%d,%s,%s,ok,%.5f,%.5f,%.5f,%.2f,%.4f,%d,%zu,%d,%.3e,%.3e,%zu,\n", rank,
                            v->family.c_str(), v->name.c_str(), v->med, v->mn, v->mx,
                            in_bytes / (v->med * 1e-3) * 1e-9, v0 > 0 ? v->med / v0 : 0.0, v->regs, v->local,
                            v->occ, v->err_norm, v->err_rel, v->ms.size());
            }
            if (best)
                fprintf(f, "BEST,%s,%s,ok,%.5f,,,%.2f,%.4f,,,,,,,\n", best->family.c_str(), best->name.c_str(),
                        best->med, in_bytes / (best->med * 1e-3) * 1e-9, v0 > 0 ? best->med / v0 : 0.0);
            if (fclose(f) != 0) {
                fprintf(stderr, "reduce_mid: cannot write %s\n", csv);
                rc = 1;
            }
        }
    }
    cudaStreamDestroy(s);
    cudaFree(flush);
    cudaFree(d_ref);
    cudaFree(d_abs);
    cudaFree(b.part);
    cudaFree(b.cnt);
    if (b.ws) cudaFree(b.ws);
    cudaFree(b.out);
    cudaFree(b.x);
    return dead ? 1 : rc;
}

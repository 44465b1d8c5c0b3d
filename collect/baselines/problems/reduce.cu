/* reduce.cu - sum, mean, max, min, argmax and argmin over dim 1 of a
 * tensor seen as [outer, R, inner].
 *
 * Three kernels, chosen by op and shape in run().
 *
 * Every op over R rows, R a multiple of 4, of an fp32 x 16-byte aligned,
 * reads with aligned float4 loads (the "flat" two-pass reduction).  A row
 * of an odd extent is not 16-byte aligned, but a group of 4 rows is (4 *
 * inner floats), so every group starts on a 16-byte boundary when x does.
 * Seen flat, a group is `inner` float4 windows, and window q of every
 * group holds the same four (row in group, column) pairs: flat positions
 * 4q .. 4q+3 = j * inner + col.  A thread that owns window q in every
 * group of its chunk therefore keeps four consistent accumulators, reads
 * whole aligned float4s (512 bytes a warp instruction, no sector shared
 * between warps) and needs no shuffles; pass 2 folds, for each column,
 * the 4 * chunks partials that belong to it.  On the H200, over [128, 4096, 4095], it reads at 4.45
 * TB/s where the kernel below reached 3.5 and PyTorch's sum 4.1
 * (bench/reduce_mid.cu: 1.93 ms against 2.43, the float4 read ceiling
 * 1.86); its configuration is that benchmark's fastest.  Max, min, argmax
 * and argmin took the kernel below until the whole-suite H100 run
 * 20261207T120001Z-b94a4b07 measured it at 1.05-1.12 of PyTorch's time
 * there (L1_049, L1_051, L1_053), while sum and mean, flat, stayed under
 * 1.0; they read flat too now.  A component of a window holds one row
 * class (row = 4 g + j, j fixed) of one column, so its rows arrive in
 * increasing order within a thread but interleave with the other three
 * classes of the same column: argmax and argmin keep each component's row
 * (pidx, int, beside pval) and pass 2 breaks equal values by the lower
 * row (fold_arg), so that the first index still wins.
 *
 * The streaming two-pass reduction (R >= 64, inner >= 128) reads memory
 * the way a copy does.  Pass 1 splits the R rows of each outer slice into
 * `chunks` contiguous chunks and, when inner is wider than 16 * 256
 * columns, the columns into tiles.  A block of 256 threads walks the rows
 * of its chunk one after another; thread t owns the columns t, t + 256,
 * t + 512, ... of its tile (CPT of them, one register accumulator each), so
 * every load instruction of a warp reads 128 consecutive bytes of one row
 * and the block streams one contiguous 16 KB row segment per step, with
 * CPT (or several rows' worth of) loads in flight per thread.  Walking
 * whole rows matters: the column-walking pattern of the single-pass kernel
 * (each warp 128 bytes from each of many rows far apart) does not reach the
 * device's copy speed.  The chunk count is chosen from the SM count so that
 * there are about four waves of blocks (never fewer than two).  Each chunk
 * leaves its partial result (and the row of its extreme) in the baseline's
 * workspace as [outer, chunks, inner]; pass 2 combines the partials of an
 * output in chunk order, one thread per output.  With a single chunk pass 1
 * writes the output itself.
 *
 * The single-pass kernel serves short or narrow shapes: a block of 32 x 8
 * threads owns 32 consecutive inner columns of one outer slice, x picks the
 * column (a warp reads 32 consecutive floats of a row) and y splits R into
 * 8 contiguous chunks, combined through shared memory.
 *
 * Both keep PyTorch's semantics for argmax/argmin and NaN: within a chunk a
 * value replaces the extreme only when strictly better (or NaN, while the
 * extreme is not yet NaN), and chunks are combined in increasing order with
 * the same comparisons, so the first index of the extreme wins and the
 * first NaN wins.  The loads are ordinary cached loads: a row of an odd
 * inner extent is not 128-byte aligned, so the sector at the seam of two
 * warps' columns is read by both, and an evict-first load would send the
 * second reader back to DRAM.
 *
 * The bf16 baseline (the BF16 setting) runs the same single-pass and
 * streaming two-pass kernels on bfloat16 input (2-byte loads, float
 * accumulators, float partials) and writes bfloat16 values (argmax and
 * argmin int64), as PyTorch's bfloat16 reductions accumulate in float; the
 * flat kernel is float4-specific and stays fp32's.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "base_impl.h"

namespace {

/* single-pass kernel */
const int COLS = 32;    /* inner columns per block (blockDim.x) */
const int SPLIT = 8;    /* chunks of R per column (blockDim.y) */
const int UNROLL = 8;   /* loads in flight per thread */

/* two-pass reduction */
const int TPB = 256;              /* pass-1 threads per block */
const int MAX_CPT = 8;            /* columns per pass-1 thread */
const int MIN_BLOCKS_PER_SM = 4;  /* pass 1 at <= 64 registers per thread */
const int WAVES = 4;              /* pass-1 waves aimed at */
const int MIN_CHUNK_ROWS = 32;    /* shorter chunks cost more in partials than they gain */
const int64_t MIN_R = 64;         /* below: single pass */
const int64_t MIN_INNER = 128;    /* below: most of a 256-thread block would idle */
const int P2_THREADS = 256;

/* flat two-pass reduction (sum and mean; bench/reduce_mid.cu's best) */
const int FLAT_TPB = 512;         /* pass-1 threads per block */
const int FLAT_WPT = 2;           /* float4 windows per thread */
const int FLAT_GU = 2;            /* groups of 4 rows per step: GU * WPT loads in flight */
const int FLAT_MINB = 2;          /* pass-1 blocks per SM (at most 64 registers) */
const int FLAT_WAVES = 8;         /* pass-1 waves aimed at */

__host__ __device__ constexpr bool is_arg(int op)
{
    return op == OP_ARGMAX_DIM || op == OP_ARGMIN_DIM;
}

/* Rows per pass-1 step: as many loads in flight per thread as fit in 64
 * registers without spilling (ptxas -v): 32 for sum..min with up to 8
 * columns, 16 for argmax/argmin (whose row indices also take registers)
 * and for 16 columns (two rows of 16 spill); at most 8 rows. */
__host__ __device__ constexpr int rows_per_step(int op, int cpt)
{
    return cpt >= 16 ? 1 : (is_arg(op) ? 16 : 32) / cpt > 8 ? 8 : (is_arg(op) ? 16 : 32) / cpt;
}

template <int OP>
__device__ __forceinline__ float init_value()
{
    return (OP == OP_MAX_DIM || OP == OP_ARGMAX_DIM) ? -INFINITY
         : (OP == OP_MIN_DIM || OP == OP_ARGMIN_DIM) ? INFINITY : 0.0f;
}

/* An element of the input as a float. */
__device__ __forceinline__ float ldf(const float *p) { return __ldg(p); }
__device__ __forceinline__ float ldf(const __nv_bfloat16 *p) { return __bfloat162float(__ldg(p)); }

/* Folds v (found at row r, or the row of a partial's extreme) into acc. */
template <int OP, class I>
__device__ __forceinline__ void step(float v, I r, float &acc, I &best)
{
    if (OP == OP_SUM_DIM || OP == OP_MEAN_DIM) acc += v;
    else if (OP == OP_MAX_DIM) acc = (v > acc || isnan(v)) ? v : acc;
    else if (OP == OP_MIN_DIM) acc = (v < acc || isnan(v)) ? v : acc;
    else if (OP == OP_ARGMAX_DIM) {
        if ((v > acc || isnan(v)) && !isnan(acc)) { acc = v; best = r; }
    } else {
        if ((v < acc || isnan(v)) && !isnan(acc)) { acc = v; best = r; }
    }
}

/* The final value of one output element t (TO: the value outputs' type). */
__device__ __forceinline__ void store(float *o, int64_t t, float v) { o[t] = v; }
__device__ __forceinline__ void store(__nv_bfloat16 *o, int64_t t, float v) { o[t] = __float2bfloat16_rn(v); }

template <int OP, class TO>
__device__ __forceinline__ void put(void *out, int64_t t, float acc, int64_t best, int64_t R)
{
    if (is_arg(OP)) ((int64_t *)out)[t] = best;
    else if (OP == OP_MEAN_DIM) store((TO *)out, t, acc / (float)R);
    else store((TO *)out, t, acc);
}

/* Single pass.  grid (x: tiles of COLS inner columns, y: outer slices,
 * grid-strided). */
template <int OP, class TI, class TO>
__global__ void __launch_bounds__(COLS * SPLIT) reduce_single(const TI *__restrict__ x,
                                                              void *__restrict__ out,
                                                              int64_t outer, int64_t R,
                                                              int64_t inner)
{
    __shared__ float s_acc[SPLIT][COLS];
    __shared__ int64_t s_best[SPLIT][COLS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t i = (int64_t)blockIdx.x * COLS + tx;
    const bool col_ok = i < inner;
    /* chunk ty of R: rows [r0, r1) */
    const int64_t chunk = (R + SPLIT - 1) / SPLIT;
    int64_t r0 = (int64_t)ty * chunk, r1 = r0 + chunk;
    if (r0 > R) r0 = R;
    if (r1 > R) r1 = R;
    for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
        float acc = init_value<OP>();
        int64_t best = r0;
        if (col_ok) {
            const TI *p = x + (o * R + r0) * inner + i;
            int64_t r = r0;
            for (; r + UNROLL <= r1; r += UNROLL) {
                float v[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; u++) v[u] = ldf(p + u * inner);
                p += UNROLL * inner;
#pragma unroll
                for (int u = 0; u < UNROLL; u++) step<OP>(v[u], r + u, acc, best);
            }
            for (; r < r1; r++, p += inner) step<OP>(ldf(p), r, acc, best);
        }
        s_acc[ty][tx] = acc;
        s_best[ty][tx] = best;
        __syncthreads();
        if (ty == 0 && col_ok) {
            /* chunk 0 is this thread's own; the others follow in order */
            for (int c = 1; c < SPLIT; c++) step<OP>(s_acc[c][tx], s_best[c][tx], acc, best);
            put<OP, TO>(out, o * inner + i, acc, best, R);
        }
        __syncthreads();   /* the shared partials are rewritten for the next slice */
    }
}

/* Pass 1.  Block b covers tile b % tiles of chunk (b / tiles) % chunks of
 * outer slice b / (tiles * chunks): the rows [c * rows, (c + 1) * rows) of
 * that chunk (fewer in the last) and CPT * TPB columns of the tile.  Row
 * indices fit in int (R <= INT32_MAX - 64, checked by the plan), which
 * keeps the argmax/argmin registers down.  With one chunk the output is
 * written directly; otherwise the partials go to pval/pidx [outer, chunks,
 * inner] (pidx only for argmax/argmin). */
template <int OP, int CPT, int RU, class TI, class TO>
__global__ void __launch_bounds__(TPB, MIN_BLOCKS_PER_SM)
reduce_pass1(const TI *__restrict__ x, float *__restrict__ pval, int64_t *__restrict__ pidx,
             void *__restrict__ out, int R, int64_t inner, int chunks, int tiles, int rows)
{
    const int64_t bid = blockIdx.x;
    const int tile = (int)(bid % tiles);
    const int64_t oc = bid / tiles;            /* o * chunks + c */
    const int c = (int)(oc % chunks);
    const int64_t o = oc / chunks;
    const int64_t col = (int64_t)tile * (CPT * TPB) + threadIdx.x;
    /* this thread's columns col + k * TPB, k < nk, lie inside the row */
    const int64_t left = inner - col;
    const int nk = left <= 0 ? 0 : left >= (int64_t)CPT * TPB ? CPT : (int)((left + TPB - 1) / TPB);
    const int r0 = c * rows;
    const int r1 = (int64_t)r0 + rows < (int64_t)R ? r0 + rows : R;
    const float ini = init_value<OP>();
    float acc[CPT];
    int best[CPT];
#pragma unroll
    for (int k = 0; k < CPT; k++) { acc[k] = ini; best[k] = r0; }
    if (nk > 0) {
        const TI *p = x + (o * R + r0) * inner + col;
        int r = r0;
        for (; r + RU <= r1; r += RU) {
            float v[RU][CPT];
#pragma unroll
            for (int u = 0; u < RU; u++)
#pragma unroll
                for (int k = 0; k < CPT; k++) v[u][k] = k < nk ? ldf(p + u * inner + k * TPB) : ini;
            p += RU * inner;
#pragma unroll
            for (int u = 0; u < RU; u++)
#pragma unroll
                for (int k = 0; k < CPT; k++) step<OP>(v[u][k], r + u, acc[k], best[k]);
        }
        for (; r < r1; r++, p += inner) {
            float v[CPT];
#pragma unroll
            for (int k = 0; k < CPT; k++) v[k] = k < nk ? ldf(p + k * TPB) : ini;
#pragma unroll
            for (int k = 0; k < CPT; k++) step<OP>(v[k], r, acc[k], best[k]);
        }
    }
    if (chunks == 1) {
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (k < nk) put<OP, TO>(out, o * inner + col + k * TPB, acc[k], (int64_t)best[k], (int64_t)R);
    } else {
        const int64_t base = oc * inner + col;
#pragma unroll
        for (int k = 0; k < CPT; k++) {
            if (k < nk) {
                pval[base + k * TPB] = acc[k];
                if (is_arg(OP)) pidx[base + k * TPB] = best[k];
            }
        }
    }
}

/* Pass 2: output t = (o, i) folds the partials of chunks 0, 1, ... of
 * column i of slice o, in that order (grid-strided). */
template <int OP, class TO>
__global__ void __launch_bounds__(P2_THREADS) reduce_pass2(const float *__restrict__ pval,
                                                           const int64_t *__restrict__ pidx,
                                                           void *__restrict__ out, int64_t outer,
                                                           int64_t R, int64_t inner, int chunks)
{
    const int64_t n = outer * inner;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < n;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = t / inner, i = t - o * inner;
        const int64_t base = o * chunks * inner + i;
        float acc = pval[base];
        int64_t best = is_arg(OP) ? pidx[base] : 0;
#pragma unroll 4
        for (int c = 1; c < chunks; c++) {
            const int64_t at = base + (int64_t)c * inner;
            step<OP>(pval[at], is_arg(OP) ? pidx[at] : (int64_t)0, acc, best);
        }
        put<OP, TO>(out, t, acc, best, R);
    }
}

/* Folds one flat partial (v, found at row r) into an argmax or argmin
 * output.  The partials of one output arrive in chunk order, but within a
 * chunk the four row classes of a group interleave their rows, so an
 * equal value (or a second NaN) is taken when its row is the earlier one:
 * the first index of the extreme wins, and the first NaN, as in PyTorch. */
template <int OP>
__device__ __forceinline__ void fold_arg(float v, int r, float &acc, int &best)
{
    const bool vn = isnan(v), an = isnan(acc);
    bool take;
    if (vn || an) take = vn && (!an || r < best);
    else take = (OP == OP_ARGMAX_DIM ? v > acc : v < acc) || (v == acc && r < best);
    if (take) { acc = v; best = r; }
}

/* Folds the four values of window v, taken from the group whose first row
 * is g4, into the window's accumulators: component k lies in row g4 +
 * jr[k] of the group (jr is only read for argmax and argmin). */
template <int OP>
__device__ __forceinline__ void fold4(const float4 &v, int g4, const int (&jr)[4], float4 &acc, int (&best)[4])
{
    step<OP>(v.x, g4 + jr[0], acc.x, best[0]);
    step<OP>(v.y, g4 + jr[1], acc.y, best[1]);
    step<OP>(v.z, g4 + jr[2], acc.z, best[2]);
    step<OP>(v.w, g4 + jr[3], acc.w, best[3]);
}

/* Flat pass 1 (see the header comment).  Block b covers tile b % tiles of
 * chunk (b / tiles) % chunks of outer slice b / (tiles * chunks): the
 * groups [c * gpc, (c + 1) * gpc) of 4 rows (fewer in the last chunk) and
 * FLAT_TPB * FLAT_WPT windows of the tile; thread t owns windows q0 + j *
 * FLAT_TPB.  It leaves its window results in pval [outer, chunks, 4 *
 * inner] in flat order, and for argmax and argmin the row of each in pidx,
 * laid out the same.  A thread visits its groups in increasing order and
 * replaces an extreme only when strictly better (step), so each
 * component keeps the first row of its extreme among its own rows. */
template <int OP>
__global__ void __launch_bounds__(FLAT_TPB, FLAT_MINB)
flat_pass1(const float *__restrict__ x, float *__restrict__ pval, int *__restrict__ pidx, int R, int inner,
           int chunks, int tiles, int gpc)
{
    const int64_t bid = blockIdx.x;
    const int tile = (int)(bid % tiles);
    const int64_t oc = bid / tiles;            /* o * chunks + c */
    const int c = (int)(oc % chunks);
    const int64_t o = oc / chunks;
    const int groups = R / 4;
    const float4 *xs = reinterpret_cast<const float4 *>(x) + o * groups * (int64_t)inner;
    const int q0 = tile * (FLAT_TPB * FLAT_WPT) + (int)threadIdx.x;
    const int left = inner - q0;
    const int nk = left <= 0 ? 0 : left >= FLAT_TPB * FLAT_WPT ? FLAT_WPT
                                                               : (left + FLAT_TPB - 1) / FLAT_TPB;
    if (nk == 0) return;
    const float ini = init_value<OP>();
    const float4 fill = make_float4(ini, ini, ini, ini);
    const int64_t g0 = (int64_t)c * gpc;
    const int64_t g1 = g0 + gpc < groups ? g0 + gpc : groups;
    float4 acc[FLAT_WPT];
    int best[FLAT_WPT][4];
    int jr[FLAT_WPT][4];   /* the row in its group of each component of each window */
#pragma unroll
    for (int j = 0; j < FLAT_WPT; j++) {
        acc[j] = fill;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            jr[j][k] = is_arg(OP) ? (4 * (q0 + j * FLAT_TPB) + k) / inner : 0;
            best[j][k] = 4 * (int)g0 + jr[j][k];
        }
    }
    const float4 *p = xs + g0 * inner + q0;
    int64_t g = g0;
    for (; g + FLAT_GU <= g1; g += FLAT_GU, p += FLAT_GU * (int64_t)inner) {
        float4 v[FLAT_GU][FLAT_WPT];
#pragma unroll
        for (int u = 0; u < FLAT_GU; u++)
#pragma unroll
            for (int j = 0; j < FLAT_WPT; j++)
                v[u][j] = j < nk ? __ldg(p + (int64_t)u * inner + j * FLAT_TPB) : fill;
#pragma unroll
        for (int u = 0; u < FLAT_GU; u++)
#pragma unroll
            for (int j = 0; j < FLAT_WPT; j++) fold4<OP>(v[u][j], 4 * (int)(g + u), jr[j], acc[j], best[j]);
    }
    for (; g < g1; g++, p += inner)
#pragma unroll
        for (int j = 0; j < FLAT_WPT; j++) {
            const float4 v = j < nk ? __ldg(p + j * FLAT_TPB) : fill;
            fold4<OP>(v, 4 * (int)g, jr[j], acc[j], best[j]);
        }
    float4 *pv = reinterpret_cast<float4 *>(pval) + oc * inner;
#pragma unroll
    for (int j = 0; j < FLAT_WPT; j++)
        if (j < nk) {
            pv[q0 + j * FLAT_TPB] = acc[j];
            if (is_arg(OP)) {
                int4 *pi = reinterpret_cast<int4 *>(pidx) + oc * inner;
                pi[q0 + j * FLAT_TPB] = make_int4(best[j][0], best[j][1], best[j][2], best[j][3]);
            }
        }
}

/* Flat pass 2: output t = (o, col) folds the partials at flat positions
 * j * inner + col (j = 0..3) of chunks 0, 1, ... of slice o, in that
 * order (grid-strided); a mean divides by R, argmax and argmin break ties
 * by row (fold_arg). */
template <int OP>
__global__ void __launch_bounds__(P2_THREADS) flat_pass2(const float *__restrict__ pval,
                                                         const int *__restrict__ pidx,
                                                         void *__restrict__ out, int64_t outer,
                                                         int64_t R, int64_t inner, int chunks)
{
    const int64_t n = outer * inner;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < n;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = t / inner, col = t - o * inner;
        const int64_t base = o * chunks * 4 * inner + col;
        float acc = init_value<OP>();
        int best = INT32_MAX;
        for (int c = 0; c < chunks; c++)
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int64_t at = base + ((int64_t)c * 4 + j) * inner;
                if (is_arg(OP)) fold_arg<OP>(pval[at], pidx[at], acc, best);
                else step<OP>(pval[at], 0, acc, best);
            }
        put<OP, float>(out, t, acc, (int64_t)best, R);
    }
}

/* How a shape is reduced. */
struct plan {
    int flat;         /* 1: the flat float4 reduction; tiles, chunks, gpc, idx_off, ws apply */
    int gpc;          /* flat: groups of 4 rows per chunk */
    int two;          /* 1: two-pass; 0: single pass */
    int cpt;          /* pass-1 columns per thread: 1, 2, 4, 8 or 16 */
    int tiles;        /* column tiles per row */
    int chunks;       /* chunks of R */
    int rows;         /* rows per chunk (the last may have fewer) */
    size_t idx_off;   /* byte offset of the indices in the workspace */
    size_t ws;        /* workspace bytes (streaming: 0 with one chunk) */
};

/* The workspace of n partials: their float values, then (argmax and
 * argmin) their rows, idx_size bytes each, from a 256-byte boundary. */
void plan_ws(plan *p, int op, size_t n, size_t idx_size)
{
    p->idx_off = (n * sizeof(float) + 255) / 256 * 256;
    p->ws = is_arg(op) ? p->idx_off + n * idx_size : n * sizeof(float);
}

/* The flat plan, when R is a multiple of 4 and the indices fit in int:
 * about FLAT_WAVES waves of FLAT_MINB resident blocks, chunks of whole
 * groups.  Returns 1 with *p filled, else 0. */
int make_flat(const base_ctx *b, int op, int64_t outer, int64_t R, int64_t inner, plan *p)
{
    if (R % 4 != 0 || inner > INT32_MAX / 4) return 0;
    const int64_t win = (int64_t)FLAT_TPB * FLAT_WPT;
    const int64_t tiles = (inner + win - 1) / win, slices = outer * tiles, groups = R / 4;
    const int64_t target = (int64_t)(b->sm_count > 0 ? b->sm_count : 132) * FLAT_MINB * FLAT_WAVES;
    int64_t chunks = slices >= target ? 1 : target / slices;
    const int64_t most = groups * 4 / MIN_CHUNK_ROWS;
    if (chunks > most) chunks = most;
    if (chunks < 1) chunks = 1;
    const int64_t gpc = (groups + chunks - 1) / chunks;
    chunks = (groups + gpc - 1) / gpc;   /* no empty chunk */
    if (slices * chunks > INT32_MAX) return 0;
    p->flat = 1;
    p->two = 1;
    p->tiles = (int)tiles;
    p->chunks = (int)chunks;
    p->gpc = (int)gpc;
    plan_ws(p, op, (size_t)outer * (size_t)chunks * 4 * (size_t)inner, sizeof(int));
    return 1;
}

/* The plan of a shape; the flat reduction only for x 16-byte aligned. */
plan make_plan(const base_ctx *b, int op, int64_t outer, int64_t R, int64_t inner,
               const void *x, int bf16 = 0)
{
    plan p = { 0, 0, 0, 1, 1, 1, 0, 0, 0 };
    if (R < MIN_R || inner < MIN_INNER || R > (int64_t)INT32_MAX - 64) return p;
    if (!bf16 && ((uintptr_t)x & 15) == 0 && make_flat(b, op, outer, R, inner, &p)) return p;
    const int64_t tile_max = (int64_t)MAX_CPT * TPB;
    const int64_t tiles = (inner + tile_max - 1) / tile_max;
    const int64_t per_tile = (inner + tiles - 1) / tiles;
    int cpt = 1;
    while ((int64_t)cpt * TPB < per_tile) cpt *= 2;
    const int64_t slices = outer * tiles;
    if (tiles > INT32_MAX || slices > INT32_MAX) return p;
    /* about WAVES waves of MIN_BLOCKS_PER_SM resident blocks; with one
     * chunk the slices alone already give at least half of that */
    const int64_t target = (int64_t)(b->sm_count > 0 ? b->sm_count : 132) * MIN_BLOCKS_PER_SM * WAVES;
    int64_t chunks = slices >= target ? 1 : target / slices;
    const int64_t most = R / MIN_CHUNK_ROWS;
    if (chunks > most) chunks = most;
    if (chunks < 1) chunks = 1;
    const int64_t rows = (R + chunks - 1) / chunks;
    chunks = (R + rows - 1) / rows;   /* no empty chunk */
    if (slices * chunks > INT32_MAX) return p;
    p.two = 1;
    p.cpt = cpt;
    p.tiles = (int)tiles;
    p.chunks = (int)chunks;
    p.rows = (int)rows;
    if (chunks > 1) {
        const size_t n = (size_t)outer * (size_t)chunks * (size_t)inner;
        plan_ws(&p, op, n, sizeof(int64_t));
    }
    return p;
}

template <int OP, int CPT, class TI, class TO>
void launch_pass1(const plan &pl, int64_t outer, const TI *x, float *pval, int64_t *pidx,
                  void *out, int64_t R, int64_t inner, cudaStream_t s)
{
    constexpr int RU = rows_per_step(OP, CPT);
    const unsigned blocks = (unsigned)(outer * pl.tiles * pl.chunks);
    reduce_pass1<OP, CPT, RU, TI, TO><<<blocks, TPB, 0, s>>>(
        x, pval, pidx, out, (int)R, inner, pl.chunks, pl.tiles, pl.rows);
}

/* The flat reduction, fp32 only (make_plan gives bf16 none). */
template <int OP>
void launch_flat(const base_ctx *b, const plan &pl, const float *x, void *out, int64_t outer, int64_t R,
                 int64_t inner, cudaStream_t s)
{
    float *pval = (float *)b->ws;
    int *pidx = is_arg(OP) ? (int *)((char *)b->ws + pl.idx_off) : NULL;
    const unsigned blocks = (unsigned)(outer * pl.tiles * pl.chunks);
    flat_pass1<OP><<<blocks, FLAT_TPB, 0, s>>>(x, pval, pidx, (int)R, (int)inner, pl.chunks, pl.tiles, pl.gpc);
    flat_pass2<OP><<<base_grid(b, outer * inner, P2_THREADS, 16), P2_THREADS, 0, s>>>(
        pval, pidx, out, outer, R, inner, pl.chunks);
}
template <int OP>
void launch_flat(const base_ctx *, const plan &, const __nv_bfloat16 *, void *, int64_t, int64_t, int64_t,
                 cudaStream_t)
{
}

template <int OP, class TI, class TO>
void launch(const base_ctx *b, const plan &pl, const TI *x, void *out, int64_t outer, int64_t R,
            int64_t inner, cudaStream_t s)
{
    if (!pl.two) {
        int64_t tiles = (inner + COLS - 1) / COLS;
        dim3 grid((unsigned)tiles, (unsigned)(outer < 65535 ? outer : 65535));
        dim3 block(COLS, SPLIT);
        reduce_single<OP, TI, TO><<<grid, block, 0, s>>>(x, out, outer, R, inner);
        return;
    }
    if (pl.flat) {
        launch_flat<OP>(b, pl, x, out, outer, R, inner, s);
        return;
    }
    float *pval = (float *)b->ws;
    int64_t *pidx = is_arg(OP) && pl.chunks > 1 ? (int64_t *)((char *)b->ws + pl.idx_off) : NULL;
    switch (pl.cpt) {
    case 1: launch_pass1<OP, 1, TI, TO>(pl, outer, x, pval, pidx, out, R, inner, s); break;
    case 2: launch_pass1<OP, 2, TI, TO>(pl, outer, x, pval, pidx, out, R, inner, s); break;
    case 4: launch_pass1<OP, 4, TI, TO>(pl, outer, x, pval, pidx, out, R, inner, s); break;
    case 8: launch_pass1<OP, 8, TI, TO>(pl, outer, x, pval, pidx, out, R, inner, s); break;
    default: launch_pass1<OP, 16, TI, TO>(pl, outer, x, pval, pidx, out, R, inner, s); break;
    }
    if (pl.chunks > 1) {
        unsigned blocks = base_grid(b, outer * inner, P2_THREADS, 16);
        reduce_pass2<OP, TO><<<blocks, P2_THREADS, 0, s>>>(pval, pidx, out, outer, R, inner, pl.chunks);
    }
}

/* The dims of x as [outer, R, inner]; 0 when the reduction is empty. */
int dims_of(const kbv_tensor *x, int64_t *outer, int64_t *R, int64_t *inner)
{
    *outer = x->shape[0];
    *R = x->shape[1];
    *inner = 0;
    if (*outer * *R == 0) return 0;
    *inner = kbv_numel(x) / (*outer * *R);
    return *inner != 0;
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    if (ex->inputs[0].ndim < 2)
        return err_set(e, KBV_EINPUT, "baseline %s: reduction needs 2+ dimensions", b->p->id);
    int64_t outer = 0, R = 0, inner = 0;
    if (!dims_of(&ex->inputs[0], &outer, &R, &inner)) return 0;
    plan pl = make_plan(b, b->p->op, outer, R, inner, ex->inputs[0].data);
    /* the partials are the baseline's memory, as PyTorch's split
     * reductions also use a workspace */
    return pl.two && pl.ws > 0 ? base_need_ws(b, pl.ws, e) : 0;
}

int run(base_ctx *b, base_variant, const kbv_call *c, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0];
    int64_t outer = 0, R = 0, inner = 0;
    if (!dims_of(x, &outer, &R, &inner)) return 0;
    if ((inner + COLS - 1) / COLS > 0x7fffffff)
        return err_set(e, KBV_EINPUT, "baseline %s: reduction too wide", b->p->id);
    plan pl = make_plan(b, b->p->op, outer, R, inner, x->data);
    /* a call larger than the example create() sized the workspace for
     * falls back to the single pass */
    if (pl.two && pl.ws > b->ws_bytes) pl.two = pl.flat = 0;
    const float *xp = (const float *)x->data;
    void *o = c->outputs[0].data;
    cudaStream_t s = c->stream;
    switch (b->p->op) {
#define CASE(OPC) case OPC: launch<OPC, float, float>(b, pl, xp, o, outer, R, inner, s); break;
    CASE(OP_SUM_DIM) CASE(OP_MEAN_DIM) CASE(OP_MAX_DIM) CASE(OP_MIN_DIM)
    CASE(OP_ARGMAX_DIM) CASE(OP_ARGMIN_DIM)
#undef CASE
    default:
        return err_set(e, KBV_EINPUT, "baseline %s: unknown reduction", b->p->id);
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "reduce launch", ce);
    return 0;
}

/* bf16: the single-pass or streaming two-pass kernels on the bfloat16
 * input, float partials in the workspace (grown at the first call when the
 * fp32 plan, sized at create, needed less), bfloat16 values out. */
int run_bf16(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0];
    int64_t outer = 0, R = 0, inner = 0;
    if (!dims_of(x, &outer, &R, &inner)) return 0;
    if ((inner + COLS - 1) / COLS > 0x7fffffff)
        return err_set(e, KBV_EINPUT, "baseline %s: reduction too wide", b->p->id);
    plan pl = make_plan(b, b->p->op, outer, R, inner, x->data, 1);
    if (pl.two && pl.ws > b->ws_bytes) {
        int rc = base_need_ws(b, pl.ws, e);
        if (rc) return rc;
    }
    const __nv_bfloat16 *xp = (const __nv_bfloat16 *)x->data;
    void *o = c->outputs[0].data;
    cudaStream_t s = c->stream;
    switch (b->p->op) {
#define CASE(OPC) case OPC: launch<OPC, __nv_bfloat16, __nv_bfloat16>(b, pl, xp, o, outer, R, inner, s); break;
    CASE(OP_SUM_DIM) CASE(OP_MEAN_DIM) CASE(OP_MAX_DIM) CASE(OP_MIN_DIM)
    CASE(OP_ARGMAX_DIM) CASE(OP_ARGMIN_DIM)
#undef CASE
    default:
        return err_set(e, KBV_EINPUT, "baseline %s: unknown reduction", b->p->id);
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "bf16 reduce launch", ce);
    if (!b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16: kbv's %s reduction on bf16, fp32 accumulators",
                         pl.two ? "streaming two-pass" : "single-pass");
    return 0;
}

} /* namespace */

const base_family base_fam_reduce = {
    "reduce", OP_SUM_DIM, OP_REDUCE_LAST, create, run, NULL, NULL, run_bf16,
};

/* reduce.cu - sum, mean, max, min, argmax and argmin over dim 1 of a
 * tensor seen as [outer, R, inner].
 *
 * Two kernels, chosen by shape in run().
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
 */
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

/* The final value of one output element t. */
template <int OP>
__device__ __forceinline__ void put(void *out, int64_t t, float acc, int64_t best, int64_t R)
{
    if (is_arg(OP)) ((int64_t *)out)[t] = best;
    else if (OP == OP_MEAN_DIM) ((float *)out)[t] = acc / (float)R;
    else ((float *)out)[t] = acc;
}

/* Single pass.  grid (x: tiles of COLS inner columns, y: outer slices,
 * grid-strided). */
template <int OP>
__global__ void __launch_bounds__(COLS * SPLIT) reduce_single(const float *__restrict__ x,
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
            const float *p = x + (o * R + r0) * inner + i;
            int64_t r = r0;
            for (; r + UNROLL <= r1; r += UNROLL) {
                float v[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; u++) v[u] = __ldg(p + u * inner);
                p += UNROLL * inner;
#pragma unroll
                for (int u = 0; u < UNROLL; u++) step<OP>(v[u], r + u, acc, best);
            }
            for (; r < r1; r++, p += inner) step<OP>(__ldg(p), r, acc, best);
        }
        s_acc[ty][tx] = acc;
        s_best[ty][tx] = best;
        __syncthreads();
        if (ty == 0 && col_ok) {
            /* chunk 0 is this thread's own; the others follow in order */
            for (int c = 1; c < SPLIT; c++) step<OP>(s_acc[c][tx], s_best[c][tx], acc, best);
            put<OP>(out, o * inner + i, acc, best, R);
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
template <int OP, int CPT, int RU>
__global__ void __launch_bounds__(TPB, MIN_BLOCKS_PER_SM)
reduce_pass1(const float *__restrict__ x, float *__restrict__ pval, int64_t *__restrict__ pidx,
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
                for (int k = 0; k < CPT; k++) step<OP>(v[u][k], r + u, acc[k], best[k]);
        }
        for (; r < r1; r++, p += inner) {
            float v[CPT];
#pragma unroll
            for (int k = 0; k < CPT; k++) v[k] = k < nk ? __ldg(p + k * TPB) : ini;
#pragma unroll
            for (int k = 0; k < CPT; k++) step<OP>(v[k], r, acc[k], best[k]);
        }
    }
    if (chunks == 1) {
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (k < nk) put<OP>(out, o * inner + col + k * TPB, acc[k], (int64_t)best[k], (int64_t)R);
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
template <int OP>
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
        put<OP>(out, t, acc, best, R);
    }
}

/* How a shape is reduced. */
struct plan {
    int two;          /* 1: two-pass; 0: single pass */
    int cpt;          /* pass-1 columns per thread: 1, 2, 4, 8 or 16 */
    int tiles;        /* column tiles per row */
    int chunks;       /* chunks of R */
    int rows;         /* rows per chunk (the last may have fewer) */
    size_t idx_off;   /* byte offset of the indices in the workspace */
    size_t ws;        /* workspace bytes (0 with one chunk) */
};

plan make_plan(const base_ctx *b, int op, int64_t outer, int64_t R, int64_t inner)
{
    plan p = { 0, 1, 1, 1, 0, 0, 0 };
    if (R < MIN_R || inner < MIN_INNER || R > (int64_t)INT32_MAX - 64) return p;
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
        p.idx_off = (n * sizeof(float) + 255) / 256 * 256;
        p.ws = is_arg(op) ? p.idx_off + n * sizeof(int64_t) : n * sizeof(float);
    }
    return p;
}

template <int OP, int CPT>
void launch_pass1(const plan &pl, int64_t outer, const float *x, float *pval, int64_t *pidx,
                  void *out, int64_t R, int64_t inner, cudaStream_t s)
{
    constexpr int RU = rows_per_step(OP, CPT);
    const unsigned blocks = (unsigned)(outer * pl.tiles * pl.chunks);
    reduce_pass1<OP, CPT, RU><<<blocks, TPB, 0, s>>>(
        x, pval, pidx, out, (int)R, inner, pl.chunks, pl.tiles, pl.rows);
}

template <int OP>
void launch(const base_ctx *b, const plan &pl, const float *x, void *out, int64_t outer, int64_t R,
            int64_t inner, cudaStream_t s)
{
    if (!pl.two) {
        int64_t tiles = (inner + COLS - 1) / COLS;
        dim3 grid((unsigned)tiles, (unsigned)(outer < 65535 ? outer : 65535));
        dim3 block(COLS, SPLIT);
        reduce_single<OP><<<grid, block, 0, s>>>(x, out, outer, R, inner);
        return;
    }
    float *pval = (float *)b->ws;
    int64_t *pidx = is_arg(OP) && pl.chunks > 1 ? (int64_t *)((char *)b->ws + pl.idx_off) : NULL;
    switch (pl.cpt) {
    case 1: launch_pass1<OP, 1>(pl, outer, x, pval, pidx, out, R, inner, s); break;
    case 2: launch_pass1<OP, 2>(pl, outer, x, pval, pidx, out, R, inner, s); break;
    case 4: launch_pass1<OP, 4>(pl, outer, x, pval, pidx, out, R, inner, s); break;
    case 8: launch_pass1<OP, 8>(pl, outer, x, pval, pidx, out, R, inner, s); break;
    default: launch_pass1<OP, 16>(pl, outer, x, pval, pidx, out, R, inner, s); break;
    }
    if (pl.chunks > 1) {
        unsigned blocks = base_grid(b, outer * inner, P2_THREADS, 16);
        reduce_pass2<OP><<<blocks, P2_THREADS, 0, s>>>(pval, pidx, out, outer, R, inner, pl.chunks);
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
    plan pl = make_plan(b, b->p->op, outer, R, inner);
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
    plan pl = make_plan(b, b->p->op, outer, R, inner);
    /* a call larger than the example create() sized the workspace for
     * falls back to the single pass */
    if (pl.two && pl.ws > b->ws_bytes) pl.two = 0;
    const float *xp = (const float *)x->data;
    void *o = c->outputs[0].data;
    cudaStream_t s = c->stream;
    switch (b->p->op) {
#define CASE(OPC) case OPC: launch<OPC>(b, pl, xp, o, outer, R, inner, s); break;
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

} /* namespace */

const base_family base_fam_reduce = {
    "reduce", OP_SUM_DIM, OP_REDUCE_LAST, create, run, NULL, NULL,
};

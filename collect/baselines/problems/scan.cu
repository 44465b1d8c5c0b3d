/* scan.cu - cumulative sums and products along the last dimension, with
 * CUB's block scan.
 *
 * One block per row walks the row in tiles of THREADS x ITEMS elements;
 * cub::BlockScan scans a tile and a prefix callback carries the running
 * total (or product) from tile to tile, so the row is read once and written
 * once.  The scan wants each thread to own ITEMS consecutive elements (the
 * blocked arrangement); how a tile gets there decides whether the memory
 * accesses are coalesced:
 *
 *  - rows of a multiple of 4 floats are read as float4 straight into the
 *    blocked arrangement: forward (the mask multiplied in, loaded the same
 *    way) or, for the reverse sum, the mirrored 8 elements of a thread,
 *    reversed in registers; the output is written the same way when its
 *    rows are aligned too;
 *  - otherwise (a ragged last tile, odd rows, KernelBench 92's output of
 *    row stride D + 1 shifted by one) the tile travels in the striped
 *    arrangement, where a warp touches 32 consecutive floats per access,
 *    and cub::BlockExchange converts between the two through shared memory.
 *
 * The scan and the exchange share one shared-memory union, so every use of
 * it is followed by a barrier before the next.
 *
 * Variants: reverse (the row read and written back to front), masked
 * (x * mask), and KernelBench 92's "exclusive" cumsum, whose output row
 * is [0, x0, x0 + x1, ..., sum of the row] of length D + 1 for rows
 * 0 .. B - 2 (see problems/l1_scan.c).
 *
 * The same kernel runs the BF16 setting on bfloat16 rows (one 16-byte
 * access holds a thread's eight elements): the scan runs in float, and
 * each output is rounded to bfloat16 once.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_scan.cuh>
#include <stdint.h>

#include "base_impl.h"

namespace {

const int THREADS = 256;
const int ITEMS = 8;
const int TILE = THREADS * ITEMS;

struct mul_op {
    __device__ __forceinline__ float operator()(float a, float b) const { return a * b; }
};
struct add_op {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

template <typename OpT>
struct carry {
    float running;
    OpT op;
    __device__ float operator()(float tile_total)
    {
        float before = running;
        running = op(running, tile_total);
        return before;
    }
};

/* Element access for the scan's element types: one value, and eight
 * consecutive ones in 16-byte accesses (two for float, one for bfloat16),
 * streamed (__ldcs/__stcs: read and written once). */
template <typename T>
struct elem;
template <>
struct elem<float> {
    static const int PER16 = 4;
    __device__ static float get(const float *p) { return *p; }
    __device__ static void put(float *p, float v) { *p = v; }
    __device__ static void get8(const float *p, float *v)
    {
        const float4 *p4 = reinterpret_cast<const float4 *>(p);
#pragma unroll
        for (int k = 0; k < 2; k++) {
            float4 a = __ldcs(p4 + k);
            v[4 * k] = a.x; v[4 * k + 1] = a.y; v[4 * k + 2] = a.z; v[4 * k + 3] = a.w;
        }
    }
    __device__ static void put8(float *p, const float *w)
    {
        float4 *q4 = reinterpret_cast<float4 *>(p);
#pragma unroll
        for (int k = 0; k < 2; k++) __stcs(q4 + k, make_float4(w[4 * k], w[4 * k + 1], w[4 * k + 2], w[4 * k + 3]));
    }
};
template <>
struct elem<__nv_bfloat16> {
    static const int PER16 = 8;
    __device__ static float get(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
    __device__ static void put(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }
    __device__ static void get8(const __nv_bfloat16 *p, float *v)
    {
        uint4 a = __ldcs(reinterpret_cast<const uint4 *>(p));
        unsigned w[4] = { a.x, a.y, a.z, a.w };
#pragma unroll
        for (int k = 0; k < 4; k++) {
            v[2 * k] = __uint_as_float(w[k] << 16);
            v[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
        }
    }
    __device__ static void put8(__nv_bfloat16 *p, const float *v)
    {
        unsigned w[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            w[k] = (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(v[2 * k])) |
                   ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(v[2 * k + 1])) << 16);
        __stcs(reinterpret_cast<uint4 *>(p), make_uint4(w[0], w[1], w[2], w[3]));
    }
};

/* in_vec: input rows (and mask rows) are 16-byte aligned; out_vec: so are
 * the output rows and there is no shift.  Both are uniform over the grid. */
template <int OP, typename T, typename M>
__global__ void __launch_bounds__(THREADS) scan_rows(const T *__restrict__ x,
                                                     const M *__restrict__ mask,
                                                     T *__restrict__ y, int64_t d,
                                                     int64_t out_stride, int64_t out_shift,
                                                     bool in_vec, bool out_vec)
{
    typedef cub::BlockScan<float, THREADS> scan_t;
    typedef cub::BlockExchange<float, THREADS, ITEMS> exch_t;
    __shared__ union {
        typename scan_t::TempStorage scan;
        typename exch_t::TempStorage exch;
    } temp;
    const bool prod = OP == OP_CUMPROD;
    const bool rev = OP == OP_CUMSUM_REVERSE;
    const T *xr = x + (int64_t)blockIdx.x * d;
    const M *mr = mask ? mask + (int64_t)blockIdx.x * d : NULL;
    T *yr = y + (int64_t)blockIdx.x * out_stride + out_shift;
    const float ident = prod ? 1.0f : 0.0f;
    const int t = threadIdx.x;
    carry<add_op> cs{ 0.0f, add_op() };
    carry<mul_op> cp{ 1.0f, mul_op() };
    for (int64_t base = 0; base < d; base += TILE) {
        float it[ITEMS];
        /* uniform over the block: a whole tile lies inside the row */
        const bool full = base + TILE <= d;
        /* this thread's first scan position in the blocked arrangement */
        const int64_t j0 = base + (int64_t)t * ITEMS;
        if (full && in_vec) {
            /* scan positions j0 .. j0 + 7; reversed they are the elements
             * d - 8 - j0 .. d - 1 - j0, read forwards and flipped */
            const int64_t src = rev ? d - ITEMS - j0 : j0;
            float v[ITEMS];
            elem<T>::get8(xr + src, v);
            if (mr) {
                float m[ITEMS];
                elem<M>::get8(mr + src, m);
#pragma unroll
                for (int k = 0; k < ITEMS; k++) v[k] *= m[k];
            }
#pragma unroll
            for (int k = 0; k < ITEMS; k++) it[k] = rev ? v[ITEMS - 1 - k] : v[k];
        } else {
            /* striped: item k of thread t is scan position base + k THREADS + t */
#pragma unroll
            for (int k = 0; k < ITEMS; k++) {
                int64_t j = base + (int64_t)k * THREADS + t;
                float v = ident;
                if (j < d) {
                    int64_t src = rev ? d - 1 - j : j;
                    v = elem<T>::get(xr + src);
                    if (mr) v *= elem<M>::get(mr + src);
                }
                it[k] = v;
            }
            exch_t(temp.exch).StripedToBlocked(it, it);
            __syncthreads();   /* temp is the scan's next */
        }
        if (prod) scan_t(temp.scan).InclusiveScan(it, it, mul_op(), cp);
        else scan_t(temp.scan).InclusiveScan(it, it, add_op(), cs);
        __syncthreads();   /* temp is reused by the exchange or the next tile */
        if (full && out_vec) {
            const int64_t dst = rev ? d - ITEMS - j0 : j0;
            float w[ITEMS];
#pragma unroll
            for (int k = 0; k < ITEMS; k++) w[k] = rev ? it[ITEMS - 1 - k] : it[k];
            elem<T>::put8(yr + dst, w);
        } else {
            exch_t(temp.exch).BlockedToStriped(it, it);
#pragma unroll
            for (int k = 0; k < ITEMS; k++) {
                int64_t j = base + (int64_t)k * THREADS + t;
                if (j < d) elem<T>::put(yr + (rev ? d - 1 - j : j), it[k]);
            }
            __syncthreads();   /* temp is the next tile's */
        }
    }
    if (out_shift && threadIdx.x == 0) elem<T>::put(yr - out_shift, 0.0f);
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    if (ex->inputs[0].ndim != 2)
        return err_set(e, KBV_EINPUT, "baseline %s: scans take [rows, d]", b->p->id);
    return 0;
}

bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* The scan of the call's rows, on elements of type T (float, or
 * bfloat16 in the BF16 setting) and a mask of type M. */
template <typename T, typename M>
int run_rows(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0], *y = &c->outputs[0];
    int64_t rows = x->shape[0], d = x->shape[1];
    const T *xp = (const T *)x->data;
    T *yp = (T *)y->data;
    cudaStream_t s = c->stream;
    const M *mp = b->p->op == OP_MASKED_CUMSUM ? (const M *)c->inputs[1].data : NULL;
    const int per16 = elem<T>::PER16;
    bool in_vec = d % per16 == 0 && aligned16(xp) && (mp == NULL || (aligned16(mp) && d % elem<M>::PER16 == 0));
    bool out_vec = d % per16 == 0 && aligned16(yp);
    if (rows == 0 || d == 0) return 0;
    switch (b->p->op) {
    case OP_CUMSUM:
        scan_rows<OP_CUMSUM, T, M><<<(unsigned)rows, THREADS, 0, s>>>(xp, NULL, yp, d, d, 0, in_vec,
                                                                out_vec);
        break;
    case OP_CUMPROD:
        scan_rows<OP_CUMPROD, T, M><<<(unsigned)rows, THREADS, 0, s>>>(xp, NULL, yp, d, d, 0, in_vec,
                                                                 out_vec);
        break;
    case OP_CUMSUM_REVERSE:
        scan_rows<OP_CUMSUM_REVERSE, T, M><<<(unsigned)rows, THREADS, 0, s>>>(xp, NULL, yp, d, d, 0,
                                                                        in_vec, out_vec);
        break;
    case OP_MASKED_CUMSUM:
        scan_rows<OP_CUMSUM, T, M><<<(unsigned)rows, THREADS, 0, s>>>(xp, mp, yp, d, d, 0, in_vec,
                                                                out_vec);
        break;
    case OP_CUMSUM_EXCLUSIVE: {
        /* output [rows - 1, d + 1]: row i is 0 then the inclusive sums of
         * input row i, shifted by one, so never written as float4 */
        int64_t orows = y->shape[0];
        if (orows > rows || y->shape[1] != d + 1)
            return err_set(e, KBV_EINPUT, "baseline %s: exclusive cumsum shapes", b->p->id);
        if (orows == 0) return 0;
        scan_rows<OP_CUMSUM, T, M><<<(unsigned)orows, THREADS, 0, s>>>(xp, NULL, yp, d, d + 1, 1,
                                                                 in_vec, false);
        break;
    }
    default:
        return err_set(e, KBV_EINPUT, "baseline %s: unknown scan", b->p->id);
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "scan launch", ce);
    return 0;
}

int run(base_ctx *b, base_variant, const kbv_call *c, kbv_err *e)
{
    return run_rows<float, float>(b, c, e);
}

/* bf16: the same scan on the bfloat16 tensors (float arithmetic). */
int run_bf16(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    /* every tensor is bfloat16, the masked sum's 0/1 mask too */
    for (int i = 0; i < c->n_inputs; i++)
        if (c->inputs[i].dtype != KBV_BF16)
            return err_set(e, KBV_EINPUT, "baseline %s: the bf16 scan of a tensor of another type", b->p->id);
    if (c->outputs[0].dtype != KBV_BF16)
        return err_set(e, KBV_EINPUT, "baseline %s: the bf16 scan of a tensor of another type", b->p->id);
    if (!b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16: kbv's CUB block scan on the bf16 rows, float arithmetic");
    return run_rows<__nv_bfloat16, __nv_bfloat16>(b, c, e);
}

} /* namespace */

const base_family base_fam_scan = {
    "scan", OP_CUMSUM, OP_SCAN_LAST, create, run, NULL, NULL, run_bf16,
};

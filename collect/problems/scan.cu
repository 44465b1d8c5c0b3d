/* scan.cu - cumulative sums and products along the last dimension, with
 * CUB's block scan.
 *
 * One block per row walks the row in tiles of THREADS x ITEMS elements;
 * cub::BlockScan scans a tile and a prefix callback carries the running
 * total (or product) from tile to tile, so the row is read once and written
 * once.  Each thread owns ITEMS consecutive elements (CUB's blocked
 * arrangement) and reads them as float4 where the row allows it.
 *
 * Variants: reverse (the row read and written back to front), masked
 * (x * mask), and KernelBench 92's "exclusive" cumsum, whose output row
 * is [0, x0, x0 + x1, ..., sum of the row] of length D + 1 for rows
 * 0 .. B - 2 (see problems/l1_scan.c).
 */
#include <cuda_runtime.h>
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

template <int OP>
__global__ void __launch_bounds__(THREADS) scan_rows(const float *__restrict__ x,
                                                     const float *__restrict__ mask,
                                                     float *__restrict__ y, int64_t d,
                                                     int64_t out_stride, int64_t out_shift)
{
    typedef cub::BlockScan<float, THREADS> scan_t;
    __shared__ typename scan_t::TempStorage temp;
    const bool prod = OP == OP_CUMPROD;
    const bool rev = OP == OP_CUMSUM_REVERSE;
    const float *xr = x + (int64_t)blockIdx.x * d;
    const float *mr = mask ? mask + (int64_t)blockIdx.x * d : NULL;
    float *yr = y + (int64_t)blockIdx.x * out_stride;
    const float ident = prod ? 1.0f : 0.0f;
    carry<add_op> cs{ 0.0f, add_op() };
    carry<mul_op> cp{ 1.0f, mul_op() };
    bool vec = !rev && d % 4 == 0 && out_shift == 0 && out_stride % 4 == 0 && mr == NULL;
    for (int64_t base = 0; base < d; base += TILE) {
        float it[ITEMS];
        int64_t j0 = base + (int64_t)threadIdx.x * ITEMS;
        if (vec && j0 + ITEMS <= d) {
            const float4 *p4 = reinterpret_cast<const float4 *>(xr + j0);
#pragma unroll
            for (int k = 0; k < ITEMS / 4; k++) {
                float4 v = __ldcs(p4 + k);
                it[4 * k] = v.x; it[4 * k + 1] = v.y; it[4 * k + 2] = v.z; it[4 * k + 3] = v.w;
            }
        } else {
#pragma unroll
            for (int k = 0; k < ITEMS; k++) {
                int64_t j = j0 + k;
                float v = ident;
                if (j < d) {
                    int64_t src = rev ? d - 1 - j : j;
                    v = xr[src];
                    if (mr) v *= mr[src];
                }
                it[k] = v;
            }
        }
        if (prod) scan_t(temp).InclusiveScan(it, it, mul_op(), cp);
        else scan_t(temp).InclusiveScan(it, it, add_op(), cs);
        __syncthreads();   /* temp is reused by the next tile */
        if (vec && j0 + ITEMS <= d) {
            float4 *q4 = reinterpret_cast<float4 *>(yr + j0);
#pragma unroll
            for (int k = 0; k < ITEMS / 4; k++)
                __stcs(q4 + k, make_float4(it[4 * k], it[4 * k + 1], it[4 * k + 2], it[4 * k + 3]));
        } else {
#pragma unroll
            for (int k = 0; k < ITEMS; k++) {
                int64_t j = j0 + k;
                if (j < d) yr[(rev ? d - 1 - j : j) + out_shift] = it[k];
            }
        }
    }
    if (out_shift && threadIdx.x == 0) yr[0] = 0.0f;
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    if (ex->inputs[0].ndim != 2)
        return err_set(e, KBV_EINPUT, "baseline %s: scans take [rows, d]", b->p->id);
    return 0;
}

int run(base_ctx *b, base_variant, const kbv_call *c, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0], *y = &c->outputs[0];
    int64_t rows = x->shape[0], d = x->shape[1];
    const float *xp = (const float *)x->data;
    float *yp = (float *)y->data;
    cudaStream_t s = c->stream;
    switch (b->p->op) {
    case OP_CUMSUM:
        scan_rows<OP_CUMSUM><<<(unsigned)rows, THREADS, 0, s>>>(xp, NULL, yp, d, d, 0);
        break;
    case OP_CUMPROD:
        scan_rows<OP_CUMPROD><<<(unsigned)rows, THREADS, 0, s>>>(xp, NULL, yp, d, d, 0);
        break;
    case OP_CUMSUM_REVERSE:
        scan_rows<OP_CUMSUM_REVERSE><<<(unsigned)rows, THREADS, 0, s>>>(xp, NULL, yp, d, d, 0);
        break;
    case OP_MASKED_CUMSUM:
        scan_rows<OP_CUMSUM><<<(unsigned)rows, THREADS, 0, s>>>(
            xp, (const float *)c->inputs[1].data, yp, d, d, 0);
        break;
    case OP_CUMSUM_EXCLUSIVE: {
        /* output [rows - 1, d + 1]: row i is 0 then the inclusive sums of
         * input row i */
        int64_t orows = y->shape[0];
        if (orows > rows || y->shape[1] != d + 1)
            return err_set(e, KBV_EINPUT, "baseline %s: exclusive cumsum shapes", b->p->id);
        scan_rows<OP_CUMSUM><<<(unsigned)orows, THREADS, 0, s>>>(xp, NULL, yp, d, d + 1, 1);
        break;
    }
    default:
        return err_set(e, KBV_EINPUT, "baseline %s: unknown scan", b->p->id);
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "scan launch", ce);
    return 0;
}

} /* namespace */

const base_family base_fam_scan = {
    "scan", OP_CUMSUM, OP_SCAN_LAST, create, run, NULL, NULL,
};

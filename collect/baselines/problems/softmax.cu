/* softmax.cu - softmax and log-softmax over the last dimension of a
 * row-major [rows, D] tensor.
 *
 * One block per row.  Pass 1 reads the row once and keeps, per thread, a
 * running maximum m and a sum s of exp(x - m), rescaling s whenever m
 * grows (the "online" softmax); the block then merges the (m, s) pairs.
 * Pass 2 reads the row again and writes exp(x - m) / s, or x - m - log s.
 * That is two reads and one write of the row, against PyTorch's three
 * reads and one write for rows too long for shared memory.  Loads are
 * float4 when D is a multiple of four.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "base_impl.h"

namespace {

struct ms { float m, s; };

__device__ __forceinline__ ms ms_merge(ms a, ms b)
{
    if (a.m == -INFINITY) return b;
    if (b.m == -INFINITY) return a;
    float m = fmaxf(a.m, b.m);
    return ms{ m, a.s * expf(a.m - m) + b.s * expf(b.m - m) };
}

__device__ __forceinline__ void ms_add(ms &a, float x)
{
    if (x > a.m) {
        a.s = (a.m == -INFINITY ? 0.0f : a.s * expf(a.m - x)) + 1.0f;
        a.m = x;
    } else {
        a.s += expf(x - a.m);
    }
}

__device__ __forceinline__ void ms_add4(ms &a, float4 v)
{
    float m4 = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
    if (m4 > a.m) {
        a.s = a.m == -INFINITY ? 0.0f : a.s * expf(a.m - m4);
        a.m = m4;
    }
    a.s += expf(v.x - a.m) + expf(v.y - a.m) + expf(v.z - a.m) + expf(v.w - a.m);
}

/* Merges the pairs of a block; every thread receives the result. */
template <int THREADS>
__device__ ms block_merge(ms v)
{
    __shared__ ms part[THREADS / 32];
    __shared__ ms total;
    for (int o = 16; o > 0; o >>= 1) {
        ms w{ __shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o) };
        v = ms_merge(v, w);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < THREADS / 32 ? part[lane] : ms{ -INFINITY, 0.0f };
        for (int o = 16; o > 0; o >>= 1) {
            ms w{ __shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o) };
            v = ms_merge(v, w);
        }
        if (lane == 0) total = v;
    }
    __syncthreads();
    return total;
}

template <int THREADS, bool LOG, bool VEC>
__global__ void __launch_bounds__(THREADS) softmax_rows(const float *__restrict__ x,
                                                        float *__restrict__ y, int64_t d)
{
    const float *xr = x + (int64_t)blockIdx.x * d;
    float *yr = y + (int64_t)blockIdx.x * d;
    ms acc{ -INFINITY, 0.0f };
    if (VEC) {
        const float4 *x4 = reinterpret_cast<const float4 *>(xr);
        int64_t d4 = d / 4;
        int64_t i = threadIdx.x;
        /* four independent loads in flight before the dependent updates */
        for (; i + 3 * THREADS < d4; i += 4 * THREADS) {
            float4 v0 = x4[i], v1 = x4[i + THREADS], v2 = x4[i + 2 * THREADS], v3 = x4[i + 3 * THREADS];
            ms_add4(acc, v0);
            ms_add4(acc, v1);
            ms_add4(acc, v2);
            ms_add4(acc, v3);
        }
        for (; i < d4; i += THREADS) ms_add4(acc, x4[i]);
    } else {
        for (int64_t i = threadIdx.x; i < d; i += THREADS) ms_add(acc, xr[i]);
    }
    ms r = block_merge<THREADS>(acc);
    float m = r.m, inv = 1.0f / r.s, lse = r.m + logf(r.s);
    if (VEC) {
        const float4 *x4 = reinterpret_cast<const float4 *>(xr);
        float4 *y4 = reinterpret_cast<float4 *>(yr);
        int64_t d4 = d / 4;
        for (int64_t i = threadIdx.x; i < d4; i += THREADS) {
            float4 v = __ldcs(x4 + i), o;
            if (LOG) {
                o = make_float4(v.x - lse, v.y - lse, v.z - lse, v.w - lse);
            } else {
                o = make_float4(expf(v.x - m) * inv, expf(v.y - m) * inv, expf(v.z - m) * inv,
                                expf(v.w - m) * inv);
            }
            __stcs(y4 + i, o);
        }
    } else {
        for (int64_t i = threadIdx.x; i < d; i += THREADS) {
            float v = xr[i];
            yr[i] = LOG ? v - lse : expf(v - m) * inv;
        }
    }
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    const kbv_tensor *x = &ex->inputs[0];
    if (x->ndim < 1 || ex->n_outputs < 1)
        return err_set(e, KBV_EINPUT, "baseline %s: softmax needs a tensor input", b->p->id);
    return 0;
}

template <bool LOG>
void launch(const float *x, float *y, int64_t rows, int64_t d, cudaStream_t s)
{
    bool vec = d % 4 == 0;
    if (d >= 8192) {
        if (vec) softmax_rows<1024, LOG, true><<<(unsigned)rows, 1024, 0, s>>>(x, y, d);
        else softmax_rows<1024, LOG, false><<<(unsigned)rows, 1024, 0, s>>>(x, y, d);
    } else {
        if (vec) softmax_rows<256, LOG, true><<<(unsigned)rows, 256, 0, s>>>(x, y, d);
        else softmax_rows<256, LOG, false><<<(unsigned)rows, 256, 0, s>>>(x, y, d);
    }
}

int run(base_ctx *b, base_variant, const kbv_call *c, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0];
    int64_t d = x->shape[x->ndim - 1];
    int64_t rows = d ? kbv_numel(x) / d : 0;
    if (rows == 0) return 0;
    const float *xp = (const float *)x->data;
    float *yp = (float *)c->outputs[0].data;
    if (b->p->op == OP_LOG_SOFTMAX) launch<true>(xp, yp, rows, d, c->stream);
    else launch<false>(xp, yp, rows, d, c->stream);
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "softmax launch", ce);
    return 0;
}

} /* namespace */

void base_softmax_rows(const float *x, float *y, long long rows, long long d, int log_softmax,
                       cudaStream_t s)
{
    if (log_softmax) launch<true>(x, y, rows, d, s);
    else launch<false>(x, y, rows, d, s);
}

const base_family base_fam_softmax = {
    "softmax", OP_SOFTMAX, OP_SOFTMAX_LAST, create, run, NULL, NULL, NULL,
};

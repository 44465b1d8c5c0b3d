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
 *
 * The bf16 baseline (the BF16 setting) is the same two passes on bfloat16
 * rows, eight values per 16-byte load (when D is a multiple of eight),
 * float arithmetic and results rounded to bfloat16, as PyTorch's bfloat16
 * softmax keeps its accumulators in float.
 */
#include <cuda_bf16.h>
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

__device__ __forceinline__ float bf_lo(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf_hi(unsigned w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ unsigned bf_pack(float lo, float hi)
{
    return (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(lo)) |
           ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(hi)) << 16);
}

__device__ __forceinline__ void ms_add8(ms &a, uint4 v)
{
    float f[8] = { bf_lo(v.x), bf_hi(v.x), bf_lo(v.y), bf_hi(v.y), bf_lo(v.z), bf_hi(v.z), bf_lo(v.w), bf_hi(v.w) };
    float m8 = f[0];
#pragma unroll
    for (int k = 1; k < 8; k++) m8 = fmaxf(m8, f[k]);
    if (m8 > a.m) {
        a.s = a.m == -INFINITY ? 0.0f : a.s * expf(a.m - m8);
        a.m = m8;
    }
#pragma unroll
    for (int k = 0; k < 8; k++) a.s += expf(f[k] - a.m);
}

template <bool LOG>
__device__ __forceinline__ unsigned sm_out2(unsigned w, float m, float inv, float lse)
{
    float lo = bf_lo(w), hi = bf_hi(w);
    return LOG ? bf_pack(lo - lse, hi - lse) : bf_pack(expf(lo - m) * inv, expf(hi - m) * inv);
}

template <int THREADS, bool LOG, bool VEC>
__global__ void __launch_bounds__(THREADS) softmax_rows_bf16(const __nv_bfloat16 *__restrict__ x,
                                                             __nv_bfloat16 *__restrict__ y, int64_t d)
{
    const __nv_bfloat16 *xr = x + (int64_t)blockIdx.x * d;
    __nv_bfloat16 *yr = y + (int64_t)blockIdx.x * d;
    ms acc{ -INFINITY, 0.0f };
    const uint4 *x8 = reinterpret_cast<const uint4 *>(xr);
    int64_t d8 = d / 8;
    if (VEC) {
        int64_t i = threadIdx.x;
        for (; i + THREADS < d8; i += 2 * THREADS) {
            uint4 v0 = x8[i], v1 = x8[i + THREADS];
            ms_add8(acc, v0);
            ms_add8(acc, v1);
        }
        for (; i < d8; i += THREADS) ms_add8(acc, x8[i]);
    } else {
        for (int64_t i = threadIdx.x; i < d; i += THREADS) ms_add(acc, __bfloat162float(xr[i]));
    }
    ms r = block_merge<THREADS>(acc);
    float m = r.m, inv = 1.0f / r.s, lse = r.m + logf(r.s);
    if (VEC) {
        uint4 *y8 = reinterpret_cast<uint4 *>(yr);
        for (int64_t i = threadIdx.x; i < d8; i += THREADS) {
            uint4 v = x8[i], o;
            o.x = sm_out2<LOG>(v.x, m, inv, lse);
            o.y = sm_out2<LOG>(v.y, m, inv, lse);
            o.z = sm_out2<LOG>(v.z, m, inv, lse);
            o.w = sm_out2<LOG>(v.w, m, inv, lse);
            y8[i] = o;
        }
    } else {
        for (int64_t i = threadIdx.x; i < d; i += THREADS) {
            float v = __bfloat162float(xr[i]);
            yr[i] = __float2bfloat16_rn(LOG ? v - lse : expf(v - m) * inv);
        }
    }
}

template <bool LOG>
void launch_bf16(const void *xv, void *yv, int64_t rows, int64_t d, cudaStream_t s)
{
    const __nv_bfloat16 *x = (const __nv_bfloat16 *)xv;
    __nv_bfloat16 *y = (__nv_bfloat16 *)yv;
    bool vec = d % 8 == 0;
    if (d >= 8192) {
        if (vec) softmax_rows_bf16<1024, LOG, true><<<(unsigned)rows, 1024, 0, s>>>(x, y, d);
        else softmax_rows_bf16<1024, LOG, false><<<(unsigned)rows, 1024, 0, s>>>(x, y, d);
    } else {
        if (vec) softmax_rows_bf16<256, LOG, true><<<(unsigned)rows, 256, 0, s>>>(x, y, d);
        else softmax_rows_bf16<256, LOG, false><<<(unsigned)rows, 256, 0, s>>>(x, y, d);
    }
}

int run_bf16(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0];
    int64_t d = x->shape[x->ndim - 1];
    int64_t rows = d ? kbv_numel(x) / d : 0;
    if (rows == 0) return 0;
    if (b->p->op == OP_LOG_SOFTMAX) launch_bf16<true>(x->data, c->outputs[0].data, rows, d, c->stream);
    else launch_bf16<false>(x->data, c->outputs[0].data, rows, d, c->stream);
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "bf16 softmax launch", ce);
    if (!b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16: kbv's online softmax, 8 values per load, fp32 arithmetic");
    return 0;
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

void base_softmax_rows_bf16(const void *x, void *y, long long rows, long long d, int log_softmax, cudaStream_t s)
{
    if (log_softmax) launch_bf16<true>(x, y, rows, d, s);
    else launch_bf16<false>(x, y, rows, d, s);
}

const base_family base_fam_softmax = {
    "softmax", OP_SOFTMAX, OP_SOFTMAX_LAST, create, run, NULL, NULL, run_bf16,
};

/* norm.cu - normalisation baselines: batch, instance, group and layer
 * norm, RMS norm over dim 1, and the Frobenius, L1 and L2 scalings.
 *
 * The statistic-then-scale norms share three kernels.  The input is seen as
 * `planes` contiguous runs of L elements (one (n, c) plane for batch and
 * instance norm, one (n, group) run for group norm, one sample for layer
 * norm, the whole tensor for Frobenius).  stats_kernel sums x and x^2 over
 * chunks of a plane, in float per thread and in double across the block,
 * into per-chunk partials; finalize_kernel adds the partials of each
 * statistic group (a plane, or for batch norm every plane of a channel)
 * and turns them into mean and 1/sqrt(var + eps) in double, which avoids
 * the cancellation of E[x^2] - E[x]^2; apply_kernel writes
 * (x - mean) * rstd * weight + bias.  That is two reads and one write of
 * x, as in PyTorch's own two-kernel implementations.
 *
 * The row norms (L1, L2 over dim 1 of [B, D]) sum each row in one block,
 * then divide in a second kernel; RMS norm over the channels of
 * [B, C, H, W] uses one thread per (b, h, w).
 *
 * The bf16 baseline (the BF16 setting) runs the same plan on bfloat16
 * tensors with kernels of its own below (eight values per 16-byte access
 * where the lengths allow, statistics in float and double as above,
 * results rounded to bfloat16), so that the fp32 kernels stay as measured.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base_impl.h"

namespace {

const int64_t CHUNK = 65536;   /* elements of a plane per stats block */
const int THREADS = 256;


/* grid (chunks, planes): partial sums of x and x^2 of one chunk of a plane */
__global__ void __launch_bounds__(THREADS) stats_kernel(const float *__restrict__ x, int64_t L,
                                                        double2 *__restrict__ part)
{
    int64_t plane = blockIdx.y, c = blockIdx.x;
    int64_t lo = c * CHUNK, hi = lo + CHUNK < L ? lo + CHUNK : L;
    const float *p = x + plane * L;
    float s = 0.0f, ss = 0.0f;
    if (L % 4 == 0) {
        const float4 *p4 = reinterpret_cast<const float4 *>(p);
#pragma unroll 4
        for (int64_t i = lo / 4 + threadIdx.x; i < hi / 4; i += THREADS) {
            float4 v = p4[i];
            s += (v.x + v.y) + (v.z + v.w);
            ss += (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
        }
    } else {
        for (int64_t i = lo + threadIdx.x; i < hi; i += THREADS) {
            float v = p[i];
            s += v;
            ss += v * v;
        }
    }
    double a = s, b = ss;
    block_sum2(a, b);
    if (threadIdx.x == 0) part[plane * gridDim.x + c] = make_double2(a, b);
}

/* One block per statistic group: its threads add the group's partials
 * (for the Frobenius norm, 28672 of them; one thread walking them in
 * sequence took a millisecond).  Batch norm (channels > 0): group c
 * gathers planes n * channels + c for every n; otherwise group g is plane
 * g.  frob: rstd = 1 / sqrt(sum x^2), mean 0. */
__global__ void __launch_bounds__(THREADS) finalize_kernel(const double2 *__restrict__ part,
                                                           int chunks, int64_t channels,
                                                           int64_t batch, double count, double eps,
                                                           int frob, float2 *__restrict__ stat)
{
    int64_t g = blockIdx.x;
    double s = 0.0, ss = 0.0;
    if (channels > 0) {
        for (int64_t k = threadIdx.x; k < batch * chunks; k += THREADS) {
            int64_t n = k / chunks, c = k % chunks;
            double2 v = part[(n * channels + g) * chunks + c];
            s += v.x;
            ss += v.y;
        }
    } else {
        for (int64_t c = threadIdx.x; c < chunks; c += THREADS) {
            double2 v = part[g * chunks + c];
            s += v.x;
            ss += v.y;
        }
    }
    block_sum2(s, ss);
    if (threadIdx.x != 0) return;
    if (frob) {
        stat[g] = make_float2(0.0f, (float)(1.0 / sqrt(ss)));
        return;
    }
    double mean = s / count, var = ss / count - mean * mean;
    if (var < 0) var = 0;
    stat[g] = make_float2((float)mean, (float)(1.0 / sqrt(var + eps)));
}

enum { AFF_NONE = 0, AFF_CHANNEL = 1, AFF_ELEMENT = 2 };

/* grid (chunks, planes): y = (x - mean) * rstd [* w + b].  The statistic of
 * plane p is stat[p / stat_div % stat_mod] (batch norm: (n C + c) -> c).
 * Channel affine: channel = p * ch_per_plane + j / hw (group norm) or
 * p % C (batch norm, ch_per_plane 1 with hw = L); element affine: j. */
struct apply_args {
    int64_t L, stat_mod, channels, ch_per_plane, hw;
    int affine;
};

__global__ void __launch_bounds__(THREADS) apply_kernel(const float *__restrict__ x,
                                                        float *__restrict__ y,
                                                        const float2 *__restrict__ stat,
                                                        const float *__restrict__ w,
                                                        const float *__restrict__ bias,
                                                        apply_args a)
{
    int64_t plane = blockIdx.y, c = blockIdx.x;
    int64_t lo = c * CHUNK, hi = lo + CHUNK < a.L ? lo + CHUNK : a.L;
    float2 st = stat[a.stat_mod > 0 ? plane % a.stat_mod : plane];
    const float *p = x + plane * a.L;
    float *q = y + plane * a.L;
    int64_t ch0 = (plane * a.ch_per_plane) % (a.channels > 0 ? a.channels : 1);
    if (a.L % 4 == 0 && (a.affine != AFF_CHANNEL || a.hw % 4 == 0)) {
        const float4 *p4 = reinterpret_cast<const float4 *>(p);
        float4 *q4 = reinterpret_cast<float4 *>(q);
        for (int64_t i = lo / 4 + threadIdx.x; i < hi / 4; i += THREADS) {
            float4 v = __ldcs(p4 + i);
            float4 o;
            o.x = (v.x - st.x) * st.y; o.y = (v.y - st.x) * st.y;
            o.z = (v.z - st.x) * st.y; o.w = (v.w - st.x) * st.y;
            if (a.affine == AFF_CHANNEL) {
                int64_t ch = ch0 + (4 * i) / a.hw;
                float wv = w[ch], bv = bias[ch];
                o.x = o.x * wv + bv; o.y = o.y * wv + bv; o.z = o.z * wv + bv; o.w = o.w * wv + bv;
            } else if (a.affine == AFF_ELEMENT) {
                float4 wv = reinterpret_cast<const float4 *>(w)[i];
                float4 bv = reinterpret_cast<const float4 *>(bias)[i];
                o.x = o.x * wv.x + bv.x; o.y = o.y * wv.y + bv.y;
                o.z = o.z * wv.z + bv.z; o.w = o.w * wv.w + bv.w;
            }
            __stcs(q4 + i, o);
        }
    } else {
        for (int64_t i = lo + threadIdx.x; i < hi; i += THREADS) {
            float o = (p[i] - st.x) * st.y;
            if (a.affine == AFF_CHANNEL) {
                int64_t ch = ch0 + i / a.hw;
                o = o * w[ch] + bias[ch];
            } else if (a.affine == AFF_ELEMENT) {
                o = o * w[i] + bias[i];
            }
            q[i] = o;
        }
    }
}

/* The row norms (L1, L2 over dim 1 of [rows, d]) in two streaming
 * kernels, as PyTorch runs them (a reduction, then the division): one block
 * per row sums |x| or x^2 with eight loads in flight per thread, then a
 * grid over (row tiles, rows) divides.  One fused block per row spent its
 * time alternating between a read phase and a read-write phase, and its
 * rows (256 KiB each) did not stay in L2 for the second read anyway.
 * Rows of odd length are not 16-byte aligned, so the loads are scalar,
 * coalesced across the warp. */
template <bool L2>
__global__ void __launch_bounds__(THREADS) rownorm_sum_kernel(const float *__restrict__ x,
                                                              float *__restrict__ denom, int64_t d)
{
    const float *p = x + (int64_t)blockIdx.x * d;
    float acc[8] = { 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f };
    int64_t i = threadIdx.x;
    for (; i + 7 * THREADS < d; i += 8 * THREADS) {
        float v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) v[u] = __ldg(p + i + u * THREADS);
#pragma unroll
        for (int u = 0; u < 8; u++) acc[u] += L2 ? v[u] * v[u] : fabsf(v[u]);
    }
    for (; i < d; i += THREADS) {
        float v = __ldg(p + i);
        acc[0] += L2 ? v * v : fabsf(v);
    }
    double a = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    double b = 0.0;
    block_sum2(a, b);
    if (threadIdx.x == 0) denom[blockIdx.x] = L2 ? (float)sqrt(a) : (float)(a / (double)d);
}

const int ROW_TILE = THREADS * 8;   /* elements of a row per division block */

__global__ void __launch_bounds__(THREADS) rownorm_div_kernel(const float *__restrict__ x,
                                                              float *__restrict__ y,
                                                              const float *__restrict__ denom,
                                                              int64_t d)
{
    int64_t row = blockIdx.y;
    const float *p = x + row * d;
    float *q = y + row * d;
    float dn = denom[row];
    int64_t base = (int64_t)blockIdx.x * ROW_TILE + threadIdx.x;
    float v[8];
#pragma unroll
    for (int u = 0; u < 8; u++) {
        int64_t j = base + u * THREADS;
        v[u] = j < d ? __ldcs(p + j) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < 8; u++) {
        int64_t j = base + u * THREADS;
        if (j < d) __stcs(q + j, v[u] / dn);
    }
}

/* RMS over dim 1 of [B, C, S]: one thread per (b, s), C strided loads that
 * are coalesced across the warp; the second loop re-reads from cache. */
__global__ void rms_dim1_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t B,
                                int64_t C, int64_t S, float eps)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= B * S) return;
    int64_t b = t / S, s = t % S;
    const float *p = x + b * C * S + s;
    float *q = y + b * C * S + s;
    float acc = 0.0f;
    for (int64_t c = 0; c < C; c++) {
        float v = p[c * S];
        acc += v * v;
    }
    float r = sqrtf(acc / (float)C + eps);
    for (int64_t c = 0; c < C; c++) q[c * S] = p[c * S] / r;
}

/* --- bf16 ---------------------------------------------------------------- */

typedef __nv_bfloat16 bf16;

__device__ __forceinline__ float bfv(const bf16 *p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void unpack8(uint4 v, float (&f)[8])
{
    const unsigned w[4] = { v.x, v.y, v.z, v.w };
#pragma unroll
    for (int k = 0; k < 4; k++) {
        f[2 * k] = __uint_as_float(w[k] << 16);
        f[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
    }
}
__device__ __forceinline__ uint4 pack8(const float (&f)[8])
{
    unsigned w[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
        w[k] = (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(f[2 * k])) |
               ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(f[2 * k + 1])) << 16);
    return make_uint4(w[0], w[1], w[2], w[3]);
}

__global__ void __launch_bounds__(THREADS) stats_bf16_kernel(const bf16 *__restrict__ x, int64_t L,
                                                             double2 *__restrict__ part)
{
    int64_t plane = blockIdx.y, c = blockIdx.x;
    int64_t lo = c * CHUNK, hi = lo + CHUNK < L ? lo + CHUNK : L;
    const bf16 *p = x + plane * L;
    float s = 0.0f, ss = 0.0f;
    if (L % 8 == 0) {
        const uint4 *p8 = reinterpret_cast<const uint4 *>(p);
        for (int64_t i = lo / 8 + threadIdx.x; i < hi / 8; i += THREADS) {
            float f[8];
            unpack8(p8[i], f);
#pragma unroll
            for (int k = 0; k < 8; k++) {
                s += f[k];
                ss += f[k] * f[k];
            }
        }
    } else {
        for (int64_t i = lo + threadIdx.x; i < hi; i += THREADS) {
            float v = bfv(p, i);
            s += v;
            ss += v * v;
        }
    }
    double a = s, b = ss;
    block_sum2(a, b);
    if (threadIdx.x == 0) part[plane * gridDim.x + c] = make_double2(a, b);
}

__global__ void __launch_bounds__(THREADS) apply_bf16_kernel(const bf16 *__restrict__ x, bf16 *__restrict__ y,
                                                             const float2 *__restrict__ stat,
                                                             const bf16 *__restrict__ w,
                                                             const bf16 *__restrict__ bias, apply_args a)
{
    int64_t plane = blockIdx.y, c = blockIdx.x;
    int64_t lo = c * CHUNK, hi = lo + CHUNK < a.L ? lo + CHUNK : a.L;
    float2 st = stat[a.stat_mod > 0 ? plane % a.stat_mod : plane];
    const bf16 *p = x + plane * a.L;
    bf16 *q = y + plane * a.L;
    int64_t ch0 = (plane * a.ch_per_plane) % (a.channels > 0 ? a.channels : 1);
    if (a.L % 8 == 0 && (a.affine != AFF_CHANNEL || a.hw % 8 == 0)) {
        const uint4 *p8 = reinterpret_cast<const uint4 *>(p);
        uint4 *q8 = reinterpret_cast<uint4 *>(q);
        for (int64_t i = lo / 8 + threadIdx.x; i < hi / 8; i += THREADS) {
            float f[8];
            unpack8(p8[i], f);
#pragma unroll
            for (int k = 0; k < 8; k++) f[k] = (f[k] - st.x) * st.y;
            if (a.affine == AFF_CHANNEL) {
                int64_t ch = ch0 + (8 * i) / a.hw;
                float wv = bfv(w, ch), bv = bfv(bias, ch);
#pragma unroll
                for (int k = 0; k < 8; k++) f[k] = f[k] * wv + bv;
            } else if (a.affine == AFF_ELEMENT) {
                float wv[8], bv[8];
                unpack8(reinterpret_cast<const uint4 *>(w)[i], wv);
                unpack8(reinterpret_cast<const uint4 *>(bias)[i], bv);
#pragma unroll
                for (int k = 0; k < 8; k++) f[k] = f[k] * wv[k] + bv[k];
            }
            q8[i] = pack8(f);
        }
    } else {
        for (int64_t i = lo + threadIdx.x; i < hi; i += THREADS) {
            float o = (bfv(p, i) - st.x) * st.y;
            if (a.affine == AFF_CHANNEL) {
                int64_t ch = ch0 + i / a.hw;
                o = o * bfv(w, ch) + bfv(bias, ch);
            } else if (a.affine == AFF_ELEMENT) {
                o = o * bfv(w, i) + bfv(bias, i);
            }
            q[i] = __float2bfloat16_rn(o);
        }
    }
}

template <bool L2>
__global__ void __launch_bounds__(THREADS) rownorm_sum_bf16_kernel(const bf16 *__restrict__ x,
                                                                   float *__restrict__ denom, int64_t d)
{
    const bf16 *p = x + (int64_t)blockIdx.x * d;
    float acc = 0.0f;
    for (int64_t i = threadIdx.x; i < d; i += THREADS) {
        float v = bfv(p, i);
        acc += L2 ? v * v : fabsf(v);
    }
    double a = acc, b = 0.0;
    block_sum2(a, b);
    if (threadIdx.x == 0) denom[blockIdx.x] = L2 ? (float)sqrt(a) : (float)(a / (double)d);
}

__global__ void __launch_bounds__(THREADS) rownorm_div_bf16_kernel(const bf16 *__restrict__ x, bf16 *__restrict__ y,
                                                                   const float *__restrict__ denom, int64_t d)
{
    int64_t row = blockIdx.y;
    float dn = denom[row];
    for (int64_t j = (int64_t)blockIdx.x * ROW_TILE + threadIdx.x, end = j + ROW_TILE - threadIdx.x;
         j < end && j < d; j += THREADS)
        y[row * d + j] = __float2bfloat16_rn(bfv(x, row * d + j) / dn);
}

__global__ void rms_dim1_bf16_kernel(const bf16 *__restrict__ x, bf16 *__restrict__ y, int64_t B, int64_t C,
                                     int64_t S, float eps)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= B * S) return;
    int64_t b = t / S, s = t % S;
    const bf16 *p = x + b * C * S + s;
    bf16 *q = y + b * C * S + s;
    float acc = 0.0f;
    for (int64_t c = 0; c < C; c++) {
        float v = bfv(p, c * S);
        acc += v * v;
    }
    float r = sqrtf(acc / (float)C + eps);
    for (int64_t c = 0; c < C; c++) q[c * S] = __float2bfloat16_rn(bfv(p, c * S) / r);
}

/* The layout of a statistic-then-scale norm for the call's shapes. */
struct plan {
    int64_t planes, L, chunks, groups, channels_bn, batch_bn;
    double count;
    int frob;
    apply_args ap;
};

int make_plan(const base_ctx *b, const kbv_call *c, plan *pl, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0];
    int64_t n = kbv_numel(x);
    memset(pl, 0, sizeof *pl);
    int64_t N = x->shape[0], C = x->ndim > 1 ? x->shape[1] : 1;
    int64_t hw = x->ndim > 2 ? n / (N * C) : 1;
    switch (b->p->op) {
    case OP_BATCHNORM:
        pl->planes = N * C; pl->L = hw; pl->groups = C; pl->channels_bn = C; pl->batch_bn = N;
        pl->count = (double)N * hw;
        pl->ap = apply_args{ hw, C, C, 1, hw, AFF_CHANNEL };
        break;
    case OP_INSTANCENORM:
        pl->planes = N * C; pl->L = hw; pl->groups = N * C; pl->count = (double)hw;
        pl->ap = apply_args{ hw, 0, 0, 0, hw, AFF_NONE };
        break;
    case OP_GROUPNORM: {
        int64_t G = (int64_t)base_attr(b->p, "num_groups", 1);
        if (G < 1 || C % G) return err_set(e, KBV_EINPUT, "baseline %s: bad num_groups", b->p->id);
        pl->planes = N * G; pl->L = C / G * hw; pl->groups = N * G; pl->count = (double)pl->L;
        pl->ap = apply_args{ pl->L, 0, C, C / G, hw, AFF_CHANNEL };
        break;
    }
    case OP_LAYERNORM:
        pl->planes = N; pl->L = n / N; pl->groups = N; pl->count = (double)pl->L;
        pl->ap = apply_args{ pl->L, 0, 0, 0, pl->L, AFF_ELEMENT };
        break;
    case OP_FROBENIUS:
        pl->planes = 1; pl->L = n; pl->groups = 1; pl->count = (double)n; pl->frob = 1;
        pl->ap = apply_args{ n, 0, 0, 0, n, AFF_NONE };
        break;
    default:
        return 0;
    }
    pl->chunks = (pl->L + CHUNK - 1) / CHUNK;
    return 0;
}

int stat_op(int op)
{
    return op == OP_BATCHNORM || op == OP_INSTANCENORM || op == OP_GROUPNORM ||
           op == OP_LAYERNORM || op == OP_FROBENIUS;
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    if (b->p->op == OP_L1NORM || b->p->op == OP_L2NORM) {
        /* one denominator per row */
        const kbv_tensor *x = &ex->inputs[0];
        int64_t rows = kbv_numel(x) / x->shape[x->ndim - 1];
        if (rows > 65535)
            return err_set(e, KBV_EINPUT, "baseline %s: %lld rows of a row norm (at most 65535)",
                           b->p->id, (long long)rows);
        return base_need_ws(b, (size_t)rows * sizeof(float), e);
    }
    if (!stat_op(b->p->op)) return 0;
    plan pl;
    int rc = make_plan(b, ex, &pl, e);
    if (rc) return rc;
    size_t bytes = (size_t)(pl.planes * pl.chunks) * sizeof(double2) + (size_t)pl.groups * sizeof(float2);
    return base_need_ws(b, bytes + 256, e);
}

int run(base_ctx *b, base_variant, const kbv_call *c, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0];
    const float *xp = (const float *)x->data;
    float *yp = (float *)c->outputs[0].data;
    cudaStream_t s = c->stream;
    double eps = base_attr(b->p, "eps", 1e-5);
    int op = b->p->op;
    if (op == OP_L1NORM || op == OP_L2NORM) {
        int64_t d = x->shape[x->ndim - 1], rows = kbv_numel(x) / d;
        if (rows > 65535 || (size_t)rows * sizeof(float) > b->ws_bytes)
            return err_set(e, KBV_EINPUT, "baseline %s: %lld rows of a row norm", b->p->id,
                           (long long)rows);
        float *denom = (float *)b->ws;
        if (op == OP_L2NORM) rownorm_sum_kernel<true><<<(unsigned)rows, THREADS, 0, s>>>(xp, denom, d);
        else rownorm_sum_kernel<false><<<(unsigned)rows, THREADS, 0, s>>>(xp, denom, d);
        dim3 grid((unsigned)((d + ROW_TILE - 1) / ROW_TILE), (unsigned)rows);
        rownorm_div_kernel<<<grid, THREADS, 0, s>>>(xp, yp, denom, d);
    } else if (op == OP_RMSNORM_DIM1) {
        int64_t B = x->shape[0], C = x->shape[1], S = kbv_numel(x) / (B * C);
        rms_dim1_kernel<<<(unsigned)((B * S + 255) / 256), 256, 0, s>>>(xp, yp, B, C, S, (float)eps);
    } else {
        plan pl;
        int rc = make_plan(b, c, &pl, e);
        if (rc) return rc;
        double2 *part = (double2 *)b->ws;
        float2 *stat = (float2 *)((char *)b->ws + (((size_t)(pl.planes * pl.chunks) * sizeof(double2) + 255) & ~(size_t)255));
        stats_kernel<<<dim3((unsigned)pl.chunks, (unsigned)pl.planes), THREADS, 0, s>>>(xp, pl.L, part);
        finalize_kernel<<<(unsigned)pl.groups, THREADS, 0, s>>>(
            part, (int)pl.chunks, pl.channels_bn, pl.batch_bn, pl.count, eps, pl.frob, stat);
        const float *w = c->n_inputs > 1 ? (const float *)c->inputs[1].data : NULL;
        const float *bias = c->n_inputs > 2 ? (const float *)c->inputs[2].data : NULL;
        apply_kernel<<<dim3((unsigned)pl.chunks, (unsigned)pl.planes), THREADS, 0, s>>>(
            xp, yp, stat, w, bias, pl.ap);
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "norm launch", ce);
    return 0;
}

/* The same plans on bfloat16 tensors (the statistics' workspace is the
 * one create sized for the float example). */
int run_bf16(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0];
    const bf16 *xp = (const bf16 *)x->data;
    bf16 *yp = (bf16 *)c->outputs[0].data;
    cudaStream_t s = c->stream;
    double eps = base_attr(b->p, "eps", 1e-5);
    int op = b->p->op;
    if (op == OP_L1NORM || op == OP_L2NORM) {
        int64_t d = x->shape[x->ndim - 1], rows = kbv_numel(x) / d;
        if (rows > 65535 || (size_t)rows * sizeof(float) > b->ws_bytes)
            return err_set(e, KBV_EINPUT, "baseline %s: %lld rows of a row norm", b->p->id, (long long)rows);
        float *denom = (float *)b->ws;
        if (op == OP_L2NORM) rownorm_sum_bf16_kernel<true><<<(unsigned)rows, THREADS, 0, s>>>(xp, denom, d);
        else rownorm_sum_bf16_kernel<false><<<(unsigned)rows, THREADS, 0, s>>>(xp, denom, d);
        dim3 grid((unsigned)((d + ROW_TILE - 1) / ROW_TILE), (unsigned)rows);
        rownorm_div_bf16_kernel<<<grid, THREADS, 0, s>>>(xp, yp, denom, d);
    } else if (op == OP_RMSNORM_DIM1) {
        int64_t B = x->shape[0], C = x->shape[1], S = kbv_numel(x) / (B * C);
        rms_dim1_bf16_kernel<<<(unsigned)((B * S + 255) / 256), 256, 0, s>>>(xp, yp, B, C, S, (float)eps);
    } else {
        plan pl;
        int rc = make_plan(b, c, &pl, e);
        if (rc) return rc;
        double2 *part = (double2 *)b->ws;
        float2 *stat = (float2 *)((char *)b->ws + (((size_t)(pl.planes * pl.chunks) * sizeof(double2) + 255) & ~(size_t)255));
        stats_bf16_kernel<<<dim3((unsigned)pl.chunks, (unsigned)pl.planes), THREADS, 0, s>>>(xp, pl.L, part);
        finalize_kernel<<<(unsigned)pl.groups, THREADS, 0, s>>>(
            part, (int)pl.chunks, pl.channels_bn, pl.batch_bn, pl.count, eps, pl.frob, stat);
        const bf16 *w = c->n_inputs > 1 ? (const bf16 *)c->inputs[1].data : NULL;
        const bf16 *bias = c->n_inputs > 2 ? (const bf16 *)c->inputs[2].data : NULL;
        apply_bf16_kernel<<<dim3((unsigned)pl.chunks, (unsigned)pl.planes), THREADS, 0, s>>>(
            xp, yp, stat, w, bias, pl.ap);
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "bf16 norm launch", ce);
    if (!b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16: kbv's norm kernels on bf16, statistics in fp32/fp64");
    return 0;
}

} /* namespace */

const base_family base_fam_norm = {
    "norm", OP_BATCHNORM, OP_NORM_LAST, create, run, NULL, NULL, run_bf16,
};

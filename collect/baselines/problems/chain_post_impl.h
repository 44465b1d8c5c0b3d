/* chain_post_impl.h - the kernels of chain_post.cu's post stages that
 * more than one file instantiates: what a stage reads (in_f32, or in_ew:
 * the tensor before the chain's last elementwise pass, the pass applied
 * as each value is read), the pooling, channel and row kernels, and their
 * launchers.  C++ only, private to chain_post*.cu.
 *
 * Why a header.  A first stage that reads through the last pass
 * instantiates every row kernel for each source type, and each of those
 * inlines the whole interpreter of elementwise steps: as one file,
 * chain_post.cu was the build's longest compile by far (117 s of a
 * 2-minute build on two cores, most of a lent GPU host's 92 s build on
 * sixteen), so every fresh device call waited for it alone.  The row
 * kernels through the pass are now instantiated in four files,
 * chain_post_rows_<source>_<output>.cu (rows_through), which compile in
 * parallel with chain_post.cu and each other; the kernels are the same
 * code as before.
 *
 * The templates live in a named namespace, not an anonymous one, so that
 * one definition serves the three files; each kernel is instantiated in
 * exactly one of them.
 */
#ifndef KBV_CHAIN_POST_IMPL_H
#define KBV_CHAIN_POST_IMPL_H

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "base_impl.h"
#include "chain_ew.h"

namespace chain_post_k {

const int THREADS = 256;

__device__ __forceinline__ float out_val(const ew_args &A, float v, long long idx, long long S, long long C)
{
    return A.n_ops ? apply_ops(A, v, (idx / S) % C, idx, v) : v;
}

/* max and min that keep a NaN, as PyTorch's reductions do */
__device__ __forceinline__ float nan_max(float acc, float v)
{
    return (v > acc || isnan(v)) ? v : acc;
}

__device__ __forceinline__ float nan_min(float acc, float v)
{
    return (v < acc || isnan(v)) ? v : acc;
}

/* What a stage reads: the float tensor before it (in_f32); or, for the
 * first stage, the tensor before the chain's last elementwise pass with
 * that pass P applied to each value as it is read (in_ew: no pass over
 * the whole tensor, no copy of it): the producer's bfloat16 output with
 * the bias and first steps (a bf16 chain, chain_post_run16), or the
 * float middle-stage input with the norm and last steps
 * (chain_post_run_through).  at(i, row, j, ch): element i, which is
 * element j of plane row of [N, C, S], of channel ch (the caller knows it
 * without a division); P's rows are those planes. */
struct in_f32 {
    const float *x;
    __device__ __forceinline__ float at(long long i, long long, long long, long long) const { return x[i]; }
};
__device__ __forceinline__ void load8(const float *p, float *v)
{
    float4 a = reinterpret_cast<const float4 *>(p)[0], b = reinterpret_cast<const float4 *>(p)[1];
    v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
    v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
}
__device__ __forceinline__ void load8(const __nv_bfloat16 *p, float *v) { base_ld8_bf16(p, v); }
__device__ __forceinline__ void store8(float *p, const float *v)
{
    reinterpret_cast<float4 *>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4 *>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
}
__device__ __forceinline__ void store8(__nv_bfloat16 *p, const float *v) { base_st8_bf16(p, v); }

template <class T>
struct in_ew {
    const T *x;
    ew_args P;
    __device__ __forceinline__ float at(long long i, long long row, long long j, long long ch) const
    {
        return apply_at(P, row_value(x + i), row, j, ch);
    }
    /* elements i .. i + 7, which are j .. j + 7 of plane row, of channel
     * ch, or (feat, a row of features: P.S = 1) of channels j .. j + 7;
     * 16-byte aligned for T = bfloat16, 32 for float */
    __device__ __forceinline__ void at8(long long i, long long row, long long j, long long ch, float *v,
                                        int feat = 0) const
    {
        load8(x + i, v);
        long long r[8], jj[8], c[8];
#pragma unroll
        for (int u = 0; u < 8; u++) {
            r[u] = row;
            jj[u] = j + u;
            c[u] = feat ? j + u : ch;
        }
        apply_nc<8, true>(P, v, r, jj, c);
    }
};

struct pool_geo {
    long long planes;
    int in[3], out[3], k[3], s[3], p[3];
};

template <int MAX, class IN>
__global__ void pool_kernel(IN x, float *__restrict__ y, pool_geo g, ew_args A, long long So, long long Co,
                            long long Ci)
{
    long long total = g.planes * g.out[0] * g.out[1] * g.out[2];
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        long long r = t;
        int o2 = (int)(r % g.out[2]);
        r /= g.out[2];
        int o1 = (int)(r % g.out[1]);
        r /= g.out[1];
        int o0 = (int)(r % g.out[0]);
        long long pl = r / g.out[0];
        const long long base = pl * g.in[0] * g.in[1] * g.in[2], ch = pl % Ci;
        float acc = MAX ? -INFINITY : 0.0f;
        for (int a = 0; a < g.k[0]; a++) {
            int i0 = o0 * g.s[0] - g.p[0] + a;
            if (i0 < 0 || i0 >= g.in[0]) continue;
            for (int b = 0; b < g.k[1]; b++) {
                int i1 = o1 * g.s[1] - g.p[1] + b;
                if (i1 < 0 || i1 >= g.in[1]) continue;
                for (int c = 0; c < g.k[2]; c++) {
                    int i2 = o2 * g.s[2] - g.p[2] + c;
                    if (i2 < 0 || i2 >= g.in[2]) continue;
                    const long long off = ((long long)i0 * g.in[1] + i1) * g.in[2] + i2;
                    float v = x.at(base + off, pl, off, ch);
                    acc = MAX ? nan_max(acc, v) : acc + v;
                }
            }
        }
        if (!MAX) acc /= (float)(g.k[0] * g.k[1] * g.k[2]);
        y[t] = out_val(A, acc, t, So, Co);
    }
}

/* over dim 1 of [N, C, S], S > 1: one thread per (n, s), coalesced over s */
template <int K, class IN>
__global__ void chan_kernel(IN x, float *__restrict__ y, long long N, long long C, long long S, ew_args A,
                            long long So, long long Co)
{
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < N * S;
         t += (long long)gridDim.x * blockDim.x) {
        long long n = t / S, s = t % S;
        const long long base = n * C * S + s;
        float acc = K == ST_MIN_C ? INFINITY : (K == ST_SUM_C || K == ST_MEAN_C) ? 0.0f : -INFINITY;
        for (long long c = 0; c < C; c++) {
            float v = x.at(base + c * S, n * C + c, s, c);
            if (K == ST_MIN_C) acc = nan_min(acc, v);
            else if (K == ST_SUM_C || K == ST_MEAN_C) acc += v;
            else acc = nan_max(acc, v);
        }
        if (K == ST_LSE_C || K == ST_SOFTMAX_C) {
            float m = isinf(acc) ? 0.0f : acc, sum = 0.0f;
            for (long long c = 0; c < C; c++) sum += expf(x.at(base + c * S, n * C + c, s, c) - m);
            if (K == ST_SOFTMAX_C) {
                for (long long c = 0; c < C; c++) {
                    long long idx = (n * C + c) * S + s;
                    y[idx] = out_val(A, expf(x.at(base + c * S, n * C + c, s, c) - m) / sum, idx, So, Co);
                }
                continue;
            }
            acc = m + logf(sum);
        }
        if (K == ST_MEAN_C) acc /= (float)C;
        y[t] = out_val(A, acc, t, So, Co);
    }
}

/* the block's sum of a double, its max (NaN kept) or min of a float, in
 * every thread */
__device__ inline double row_sum(double v, double *sh)
{
    double z = 0.0;
    block_sum2(v, z);
    if (threadIdx.x == 0) sh[0] = v;
    __syncthreads();
    double r = sh[0];
    __syncthreads();
    return r;
}

template <int MIN>
__device__ float row_ext(float v, float *sh)
{
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = MIN ? nan_min(v, w) : nan_max(v, w);
    }
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float r = sh[0];
        for (int w = 1; w < (int)(blockDim.x >> 5); w++) r = MIN ? nan_min(r, sh[w]) : nan_max(r, sh[w]);
        sh[32] = r;
    }
    __syncthreads();
    float r = sh[32];
    __syncthreads();
    return r;
}

/* one block per contiguous row of L values: reductions to one value,
 * or softmax, centering and layer norm of the row (gamma, beta indexed by
 * the position in the row).  x reads through IN (in_f32, or in_ew for a
 * first stage: a row is then one (n, c) plane of channel row % Cin, or,
 * with Sp = S > 0, a whole sample of Cin planes of Sp values, which for
 * Sp = 1 is a row of Cin features, the channel of each its position); y is
 * float, or the bf16 chain's bfloat16 output when the stage is its last
 * (rounded once, here). */
enum { ROW_SUM, ROW_MEAN, ROW_MAX, ROW_MIN, ROW_LSE, ROW_SOFTMAX, ROW_CENTER, ROW_LN };


template <class IN>
__device__ __forceinline__ float row_at(const IN &x, long long base, long long row, long long j, long long Cin,
                                        long long ch, unsigned Sp)
{
    if (!Sp) return x.at(base + j, row, j, ch);
    if (Sp == 1) return x.at(base + j, row, j, j);
    /* a row of a whole sample [C, S]: plane row * Cin + j / S (32-bit:
     * the launcher checks that L fits) */
    const unsigned c = (unsigned)j / Sp;
    return x.at(base + j, row * Cin + c, (long long)((unsigned)j - c * Sp), (long long)c);
}

template <int K, class IN, class OUT>
__global__ void __launch_bounds__(1024) row_kernel(IN x, OUT *__restrict__ y, long long L, ew_args A, long long So,
                                                   long long Co, const float *gamma, const float *beta, float eps,
                                                   long long Cin, unsigned Sp)
{
    __shared__ double shd[2];
    __shared__ float shf[33];
    const long long row = blockIdx.x, base = row * L, ch = row % Cin;
    float m = 0.0f;
    double s = 0.0, ss = 0.0;
    if (K == ROW_MAX || K == ROW_MIN || K == ROW_LSE || K == ROW_SOFTMAX) {
        float acc = K == ROW_MIN ? INFINITY : -INFINITY;
        for (long long j = threadIdx.x; j < L; j += blockDim.x) {
            float v = row_at(x, base, row, j, Cin, ch, Sp);
            acc = K == ROW_MIN ? nan_min(acc, v) : nan_max(acc, v);
        }
        m = K == ROW_MIN ? row_ext<1>(acc, shf) : row_ext<0>(acc, shf);
        if (K == ROW_LSE || K == ROW_SOFTMAX) {
            float mm = isinf(m) ? 0.0f : m, e = 0.0f;
            for (long long j = threadIdx.x; j < L; j += blockDim.x) e += expf(row_at(x, base, row, j, Cin, ch, Sp) - mm);
            s = row_sum(e, shd);
            m = mm;
        }
    } else {
        float a = 0.0f, q = 0.0f;
        for (long long j = threadIdx.x; j < L; j += blockDim.x) {
            float v = row_at(x, base, row, j, Cin, ch, Sp);
            a += v;
            q += v * v;
        }
        s = row_sum(a, shd);
        if (K == ROW_LN) ss = row_sum(q, shd);
    }
    if (K <= ROW_LSE) {
        if (threadIdx.x != 0) return;
        float r = K == ROW_SUM ? (float)s : K == ROW_MEAN ? (float)(s / (double)L)
                : K == ROW_LSE ? m + (float)log(s) : m;
        st1(y, row, out_val(A, r, row, So, Co));
        return;
    }
    float mean = (float)(s / (double)L), rstd = 1.0f;
    if (K == ROW_LN) {
        double mu = s / (double)L, var = ss / (double)L - mu * mu;
        rstd = (float)(1.0 / sqrt((var < 0 ? 0 : var) + (double)eps));
        mean = (float)mu;
    }
    for (long long j = threadIdx.x; j < L; j += blockDim.x) {
        float v = row_at(x, base, row, j, Cin, ch, Sp);
        if (K == ROW_SOFTMAX) v = expf(v - m) / (float)s;
        else if (K == ROW_CENTER) v = v - mean;
        else v = (v - mean) * rstd * (gamma ? gamma[j] : 1.0f) + (beta ? beta[j] : 0.0f);
        st1(y, base + j, out_val(A, v, base + j, So, Co));
    }
}

/* row_kernel for a first stage through in_ew, eight values a load and a
 * store: rows of planes (Sp = 0; the stage's output, when it has one
 * value per input, is in the same planes, so a value's channel is the
 * row's) or of whole samples (Sp = S), L and S multiples of eight, so
 * that eight values never cross a plane, or of features (Sp = 1, L a
 * multiple of eight).  The sums and extremes are the same as
 * row_kernel's up to the order of the float additions. */
template <int K, class IN, class OUT>
__global__ void __launch_bounds__(1024) row_kernel8(IN x, OUT *__restrict__ y, long long L, ew_args A, long long So,
                                                    long long Co, long long Cin, unsigned Sp)
{
    __shared__ double shd[2];
    __shared__ float shf[33];
    const long long row = blockIdx.x, base = row * L, ch = row % Cin, L8 = L / 8;
    auto load = [&](long long q, float *v) {
        const long long j = 8 * q;
        if (!Sp) {
            x.at8(base + j, row, j, ch, v);
        } else if (Sp == 1) {
            x.at8(base + j, row, j, 0, v, 1);
        } else {
            const unsigned c = (unsigned)j / Sp;
            x.at8(base + j, row * Cin + c, (long long)((unsigned)j - c * Sp), (long long)c, v);
        }
    };
    float m = 0.0f;
    double s = 0.0;
    float v[8];
    if (K == ROW_MAX || K == ROW_SOFTMAX) {
        float acc = -INFINITY;
        for (long long q = threadIdx.x; q < L8; q += blockDim.x) {
            load(q, v);
#pragma unroll
            for (int u = 0; u < 8; u++) acc = nan_max(acc, v[u]);
        }
        m = row_ext<0>(acc, shf);
        if (K == ROW_SOFTMAX) {
            float mm = isinf(m) ? 0.0f : m, e = 0.0f;
            for (long long q = threadIdx.x; q < L8; q += blockDim.x) {
                load(q, v);
#pragma unroll
                for (int u = 0; u < 8; u++) e += expf(v[u] - mm);
            }
            s = row_sum(e, shd);
            m = mm;
        }
    } else {
        float a = 0.0f;
        for (long long q = threadIdx.x; q < L8; q += blockDim.x) {
            load(q, v);
#pragma unroll
            for (int u = 0; u < 8; u++) a += v[u];
        }
        s = row_sum(a, shd);
    }
    if (K == ROW_SUM || K == ROW_MEAN || K == ROW_MAX) {
        if (threadIdx.x != 0) return;
        float r = K == ROW_SUM ? (float)s : K == ROW_MEAN ? (float)(s / (double)L) : m;
        st1(y, row, out_val(A, r, row, So, Co));
        return;
    }
    const float mean = (float)(s / (double)L);
    for (long long q = threadIdx.x; q < L8; q += blockDim.x) {
        load(q, v);
#pragma unroll
        for (int u = 0; u < 8; u++) {
            float w = K == ROW_SOFTMAX ? expf(v[u] - m) / (float)s : v[u] - mean;
            v[u] = A.n_ops ? apply_ops(A, w, Sp == 1 ? 8 * q + u : ch, base + 8 * q + u, w) : w;
        }
        store8(y + base + 8 * q, v);
    }
}

inline unsigned blocks_for(const base_ctx *b, long long n)
{
    long long g = (n + THREADS - 1) / THREADS, cap = (long long)b->sm_count * 32;
    if (g > cap) g = cap;
    return (unsigned)(g < 1 ? 1 : g);
}

/* Threads per row: a long row needs many loads in flight from its one
 * block; a short one (3 and 34 normalise millions of rows of 64) would
 * leave most of a wide block idle, so it gets one or two warps. */
inline int row_threads(long long L)
{
    return L >= 8192 ? 1024 : L >= 1024 ? 256 : L > 64 ? 64 : 32;
}

template <int K, class IN = in_f32, class OUT = float>
void launch_row(IN x, OUT *y, long long rows, long long L, const ew_args &A, long long So, long long Co,
                const float *g, const float *bt, float eps, cudaStream_t s, long long Cin = 1, unsigned Sp = 0)
{
    row_kernel<K><<<(unsigned)rows, row_threads(L), 0, s>>>(x, y, L, A, So, Co, g, bt, eps, Cin, Sp);
}

/* A first stage over the planes of a map (one row per (n, c), L = S) or
 * over whole samples (one row per n, L = C S; with S = 1 a row of
 * features) through in_ew, into y: float, or the chain's bfloat16 output
 * when the stage is its last. */
template <int K, class IN, class OUT>
void launch_rows_through(IN x, OUT *y, const chain_dims &d, int whole, const ew_args &A, long long So, long long Co,
                         cudaStream_t s)
{
    long long S = chain_spatial(&d), rows = whole ? d.N : d.N * d.C, L = whole ? d.C * S : S;
    unsigned Sp = whole ? (unsigned)S : 0u;
    /* eight values never cross a plane (or, for features, a row) */
    if ((S > 1 ? S : L) % 8 == 0 && K != ROW_MIN && K != ROW_LSE) {
        /* eight values a load; the rows start 16-byte aligned (32 for
         * float), the buffers being cudaMalloc's */
        row_kernel8<K><<<(unsigned)rows, row_threads(L / 8), 0, s>>>(x, y, L, A, So, Co, d.C, Sp);
        return;
    }
    launch_row<K>(x, y, rows, L, A, So, Co, NULL, NULL, 0, s, d.C, Sp);
}

template <class IN>
void launch_pool(const base_ctx *b, const chain_stage *st, IN x, float *y, const chain_dims &d, const chain_dims &o,
                 const ew_args &A, cudaStream_t s)
{
    pool_geo g;
    g.planes = d.N * d.C;
    int off = 3 - d.nd;
    for (int i = 0; i < 3; i++) {
        int ax = i - off;
        g.in[i] = ax >= 0 ? (int)d.d[ax] : 1;
        g.out[i] = ax >= 0 ? (int)o.d[ax] : 1;
        g.k[i] = ax >= 0 ? st->k : 1;
        g.s[i] = ax >= 0 ? (st->s > 0 ? st->s : st->k) : 1;
        g.p[i] = ax >= 0 ? st->pad : 0;
    }
    unsigned nb = blocks_for(b, chain_numel(&o));
    if (st->kind == ST_MAXPOOL)
        pool_kernel<1><<<nb, THREADS, 0, s>>>(x, y, g, A, chain_spatial(&o), o.C, d.C);
    else
        pool_kernel<0><<<nb, THREADS, 0, s>>>(x, y, g, A, chain_spatial(&o), o.C, d.C);
}

/* a reduction or softmax over dim 1 of a map (S > 1) */
template <class IN>
void launch_chan_map(const base_ctx *b, int kind, IN x, float *y, const chain_dims &d, const chain_dims &o,
                     const ew_args &A, cudaStream_t s)
{
    long long S = chain_spatial(&d), So = chain_spatial(&o);
    unsigned nb = blocks_for(b, d.N * S);
    switch (kind) {
    case ST_SUM_C: chan_kernel<ST_SUM_C><<<nb, THREADS, 0, s>>>(x, y, d.N, d.C, S, A, So, o.C); break;
    case ST_MEAN_C: chan_kernel<ST_MEAN_C><<<nb, THREADS, 0, s>>>(x, y, d.N, d.C, S, A, So, o.C); break;
    case ST_MAX_C: chan_kernel<ST_MAX_C><<<nb, THREADS, 0, s>>>(x, y, d.N, d.C, S, A, So, o.C); break;
    case ST_MIN_C: chan_kernel<ST_MIN_C><<<nb, THREADS, 0, s>>>(x, y, d.N, d.C, S, A, So, o.C); break;
    case ST_LSE_C: chan_kernel<ST_LSE_C><<<nb, THREADS, 0, s>>>(x, y, d.N, d.C, S, A, So, o.C); break;
    default: chan_kernel<ST_SOFTMAX_C><<<nb, THREADS, 0, s>>>(x, y, d.N, d.C, S, A, So, o.C); break;
    }
}

/* launch_rows_through<kind> (kind a ROW_* but ROW_LN) of a first stage
 * that reads src through the pass P (in_ew) into y: one for each pair of
 * source and output types, each in a file of its own,
 * chain_post_rows_<source>_<output>.cu. */
void rows_through(const float *src, const ew_args &P, int kind, float *y, const chain_dims &d, int whole,
                  const ew_args &A, long long So, long long Co, cudaStream_t s);
void rows_through(const float *src, const ew_args &P, int kind, __nv_bfloat16 *y, const chain_dims &d, int whole,
                  const ew_args &A, long long So, long long Co, cudaStream_t s);
void rows_through(const __nv_bfloat16 *src, const ew_args &P, int kind, float *y, const chain_dims &d, int whole,
                  const ew_args &A, long long So, long long Co, cudaStream_t s);
void rows_through(const __nv_bfloat16 *src, const ew_args &P, int kind, __nv_bfloat16 *y, const chain_dims &d,
                  int whole, const ew_args &A, long long So, long long Co, cudaStream_t s);

/* rows_through's body for a source of type T and an output of type OUT. */
template <class T, class OUT>
void rows_through_kind(const T *src, const ew_args &P, int kind, OUT *y, const chain_dims &d, int whole,
                       const ew_args &A, long long So, long long Co, cudaStream_t s)
{
    in_ew<T> in = { src, P };
    switch (kind) {
    case ROW_SUM: launch_rows_through<ROW_SUM>(in, y, d, whole, A, So, Co, s); break;
    case ROW_MEAN: launch_rows_through<ROW_MEAN>(in, y, d, whole, A, So, Co, s); break;
    case ROW_MAX: launch_rows_through<ROW_MAX>(in, y, d, whole, A, So, Co, s); break;
    case ROW_MIN: launch_rows_through<ROW_MIN>(in, y, d, whole, A, So, Co, s); break;
    case ROW_LSE: launch_rows_through<ROW_LSE>(in, y, d, whole, A, So, Co, s); break;
    case ROW_SOFTMAX: launch_rows_through<ROW_SOFTMAX>(in, y, d, whole, A, So, Co, s); break;
    default: launch_rows_through<ROW_CENTER>(in, y, d, whole, A, So, Co, s); break;
    }
}

} /* namespace chain_post_k */

#endif

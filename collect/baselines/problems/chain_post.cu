/* chain_post.cu - the post stages of a level-2 chain (chain.h's ST_*
 * kinds): poolings, reductions over channels, positions, one axis or
 * everything, softmaxes, a group or layer norm, and two broadcasts.  Each
 * stage is one pass (a group norm two) from the tensor before it into the
 * next buffer, the last into the call's output, and applies its own
 * elementwise list to each value it writes, so a stage costs what
 * PyTorch's kernel for the same operation costs, without PyTorch's extra
 * elementwise passes.  The first stage may also read its input through
 * the chain's last elementwise pass (in_ew: chain_post_run16,
 * chain_post_run_through), so that pass never writes its output.
 *
 * Every kernel indexes its output flat (idx); the channel of a value is
 * (idx / S) % C of the output shape, which holds for every layout here.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"
#include "chain_ew.h"

struct chain_post {
    const chain_spec *sp;
    float *buf[2];              /* ping-pong between stages, each the largest stage output */
    float2 *stat;               /* group norm statistics */
};

namespace {

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
__device__ double row_sum(double v, double *sh)
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

/* over one axis: [outer, len, inner] -> [outer, inner] */
template <int K>
__global__ void axis_kernel(const float *__restrict__ x, float *__restrict__ y, long long outer, long long len,
                            long long inner, ew_args A, long long So, long long Co)
{
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < outer * inner;
         t += (long long)gridDim.x * blockDim.x) {
        long long o = t / inner, i = t % inner;
        const float *p = x + o * len * inner + i;
        float acc = K == ST_MIN_AXIS ? INFINITY : 0.0f;
        for (long long a = 0; a < len; a++) acc = K == ST_MIN_AXIS ? nan_min(acc, p[a * inner]) : acc + p[a * inner];
        if (K == ST_MEAN_AXIS) acc /= (float)len;
        y[t] = out_val(A, acc, t, So, Co);
    }
}

/* group norm: statistics per (n, group) of len contiguous values, then the
 * normalisation with gamma and beta per channel */
__global__ void __launch_bounds__(256) group_stats(const float *__restrict__ x, long long len, float eps,
                                                   float2 *__restrict__ stat)
{
    __shared__ double shd[2];
    const float *p = x + (long long)blockIdx.x * len;
    float a = 0.0f, q = 0.0f;
    for (long long j = threadIdx.x; j < len; j += blockDim.x) {
        float v = p[j];
        a += v;
        q += v * v;
    }
    double s = row_sum(a, shd), ss = row_sum(q, shd);
    if (threadIdx.x == 0) {
        double mu = s / (double)len, var = ss / (double)len - mu * mu;
        stat[blockIdx.x] = make_float2((float)mu, (float)(1.0 / sqrt((var < 0 ? 0 : var) + (double)eps)));
    }
}

__global__ void group_apply(const float *__restrict__ x, float *__restrict__ y, long long total, long long C,
                            long long S, long long G, const float2 *__restrict__ stat, const float *gamma,
                            const float *beta, ew_args A)
{
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        long long c = (t / S) % C, n = t / (C * S);
        float2 st = stat[n * G + c / (C / G)];
        float v = (x[t] - st.x) * st.y;
        if (gamma) v = v * gamma[c] + beta[c];
        y[t] = out_val(A, v, t, S, C);
    }
}

/* [N] + p[Cp] -> [Cp, N], and [N] + x0[N, F] -> [N, F]; q, the input
 * added, is float or the BF16 setting's bfloat16 x0 as the call has it,
 * y float or the bf16 chain's output (rounded once). */
template <class TQ, class TY>
__global__ void outer_kernel(const float *__restrict__ x, TY *__restrict__ y, long long N, long long M,
                             const TQ *__restrict__ q, int x0, ew_args A, long long So, long long Co)
{
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < N * M;
         t += (long long)gridDim.x * blockDim.x) {
        float v = x0 ? x[t / M] + row_value(q + t) : x[t % N] + row_value(q + t / N);
        st1(y, t, out_val(A, v, t, So, Co));
    }
}

unsigned blocks_for(const base_ctx *b, long long n);

/* ST_OUTER_ADD_P or ST_ADD_X0 from x (shape d) into y, or into the bf16
 * chain's output y16; the input added is read in the type the call has
 * it (a bf16 path keeps x0 bfloat16: chain_reads_param). */
void launch_outer(const base_ctx *b, const chain_stage *st, const float *x, float *y, __nv_bfloat16 *y16,
                  const chain_dims &d, const chain_dims &o, const ew_args &A, const kbv_call *c, cudaStream_t s)
{
    const int x0 = st->kind == ST_ADD_X0;
    const kbv_tensor &qt = c->inputs[x0 ? 0 : st->p];
    unsigned nb = blocks_for(b, chain_numel(&o));
    long long So = chain_spatial(&o);
    if (qt.dtype == KBV_BF16) {
        const __nv_bfloat16 *q = (const __nv_bfloat16 *)qt.data;
        if (y16) outer_kernel<<<nb, THREADS, 0, s>>>(x, y16, d.N, o.C, q, x0, A, So, o.C);
        else outer_kernel<<<nb, THREADS, 0, s>>>(x, y, d.N, o.C, q, x0, A, So, o.C);
    } else {
        const float *q = (const float *)qt.data;
        if (y16) outer_kernel<<<nb, THREADS, 0, s>>>(x, y16, d.N, o.C, q, x0, A, So, o.C);
        else outer_kernel<<<nb, THREADS, 0, s>>>(x, y, d.N, o.C, q, x0, A, So, o.C);
    }
}

unsigned blocks_for(const base_ctx *b, long long n)
{
    long long g = (n + THREADS - 1) / THREADS, cap = (long long)b->sm_count * 32;
    if (g > cap) g = cap;
    return (unsigned)(g < 1 ? 1 : g);
}

/* Threads per row: a long row needs many loads in flight from its one
 * block; a short one (3 and 34 normalise millions of rows of 64) would
 * leave most of a wide block idle, so it gets one or two warps. */
int row_threads(long long L)
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
 * features) through in_ew: into float y, or, as the chain's last stage,
 * into its bfloat16 output y16. */
template <int K, class IN>
void launch_rows_through(IN x, float *y, __nv_bfloat16 *y16, const chain_dims &d, int whole, const ew_args &A,
                         long long So, long long Co, cudaStream_t s)
{
    long long S = chain_spatial(&d), rows = whole ? d.N : d.N * d.C, L = whole ? d.C * S : S;
    unsigned Sp = whole ? (unsigned)S : 0u;
    /* eight values never cross a plane (or, for features, a row) */
    if ((S > 1 ? S : L) % 8 == 0 && K != ROW_MIN && K != ROW_LSE) {
        /* eight values a load; the rows start 16-byte aligned (32 for
         * float), the buffers being cudaMalloc's */
        if (y16) row_kernel8<K><<<(unsigned)rows, row_threads(L / 8), 0, s>>>(x, y16, L, A, So, Co, d.C, Sp);
        else row_kernel8<K><<<(unsigned)rows, row_threads(L / 8), 0, s>>>(x, y, L, A, So, Co, d.C, Sp);
        return;
    }
    if (y16) launch_row<K>(x, y16, rows, L, A, So, Co, NULL, NULL, 0, s, d.C, Sp);
    else launch_row<K>(x, y, rows, L, A, So, Co, NULL, NULL, 0, s, d.C, Sp);
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

/* a reduction or softmax over dim 1 */
void launch_chan(const base_ctx *b, int kind, const float *x, float *y, const chain_dims &d,
                 const chain_dims &o, const ew_args &A, cudaStream_t s)
{
    long long S = chain_spatial(&d), So = chain_spatial(&o);
    if (S == 1) {
        /* contiguous rows of C values */
        int k = kind == ST_SUM_C ? ROW_SUM : kind == ST_MEAN_C ? ROW_MEAN : kind == ST_MAX_C ? ROW_MAX
              : kind == ST_MIN_C ? ROW_MIN : kind == ST_LSE_C ? ROW_LSE : ROW_SOFTMAX;
        switch (k) {
        case ROW_SUM: launch_row<ROW_SUM>(in_f32{x}, y, d.N, d.C, A, So, o.C, NULL, NULL, 0, s); break;
        case ROW_MEAN: launch_row<ROW_MEAN>(in_f32{x}, y, d.N, d.C, A, So, o.C, NULL, NULL, 0, s); break;
        case ROW_MAX: launch_row<ROW_MAX>(in_f32{x}, y, d.N, d.C, A, So, o.C, NULL, NULL, 0, s); break;
        case ROW_MIN: launch_row<ROW_MIN>(in_f32{x}, y, d.N, d.C, A, So, o.C, NULL, NULL, 0, s); break;
        case ROW_LSE: launch_row<ROW_LSE>(in_f32{x}, y, d.N, d.C, A, So, o.C, NULL, NULL, 0, s); break;
        default: launch_row<ROW_SOFTMAX>(in_f32{x}, y, d.N, d.C, A, So, o.C, NULL, NULL, 0, s); break;
        }
        return;
    }
    launch_chan_map(b, kind, in_f32{x}, y, d, o, A, s);
}

/* one stage from x (shape d) into y (shape o) */
int run_stage(base_ctx *b, chain_post *cp, const chain_stage *st, const float *x, float *y,
              const chain_dims &d, const chain_dims &o, const kbv_call *c, kbv_err *e)
{
    cudaStream_t s = c->stream;
    ew_args A;
    memset(&A, 0, sizeof A);
    chain_fill_ops(&A, st->ew, c);
    long long S = chain_spatial(&d), So = chain_spatial(&o), n = chain_numel(&d);
    const float *g = st->gamma >= 0 && st->gamma < c->n_inputs ? (const float *)c->inputs[st->gamma].data : NULL;
    const float *bt = st->beta >= 0 && st->beta < c->n_inputs ? (const float *)c->inputs[st->beta].data : NULL;
    switch (st->kind) {
    case ST_MAXPOOL: case ST_AVGPOOL:
        launch_pool(b, st, in_f32{x}, y, d, o, A, s);
        break;
    case ST_SUM_C: case ST_MEAN_C: case ST_MAX_C: case ST_MIN_C: case ST_LSE_C: case ST_SOFTMAX_C:
        launch_chan(b, st->kind, x, y, d, o, A, s);
        break;
    case ST_SUM_S: launch_row<ROW_SUM>(in_f32{x}, y, d.N * d.C, S, A, So, o.C, NULL, NULL, 0, s); break;
    case ST_MEAN_S: launch_row<ROW_MEAN>(in_f32{x}, y, d.N * d.C, S, A, So, o.C, NULL, NULL, 0, s); break;
    case ST_SUM_ALL: launch_row<ROW_SUM>(in_f32{x}, y, d.N, d.C * S, A, So, o.C, NULL, NULL, 0, s); break;
    case ST_MEAN_ALL: launch_row<ROW_MEAN>(in_f32{x}, y, d.N, d.C * S, A, So, o.C, NULL, NULL, 0, s); break;
    case ST_MAX_ALL: launch_row<ROW_MAX>(in_f32{x}, y, d.N, d.C * S, A, So, o.C, NULL, NULL, 0, s); break;
    case ST_SOFTMAX_S: launch_row<ROW_SOFTMAX>(in_f32{x}, y, d.N * d.C, S, A, So, o.C, NULL, NULL, 0, s); break;
    case ST_CENTER_S: launch_row<ROW_CENTER>(in_f32{x}, y, d.N * d.C, S, A, So, o.C, NULL, NULL, 0, s); break;
    case ST_LAYERNORM_LAST: {
        long long L = d.d[d.nd - 1];
        launch_row<ROW_LN>(in_f32{x}, y, n / L, L, A, So, o.C, g, bt, (float)st->eps, s);
        break;
    }
    case ST_SUM_AXIS: case ST_MEAN_AXIS: case ST_MIN_AXIS: {
        long long outer = d.N * d.C, inner = 1;
        for (int i = 0; i < st->axis; i++) outer *= d.d[i];
        for (int i = st->axis + 1; i < d.nd; i++) inner *= d.d[i];
        long long len = d.d[st->axis];
        unsigned nb = blocks_for(b, outer * inner);
        if (st->kind == ST_SUM_AXIS)
            axis_kernel<ST_SUM_AXIS><<<nb, THREADS, 0, s>>>(x, y, outer, len, inner, A, So, o.C);
        else if (st->kind == ST_MEAN_AXIS)
            axis_kernel<ST_MEAN_AXIS><<<nb, THREADS, 0, s>>>(x, y, outer, len, inner, A, So, o.C);
        else
            axis_kernel<ST_MIN_AXIS><<<nb, THREADS, 0, s>>>(x, y, outer, len, inner, A, So, o.C);
        break;
    }
    case ST_GROUPNORM: {
        long long G = st->axis;
        group_stats<<<(unsigned)(d.N * G), 256, 0, s>>>(x, d.C / G * S, (float)st->eps, cp->stat);
        group_apply<<<blocks_for(b, n), THREADS, 0, s>>>(x, y, n, d.C, S, G, cp->stat, g, bt, A);
        break;
    }
    case ST_OUTER_ADD_P: case ST_ADD_X0:
        launch_outer(b, st, x, y, NULL, d, o, A, c, s);
        break;
    case ST_FLAT: {
        cudaError_t ce = cudaMemcpyAsync(y, x, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, s);
        if (ce != cudaSuccess) return base_cuda_err(e, b, "copy", ce);
        break;
    }
    default:
        return err_set(e, KBV_EINPUT, "baseline %s: unknown post stage %d", b->p->id, st->kind);
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "post stage launch", ce);
    return 0;
}

} /* namespace */

void chain_input_pool(const base_ctx *b, const float *x, float *y, const kbv_tensor &xt, int k, cudaStream_t s)
{
    chain_dims d, o;
    memset(&d, 0, sizeof d);
    d.N = xt.shape[0];
    d.C = xt.shape[1];
    d.nd = xt.ndim - 2;
    for (int i = 0; i < d.nd; i++) d.d[i] = xt.shape[2 + i];
    o = d;
    chain_stage st;
    memset(&st, 0, sizeof st);
    st.kind = ST_AVGPOOL;
    st.k = k;
    st.s = k;
    for (int i = 0; i < o.nd; i++) o.d[i] = d.d[i] / k;
    ew_args A;
    memset(&A, 0, sizeof A);
    launch_pool(b, &st, in_f32{x}, y, d, o, A, s);
}

int chain_post_create(base_ctx *b, const chain_spec *sp, chain_post **out, kbv_err *e)
{
    *out = NULL;
    if (sp->post[0].kind == ST_END) return 0;
    chain_dims prod, d, fin;
    long long mx;
    if (chain_shapes(b->p, sp, &prod, &d, &fin, &mx))
        return err_set(e, KBV_EINPUT, "baseline %s: post stages do not fit the shapes", b->p->id);
    /* the buffers hold every stage's output but the last (which is the
     * call's output) */
    long long stat = 1;
    mx = 1;
    for (int i = 0; i < CHAIN_MAX_STAGES && sp->post[i].kind != ST_END; i++) {
        if (sp->post[i].kind == ST_GROUPNORM && d.N * sp->post[i].axis > stat) stat = d.N * sp->post[i].axis;
        chain_stage_shape(b->p, &sp->post[i], &d);
        int last = i + 1 == CHAIN_MAX_STAGES || sp->post[i + 1].kind == ST_END;
        if (!last && chain_numel(&d) > mx) mx = chain_numel(&d);
    }
    chain_post *cp = (chain_post *)calloc(1, sizeof *cp);
    if (!cp) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
    cp->sp = sp;
    cudaError_t ce = cudaMalloc(&cp->buf[0], (size_t)mx * sizeof(float));
    if (ce == cudaSuccess) ce = cudaMalloc(&cp->buf[1], (size_t)mx * sizeof(float));
    if (ce == cudaSuccess) ce = cudaMalloc(&cp->stat, (size_t)stat * sizeof(float2));
    if (ce != cudaSuccess) {
        chain_post_destroy(cp);
        return base_cuda_err(e, b, "post stage buffers", ce);
    }
    *out = cp;
    return 0;
}

namespace {

/* Whether stage st, shape d (S > 1), can read its input through the
 * chain's last elementwise pass (in_ew): a pooling, a reduction or
 * softmax over the channels of a map, a reduction, softmax or centering
 * over the positions of each plane, or a reduction over each whole
 * sample (whose row_kernel finds a value's plane with a 32-bit division,
 * so C S must fit).  A stage that reads each value more than once (a
 * softmax, a log-sum-exp, a centering, overlapping pooling windows)
 * repeats the pass for each read, so it reads through only a cheap one
 * (no transcendental step: cheap_pass), whose repetition costs less than
 * the tensor it does not write and read again.  At 6139d67 a log-sum-exp
 * over channels through a norm, tanh and hardswish (L2_092) took 1.6x
 * the separate pass and stage (fp32 1.02 of PyTorch's time against
 * 0.62), while a centring through a batch norm alone (L2_015) was faster
 * fused (0.79 against 0.83; bf16 0.48 against 0.61). */
int reads_through(const chain_stage *st, const chain_dims &d, int cheap_pass)
{
    long long S = chain_spatial(&d);
    if (S < 1) return 0;
    if (S == 1) {
        /* rows of features: the reductions and softmax over them, and
         * over the whole sample, which is the same row */
        switch (st->kind) {
        case ST_SUM_C: case ST_MEAN_C: case ST_MAX_C: case ST_MIN_C:
        case ST_SUM_ALL: case ST_MEAN_ALL: case ST_MAX_ALL:
            return d.C < 0x7fffffffLL;
        case ST_LSE_C: case ST_SOFTMAX_C:
            return cheap_pass && d.C < 0x7fffffffLL;
        default: return 0;
        }
    }
    switch (st->kind) {
    case ST_MAXPOOL: case ST_AVGPOOL:
        return cheap_pass || (st->s > 0 ? st->s : st->k) >= st->k;
    case ST_SUM_C: case ST_MEAN_C: case ST_MAX_C: case ST_MIN_C:
    case ST_SUM_S: case ST_MEAN_S:
        return 1;
    case ST_LSE_C: case ST_SOFTMAX_C: case ST_SOFTMAX_S: case ST_CENTER_S:
        return cheap_pass;
    case ST_SUM_ALL: case ST_MEAN_ALL: case ST_MAX_ALL:
        return d.C * S < 0x7fffffffLL;
    default: return 0;
    }
}

/* The first stage from src (T: float or bfloat16) through P (stage shape
 * d to o) into y, or, when it is the chain's last stage and the caller
 * gave out16, a row stage into out16 (*wrote16 = 1). */
template <class T>
int run_first_through(base_ctx *b, const chain_stage *st, const T *src, const ew_args &P, float *y,
                      const chain_dims &d, const chain_dims &o, int last, void *out16, int *wrote16,
                      const kbv_call *c, kbv_err *e)
{
    if (!reads_through(st, d, 1))
        return err_set(e, KBV_EINPUT, "baseline %s: post stage 0 cannot read through the last pass", b->p->id);
    ew_args A;
    memset(&A, 0, sizeof A);
    chain_fill_ops(&A, st->ew, c);
    in_ew<T> in = { src, P };
    long long So = chain_spatial(&o);
    __nv_bfloat16 *y16 = last && out16 && wrote16 ? (__nv_bfloat16 *)out16 : NULL;
    cudaStream_t s = c->stream;
    if (chain_spatial(&d) == 1) {
        /* rows of features (launch_chan's S = 1 rows, through P) */
        switch (st->kind) {
        case ST_SUM_C: case ST_SUM_ALL: launch_rows_through<ROW_SUM>(in, y, y16, d, 1, A, So, o.C, s); break;
        case ST_MEAN_C: case ST_MEAN_ALL: launch_rows_through<ROW_MEAN>(in, y, y16, d, 1, A, So, o.C, s); break;
        case ST_MAX_C: case ST_MAX_ALL: launch_rows_through<ROW_MAX>(in, y, y16, d, 1, A, So, o.C, s); break;
        case ST_MIN_C: launch_rows_through<ROW_MIN>(in, y, y16, d, 1, A, So, o.C, s); break;
        case ST_LSE_C: launch_rows_through<ROW_LSE>(in, y, y16, d, 1, A, So, o.C, s); break;
        default: launch_rows_through<ROW_SOFTMAX>(in, y, y16, d, 1, A, So, o.C, s); break;
        }
        if (y16) *wrote16 = 1;
        cudaError_t ce = cudaGetLastError();
        return ce == cudaSuccess ? 0 : base_cuda_err(e, b, "post stage launch", ce);
    }
    switch (st->kind) {
    case ST_MAXPOOL: case ST_AVGPOOL: launch_pool(b, st, in, y, d, o, A, s); y16 = NULL; break;
    case ST_SUM_S: launch_rows_through<ROW_SUM>(in, y, y16, d, 0, A, So, o.C, s); break;
    case ST_MEAN_S: launch_rows_through<ROW_MEAN>(in, y, y16, d, 0, A, So, o.C, s); break;
    case ST_SOFTMAX_S: launch_rows_through<ROW_SOFTMAX>(in, y, y16, d, 0, A, So, o.C, s); break;
    case ST_CENTER_S: launch_rows_through<ROW_CENTER>(in, y, y16, d, 0, A, So, o.C, s); break;
    case ST_SUM_ALL: launch_rows_through<ROW_SUM>(in, y, y16, d, 1, A, So, o.C, s); break;
    case ST_MEAN_ALL: launch_rows_through<ROW_MEAN>(in, y, y16, d, 1, A, So, o.C, s); break;
    case ST_MAX_ALL: launch_rows_through<ROW_MAX>(in, y, y16, d, 1, A, So, o.C, s); break;
    default: launch_chan_map(b, st->kind, in, y, d, o, A, s); y16 = NULL; break;
    }
    if (y16) *wrote16 = 1;
    cudaError_t ce = cudaGetLastError();
    return ce == cudaSuccess ? 0 : base_cuda_err(e, b, "post stage launch", ce);
}

/* The stages from src (float); with P, the first that is not a view
 * (ST_FLAT) reads src (bfloat16 when src16) through P, and may write
 * out16 (run_first_through). */
int run_stages(base_ctx *b, chain_post *cp, const float *src, const __nv_bfloat16 *src16, const ew_args *P,
               chain_dims d, const kbv_call *c, void *out16, int *wrote16, kbv_err *e)
{
    const chain_spec *sp = cp->sp;
    int n = 0;
    while (n < CHAIN_MAX_STAGES && sp->post[n].kind != ST_END) n++;
    const float *cur = src;
    int which = 0, first = 1;
    if (wrote16) *wrote16 = 0;
    for (int i = 0; i < n; i++) {
        const chain_stage *st = &sp->post[i];
        chain_dims o = d;
        if (chain_stage_shape(b->p, st, &o))
            return err_set(e, KBV_EINPUT, "baseline %s: post stage %d does not fit its shape", b->p->id, i);
        if (st->kind == ST_FLAT && i + 1 < n) {
            d = o; /* a view: the next stage reads the same values */
            continue;
        }
        float *dst = i + 1 == n ? (float *)c->outputs[0].data : cp->buf[which];
        which ^= 1;
        int rc;
        if (first && P && src16) {
            rc = run_first_through(b, st, src16, *P, dst, d, o, i + 1 == n, out16, wrote16, c, e);
        } else if (first && P) {
            rc = run_first_through(b, st, src, *P, dst, d, o, i + 1 == n, out16, wrote16, c, e);
        } else if (i + 1 == n && out16 && wrote16 && (st->kind == ST_ADD_X0 || st->kind == ST_OUTER_ADD_P)) {
            /* the last stage writes the bf16 output itself */
            ew_args A;
            memset(&A, 0, sizeof A);
            chain_fill_ops(&A, st->ew, c);
            launch_outer(b, st, cur, NULL, (__nv_bfloat16 *)out16, d, o, A, c, c->stream);
            cudaError_t ce = cudaGetLastError();
            rc = ce == cudaSuccess ? 0 : base_cuda_err(e, b, "post stage launch", ce);
            *wrote16 = 1;
        } else {
            rc = run_stage(b, cp, st, cur, dst, d, o, c, e);
        }
        first = 0;
        if (rc) return rc;
        cur = dst;
        d = o;
    }
    return 0;
}

} /* namespace */

int chain_post_run(base_ctx *b, chain_post *cp, const float *src, chain_dims d, const kbv_call *c, void *out16,
                   int *wrote16, kbv_err *e)
{
    return run_stages(b, cp, src, NULL, NULL, d, c, out16, wrote16, e);
}

int chain_post_reads_through(const chain_post *cp, chain_dims d, int cheap_pass)
{
    return cp && cp->sp->post[0].kind != ST_END && reads_through(&cp->sp->post[0], d, cheap_pass);
}

int chain_post_view_reads16(const chain_post *cp, chain_dims d)
{
    if (!cp || cp->sp->post[0].kind != ST_FLAT || cp->sp->post[1].kind == ST_END) return 0;
    if (chain_stage_shape(NULL, &cp->sp->post[0], &d)) return 0;
    return reads_through(&cp->sp->post[1], d, 1);
}

int chain_ew_cheap(int kind)
{
    switch (kind) {
    case EW_GELU: case EW_SIGMOID: case EW_TANH: case EW_SWISH: case EW_MISH: return 0;
    default: return 1;
    }
}

int chain_post_run16(base_ctx *b, chain_post *cp, const __nv_bfloat16 *src16, const ew_args &P, chain_dims d,
                     const kbv_call *c, void *out16, int *wrote16, kbv_err *e)
{
    return run_stages(b, cp, NULL, src16, &P, d, c, out16, wrote16, e);
}

int chain_post_run_through(base_ctx *b, chain_post *cp, const float *src, const ew_args &P, chain_dims d,
                           const kbv_call *c, void *out16, int *wrote16, kbv_err *e)
{
    return run_stages(b, cp, src, NULL, &P, d, c, out16, wrote16, e);
}

void chain_post_destroy(chain_post *cp)
{
    if (!cp) return;
    if (cp->buf[0]) cudaFree(cp->buf[0]);
    if (cp->buf[1]) cudaFree(cp->buf[1]);
    if (cp->stat) cudaFree(cp->stat);
    free(cp);
}

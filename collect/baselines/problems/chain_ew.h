/* chain_ew.h - the elementwise steps of a level-2 chain on the GPU
 * (chain.h's EW_* kinds), shared by chain.cu (the producer's epilogue and
 * the middle stage), chain_post.cu (the post stages) and chain_bf16.cu
 * (the bf16 paths), and the chain's state they share.  C++ only, private
 * to collect/baselines/problems/.
 */
#ifndef KBV_CHAIN_EW_H
#define KBV_CHAIN_EW_H

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>

#include "base_impl.h"

extern "C" {
#include "chain.h"
}

struct ew_args {
    int n_ops;
    int kind[CHAIN_MAX_EW];
    float a[CHAIN_MAX_EW], b[CHAIN_MAX_EW];
    const void *p[CHAIN_MAX_EW];
    int p_scalar[CHAIN_MAX_EW];       /* 1: a single value, 2: a whole tensor (EW_*_T), else per channel */
    const void *bias;                 /* per channel, first; or NULL */
    int norm;                         /* MID_* of a norm, or 0 */
    const float2 *stat;               /* mean, rstd per statistic group */
    const void *gamma, *beta;         /* per channel, or NULL */
    long long C, S, rows, L;
    int G;
    /* The type of the tensors p, bias, gamma and beta point at: 0 float,
     * 1 bfloat16 (the BF16 setting's parameters, read as they are and
     * widened in registers; chain_bf16.cu's native paths). */
    int pbf16;
};

/* One value as a float, from float or bfloat16; and one float stored as
 * float or rounded to bfloat16: the scalar accesses of the chain kernels
 * that run on either type (the bf16 baseline reads a bfloat16 producer
 * output as it is and writes the call's bfloat16 output directly). */
__device__ __forceinline__ float row_value(const float *p) { return *p; }
__device__ __forceinline__ float row_value(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
__device__ __forceinline__ void st1(float *y, long long j, float v) { y[j] = v; }
__device__ __forceinline__ void st1(__nv_bfloat16 *y, long long j, float v) { y[j] = __float2bfloat16_rn(v); }

/* Element i of a parameter of A, as a float. */
__device__ __forceinline__ float ew_par(const ew_args &A, const void *p, long long i)
{
    return A.pbf16 ? __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i])
                   : static_cast<const float *>(p)[i];
}

__device__ __forceinline__ float gelu_erf(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

__device__ __forceinline__ float mish(float x)
{
    /* PyTorch's CUDA mish: x * tanh(log1p(exp(x))) */
    return x * tanhf(log1pf(expf(x)));
}

/* The operation list of A on one value: c is its channel (or feature),
 * idx its index in the tensor (for EW_*_T), saved the remembered value's
 * start. */
__device__ __forceinline__ float apply_ops(const ew_args &A, float v, long long c, long long idx, float saved)
{
    for (int k = 0; k < A.n_ops; k++) {
        float pv = 0.0f;
        if (A.p[k]) pv = ew_par(A, A.p[k], A.p_scalar[k] == 1 ? 0 : A.p_scalar[k] == 2 ? idx : c);
        const float a = A.a[k], b = A.b[k];
        switch (A.kind[k]) {
        case EW_ADD_C: v = v + a; break;
        case EW_SUB_C: v = v - a; break;
        case EW_MUL_C: v = v * a; break;
        case EW_DIV_C: v = v / a; break;
        case EW_ADD_P: case EW_ADD_T: v = v + pv; break;
        case EW_SUB_P: v = v - pv; break;
        case EW_MUL_P: case EW_MUL_T: v = v * pv; break;
        case EW_MIN_P: v = (isnan(v) || v < pv) ? v : pv; break;
        case EW_MIN_C: v = (isnan(v) || v < a) ? v : a; break;
        case EW_RELU: v = v > 0.0f ? v : 0.0f; break;
        case EW_LEAKY: v = v > 0.0f ? v : v * a; break;
        case EW_GELU: v = gelu_erf(v); break;
        case EW_SIGMOID: v = 1.0f / (1.0f + expf(-v)); break;
        case EW_TANH: v = tanhf(v); break;
        case EW_SWISH: v = v / (1.0f + expf(-v)); break;
        case EW_MISH: v = mish(v); break;
        case EW_HARDSWISH: v = v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f; break;
        case EW_CLAMP: v = fminf(fmaxf(v, a), b); break;
        case EW_SAVE: saved = v; break;
        case EW_ADD_SAVED: v = v + saved; break;
        case EW_MUL_SAVED: v = v * saved; break;
        case EW_SUB_SAVED: v = v - saved; break;
        default: break;
        }
    }
    return v;
}

/* apply() with the value's channel c given (A.S > 1: row % A.C, else j),
 * for a caller that knows it without a division. */
__device__ __forceinline__ float apply_at(const ew_args &A, float v, long long row, long long j, long long c)
{
    if (A.bias) v += ew_par(A, A.bias, c);
    const float pre = v;
    if (A.norm) {
        long long g;
        if (A.norm == MID_BATCHNORM) g = c;
        else if (A.norm == MID_INSTANCENORM) g = row;
        else g = (A.S > 1 ? (row / A.C) : row) * A.G + c / (A.C / A.G);
        float2 st = A.stat[g];
        v = (v - st.x) * st.y;
        if (A.gamma) v = v * ew_par(A, A.gamma, c) + ew_par(A, A.beta, c);
    }
    return apply_ops(A, v, c, row * A.L + j, pre);
}

/* The bias, norm and operation list of A on one value: element j of row
 * row (A.rows rows of A.L values). */
__device__ __forceinline__ float apply(const ew_args &A, float v, long long row, long long j)
{
    return apply_at(A, v, row, j, A.S > 1 ? row % A.C : j);
}

/* apply() on U elements at once: element u is column j[u] of row r[u]
 * (consecutive elements of a row, or a flat run across row ends); the
 * same operations in the same order, with each operation's dispatch done
 * once for the U (the fused epilogue of a GEMM spent as long choosing
 * operations as computing them). */
template <int U, bool RUN = false>
__device__ __forceinline__ void apply_nc(const ew_args &A, float *v, const long long *r, const long long *j,
                                         const long long *c);

template <int U, bool RUN = false>
__device__ __forceinline__ void apply_n(const ew_args &A, float *v, const long long *r, const long long *j)
{
    long long c[U];
#pragma unroll
    for (int u = 0; u < U; u++) c[u] = A.S > 1 ? r[u] % A.C : j[u];
    apply_nc<U, RUN>(A, v, r, j, c);
}

/* U consecutive parameters of p from index i0, as floats: one 16-byte
 * load per eight bfloat16 or four float values.  i0 is a multiple of U
 * and p 16-byte aligned (cudaMalloc's), so every load is aligned. */
template <int U>
__device__ __forceinline__ void ew_par_run(const ew_args &A, const void *p, long long i0, float *pv)
{
    if (A.pbf16 && U % 8 == 0) {
#pragma unroll
        for (int t = 0; t < U / 8; t++) base_ld8_bf16(static_cast<const __nv_bfloat16 *>(p) + i0 + 8 * t, pv + 8 * t);
    } else if (A.pbf16 && U == 4) {
        float4 f = base_ld4_bf16(static_cast<const __nv_bfloat16 *>(p) + i0, 0);
        pv[0] = f.x; pv[1] = f.y; pv[2] = f.z; pv[3] = f.w;
    } else if (!A.pbf16 && U % 4 == 0) {
        const float4 *q = reinterpret_cast<const float4 *>(static_cast<const float *>(p) + i0);
#pragma unroll
        for (int t = 0; t < U / 4; t++) {
            float4 f = q[t];
            pv[4 * t] = f.x; pv[4 * t + 1] = f.y; pv[4 * t + 2] = f.z; pv[4 * t + 3] = f.w;
        }
    } else {
#pragma unroll
        for (int u = 0; u < U; u++) pv[u] = ew_par(A, p, i0 + u);
    }
}

/* The U values of a per-channel parameter p (bias, gamma, beta, an
 * EW_*_P step's): with RUN, one value when the U share a channel
 * (A.S > 1) or one run of U when their channels are consecutive. */
template <int U, bool RUN>
__device__ __forceinline__ void ew_par_ch(const ew_args &A, const void *p, const long long *c, float *pv)
{
    if (RUN && A.S > 1) {
        const float q = ew_par(A, p, c[0]);
#pragma unroll
        for (int u = 0; u < U; u++) pv[u] = q;
    } else if (RUN) {
        ew_par_run<U>(A, p, c[0], pv);
    } else {
#pragma unroll
        for (int u = 0; u < U; u++) pv[u] = ew_par(A, p, c[u]);
    }
}

/* apply_n with each element's channel c[u] given (A.S > 1: r[u] % A.C,
 * else j[u]), for a caller that steps through the channels instead of
 * dividing: a 64-bit remainder per value cost a flat pass over a 3-d
 * convolution's output three quarters of its time. */
template <int U, bool RUN>
__device__ __forceinline__ void apply_nc(const ew_args &A, float *v, const long long *r, const long long *j,
                                         const long long *c)
{
    /* RUN: the U are consecutive elements of one row from a column that
     * is a multiple of U (a row-wise kernel's vector): their channel is
     * one (A.S > 1) or U consecutive ones (A.S = 1), and a whole-tensor
     * parameter's U values are consecutive, so parameters load as runs. */
    float pv[U];
    if (A.bias) {
        ew_par_ch<U, RUN>(A, A.bias, c, pv);
#pragma unroll
        for (int u = 0; u < U; u++) v[u] += pv[u];
    }
    float saved[U];
#pragma unroll
    for (int u = 0; u < U; u++) saved[u] = v[u];
    if (A.norm) {
        /* a group norm of features whose U consecutive features lie in
         * one group: one division for the U, not one each */
        const long long per = A.norm == MID_GROUPNORM && A.G > 0 ? A.C / A.G : 0;
        if (RUN && (A.S > 1 || (per > 0 && c[0] % per + U <= per))) {
            /* one statistic group for the U */
            long long g = A.norm == MID_BATCHNORM ? c[0] : A.norm == MID_INSTANCENORM ? r[0]
                        : (A.S > 1 ? r[0] / A.C : r[0]) * A.G + c[0] / per;
            float2 st = A.stat[g];
#pragma unroll
            for (int u = 0; u < U; u++) v[u] = (v[u] - st.x) * st.y;
        } else if (RUN && A.norm == MID_BATCHNORM && U % 2 == 0) {
            /* a batch norm of features: the U statistics are consecutive
             * from c[0], a multiple of U (32-byte aligned in cudaMalloc's
             * buffer), so they load as U / 2 vectors of two; one load
             * each took eight 8-byte loads a thread 64 bytes apart, which
             * a warp spreads over sixteen cache lines each (L2_084's row
             * pass reads them three times) */
            const float4 *q = reinterpret_cast<const float4 *>(A.stat + c[0]);
#pragma unroll
            for (int t = 0; t < U / 2; t++) {
                const float4 st = q[t];
                v[2 * t] = (v[2 * t] - st.x) * st.y;
                v[2 * t + 1] = (v[2 * t + 1] - st.z) * st.w;
            }
        } else {
#pragma unroll
            for (int u = 0; u < U; u++) {
                long long g;
                if (A.norm == MID_BATCHNORM) g = c[u];
                else if (A.norm == MID_INSTANCENORM) g = r[u];
                else g = (A.S > 1 ? (r[u] / A.C) : r[u]) * A.G + c[u] / (A.C / A.G);
                float2 st = A.stat[g];
                v[u] = (v[u] - st.x) * st.y;
            }
        }
        if (A.gamma) {
            float gv[U];
            ew_par_ch<U, RUN>(A, A.gamma, c, gv);
            ew_par_ch<U, RUN>(A, A.beta, c, pv);
#pragma unroll
            for (int u = 0; u < U; u++) v[u] = v[u] * gv[u] + pv[u];
        }
    }
    for (int k = 0; k < A.n_ops; k++) {
#pragma unroll
        for (int u = 0; u < U; u++) pv[u] = 0.0f;
        if (A.p[k]) {
            if (A.p_scalar[k] == 1) {
                const float q = ew_par(A, A.p[k], 0);
#pragma unroll
                for (int u = 0; u < U; u++) pv[u] = q;
            } else if (A.p_scalar[k] == 2 && RUN) {
                ew_par_run<U>(A, A.p[k], r[0] * A.L + j[0], pv);
            } else if (A.p_scalar[k] == 2) {
#pragma unroll
                for (int u = 0; u < U; u++) pv[u] = ew_par(A, A.p[k], r[u] * A.L + j[u]);
            } else {
                ew_par_ch<U, RUN>(A, A.p[k], c, pv);
            }
        }
        const float a = A.a[k], b = A.b[k];
#define EACH(expr)                                                                    \
    _Pragma("unroll") for (int u = 0; u < U; u++) { const float x = v[u]; (void)x;  \
                                                    v[u] = (expr); }                 \
    break
        switch (A.kind[k]) {
        case EW_ADD_C: EACH(x + a);
        case EW_SUB_C: EACH(x - a);
        case EW_MUL_C: EACH(x * a);
        case EW_DIV_C: EACH(x / a);
        case EW_ADD_P: case EW_ADD_T: EACH(x + pv[u]);
        case EW_SUB_P: EACH(x - pv[u]);
        case EW_MUL_P: case EW_MUL_T: EACH(x * pv[u]);
        case EW_MIN_P: EACH((isnan(x) || x < pv[u]) ? x : pv[u]);
        case EW_MIN_C: EACH((isnan(x) || x < a) ? x : a);
        case EW_RELU: EACH(x > 0.0f ? x : 0.0f);
        case EW_LEAKY: EACH(x > 0.0f ? x : x * a);
        case EW_GELU: EACH(gelu_erf(x));
        case EW_SIGMOID: EACH(1.0f / (1.0f + expf(-x)));
        case EW_TANH: EACH(tanhf(x));
        case EW_SWISH: EACH(x / (1.0f + expf(-x)));
        case EW_MISH: EACH(mish(x));
        case EW_HARDSWISH: EACH(x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f);
        case EW_CLAMP: EACH(fminf(fmaxf(x, a), b));
        case EW_SAVE:
#pragma unroll
            for (int u = 0; u < U; u++) saved[u] = v[u];
            break;
        case EW_ADD_SAVED: EACH(x + saved[u]);
        case EW_MUL_SAVED: EACH(x * saved[u]);
        case EW_SUB_SAVED: EACH(x - saved[u]);
        default: break;
        }
#undef EACH
    }
}

/* apply() on four consecutive elements of row `row`, from column j, a
 * multiple of four (a row-wise kernel's vector: the row length is one
 * too), the parameters loaded as runs (apply_nc's RUN). */
__device__ __forceinline__ float4 apply4(const ew_args &A, float4 in, long long row, long long j)
{
    float v[4] = { in.x, in.y, in.z, in.w };
    long long r[4], jj[4];
#pragma unroll
    for (int u = 0; u < 4; u++) {
        r[u] = row;
        jj[u] = j + u;
    }
    apply_n<4, true>(A, v, r, jj);
    return make_float4(v[0], v[1], v[2], v[3]);
}

/* The elementwise steps A on bfloat16 values, x to y (in place allowed),
 * float arithmetic, each result rounded to bfloat16 once (chain_bf16.cu):
 * row by row, eight values a load, where A.L is a multiple of eight, else
 * flat across row ends when x and y are 16-byte aligned. */
void chain_launch_ew_bf16(const base_ctx *b, const __nv_bfloat16 *x, __nv_bfloat16 *y, ew_args A, cudaStream_t s);

/* Fills A's operation list from ops, with the parameter pointers of call
 * c (chain.cu). */
void chain_fill_ops(ew_args *A, const chain_ew *ops, const kbv_call *c);

/* The post stages of sp on the GPU (chain_post.cu). */
struct chain_post;

/* Buffers for the post stages of problem p (the stages' largest output,
 * statistics); NULL without post stages.  0 or a negative error. */
int chain_post_create(base_ctx *b, const chain_spec *sp, chain_post **out, kbv_err *e);

/* Runs the post stages from src (the tensor after the middle stage and the
 * second list, shape d) into the call's output; src is not changed.  With
 * out16 and wrote16 (a bf16 chain's output, else NULL), a last stage that
 * adds an input back (ST_ADD_X0, ST_OUTER_ADD_P) writes out16 itself and
 * sets *wrote16. */
int chain_post_run(base_ctx *b, chain_post *cp, const float *src, chain_dims d, const kbv_call *c, void *out16,
                   int *wrote16, kbv_err *e);

/* Whether the first post stage of cp, on shape d, can read its input
 * through the chain's last elementwise pass itself: of a map (S > 1) a
 * pooling, a reduction or softmax over the channels, a reduction,
 * softmax or centering over the positions of each plane, or a reduction
 * over each whole sample; of rows of features (S = 1) a reduction or
 * softmax over them.  A stage that reads each value more
 * than once does only when cheap_pass says the pass has no
 * transcendental step (chain_ew_cheap). */
int chain_post_reads_through(const chain_post *cp, chain_dims d, int cheap_pass);

/* Whether cp's post stages begin with the view of a linear output as one
 * map (ST_FLAT, of shape d) and the stage after it can read a bfloat16
 * tensor itself on that map (reads through an empty pass: the view's
 * values have no channel of their own). */
int chain_post_view_reads16(const chain_post *cp, chain_dims d);

/* Whether an elementwise step of this kind (EW_*) is arithmetic only, no
 * transcendental function: cheap to repeat on every read. */
int chain_ew_cheap(int kind);

/* chain_post_run with the first stage reading src16, a bfloat16 tensor
 * of shape d, through the pass P (the bias and the first list on a
 * convolution's output, or the norm and the last list on a linear
 * chain's kept in bfloat16; P's rows are d's planes, or its rows of
 * features when S = 1) as it reads each value: no widened copy.  chain_post_reads_through must hold.  With out16 and wrote16 (the
 * bf16 call's output, which the caller otherwise rounds from c's float
 * output), a first stage that is also the last and runs over rows writes
 * out16 itself, rounded once, and sets *wrote16 (else 0); the caller owns
 * both. */
int chain_post_run16(base_ctx *b, chain_post *cp, const __nv_bfloat16 *src16, const ew_args &P, chain_dims d,
                     const kbv_call *c, void *out16, int *wrote16, kbv_err *e);

/* The same from the float src, the middle stage's input of shape d,
 * through the chain's last pass P (its norm and last steps, over d's
 * planes or rows of features): the pass's output is never written. */
int chain_post_run_through(base_ctx *b, chain_post *cp, const float *src, const ew_args &P, chain_dims d,
                           const kbv_call *c, void *out16, int *wrote16, kbv_err *e);

void chain_post_destroy(chain_post *cp);

/* A chain baseline's state (chain.cu's create makes it, destroy frees it;
 * chain_bf16.cu's paths use it too). */
struct chain_state {
    const chain_spec *spec;
    conv_runner *conv;
    long long N, C, S;          /* after the producer */
    float *pre;                 /* the producer's output when it is not the final output */
    float *mid;                 /* the middle stage's result when post stages follow */
    chain_dims after_mid;       /* its shape */
    chain_post *post;           /* the post stages, or NULL */
    float *hid;                 /* the first of two linear layers (w2) */
    float *xin;                 /* the average-pooled input (in_pool) */
    double2 *part;              /* plane sums */
    float2 *stat;               /* per statistic group */
    void *pre16;                /* bf16: a convolution's bfloat16 output, allocated at its first bf16 run */
};

/* How chain_run_rest takes a bfloat16 producer output of cs (final16: no
 * post stages, the output is the call's bfloat16 one):
 * widened into the float intermediate in the pass of the bias and first
 * steps; read as it is by a reduction over each row (the first steps
 * applied as it reads); kept in bfloat16 through a norm's statistics to
 * the last pass; or the first steps a bfloat16 pass, then the bfloat16
 * softmax into the output; or (a map with post stages right after the
 * first steps) read by the first post stage itself, the bias and first
 * steps applied as it reads (chain_post_run16). */
enum chain_rest16 { REST16_WIDEN, REST16_ROWS, REST16_STATS, REST16_SOFTMAX, REST16_POST };
chain_rest16 chain_rest_bf16(const chain_state *cs, int final16);

/* Steps 2 to 5 of the chain on the producer's output (chain.cu; its
 * comment says what each argument does). */
int chain_run_rest(base_ctx *b, const kbv_call *c, float *pre, kbv_err *e, void *out16, int *wrote16,
                   int bias_done, const void *pre16);

/* The chain families' bf16 baseline (chain_bf16.cu). */
int chain_run_bf16(base_ctx *b, const kbv_call *call, kbv_err *e);

/* y = x average-pooled with window and stride k on every spatial axis of
 * xt's shape (floor mode), enqueued on s (chain.h's in_pool). */
void chain_input_pool(const base_ctx *b, const float *x, float *y, const kbv_tensor &xt, int k, cudaStream_t s);

#endif

/* net.cu - the level-3 interpreter: runs a layer program (problems/net.h)
 * with cuBLAS (linear layers: one GEMM, x W^T) and cuDNN (convolutions,
 * through conv.cu's runners, which choose their algorithm by timing), and
 * kbv's own kernels where PyTorch runs its own too: batch norm with batch
 * statistics, max pooling (pool.cu's kernel), the global average pool,
 * ReLU and the residual sum, softmax along the last dimension, the
 * concatenation along channels and the channel shuffle; a patch-embedding
 * convolution (stride = kernel, no padding) as one GEMM over its patch
 * rows.  Transposed convolutions are conv.cu's runners too (cuDNN's
 * backward-data pass, as PyTorch runs them).  The transformer layers
 * (attention, layer norm, tokens, Swin's windows) run in net_tokens.cu;
 * GELU is one of the fused elementwise steps here.
 *
 * What follows a producer is fused into one elementwise pass where the
 * data flow allows, as the level-2 interpreter does: a layer's bias and the
 * activation (ReLU, ReLU6, sigmoid, GELU) after it, and for a linear layer
 * a residual sum after it; a batch norm's normalisation, affine, the
 * residual sum after it and the ReLU after that, or the softmax after it
 * (which applies the normalisation as it loads its row).  PyTorch runs one
 * kernel per module (and cuBLASLt fuses only the bias), so the baseline
 * reads and writes each activation at most as often as PyTorch eager does.
 *
 * Activations live in scratch buffers of the largest activation's size,
 * three plus the deepest the program's stack gets: the current tensor, the
 * skip tensor, the stack's entries and one free buffer are always enough,
 * since a layer writes one new tensor and reads only those.  Saving or
 * pushing a tensor aliases it; no layer writes in place over a tensor that
 * the skip or the stack still holds.  x is read-only and never written;
 * the group of layers that writes last writes straight into the output.
 * Convolutions of the same geometry share one cuDNN runner.
 *
 * The walk is a template on the activations' element type: float, and
 * bfloat16 for the BF16 setting (run_bf16), where the products are the
 * libraries' bfloat16 ones and every kernel here reads and writes
 * bfloat16 with float arithmetic; the transformer layers and the patch
 * embedding have no bfloat16 form (bf16path.c keeps their programs on the
 * fallback).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"
#include "net_stage.h"
#include "net_tokens.h"

extern "C" {
#include "suite_host.h"
}

namespace {

/* --- kernels ---------------------------------------------------------------- */

/* What one elementwise pass applies, in this order: the producer's bias,
 * the batch norm (mean, rstd per channel, then gamma, beta), the residual
 * sum, the ReLU.  The tensor is [N, C, S] (S = 1 for a linear layer). */
struct ew_args {
    const void *bias;           /* per channel, or NULL */
    const float2 *stat;         /* per channel, or NULL */
    const void *gamma, *beta;   /* with stat */
    const void *skip;           /* same shape and type as the activations, or NULL */
    int relu;                   /* 0 none, 1 ReLU, 2 ReLU6, 3 sigmoid, 4 GELU (tanh form), 5 GELU (erf) */
    int pbf16;                  /* bias, gamma and beta are bfloat16 (the BF16 setting's parameters) */
    long long C, S, n;
};

/* Loads and stores of the activations, float or bfloat16 (the BF16
 * setting: each value widened on load, rounded once on store); four at
 * element 4 i4 for rows of a multiple of four. */
__device__ __forceinline__ float ldv(const float *p, long long i) { return p[i]; }
__device__ __forceinline__ float ldv(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void stv(float *p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void stv(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ float4 ld4v(const float *p, long long i4) { return reinterpret_cast<const float4 *>(p)[i4]; }
__device__ __forceinline__ float4 ld4v(const __nv_bfloat16 *p, long long i4) { return base_ld4_bf16(p, i4); }
__device__ __forceinline__ void st4v(float *p, long long i4, float4 v) { reinterpret_cast<float4 *>(p)[i4] = v; }
__device__ __forceinline__ void st4v(__nv_bfloat16 *p, long long i4, float4 v) { base_st4_bf16(p, i4, v); }

/* Element c of a parameter of A, as a float. */
__device__ __forceinline__ float par(const ew_args &A, const void *p, long long c)
{
    return A.pbf16 ? __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[c]) : static_cast<const float *>(p)[c];
}

__device__ __forceinline__ float ew_one(const ew_args &A, float v, long long c, float sk)
{
    if (A.bias) v += par(A, A.bias, c);
    if (A.stat) {
        float2 st = A.stat[c];
        v = (v - st.x) * st.y * par(A, A.gamma, c) + par(A, A.beta, c);
    }
    if (A.skip) v += sk;
    if (A.relu == 3) return 1.0f / (1.0f + expf(-v));
    if (A.relu == 4) return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    if (A.relu == 5) return 0.5f * v * (1.0f + erff(v * 0.7071067811865476f));
    if (A.relu) v = v > 0.0f ? v : 0.0f;
    if (A.relu == 2) v = v < 6.0f ? v : 6.0f;
    return v;
}

/* grid (x: chunks of a row, y: rows, strided): a row is one (n, c) plane
 * of S elements when S > 1 (its channel row % C, worked out once per row)
 * or one sample of C features when S == 1 (the channel is the position),
 * so that no element needs a 64-bit division.  vec: rows of a multiple of
 * 4 elements, read and written as float4. */
template <typename T>
__global__ void __launch_bounds__(256) ew_kernel(const T *__restrict__ x, T *y, ew_args A, long long rows,
                                                 long long L, int vec)
{
    const T *skip = static_cast<const T *>(A.skip);
    for (long long row = blockIdx.y; row < rows; row += gridDim.y) {
        const long long base = row * L, rc = A.S > 1 ? row % A.C : 0;
        const long long step = (long long)gridDim.x * blockDim.x;
        const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        if (vec) {
            for (long long i = t0; i < L / 4; i += step) {
                float4 v = ld4v(x + base, i);
                float4 k = skip ? ld4v(skip + base, i) : make_float4(0, 0, 0, 0);
                long long c = A.S > 1 ? rc : 4 * i, dc = A.S > 1 ? 0 : 1;
                v.x = ew_one(A, v.x, c, k.x);
                v.y = ew_one(A, v.y, c + dc, k.y);
                v.z = ew_one(A, v.z, c + 2 * dc, k.z);
                v.w = ew_one(A, v.w, c + 3 * dc, k.w);
                st4v(y + base, i, v);
            }
        } else {
            for (long long j = t0; j < L; j += step)
                stv(y, base + j, ew_one(A, ldv(x, base + j), A.S > 1 ? rc : j, skip ? ldv(skip, base + j) : 0.0f));
        }
    }
}

/* Batch-norm statistics, pass 1: one block per (n, c) plane of S
 * elements, sums in double (a channel's mean can be large next to its
 * spread, and E[x^2] - E[x]^2 must not cancel to noise). */
template <typename T>
__global__ void __launch_bounds__(256) plane_sums(const T *__restrict__ x, long long S, double2 *__restrict__ part)
{
    const T *p = x + (long long)blockIdx.x * S;
    double s = 0.0, ss = 0.0;
    for (long long i = threadIdx.x; i < S; i += blockDim.x) {
        double v = ldv(p, i);
        s += v;
        ss += v * v;
    }
    block_sum2(s, ss);
    if (threadIdx.x == 0) part[blockIdx.x] = make_double2(s, ss);
}

/* Pass 2: per channel, mean and 1/sqrt(biased variance + eps). */
__global__ void bn_finalize(const double2 *__restrict__ part, long long N, long long C, long long S,
                            double eps, float2 *__restrict__ stat)
{
    long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    double s = 0.0, ss = 0.0;
    for (long long n = 0; n < N; n++) {
        s += part[n * C + c].x;
        ss += part[n * C + c].y;
    }
    double cnt = (double)N * (double)S, mean = s / cnt, var = ss / cnt - mean * mean;
    if (var < 0.0) var = 0.0;
    stat[c] = make_float2((float)mean, (float)(1.0 / sqrt(var + eps)));
}

/* The global average pool: one warp per plane. */
template <typename T>
__global__ void __launch_bounds__(256) gap_kernel(const T *__restrict__ x, T *__restrict__ y, long long planes,
                                                  long long S)
{
    long long pl = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (pl >= planes) return;
    const T *p = x + pl * S;
    float s = 0.0f;
    for (long long i = lane; i < S; i += 32) s += ldv(p, i);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) stv(y, pl, s / (float)S);
}

/* Softmax over rows of L elements (the last dimension), one warp per row
 * with the row in registers (L <= 32 VPT), as PyTorch's persistent softmax
 * for short rows.  The row is read whole before any of it is written, so
 * it may run in place (x == y: no __restrict__).  With A.stat, the batch norm before it is applied as the
 * row loads: the row's channel is (row / H) % C for rows of an [N, C, H, W]
 * tensor. */
template <int VPT, typename T>
__global__ void __launch_bounds__(256) softmax_rows(const T *x, T *y, long long rows, int L, long long H, ew_args A)
{
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;
    const T *p = x + row * L;
    T *q = y + row * L;
    float sc = 1.0f, sh = 0.0f;
    if (A.stat) {
        long long c = (row / H) % A.C;
        float2 st = A.stat[c];
        sc = st.y * par(A, A.gamma, c);
        sh = par(A, A.beta, c) - st.x * sc;
    }
    float v[VPT], m = -INFINITY;
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        int j = lane + 32 * i;
        v[i] = j < L ? fmaf(ldv(p, j), sc, sh) : -INFINITY;
        m = fmaxf(m, v[i]);
    }
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        v[i] = lane + 32 * i < L ? expf(v[i] - m) : 0.0f;
        sum += v[i];
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    const float inv = 1.0f / sum;
#pragma unroll
    for (int i = 0; i < VPT; i++)
        if (lane + 32 * i < L) stv(q, lane + 32 * i, v[i] * inv);
}

/* The same for rows longer than 1024: three passes over the row (maximum,
 * sum, output), one warp per row.  Each element is read before it is
 * written, by the same thread, so it may run in place. */
template <typename T>
__global__ void __launch_bounds__(256) softmax_long(const T *x, T *y, long long rows, long long L, long long H,
                                                    ew_args A)
{
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;
    const T *p = x + row * L;
    T *q = y + row * L;
    float sc = 1.0f, sh = 0.0f;
    if (A.stat) {
        long long c = (row / H) % A.C;
        float2 st = A.stat[c];
        sc = st.y * par(A, A.gamma, c);
        sh = par(A, A.beta, c) - st.x * sc;
    }
    float m = -INFINITY;
    for (long long j = lane; j < L; j += 32) m = fmaxf(m, fmaf(ldv(p, j), sc, sh));
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float sum = 0.0f;
    for (long long j = lane; j < L; j += 32) sum += expf(fmaf(ldv(p, j), sc, sh) - m);
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    const float inv = 1.0f / sum;
    for (long long j = lane; j < L; j += 32) stv(q, j, expf(fmaf(ldv(p, j), sc, sh) - m) * inv);
}

/* One part of a concatenation along channels: rows (samples) of len
 * elements of src into rows of stride elements of dst, from element off of
 * each.  grid (x: chunks of a row, y: rows, strided); vec: len, stride and
 * off multiples of 16 bytes' worth of elements (4 floats, 8 bfloat16),
 * moved 16 bytes at a time. */
template <typename T>
__global__ void __launch_bounds__(256) copy_rows(const T *__restrict__ src, T *__restrict__ dst, long long rows,
                                                 long long len, long long stride, long long off, int vec)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long per = 16 / (long long)sizeof(T);
    for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
        const T *a = src + r * len;
        T *b = dst + r * stride + off;
        if (vec)
            for (long long i = t0; i < len / per; i += step)
                reinterpret_cast<uint4 *>(b)[i] = reinterpret_cast<const uint4 *>(a)[i];
        else
            for (long long i = t0; i < len; i += step) b[i] = a[i];
    }
}

/* The channel shuffle: output channel c' = j g + i is input channel
 * c = i (C / g) + j.  grid (x: chunks of a plane, y: output planes n C + c',
 * strided); vec: planes of a multiple of 16 bytes. */
template <typename T>
__global__ void __launch_bounds__(256) shuffle_kernel(const T *__restrict__ x, T *__restrict__ y, long long planes,
                                                      long long C, long long g, long long S, int vec)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long per = 16 / (long long)sizeof(T);
    for (long long pl = blockIdx.y; pl < planes; pl += gridDim.y) {
        long long n = pl / C, co = pl % C;
        long long ci = (co % g) * (C / g) + co / g;
        const T *a = x + (n * C + ci) * S;
        T *b = y + pl * S;
        if (vec)
            for (long long i = t0; i < S / per; i += step)
                reinterpret_cast<uint4 *>(b)[i] = reinterpret_cast<const uint4 *>(a)[i];
        else
            for (long long i = t0; i < S; i += step) b[i] = a[i];
    }
}

/* The patches of a patch-embedding convolution, as rows: y[n, p, (c, i, j)]
 * = x[n, c, ph k + i, pw k + j] for patch p = (ph, pw). */
__global__ void patch_rows(const float *__restrict__ x, float *__restrict__ y, long long n, long long C,
                           long long H, long long W, int k)
{
    const long long hp = H / k, wp = W / k, K = C * k * k;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long col = i % K, row = i / K, p = row % (hp * wp), s = row / (hp * wp);
        long long c = col / (k * k), pi = (col / k) % k, pj = col % k;
        y[i] = x[((s * C + c) * H + (p / wp) * k + pi) * W + (p % wp) * k + pj];
    }
}

/* --- the interpreter -------------------------------------------------------- */

struct net_state {
    const net_spec *spec;
    net_plan *plan;
    conv_runner *conv[NET_MAX_LAYERS];     /* per conv layer; shared by equal geometries */
    conv_geom geom[NET_MAX_LAYERS];
    int conv_owner[NET_MAX_LAYERS];        /* 1: this layer's runner is its own to free */
    void *buf[3 + NET_STACK_MAX];          /* of the largest activation's size in floats */
    int n_buf;                             /* 3 + the deepest the stack gets */
    double2 *part;                         /* plane sums, N * C of the widest norm */
    float2 *stat;                          /* per channel */
    float *patches;                        /* a patch embedding's input as rows */
    net_tok_scratch tok;                   /* the transformer layers' (net_tokens.cu) */
    int last_write;                        /* the last layer that writes data */
    net_stage stage;                       /* where each parameter is read (net_stage.cu) */
};

int64_t numel(const net_shape &s)
{
    int64_t n = 1;
    for (int i = 0; i < s.ndim; i++) n *= s.d[i];
    return n;
}

int writes(int kind)
{
    return kind == NET_LINEAR || kind == NET_CONV2D || kind == NET_BN2D || kind == NET_RELU ||
           kind == NET_MAXPOOL2D || kind == NET_AVGPOOL2D || kind == NET_GAP || kind == NET_ADD ||
           kind == NET_RELU6 || kind == NET_SIGMOID || kind == NET_CONCAT || kind == NET_SHUFFLE ||
           kind == NET_CONVT2D || kind == NET_SOFTMAX || kind == NET_LAYERNORM || kind == NET_GELU_TANH ||
           kind == NET_ATTENTION || kind == NET_TOKENS || kind == NET_UNTOKENS || kind == NET_UNFOLD ||
           kind == NET_CLS || kind == NET_POS || kind == NET_FIRST_TOKEN || kind == NET_GELU ||
           kind == NET_WINDOW_MLP || kind == NET_MERGE || kind == NET_TOKEN_MEAN || kind == NET_WINDOW_ATTN;
}

/* Where part p is read this call (net_stage_run), as T. */
template <typename T>
const T *part_at(const net_state *ns, const net_param *p)
{
    return static_cast<const T *>(ns->stage.at[p - ns->plan->param]);
}

int create_convs(base_ctx *b, net_state *ns, kbv_err *e)
{
    const net_spec *sp = ns->spec;
    for (int l = 0; l < sp->n_layers; l++) {
        const net_layer *L = &sp->layers[l];
        if ((L->kind != NET_CONV2D && L->kind != NET_CONVT2D) || net_is_patch_conv(L)) continue;
        const net_shape &in = ns->plan->in[l], &out = ns->plan->out[l];
        conv_geom &g = ns->geom[l];
        memset(&g, 0, sizeof g);
        g.nd = 2;
        /* a transposed convolution: x [N, Cin, ...] in, the weight
         * [Cin, Cout / groups, k, k], y [N, Cout, ...] out (conv.cu runs
         * cuDNN's backward-data pass) */
        g.transposed = L->kind == NET_CONVT2D;
        g.n = in.d[0];
        g.cin = in.d[1];
        g.cout = out.d[1];
        g.groups = L->groups > 1 ? L->groups : 1;
        for (int a = 0; a < 2; a++) {
            g.in[a] = in.d[2 + a];
            g.out[a] = out.d[2 + a];
            g.k[a] = L->k;
            g.s[a] = L->s;
            g.p[a] = L->p;
            g.d[a] = 1;
        }
        for (int m = 0; m < l && !ns->conv[l]; m++)
            if (ns->conv[m] && memcmp(&ns->geom[m], &g, sizeof g) == 0) ns->conv[l] = ns->conv[m];
        if (ns->conv[l]) continue;
        int rc = conv_runner_create(b, &g, &ns->conv[l], e);
        if (rc) return rc;
        ns->conv_owner[l] = 1;
    }
    return 0;
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    const net_spec *sp = suite_net_of(b->p);
    if (!sp) return err_set(e, KBV_EINPUT, "baseline %s: no layer program for op %d", b->p->id, b->p->op);
    net_state *ns = (net_state *)calloc(1, sizeof *ns);
    if (!ns) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
    b->state = ns;
    ns->spec = sp;
    ns->plan = (net_plan *)calloc(1, sizeof *ns->plan);
    if (!ns->plan) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
    char why[160];
    const kbv_tensor *x = &ex->inputs[0];
    if (ex->n_inputs != 2 || net_plan_make(sp, x->shape, x->ndim, ns->plan, why, sizeof why))
        return err_set(e, KBV_EINPUT, "baseline %s: layer program: %s", b->p->id,
                       ex->n_inputs != 2 ? "expected x and params" : why);
    if (kbv_numel(&ex->inputs[1]) != ns->plan->n_param_floats ||
        kbv_numel(&ex->outputs[0]) != numel(ns->plan->result))
        return err_set(e, KBV_EINPUT, "baseline %s: params or output size differs from the program",
                       b->p->id);
    int64_t most = 0, widest = 0, planes = 0, patches = 0;
    int linear = 0;
    for (int l = 0; l < sp->n_layers; l++) {
        int64_t n = numel(ns->plan->out[l]);
        if (n > most) most = n;
        if (writes(sp->layers[l].kind)) ns->last_write = l;
        if (sp->layers[l].kind == NET_LINEAR) linear = 1;
        if (net_is_patch_conv(&sp->layers[l])) {
            linear = 1;
            if (numel(ns->plan->in[l]) > patches) patches = numel(ns->plan->in[l]);
        }
        if (sp->layers[l].kind == NET_BN2D) {
            const net_shape &s = ns->plan->in[l];
            if (s.d[1] > widest) widest = s.d[1];
            if (s.d[0] * s.d[1] > planes) planes = s.d[0] * s.d[1];
        }
    }
    int rc = net_stage_create(b, sp, ns->plan, &ns->stage, e);
    if (!rc) rc = net_tok_create(b, sp, ns->plan, &ns->tok, &linear, e);
    if (!rc && linear) rc = base_need_blas(b, e);
    if (!rc) rc = create_convs(b, ns, e);
    if (rc) return rc;
    ns->n_buf = 3 + ns->plan->stack_most;
    for (int i = 0; i < ns->n_buf; i++) {
        cudaError_t ce = cudaMalloc(&ns->buf[i], (size_t)most * sizeof(float));
        if (ce != cudaSuccess) {
            ns->buf[i] = NULL;
            return base_cuda_err(e, b, "activation buffers", ce);
        }
    }
    if (widest > 0) {
        cudaError_t ce = cudaMalloc(&ns->part, (size_t)planes * sizeof(double2));
        if (ce == cudaSuccess) ce = cudaMalloc(&ns->stat, (size_t)widest * sizeof(float2));
        if (ce != cudaSuccess) return base_cuda_err(e, b, "statistics buffers", ce);
    }
    if (patches > 0) {
        cudaError_t ce = cudaMalloc(&ns->patches, (size_t)patches * sizeof(float));
        if (ce != cudaSuccess) {
            ns->patches = NULL;
            return base_cuda_err(e, b, "patch rows", ce);
        }
    }
    /* A depthwise convolution is also timed against kbv's direct kernel
     * (conv.cu), on scratch buffers: the weight, C k^2 floats, fits in one. */
    for (int l = 0; !rc && l < sp->n_layers; l++)
        if (ns->conv_owner[l] && ns->geom[l].groups > 1)
            rc = conv_runner_tune(b, ns->conv[l], (const float *)ns->buf[0], (const float *)ns->buf[1],
                                  (float *)ns->buf[2], ex->stream, e);
    return rc;
}

/* Where the walk stands while running: the current tensor, the skip and
 * the stack (aliases of the tensors saved), of the activations' type. */
struct cursor {
    const void *cur;
    void *skip;
    const void *stack[NET_STACK_MAX];
    net_shape stack_shape[NET_STACK_MAX];
    int depth;
    const void *x;
    void *out;
};

/* Whether t is held by the skip or the stack. */
int held(const cursor &k, const void *t)
{
    if (t == k.skip) return 1;
    for (int i = 0; i < k.depth; i++)
        if (k.stack[i] == t) return 1;
    return 0;
}

/* A buffer that is neither the current tensor nor held. */
void *free_buf(const net_state *ns, const cursor &k)
{
    for (int i = 0; i < ns->n_buf; i++)
        if (ns->buf[i] != k.cur && !held(k, ns->buf[i])) return ns->buf[i];
    return NULL;
}

/* Softmax along the last dimension of the tensor of shape s, from x to y,
 * with A's batch norm applied first when A.stat is set. */
template <typename T>
void launch_softmax(const T *x, T *y, const net_shape &s, const ew_args &A, cudaStream_t st)
{
    long long L = s.d[s.ndim - 1], rows = 1;
    for (int a = 0; a < s.ndim - 1; a++) rows *= s.d[a];
    long long H = s.ndim == 4 ? s.d[2] : 1;
    unsigned blocks = (unsigned)((rows * 32 + 255) / 256);
    if (L <= 32) softmax_rows<1, T><<<blocks, 256, 0, st>>>(x, y, rows, (int)L, H, A);
    else if (L <= 64) softmax_rows<2, T><<<blocks, 256, 0, st>>>(x, y, rows, (int)L, H, A);
    else if (L <= 128) softmax_rows<4, T><<<blocks, 256, 0, st>>>(x, y, rows, (int)L, H, A);
    else if (L <= 256) softmax_rows<8, T><<<blocks, 256, 0, st>>>(x, y, rows, (int)L, H, A);
    else if (L <= 512) softmax_rows<16, T><<<blocks, 256, 0, st>>>(x, y, rows, (int)L, H, A);
    else if (L <= 1024) softmax_rows<32, T><<<blocks, 256, 0, st>>>(x, y, rows, (int)L, H, A);
    else softmax_long<<<blocks, 256, 0, st>>>(x, y, rows, L, H, A);
}

/* A 2D grid for rows of per_row work items: chunks of a row across x, rows
 * across y (strided), about 16 blocks per SM in all. */
dim3 rows_grid(const base_ctx *b, long long rows, long long per_row)
{
    unsigned gy = (unsigned)(rows < 65535 ? rows : 65535);
    long long gx = (per_row + 255) / 256, want = (long long)b->sm_count * 16 / (gy ? gy : 1);
    if (want < 1) want = 1;
    if (gx > want) gx = want;
    if (gx < 1) gx = 1;
    return dim3((unsigned)gx, gy ? gy : 1);
}

template <typename T>
void launch_ew(const base_ctx *b, const T *x, T *y, const ew_args &A, cudaStream_t s)
{
    long long L = A.S > 1 ? A.S : A.C, rows = A.n / L;
    int vec = L % 4 == 0;
    long long per_row = vec ? L / 4 : L;
    unsigned gy = (unsigned)(rows < 65535 ? rows : 65535);
    long long gx = (per_row + 255) / 256, want = (long long)b->sm_count * 16 / (gy ? gy : 1);
    if (want < 1) want = 1;
    if (gx > want) gx = want;
    ew_kernel<<<dim3((unsigned)gx, gy), 256, 0, s>>>(x, y, A, rows, L, vec);
}

/* The concatenation along channels: the popped entries of the stack,
 * oldest first, then the current tensor, each at its channel offset of
 * every sample of dst; pops them. */
template <typename T>
void run_concat(const base_ctx *b, const net_layer *L, const net_shape &in, const net_shape &out, cursor &k,
                T *dst, cudaStream_t s)
{
    long long S = out.d[2] * out.d[3], stride = out.d[1] * S, off = 0, per = 16 / (long long)sizeof(T);
    for (int e = k.depth - L->k; e <= k.depth; e++) {
        const T *src = static_cast<const T *>(e < k.depth ? k.stack[e] : k.cur);
        long long len = (e < k.depth ? k.stack_shape[e].d[1] : in.d[1]) * S;
        int vec = len % per == 0 && stride % per == 0 && off % per == 0;
        copy_rows<<<rows_grid(b, out.d[0], vec ? len / per : len), 256, 0, s>>>(src, dst, out.d[0], len, stride,
                                                                                 off, vec);
        off += len;
    }
    k.depth -= L->k;
}

/* A push (the stack aliases the current tensor) or an exchange of the
 * current tensor with the top of the stack. */
void run_stack(const net_layer *L, const net_shape &in, cursor &k)
{
    if (L->kind == NET_PUSH) {
        k.stack_shape[k.depth] = in;
        k.stack[k.depth++] = k.cur;
        return;
    }
    const void *t = k.cur;
    k.cur = k.stack[k.depth - 1];
    k.stack[k.depth - 1] = t;
    k.stack_shape[k.depth - 1] = in;
}

/* The layers that layer l absorbs: a batch norm the softmax after it; a
 * producer or a norm the residual sum (norms and linear layers only) and
 * the activation, with identity dropouts between them skipped; a window
 * MLP the residual sum.  Sets A's skip and activation and *bn_softmax;
 * returns the last layer absorbed (l when none). */
int fuse(const net_spec *sp, int l, const cursor &k, ew_args &A, int *bn_softmax)
{
    const net_layer *L = &sp->layers[l];
    int last = l;
    if (L->kind == NET_BN2D) {
        int j = l + 1;
        while (j < sp->n_layers && sp->layers[j].kind == NET_DROPOUT) j++;
        if (j < sp->n_layers && sp->layers[j].kind == NET_SOFTMAX) {
            *bn_softmax = 1;
            last = j;
        }
    }
    if (!*bn_softmax && (L->kind == NET_LINEAR || L->kind == NET_CONV2D || L->kind == NET_CONVT2D ||
                         L->kind == NET_BN2D)) {
        int j = l + 1;
        while (j < sp->n_layers && sp->layers[j].kind == NET_DROPOUT) j++;
        if ((L->kind == NET_BN2D || L->kind == NET_LINEAR) && j < sp->n_layers && sp->layers[j].kind == NET_ADD) {
            A.skip = k.skip;
            last = j++;
        }
        while (j < sp->n_layers && sp->layers[j].kind == NET_DROPOUT) j++;
        if (j < sp->n_layers) {
            int k2 = sp->layers[j].kind;
            A.relu = k2 == NET_RELU ? 1 : k2 == NET_RELU6 ? 2 : k2 == NET_SIGMOID ? 3 : k2 == NET_GELU_TANH ? 4 :
                     k2 == NET_GELU ? 5 : 0;
            if (A.relu) last = j;
        }
    }
    if (L->kind == NET_WINDOW_MLP && l + 1 < sp->n_layers && sp->layers[l + 1].kind == NET_ADD) {
        A.skip = k.skip;   /* the block's residual, added in the scatter */
        last = l + 1;
    }
    return last;
}

/* The producers of layer l in the activations' type: the linear layer or
 * convolution of L into dst, its bias left in A.bias for the pass after
 * it, or added by the product's epilogue (a bfloat16 linear layer, as
 * PyTorch's nn.Linear runs it).  0 or a negative KBV_E* code. */
int run_product(base_ctx *b, base_variant v, net_state *ns, int l, const float *x, float *dst, ew_args &A,
                cudaStream_t s, kbv_err *e)
{
    const net_plan *pl = ns->plan;
    const net_layer *L = &ns->spec->layers[l];
    const net_shape &in = pl->in[l], &out = pl->out[l];
    const net_param *w = net_param_of(pl, l, 0), *bi = net_param_of(pl, l, 1);
    const float *wp = part_at<float>(ns, w);
    A.bias = bi ? part_at<float>(ns, bi) : NULL;
    if (L->kind == NET_LINEAR) {
        long long kk = in.d[in.ndim - 1], n = out.d[out.ndim - 1], m = numel(in) / kk;
        return base_gemm(b, v, 0, 1, m, n, kk, 1.0f, x, kk, 0, wp, kk, 0, 0.0f, dst, n, 0, 1, s, e);
    }
    if (net_is_patch_conv(L)) {
        /* disjoint patches: per sample, y [Cout, P] = W [Cout, C k^2] x
         * the patch rows [P, C k^2] transposed */
        long long N = in.d[0], K = in.d[1] * L->k * L->k, P = out.d[2] * out.d[3];
        patch_rows<<<base_grid(b, numel(in), 256, 8), 256, 0, s>>>(x, ns->patches, numel(in), in.d[1], in.d[2],
                                                                   in.d[3], L->k);
        return base_gemm(b, v, 0, 1, out.d[1], P, K, 1.0f, wp, K, 0, ns->patches, K, P * K, 0.0f,
                         dst, P, out.d[1] * P, N, s, e);
    }
    return conv_runner_run(b, ns->conv[l], v, x, wp, NULL, dst, s, e);
}

int run_product(base_ctx *b, base_variant, net_state *ns, int l, const __nv_bfloat16 *x, __nv_bfloat16 *dst,
                ew_args &A, cudaStream_t s, kbv_err *e)
{
    const net_plan *pl = ns->plan;
    const net_layer *L = &ns->spec->layers[l];
    const net_shape &in = pl->in[l], &out = pl->out[l];
    const net_param *w = net_param_of(pl, l, 0), *bi = net_param_of(pl, l, 1);
    if (L->kind == NET_LINEAR) {
        long long kk = in.d[in.ndim - 1], n = out.d[out.ndim - 1], m = numel(in) / kk;
        A.bias = NULL;
        return base_linear_bf16(b, m, n, kk, x, part_at<__nv_bfloat16>(ns, w),
                                bi ? part_at<__nv_bfloat16>(ns, bi) : NULL, dst, s, e);
    }
    if (net_is_patch_conv(L) || !ns->conv[l])
        return err_set(e, KBV_EINPUT, "baseline %s: layer %d has no bf16 path", b->p->id, l + 1);
    A.bias = bi ? part_at<__nv_bfloat16>(ns, bi) : NULL;
    return conv_runner_run_bf16(b, ns->conv[l], x, part_at<__nv_bfloat16>(ns, w), NULL, dst, s, e);
}

/* A pooling layer of kind L in the activations' type. */
int run_pool(const base_ctx *b, const net_layer *L, const net_shape &in, const net_shape &out, const float *x,
             float *y, cudaStream_t s)
{
    return base_pool2d(b, L->kind == NET_MAXPOOL2D, x, y, in.d[0] * in.d[1], (int)in.d[2], (int)in.d[3],
                       (int)out.d[2], (int)out.d[3], L->k, L->s, L->p, s);
}

int run_pool(const base_ctx *b, const net_layer *L, const net_shape &in, const net_shape &out,
             const __nv_bfloat16 *x, __nv_bfloat16 *y, cudaStream_t s)
{
    return base_pool2d_bf16(b, L->kind == NET_MAXPOOL2D, x, y, in.d[0] * in.d[1], (int)in.d[2], (int)in.d[3],
                            (int)out.d[2], (int)out.d[3], L->k, L->s, L->p, s);
}

/* The transformer layers (net_tokens.cu) and the moves of flatten and
 * dropout.  1: the layer moved nothing. */
int run_tokens(base_ctx *b, base_variant v, net_state *ns, int l, const float *x, const void *skip, float *dst,
               int in_place, cudaStream_t s, float **wrote, kbv_err *e)
{
    return net_tok_run(b, v, ns->spec, ns->plan, l, x, static_cast<const float *>(skip), dst, in_place, ns->stage.at,
                       &ns->tok, s, wrote, e);
}

/* In the BF16 setting Swin's window layers have no path (bf16path.c
 * keeps their programs on the fallback). */
int run_tokens(base_ctx *b, base_variant, net_state *ns, int l, const __nv_bfloat16 *x, const void *,
               __nv_bfloat16 *dst, int in_place, cudaStream_t s, __nv_bfloat16 **wrote, kbv_err *e)
{
    int kind = ns->spec->layers[l].kind;
    if (kind == NET_FLATTEN || kind == NET_DROPOUT) return 1;
    int rc = net_tok_run_bf16(b, ns->spec, ns->plan, l, x, dst, in_place, ns->stage.at, &ns->tok, s, wrote, e);
    if (rc != 1) return rc;
    return err_set(e, KBV_EINPUT, "baseline %s: layer %d (kind %d) has no bf16 path", b->p->id, l + 1, kind);
}

/* Layer l and the layers fused into it, on activations of type T (float;
 * bfloat16 in the BF16 setting, whose parameters are bfloat16 too);
 * *last_out gets the index of the last layer it consumed.  0 or a
 * negative KBV_E* code. */
template <typename T>
int run_group(base_ctx *b, base_variant v, net_state *ns, int l, cursor &k, cudaStream_t s,
              int *last_out, kbv_err *e)
{
    const net_spec *sp = ns->spec;
    const net_plan *pl = ns->plan;
    const net_layer *L = &sp->layers[l];
    const net_shape &in = pl->in[l], &out = pl->out[l];
    ew_args A;
    memset(&A, 0, sizeof A);
    A.pbf16 = sizeof(T) == 2;
    int bn_softmax = 0;
    int last = fuse(sp, l, k, A, &bn_softmax);
    *last_out = last;
    int to_out = ns->last_write >= l && ns->last_write <= last;
    /* in place where the current tensor is a scratch buffer neither the
     * skip nor the stack holds; else into a free one */
    int in_place_ok = k.cur != k.x && !held(k, k.cur);
    T *dst = static_cast<T *>(to_out ? k.out : free_buf(ns, k));
    T *cur_w = const_cast<T *>(static_cast<const T *>(k.cur));   /* written only where in_place_ok */
    const T *cur = cur_w;
    /* channels: dimension 1 of a map, the last of [N, F] and of tokens */
    A.C = out.ndim == 4 ? out.d[1] : out.d[out.ndim - 1];
    A.S = out.ndim == 4 ? out.d[2] * out.d[3] : 1;
    A.n = numel(out);
    int rc = 0;
    switch (L->kind) {
    case NET_LINEAR: case NET_CONV2D: case NET_CONVT2D:
        rc = run_product(b, v, ns, l, cur, dst, A, s, e);
        if (!rc && (A.bias || A.relu || A.skip)) launch_ew(b, (const T *)dst, dst, A, s);
        break;
    case NET_BN2D: {
        long long N = in.d[0], C = in.d[1], S = in.d[2] * in.d[3];
        plane_sums<<<(unsigned)(N * C), 256, 0, s>>>(cur, S, ns->part);
        bn_finalize<<<(unsigned)((C + 127) / 128), 128, 0, s>>>(ns->part, N, C, S, sp->eps, ns->stat);
        const net_param *g = net_param_of(pl, l, 0), *be = net_param_of(pl, l, 1);
        A.stat = ns->stat;
        A.gamma = part_at<T>(ns, g);
        A.beta = part_at<T>(ns, be);
        if (!to_out && in_place_ok) dst = cur_w;
        if (bn_softmax) launch_softmax(cur, dst, out, A, s);
        else launch_ew(b, cur, dst, A, s);
        break;
    }
    case NET_SOFTMAX:
        if (!to_out && in_place_ok) dst = cur_w;
        launch_softmax(cur, dst, out, A, s);
        break;
    case NET_CONCAT:
        run_concat(b, L, in, out, k, dst, s);
        break;
    case NET_SHUFFLE: {
        long long S = out.d[2] * out.d[3], planes = out.d[0] * out.d[1], per = 16 / (long long)sizeof(T);
        int vec = S % per == 0;
        shuffle_kernel<<<rows_grid(b, planes, vec ? S / per : S), 256, 0, s>>>(cur, dst, planes, out.d[1],
                                                                               L->groups, S, vec);
        break;
    }
    case NET_RELU: case NET_RELU6: case NET_SIGMOID: case NET_ADD: case NET_GELU_TANH: case NET_GELU:
        A.relu = L->kind == NET_RELU ? 1 : L->kind == NET_RELU6 ? 2 : L->kind == NET_SIGMOID ? 3 :
                 L->kind == NET_GELU_TANH ? 4 : L->kind == NET_GELU ? 5 : 0;
        A.skip = L->kind == NET_ADD ? k.skip : NULL;
        if (!to_out && in_place_ok) dst = cur_w;
        launch_ew(b, cur, dst, A, s);
        break;
    case NET_MAXPOOL2D: case NET_AVGPOOL2D:
        if (run_pool(b, L, in, out, cur, dst, s)) return base_cuda_err(e, b, "pool launch", cudaGetLastError());
        break;
    case NET_GAP: {
        long long planes = in.d[0] * in.d[1];
        gap_kernel<<<(unsigned)((planes * 32 + 255) / 256), 256, 0, s>>>(cur, dst, planes, in.d[2] * in.d[3]);
        break;
    }
    case NET_SAVE:
        /* the skip aliases the current tensor; writers never write in
         * place over it (in_place_ok) */
        k.skip = cur_w;
        return 0;
    case NET_SWAP: {
        const void *t = k.cur;
        k.cur = k.skip;
        k.skip = const_cast<void *>(t);
        return 0;
    }
    case NET_PUSH: case NET_EXCHANGE:
        run_stack(L, in, k);
        return 0;
    default: {
        /* the transformer layers (net_tokens.cu); flatten and dropout
         * move nothing */
        T *wrote = dst;
        rc = run_tokens(b, v, ns, l, cur, A.skip, dst, !to_out && in_place_ok, s, &wrote, e);
        if (rc == 1) return 0;
        dst = wrote;
        break;
    }
    }
    if (rc) return rc;
    if (A.skip) k.skip = NULL;   /* the residual sum consumed it */
    k.cur = dst;
    return 0;
}

/* The program on c's tensors of type T (see run_group). */
template <typename T>
int run_program(base_ctx *b, base_variant v, const kbv_call *c, kbv_err *e)
{
    net_state *ns = (net_state *)b->state;
    cursor k;
    k.x = c->inputs[0].data;
    k.cur = k.x;
    k.skip = NULL;
    k.depth = 0;
    k.out = c->outputs[0].data;
    int rc = net_stage_run(b, ns->plan, &ns->stage, c->inputs[1].data, (int)sizeof(T), c->stream, e);
    if (rc) return rc;
    for (int l = 0; l < ns->spec->n_layers; l++) {
        int last = l;
        rc = run_group<T>(b, v, ns, l, k, c->stream, &last, e);
        if (rc) return rc;
        l = last;
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "network launch", ce);
    /* a program whose last writer is followed by a swap ends elsewhere */
    if (k.cur != k.out) {
        ce = cudaMemcpyAsync(k.out, k.cur, (size_t)kbv_numel(&c->outputs[0]) * sizeof(T), cudaMemcpyDeviceToDevice,
                             c->stream);
        if (ce != cudaSuccess) return base_cuda_err(e, b, "copy", ce);
    }
    return 0;
}

int run(base_ctx *b, base_variant v, const kbv_call *c, kbv_err *e)
{
    return run_program<float>(b, v, c, e);
}

/* The BF16 setting (bf16path.c's native nets: programs of linear layers,
 * convolutions, batch norms, poolings, activations, residual sums,
 * concatenations and channel shuffles, layer norms and causal attention)
 * runs the same interpreter on the
 * bfloat16 tensors, as PyTorch eager runs the program in bfloat16: each
 * linear layer one cuBLASLt product, float accumulation, the bias as its
 * epilogue (base_linear_bf16); each convolution cuDNN on the bfloat16
 * tensors with float compute (conv_runner_run_bf16); every other kernel
 * kbv's, reading and writing bfloat16 with float arithmetic (the batch
 * norm's statistics in double), each activation rounded once where it is
 * written, the bfloat16 parameters read as they are. */
int run_bf16(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    /* the choice text begins with what kind of baseline this is; each
     * layer's kernel choice follows it */
    if (!b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16 layer program: cuBLASLt linear layers with the bias epilogue, "
                                       "cuDNN bf16 convolutions, cuBLAS bf16 batched products for attention, "
                                       "kbv's bf16 passes (bias, norm, activation and residual fused as in fp32)");
    return run_program<__nv_bfloat16>(b, BASE_BF16, c, e);
}

void destroy(base_ctx *b)
{
    net_state *ns = (net_state *)b->state;
    if (!ns) return;
    for (int l = 0; l < NET_MAX_LAYERS; l++)
        if (ns->conv_owner[l]) conv_runner_destroy(ns->conv[l]);
    for (int i = 0; i < ns->n_buf; i++)
        if (ns->buf[i]) cudaFree(ns->buf[i]);
    if (ns->part) cudaFree(ns->part);
    if (ns->stat) cudaFree(ns->stat);
    if (ns->patches) cudaFree(ns->patches);
    net_stage_destroy(&ns->stage);
    net_tok_destroy(&ns->tok);
    free(ns->plan);
    free(ns);
    b->state = NULL;
}

int available(const suite_problem *p, const char **why)
{
    return suite_host_available(p, why);
}

} /* namespace */

/* The BF16 setting: the programs of linear layers and ReLUs natively
 * (run_bf16); the others run the fp32 interpreter on widened inputs
 * (baseline.cu's fallback), as bf16path.c decides. */
const base_family base_fam_net = {
    "net", OP_NET_FIRST, OP_NET_LAST, create, run, destroy, NULL, run_bf16,
};
const base_family base_fam_conv_net = {
    "conv-net", OP_CONV_NET_FIRST, OP_CONV_NET_LAST, create, run, destroy, available, run_bf16,
};

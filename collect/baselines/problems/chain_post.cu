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
 * The kernels that more than this file instantiates are in
 * chain_post_impl.h; the row kernels through the last pass are compiled
 * in chain_post_rows_*.cu.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"
#include "chain_ew.h"
#include "chain_post_impl.h"

struct chain_post {
    const chain_spec *sp;
    float *buf[2];              /* ping-pong between stages, each the largest stage output */
    float2 *stat;               /* group norm statistics */
};

namespace {

using namespace chain_post_k;

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

/* rows_through into the float y, or, as the chain's last stage, into its
 * bfloat16 output y16 */
template <class T>
void rows_into(const T *src, const ew_args &P, int kind, float *y, __nv_bfloat16 *y16, const chain_dims &d, int whole,
               const ew_args &A, long long So, long long Co, cudaStream_t s)
{
    if (y16) rows_through(src, P, kind, y16, d, whole, A, So, Co, s);
    else rows_through(src, P, kind, y, d, whole, A, So, Co, s);
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
        case ST_SUM_C: case ST_SUM_ALL: rows_into(src, P, ROW_SUM, y, y16, d, 1, A, So, o.C, s); break;
        case ST_MEAN_C: case ST_MEAN_ALL: rows_into(src, P, ROW_MEAN, y, y16, d, 1, A, So, o.C, s); break;
        case ST_MAX_C: case ST_MAX_ALL: rows_into(src, P, ROW_MAX, y, y16, d, 1, A, So, o.C, s); break;
        case ST_MIN_C: rows_into(src, P, ROW_MIN, y, y16, d, 1, A, So, o.C, s); break;
        case ST_LSE_C: rows_into(src, P, ROW_LSE, y, y16, d, 1, A, So, o.C, s); break;
        default: rows_into(src, P, ROW_SOFTMAX, y, y16, d, 1, A, So, o.C, s); break;
        }
        if (y16) *wrote16 = 1;
        cudaError_t ce = cudaGetLastError();
        return ce == cudaSuccess ? 0 : base_cuda_err(e, b, "post stage launch", ce);
    }
    switch (st->kind) {
    case ST_MAXPOOL: case ST_AVGPOOL: launch_pool(b, st, in, y, d, o, A, s); y16 = NULL; break;
    case ST_SUM_S: rows_into(src, P, ROW_SUM, y, y16, d, 0, A, So, o.C, s); break;
    case ST_MEAN_S: rows_into(src, P, ROW_MEAN, y, y16, d, 0, A, So, o.C, s); break;
    case ST_SOFTMAX_S: rows_into(src, P, ROW_SOFTMAX, y, y16, d, 0, A, So, o.C, s); break;
    case ST_CENTER_S: rows_into(src, P, ROW_CENTER, y, y16, d, 0, A, So, o.C, s); break;
    case ST_SUM_ALL: rows_into(src, P, ROW_SUM, y, y16, d, 1, A, So, o.C, s); break;
    case ST_MEAN_ALL: rows_into(src, P, ROW_MEAN, y, y16, d, 1, A, So, o.C, s); break;
    case ST_MAX_ALL: rows_into(src, P, ROW_MAX, y, y16, d, 1, A, So, o.C, s); break;
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

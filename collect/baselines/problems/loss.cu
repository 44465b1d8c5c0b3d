/* loss.cu - losses reduced to a scalar: MSE, Huber (smooth L1), KL
 * divergence, hinge, triplet margin and cross entropy.
 *
 * Elementwise losses: a grid that fills the GPU walks the inputs with
 * float4 loads, each thread adding its terms in float, each block in
 * double, into one partial per block; a single block then adds the
 * partials in a fixed order (deterministic) and divides.  Row losses
 * (triplet, cross entropy) give one partial per row, computed by one block
 * per row.
 *
 * The bf16 baseline (the BF16 setting) runs the same kernels on bfloat16
 * inputs (eight values per 16-byte load for the elementwise losses, float
 * terms, double partials) and rounds the scalar to bfloat16, as PyTorch's
 * bfloat16 losses accumulate in float; the cross entropy's targets stay
 * int64.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base_impl.h"

namespace {

const int THREADS = 256;

__device__ __forceinline__ double block_sum(double v)
{
    __shared__ double sh[32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();   /* sh may still be read by a previous call */
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = 0.0;
    if (warp == 0) {
        int nw = blockDim.x >> 5;
        v = lane < nw ? sh[lane] : 0.0;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;   /* valid in thread 0 */
}

/* An input element as a float. */
__device__ __forceinline__ float ldf(const float *p) { return __ldg(p); }
__device__ __forceinline__ float ldf(const __nv_bfloat16 *p) { return __bfloat162float(__ldg(p)); }
/* The same with an evict-first load, for data read once. */
__device__ __forceinline__ float ldcsf(const float *p) { return __ldcs(p); }
__device__ __forceinline__ float ldcsf(const __nv_bfloat16 *p) { return __bfloat162float(__ldcs(p)); }
__device__ __forceinline__ float lo16(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi16(unsigned w) { return __uint_as_float(w & 0xffff0000u); }

template <int OP>
__device__ __forceinline__ float term(float p, float t)
{
    if (OP == OP_MSE) {
        float d = p - t;
        return d * d;
    } else if (OP == OP_HUBER) {
        float d = fabsf(p - t);
        return d < 1.0f ? 0.5f * d * d : d - 0.5f;
    } else if (OP == OP_KLDIV) {
        /* kl_div(input = log p, target t) = t (log t - log p), 0 where t = 0 */
        return t > 0.0f ? t * (logf(t) - logf(p)) : (t == 0.0f ? 0.0f : NAN);
    } else {   /* hinge, t broadcast by the caller */
        return fmaxf(1.0f - p * t, 0.0f);
    }
}

/* Elementwise terms of p and t (t indexed by i % t_len, for the hinge's
 * broadcast target), one double partial per block. */
/* The terms of eight bfloat16 pairs in two 16-byte words. */
template <int OP>
__device__ __forceinline__ float term8(uint4 a, uint4 b)
{
    return ((term<OP>(lo16(a.x), lo16(b.x)) + term<OP>(hi16(a.x), hi16(b.x))) +
            (term<OP>(lo16(a.y), lo16(b.y)) + term<OP>(hi16(a.y), hi16(b.y)))) +
           ((term<OP>(lo16(a.z), lo16(b.z)) + term<OP>(hi16(a.z), hi16(b.z))) +
            (term<OP>(lo16(a.w), lo16(b.w)) + term<OP>(hi16(a.w), hi16(b.w))));
}

/* The vector loop of elem_partial: float4 for float, eight bfloat16 per
 * 16-byte word for bf16; returns whether it ran (the sizes allow it). */
template <int OP>
__device__ __forceinline__ bool elem_vec(const float *p, const float *t, int64_t n, int64_t t_len, int64_t i0,
                                         int64_t stride, float &acc)
{
    if (n % 4 != 0 || t_len % 4 != 0) return false;
    const float4 *p4 = reinterpret_cast<const float4 *>(p);
    for (int64_t i = i0; i < n / 4; i += stride) {
        float4 a = __ldcs(p4 + i);
        float4 b = OP == OP_HINGE ? reinterpret_cast<const float4 *>(t)[i % (t_len / 4)]
                                  : __ldcs(reinterpret_cast<const float4 *>(t) + i);
        acc += (term<OP>(a.x, b.x) + term<OP>(a.y, b.y)) + (term<OP>(a.z, b.z) + term<OP>(a.w, b.w));
    }
    return true;
}
template <int OP>
__device__ __forceinline__ bool elem_vec(const __nv_bfloat16 *p, const __nv_bfloat16 *t, int64_t n, int64_t t_len,
                                         int64_t i0, int64_t stride, float &acc)
{
    if (n % 8 != 0 || t_len % 8 != 0) return false;
    const uint4 *p8 = reinterpret_cast<const uint4 *>(p), *t8 = reinterpret_cast<const uint4 *>(t);
    for (int64_t i = i0; i < n / 8; i += stride)
        acc += term8<OP>(__ldcs(p8 + i), OP == OP_HINGE ? t8[i % (t_len / 8)] : __ldcs(t8 + i));
    return true;
}

template <int OP, class T>
__global__ void __launch_bounds__(THREADS) elem_partial(const T *__restrict__ p,
                                                        const T *__restrict__ t, int64_t n,
                                                        int64_t t_len, double *__restrict__ part)
{
    float acc = 0.0f;
    int64_t stride = (int64_t)gridDim.x * THREADS;
    int64_t i0 = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (!elem_vec<OP>(p, t, n, t_len, i0, stride, acc))
        for (int64_t i = i0; i < n; i += stride) acc += term<OP>(ldf(p + i), ldf(t + (OP == OP_HINGE ? i % t_len : i)));
    double s = block_sum((double)acc);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

/* One block per row of [rows, d]: the triplet loss of the row. */
template <class T>
__global__ void __launch_bounds__(THREADS) triplet_rows(const T *__restrict__ a,
                                                        const T *__restrict__ pos,
                                                        const T *__restrict__ neg, int64_t d,
                                                        float margin, double *__restrict__ part)
{
    const float eps = 1e-6f;   /* pairwise_distance adds eps to the difference */
    int64_t off = (int64_t)blockIdx.x * d;
    float sp = 0.0f, sn = 0.0f;
    for (int64_t i = threadIdx.x; i < d; i += THREADS) {
        float av = ldcsf(a + off + i);
        float dp = av - ldcsf(pos + off + i) + eps;
        float dn = av - ldcsf(neg + off + i) + eps;
        sp += dp * dp;
        sn += dn * dn;
    }
    double tp = block_sum((double)sp);
    double tn = block_sum((double)sn);
    if (threadIdx.x == 0) {
        double l = sqrt(tp) - sqrt(tn) + margin;
        part[blockIdx.x] = l > 0 ? l : 0.0;
    }
}

/* One block per row: logsumexp(x) - x[target] (targets int64). */
template <class T>
__global__ void __launch_bounds__(THREADS) ce_rows(const T *__restrict__ x,
                                                   const int64_t *__restrict__ target, int64_t d,
                                                   double *__restrict__ part)
{
    const T *r = x + (int64_t)blockIdx.x * d;
    __shared__ float sm[32];
    __shared__ float mx;
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < d; i += THREADS) m = fmaxf(m, ldf(r + i));
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) sm[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = sm[0];
        for (int w = 1; w < THREADS / 32; w++) t = fmaxf(t, sm[w]);
        mx = t;
    }
    __syncthreads();
    m = mx;
    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < d; i += THREADS) s += expf(ldf(r + i) - m);
    double tot = block_sum((double)s);
    if (threadIdx.x == 0) {
        int64_t tg = target[blockIdx.x];
        double v = (tg >= 0 && tg < d) ? (double)m + log(tot) - (double)ldf(r + tg) : (double)NAN;
        part[blockIdx.x] = v;
    }
}

/* Adds n partials in a fixed order and writes total / div. */
__device__ __forceinline__ void put(float *o, double v) { *o = (float)v; }
__device__ __forceinline__ void put(__nv_bfloat16 *o, double v) { *o = __float2bfloat16_rn((float)v); }

template <class T>
__global__ void __launch_bounds__(1024) finish_sum(const double *__restrict__ part, int64_t n,
                                                   double div, T *__restrict__ out)
{
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += part[i];
    s = block_sum(s);
    if (threadIdx.x == 0) put(out, s / div);
}

int64_t partials_for(const base_ctx *b, const kbv_call *c)
{
    int op = b->p->op;
    if (op == OP_TRIPLET || op == OP_CROSS_ENTROPY) return c->inputs[0].shape[0];
    return (int64_t)(b->sm_count > 0 ? b->sm_count : 132) * 8;
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    return base_need_ws(b, (size_t)partials_for(b, ex) * sizeof(double), e);
}

/* One loss on the call's tensors of type T (float, or bfloat16 for the
 * bf16 baseline). */
template <class T>
int run_as(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    int op = b->p->op;
    cudaStream_t s = c->stream;
    const kbv_tensor *P = &c->inputs[0];
    const T *pp = (const T *)P->data;
    double *part = (double *)b->ws;
    int64_t np = partials_for(b, c);
    T *out = (T *)c->outputs[0].data;
    int64_t n = kbv_numel(P);
    double div = (double)n;
    switch (op) {
    case OP_MSE:
        elem_partial<OP_MSE, T><<<(unsigned)np, THREADS, 0, s>>>(pp, (const T *)c->inputs[1].data, n, n, part);
        break;
    case OP_HUBER:
        elem_partial<OP_HUBER, T><<<(unsigned)np, THREADS, 0, s>>>(pp, (const T *)c->inputs[1].data, n, n, part);
        break;
    case OP_KLDIV:
        elem_partial<OP_KLDIV, T><<<(unsigned)np, THREADS, 0, s>>>(pp, (const T *)c->inputs[1].data, n, n, part);
        div = (double)P->shape[0];   /* batchmean */
        break;
    case OP_HINGE:
        elem_partial<OP_HINGE, T><<<(unsigned)np, THREADS, 0, s>>>(
            pp, (const T *)c->inputs[1].data, n, kbv_numel(&c->inputs[1]), part);
        break;
    case OP_TRIPLET:
        triplet_rows<T><<<(unsigned)np, THREADS, 0, s>>>(pp, (const T *)c->inputs[1].data,
                                                         (const T *)c->inputs[2].data,
                                                      P->shape[1], (float)base_attr(b->p, "margin", 1.0), part);
        div = (double)np;
        break;
    case OP_CROSS_ENTROPY:
        ce_rows<T><<<(unsigned)np, THREADS, 0, s>>>(pp, (const int64_t *)c->inputs[1].data, P->shape[1], part);
        div = (double)np;
        break;
    default:
        return err_set(e, KBV_EINPUT, "baseline %s: unknown loss", b->p->id);
    }
    finish_sum<T><<<1, 1024, 0, s>>>(part, np, div, out);
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "loss launch", ce);
    return 0;
}

int run(base_ctx *b, base_variant, const kbv_call *c, kbv_err *e)
{
    return run_as<float>(b, c, e);
}

int run_bf16(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    int rc = run_as<__nv_bfloat16>(b, c, e);
    if (!rc && !b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16: kbv's loss kernels on bf16, fp32 terms, fp64 partials");
    return rc;
}

} /* namespace */

const base_family base_fam_loss = {
    "loss", OP_MSE, OP_LOSS_LAST, create, run, NULL, NULL, run_bf16,
};

/* pool.cu - max and average pooling, 1D to 3D, as PyTorch's native CUDA
 * kernels do it (PyTorch does not use cuDNN for these): one thread per
 * output element, the window read through the cache.
 *
 * The kernel is specialised by rank (1D, 2D, 3D), and for the suite's
 * shapes also by kernel size and dilation, so that the window loops unroll
 * into loads at constant offsets; other shapes take the same code with
 * run-time sizes.  Inside a plane every index is 32-bit (a plane holds fewer
 * than 2^31 elements, checked before launch); only the plane offsets are
 * 64-bit.  A thread decomposes its position once and reuses it for several
 * planes.
 *
 * A window lying wholly inside the input (most of them) is read without
 * any bounds test.  At the border, as in PyTorch, the window is clipped once
 * per axis: max pooling advances the start by the dilation until it is in
 * the input and ends at min(start + (k - 1) d + 1, L); average pooling
 * clips to the padded input for the divisor (count_include_pad = True) and
 * then to the input for the sum.  Max pooling propagates NaN as PyTorch
 * does; the elements are visited in the same order as before (depth, row,
 * column), so sums are unchanged.
 *
 * The bf16 baseline (the BF16 setting) runs the same kernels on bfloat16
 * tensors: float accumulation, one rounding per output, as PyTorch's
 * bfloat16 pooling kernels do.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base_impl.h"

namespace {

const int THREADS = 256;

/* Axes 0..2 are D, H, W; for rank nd < 3 the leading 3 - nd axes have
 * extent 1 and are never looped over. */
struct pool_geom {
    long long nc;             /* planes: N * C */
    int in[3], out[3];
    int k, s, p, d;           /* the same on every pooled axis */
    int in_plane, out_plane;  /* elements of one plane */
    int sd, sh;               /* strides of D and H in the input plane */
};

/* An element as a float, and a float stored, in the tensors' type. */
__device__ __forceinline__ float ldf(const float *p) { return __ldg(p); }
__device__ __forceinline__ float ldf(const __nv_bfloat16 *p) { return __bfloat162float(__ldg(p)); }
__device__ __forceinline__ void stf(float *p, float v) { *p = v; }
__device__ __forceinline__ void stf(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }

template <bool MAX>
__device__ __forceinline__ void take(float v, float &acc)
{
    if (MAX) {
        if (v > acc || isnan(v)) acc = v;
    } else {
        acc += v;
    }
}

/* grid (x: outputs of a plane, y: planes, strided).  KC and DC are the
 * kernel size and dilation when known at compile time, else 0. */
template <int ND, bool MAX, int KC, int DC, class T>
__global__ void __launch_bounds__(THREADS) pool_kernel(const T *__restrict__ x,
                                                       T *__restrict__ y, pool_geom g)
{
    const unsigned uu = blockIdx.x * blockDim.x + threadIdx.x;
    if (uu >= (unsigned)g.out_plane) return;
    const int u = (int)uu;
    const int k = KC ? KC : g.k;
    const int dl = MAX ? (DC ? DC : g.d) : 1;
    /* position in the plane; unsigned division is the cheaper one */
    int o[3] = { 0, 0, 0 };
    if (ND == 1) {
        o[2] = u;
    } else if (ND == 2) {
        unsigned r = (unsigned)u / (unsigned)g.out[2];
        o[1] = (int)r;
        o[2] = u - (int)r * g.out[2];
    } else {
        unsigned r = (unsigned)u / (unsigned)g.out[2];
        o[2] = u - (int)r * g.out[2];
        unsigned q = r / (unsigned)g.out[1];
        o[1] = (int)(r - q * (unsigned)g.out[1]);
        o[0] = (int)q;
    }
    /* window start per axis, before clipping */
    int st[3] = { 0, 0, 0 };
    bool inside = true;
#pragma unroll
    for (int a = 3 - ND; a < 3; a++) {
        st[a] = o[a] * g.s - g.p;
        inside = inside && st[a] >= 0 && st[a] + (k - 1) * dl < g.in[a];
    }
    const int kd = ND == 3 ? k : 1, kh = ND >= 2 ? k : 1;
    T *yp = y + u;
    if (inside) {
        const int base = st[0] * g.sd + st[1] * g.sh + st[2];
        for (long long pl = blockIdx.y; pl < g.nc; pl += gridDim.y) {
            const T *xp = x + pl * (long long)g.in_plane + base;
            float acc = MAX ? -INFINITY : 0.0f;
#pragma unroll
            for (int i = 0; i < kd; i++)
#pragma unroll
                for (int j = 0; j < kh; j++) {
                    const T *row = xp + i * dl * g.sd + j * dl * g.sh;
#pragma unroll
                    for (int l = 0; l < k; l++) take<MAX>(ldf(row + l * dl), acc);
                }
            stf(yp + pl * (long long)g.out_plane, MAX ? acc : acc / (float)(kd * kh * k));
        }
        return;
    }
    /* border: clip each axis once */
    int en[3] = { 1, 1, 1 };
    int size = 1;
#pragma unroll
    for (int a = 3 - ND; a < 3; a++) {
        if (MAX) {
            int e = st[a] + (k - 1) * dl + 1;
            en[a] = e < g.in[a] ? e : g.in[a];
            while (st[a] < 0) st[a] += dl;
        } else {
            int e = st[a] + k, lim = g.in[a] + g.p;
            e = e < lim ? e : lim;
            size *= e - st[a];
            st[a] = st[a] > 0 ? st[a] : 0;
            en[a] = e < g.in[a] ? e : g.in[a];
        }
    }
    for (long long pl = blockIdx.y; pl < g.nc; pl += gridDim.y) {
        const T *xp = x + pl * (long long)g.in_plane;
        float acc = MAX ? -INFINITY : 0.0f;
        for (int zd = st[0]; zd < en[0]; zd += dl)
            for (int zh = st[1]; zh < en[1]; zh += dl) {
                const T *row = xp + zd * g.sd + zh * g.sh;
                for (int zw = st[2]; zw < en[2]; zw += dl) take<MAX>(ldf(row + zw), acc);
            }
        stf(yp + pl * (long long)g.out_plane, MAX ? acc : acc / (float)size);
    }
}

int make(const base_ctx *b, const kbv_call *c, pool_geom *g, int *nd_out, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0], *y = &c->outputs[0];
    int nd = x->ndim - 2;
    if (nd < 1 || nd > 3 || y->ndim != x->ndim)
        return err_set(e, KBV_EINPUT, "baseline %s: pooling needs 3 to 5 dimensions", b->p->id);
    int k = (int)base_attr(b->p, "kernel_size", 1);
    int s = (int)base_attr(b->p, "stride", k);
    int pd = (int)base_attr(b->p, "padding", 0);
    int dl = (int)base_attr(b->p, "dilation", 1);
    if (k < 1 || s < 1 || pd < 0 || dl < 1)
        return err_set(e, KBV_EINPUT, "baseline %s: pooling parameters", b->p->id);
    memset(g, 0, sizeof *g);
    g->nc = x->shape[0] * x->shape[1];
    long long inp = 1, outp = 1;
    for (int i = 0; i < 3; i++) {
        int a = i - (3 - nd);   /* axis of the tensor, or < 0 for a missing one */
        long long li = a >= 0 ? x->shape[2 + a] : 1, lo = a >= 0 ? y->shape[2 + a] : 1;
        inp *= li;
        outp *= lo;
        if (li > INT_MAX || lo > INT_MAX || inp > INT_MAX || outp > INT_MAX)
            return err_set(e, KBV_EINPUT, "baseline %s: pooling plane too large", b->p->id);
        g->in[i] = (int)li;
        g->out[i] = (int)lo;
    }
    /* 32-bit window arithmetic: the farthest tap must stay representable */
    if ((long long)g->out[2] * s + (long long)(k - 1) * dl + pd > INT_MAX / 2 ||
        (long long)g->out[1] * s + (long long)(k - 1) * dl + pd > INT_MAX / 2 ||
        (long long)g->out[0] * s + (long long)(k - 1) * dl + pd > INT_MAX / 2)
        return err_set(e, KBV_EINPUT, "baseline %s: pooling window too large", b->p->id);
    g->k = k;
    g->s = s;
    g->p = pd;
    g->d = dl;
    g->in_plane = (int)inp;
    g->out_plane = (int)outp;
    g->sh = g->in[2];
    g->sd = g->in[1] * g->in[2];
    *nd_out = nd;
    return 0;
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    pool_geom g;
    int nd;
    return make(b, ex, &g, &nd, e);
}

template <int ND, bool MAX, int KC, int DC, class T>
void launch(dim3 grid, cudaStream_t s, const T *x, T *y, const pool_geom &g)
{
    pool_kernel<ND, MAX, KC, DC, T><<<grid, THREADS, 0, s>>>(x, y, g);
}

/* One pooling of the call's tensors of type T (float, or bfloat16 for the
 * bf16 baseline). */
template <class T>
int run_as(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    pool_geom g;
    int nd = 0;
    int rc = make(b, c, &g, &nd, e);
    if (rc) return rc;
    if (g.nc == 0 || g.out_plane == 0) return 0;
    unsigned gx = (unsigned)((g.out_plane + THREADS - 1) / THREADS);
    /* Up to 4 planes per thread, which shares the index arithmetic, as long
     * as there are still at least 64 blocks per SM. */
    long long per = 4;
    while (per > 1 && (long long)gx * ((g.nc + per - 1) / per) < (long long)b->sm_count * 64)
        per /= 2;
    long long gy = (g.nc + per - 1) / per;
    if (gy > 65535) gy = 65535;
    dim3 grid(gx, (unsigned)gy);
    const T *xp = (const T *)c->inputs[0].data;
    T *yp = (T *)c->outputs[0].data;
    cudaStream_t s = c->stream;
    const bool mx = b->p->op == OP_MAXPOOL;
    const int k = g.k, d = g.d;
    /* the suite's shapes first (l1_pool.c), then the generic kernels */
    if (mx && nd == 1 && k == 8 && d == 3) launch<1, true, 8, 3>(grid, s, xp, yp, g);
    else if (mx && nd == 2 && k == 4 && d == 1) launch<2, true, 4, 1>(grid, s, xp, yp, g);
    else if (mx && nd == 3 && k == 3 && d == 3) launch<3, true, 3, 3>(grid, s, xp, yp, g);
    else if (!mx && nd == 1 && k == 8) launch<1, false, 8, 1>(grid, s, xp, yp, g);
    else if (!mx && nd == 2 && k == 11) launch<2, false, 11, 1>(grid, s, xp, yp, g);
    else if (!mx && nd == 3 && k == 3) launch<3, false, 3, 1>(grid, s, xp, yp, g);
    else if (mx && nd == 1) launch<1, true, 0, 0>(grid, s, xp, yp, g);
    else if (mx && nd == 2) launch<2, true, 0, 0>(grid, s, xp, yp, g);
    else if (mx) launch<3, true, 0, 0>(grid, s, xp, yp, g);
    else if (nd == 1) launch<1, false, 0, 0>(grid, s, xp, yp, g);
    else if (nd == 2) launch<2, false, 0, 0>(grid, s, xp, yp, g);
    else launch<3, false, 0, 0>(grid, s, xp, yp, g);
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "pool launch", ce);
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
        base_note_choice(b, BASE_BF16, "native bf16: kbv's pooling kernels on bf16 (PyTorch's method), fp32 "
                                       "accumulation");
    return rc;
}

/* base_pool2d on elements of type T. */
template <class T>
int pool2d_as(const base_ctx *b, int max, const T *x, T *y, long long planes, int H, int W, int OH, int OW, int k,
              int s, int p, cudaStream_t st)
{
    pool_geom g;
    memset(&g, 0, sizeof g);
    g.nc = planes;
    g.in[0] = g.out[0] = 1;
    g.in[1] = H;
    g.in[2] = W;
    g.out[1] = OH;
    g.out[2] = OW;
    g.k = k;
    g.s = s;
    g.p = p;
    g.d = 1;
    g.in_plane = H * W;
    g.out_plane = OH * OW;
    g.sh = W;
    g.sd = H * W;
    if (g.nc == 0 || g.out_plane == 0) return 0;
    unsigned gx = (unsigned)((g.out_plane + THREADS - 1) / THREADS);
    long long per = 4;
    while (per > 1 && (long long)gx * ((g.nc + per - 1) / per) < (long long)b->sm_count * 64) per /= 2;
    long long gy = (g.nc + per - 1) / per;
    if (gy > 65535) gy = 65535;
    dim3 grid(gx, (unsigned)gy);
    /* the networks' windows (net.h programs), then the generic kernels */
    if (max && k == 2) launch<2, true, 2, 1>(grid, st, x, y, g);
    else if (max && k == 3) launch<2, true, 3, 1>(grid, st, x, y, g);
    else if (max) launch<2, true, 0, 0>(grid, st, x, y, g);
    else if (k == 2) launch<2, false, 2, 1>(grid, st, x, y, g);
    else launch<2, false, 0, 0>(grid, st, x, y, g);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

} /* namespace */

int base_pool2d(const base_ctx *b, int max, const float *x, float *y, long long planes, int H, int W, int OH,
                int OW, int k, int s, int p, cudaStream_t st)
{
    return pool2d_as<float>(b, max, x, y, planes, H, W, OH, OW, k, s, p, st);
}

int base_pool2d_bf16(const base_ctx *b, int max, const void *x, void *y, long long planes, int H, int W, int OH,
                     int OW, int k, int s, int p, cudaStream_t st)
{
    return pool2d_as<__nv_bfloat16>(b, max, (const __nv_bfloat16 *)x, (__nv_bfloat16 *)y, planes, H, W, OH, OW, k,
                                    s, p, st);
}

const base_family base_fam_pool = {
    "pool", OP_MAXPOOL, OP_POOL_LAST, create, run, NULL, NULL, run_bf16,
};

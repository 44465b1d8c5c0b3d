/* pool.cu - max and average pooling, 1D to 3D, as PyTorch's native CUDA
 * kernels do it (PyTorch does not use cuDNN for these): one thread per
 * output element, the window read through the cache.
 *
 * Every rank is run as 3D, the missing leading spatial axes having extent
 * 1, kernel 1, stride 1.  Max pooling propagates NaN as PyTorch does and
 * skips padding; average pooling counts padding in the divisor
 * (count_include_pad = True) with PyTorch's window clipping rule.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base_impl.h"

namespace {

struct pool3 {
    int64_t nc;               /* N * C */
    int64_t in[3], out[3];    /* D, H, W */
    int k[3], s[3], p[3], d[3];
};

/* grid (x: outputs of a plane, y: planes).  The position inside a plane is
 * decomposed with 32-bit arithmetic, much cheaper on the GPU than 64-bit
 * division; a plane holds fewer than 2^32 outputs (checked at create). */
template <bool MAX>
__global__ void pool_kernel(const float *__restrict__ x, float *__restrict__ y, pool3 g)
{
    uint32_t o1 = (uint32_t)g.out[1], o2 = (uint32_t)g.out[2];
    uint32_t per_plane = (uint32_t)(g.out[0] * g.out[1] * g.out[2]);
    for (int64_t plane = blockIdx.y; plane < g.nc; plane += gridDim.y)
    for (uint64_t uu = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; uu < per_plane;
         uu += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t u = (uint32_t)uu;
        int64_t t = plane * per_plane + u;
        int64_t ow = u % o2;
        uint32_t r = u / o2;
        int64_t oh = r % o1;
        int64_t od = r / o1;
        const float *xp = x + plane * g.in[0] * g.in[1] * g.in[2];
        int64_t d0 = od * g.s[0] - g.p[0], h0 = oh * g.s[1] - g.p[1], w0 = ow * g.s[2] - g.p[2];
        if (MAX) {
            float m = -INFINITY;
            for (int i = 0; i < g.k[0]; i++) {
                int64_t zd = d0 + (int64_t)i * g.d[0];
                if (zd < 0 || zd >= g.in[0]) continue;
                for (int j = 0; j < g.k[1]; j++) {
                    int64_t zh = h0 + (int64_t)j * g.d[1];
                    if (zh < 0 || zh >= g.in[1]) continue;
                    const float *row = xp + (zd * g.in[1] + zh) * g.in[2];
                    for (int l = 0; l < g.k[2]; l++) {
                        int64_t zw = w0 + (int64_t)l * g.d[2];
                        if (zw < 0 || zw >= g.in[2]) continue;
                        float v = row[zw];
                        if (v > m || isnan(v)) m = v;
                    }
                }
            }
            y[t] = m;
        } else {
            /* PyTorch: the window is clipped to the padded input for the
             * divisor, then to the input for the sum. */
            int64_t de = d0 + g.k[0] < g.in[0] + g.p[0] ? d0 + g.k[0] : g.in[0] + g.p[0];
            int64_t he = h0 + g.k[1] < g.in[1] + g.p[1] ? h0 + g.k[1] : g.in[1] + g.p[1];
            int64_t we = w0 + g.k[2] < g.in[2] + g.p[2] ? w0 + g.k[2] : g.in[2] + g.p[2];
            int64_t size = (de - d0) * (he - h0) * (we - w0);
            int64_t ds = d0 > 0 ? d0 : 0, hs = h0 > 0 ? h0 : 0, ws = w0 > 0 ? w0 : 0;
            if (de > g.in[0]) de = g.in[0];
            if (he > g.in[1]) he = g.in[1];
            if (we > g.in[2]) we = g.in[2];
            float acc = 0.0f;
            for (int64_t zd = ds; zd < de; zd++)
                for (int64_t zh = hs; zh < he; zh++) {
                    const float *row = xp + (zd * g.in[1] + zh) * g.in[2];
                    for (int64_t zw = ws; zw < we; zw++) acc += row[zw];
                }
            y[t] = acc / (float)size;
        }
    }
}

int make(const base_ctx *b, const kbv_call *c, pool3 *g, kbv_err *e)
{
    const kbv_tensor *x = &c->inputs[0], *y = &c->outputs[0];
    int nd = x->ndim - 2;
    if (nd < 1 || nd > 3 || y->ndim != x->ndim)
        return err_set(e, KBV_EINPUT, "baseline %s: pooling needs 3 to 5 dimensions", b->p->id);
    int k = (int)base_attr(b->p, "kernel_size", 1);
    int s = (int)base_attr(b->p, "stride", k);
    int pd = (int)base_attr(b->p, "padding", 0);
    int dl = (int)base_attr(b->p, "dilation", 1);
    g->nc = x->shape[0] * x->shape[1];
    if (kbv_numel(y) / (g->nc ? g->nc : 1) >= ((int64_t)1 << 32))
        return err_set(e, KBV_EINPUT, "baseline %s: pooling plane too large", b->p->id);
    for (int i = 0; i < 3; i++) {
        int a = i - (3 - nd);   /* axis of the tensor, or < 0 for a missing one */
        g->in[i] = a >= 0 ? x->shape[2 + a] : 1;
        g->out[i] = a >= 0 ? y->shape[2 + a] : 1;
        g->k[i] = a >= 0 ? k : 1;
        g->s[i] = a >= 0 ? s : 1;
        g->p[i] = a >= 0 ? pd : 0;
        g->d[i] = a >= 0 ? dl : 1;
    }
    return 0;
}

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    pool3 g;
    return make(b, ex, &g, e);
}

int run(base_ctx *b, base_variant, const kbv_call *c, kbv_err *e)
{
    pool3 g;
    int rc = make(b, c, &g, e);
    if (rc) return rc;
    int64_t per_plane = g.out[0] * g.out[1] * g.out[2];
    unsigned gx = (unsigned)((per_plane + 255) / 256);
    unsigned gy = (unsigned)(g.nc < 65535 ? g.nc : 65535);
    /* about 8 waves of blocks over the SMs in all, fewer per plane when
     * there are many planes */
    int64_t want = (int64_t)b->sm_count * 8 * 8 / (gy ? gy : 1);
    if (want < 1) want = 1;
    if ((int64_t)gx > want) gx = (unsigned)want;
    dim3 grid(gx, gy);
    if (b->p->op == OP_MAXPOOL)
        pool_kernel<true><<<grid, 256, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                       (float *)c->outputs[0].data, g);
    else
        pool_kernel<false><<<grid, 256, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                        (float *)c->outputs[0].data, g);
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "pool launch", ce);
    return 0;
}

} /* namespace */

const base_family base_fam_pool = {
    "pool", OP_MAXPOOL, OP_POOL_LAST, create, run, NULL, NULL,
};

// naive: depthwise 3x3 into a scratch tensor, then the pointwise 1x1, both direct.
// L1_086_conv_depthwise_separable_2d: out = torch.nn.functional.conv2d(torch.nn.functional.conv2d(x, depthwise.weight, padding=1, groups=64), pointwise.weight)
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

/* The coordinates of output element t of [N, Cout, OD, OH, OW]: returns n,
 * the rest through the pointers (one 64-bit division per step, once per
 * thread). */
__device__ __forceinline__ long long out_coords(long long t, int OD, int OH, int OW, int Cout, int *od, int *oh,
                                                int *ow, int *co)
{
    *ow = (int)(t % OW);
    t /= OW;
    *oh = (int)(t % OH);
    t /= OH;
    *od = (int)(t % OD);
    t /= OD;
    *co = (int)(t % Cout);
    return t / Cout;
}

/* Direct convolution, one thread per output element, written as 3-D with
 * unit leading dimensions.  Weight [Cout, Cin / groups, KD, KH, KW].  The
 * index arithmetic is 32-bit (launch() checks that every extent fits):
 * 64-bit divisions cost several times a multiply-add on the GPU. */
__global__ void conv_direct(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ bias,
                            float *__restrict__ y, long long N, long long Cin, long long Cout, long long groups,
                            long long ID, long long IH, long long IW, long long OD, long long OH, long long OW,
                            int KD, int KH, int KW, int sd, int sh, int sw, int pd, int ph, int pw, int dd, int dh,
                            int dw)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= N * Cout * OD * OH * OW) return;
    int iD = (int)ID, iH = (int)IH, iW = (int)IW, ow, oh, od, co;
    long long n = out_coords(t, (int)OD, (int)OH, (int)OW, (int)Cout, &od, &oh, &ow, &co);
    int cin_g = (int)(Cin / groups), cout_g = (int)(Cout / groups), g = co / cout_g;
    int plane = iD * iH * iW, kvol = KD * KH * KW;
    const float *xn = x + (n * Cin + (long long)g * cin_g) * plane;
    const float *wc = w + (long long)co * cin_g * kvol;
    float acc = bias ? bias[co] : 0.0f;
    for (int ci = 0; ci < cin_g; ci++) {
        const float *xp = xn + (long long)ci * plane, *wp = wc + ci * kvol;
        for (int a = 0; a < KD; a++) {
            int id = od * sd - pd + a * dd;
            if (id < 0 || id >= iD) continue;
            for (int b = 0; b < KH; b++) {
                int ih = oh * sh - ph + b * dh;
                if (ih < 0 || ih >= iH) continue;
                const float *xr = xp + (id * iH + ih) * iW, *wr = wp + (a * KH + b) * KW;
                for (int c = 0; c < KW; c++) {
                    int iw = ow * sw - pw + c * dw;
                    if (iw >= 0 && iw < iW) acc += xr[iw] * wr[c];
                }
            }
        }
    }
    y[t] = acc;
}

/* Transposed convolution as a gather: output o receives x[i] w[k] wherever
 * o = i * s - p + k * d.  Weight [Cin, Cout / groups, KD, KH, KW].  32-bit
 * index arithmetic, as conv_direct. */
__global__ void conv_transposed(const float *__restrict__ x, const float *__restrict__ w,
                                const float *__restrict__ bias, float *__restrict__ y, long long N, long long Cin,
                                long long Cout, long long groups, long long ID, long long IH, long long IW,
                                long long OD, long long OH, long long OW, int KD, int KH, int KW, int sd, int sh,
                                int sw, int pd, int ph, int pw, int dd, int dh, int dw)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= N * Cout * OD * OH * OW) return;
    int iD = (int)ID, iH = (int)IH, iW = (int)IW, ow, oh, od, co;
    long long n = out_coords(t, (int)OD, (int)OH, (int)OW, (int)Cout, &od, &oh, &ow, &co);
    int cin_g = (int)(Cin / groups), cout_g = (int)(Cout / groups), g = co / cout_g, cog = co % cout_g;
    int plane = iD * iH * iW, kvol = KD * KH * KW;
    float acc = bias ? bias[co] : 0.0f;
    for (int cl = 0; cl < cin_g; cl++) {
        int ci = g * cin_g + cl;
        const float *xp = x + (n * Cin + ci) * plane;
        const float *wp = w + ((long long)ci * cout_g + cog) * kvol;
        for (int a = 0; a < KD; a++) {
            int td = od + pd - a * dd;
            if (td < 0 || td % sd != 0 || td / sd >= iD) continue;
            for (int b = 0; b < KH; b++) {
                int th = oh + ph - b * dh;
                if (th < 0 || th % sh != 0 || th / sh >= iH) continue;
                const float *xr = xp + ((td / sd) * iH + th / sh) * iW, *wr = wp + (a * KH + b) * KW;
                for (int c = 0; c < KW; c++) {
                    int tw = ow + pw - c * dw;
                    if (tw >= 0 && tw % sw == 0 && tw / sw < iW) acc += xr[tw / sw] * wr[c];
                }
            }
        }
    }
    y[t] = acc;
}

struct geom {
    long long N, Cin, Cout, groups, in[3], out[3];
    int k[3];
};

/* Shapes from the tensors, padded to 3-D; 0 or 1 when they do not fit. */
static int geom_of(const kbv_tensor *x, const kbv_tensor *w, const kbv_tensor *y, int nd, int transposed, geom *g)
{
    if (x->ndim != nd + 2 || w->ndim != nd + 2 || y->ndim != nd + 2) return 1;
    g->N = x->shape[0];
    g->Cin = x->shape[1];
    g->Cout = y->shape[1];
    g->groups = transposed ? g->Cout / w->shape[1] : g->Cin / w->shape[1];
    if (g->groups < 1 || g->Cin % g->groups || g->Cout % g->groups) return 1;
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - nd);
        g->in[i] = j >= 0 ? x->shape[2 + j] : 1;
        g->out[i] = j >= 0 ? y->shape[2 + j] : 1;
        g->k[i] = j >= 0 ? (int)w->shape[2 + j] : 1;
    }
    return 0;
}

/* 0, or 1 when the shapes are beyond the kernels' 32-bit indexing. */
static int launch(const geom *g, int transposed, const float *x, const float *w, const float *b, float *y,
                  const int *s, const int *p, const int *d, cudaStream_t st)
{
    long long total = g->N * g->Cout * g->out[0] * g->out[1] * g->out[2];
    if (total == 0) return 0;
    /* The kernels' 32-bit index arithmetic: one plane of the input, the
     * output's spatial extent and the weights of one output channel. */
    const long long lim = 0x7fffffffLL;
    if (g->in[0] * g->in[1] * g->in[2] > lim || g->out[0] * g->out[1] * g->out[2] > lim ||
        g->Cin * g->Cout * (long long)g->k[0] * g->k[1] * g->k[2] > lim)
        return 1;
    unsigned blocks = (unsigned)((total + 255) / 256);
    if (transposed)
        conv_transposed<<<blocks, 256, 0, st>>>(x, w, b, y, g->N, g->Cin, g->Cout, g->groups, g->in[0], g->in[1],
                                                 g->in[2], g->out[0], g->out[1], g->out[2], g->k[0], g->k[1],
                                                 g->k[2], s[0], s[1], s[2], p[0], p[1], p[2], d[0], d[1], d[2]);
    else
        conv_direct<<<blocks, 256, 0, st>>>(x, w, b, y, g->N, g->Cin, g->Cout, g->groups, g->in[0], g->in[1],
                                             g->in[2], g->out[0], g->out[1], g->out[2], g->k[0], g->k[1], g->k[2],
                                             s[0], s[1], s[2], p[0], p[1], p[2], d[0], d[1], d[2]);
    return 0;
}

static const int S[3] = {1, 1, 1}, P[3] = {0, 1, 1}, D[3] = {1, 1, 1};
static const int ONE[3] = {1, 1, 1}, ZERO[3] = {0, 0, 0};
static float *mid;
static size_t mid_bytes;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 3 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0], *wd = &call->inputs[1], *wp = &call->inputs[2], *y = &call->outputs[0];
    if (x->ndim != 4 || wd->ndim != 4 || wp->ndim != 4 || y->ndim != 4) return 1;
    /* the depthwise result: [N, Cin, OH, OW] with OH, OW those of y (stride 1) */
    kbv_tensor m = *y;
    m.shape[1] = x->shape[1];
    size_t bytes = (size_t)kbv_numel(&m) * sizeof(float);
    if (mid_bytes < bytes) {
        cudaFree(mid);
        mid = NULL;
        mid_bytes = 0;
        if (cudaMalloc((void **)&mid, bytes) != cudaSuccess) return 1;
        mid_bytes = bytes;
    }
    m.data = mid;
    geom g1, g2;
    if (geom_of(x, wd, &m, 2, 0, &g1) || geom_of(&m, wp, y, 2, 0, &g2)) return 1;
    if (launch(&g1, 0, (const float *)x->data, (const float *)wd->data, NULL, mid, S, P, D, call->stream) ||
        launch(&g2, 0, mid, (const float *)wp->data, NULL, (float *)y->data, ONE, ZERO, ONE, call->stream))
        return 1;
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    cudaFree(mid);
    mid = NULL;
    mid_bytes = 0;
}

// naive: transposed convolution (16x16 tiled implicit GEMM), then each step of the expression as its own plain
// kernel with the shapes written in.
// L2_050_convtranspose3d_scaling_avgpool_biasadd_scaling: out = x = self.conv_transpose(x) * self.scale1; avgpool(2); x + self.bias; x * self.scale2
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

#define THREADS 256

struct prm { const float *p[8]; };
#define P0 (P.p[0])
#define P1 (P.p[1])
#define P2 (P.p[2])
#define P3 (P.p[3])
#define P4 (P.p[4])
#define P5 (P.p[5])
#define P6 (P.p[6])
#define P7 (P.p[7])

__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }
__device__ __forceinline__ float mish(float v) { return v * tanhf(v > 20.0f ? v : log1pf(expf(v))); }

__device__ float block_sum(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

__device__ float block_max(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] = fmaxf(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

/* y [M, N] = x [M, K] W^T (W stored [N, K]) + b, 16x16 shared-memory tiles. */
#define TILE 16
__global__ void linear(const float *__restrict__ x, const float *__restrict__ W, const float *__restrict__ b,
                       float *__restrict__ y, long long M, long long N, long long K)
{
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    long long row = (long long)blockIdx.x * TILE + threadIdx.y, col = (long long)blockIdx.y * TILE + threadIdx.x;
    long long wrow = (long long)blockIdx.y * TILE + threadIdx.y; /* the W row this thread loads */
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += TILE) {
        long long k = k0 + threadIdx.x;
        xs[threadIdx.y][threadIdx.x] = (row < M && k < K) ? x[row * K + k] : 0.0f;
        ws[threadIdx.x][threadIdx.y] = (wrow < N && k < K) ? W[wrow * K + k] : 0.0f; /* ws[k][n] */
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) acc += xs[threadIdx.y][kk] * ws[kk][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) y[row * N + col] = acc + (b ? b[col] : 0.0f);
}

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

/* The taps of one axis of a transposed convolution that reach the outputs
 * of one phase.  Output o receives x[i] w[k] where o + p - k d = i s, so
 * whether tap k reaches o depends on o only through o mod s: the outputs
 * o = o0 + s m of phase o0 (0 <= o0 < s) share the taps k = k0 + e t, t =
 * 0, 1, ... below K, with k0 the first that fits and e = s / gcd(s, d) the
 * step from one to the next (k d must move by a multiple of s).  Tap t
 * reaches output m from input i = m + q - t de, with q = (o0 + p - k0 d) / s
 * and de = e d / s, both exact: no division per tap.  No tap fits where
 * gcd(s, d) does not divide o0 + p or where k0 would be K or more; n is 0
 * then.  With stride 1 every tap fits: k0 = 0, e = 1, q = p, de = d. */
struct taps {
    int n, k0, e, q, de;
};

__device__ __forceinline__ taps phase_taps(int o0, int p, int s, int d, int K)
{
    taps t;
    int k = 0, e = 1;
    while (k < K && (o0 + p - k * d) % s != 0) k++;
    while (e * d % s != 0) e++;
    t.n = k < K ? (K - 1 - k) / e + 1 : 0;
    t.k0 = k;
    t.e = e;
    t.q = (o0 + p - k * d) / s;
    t.de = e * d / s;
    return t;
}

/* Transposed convolution as a gather: output o receives x[i] w[k] wherever
 * o = i * s - p + k * d; the loops visit only the taps of o's phase
 * (phase_taps), in increasing order.  Weight [Cin, Cout / groups, KD, KH,
 * KW].  32-bit index arithmetic, as conv_direct. */
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
    taps A = phase_taps(od % sd, pd, sd, dd, KD), B = phase_taps(oh % sh, ph, sh, dh, KH);
    taps C = phase_taps(ow % sw, pw, sw, dw, KW);
    /* the input index the phase's tap 0 reads */
    int bd = od / sd + A.q, bh = oh / sh + B.q, bw = ow / sw + C.q;
    float acc = bias ? bias[co] : 0.0f;
    for (int cl = 0; cl < cin_g; cl++) {
        int ci = g * cin_g + cl;
        const float *xp = x + (n * Cin + ci) * plane;
        const float *wp = w + ((long long)ci * cout_g + cog) * kvol;
        for (int ta = 0; ta < A.n; ta++) {
            int id = bd - ta * A.de;
            if (id < 0 || id >= iD) continue;
            for (int tb = 0; tb < B.n; tb++) {
                int ih = bh - tb * B.de;
                if (ih < 0 || ih >= iH) continue;
                const float *xr = xp + (id * iH + ih) * iW;
                const float *wr = wp + ((A.k0 + ta * A.e) * KH + B.k0 + tb * B.e) * KW + C.k0;
                for (int tc = 0; tc < C.n; tc++) {
                    int iw = bw - tc * C.de;
                    if (iw >= 0 && iw < iW) acc += xr[iw] * wr[tc * C.e];
                }
            }
        }
    }
    y[t] = acc;
}

/* The tiled product's edge: 16x16 threads per block, 16x16 tiles of the
 * weights and of the gathered input in shared memory, as gemm_strided. */
#define CT 16

/* A convolution as an implicit GEMM, one per group (blockIdx.z): C[co, j] =
 * sum over r of W[co, r] X[r, j], with co the output channel in the group
 * (rows, blockIdx.y), j = (n, od, oh, ow) the output position (columns,
 * blockIdx.x, the big dimension) and r = (ci, a, b, c) the input channel in
 * the group and the kernel tap.  X is not stored (no im2col buffer): each
 * thread gathers its element of the X tile from x as the tile is loaded,
 * zero where the tap falls outside the input.  Direct: x[n, ci, od s - p +
 * a d, ...] and weight [Cout, Cin / groups, KD, KH, KW]; transposed (the
 * gather form): x[n, ci, (od + p - a d) / s, ...] where the division is
 * exact and in range, weight [Cin, Cout / groups, KD, KH, KW].  One output
 * per thread, accumulated in FP32 in r order; 32-bit index arithmetic as
 * conv_direct (launch() checks the extents). */
__global__ void conv_gemm(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ bias,
                          float *__restrict__ y, int transposed, int Cin, int Cout, int cin_g, int cout_g, int cols,
                          int iD, int iH, int iW, int OD, int OH, int OW, int KD, int KH, int KW, int sd, int sh,
                          int sw, int pd, int ph, int pw, int dd, int dh, int dw)
{
    __shared__ float Ws[CT][CT];
    __shared__ float Xs[CT][CT + 1];
    int g = blockIdx.z, tx = threadIdx.x, ty = threadIdx.y;
    /* this thread's output: row co (also the W row it loads), column j
     * (also the X column it gathers) */
    int co = blockIdx.y * CT + ty, j = blockIdx.x * CT + tx;
    int osp = OD * OH * OW, plane = iD * iH * iW, khw = KH * KW, kvol = KD * khw, K = cin_g * kvol;
    int jn = j < cols ? j / osp : 0, sp = j < cols ? j % osp : 0;
    int od = sp / (OH * OW), oh = sp / OW % OH, ow = sp % OW;
    /* the input index tap 0 reads (direct), or that index times the stride
     * (transposed) */
    int bd = transposed ? od + pd : od * sd - pd, bh = transposed ? oh + ph : oh * sh - ph;
    int bw = transposed ? ow + pw : ow * sw - pw;
    const float *xg = x + ((long long)jn * Cin + (long long)g * cin_g) * plane;
    /* The X row this thread gathers, r0 + ty = (ci, a, b, c), and the W
     * column it loads, r0 + tx = (wci, wtap), as mixed-radix digits that
     * advance by CT = (sci, sa, sb, sc) each step: no division in the loop
     * but the transposed form's stride test (none where the stride is 1). */
    int ci = ty / kvol, a = ty % kvol / khw, b = ty % khw / KW, c = ty % KW;
    int wci = tx / kvol, wtap = tx % kvol;
    int sci = CT / kvol, stap = CT % kvol, sa = stap / khw, sb = stap % khw / KW, sc = stap % KW;
    float acc = 0.0f;
    for (int r0 = 0; r0 < K; r0 += CT) {
        /* W[co, r0 + tx] */
        float wv = 0.0f;
        if (co < cout_g && r0 + tx < K)
            wv = transposed ? w[((g * cin_g + wci) * cout_g + co) * kvol + wtap] : w[(g * cout_g + co) * K + r0 + tx];
        Ws[ty][tx] = wv;
        /* X[r0 + ty, j]: tap (a, b, c) of input channel ci at output j, 0
         * outside the input (and, transposed, off the stride) */
        float xv = 0.0f;
        if (j < cols && r0 + ty < K) {
            int id, ih, iw, ok;
            if (transposed) {
                int td = bd - a * dd, th = bh - b * dh, tw = bw - c * dw;
                /* most transposed convolutions have stride 1: no division */
                id = sd == 1 ? td : td / sd;
                ih = sh == 1 ? th : th / sh;
                iw = sw == 1 ? tw : tw / sw;
                ok = td >= 0 && th >= 0 && tw >= 0 && id * sd == td && ih * sh == th && iw * sw == tw;
            } else {
                id = bd + a * dd;
                ih = bh + b * dh;
                iw = bw + c * dw;
                ok = id >= 0 && ih >= 0 && iw >= 0;
            }
            if (ok && id < iD && ih < iH && iw < iW) xv = xg[ci * plane + (id * iH + ih) * iW + iw];
        }
        Xs[ty][tx] = xv;
        __syncthreads();
        for (int k = 0; k < CT; k++) acc += Ws[ty][k] * Xs[k][tx];
        __syncthreads();
        c += sc;
        b += sb;
        a += sa;
        ci += sci;
        if (c >= KW) {
            c -= KW;
            b++;
        }
        if (b >= KH) {
            b -= KH;
            a++;
        }
        if (a >= KD) {
            a -= KD;
            ci++;
        }
        wtap += stap;
        wci += sci;
        if (wtap >= kvol) {
            wtap -= kvol;
            wci++;
        }
    }
    if (co < cout_g && j < cols) {
        int oc = g * cout_g + co;
        y[((long long)jn * Cout + oc) * osp + sp] = bias ? acc + bias[oc] : acc;
    }
}

/* A row r of conv_gemm_phase's product as digits (ci, a, b, c) of radix
 * (cin_g, TA, TB, TC), the phase's tap counts; all 0 where the phase has no
 * taps (it has no rows then, and the product's loop does not run). */
struct rdig {
    int ci, a, b, c;
};

__device__ __forceinline__ rdig rdig_of(int r, int TA, int TB, int TC)
{
    rdig d = {0, 0, 0, 0};
    int tvol = TA * TB * TC;
    if (tvol == 0) return d;
    d.ci = r / tvol;
    d.a = r % tvol / (TB * TC);
    d.b = r % (TB * TC) / TC;
    d.c = r % TC;
    return d;
}

/* d advanced by the step s = rdig_of(CT, ...), carrying as conv_gemm's
 * digits do: no division in the loop. */
__device__ __forceinline__ void rdig_add(rdig *d, rdig s, int TA, int TB, int TC)
{
    d->c += s.c;
    d->b += s.b;
    d->a += s.a;
    d->ci += s.ci;
    if (d->c >= TC) {
        d->c -= TC;
        d->b++;
    }
    if (d->b >= TB) {
        d->b -= TB;
        d->a++;
    }
    if (d->a >= TA) {
        d->a -= TA;
        d->ci++;
    }
}

/* conv_gemm for a transposed convolution with a stride above 1, one product
 * per group and output phase, so that no tap off the stride is visited
 * (conv_gemm visits them all, and with stride 2 in 3-D, 7 in 8 of them are
 * off the stride for any one output).  blockIdx.z =
 * (group, phase), the phase (zd, zh, zw) the outputs' offsets modulo the
 * strides; the columns j = (n, md, mh, mw) are the phase's outputs (zd + sd
 * md, zh + sh mh, zw + sw mw), the rows r = (ci, ta, tb, tc) the input
 * channel and the phase's taps (phase_taps) in increasing (ci, a, b, c)
 * order, so each output adds the same products in the same order as
 * conv_gemm, less the zeros.  A phase that no tap reaches (a stride and a
 * dilation with a common factor, or a kernel shorter than the stride) has
 * no rows: its outputs are the bias.  32-bit index arithmetic as conv_gemm. */
__global__ void conv_gemm_phase(const float *__restrict__ x, const float *__restrict__ w,
                                const float *__restrict__ bias, float *__restrict__ y, int Cin, int Cout, int cin_g,
                                int cout_g, int N, int iD, int iH, int iW, int OD, int OH, int OW, int KD, int KH,
                                int KW, int sd, int sh, int sw, int pd, int ph, int pw, int dd, int dh, int dw)
{
    __shared__ float Ws[CT][CT];
    __shared__ float Xs[CT][CT + 1];
    int nph = sd * sh * sw, g = blockIdx.z / nph, z = blockIdx.z % nph, tx = threadIdx.x, ty = threadIdx.y;
    int zd = z / (sh * sw), zh = z / sw % sh, zw = z % sw;
    /* the phase's outputs along each axis, and its taps */
    int MD = zd < OD ? (OD - 1 - zd) / sd + 1 : 0, MH = zh < OH ? (OH - 1 - zh) / sh + 1 : 0;
    int MW = zw < OW ? (OW - 1 - zw) / sw + 1 : 0;
    taps A = phase_taps(zd, pd, sd, dd, KD), B = phase_taps(zh, ph, sh, dh, KH), C = phase_taps(zw, pw, sw, dw, KW);
    int msp = MD * MH * MW, cols = N * msp;
    /* The grid is as wide as the largest phase; the blocks past a smaller
     * one's columns leave at once (a block's threads agree, so no barrier
     * waits for them). */
    if ((int)blockIdx.x * CT >= cols) return;
    /* this thread's output: row co (also the W row it loads), column j
     * (also the X column it gathers) */
    int co = blockIdx.y * CT + ty, j = blockIdx.x * CT + tx;
    int osp = OD * OH * OW, plane = iD * iH * iW, kvol = KD * KH * KW, K = cin_g * A.n * B.n * C.n;
    int jn = j < cols ? j / msp : 0, sp = j < cols ? j % msp : 0;
    int md = sp / (MH * MW), mh = sp / MW % MH, mw = sp % MW;
    /* the input index the phase's tap 0 reads at this output */
    int bd = md + A.q, bh = mh + B.q, bw = mw + C.q;
    const float *xg = x + ((long long)jn * Cin + (long long)g * cin_g) * plane;
    /* weight [Cin, Cout / groups, KD, KH, KW]: output channel co of the
     * group, input channel 0 of the group */
    const float *wg = w + ((long long)g * cin_g * cout_g + (co < cout_g ? co : 0)) * kvol;
    /* the X row this thread gathers (r0 + ty), the W column it loads (r0 +
     * tx), and the step of both */
    rdig xr = rdig_of(ty, A.n, B.n, C.n), wr = rdig_of(tx, A.n, B.n, C.n), step = rdig_of(CT, A.n, B.n, C.n);
    float acc = 0.0f;
    for (int r0 = 0; r0 < K; r0 += CT) {
        /* W[co, r0 + tx]: input channel wr.ci, tap (k0 + e ta, ...) */
        float wv = 0.0f;
        if (co < cout_g && r0 + tx < K)
            wv = wg[wr.ci * cout_g * kvol + ((A.k0 + wr.a * A.e) * KH + B.k0 + wr.b * B.e) * KW + C.k0 + wr.c * C.e];
        Ws[ty][tx] = wv;
        /* X[r0 + ty, j]: the phase's tap (ta, tb, tc) of input channel ci
         * at output j, 0 outside the input */
        float xv = 0.0f;
        if (j < cols && r0 + ty < K) {
            int id = bd - xr.a * A.de, ih = bh - xr.b * B.de, iw = bw - xr.c * C.de;
            if (id >= 0 && ih >= 0 && iw >= 0 && id < iD && ih < iH && iw < iW)
                xv = xg[xr.ci * plane + (id * iH + ih) * iW + iw];
        }
        Xs[ty][tx] = xv;
        __syncthreads();
        for (int k = 0; k < CT; k++) acc += Ws[ty][k] * Xs[k][tx];
        __syncthreads();
        rdig_add(&xr, step, A.n, B.n, C.n);
        rdig_add(&wr, step, A.n, B.n, C.n);
    }
    if (co < cout_g && j < cols) {
        int oc = g * cout_g + co, so = ((zd + md * sd) * OH + zh + mh * sh) * OW + zw + mw * sw;
        y[((long long)jn * Cout + oc) * osp + so] = bias ? acc + bias[oc] : acc;
    }
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

/* 0, or 1 when the shapes are beyond the kernels' 32-bit indexing or the
 * grid's limits.  Groups of 8 output channels or more take the tiled
 * product (by output phase where a transposed convolution has a stride
 * above 1); fewer (the depthwise convolutions) would leave more than half
 * of each 16-row tile idle, so they keep one thread per output and no
 * tiles. */
static int launch(const geom *g, int transposed, const float *x, const float *w, const float *b, float *y,
                  const int *s, const int *p, const int *d, cudaStream_t st)
{
    long long total = g->N * g->Cout * g->out[0] * g->out[1] * g->out[2];
    if (total == 0) return 0;
    /* The kernels' 32-bit index arithmetic: the input channels of one
     * sample, the output's spatial extent over the batch (the product's
     * columns) and the weights. */
    const long long lim = 0x7fffffffLL, plane = g->in[0] * g->in[1] * g->in[2];
    const long long osp = g->out[0] * g->out[1] * g->out[2];
    if (g->Cin * plane > lim || g->N * osp > lim - CT || g->Cin * g->Cout * (long long)g->k[0] * g->k[1] * g->k[2] > lim)
        return 1;
    long long cout_g = g->Cout / g->groups;
    if (cout_g >= 8) {
        if ((cout_g + CT - 1) / CT > 65535 || g->groups > 65535) return 1;
        if (transposed && s[0] * s[1] * s[2] > 1) {
            /* one product per group and output phase, each as wide as the
             * largest phase (ceil(O / s) outputs along each axis) */
            long long nph = s[0] * s[1] * s[2], wide = 1;
            for (int i = 0; i < 3; i++) wide *= (g->out[i] + s[i] - 1) / s[i];
            if (g->groups * nph > 65535) return 1;
            dim3 block(CT, CT), grid((unsigned)((g->N * wide + CT - 1) / CT), (unsigned)((cout_g + CT - 1) / CT),
                                     (unsigned)(g->groups * nph));
            conv_gemm_phase<<<grid, block, 0, st>>>(x, w, b, y, (int)g->Cin, (int)g->Cout, (int)(g->Cin / g->groups),
                                                    (int)cout_g, (int)g->N, (int)g->in[0], (int)g->in[1],
                                                    (int)g->in[2], (int)g->out[0], (int)g->out[1], (int)g->out[2],
                                                    g->k[0], g->k[1], g->k[2], s[0], s[1], s[2], p[0], p[1], p[2],
                                                    d[0], d[1], d[2]);
            return 0;
        }
        dim3 block(CT, CT), grid((unsigned)((g->N * osp + CT - 1) / CT), (unsigned)((cout_g + CT - 1) / CT),
                                 (unsigned)g->groups);
        conv_gemm<<<grid, block, 0, st>>>(x, w, b, y, transposed, (int)g->Cin, (int)g->Cout, (int)(g->Cin / g->groups),
                                          (int)cout_g, (int)(g->N * osp), (int)g->in[0], (int)g->in[1],
                                          (int)g->in[2], (int)g->out[0], (int)g->out[1], (int)g->out[2], g->k[0],
                                          g->k[1], g->k[2], s[0], s[1], s[2], p[0], p[1], p[2], d[0], d[1], d[2]);
        return 0;
    }
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
static const int S_[3] = {2, 2, 2}, P_[3] = {1, 1, 1}, D_[3] = {1, 1, 1};

/* [planes, i0, i1, i2] -> [planes, o0, o1, o2]: max or average (padding
 * counted) over a k^3 window, one thread per output. */
__global__ void k_pool(const float *__restrict__ x, float *__restrict__ y, long long planes, int i0, int i1, int i2,
                       int o0, int o1, int o2, int k0, int k1, int k2, int s0, int s1, int s2, int p0, int p1, int p2,
                       int is_max)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= planes * o0 * o1 * o2) return;
    long long c = t % o2, b = (t / o2) % o1, a = (t / ((long long)o2 * o1)) % o0, pl = t / ((long long)o2 * o1 * o0);
    float acc = is_max ? -INFINITY : 0.0f;
    for (int u = 0; u < k0; u++)
        for (int v = 0; v < k1; v++)
            for (int w = 0; w < k2; w++) {
                long long d = a * s0 - p0 + u, h = b * s1 - p1 + v, q = c * s2 - p2 + w;
                if (d < 0 || d >= i0 || h < 0 || h >= i1 || q < 0 || q >= i2) continue;
                float e = x[((pl * i0 + d) * i1 + h) * i2 + q];
                acc = is_max ? fmaxf(acc, e) : acc + e;
            }
    y[t] = is_max ? acc : acc / (float)(k0 * k1 * k2);
}

/* over dim 1 of [N, C, S], one thread per (n, s): 0 sum, 1 mean, 2 max,
 * 3 min, 4 log-sum-exp into [N, 1, S]; 5 softmax into [N, C, S] */
__global__ void k_redc(const float *__restrict__ x, float *__restrict__ y, long long N, long long C, long long S, int op)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= N * S) return;
    long long n = t / S, s = t % S;
    const float *p = x + n * C * S + s;
    float acc = op == 3 ? INFINITY : (op >= 2 ? -INFINITY : 0.0f);
    for (long long c = 0; c < C; c++) {
        float v = p[c * S];
        acc = op == 2 || op >= 4 ? fmaxf(acc, v) : op == 3 ? fminf(acc, v) : acc + v;
    }
    if (op == 4 || op == 5) {
        float e = 0.0f;
        for (long long c = 0; c < C; c++) e += expf(p[c * S] - acc);
        if (op == 5) {
            for (long long c = 0; c < C; c++) y[(n * C + c) * S + s] = expf(p[c * S] - acc) / e;
            return;
        }
        acc = acc + logf(e);
    }
    if (op == 1) acc /= (float)C;
    y[t] = acc;
}

/* one block per row of L values: 0 sum, 1 mean, 2 max into one value; 3
 * softmax, 4 minus the mean, 5 layer norm (gamma, beta by position) in place
 * of the row */
__global__ void k_rows(const float *__restrict__ x, float *__restrict__ y, long long L, int op,
                       const float *__restrict__ g, const float *__restrict__ b, float eps)
{
    __shared__ float sh[THREADS];
    const float *r = x + (long long)blockIdx.x * L;
    if (op == 2 || op == 3) {
        float m = -INFINITY;
        for (long long j = threadIdx.x; j < L; j += THREADS) m = fmaxf(m, r[j]);
        m = block_max(m, sh);
        if (op == 2) {
            if (threadIdx.x == 0) y[blockIdx.x] = m;
            return;
        }
        float s = 0.0f;
        for (long long j = threadIdx.x; j < L; j += THREADS) s += expf(r[j] - m);
        s = block_sum(s, sh);
        for (long long j = threadIdx.x; j < L; j += THREADS) y[(long long)blockIdx.x * L + j] = expf(r[j] - m) / s;
        return;
    }
    float s = 0.0f;
    for (long long j = threadIdx.x; j < L; j += THREADS) s += r[j];
    s = block_sum(s, sh);
    if (op <= 1) {
        if (threadIdx.x == 0) y[blockIdx.x] = op == 1 ? s / (float)L : s;
        return;
    }
    float m = s / (float)L, q = 0.0f;
    for (long long j = threadIdx.x; j < L; j += THREADS) q += (r[j] - m) * (r[j] - m);
    float rstd = 1.0f / sqrtf(block_sum(q, sh) / (float)L + eps);
    for (long long j = threadIdx.x; j < L; j += THREADS)
        y[(long long)blockIdx.x * L + j] = op == 4 ? r[j] - m : (r[j] - m) * rstd * g[j] + b[j];
}

/* over the middle axis of [outer, len, inner]: 0 sum, 1 mean, 2 min */
__global__ void k_axis(const float *__restrict__ x, float *__restrict__ y, long long outer, long long len,
                       long long inner, int op)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= outer * inner) return;
    long long o = t / inner, i = t % inner;
    float acc = op == 2 ? INFINITY : 0.0f;
    for (long long a = 0; a < len; a++) {
        float v = x[(o * len + a) * inner + i];
        acc = op == 2 ? fminf(acc, v) : acc + v;
    }
    y[t] = op == 1 ? acc / (float)len : acc;
}

/* y [M, N] = x[n] + q[m, n] (x0: y[n, m] = x[n] + q[n, m]) */
__global__ void k_outer(const float *__restrict__ x, const float *__restrict__ q, float *__restrict__ y, long long N,
                        long long M, int x0)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= N * M) return;
    y[t] = x0 ? x[t / M] + q[t] : x[t % N] + q[t / N];
}

__global__ void k_copy(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) y[t] = x[t];
}

/* Normalisation groups: mode 0 contiguous groups of `per` elements (group
 * and instance norm), mode 1 column g of a [rows, C] matrix (batch norm of a
 * linear output), mode 2 channel g over (N, S) of [N, C, S] (batch norm of a
 * convolution output). */
__device__ __forceinline__ long long norm_elem(int mode, long long g, long long j, long long per, long long C,
                                               long long S)
{
    if (mode == 0) return g * per + j;
    if (mode == 1) return j * C + g;
    return ((j / S) * C + g) * S + j % S;
}

__device__ __forceinline__ long long norm_group(int mode, long long t, long long per, long long C, long long S)
{
    if (mode == 0) return t / per;
    if (mode == 1) return t % C;
    return (t / S) % C;
}

__global__ void norm_stats(const float *__restrict__ y, float *__restrict__ mean, float *__restrict__ rstd, int mode,
                           long long per, long long C, long long S, float eps)
{
    __shared__ float sh[THREADS];
    long long g = blockIdx.x;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < per; j += THREADS) s += y[norm_elem(mode, g, j, per, C, S)];
    float m = block_sum(s, sh) / (float)per;
    float q = 0.0f;
    for (long long j = threadIdx.x; j < per; j += THREADS) {
        float d = y[norm_elem(mode, g, j, per, C, S)] - m;
        q += d * d;
    }
    float var = block_sum(q, sh) / (float)per;
    if (threadIdx.x == 0) {
        mean[g] = m;
        rstd[g] = 1.0f / sqrtf(var + eps);
    }
}

__global__ void norm_apply(float *__restrict__ y, const float *__restrict__ mean, const float *__restrict__ rstd,
                           const float *__restrict__ w, const float *__restrict__ b, int mode, long long total,
                           long long per, long long C, long long S, prm P)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long g = norm_group(mode, t, per, C, S);
    long long c = (t / S) % C;
    float v = (y[t] - mean[g]) * rstd[g];
    if (w) v = v * w[c] + b[c];
    (void)P;
    (void)0;
    y[t] = v;
}

__global__ void step_0(float *__restrict__ y, long long total, long long C, long long S, prm P, const float *SV)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long c = (t / S) % C;
    (void)c;
    (void)SV;
    float v = y[t];
    v = v * P3[0];
    y[t] = v;
}

__global__ void step_2(float *__restrict__ y, long long total, long long C, long long S, prm P, const float *SV)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long c = (t / S) % C;
    (void)c;
    (void)SV;
    float v = y[t];
    v = (v + P4[c]) * P5[0];
    y[t] = v;
}
static float *scratch;

static int need(size_t bytes)
{
    if (scratch) return 0;
    return cudaMalloc((void **)&scratch, bytes) != cudaSuccess;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 6 || call->n_outputs < 1) return 1;
    if (kbv_numel(&call->inputs[0]) != 6291456LL) return 1;
    if (kbv_numel(&call->inputs[1]) != 1296LL) return 1;
    if (kbv_numel(&call->inputs[2]) != 16LL) return 1;
    if (kbv_numel(&call->inputs[3]) != 1LL) return 1;
    if (kbv_numel(&call->inputs[4]) != 16LL) return 1;
    if (kbv_numel(&call->inputs[5]) != 1LL) return 1;
    if (kbv_numel(&call->outputs[0]) != 29521920LL) return 1;
    prm P = {};
    for (int i = 0; i < call->n_inputs && i < 8; i++) P.p[i] = (const float *)call->inputs[i].data;
    const kbv_tensor *x = &call->inputs[0], *o = &call->outputs[0];
    (void)x;
    (void)o;
    cudaStream_t st = call->stream;
    if (need((size_t)281505792LL * sizeof(float))) return 1;
    float *B0 = scratch + 0LL;
    float *B1 = scratch + 251983872LL;
    kbv_tensor yt = call->inputs[0];
    yt.ndim = 5;
    yt.shape[0] = 128;
    yt.shape[1] = 16;
    yt.shape[2] = 31;
    yt.shape[3] = 63;
    yt.shape[4] = 63;
    geom g;
    if (geom_of(x, &call->inputs[1], &yt, 3, 1, &g)) return 1;
    if (launch(&g, 1, (const float *)x->data, P1, P2, B0, S_, P_, D_, st)) return 1;
    step_0<<<(unsigned)((251983872LL + THREADS - 1) / THREADS), THREADS, 0, st>>>(B0, 251983872LL, 16LL, 123039LL, P, NULL);
    k_pool<<<(unsigned)((29521920LL + THREADS - 1) / THREADS), THREADS, 0, st>>>(B0, B1, 2048LL, 31, 63, 63, 15, 31, 31, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0);
    step_2<<<(unsigned)((29521920LL + THREADS - 1) / THREADS), THREADS, 0, st>>>(B1, 29521920LL, 16LL, 14415LL, P, NULL);
    k_copy<<<(unsigned)((29521920LL + THREADS - 1) / THREADS), THREADS, 0, st>>>(B1, (float *)o->data, 29521920LL);
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    cudaFree(scratch);
    scratch = NULL;
}

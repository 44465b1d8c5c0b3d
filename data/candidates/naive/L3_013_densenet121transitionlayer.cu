// naive: one plain kernel per layer of the network: tiled FP32 GEMM, direct
// convolution, two-pass batch norm, one thread per output elsewhere.
// L3_013_densenet121transitionlayer: out = self.transition(x), transition = BatchNorm2d(32) (training), ReLU, Conv2d(32, 64, 1, bias=False), AvgPool2d(2, 2)
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

#define THREADS 256
#define TILE 16

enum { K_LINEAR, K_CONV, K_BN, K_RELU, K_MAXPOOL, K_GAP, K_FLATTEN, K_DROPOUT, K_SAVE, K_SWAP, K_ADD,
       K_AVGPOOL, K_RELU6, K_SIGMOID, K_PUSH, K_XCHG, K_CAT, K_SHUFFLE, K_CONVT, K_SOFTMAX };

/* kind, rank, shape before and after, window, stride, padding, groups, and
 * the offsets of the weight and the bias in params (-1: none); a
 * concatenation's window is the number of stack entries it pops */
struct layer { int kind, ndim; long long in[4], out[4]; int k, s, p, g; long long w, b; };

static const layer NET[] = {
    { K_BN, 4, {128LL, 32LL, 256LL, 256LL}, {128LL, 32LL, 256LL, 256LL}, 0, 1, 0, 1, 0LL, 32LL },
    { K_RELU, 4, {128LL, 32LL, 256LL, 256LL}, {128LL, 32LL, 256LL, 256LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {128LL, 32LL, 256LL, 256LL}, {128LL, 64LL, 256LL, 256LL}, 1, 1, 0, 1, 64LL, -1LL },
    { K_AVGPOOL, 4, {128LL, 64LL, 256LL, 256LL}, {128LL, 64LL, 128LL, 128LL}, 2, 2, 0, 1, -1LL, -1LL },
};
#define N_LAYERS 4
#define LAST_WRITER 3
#define MOST 536870912LL
#define WIDEST 32
#define EPS 1e-05
#define NBUF 3
#define STACK 1

static float *buf[NBUF];
static float *stats;

/* y[m, n] = sum_k x[m, k] w[n, k] + b[n] */
__global__ void linear_kernel(const float *__restrict__ x, const float *__restrict__ w,
                              const float *__restrict__ b, float *__restrict__ y, long long M,
                              long long N, long long K)
{
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    long long row = (long long)blockIdx.x * TILE + threadIdx.y;
    long long col = (long long)blockIdx.y * TILE + threadIdx.x;
    long long wrow = (long long)blockIdx.y * TILE + threadIdx.y;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += TILE) {
        long long k = k0 + threadIdx.x;
        xs[threadIdx.y][threadIdx.x] = (row < M && k < K) ? x[row * K + k] : 0.0f;
        ws[threadIdx.y][threadIdx.x] = (wrow < N && k < K) ? w[wrow * K + k] : 0.0f;
        __syncthreads();
        for (int j = 0; j < TILE; j++) acc += xs[threadIdx.y][j] * ws[threadIdx.x][j];
        __syncthreads();
    }
    if (row < M && col < N) y[row * N + col] = acc + (b ? b[col] : 0.0f);
}

/* groups G: output channel o reads the C / G input channels of its group */
__global__ void conv_kernel(const float *__restrict__ x, const float *__restrict__ w,
                            const float *__restrict__ b, float *__restrict__ y, long long N, int C,
                            int H, int W, int O, int OH, int OW, int k, int s, int p, int G)
{
    long long total = N * O * OH * OW;
    int Cg = C / G, Og = O / G;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        int ow = (int)(i % OW), oh = (int)((i / OW) % OH), o = (int)((i / ((long long)OW * OH)) % O);
        long long n = i / ((long long)OW * OH * O);
        float acc = b ? b[o] : 0.0f;
        for (int cg = 0; cg < Cg; cg++) {
            int c = (o / Og) * Cg + cg;
            const float *xp = x + (n * C + c) * H * W;
            const float *wp = w + ((long long)o * Cg + cg) * k * k;
            for (int kh = 0; kh < k; kh++) {
                int h = oh * s - p + kh;
                if (h < 0 || h >= H) continue;
                for (int kw = 0; kw < k; kw++) {
                    int ww = ow * s - p + kw;
                    if (ww < 0 || ww >= W) continue;
                    acc += xp[(long long)h * W + ww] * wp[kh * k + kw];
                }
            }
        }
        y[i] = acc;
    }
}

/* Sum of v over the block, in a fixed order; every thread gets it. */
__device__ float block_sum(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int o = THREADS / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

/* one block per channel: the mean, then the biased variance around it */
__global__ void bn_stats(const float *__restrict__ x, float *__restrict__ mean, float *__restrict__ rstd,
                         long long N, long long C, long long S)
{
    __shared__ float sh[THREADS];
    long long c = blockIdx.x, cnt = N * S;
    float s = 0.0f;
    for (long long i = threadIdx.x; i < cnt; i += THREADS) s += x[((i / S) * C + c) * S + i % S];
    float m = block_sum(s, sh) / (float)cnt;
    float q = 0.0f;
    for (long long i = threadIdx.x; i < cnt; i += THREADS) {
        float d = x[((i / S) * C + c) * S + i % S] - m;
        q += d * d;
    }
    float var = block_sum(q, sh) / (float)cnt;
    if (threadIdx.x == 0) {
        mean[c] = m;
        rstd[c] = 1.0f / sqrtf(var + (float)EPS);
    }
}

__global__ void bn_apply(const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ mean,
                         const float *__restrict__ rstd, const float *__restrict__ g,
                         const float *__restrict__ b, long long total, long long C, long long S)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long c = (i / S) % C;
        y[i] = (x[i] - mean[c]) * rstd[c] * g[c] + b[c];
    }
}

/* the residual sum (skip given), else by mode: 0 relu, 1 relu6, 2 sigmoid */
__global__ void ew_kernel(const float *__restrict__ x, const float *__restrict__ skip,
                          float *__restrict__ y, long long total, int mode)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        float v = x[i];
        if (skip) v += skip[i];
        else if (mode == 2) v = 1.0f / (1.0f + expf(-v));
        else v = mode == 1 ? fminf(fmaxf(v, 0.0f), 6.0f) : fmaxf(v, 0.0f);
        y[i] = v;
    }
}

__global__ void maxpool_kernel(const float *__restrict__ x, float *__restrict__ y, long long planes, int H,
                               int W, int OH, int OW, int k, int s, int p)
{
    long long total = planes * OH * OW;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        int ow = (int)(i % OW), oh = (int)((i / OW) % OH);
        const float *xp = x + (i / ((long long)OW * OH)) * H * W;
        float m = -INFINITY;
        for (int kh = 0; kh < k; kh++) {
            int h = oh * s - p + kh;
            if (h < 0 || h >= H) continue;
            for (int kw = 0; kw < k; kw++) {
                int w = ow * s - p + kw;
                if (w < 0 || w >= W) continue;
                float v = xp[(long long)h * W + w];
                if (v > m || isnan(v)) m = v;
            }
        }
        y[i] = m;
    }
}

/* average over the window, the padding counted in the divisor */
__global__ void avgpool_kernel(const float *__restrict__ x, float *__restrict__ y, long long planes, int H,
                               int W, int OH, int OW, int k, int s, int p)
{
    long long total = planes * OH * OW;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        int ow = (int)(i % OW), oh = (int)((i / OW) % OH);
        const float *xp = x + (i / ((long long)OW * OH)) * H * W;
        int h0 = oh * s - p, w0 = ow * s - p;
        int h1 = min(h0 + k, H + p), w1 = min(w0 + k, W + p);
        float div = (float)((h1 - h0) * (w1 - w0)), acc = 0.0f;
        for (int h = max(h0, 0); h < min(h1, H); h++)
            for (int w = max(w0, 0); w < min(w1, W); w++) acc += xp[(long long)h * W + w];
        y[i] = acc / div;
    }
}

/* transposed convolution, weight [C, O / G, k, k]: output (n, o, oh, ow)
 * gathers input (c, ih, iw) of o's group where oh = ih s - p + kh */
__global__ void convt_kernel(const float *__restrict__ x, const float *__restrict__ w,
                             const float *__restrict__ b, float *__restrict__ y, long long N, int C,
                             int H, int W, int O, int OH, int OW, int k, int s, int p, int G)
{
    long long total = N * O * OH * OW;
    int Cg = C / G, Og = O / G;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        int ow = (int)(i % OW), oh = (int)((i / OW) % OH), o = (int)((i / ((long long)OW * OH)) % O);
        long long n = i / ((long long)OW * OH * O);
        float acc = b ? b[o] : 0.0f;
        for (int cg = 0; cg < Cg; cg++) {
            int c = (o / Og) * Cg + cg;
            for (int kh = 0; kh < k; kh++) {
                int th = oh + p - kh;
                if (th < 0 || th % s != 0 || th / s >= H) continue;
                for (int kw = 0; kw < k; kw++) {
                    int tw = ow + p - kw;
                    if (tw < 0 || tw % s != 0 || tw / s >= W) continue;
                    acc += x[((n * C + c) * H + th / s) * W + tw / s] *
                           w[(((long long)c * Og + o % Og) * k + kh) * k + kw];
                }
            }
        }
        y[i] = acc;
    }
}

/* softmax along rows of L elements, one thread per row */
__global__ void softmax_kernel(const float *__restrict__ x, float *__restrict__ y, long long rows, long long L)
{
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows;
         r += (long long)gridDim.x * blockDim.x) {
        const float *xp = x + r * L;
        float m = -INFINITY, s = 0.0f;
        for (long long j = 0; j < L; j++) m = fmaxf(m, xp[j]);
        for (long long j = 0; j < L; j++) s += expf(xp[j] - m);
        for (long long j = 0; j < L; j++) y[r * L + j] = expf(xp[j] - m) / s;
    }
}

/* one part of a concatenation: src [N, Cp, S] into channels off.. of
 * dst [N, Ct, S] */
__global__ void cat_kernel(const float *__restrict__ src, float *__restrict__ dst, long long N, long long Cp,
                           long long S, long long Ct, long long off)
{
    long long total = N * Cp * S;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long n = i / (Cp * S), r = i % (Cp * S);
        dst[n * Ct * S + off * S + r] = src[i];
    }
}

/* channel shuffle in G groups: output channel j G + i is input channel
 * i (C / G) + j */
__global__ void shuffle_kernel(const float *__restrict__ x, float *__restrict__ y, long long N, long long C,
                               long long S, long long G)
{
    long long total = N * C * S;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long n = i / (C * S), co = (i / S) % C, r = i % S;
        long long ci = (co % G) * (C / G) + co / G;
        y[i] = x[(n * C + ci) * S + r];
    }
}

/* one thread per plane */
__global__ void gap_kernel(const float *__restrict__ x, float *__restrict__ y, long long planes, long long S)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= planes) return;
    float s = 0.0f;
    for (long long j = 0; j < S; j++) s += x[i * S + j];
    y[i] = s / (float)S;
}

static unsigned blocks(long long n)
{
    long long b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b > 65535 ? 65535 : (b < 1 ? 1 : b));
}

static long long numel(const long long *d)
{
    return d[0] * d[1] * d[2] * d[3];
}

extern "C" int kbv_setup(const kbv_call *call)
{
    (void)call;
    for (int i = 0; i < NBUF; i++)
        if (cudaMalloc((void **)&buf[i], (size_t)MOST * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&stats, 2 * WIDEST * sizeof(float)) != cudaSuccess) return 1;
    return 0;
}

extern "C" void kbv_teardown(void)
{
    for (int i = 0; i < NBUF; i++) {
        cudaFree(buf[i]);
        buf[i] = NULL;
    }
    cudaFree(stats);
    stats = NULL;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs != 2 || call->n_outputs != 1 || !buf[0]) return 1;
    if (kbv_numel(&call->inputs[0]) != 268435456LL || kbv_numel(&call->outputs[0]) != 134217728LL) return 1;
    const float *P = (const float *)call->inputs[1].data;
    const float *cur = (const float *)call->inputs[0].data;
    const float *skip = NULL;
    /* the stack: saved tensors and their channels */
    const float *stk[STACK];
    long long stk_c[STACK];
    int depth = 0;
    cudaStream_t st = call->stream;
    for (int l = 0; l < N_LAYERS; l++) {
        const layer &L = NET[l];
        float *dst = (float *)call->outputs[0].data;
        if (l != LAST_WRITER)
            for (int i = 0; i < NBUF; i++) {
                bool used = buf[i] == cur || buf[i] == skip;
                for (int d = 0; d < depth; d++) used = used || buf[i] == stk[d];
                if (!used) { dst = buf[i]; break; }
            }
        const float *w = L.w >= 0 ? P + L.w : NULL, *b = L.b >= 0 ? P + L.b : NULL;
        long long n = numel(L.out);
        switch (L.kind) {
        case K_LINEAR: {
            dim3 grid((unsigned)((L.in[0] + TILE - 1) / TILE), (unsigned)((L.out[1] + TILE - 1) / TILE));
            linear_kernel<<<grid, dim3(TILE, TILE), 0, st>>>(cur, w, b, dst, L.in[0], L.out[1], L.in[1]);
            break;
        }
        case K_CONV:
            conv_kernel<<<blocks(n), THREADS, 0, st>>>(cur, w, b, dst, L.in[0], (int)L.in[1], (int)L.in[2],
                                                       (int)L.in[3], (int)L.out[1], (int)L.out[2],
                                                       (int)L.out[3], L.k, L.s, L.p, L.g);
            break;
        case K_BN:
            bn_stats<<<(unsigned)L.in[1], THREADS, 0, st>>>(cur, stats, stats + WIDEST, L.in[0], L.in[1],
                                                            L.in[2] * L.in[3]);
            bn_apply<<<blocks(n), THREADS, 0, st>>>(cur, dst, stats, stats + WIDEST, w, b, n, L.in[1],
                                                    L.in[2] * L.in[3]);
            break;
        case K_RELU: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, NULL, dst, n, 0); break;
        case K_RELU6: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, NULL, dst, n, 1); break;
        case K_SIGMOID: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, NULL, dst, n, 2); break;
        case K_ADD: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, skip, dst, n, 0); skip = NULL; break;
        case K_MAXPOOL:
            maxpool_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.in[0] * L.in[1], (int)L.in[2],
                                                          (int)L.in[3], (int)L.out[2], (int)L.out[3], L.k,
                                                          L.s, L.p);
            break;
        case K_AVGPOOL:
            avgpool_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.in[0] * L.in[1], (int)L.in[2],
                                                          (int)L.in[3], (int)L.out[2], (int)L.out[3], L.k,
                                                          L.s, L.p);
            break;
        case K_GAP:
            gap_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.in[0] * L.in[1], L.in[2] * L.in[3]);
            break;
        case K_CONVT:
            convt_kernel<<<blocks(n), THREADS, 0, st>>>(cur, w, b, dst, L.in[0], (int)L.in[1], (int)L.in[2],
                                                        (int)L.in[3], (int)L.out[1], (int)L.out[2],
                                                        (int)L.out[3], L.k, L.s, L.p, L.g);
            break;
        case K_SOFTMAX: {
            long long len = L.out[L.ndim - 1];
            softmax_kernel<<<blocks(n / len), THREADS, 0, st>>>(cur, dst, n / len, len);
            break;
        }
        case K_CAT: {
            long long S = L.out[2] * L.out[3], off = 0;
            for (int d = depth - L.k; d <= depth; d++) {
                const float *src = d < depth ? stk[d] : cur;
                long long cp = d < depth ? stk_c[d] : L.in[1];
                cat_kernel<<<blocks(L.out[0] * cp * S), THREADS, 0, st>>>(src, dst, L.out[0], cp, S, L.out[1], off);
                off += cp;
            }
            depth -= L.k;
            break;
        }
        case K_SHUFFLE:
            shuffle_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.out[0], L.out[1], L.out[2] * L.out[3], L.g);
            break;
        case K_PUSH: stk_c[depth] = L.in[1]; stk[depth++] = cur; continue;
        case K_XCHG: { const float *t = cur; cur = stk[depth - 1]; stk[depth - 1] = t; stk_c[depth - 1] = L.in[1]; continue; }
        case K_SAVE: skip = cur; continue;
        case K_SWAP: { const float *t = cur; cur = skip; skip = t; continue; }
        default: continue;   /* flatten and dropout(p=0) move nothing */
        }
        cur = dst;
    }
    CHECK_LAUNCH();
}

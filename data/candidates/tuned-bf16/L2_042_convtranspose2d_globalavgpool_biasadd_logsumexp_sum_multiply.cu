// tuned-bf16 (hand-written): L2_042_convtranspose2d_globalavgpool_biasadd_logsumexp_sum_multiply:
// out = 10 * logsumexp(mean(conv_transpose(x), dim=(2, 3)) + bias, dim=1)   [N, 1]
//
// An algebraic rewrite that removes the convolution.  The mean over the
// output positions of a transposed convolution is linear in x: each input
// value x[n, ci, i, j] reaches output (i s - p + kh d, j s - p + kw d) through
// tap (kh, kw) with weight W[ci, co, kh, kw], so the output's sum for
// (n, co) is sum over ci and taps of W[ci, co, kh, kw] times the sum of the
// plane (n, ci) over the input positions that tap keeps inside the output
// (all of them here: stride 1, no padding), plus the bias at every
// position.  One streaming pass over x (512 MiB in bfloat16: the plane
// sums, 16-byte loads), then per sample a 64 x 128 x 9 contraction with W,
// the bias, the log-sum-exp over the 128 channels and the factor 10.  Any
// baseline runs the transposed convolution (620 GFLOP, well over 1 ms)
// and reads its 1 GiB output back; this is bound by reading x once, about
// 0.12 ms: expected over 8x against the bf16 baseline.  The registry's
// floor_flops counts the rewrite's operations (DESIGN 5a step 6).
// Accuracy: float sums per thread, double per block and per output.
#include "kbv.h"
#include <math.h>
#include <stdint.h>
#include <cuda_bf16.h>

#define THREADS 256
#define MAXK 7          /* taps per axis handled (KernelBench: 3) */

/* Scratch from kbv_setup: per (n, ci) and tap (kh, kw), the sum of the
 * input plane over the positions whose output position of that tap lies
 * inside the output (N Cin k^2 floats). */
static float *g_tap;
static long long g_tap_n;

__device__ __forceinline__ float lo16(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi16(unsigned w) { return __uint_as_float(w & 0xffff0000u); }

/* Transposed-convolution geometry of one axis: input extent, output
 * extent, taps, stride, padding, dilation.  Input position i feeds output
 * position i s - p + t d with tap t. */
struct axis { int in, out, k, s, p, d; };

/* The input positions [lo, hi] whose tap-t output lies in [0, out). */
__device__ __forceinline__ void valid(const axis &a, int t, int &lo, int &hi)
{
    int off = a.p - t * a.d;                         /* o = i s - off */
    lo = off > 0 ? (off + a.s - 1) / a.s : 0;
    int top = a.out - 1 + off;                       /* i s <= top */
    hi = top < 0 ? -1 : top / a.s;
    if (hi > a.in - 1) hi = a.in - 1;
}

/* The sum of v over the block (every thread gets it), in double. */
__device__ __forceinline__ double block_sum(double v)
{
    __shared__ double sh[THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    double t = 0.0;
    for (int w = 0; w < THREADS / 32; w++) t += sh[w];
    return t;
}

/* One block per plane (n, ci) of x [N, Cin, H, W]: the plane's total
 * (16-byte loads, four in flight per thread, when the plane allows), then
 * for each tap pair the total minus the rows and columns that tap pair
 * sends outside the output (a few border rows and columns, read again),
 * into tap[plane][kh][kw]. */
__global__ void __launch_bounds__(THREADS) plane_taps(const __nv_bfloat16 *__restrict__ x, float *__restrict__ tap,
                                                      axis ah, axis aw, int vec)
{
    long long HW = (long long)ah.in * aw.in;
    const __nv_bfloat16 *p = x + (long long)blockIdx.x * HW;
    float acc = 0.0f;
    if (vec) {
        const uint4 *p8 = reinterpret_cast<const uint4 *>(p);
        long long n8 = HW / 8, i = threadIdx.x;
        for (; i + 3 * THREADS < n8; i += 4 * THREADS) {
            uint4 v[4];
#pragma unroll
            for (int u = 0; u < 4; u++) v[u] = __ldcs(p8 + i + u * THREADS);
#pragma unroll
            for (int u = 0; u < 4; u++)
                acc += ((lo16(v[u].x) + hi16(v[u].x)) + (lo16(v[u].y) + hi16(v[u].y))) +
                       ((lo16(v[u].z) + hi16(v[u].z)) + (lo16(v[u].w) + hi16(v[u].w)));
        }
        for (; i < n8; i += THREADS) {
            uint4 v = __ldcs(p8 + i);
            acc += ((lo16(v.x) + hi16(v.x)) + (lo16(v.y) + hi16(v.y))) + ((lo16(v.z) + hi16(v.z)) + (lo16(v.w) + hi16(v.w)));
        }
    } else {
        for (long long i = threadIdx.x; i < HW; i += THREADS) acc += __bfloat162float(p[i]);
    }
    double total = block_sum((double)acc);
    float *out = tap + (long long)blockIdx.x * ah.k * aw.k;
    for (int kh = 0; kh < ah.k; kh++) {
        int ilo, ihi;
        valid(ah, kh, ilo, ihi);
        for (int kw = 0; kw < aw.k; kw++) {
            int jlo, jhi;
            valid(aw, kw, jlo, jhi);
            double s;
            if (ilo > ihi || jlo > jhi) {
                s = 0.0;
            } else if (ilo == 0 && ihi == ah.in - 1 && jlo == 0 && jhi == aw.in - 1) {
                s = total;
            } else {
                /* total - the rows outside [ilo, ihi] - the columns outside
                 * [jlo, jhi] (within the rows kept, so no corner twice) */
                float e = 0.0f;
                /* whole rows above ilo and below ihi */
                for (int i = 0; i < ah.in; i++) {
                    if (i == ilo) i = ihi + 1;
                    if (i >= ah.in) break;
                    for (int j = threadIdx.x; j < aw.in; j += THREADS) e += __bfloat162float(p[(long long)i * aw.in + j]);
                }
                /* columns left of jlo and right of jhi, within the rows kept */
                for (int j = 0; j < aw.in; j++) {
                    if (j == jlo) j = jhi + 1;
                    if (j >= aw.in) break;
                    for (int i = ilo + (int)threadIdx.x; i <= ihi; i += THREADS) e += __bfloat162float(p[(long long)i * aw.in + j]);
                }
                s = total - block_sum((double)e);
            }
            if (threadIdx.x == 0) out[kh * aw.k + kw] = (float)s;
        }
    }
}

/* One block per sample n: m[co] = (sum over ci and taps of tap[n, ci] W[ci,
 * co]) / (OH OW) + cbias[co] + bias[co], then 10 logsumexp over co. */
__global__ void __launch_bounds__(THREADS) finish(const float *__restrict__ tap, const __nv_bfloat16 *__restrict__ w,
                                                  const __nv_bfloat16 *__restrict__ cbias,
                                                  const __nv_bfloat16 *__restrict__ bias, __nv_bfloat16 *__restrict__ out,
                                                  int Cin, int Cout, int kk, double area)
{
    extern __shared__ float m[];
    const float *t = tap + (long long)blockIdx.x * Cin * kk;
    for (int co = threadIdx.x; co < Cout; co += THREADS) {
        double s = 0.0;
        for (int ci = 0; ci < Cin; ci++)
            for (int q = 0; q < kk; q++)
                s += (double)t[ci * kk + q] * __bfloat162float(w[((long long)ci * Cout + co) * kk + q]);
        m[co] = (float)(s / area + __bfloat162float(cbias[co]) + __bfloat162float(bias[co]));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float mx = -INFINITY;
        for (int co = 0; co < Cout; co++) mx = fmaxf(mx, m[co]);
        double e = 0.0;
        for (int co = 0; co < Cout; co++) e += exp((double)m[co] - mx);
        out[blockIdx.x] = __float2bfloat16_rn((float)(10.0 * (mx + log(e))));
    }
}

extern "C" int kbv_setup(const kbv_call *example)
{
    if (example->n_inputs < 4) return 1;
    const kbv_tensor *x = &example->inputs[0], *w = &example->inputs[1];
    g_tap_n = x->shape[0] * x->shape[1] * w->shape[2] * w->shape[3];
    return cudaMalloc((void **)&g_tap, (size_t)g_tap_n * sizeof(float)) == cudaSuccess ? 0 : 1;
}

extern "C" void kbv_teardown(void)
{
    if (g_tap) cudaFree(g_tap);
    g_tap = NULL;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 4 || call->n_outputs < 1 || call->inputs[0].dtype != KBV_BF16) return 1;
    const kbv_tensor *x = &call->inputs[0], *w = &call->inputs[1];
    if (x->ndim != 4 || w->ndim != 4 || w->shape[0] != x->shape[1] || w->shape[2] > MAXK || w->shape[3] > MAXK)
        return 1;
    int N = (int)x->shape[0], Cin = (int)x->shape[1], Cout = (int)w->shape[1];
    /* nn.ConvTranspose2d(in, out, kernel_size): stride 1, no padding */
    axis ah = {(int)x->shape[2], 0, (int)w->shape[2], 1, 0, 1}, aw = {(int)x->shape[3], 0, (int)w->shape[3], 1, 0, 1};
    ah.out = (ah.in - 1) * ah.s - 2 * ah.p + ah.d * (ah.k - 1) + 1;
    aw.out = (aw.in - 1) * aw.s - 2 * aw.p + aw.d * (aw.k - 1) + 1;
    long long need = (long long)N * Cin * ah.k * aw.k;
    if (!g_tap || need > g_tap_n || kbv_numel(&call->outputs[0]) != N || kbv_numel(&call->inputs[2]) != Cout ||
        kbv_numel(&call->inputs[3]) != Cout)
        return 1;
    if (N == 0) return 0;
    int vec = ((long long)ah.in * aw.in) % 8 == 0 && (uintptr_t)x->data % 16 == 0;
    plane_taps<<<(unsigned)(N * Cin), THREADS, 0, call->stream>>>((const __nv_bfloat16 *)x->data, g_tap, ah, aw, vec);
    finish<<<(unsigned)N, THREADS, (size_t)Cout * sizeof(float), call->stream>>>(
        g_tap, (const __nv_bfloat16 *)w->data, (const __nv_bfloat16 *)call->inputs[2].data,
        (const __nv_bfloat16 *)call->inputs[3].data, (__nv_bfloat16 *)call->outputs[0].data, Cin, Cout, ah.k * aw.k,
        (double)ah.out * aw.out);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

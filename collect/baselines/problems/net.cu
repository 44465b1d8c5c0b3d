/* net.cu - the level-3 interpreter: runs a layer program (problems/net.h)
 * with cuBLAS (linear layers: one GEMM, x W^T) and cuDNN (convolutions,
 * through conv.cu's runners, which choose their algorithm by timing), and
 * kbv's own kernels where PyTorch runs its own too: batch norm with batch
 * statistics, max pooling (pool.cu's kernel), the global average pool,
 * ReLU and the residual sum.  Transformer layers (net.h) run as PyTorch
 * eager runs minGPT's and nn.MultiheadAttention's code: per head, a
 * strided-batched cuBLAS product for the scores [N, T, T] (q and k read in
 * place from the packed q, k, v, with their row stride), the mask and
 * softmax (or ReLU) over the keys, and a second product into the head's
 * columns of the output; layer norm over the last dimension, GELU and the
 * token transposes are kbv's own kernels.
 *
 * What follows a producer is fused into one elementwise pass where the
 * data flow allows, as the level-2 interpreter does: a layer's bias and the
 * activation (ReLU, ReLU6, sigmoid, GELU) after it, and for a linear layer
 * a residual sum after it; a batch norm's normalisation, affine, the
 * residual sum after it and the ReLU after that.  PyTorch runs one kernel per module
 * (and cuBLASLt fuses only the bias), so the baseline reads and writes each
 * activation at most as often as PyTorch eager does.
 *
 * Activations live in three scratch buffers of the largest activation's
 * size: the current tensor, the skip tensor and one free buffer are always
 * enough, since no layer reads more than those two.  x is read-only and
 * never written; the group of layers that writes last writes straight into
 * the output.  Convolutions of the same geometry share one cuDNN runner.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"

extern "C" {
#include "net.h"
#include "suite_host.h"
}

namespace {

/* --- kernels ---------------------------------------------------------------- */

/* What one elementwise pass applies, in this order: the producer's bias,
 * the batch norm (mean, rstd per channel, then gamma, beta), the residual
 * sum, the ReLU.  The tensor is [N, C, S] (S = 1 for a linear layer). */
struct ew_args {
    const float *bias;          /* per channel, or NULL */
    const float2 *stat;         /* per channel, or NULL */
    const float *gamma, *beta;  /* with stat */
    const float *skip;          /* same shape, or NULL */
    int relu;                   /* 0 none, 1 ReLU, 2 ReLU6, 3 sigmoid, 4 GELU (tanh form), 5 GELU (erf) */
    long long C, S, n;
};

__device__ __forceinline__ float ew_one(const ew_args &A, float v, long long c, float sk)
{
    if (A.bias) v += A.bias[c];
    if (A.stat) {
        float2 st = A.stat[c];
        v = (v - st.x) * st.y * A.gamma[c] + A.beta[c];
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
__global__ void __launch_bounds__(256) ew_kernel(const float *__restrict__ x, float *y, ew_args A,
                                                 long long rows, long long L, int vec)
{
    for (long long row = blockIdx.y; row < rows; row += gridDim.y) {
        const long long base = row * L, rc = A.S > 1 ? row % A.C : 0;
        const long long step = (long long)gridDim.x * blockDim.x;
        const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        if (vec) {
            for (long long i = t0; i < L / 4; i += step) {
                float4 v = reinterpret_cast<const float4 *>(x + base)[i];
                float4 k = A.skip ? reinterpret_cast<const float4 *>(A.skip + base)[i] : make_float4(0, 0, 0, 0);
                long long c = A.S > 1 ? rc : 4 * i, dc = A.S > 1 ? 0 : 1;
                v.x = ew_one(A, v.x, c, k.x);
                v.y = ew_one(A, v.y, c + dc, k.y);
                v.z = ew_one(A, v.z, c + 2 * dc, k.z);
                v.w = ew_one(A, v.w, c + 3 * dc, k.w);
                reinterpret_cast<float4 *>(y + base)[i] = v;
            }
        } else {
            for (long long j = t0; j < L; j += step)
                y[base + j] = ew_one(A, x[base + j], A.S > 1 ? rc : j, A.skip ? A.skip[base + j] : 0.0f);
        }
    }
}

/* Batch-norm statistics, pass 1: one block per (n, c) plane of S
 * elements, sums in double (a channel's mean can be large next to its
 * spread, and E[x^2] - E[x]^2 must not cancel to noise). */
__global__ void __launch_bounds__(256) plane_sums(const float *__restrict__ x, long long S,
                                                  double2 *__restrict__ part)
{
    const float *p = x + (long long)blockIdx.x * S;
    double s = 0.0, ss = 0.0;
    for (long long i = threadIdx.x; i < S; i += blockDim.x) {
        double v = p[i];
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
__global__ void __launch_bounds__(256) gap_kernel(const float *__restrict__ x, float *__restrict__ y,
                                                  long long planes, long long S)
{
    long long pl = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (pl >= planes) return;
    const float *p = x + pl * S;
    float s = 0.0f;
    for (long long i = lane; i < S; i += 32) s += p[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) y[pl] = s / (float)S;
}

/* Max and sum over the block (blockDim.x a multiple of 32, at most 1024);
 * every thread gets the result. */
__device__ float block_max(float v)
{
    __shared__ float sh[32];
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads();
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = sh[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); w++) v = fmaxf(v, sh[w]);
    return v;
}

__device__ float block_fsum(float v)
{
    __shared__ float sh[32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = 0.0f;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++) v += sh[w];
    return v;
}

/* Causal softmax of score rows in place: one block per row of T scores,
 * row r is query r % T, whose keys after it get weight 0 (masked_fill with
 * -inf, then softmax). */
__global__ void __launch_bounds__(256) causal_softmax(float *__restrict__ sc, long long T)
{
    float *row = sc + (long long)blockIdx.x * T;
    const long long q = (long long)blockIdx.x % T;
    float m = -INFINITY;
    for (long long j = threadIdx.x; j <= q; j += blockDim.x) m = fmaxf(m, row[j]);
    m = block_max(m);
    float sum = 0.0f;
    for (long long j = threadIdx.x; j <= q; j += blockDim.x) sum += expf(row[j] - m);
    const float inv = 1.0f / block_fsum(sum);
    for (long long j = threadIdx.x; j < T; j += blockDim.x) row[j] = j <= q ? expf(row[j] - m) * inv : 0.0f;
}

/* relu of score rows [rows, T] in place; with causal, the keys after the
 * query (row % T) become 0 (-inf through the ReLU). */
__global__ void __launch_bounds__(256) relu_scores(float *__restrict__ sc, long long rows, long long T, int causal)
{
    const long long n = rows * T;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long q = (i / T) % T, j = i % T;
        float v = sc[i];
        sc[i] = (causal && j > q) ? 0.0f : fmaxf(v, 0.0f);
    }
}

/* LayerNorm over rows of C: one warp per row, the mean, then the biased
 * variance around it (a second read of the row, from L1). */
__global__ void __launch_bounds__(256) layernorm_rows(const float *x, float *y, const float *__restrict__ g,
                                                      const float *__restrict__ b, long long rows, int C,
                                                      float eps)
{
    long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (r >= rows) return;
    const float *p = x + r * C;
    float s = 0.0f;
    for (int i = lane; i < C; i += 32) s += p[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    const float mean = s / (float)C;
    float q = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float d = p[i] - mean;
        q += d * d;
    }
    for (int o = 16; o > 0; o >>= 1) q += __shfl_xor_sync(0xffffffffu, q, o);
    const float rstd = rsqrtf(q / (float)C + eps);
    float *o = y + r * C;
    for (int i = lane; i < C; i += 32) o[i] = (p[i] - mean) * rstd * g[i] + b[i];
}

/* y[n] = x[n]^T for planes x[n] of [R, Cc] (tokens: [C, H W] -> [H W, C],
 * and back); 32 x 32 tiles through shared memory. */
__global__ void transpose_planes(const float *__restrict__ x, float *__restrict__ y, long long R, long long Cc)
{
    __shared__ float t[32][33];
    const float *xp = x + (long long)blockIdx.z * R * Cc;
    float *yp = y + (long long)blockIdx.z * R * Cc;
    long long r0 = (long long)blockIdx.y * 32, c0 = (long long)blockIdx.x * 32;
    for (int i = threadIdx.y; i < 32; i += 8) {
        long long r = r0 + i, c = c0 + threadIdx.x;
        if (r < R && c < Cc) t[i][threadIdx.x] = xp[r * Cc + c];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += 8) {
        long long c = c0 + i, r = r0 + threadIdx.x;
        if (r < R && c < Cc) yp[c * R + r] = t[threadIdx.x][i];
    }
}

/* ViT's patches: y[n] is x[n] read in the order (c, h / k, w / k, h % k,
 * w % k) (unfold, unfold, reshape); one thread per element. */
__global__ void unfold_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, long long C,
                              long long H, long long W, int k)
{
    const long long hp = H / k, wp = W / k;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long f = i, pj = f % k;
        f /= k;
        long long pi = f % k;
        f /= k;
        long long wi = f % wp;
        f /= wp;
        long long hi = f % hp;
        f /= hp;   /* sample * C + channel */
        y[i] = x[(f * H + hi * k + pi) * W + wi * k + pj];
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

/* cat((cls.expand(N, 1, C), x), 1): y [N, T + 1, C] from x [N, T, C]. */
__global__ void cls_kernel(const float *__restrict__ x, const float *__restrict__ cls, float *__restrict__ y,
                           long long n, long long T, long long C)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long c = i % C, t = (i / C) % (T + 1), s = i / (C * (T + 1));
        y[i] = t == 0 ? cls[c] : x[(s * T + t - 1) * C + c];
    }
}

/* y = x + pos, pos [T C] broadcast over the samples. */
__global__ void pos_kernel(const float *x, const float *__restrict__ pos, float *y, long long n, long long TC)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i] + pos[i % TC];
}

/* Swin's spatial MLP, gather: tokens x [N, S, S, C] (S x S map) into
 * windows w [heads, k^2, N nW, C / heads] (nW windows of the map padded by
 * pb before and pa after with zeros), so that one product per head mixes
 * the k^2 tokens of every window at once. */
__global__ void window_gather(const float *__restrict__ x, float *__restrict__ w, long long n, long long N,
                              int S, int C, int k, int heads, int pb, int side_w)
{
    const int dh = C / heads, k2 = k * k;
    const long long cols = N * side_w * side_w * dh;   /* a head's row length: N nW dh */
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long col = i % cols, hj = i / cols;
        int j = (int)(hj % k2), h = (int)(hj / k2), c = (int)(col % dh);
        long long win = col / dh;   /* (sample, window row, window column) */
        int wx = (int)(win % side_w), wy = (int)((win / side_w) % side_w);
        long long smp = win / ((long long)side_w * side_w);
        int y = wy * k + j / k - pb, xx = wx * k + j % k - pb;
        w[i] = (y >= 0 && y < S && xx >= 0 && xx < S) ? x[((smp * S + y) * S + xx) * C + h * dh + c] : 0.0f;
    }
}

/* Scatter back: y [N, S, S, C] = the mixed windows o (w's layout) at the
 * map's own tokens, + the bias per (head, window position), + skip. */
__global__ void window_scatter(const float *__restrict__ o, const float *__restrict__ bias,
                               const float *skip, float *y, long long n, int S, int C, int k,
                               int heads, int pb, int side_w)
{
    const int dh = C / heads, k2 = k * k;
    const long long N = n / ((long long)S * S * C), cols = N * side_w * side_w * dh;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        int ch = (int)(i % C), h = ch / dh, c = ch % dh;
        long long t = i / C;
        int xx = (int)(t % S) + pb, yy = (int)((t / S) % S) + pb;
        long long smp = t / ((long long)S * S);
        int j = (yy % k) * k + xx % k;
        long long win = (smp * side_w + yy / k) * side_w + xx / k;
        float v = o[((long long)h * k2 + j) * cols + win * dh + c] + bias[h * k2 + j];
        y[i] = skip ? v + skip[i] : v;
    }
}

/* PatchMerging's gather: y [N, S/2, S/2, 4C], the quarter q of its last
 * dimension x[2i + (q & 1), 2j + (q >> 1)]. */
__global__ void merge_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, int S, int C)
{
    const int h2 = S / 2;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        int c4 = (int)(i % (4 * C)), q = c4 / C, c = c4 % C;
        long long t = i / (4 * C);
        int jj = (int)(t % h2), ii = (int)((t / h2) % h2);
        long long smp = t / ((long long)h2 * h2);
        y[i] = x[((smp * S + 2 * ii + (q & 1)) * S + 2 * jj + (q >> 1)) * C + c];
    }
}

/* The mean over the tokens: y[n, c] = mean over t of x[n, t, c]; one
 * thread per output, consecutive threads on consecutive channels. */
__global__ void token_mean(const float *__restrict__ x, float *__restrict__ y, long long N, long long T,
                           long long C)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N * C) return;
    const float *p = x + (i / C) * T * C + i % C;
    float s = 0.0f;
    for (long long t = 0; t < T; t++) s += p[t * C];
    y[i] = s / (float)T;
}

/* Swin V2: the windows of the map rolled by -s, rows (sample, window row,
 * window column, position in the window) of C. */
__global__ void roll_windows(const float *__restrict__ x, float *__restrict__ y, long long n, int S, int C, int k,
                             int sh)
{
    const int nw = S / k;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        int c = (int)(i % C);
        long long r = i / C;
        int j = (int)(r % (k * k));
        long long w = r / (k * k);
        int wx = (int)(w % nw), wy = (int)((w / nw) % nw);
        long long smp = w / ((long long)nw * nw);
        int yy = (wy * k + j / k + sh) % S, xx = (wx * k + j % k + sh) % S;
        y[i] = x[((smp * S + yy) * S + xx) * C + c];
    }
}

/* And back: y [N, S, S, C] from the window rows r (the roll undone), + bias. */
__global__ void unroll_windows(const float *__restrict__ r, const float *__restrict__ bias, float *__restrict__ y,
                               long long n, int S, int C, int k, int sh)
{
    const int nw = S / k;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        int c = (int)(i % C);
        long long t = i / C;
        int xx = (int)(t % S), yy = (int)((t / S) % S);
        long long smp = t / ((long long)S * S);
        int ry = (yy - sh + S) % S, rx = (xx - sh + S) % S;
        long long row = ((smp * nw + ry / k) * nw + rx / k) * (k * k) + (ry % k) * k + rx % k;
        y[i] = r[row * C + c] + bias[c];
    }
}

/* qkv rows [M, 3C]: + (q_bias, 0, v_bias), then q and k of every head
 * divided by max(norm, 1e-12) (F.normalize); one thread per (row, head). */
__global__ void qkv_prepare(float *__restrict__ qkv, const float *__restrict__ qb, const float *__restrict__ vb,
                            long long rows, int C, int H)
{
    const int d = C / H;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows * H;
         i += (long long)gridDim.x * blockDim.x) {
        int h = (int)(i % H);
        float *q = qkv + (i / H) * 3 * C + h * d, *kk = q + C, *v = q + 2 * C;
        float sq = 0.0f, sk = 0.0f;
        for (int c = 0; c < d; c++) {
            q[c] += qb[h * d + c];
            v[c] += vb[h * d + c];
            sq += q[c] * q[c];
            sk += kk[c] * kk[c];
        }
        float iq = 1.0f / fmaxf(sqrtf(sq), 1e-12f), ik = 1.0f / fmaxf(sqrtf(sk), 1e-12f);
        for (int c = 0; c < d; c++) {
            q[c] *= iq;
            kk[c] *= ik;
        }
    }
}

/* The position-bias table: one block per offset r = (dy, dx), the hidden
 * layer relu(W1 c + b1) in shared memory, then 16 sigmoid(W2 hidden) per
 * head into t [R, H]. */
__global__ void cpb_table(const float *__restrict__ w1, const float *__restrict__ b1, const float *__restrict__ w2,
                          float *__restrict__ t, int k, int H)
{
    __shared__ float hid[NET_CPB_HIDDEN];
    const int r = blockIdx.x, span = 2 * k - 1;
    float c[2] = { (float)(r / span - (k - 1)), (float)(r % span - (k - 1)) };
    for (int a = 0; a < 2; a++) {
        float v = c[a] / (float)(k - 1) * 8.0f;
        c[a] = (v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : 0.0f) * log2f(fabsf(v) + 1.0f) / 3.0f;
    }
    for (int j = threadIdx.x; j < NET_CPB_HIDDEN; j += blockDim.x)
        hid[j] = fmaxf(w1[2 * j] * c[0] + w1[2 * j + 1] * c[1] + b1[j], 0.0f);
    __syncthreads();
    for (int h = threadIdx.x >> 5; h < H; h += blockDim.x >> 5) {
        float s = 0.0f;
        for (int j = threadIdx.x & 31; j < NET_CPB_HIDDEN; j += 32) s += w2[h * NET_CPB_HIDDEN + j] * hid[j];
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if ((threadIdx.x & 31) == 0) t[r * H + h] = 16.0f / (1.0f + expf(-s));
    }
}

/* Scores of head h in place, rows of k^2 (window w = row / k^2 % windows
 * of an image): times exp(min(logit_scale, log 100)), + the table's bias,
 * + the shifted windows' mask, softmax; one warp per row. */
__global__ void window_softmax(float *__restrict__ sc, const float *__restrict__ table,
                               const float *__restrict__ logit_scale, long long rows, int h, int H, int S, int k,
                               int sh)
{
    long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= rows) return;
    const int k2 = k * k, nw = S / k, span = 2 * k - 1, i = (int)(row % k2);
    const long long w = (row / k2) % ((long long)nw * nw);
    const int wy = (int)(w / nw), wx = (int)(w % nw), iy = i / k, ix = i % k;
    const float scale = expf(fminf(logit_scale[h], 4.605170185988091f));
    /* region of a rolled-map coordinate: before S - k, before S - s, after */
    auto region = [&](int y, int x) {
        int ry = y < S - k ? 0 : y < S - sh ? 1 : 2, rx = x < S - k ? 0 : x < S - sh ? 1 : 2;
        return 3 * ry + rx;
    };
    const int ri = region(wy * k + iy, wx * k + ix);
    float *p = sc + row * k2;
    float v[4], m = -INFINITY;   /* k^2 <= 128 keys: 4 a lane */
    for (int a = 0; a < 4; a++) {
        int j = lane + 32 * a;
        v[a] = -INFINITY;
        if (j < k2) {
            int jy = j / k, jx = j % k;
            float b = table[((iy - jy + k - 1) * span + ix - jx + k - 1) * H + h];
            float mk = (sh && region(wy * k + jy, wx * k + jx) != ri) ? -100.0f : 0.0f;
            v[a] = p[j] * scale + b + mk;
        }
        m = fmaxf(m, v[a]);
    }
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.0f;
    for (int a = 0; a < 4; a++) {
        v[a] = lane + 32 * a < k2 ? expf(v[a] - m) : 0.0f;
        s += v[a];
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    for (int a = 0; a < 4; a++)
        if (lane + 32 * a < k2) p[lane + 32 * a] = v[a] / s;
}

/* --- the interpreter -------------------------------------------------------- */

struct net_state {
    const net_spec *spec;
    net_plan *plan;
    conv_runner *conv[NET_MAX_LAYERS];     /* per conv layer; shared by equal geometries */
    conv_geom geom[NET_MAX_LAYERS];
    int conv_owner[NET_MAX_LAYERS];        /* 1: this layer's runner is its own to free */
    float *buf[3];
    double2 *part;                         /* plane sums, N * C of the widest norm */
    float2 *stat;                          /* per channel */
    float *scores;                         /* one head's attention scores, N T^2 of the largest */
    float *patches;                        /* a patch embedding's input as rows */
    float *win[2];                         /* a spatial MLP's windows, before and after */
    float *wa[3];                          /* window attention: rows, qkv, the heads' outputs */
    float *table;                          /* its position-bias table, (2k - 1)^2 x heads */
    int last_write;                        /* the last layer that writes data */
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
           kind == NET_RELU6 || kind == NET_SIGMOID || kind == NET_LAYERNORM || kind == NET_GELU_TANH ||
           kind == NET_ATTENTION || kind == NET_TOKENS || kind == NET_UNTOKENS || kind == NET_UNFOLD ||
           kind == NET_CLS || kind == NET_POS || kind == NET_FIRST_TOKEN || kind == NET_GELU ||
           kind == NET_WINDOW_MLP || kind == NET_MERGE || kind == NET_TOKEN_MEAN || kind == NET_WINDOW_ATTN;
}

/* The parameter part of layer l (weight or bias), or NULL. */
const net_param *param_of(const net_plan *pl, int l, int is_bias)
{
    for (int q = 0; q < pl->n_params; q++)
        if (pl->param[q].layer == l && pl->param[q].is_bias == is_bias) return &pl->param[q];
    return NULL;
}

int create_convs(base_ctx *b, net_state *ns, kbv_err *e)
{
    const net_spec *sp = ns->spec;
    for (int l = 0; l < sp->n_layers; l++) {
        const net_layer *L = &sp->layers[l];
        if (L->kind != NET_CONV2D || net_is_patch_conv(L)) continue;
        const net_shape &in = ns->plan->in[l], &out = ns->plan->out[l];
        conv_geom &g = ns->geom[l];
        memset(&g, 0, sizeof g);
        g.nd = 2;
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
    int64_t most = 0, widest = 0, planes = 0, scores = 0, patches = 0, windows = 0, wrows = 0, wtable = 0;
    int linear = 0;
    for (int l = 0; l < sp->n_layers; l++) {
        int64_t n = numel(ns->plan->out[l]);
        if (n > most) most = n;
        if (writes(sp->layers[l].kind)) ns->last_write = l;
        if (sp->layers[l].kind == NET_LINEAR) linear = 1;
        if (sp->layers[l].kind == NET_ATTENTION) {
            /* sequences of T: [N, T, 3C], or [T, N, 3C] with seq-first */
            const net_shape &s = ns->plan->in[l];
            int64_t T = (sp->layers[l].k & NET_ATTN_SEQ_FIRST) ? s.d[0] : s.d[1];
            linear = 1;
            if (s.d[0] * s.d[1] * T > scores) scores = s.d[0] * s.d[1] * T;
        }
        if (sp->layers[l].kind == NET_WINDOW_MLP) {
            /* the padded map: (S + k)^2 tokens when shifted */
            const net_layer &W = sp->layers[l];
            const net_shape &s = ns->plan->in[l];
            int64_t side = net_side(s.d[1]) + (W.s ? W.k : 0);
            linear = 1;
            if (s.d[0] * side * side * s.d[2] > windows) windows = s.d[0] * side * side * s.d[2];
        }
        if (sp->layers[l].kind == NET_WINDOW_ATTN) {
            /* rows M C, and per head the scores of every window; a window's
             * keys fit window_softmax's warp */
            const net_layer &W = sp->layers[l];
            if (W.k * W.k > 128)
                return err_set(e, KBV_EINPUT, "baseline %s: windows of more than 128 tokens", b->p->id);
            int64_t M = ns->plan->in[l].d[0] * ns->plan->in[l].d[1], R = (2LL * W.k - 1) * (2LL * W.k - 1);
            linear = 1;
            if (M * ns->plan->in[l].d[2] > wrows) wrows = M * ns->plan->in[l].d[2];
            if (M * W.k * W.k > scores) scores = M * W.k * W.k;
            if (R * W.groups > wtable) wtable = R * W.groups;
        }
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
    int rc = linear ? base_need_blas(b, e) : 0;
    if (!rc) rc = create_convs(b, ns, e);
    if (rc) return rc;
    for (int i = 0; i < 3; i++) {
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
    if (scores > 0) {
        cudaError_t ce = cudaMalloc(&ns->scores, (size_t)scores * sizeof(float));
        if (ce != cudaSuccess) {
            ns->scores = NULL;
            return base_cuda_err(e, b, "attention scores", ce);
        }
    }
    if (patches > 0) {
        cudaError_t ce = cudaMalloc(&ns->patches, (size_t)patches * sizeof(float));
        if (ce != cudaSuccess) {
            ns->patches = NULL;
            return base_cuda_err(e, b, "patch rows", ce);
        }
    }
    for (int i = 0; wrows > 0 && i < 4; i++) {
        float **to = i < 3 ? &ns->wa[i] : &ns->table;
        cudaError_t ce = cudaMalloc(to, (size_t)(i == 3 ? wtable : i == 1 ? 3 * wrows : wrows) * sizeof(float));
        if (ce != cudaSuccess) {
            *to = NULL;
            return base_cuda_err(e, b, "window attention buffers", ce);
        }
    }
    for (int i = 0; windows > 0 && i < 2; i++) {
        cudaError_t ce = cudaMalloc(&ns->win[i], (size_t)windows * sizeof(float));
        if (ce != cudaSuccess) {
            ns->win[i] = NULL;
            return base_cuda_err(e, b, "spatial MLP windows", ce);
        }
    }
    /* A depthwise convolution is also timed against kbv's direct kernel
     * (conv.cu), on scratch buffers: the weight, C k^2 floats, fits in one. */
    for (int l = 0; !rc && l < sp->n_layers; l++)
        if (ns->conv_owner[l] && ns->geom[l].groups > 1)
            rc = conv_runner_tune(b, ns->conv[l], ns->buf[0], ns->buf[1], ns->buf[2], ex->stream, e);
    return rc;
}

/* Where the walk stands while running: the current tensor and the skip. */
struct cursor {
    const float *cur;
    float *skip;
    const float *x;
    float *out;
};

/* A buffer that is neither the current tensor nor the skip. */
float *free_buf(const net_state *ns, const cursor &k)
{
    for (int i = 0; i < 3; i++)
        if (ns->buf[i] != k.cur && ns->buf[i] != k.skip) return ns->buf[i];
    return NULL;
}

void launch_ew(const base_ctx *b, const float *x, float *y, const ew_args &A, cudaStream_t s)
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

/* Layer l and the layers fused into it; *last_out gets the index of the
 * last layer it consumed.  0 or a negative KBV_E* code. */
int run_group(base_ctx *b, base_variant v, net_state *ns, int l, cursor &k, const float *params,
              cudaStream_t s, int *last_out, kbv_err *e)
{
    const net_spec *sp = ns->spec;
    const net_plan *pl = ns->plan;
    const net_layer *L = &sp->layers[l];
    const net_shape &in = pl->in[l], &out = pl->out[l];
    int last = l;
    *last_out = l;
    /* the layers a producer or a norm absorbs: the residual sum (norms
     * only) and the ReLU, with identity dropouts between them skipped */
    ew_args A;
    memset(&A, 0, sizeof A);
    if (L->kind == NET_LINEAR || L->kind == NET_CONV2D || L->kind == NET_BN2D) {
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
    *last_out = last;
    int to_out = ns->last_write >= l && ns->last_write <= last;
    /* in place where the current tensor is a scratch buffer the skip does
     * not share; else into a free one */
    int in_place_ok = k.cur != k.x && k.cur != k.skip;
    float *dst = to_out ? k.out : free_buf(ns, k);
    /* channels: dimension 1 of a map, the last of [N, F] and of tokens */
    A.C = out.ndim == 4 ? out.d[1] : out.d[out.ndim - 1];
    A.S = out.ndim == 4 ? out.d[2] * out.d[3] : 1;
    A.n = numel(out);
    int rc = 0;
    switch (L->kind) {
    case NET_LINEAR: {
        const net_param *w = param_of(pl, l, 0), *bi = param_of(pl, l, 1);
        long long kk = in.d[in.ndim - 1], n = out.d[out.ndim - 1], m = numel(in) / kk;
        rc = base_gemm(b, v, 0, 1, m, n, kk, 1.0f, k.cur, kk, 0, params + w->offset, kk, 0, 0.0f, dst, n, 0,
                       1, s, e);
        A.bias = bi ? params + bi->offset : NULL;
        if (!rc && (A.bias || A.relu || A.skip)) launch_ew(b, dst, dst, A, s);
        break;
    }
    case NET_CONV2D: {
        const net_param *w = param_of(pl, l, 0), *bi = param_of(pl, l, 1);
        if (net_is_patch_conv(L)) {
            /* disjoint patches: per sample, y [Cout, P] = W [Cout, C k^2] x
             * the patch rows [P, C k^2] transposed */
            long long N = in.d[0], K = in.d[1] * L->k * L->k, P = out.d[2] * out.d[3];
            patch_rows<<<base_grid(b, numel(in), 256, 8), 256, 0, s>>>(k.cur, ns->patches, numel(in), in.d[1],
                                                                       in.d[2], in.d[3], L->k);
            rc = base_gemm(b, v, 0, 1, out.d[1], P, K, 1.0f, params + w->offset, K, 0, ns->patches, K, P * K, 0.0f,
                           dst, P, out.d[1] * P, N, s, e);
        } else {
            rc = conv_runner_run(b, ns->conv[l], v, k.cur, params + w->offset, NULL, dst, s, e);
        }
        A.bias = bi ? params + bi->offset : NULL;
        if (!rc && (A.bias || A.relu)) launch_ew(b, dst, dst, A, s);
        break;
    }
    case NET_BN2D: {
        long long N = in.d[0], C = in.d[1], S = in.d[2] * in.d[3];
        plane_sums<<<(unsigned)(N * C), 256, 0, s>>>(k.cur, S, ns->part);
        bn_finalize<<<(unsigned)((C + 127) / 128), 128, 0, s>>>(ns->part, N, C, S, sp->eps, ns->stat);
        const net_param *g = param_of(pl, l, 0), *be = param_of(pl, l, 1);
        A.stat = ns->stat;
        A.gamma = params + g->offset;
        A.beta = params + be->offset;
        if (!to_out && in_place_ok) dst = (float *)k.cur;
        launch_ew(b, k.cur, dst, A, s);
        break;
    }
    case NET_ATTENTION: {
        /* per head: scores = scale q k^T (batch N), the mask and softmax
         * or ReLU, then the head's columns of dst = P v.  A sequence's
         * rows are `step` rows of the input apart and sequences `bstep`
         * apart: [N, T, 3C] (step 1, bstep T), or seq-first [T, N, 3C]
         * (step N, bstep 1). */
        int sf = (L->k & NET_ATTN_SEQ_FIRST) != 0;
        long long N = in.d[sf ? 1 : 0], T = in.d[sf ? 0 : 1], C = out.d[2], H = L->groups, d = C / H;
        long long step = sf ? N : 1, bstep = sf ? 1 : T;
        float scale = (float)(1.0 / sqrt((double)d));
        for (long long h = 0; !rc && h < H; h++) {
            const float *q = k.cur + h * d;
            rc = base_gemm(b, v, 0, 1, T, T, d, scale, q, step * 3 * C, bstep * 3 * C, q + C, step * 3 * C,
                           bstep * 3 * C, 0.0f, ns->scores, T, T * T, N, s, e);
            if (rc) break;
            if (L->k & NET_ATTN_RELU)
                relu_scores<<<base_grid(b, N * T * T, 256, 8), 256, 0, s>>>(ns->scores, N * T, T,
                                                                           L->k & NET_ATTN_CAUSAL);
            else if (L->k & NET_ATTN_CAUSAL)
                causal_softmax<<<(unsigned)(N * T), 256, 0, s>>>(ns->scores, T);
            else
                base_softmax_rows(ns->scores, ns->scores, N * T, T, 0, s);
            rc = base_gemm(b, v, 0, 0, T, d, T, 1.0f, ns->scores, T, T * T, q + 2 * C, step * 3 * C, bstep * 3 * C,
                           0.0f, dst + h * d, step * C, bstep * C, N, s, e);
        }
        break;
    }
    case NET_LAYERNORM: {
        const net_param *g = param_of(pl, l, 0), *be = param_of(pl, l, 1);
        long long C = in.d[in.ndim - 1], rows = numel(in) / C;
        if (!to_out && in_place_ok) dst = (float *)k.cur;
        layernorm_rows<<<(unsigned)((rows * 32 + 255) / 256), 256, 0, s>>>(k.cur, dst, params + g->offset,
                                                                           params + be->offset, rows, (int)C,
                                                                           (float)sp->eps);
        break;
    }
    case NET_TOKENS: case NET_UNTOKENS: {
        /* tokens: each sample's [C, H W] transposed; untokens: [H W, C] */
        long long N = in.d[0], R = in.d[1], Cc = numel(in) / (N * R);
        dim3 grid((unsigned)((Cc + 31) / 32), (unsigned)((R + 31) / 32), (unsigned)N);
        transpose_planes<<<grid, dim3(32, 8), 0, s>>>(k.cur, dst, R, Cc);
        break;
    }
    case NET_WINDOW_MLP: {
        /* gather the (padded) windows per head, one strided-batched product
         * over the heads (weight [k^2, k^2] times the head's [k^2, N nW dh]),
         * scatter back with the bias (and the residual) */
        const net_param *w = param_of(pl, l, 0), *bi = param_of(pl, l, 1);
        int S = (int)net_side(in.d[1]), C = (int)in.d[2], kk = L->k, H = L->groups, k2 = kk * kk;
        int pb = L->s ? kk - L->s : 0, sw = (S + (L->s ? kk : 0)) / kk;
        long long cols = in.d[0] * (long long)sw * sw * (C / H), nw = (long long)H * k2 * cols;
        window_gather<<<base_grid(b, nw, 256, 8), 256, 0, s>>>(k.cur, ns->win[0], nw, in.d[0], S, C, kk, H, pb, sw);
        rc = base_gemm(b, v, 0, 0, k2, cols, k2, 1.0f, params + w->offset, k2, (long long)k2 * k2, ns->win[0], cols,
                       k2 * cols, 0.0f, ns->win[1], cols, k2 * cols, H, s, e);
        if (!rc)
            window_scatter<<<base_grid(b, numel(out), 256, 8), 256, 0, s>>>(ns->win[1], params + bi->offset, A.skip,
                                                                         dst, numel(out), S, C, kk, H, pb, sw);
        break;
    }
    case NET_WINDOW_ATTN: {
        /* the rolled windows as rows; qkv = rows qkv.weight^T (cuBLAS), its
         * biases and the cosine normalisation; the bias table; per head the
         * scores (a strided-batched product over the windows), their
         * softmax with scale, bias and mask, and the product with v into
         * the head's columns; proj (cuBLAS), its bias and the windows back */
        const float *P[9];
        for (int q = 0; q < 9; q++) P[q] = params + param_of(pl, l, q)->offset;
        int S = (int)net_side(in.d[1]), C = (int)in.d[2], kk = L->k, H = L->groups, k2 = kk * kk, d = C / H;
        long long M = in.d[0] * in.d[1], nwin = M / k2;
        roll_windows<<<base_grid(b, M * C, 256, 8), 256, 0, s>>>(k.cur, ns->wa[0], M * C, S, C, kk, L->s);
        rc = base_gemm(b, v, 0, 1, M, 3LL * C, C, 1.0f, ns->wa[0], C, 0, P[6], C, 0, 0.0f, ns->wa[1], 3LL * C, 0, 1,
                       s, e);
        if (rc) break;
        qkv_prepare<<<base_grid(b, M * H, 256, 8), 256, 0, s>>>(ns->wa[1], P[1], P[2], M, C, H);
        cpb_table<<<(unsigned)((2 * kk - 1) * (2 * kk - 1)), 256, 0, s>>>(P[3], P[4], P[5], ns->table, kk, H);
        for (int h = 0; !rc && h < H; h++) {
            const float *q = ns->wa[1] + (long long)h * d;
            rc = base_gemm(b, v, 0, 1, k2, k2, d, 1.0f, q, 3LL * C, (long long)k2 * 3 * C, q + C, 3LL * C,
                           (long long)k2 * 3 * C, 0.0f, ns->scores, k2, (long long)k2 * k2, nwin, s, e);
            if (rc) break;
            window_softmax<<<(unsigned)((M * 32 + 255) / 256), 256, 0, s>>>(ns->scores, ns->table, P[0], M, h, H, S,
                                                                             kk, L->s);
            rc = base_gemm(b, v, 0, 0, k2, d, k2, 1.0f, ns->scores, k2, (long long)k2 * k2, q + 2 * C, 3LL * C,
                           (long long)k2 * 3 * C, 0.0f, ns->wa[2] + (long long)h * d, C, (long long)k2 * C, nwin, s, e);
        }
        if (rc) break;
        rc = base_gemm(b, v, 0, 1, M, C, C, 1.0f, ns->wa[2], C, 0, P[7], C, 0, 0.0f, ns->wa[0], C, 0, 1, s, e);
        if (rc) break;
        unroll_windows<<<base_grid(b, M * C, 256, 8), 256, 0, s>>>(ns->wa[0], P[8], dst, M * C, S, C, kk, L->s);
        break;
    }
    case NET_MERGE:
        merge_kernel<<<base_grid(b, numel(out), 256, 8), 256, 0, s>>>(k.cur, dst, numel(out),
                                                                      (int)net_side(in.d[1]), (int)in.d[2]);
        break;
    case NET_TOKEN_MEAN:
        token_mean<<<(unsigned)((numel(out) + 255) / 256), 256, 0, s>>>(k.cur, dst, in.d[0], in.d[1], in.d[2]);
        break;
    case NET_UNFOLD:
        unfold_kernel<<<base_grid(b, numel(in), 256, 8), 256, 0, s>>>(k.cur, dst, numel(in), in.d[1], in.d[2],
                                                                      in.d[3], L->k);
        break;
    case NET_CLS: {
        const net_param *t = param_of(pl, l, 0);
        long long C = out.d[2], T = out.d[1] - 1;
        cls_kernel<<<base_grid(b, numel(out), 256, 8), 256, 0, s>>>(k.cur, params + t->offset, dst, numel(out),
                                                                    T, C);
        break;
    }
    case NET_POS: {
        const net_param *t = param_of(pl, l, 0);
        if (!to_out && in_place_ok) dst = (float *)k.cur;
        pos_kernel<<<base_grid(b, numel(out), 256, 8), 256, 0, s>>>(k.cur, params + t->offset, dst, numel(out),
                                                                    out.d[1] * out.d[2]);
        break;
    }
    case NET_FIRST_TOKEN: {
        /* x[:, 0]: one row of C from every sample */
        cudaError_t ce = cudaMemcpy2DAsync(dst, (size_t)in.d[2] * sizeof(float), k.cur,
                                           (size_t)(in.d[1] * in.d[2]) * sizeof(float),
                                           (size_t)in.d[2] * sizeof(float), (size_t)in.d[0],
                                           cudaMemcpyDeviceToDevice, s);
        if (ce != cudaSuccess) return base_cuda_err(e, b, "first token", ce);
        break;
    }
    case NET_RELU: case NET_RELU6: case NET_SIGMOID: case NET_ADD: case NET_GELU_TANH: case NET_GELU:
        A.relu = L->kind == NET_RELU ? 1 : L->kind == NET_RELU6 ? 2 : L->kind == NET_SIGMOID ? 3 :
                 L->kind == NET_GELU_TANH ? 4 : L->kind == NET_GELU ? 5 : 0;
        A.skip = L->kind == NET_ADD ? k.skip : NULL;
        if (!to_out && in_place_ok) dst = (float *)k.cur;
        launch_ew(b, k.cur, dst, A, s);
        break;
    case NET_MAXPOOL2D: case NET_AVGPOOL2D: {
        if (base_pool2d(b, L->kind == NET_MAXPOOL2D, k.cur, dst, in.d[0] * in.d[1], (int)in.d[2], (int)in.d[3],
                        (int)out.d[2], (int)out.d[3], L->k, L->s, L->p, s))
            return base_cuda_err(e, b, "pool launch", cudaGetLastError());
        break;
    }
    case NET_GAP: {
        long long planes = in.d[0] * in.d[1];
        gap_kernel<<<(unsigned)((planes * 32 + 255) / 256), 256, 0, s>>>(k.cur, dst, planes,
                                                                          in.d[2] * in.d[3]);
        break;
    }
    case NET_SAVE:
        /* the skip aliases the current tensor; writers never write in
         * place over it (in_place_ok) */
        k.skip = (float *)k.cur;
        return 0;
    case NET_SWAP: {
        const float *t = k.cur;
        k.cur = k.skip;
        k.skip = (float *)t;
        return 0;
    }
    default:   /* flatten and dropout move nothing */
        return 0;
    }
    if (rc) return rc;
    if (A.skip) k.skip = NULL;   /* the residual sum consumed it */
    k.cur = dst;
    return 0;
}

int run(base_ctx *b, base_variant v, const kbv_call *c, kbv_err *e)
{
    net_state *ns = (net_state *)b->state;
    cursor k;
    k.x = (const float *)c->inputs[0].data;
    k.cur = k.x;
    k.skip = NULL;
    k.out = (float *)c->outputs[0].data;
    const float *params = (const float *)c->inputs[1].data;
    for (int l = 0; l < ns->spec->n_layers; l++) {
        int last = l;
        int rc = run_group(b, v, ns, l, k, params, c->stream, &last, e);
        if (rc) return rc;
        l = last;
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "network launch", ce);
    /* a program whose last writer is followed by a swap ends elsewhere */
    if (k.cur != k.out) {
        ce = cudaMemcpyAsync(k.out, k.cur, (size_t)kbv_numel(&c->outputs[0]) * sizeof(float),
                             cudaMemcpyDeviceToDevice, c->stream);
        if (ce != cudaSuccess) return base_cuda_err(e, b, "copy", ce);
    }
    return 0;
}

void destroy(base_ctx *b)
{
    net_state *ns = (net_state *)b->state;
    if (!ns) return;
    for (int l = 0; l < NET_MAX_LAYERS; l++)
        if (ns->conv_owner[l]) conv_runner_destroy(ns->conv[l]);
    for (int i = 0; i < 3; i++)
        if (ns->buf[i]) cudaFree(ns->buf[i]);
    if (ns->part) cudaFree(ns->part);
    if (ns->stat) cudaFree(ns->stat);
    if (ns->scores) cudaFree(ns->scores);
    if (ns->patches) cudaFree(ns->patches);
    for (int i = 0; i < 2; i++)
        if (ns->win[i]) cudaFree(ns->win[i]);
    for (int i = 0; i < 3; i++)
        if (ns->wa[i]) cudaFree(ns->wa[i]);
    if (ns->table) cudaFree(ns->table);
    free(ns->plan);
    free(ns);
    b->state = NULL;
}

int available(const suite_problem *p, const char **why)
{
    return suite_host_available(p, why);
}

} /* namespace */

/* No native bf16 path: the BF16 setting runs the fp32 interpreter on
 * widened inputs (baseline.cu's fallback). */
const base_family base_fam_net = {
    "net", OP_NET_FIRST, OP_NET_LAST, create, run, destroy, NULL, NULL,
};
const base_family base_fam_conv_net = {
    "conv-net", OP_CONV_NET_FIRST, OP_CONV_NET_LAST, create, run, destroy, available, NULL,
};

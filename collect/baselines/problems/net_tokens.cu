/* net_tokens.cu - the transformer layers of the level-3 interpreter
 * (net.cu; layers of problems/net.h on token tensors [N, T, C]): multi-head
 * attention, layer norm, image tokens and back, ViT's unfold, cls token,
 * positional embedding and x[:, 0], and Swin's window MLP, patch merging,
 * token mean and V2 window attention.  As PyTorch eager runs these models:
 * cuBLAS for every product (per head, strided-batched over the samples or
 * windows, q, k and v read in place from the packed projection), kbv's
 * own kernels for the masks, softmaxes, norms and data moves between them.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base_impl.h"
#include "net_tokens.h"

namespace {

int64_t numel(const net_shape &s)
{
    int64_t n = 1;
    for (int i = 0; i < s.ndim; i++) n *= s.d[i];
    return n;
}

/* Loads and stores of the token tensors, float or bfloat16 (the BF16
 * setting: each value widened on load and rounded once on store, as
 * PyTorch's bfloat16 kernels compute in float). */
__device__ __forceinline__ float tld(const float *p, long long i) { return p[i]; }
__device__ __forceinline__ float tld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void tst(float *p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void tst(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }

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
template <typename E>
__global__ void __launch_bounds__(256) causal_softmax(E *__restrict__ sc, long long T)
{
    E *row = sc + (long long)blockIdx.x * T;
    const long long q = (long long)blockIdx.x % T;
    float m = -INFINITY;
    for (long long j = threadIdx.x; j <= q; j += blockDim.x) m = fmaxf(m, tld(row, j));
    m = block_max(m);
    float sum = 0.0f;
    for (long long j = threadIdx.x; j <= q; j += blockDim.x) sum += expf(tld(row, j) - m);
    const float inv = 1.0f / block_fsum(sum);
    for (long long j = threadIdx.x; j < T; j += blockDim.x) tst(row, j, j <= q ? expf(tld(row, j) - m) * inv : 0.0f);
}

/* relu of score rows [rows, T] in place; with causal, the keys after the
 * query (row % T) become 0 (-inf through the ReLU). */
template <typename E>
__global__ void __launch_bounds__(256) relu_scores(E *__restrict__ sc, long long rows, long long T, int causal)
{
    const long long n = rows * T;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long q = (i / T) % T, j = i % T;
        float v = tld(sc, i);
        tst(sc, i, (causal && j > q) ? 0.0f : fmaxf(v, 0.0f));
    }
}

/* LayerNorm over rows of C: one warp per row, the mean, then the biased
 * variance around it (a second read of the row, from L1). */
template <typename E>
__global__ void __launch_bounds__(256) layernorm_rows(const E *x, E *y, const E *__restrict__ g,
                                                      const E *__restrict__ b, long long rows, int C, float eps)
{
    long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (r >= rows) return;
    const E *p = x + r * C;
    float s = 0.0f;
    for (int i = lane; i < C; i += 32) s += tld(p, i);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    const float mean = s / (float)C;
    float q = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float d = tld(p, i) - mean;
        q += d * d;
    }
    for (int o = 16; o > 0; o >>= 1) q += __shfl_xor_sync(0xffffffffu, q, o);
    const float rstd = rsqrtf(q / (float)C + eps);
    E *o = y + r * C;
    for (int i = lane; i < C; i += 32) tst(o, i, (tld(p, i) - mean) * rstd * tld(g, i) + tld(b, i));
}

/* y[n] = x[n]^T for planes x[n] of [R, Cc] (tokens: [C, H W] -> [H W, C],
 * and back); 32 x 32 tiles through shared memory (as float: a bfloat16
 * value goes there and back exactly). */
template <typename E>
__global__ void transpose_planes(const E *__restrict__ x, E *__restrict__ y, long long R, long long Cc)
{
    __shared__ float t[32][33];
    const E *xp = x + (long long)blockIdx.z * R * Cc;
    E *yp = y + (long long)blockIdx.z * R * Cc;
    long long r0 = (long long)blockIdx.y * 32, c0 = (long long)blockIdx.x * 32;
    for (int i = threadIdx.y; i < 32; i += 8) {
        long long r = r0 + i, c = c0 + threadIdx.x;
        if (r < R && c < Cc) t[i][threadIdx.x] = tld(xp, r * Cc + c);
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += 8) {
        long long c = c0 + i, r = r0 + threadIdx.x;
        if (r < R && c < Cc) tst(yp, c * R + r, t[threadIdx.x][i]);
    }
}

/* ViT's patches: y[n] is x[n] read in the order (c, h / k, w / k, h % k,
 * w % k) (unfold, unfold, reshape); one thread per element. */
template <typename E>
__global__ void unfold_kernel(const E *__restrict__ x, E *__restrict__ y, long long n, long long C, long long H,
                              long long W, int k)
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

/* cat((cls.expand(N, 1, C), x), 1): y [N, T + 1, C] from x [N, T, C]. */
template <typename E>
__global__ void cls_kernel(const E *__restrict__ x, const E *__restrict__ cls, E *__restrict__ y, long long n,
                           long long T, long long C)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long c = i % C, t = (i / C) % (T + 1), s = i / (C * (T + 1));
        y[i] = t == 0 ? cls[c] : x[(s * T + t - 1) * C + c];
    }
}

/* y = x + pos, pos [T C] broadcast over the samples. */
template <typename E>
__global__ void pos_kernel(const E *x, const E *__restrict__ pos, E *y, long long n, long long TC)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        tst(y, i, tld(x, i) + tld(pos, i % TC));
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

/* Packed q, k, v rows [.., 3C] (row of position t of sequence n: n T + t,
 * or t N + n seq-first) into head-major hm [3][N H][T][d], as PyTorch's
 * view/transpose/contiguous does: then every head's product is one
 * strided batch.  With qb and vb, + (q_bias, 0, v_bias) first; with norm,
 * q and k divided by max(norm, 1e-12) (F.normalize).  One thread per
 * (part, sequence, head, position).  The biases are float (Swin V2's
 * window attention, whose setting is float only). */
template <typename E>
__global__ void split_heads(const E *__restrict__ qkv, E *__restrict__ hm, long long N, long long T, int C, int H,
                            int sf, const float *__restrict__ qb, const float *__restrict__ vb, int norm)
{
    const int d = C / H;
    const long long rows = 3 * N * H * T;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
         i += (long long)gridDim.x * blockDim.x) {
        long long tt = i % T, nh = (i / T) % (N * H);
        int part = (int)(i / (T * N * H)), h = (int)(nh % H);
        long long n = nh / H, row = sf ? tt * N + n : n * T + tt;
        const E *src = qkv + row * 3 * C + part * C + h * d;
        const float *bias = part == 0 ? qb : part == 2 ? vb : NULL;
        E *o = hm + i * d;
        float ss = 0.0f;
        for (int c = 0; c < d; c++) {
            float v = tld(src, c) + (bias ? bias[h * d + c] : 0.0f);
            tst(o, c, v);
            ss += v * v;
        }
        if (norm && part < 2) {
            float inv = 1.0f / fmaxf(sqrtf(ss), 1e-12f);
            for (int c = 0; c < d; c++) tst(o, c, tld(o, c) * inv);
        }
    }
}

/* And back: the heads' outputs hm [N H][T][d] side by side into y rows of
 * C (row order as split_heads'). */
template <typename E>
__global__ void merge_heads(const E *__restrict__ hm, E *__restrict__ y, long long N, long long T, int C, int H,
                            int sf)
{
    const int d = C / H;
    const long long n_all = N * T * C;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n_all;
         i += (long long)gridDim.x * blockDim.x) {
        int ch = (int)(i % C), h = ch / d, c = ch % d;
        long long row = i / C, n = sf ? row % N : row / T, tt = sf ? row / N : row % T;
        y[i] = hm[((n * H + h) * T + tt) * d + c];
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

/* Scores in place, rows of k^2 for (window, head h, query i): times
 * exp(min(logit_scale[h], log 100)), + the table's bias, + the shifted
 * windows' mask (window w % windows of an image), softmax; one warp per
 * row. */
__global__ void window_softmax(float *__restrict__ sc, const float *__restrict__ table,
                               const float *__restrict__ logit_scale, long long rows, int H, int S, int k, int sh)
{
    long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= rows) return;
    const int k2 = k * k, nw = S / k, span = 2 * k - 1, i = (int)(row % k2), h = (int)((row / k2) % H);
    const long long w = (row / ((long long)k2 * H)) % ((long long)nw * nw);
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

} /* namespace */

int net_tok_create(base_ctx *b, const net_spec *sp, const net_plan *pl, net_tok_scratch *t, int *blas, kbv_err *e)
{
    memset(t, 0, sizeof *t);
    int64_t scores = 0, windows = 0, wrows = 0, wtable = 0, heads = 0;
    for (int l = 0; l < sp->n_layers; l++) {
        const net_layer &W = sp->layers[l];
        const net_shape &s = pl->in[l];
        if (W.kind == NET_ATTENTION) {
            /* sequences of T: [N, T, 3C], or [T, N, 3C] with seq-first;
             * short ones take every head at once (head-major copies) */
            int64_t T = (W.k & NET_ATTN_SEQ_FIRST) ? s.d[0] : s.d[1], all = s.d[0] * s.d[1] * T;
            *blas = 1;
            if (T <= NET_TOK_SHORT) {
                all *= W.groups;
                if (s.d[0] * s.d[1] * s.d[2] > heads) heads = s.d[0] * s.d[1] * s.d[2];
            }
            if (all > scores) scores = all;
        }
        if (W.kind == NET_WINDOW_MLP) {
            /* the padded map: (S + k)^2 tokens when shifted */
            int64_t side = net_side(s.d[1]) + (W.s ? W.k : 0);
            *blas = 1;
            if (s.d[0] * side * side * s.d[2] > windows) windows = s.d[0] * side * side * s.d[2];
        }
        if (W.kind == NET_WINDOW_ATTN) {
            /* rows M C, and per head the scores of every window; a window's
             * keys fit window_softmax's warp */
            if (W.k * W.k > 128)
                return err_set(e, KBV_EINPUT, "baseline %s: windows of more than 128 tokens", b->p->id);
            int64_t M = s.d[0] * s.d[1], R = (2LL * W.k - 1) * (2LL * W.k - 1);
            *blas = 1;
            if (M * s.d[2] > wrows) wrows = M * s.d[2];
            if (M * W.groups * W.k * W.k > scores) scores = M * W.groups * W.k * W.k;
            if (R * W.groups > wtable) wtable = R * W.groups;
        }
    }
    struct { float **to; int64_t n; const char *what; } want[] = {
        { &t->scores, scores, "attention scores" },
        { &t->win[0], windows, "spatial MLP windows" },
        { &t->win[1], windows, "spatial MLP windows" },
        { &t->heads, heads, "attention heads" },
        { &t->wa[0], 3 * wrows, "window attention rows and heads" },
        { &t->wa[1], 3 * wrows, "window attention qkv" },
        { &t->wa[2], wrows, "window attention heads" },
        { &t->table, wtable, "window attention bias table" },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (want[i].n <= 0) continue;
        cudaError_t ce = cudaMalloc((void **)want[i].to, (size_t)want[i].n * sizeof(float));
        if (ce != cudaSuccess) {
            *want[i].to = NULL;
            return base_cuda_err(e, b, want[i].what, ce);
        }
    }
    return 0;
}

void net_tok_destroy(net_tok_scratch *t)
{
    float *all[] = { t->scores, t->heads, t->win[0], t->win[1], t->wa[0], t->wa[1], t->wa[2], t->table };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) cudaFree(all[i]);
    memset(t, 0, sizeof *t);
}

/* The attention's products and row softmax in the activations' type: the
 * variant's float GEMM (base_gemm), or bfloat16 operands and output with
 * float accumulation (base_gemm_bf16, as PyTorch's bfloat16 matmul). */
static int tok_gemm(base_ctx *b, base_variant v, int tb, long long m, long long n, long long k, float alpha,
                    const float *A, long long lda, long long sa, const float *B, long long ldb, long long sb, float *C,
                    long long ldc, long long sc, long long batch, cudaStream_t s, kbv_err *e)
{
    return base_gemm(b, v, 0, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, 0.0f, C, ldc, sc, batch, s, e);
}

static int tok_gemm(base_ctx *b, base_variant, int tb, long long m, long long n, long long k, float alpha,
                    const __nv_bfloat16 *A, long long lda, long long sa, const __nv_bfloat16 *B, long long ldb,
                    long long sb, __nv_bfloat16 *C, long long ldc, long long sc, long long batch, cudaStream_t s,
                    kbv_err *e)
{
    return base_gemm_bf16(b, 0, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, C, ldc, sc, batch, s, e);
}

static void tok_softmax_rows(float *x, long long rows, long long d, cudaStream_t s)
{
    base_softmax_rows(x, x, rows, d, 0, s);
}

static void tok_softmax_rows(__nv_bfloat16 *x, long long rows, long long d, cudaStream_t s)
{
    base_softmax_rows_bf16(x, x, rows, d, 0, s);
}

/* An attention layer (net_tok_run's) on activations of type E (float, or
 * bfloat16 with bfloat16 scores, as PyTorch's bfloat16 eager keeps them):
 * per head for long sequences, every head at once for short ones. */
template <typename E>
static int run_attention(base_ctx *b, base_variant v, const net_layer *L, const net_shape &in, const net_shape &out,
                         const E *cur, E *dst, net_tok_scratch *t, cudaStream_t s, kbv_err *e)
{
    int rc = 0;
    /* per head (long sequences: the products are large, and q, k, v
     * are read in place): scores = scale q k^T (batch N), the mask and
     * softmax or ReLU, then the head's columns of dst = P v.  A sequence's
     * rows are `step` rows of the input apart and sequences `bstep`
     * apart: [N, T, 3C] (step 1, bstep T), or seq-first [T, N, 3C]
     * (step N, bstep 1). */
    int sf = (L->k & NET_ATTN_SEQ_FIRST) != 0;
    long long N = in.d[sf ? 1 : 0], T = in.d[sf ? 0 : 1], C = out.d[2], H = L->groups, d = C / H;
    long long step = sf ? N : 1, bstep = sf ? 1 : T;
    float scale = (float)(1.0 / sqrt((double)d));
    /* the scratch, allocated as float, holds E (bfloat16 uses half) */
    E *scores = reinterpret_cast<E *>(t->scores), *heads = reinterpret_cast<E *>(t->heads);
    if (T <= NET_TOK_SHORT) {
        /* short sequences (launch-bound): q, k, v head-major, every
         * (sequence, head) in one strided batch, as PyTorch's copies */
        const E *hq = heads, *hk = hq + N * T * C, *hv = hk + N * T * C;
        split_heads<<<base_grid(b, 3 * N * H * T, 256, 8), 256, 0, s>>>(cur, heads, N, T, (int)C, (int)H, sf,
                                                                      NULL, NULL, 0);
        rc = tok_gemm(b, v, 1, T, T, d, scale, hq, d, T * d, hk, d, T * d, scores, T, T * T, N * H, s, e);
        if (!rc) {
            if (L->k & NET_ATTN_RELU)
                relu_scores<<<base_grid(b, N * H * T * T, 256, 8), 256, 0, s>>>(scores, N * H * T, T,
                                                                               L->k & NET_ATTN_CAUSAL);
            else if (L->k & NET_ATTN_CAUSAL)
                causal_softmax<<<(unsigned)(N * H * T), 256, 0, s>>>(scores, T);
            else
                tok_softmax_rows(scores, N * H * T, T, s);
            rc = tok_gemm(b, v, 0, T, d, T, 1.0f, scores, T, T * T, hv, d, T * d, heads, d, T * d, N * H, s, e);
        }
        if (!rc)
            merge_heads<<<base_grid(b, N * T * C, 256, 8), 256, 0, s>>>(heads, dst, N, T, (int)C, (int)H, sf);
        return rc;
    }
    for (long long h = 0; !rc && h < H; h++) {
        const E *q = cur + h * d;
        rc = tok_gemm(b, v, 1, T, T, d, scale, q, step * 3 * C, bstep * 3 * C, q + C, step * 3 * C, bstep * 3 * C,
                      scores, T, T * T, N, s, e);
        if (rc) break;
        if (L->k & NET_ATTN_RELU)
            relu_scores<<<base_grid(b, N * T * T, 256, 8), 256, 0, s>>>(scores, N * T, T, L->k & NET_ATTN_CAUSAL);
        else if (L->k & NET_ATTN_CAUSAL)
            causal_softmax<<<(unsigned)(N * T), 256, 0, s>>>(scores, T);
        else
            tok_softmax_rows(scores, N * T, T, s);
        rc = tok_gemm(b, v, 0, T, d, T, 1.0f, scores, T, T * T, q + 2 * C, step * 3 * C, bstep * 3 * C, dst + h * d,
                      step * C, bstep * C, N, s, e);
    }
    return rc;
}

/* A Swin V2 window attention layer (net_tok_run's). */
static int run_window_attention(base_ctx *b, base_variant v, const net_layer *L, const net_plan *pl, int l,
                                const net_shape &in, const float *cur, float *dst, const void *const *at,
                                net_tok_scratch *t, cudaStream_t s, kbv_err *e)
{
    int rc = 0;
    /* the rolled windows as rows; qkv = rows qkv.weight^T (cuBLAS); its
     * biases and the cosine normalisation on the way to head-major q,
     * k, v; the bias table; the scores of every window and head (one
     * strided-batched product), their softmax with scale, bias and
     * mask, the product with v; the heads side by side again; proj
     * (cuBLAS), its bias and the windows back */
    const float *P[9];
    for (int q = 0; q < 9; q++) P[q] = net_tok_par(at, pl, net_param_of(pl, l, q));
    int S = (int)net_side(in.d[1]), C = (int)in.d[2], kk = L->k, H = L->groups, k2 = kk * kk, d = C / H;
    long long M = in.d[0] * in.d[1], nwin = M / k2;
    roll_windows<<<base_grid(b, M * C, 256, 8), 256, 0, s>>>(cur, t->wa[0], M * C, S, C, kk, L->s);
    rc = base_gemm(b, v, 0, 1, M, 3LL * C, C, 1.0f, t->wa[0], C, 0, P[6], C, 0, 0.0f, t->wa[1], 3LL * C, 0, 1,
                   s, e);
    if (rc) return rc;
    split_heads<<<base_grid(b, 3 * M * H, 256, 8), 256, 0, s>>>(t->wa[1], t->wa[0], nwin, k2, C, H, 0, P[1],
                                                                 P[2], 1);
    cpb_table<<<(unsigned)((2 * kk - 1) * (2 * kk - 1)), 256, 0, s>>>(P[3], P[4], P[5], t->table, kk, H);
    /* every (window, head) at once: q, k, v are head-major in wa[0] */
    const float *hq = t->wa[0], *hk = hq + M * C, *hv = hk + M * C;
    long long hs = (long long)k2 * d;
    rc = base_gemm(b, v, 0, 1, k2, k2, d, 1.0f, hq, d, hs, hk, d, hs, 0.0f, t->scores, k2, (long long)k2 * k2,
                   nwin * H, s, e);
    if (rc) return rc;
    window_softmax<<<(unsigned)((M * H * 32 + 255) / 256), 256, 0, s>>>(t->scores, t->table, P[0], M * H, H, S,
                                                                        kk, L->s);
    rc = base_gemm(b, v, 0, 0, k2, d, k2, 1.0f, t->scores, k2, (long long)k2 * k2, hv, d, hs, 0.0f, t->wa[0], d,
                   hs, nwin * H, s, e);
    if (rc) return rc;
    merge_heads<<<base_grid(b, M * C, 256, 8), 256, 0, s>>>(t->wa[0], t->wa[2], nwin, k2, C, H, 0);
    rc = base_gemm(b, v, 0, 1, M, C, C, 1.0f, t->wa[2], C, 0, P[7], C, 0, 0.0f, t->wa[1], C, 0, 1, s, e);
    if (rc) return rc;
    unroll_windows<<<base_grid(b, M * C, 256, 8), 256, 0, s>>>(t->wa[1], P[8], dst, M * C, S, C, kk, L->s);
    return rc;
}

/* The token layers of both settings on activations of type E, parameters
 * of the same type (net_tok_run's contract); 1 for any other layer. */
template <typename E>
static int tok_common(base_ctx *b, base_variant v, const net_spec *sp, const net_plan *pl, int l, const E *cur,
                      E *dst, int may_in_place, const void *const *at, net_tok_scratch *t, cudaStream_t s, E **wrote,
                      kbv_err *e)
{
    const net_layer *L = &sp->layers[l];
    const net_shape &in = pl->in[l], &out = pl->out[l];
    /* part p of the plan where this call reads it */
    auto par = [&](const net_param *p) { return static_cast<const E *>(at[p - pl->param]); };
    int rc = 0;
    switch (L->kind) {
    case NET_ATTENTION:
        rc = run_attention(b, v, L, in, out, cur, dst, t, s, e);
        break;
    case NET_LAYERNORM: {
        long long C = in.d[in.ndim - 1], rows = numel(in) / C;
        if (may_in_place) dst = const_cast<E *>(cur);
        layernorm_rows<<<(unsigned)((rows * 32 + 255) / 256), 256, 0, s>>>(
            cur, dst, par(net_param_of(pl, l, 0)), par(net_param_of(pl, l, 1)), rows, (int)C, (float)sp->eps);
        break;
    }
    case NET_TOKENS: case NET_UNTOKENS: {
        /* tokens: each sample's [C, H W] transposed; untokens: [H W, C] */
        long long N = in.d[0], R = in.d[1], Cc = numel(in) / (N * R);
        dim3 grid((unsigned)((Cc + 31) / 32), (unsigned)((R + 31) / 32), (unsigned)N);
        transpose_planes<<<grid, dim3(32, 8), 0, s>>>(cur, dst, R, Cc);
        break;
    }
    case NET_UNFOLD:
        unfold_kernel<<<base_grid(b, numel(in), 256, 8), 256, 0, s>>>(cur, dst, numel(in), in.d[1], in.d[2],
                                                                      in.d[3], L->k);
        break;
    case NET_CLS: {
        long long C = out.d[2], T = out.d[1] - 1;
        cls_kernel<<<base_grid(b, numel(out), 256, 8), 256, 0, s>>>(cur, par(net_param_of(pl, l, 0)), dst, numel(out),
                                                                    T, C);
        break;
    }
    case NET_POS:
        if (may_in_place) dst = const_cast<E *>(cur);
        pos_kernel<<<base_grid(b, numel(out), 256, 8), 256, 0, s>>>(cur, par(net_param_of(pl, l, 0)), dst,
                                                                    numel(out), out.d[1] * out.d[2]);
        break;
    case NET_FIRST_TOKEN: {
        /* x[:, 0]: one row of C from every sample */
        const size_t row = (size_t)in.d[2] * sizeof(E);
        cudaError_t ce = cudaMemcpy2DAsync(dst, row, cur, (size_t)in.d[1] * row, row, (size_t)in.d[0],
                                           cudaMemcpyDeviceToDevice, s);
        if (ce != cudaSuccess) return base_cuda_err(e, b, "first token", ce);
        break;
    }
    default:
        return 1;
    }
    *wrote = dst;
    return rc;
}

int net_tok_run(base_ctx *b, base_variant v, const net_spec *sp, const net_plan *pl, int l, const float *cur,
                const float *skip, float *dst, int may_in_place, const void *const *at, net_tok_scratch *t,
                cudaStream_t s, float **wrote, kbv_err *e)
{
    int rc = tok_common(b, v, sp, pl, l, cur, dst, may_in_place, at, t, s, wrote, e);
    if (rc != 1) return rc;
    /* Swin's layers: float only */
    const net_layer *L = &sp->layers[l];
    const net_shape &in = pl->in[l], &out = pl->out[l];
    rc = 0;
    switch (L->kind) {
    case NET_WINDOW_MLP: {
        /* gather the (padded) windows per head, one strided-batched product
         * over the heads (weight [k^2, k^2] times the head's [k^2, N nW dh]),
         * scatter back with the bias (and the residual) */
        const net_param *w = net_param_of(pl, l, 0), *bi = net_param_of(pl, l, 1);
        int S = (int)net_side(in.d[1]), C = (int)in.d[2], kk = L->k, H = L->groups, k2 = kk * kk;
        int pb = L->s ? kk - L->s : 0, sw = (S + (L->s ? kk : 0)) / kk;
        long long cols = in.d[0] * (long long)sw * sw * (C / H), nw = (long long)H * k2 * cols;
        window_gather<<<base_grid(b, nw, 256, 8), 256, 0, s>>>(cur, t->win[0], nw, in.d[0], S, C, kk, H, pb, sw);
        rc = base_gemm(b, v, 0, 0, k2, cols, k2, 1.0f, net_tok_par(at, pl, w), k2, (long long)k2 * k2, t->win[0],
                       cols, k2 * cols, 0.0f, t->win[1], cols, k2 * cols, H, s, e);
        if (!rc)
            window_scatter<<<base_grid(b, numel(out), 256, 8), 256, 0, s>>>(
                t->win[1], net_tok_par(at, pl, bi), skip, dst, numel(out), S, C, kk, H, pb, sw);
        break;
    }
    case NET_WINDOW_ATTN:
        rc = run_window_attention(b, v, L, pl, l, in, cur, dst, at, t, s, e);
        break;
    case NET_MERGE:
        merge_kernel<<<base_grid(b, numel(out), 256, 8), 256, 0, s>>>(cur, dst, numel(out),
                                                                      (int)net_side(in.d[1]), (int)in.d[2]);
        break;
    case NET_TOKEN_MEAN:
        token_mean<<<(unsigned)((numel(out) + 255) / 256), 256, 0, s>>>(cur, dst, in.d[0], in.d[1], in.d[2]);
        break;
    default:
        return 1;
    }
    *wrote = dst;
    return rc;
}

int net_tok_run_bf16(base_ctx *b, const net_spec *sp, const net_plan *pl, int l, const __nv_bfloat16 *cur,
                     __nv_bfloat16 *dst, int may_in_place, const void *const *at, net_tok_scratch *t, cudaStream_t s,
                     __nv_bfloat16 **wrote, kbv_err *e)
{
    return tok_common(b, BASE_BF16, sp, pl, l, cur, dst, may_in_place, at, t, s, wrote, e);
}

"""naive_l3.py - the naive family of KernelBench level 3 (whole networks),
for gen-naive-candidates.py.

A level-3 problem is a layer program (collect/suite/problems/net.h) over x
and one packed parameter tensor; kbv prompt's {{layers}} lists its layers
with their shapes, settings and parameter offsets.  The candidate written
here is a table of those layers and one plain kernel per layer: a 16x16
shared-memory tiled FP32 GEMM with the bias for linear layers, a direct
convolution (one thread per output), two-pass batch-norm statistics (one
block per channel: the mean, then the variance around it) and an apply
pass, and one-thread-per-output ReLU, max and average pool, global average
pool and residual sum, one thread per row for softmax, one thread per
output element for transposed convolutions (gathering the taps that reach
it), the concatenation along channels and the channel shuffle.
Transformer layers: one thread per row for layer norm, one thread per
query (sample, head, position) for attention, which walks the keys once
with a running maximum and sum (softmax) or sums relu(score) v (ReLU
attention), and one thread per element for GELU and the token transposes.
Grouped (depthwise) convolutions read their group's input channels.
Activations go through three buffers, and one more per entry the program's
stack holds at most, allocated in kbv_setup; the last layer that writes
writes into the output.
"""
import re

KINDS = {
    "linear": "K_LINEAR", "conv2d": "K_CONV", "batchnorm2d": "K_BN", "relu": "K_RELU",
    "maxpool2d": "K_MAXPOOL", "adaptive_avgpool2d(1)": "K_GAP", "flatten": "K_FLATTEN",
    "dropout(p=0)": "K_DROPOUT", "save": "K_SAVE", "swap": "K_SWAP", "add": "K_ADD", "avgpool2d": "K_AVGPOOL",
    "relu6": "K_RELU6", "sigmoid": "K_SIGMOID", "push": "K_PUSH", "exchange": "K_XCHG", "concat": "K_CAT",
    "channel_shuffle": "K_SHUFFLE", "conv_transpose2d": "K_CONVT", "softmax(dim=-1)": "K_SOFTMAX",
    "layernorm": "K_LN", "gelu_tanh": "K_GELU",
    "attention": "K_ATTN", "tokens": "K_TOKENS", "untokens": "K_UNTOKENS", "unfold": "K_UNFOLD",
    "cls_token": "K_CLS", "pos_embedding": "K_POS", "first_token": "K_FIRST", "gelu": "K_GELU_ERF",
    "window_mlp": "K_WMLP", "patch_merge": "K_MERGE", "token_mean": "K_TMEAN", "window_attention": "K_WATTN",
}
# Swin V2's window attention: its nine parameter parts, in the prompt's names
WATTN_PARTS = ("logit_scale", "q_bias", "v_bias", "cpb_mlp.0.weight", "cpb_mlp.0.bias", "cpb_mlp.2.weight",
               "qkv.weight", "proj.weight", "proj.bias")
WRITERS = ("K_LINEAR", "K_CONV", "K_BN", "K_RELU", "K_MAXPOOL", "K_GAP", "K_ADD", "K_AVGPOOL", "K_RELU6", "K_SIGMOID",
           "K_CAT", "K_SHUFFLE", "K_CONVT", "K_SOFTMAX", "K_LN", "K_GELU", "K_ATTN", "K_TOKENS", "K_UNTOKENS",
           "K_UNFOLD", "K_CLS", "K_POS", "K_FIRST", "K_GELU_ERF", "K_WMLP", "K_MERGE", "K_TMEAN", "K_WATTN")

LINE = re.compile(r"^\s*(\d+)\. (\S+): \[([^\]]*)\] -> \[([^\]]*)\](.*)$")


def parse_layers(text):
    """The layers of kbv prompt's {{layers}} text as dicts, or None."""
    layers = []
    eps = None
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        kind = KINDS.get(m.group(2))
        if kind is None:
            return None
        rest = m.group(5)
        dims = lambda s: [int(v) for v in s.split(",")]
        L = {"kind": kind, "in": dims(m.group(3)), "out": dims(m.group(4)), "k": 0, "s": 1, "p": 0,
             "w": -1, "b": -1, "g": 1}
        win = re.search(r"kernel (\d+), stride (\d+), padding (\d+)", rest)
        if win:
            L["k"], L["s"], L["p"] = (int(v) for v in win.groups())
        g = re.search(r"groups (\d+)", rest)
        if g:
            L["g"] = int(g.group(1))
        n = re.search(r"cat of the top (\d+) stack entries", rest)
        if n:
            L["k"] = int(n.group(1))
        # attention: the heads in g, the flags in k (1 causal, 2 relu)
        h = re.search(r"heads (\d+) of size", rest)
        if h:
            L["g"] = int(h.group(1))
            L["k"] = (1 if "causal mask" in rest else 0) | (2 if "relu(scores)" in rest else 0) | \
                (4 if "batch_first=False" in rest else 0)
        wm = re.search(r"window (\d+), shift (\d+), heads (\d+)", rest)
        if wm:
            L["k"], L["s"], L["g"] = (int(v) for v in wm.groups())
        u = re.search(r"unfold\(2, (\d+)", rest)
        if u:
            L["k"] = int(u.group(1))
        if kind == "K_WATTN":
            L["parts"] = []
            for nm in WATTN_PARTS:
                m2 = re.search(r"; %s \[[^\]]*\] at params\[(\d+)\]" % re.escape(nm), rest)
                if not m2:
                    return None
                L["parts"].append(int(m2.group(1)))
        w = re.search(r"; weight \[[^\]]*\] at params\[(\d+)\]", rest)
        b = re.search(r"; bias \[[^\]]*\] at params\[(\d+)\]", rest)
        if w:
            L["w"] = int(w.group(1))
        if b:
            L["b"] = int(b.group(1))
        e = re.search(r"eps ([0-9.eE+-]+)", rest)
        if e:
            eps = float(e.group(1))
        layers.append(L)
    return (layers, eps if eps is not None else 1e-5) if layers else None


def pad4(d):
    return d + [1] * (4 - len(d))


def gen_level3(p, head, check):
    if any(MODEL.match(line) for line in p.get("layers", "").splitlines()):
        return gen_model(p, head, check)
    parsed = parse_layers(p.get("layers", ""))
    if not parsed:
        return None
    layers, eps = parsed
    rows, wparts, wscr = [], [], 1
    for L in layers:
        i, o = pad4(L["in"]), pad4(L["out"])
        if L["kind"] == "K_WATTN":
            # p: the row of its parts in WPARTS; scratch: qkv, the heads'
            # outputs and the bias table
            L["p"] = len(wparts)
            wparts.append("    { %s }," % ", ".join("%dLL" % v for v in L["parts"]))
            M, C = L["in"][0] * L["in"][1], L["in"][2]
            wscr = max(wscr, 4 * M * C + (2 * L["k"] - 1) ** 2 * L["g"])
        rows.append("    { %s, %d, {%s}, {%s}, %d, %d, %d, %d, %dLL, %dLL }," % (
            L["kind"], len(L["in"]), ", ".join("%dLL" % v for v in i), ", ".join("%dLL" % v for v in o),
            L["k"], L["s"], L["p"], L["g"], L["w"], L["b"]))
    last = max(i for i, L in enumerate(layers) if L["kind"] in WRITERS)
    most = max(max(_numel(L["in"]), _numel(L["out"])) for L in layers)
    depth = stack = 0
    for L in layers:
        if L["kind"] == "K_PUSH":
            depth += 1
        elif L["kind"] == "K_CAT":
            depth -= L["k"]
        stack = max(stack, depth)
    widest = max([L["in"][1] for L in layers if L["kind"] == "K_BN"] or [1])
    text = head.format(what="one plain kernel per layer of the network: tiled FP32 GEMM, convolution\n"
                            "// as a tiled implicit GEMM (direct when depthwise), two-pass batch norm, one\n"
                            "// thread per output elsewhere.", **p)
    return text + check + NET_CU % {
        "rows": "\n".join(rows), "n": len(layers), "last": last, "most": most, "widest": widest, "nbuf": 3 + stack,
        "stack": max(stack, 1),
        "eps": repr(eps), "x": _numel(layers[0]["in"]), "out": _numel(layers[-1]["out"]),
        "wparts": "\n".join(wparts) if wparts else "    { 0 },", "wscr": wscr,
    }


def _numel(d):
    n = 1
    for v in d:
        n *= v
    return n


NET_CU = r'''
#define THREADS 256
#define TILE 16

enum { K_LINEAR, K_CONV, K_BN, K_RELU, K_MAXPOOL, K_GAP, K_FLATTEN, K_DROPOUT, K_SAVE, K_SWAP, K_ADD,
       K_AVGPOOL, K_RELU6, K_SIGMOID, K_PUSH, K_XCHG, K_CAT, K_SHUFFLE, K_CONVT, K_SOFTMAX, K_LN, K_GELU,
       K_ATTN, K_TOKENS, K_UNTOKENS, K_UNFOLD, K_CLS, K_POS, K_FIRST, K_GELU_ERF, K_WMLP, K_MERGE, K_TMEAN,
       K_WATTN };

/* kind, rank, shape before and after, window, stride, padding, groups, and
 * the offsets of the weight and the bias in params (-1: none); a
 * concatenation's window is the number of stack entries it pops */
struct layer { int kind, ndim; long long in[4], out[4]; int k, s, p, g; long long w, b; };

static const layer NET[] = {
%(rows)s
};
#define N_LAYERS %(n)d
#define LAST_WRITER %(last)d
#define MOST %(most)dLL
#define WIDEST %(widest)d
#define EPS %(eps)s
#define NBUF %(nbuf)d
#define STACK %(stack)d
/* Swin V2 window attention layers: the offsets of their nine parts
 * (logit_scale, q_bias, v_bias, cpb_mlp.0.weight and bias, cpb_mlp.2.weight,
 * qkv.weight, proj.weight and bias), and their scratch */
static const long long WPARTS[][9] = {
%(wparts)s
};
#define WSCR %(wscr)dLL

static float *buf[NBUF];
static float *stats;
static float *scratch;   /* float in the BF16 set too (gen-naive-candidates keeps it) */

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
        int ow = (int)(i %% OW), oh = (int)((i / OW) %% OH), o = (int)((i / ((long long)OW * OH)) %% O);
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

/* A convolution (transposed when T) with 8 or more output channels a group
 * as an implicit GEMM, one per group g (blockIdx.z), the same product as
 * gen-naive-candidates.py's conv_gemm in 2-D: C[o, j] = sum over r of
 * W[o, r] X[r, j], o the output channel in the group (rows, blockIdx.y), j
 * = (n, oh, ow) (columns, blockIdx.x) and r = (c, kh, kw) the group's input
 * channel and the tap; 16x16 tiles of W and of X gathered from x (no
 * im2col buffer, 0 outside the input or, transposed, off the stride) in
 * shared memory, one output per thread in FP32.  Weight [O, C / G, k, k],
 * transposed [C, O / G, k, k].  32-bit indices: conv_layer checks them. */
__global__ void conv_gemm(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
                          float *__restrict__ y, int T, int C, int H, int W, int O, int OH, int OW, int k, int s,
                          int p, int G, int cols)
{
    __shared__ float ws[TILE][TILE];
    __shared__ float xs[TILE][TILE + 1];
    int g = blockIdx.z, tx = threadIdx.x, ty = threadIdx.y, Cg = C / G, Og = O / G;
    int o = blockIdx.y * TILE + ty, j = blockIdx.x * TILE + tx;
    int osp = OH * OW, plane = H * W, kk = k * k, K = Cg * kk;
    int jn = j < cols ? j / osp : 0, sp = j < cols ? j %% osp : 0, oh = sp / OW, ow = sp %% OW;
    int bh = T ? oh + p : oh * s - p, bw = T ? ow + p : ow * s - p;
    const float *xg = x + ((long long)jn * C + (long long)g * Cg) * plane;
    /* r0 + ty = (c, kh, kw) and r0 + tx = (wc, wt) advance by TILE = (sc,
     * sh, sw) each step as mixed-radix digits, without a division */
    int c = ty / kk, kh = ty %% kk / k, kw = ty %% k, wc = tx / kk, wt = tx %% kk;
    int sc = TILE / kk, st = TILE %% kk, sh = st / k, sw = st %% k;
    float acc = 0.0f;
    for (int r0 = 0; r0 < K; r0 += TILE) {
        float wv = 0.0f;
        if (o < Og && r0 + tx < K)
            wv = T ? w[((g * Cg + wc) * Og + o) * kk + wt] : w[(g * Og + o) * K + r0 + tx];
        ws[ty][tx] = wv;
        float xv = 0.0f;
        if (j < cols && r0 + ty < K) {
            int ih, iw, ok;
            if (T) {
                int th = bh - kh, tw = bw - kw;
                ih = s == 1 ? th : th / s;   /* no division at stride 1 */
                iw = s == 1 ? tw : tw / s;
                ok = th >= 0 && tw >= 0 && ih * s == th && iw * s == tw;
            } else {
                ih = bh + kh;
                iw = bw + kw;
                ok = ih >= 0 && iw >= 0;
            }
            if (ok && ih < H && iw < W) xv = xg[c * plane + ih * W + iw];
        }
        xs[ty][tx] = xv;
        __syncthreads();
        for (int i = 0; i < TILE; i++) acc += ws[ty][i] * xs[i][tx];
        __syncthreads();
        kw += sw;
        kh += sh;
        c += sc;
        if (kw >= k) {
            kw -= k;
            kh++;
        }
        if (kh >= k) {
            kh -= k;
            c++;
        }
        wt += st;
        wc += sc;
        if (wt >= kk) {
            wt -= kk;
            wc++;
        }
    }
    if (o < Og && j < cols) {
        int oc = g * Og + o;
        y[((long long)jn * O + oc) * osp + sp] = b ? acc + b[oc] : acc;
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
    for (long long i = threadIdx.x; i < cnt; i += THREADS) s += x[((i / S) * C + c) * S + i %% S];
    float m = block_sum(s, sh) / (float)cnt;
    float q = 0.0f;
    for (long long i = threadIdx.x; i < cnt; i += THREADS) {
        float d = x[((i / S) * C + c) * S + i %% S] - m;
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
        long long c = (i / S) %% C;
        y[i] = (x[i] - mean[c]) * rstd[c] * g[c] + b[c];
    }
}

/* the residual sum (skip given), else by mode: 0 relu, 1 relu6, 2 sigmoid,
 * 3 GELU (tanh form), 4 GELU (erf form) */
__global__ void ew_kernel(const float *__restrict__ x, const float *__restrict__ skip,
                          float *__restrict__ y, long long total, int mode)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        float v = x[i];
        if (skip) v += skip[i];
        else if (mode == 2) v = 1.0f / (1.0f + expf(-v));
        else if (mode == 3) v = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        else if (mode == 4) v = 0.5f * v * (1.0f + erff(v * 0.7071067811865476f));
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
        int ow = (int)(i %% OW), oh = (int)((i / OW) %% OH);
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
        int ow = (int)(i %% OW), oh = (int)((i / OW) %% OH);
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
        int ow = (int)(i %% OW), oh = (int)((i / OW) %% OH), o = (int)((i / ((long long)OW * OH)) %% O);
        long long n = i / ((long long)OW * OH * O);
        float acc = b ? b[o] : 0.0f;
        for (int cg = 0; cg < Cg; cg++) {
            int c = (o / Og) * Cg + cg;
            for (int kh = 0; kh < k; kh++) {
                int th = oh + p - kh;
                if (th < 0 || th %% s != 0 || th / s >= H) continue;
                for (int kw = 0; kw < k; kw++) {
                    int tw = ow + p - kw;
                    if (tw < 0 || tw %% s != 0 || tw / s >= W) continue;
                    acc += x[((n * C + c) * H + th / s) * W + tw / s] *
                           w[(((long long)c * Og + o %% Og) * k + kh) * k + kw];
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
        long long n = i / (Cp * S), r = i %% (Cp * S);
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
        long long n = i / (C * S), co = (i / S) %% C, r = i %% S;
        long long ci = (co %% G) * (C / G) + co / G;
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

/* layer norm over rows of C: one thread per row, the mean, then the
 * biased variance around it */
__global__ void ln_kernel(const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ g,
                          const float *__restrict__ b, long long rows, long long C)
{
    long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float *p = x + r * C;
    float s = 0.0f;
    for (long long i = 0; i < C; i++) s += p[i];
    float m = s / (float)C, q = 0.0f;
    for (long long i = 0; i < C; i++) q += (p[i] - m) * (p[i] - m);
    float rstd = 1.0f / sqrtf(q / (float)C + (float)EPS);
    for (long long i = 0; i < C; i++) y[r * C + i] = (p[i] - m) * rstd * g[i] + b[i];
}

#define HD_MAX 128
/* attention over qkv [N, T, 3C] into y [N, T, C] (with flag 4, over
 * [T, N, 3C]: the sequence along dimension 0): one thread per (n, head,
 * query); flags 1: keys after the query masked, 2: relu(scores) instead
 * of softmax */
__global__ void attn_kernel(const float *__restrict__ qkv, float *__restrict__ y, long long D0, long long D1,
                            long long C, int H, int flags)
{
    long long N = (flags & 4) ? D1 : D0, T = (flags & 4) ? D0 : D1;
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= N * H * T) return;
    long long i = idx %% T, h = (idx / T) %% H, n = idx / (T * H);
    long long d = C / H;
    /* the row of position t of sequence n */
#define ROW(t) ((flags & 4) ? (t) * N + n : n * T + (t))
    const float *q = qkv + ROW(i) * 3 * C + h * d;
    float scale = 1.0f / sqrtf((float)d), m = -INFINITY, l = 0.0f, acc[HD_MAX];
    for (long long c = 0; c < d; c++) acc[c] = 0.0f;
    long long end = (flags & 1) ? i + 1 : T;
    for (long long j = 0; j < end; j++) {
        const float *kj = qkv + ROW(j) * 3 * C + C + h * d, *vj = kj + C;
        float sc = 0.0f;
        for (long long c = 0; c < d; c++) sc += q[c] * kj[c];
        sc *= scale;
        if (flags & 2) {
            float w = fmaxf(sc, 0.0f);
            for (long long c = 0; c < d; c++) acc[c] += w * vj[c];
        } else {
            float mn = fmaxf(m, sc), corr = expf(m - mn), w = expf(sc - mn);
            l = l * corr + w;
            for (long long c = 0; c < d; c++) acc[c] = acc[c] * corr + w * vj[c];
            m = mn;
        }
    }
    float *o = y + ROW(i) * C + h * d;
    for (long long c = 0; c < d; c++) o[c] = (flags & 2) ? acc[c] : acc[c] / l;
#undef ROW
}

/* x.unfold(2, k, k).unfold(3, k, k).reshape(N, -1, C k k): y[n] is x[n]
 * read in the order (c, h / k, w / k, h %% k, w %% k) */
__global__ void unfold_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, long long H,
                              long long W, int k)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long pj = i %% k, pi = (i / k) %% k, wi = (i / (k * k)) %% (W / k);
    long long hi = (i / (k * k * (W / k))) %% (H / k), nc = i / (k * k * (W / k) * (H / k));
    y[i] = x[(nc * H + hi * k + pi) * W + wi * k + pj];
}

/* y [N, T + 1, C]: the token t, then x [N, T, C] */
__global__ void cls_kernel(const float *__restrict__ x, const float *__restrict__ t, float *__restrict__ y,
                           long long n, long long T, long long C)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long c = i %% C, p = (i / C) %% (T + 1), s = i / (C * (T + 1));
    y[i] = p == 0 ? t[c] : x[(s * T + p - 1) * C + c];
}

/* y = x + e, e [T C] for every sample */
__global__ void pos_kernel(const float *__restrict__ x, const float *__restrict__ e, float *__restrict__ y,
                           long long n, long long TC)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + e[i %% TC];
}

/* Swin's spatial MLP over tokens x [N, S S, C]: one thread per output;
 * the map padded by pb zeros before (k - shift when shifted) is cut into
 * k x k windows; y = sum over the window's tokens of weight[h k^2 + i, j] x
 * + bias[h k^2 + i] for the output's head h and window position i */
__global__ void wmlp_kernel(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
                            float *__restrict__ y, long long n, int S, int C, int k, int H, int pb)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = (int)(i %% C), h = c / (C / H);
    long long t = i / C, smp = t / ((long long)S * S);
    int px = (int)(t %% S) + pb, py = (int)((t / S) %% S) + pb;
    int oy = py - py %% k, ox = px - px %% k, pos = (py %% k) * k + px %% k;
    float acc = b[h * k * k + pos];
    for (int j = 0; j < k * k; j++) {
        int yy = oy + j / k - pb, xx = ox + j %% k - pb;
        if (yy < 0 || yy >= S || xx < 0 || xx >= S) continue;
        acc += w[(long long)(h * k * k + pos) * k * k + j] * x[((smp * S + yy) * S + xx) * C + c];
    }
    y[i] = acc;
}

/* patch merging: y [N, S/2 S/2, 4C], quarter q = x[2i + (q & 1), 2j + (q >> 1)] */
__global__ void merge_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, int S, int C)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c4 = (int)(i %% (4 * C)), q = c4 / C, c = c4 %% C, h2 = S / 2;
    long long t = i / (4 * C), smp = t / ((long long)h2 * h2);
    int jj = (int)(t %% h2), ii = (int)((t / h2) %% h2);
    y[i] = x[((smp * S + 2 * ii + (q & 1)) * S + 2 * jj + (q >> 1)) * C + c];
}

/* y [N, C]: the mean of x [N, T, C] over T */
__global__ void tmean_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, long long T,
                             long long C)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (long long t = 0; t < T; t++) s += x[((i / C) * T + t) * C + i %% C];
    y[i] = s / (float)T;
}

/* Swin V2's position-bias table: one thread per (offset r, head h),
 * t[r H + h] = 16 sigmoid(W2 relu(W1 c + b1)), c the log-spaced (dy, dx) */
__global__ void cpb_kernel(const float *__restrict__ w1, const float *__restrict__ b1, const float *__restrict__ w2,
                           float *__restrict__ scratch, long long at, int k, int H)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, span = 2 * k - 1;
    if (i >= span * span * H) return;
    int h = i %% H, r = i / H;
    float c[2] = { (float)(r / span - (k - 1)), (float)(r %% span - (k - 1)) };
    for (int a = 0; a < 2; a++) {
        float v = c[a] * 8.0f / (float)(k - 1);
        c[a] = (v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : 0.0f)) * log2f(fabsf(v) + 1.0f) / 3.0f;
    }
    float s = 0.0f;
    for (int j = 0; j < 512; j++) s += w2[h * 512 + j] * fmaxf(w1[2 * j] * c[0] + w1[2 * j + 1] * c[1] + b1[j], 0.0f);
    scratch[at + i] = 16.0f / (1.0f + expf(-s));
}

/* the token of window row `row` (sample, window row, window column,
 * position) in the map rolled by -sh */
__device__ long long wtoken(long long row, int S, int k, int sh)
{
    int nw = S / k, j = (int)(row %% (k * k));
    long long w = row / (k * k);
    int wx = (int)(w %% nw), wy = (int)((w / nw) %% nw);
    long long smp = w / ((long long)nw * nw);
    return (smp * S + (wy * k + j / k + sh) %% S) * S + (wx * k + j %% k + sh) %% S;
}

/* qkv [M, 3C] of the window rows: x qkv.weight^T + (q_bias, 0, v_bias) */
__global__ void wqkv_kernel(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ qb,
                            const float *__restrict__ vb, float *__restrict__ scratch, long long n, int S, int C,
                            int k, int sh)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int col = (int)(i %% (3 * C));
    const float *xr = x + wtoken(i / (3 * C), S, k, sh) * C;
    float acc = col < C ? qb[col] : (col >= 2 * C ? vb[col - 2 * C] : 0.0f);
    for (int c = 0; c < C; c++) acc += xr[c] * w[(long long)col * C + c];
    scratch[i] = acc;   /* qkv [M, 3C] at the start of the scratch */
}

/* region of a rolled-map coordinate for the shifted windows' mask */
__device__ int wregion(int y, int x, int S, int k, int sh)
{
    int ry = y < S - k ? 0 : (y < S - sh ? 1 : 2), rx = x < S - k ? 0 : (x < S - sh ? 1 : 2);
    return 3 * ry + rx;
}

/* one thread per (window row, head): cosine scores with the logit scale,
 * the table's bias and the mask, softmax over the window's keys (running
 * maximum and sum), times v; heads side by side in o [M, C] */
__global__ void wattn_kernel(float *__restrict__ scratch, const float *__restrict__ ls, long long M, int S, int C,
                             int k, int H, int sh)
{
    /* the scratch: qkv [M, 3C] at 0, the heads' outputs [M, C] at 3 M C,
     * the table at 4 M C (indexed from scratch itself, which stays float
     * in the BF16 set) */
    const long long OUT = 3 * M * C, TAB = 4 * M * C;
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= M * H) return;
    int h = (int)(idx %% H), d = C / H, k2 = k * k, span = 2 * k - 1;
    long long row = idx / H, base = row - row %% k2, q = row * 3 * C + h * d;
    int i = (int)(row %% k2), nw = S / k;
    long long w = (row / k2) %% ((long long)nw * nw);
    int wy = (int)(w / nw), wx = (int)(w %% nw);
    int ri = wregion(wy * k + i / k, wx * k + i %% k, S, k, sh);
    float nq = 0.0f;
    for (int c = 0; c < d; c++) nq += scratch[q + c] * scratch[q + c];
    nq = fmaxf(sqrtf(nq), 1e-12f);
    float scale = expf(fminf(ls[h], 4.605170185988091f)), m = -INFINITY, l = 0.0f, acc[HD_MAX];
    for (int c = 0; c < d; c++) acc[c] = 0.0f;
    for (int j = 0; j < k2; j++) {
        long long kj = (base + j) * 3 * C + C + h * d, vj = kj + C;
        float dot = 0.0f, nk = 0.0f;
        for (int c = 0; c < d; c++) {
            dot += scratch[q + c] * scratch[kj + c];
            nk += scratch[kj + c] * scratch[kj + c];
        }
        float sc = dot / (nq * fmaxf(sqrtf(nk), 1e-12f)) * scale +
                   scratch[TAB + ((i / k - j / k + k - 1) * span + i %% k - j %% k + k - 1) * H + h];
        if (sh && wregion(wy * k + j / k, wx * k + j %% k, S, k, sh) != ri) sc += -100.0f;
        float mn = fmaxf(m, sc), corr = expf(m - mn), e = expf(sc - mn);
        l = l * corr + e;
        for (int c = 0; c < d; c++) acc[c] = acc[c] * corr + e * scratch[vj + c];
        m = mn;
    }
    for (int c = 0; c < d; c++) scratch[OUT + row * C + h * d + c] = acc[c] / l;
}

/* y [N, S S, C]: proj of the heads' outputs (at 3 M C in the scratch) at
 * each token's window row (the roll undone) + proj.bias */
__global__ void wproj_kernel(const float *__restrict__ scratch, const float *__restrict__ w,
                             const float *__restrict__ b, float *__restrict__ y, long long n, int S, int C, int k,
                             int sh)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = (int)(i %% C), nw = S / k;
    long long t = i / C, smp = t / ((long long)S * S);
    int ry = ((int)((t / S) %% S) - sh + S) %% S, rx = ((int)(t %% S) - sh + S) %% S;
    long long row = ((smp * nw + ry / k) * nw + rx / k) * (k * k) + (ry %% k) * k + rx %% k;
    float acc = b[c];
    for (int j = 0; j < C; j++) acc += scratch[3 * n + row * C + j] * w[(long long)c * C + j];
    y[i] = acc;
}

/* y [N, C] = x[:, 0] of x [N, T, C] */
__global__ void first_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, long long T,
                             long long C)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[(i / C) * T * C + i %% C];
}

/* y[n, c, r] = x[n, r, c] for planes of [R, Cc] */
__global__ void transpose_kernel(const float *__restrict__ x, float *__restrict__ y, long long N, long long R,
                                 long long Cc)
{
    long long total = N * R * Cc;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long c = i %% Cc, r = (i / Cc) %% R, n = i / (Cc * R);
        y[(n * Cc + c) * R + r] = x[i];
    }
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

/* A convolution layer (transposed when T): the tiled product for groups of
 * 8 output channels or more, one thread per output below (depthwise),
 * where more than half of each 16-row tile would be idle.  0, or 1 when a
 * shape is beyond conv_gemm's 32-bit indices or the grid. */
static int conv_layer(const layer &L, int T, const float *x, const float *w, const float *b, float *y,
                      cudaStream_t st)
{
    long long n = numel(L.out), og = L.out[1] / L.g, cols = L.out[0] * L.out[2] * L.out[3];
    if (og < 8) {
        if (T)
            convt_kernel<<<blocks(n), THREADS, 0, st>>>(x, w, b, y, L.in[0], (int)L.in[1], (int)L.in[2],
                                                        (int)L.in[3], (int)L.out[1], (int)L.out[2],
                                                        (int)L.out[3], L.k, L.s, L.p, L.g);
        else
            conv_kernel<<<blocks(n), THREADS, 0, st>>>(x, w, b, y, L.in[0], (int)L.in[1], (int)L.in[2],
                                                       (int)L.in[3], (int)L.out[1], (int)L.out[2],
                                                       (int)L.out[3], L.k, L.s, L.p, L.g);
        return 0;
    }
    const long long lim = 0x7fffffffLL;
    if (L.in[1] * L.in[2] * L.in[3] > lim || cols > lim - TILE || L.in[1] * L.out[1] * (long long)L.k * L.k > lim ||
        (og + TILE - 1) / TILE > 65535 || L.g > 65535)
        return 1;
    dim3 grid((unsigned)((cols + TILE - 1) / TILE), (unsigned)((og + TILE - 1) / TILE), (unsigned)L.g);
    conv_gemm<<<grid, dim3(TILE, TILE), 0, st>>>(x, w, b, y, T, (int)L.in[1], (int)L.in[2], (int)L.in[3],
                                                 (int)L.out[1], (int)L.out[2], (int)L.out[3], L.k, L.s, L.p, L.g,
                                                 (int)cols);
    return 0;
}

extern "C" int kbv_setup(const kbv_call *call)
{
    (void)call;
    for (int i = 0; i < NBUF; i++)
        if (cudaMalloc((void **)&buf[i], (size_t)MOST * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&stats, 2 * WIDEST * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&scratch, (size_t)WSCR * sizeof(float)) != cudaSuccess) return 1;
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
    cudaFree(scratch);
    scratch = NULL;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs != 2 || call->n_outputs != 1 || !buf[0]) return 1;
    if (kbv_numel(&call->inputs[0]) != %(x)dLL || kbv_numel(&call->outputs[0]) != %(out)dLL) return 1;
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
            /* over the last dimension: rows are everything before it */
            long long K = L.in[L.ndim - 1], N = L.out[L.ndim - 1], M = numel(L.in) / K;
            dim3 grid((unsigned)((M + TILE - 1) / TILE), (unsigned)((N + TILE - 1) / TILE));
            linear_kernel<<<grid, dim3(TILE, TILE), 0, st>>>(cur, w, b, dst, M, N, K);
            break;
        }
        case K_LN: {
            long long C = L.in[L.ndim - 1];
            ln_kernel<<<blocks(n / C), THREADS, 0, st>>>(cur, dst, w, b, n / C, C);
            break;
        }
        case K_ATTN:
            if (L.out[2] / L.g > HD_MAX) return 1;   /* D0 D1 H / THREADS blocks: either layout */
            attn_kernel<<<(unsigned)((L.in[0] * L.g * L.in[1] + THREADS - 1) / THREADS), THREADS, 0, st>>>(
                cur, dst, L.in[0], L.in[1], L.out[2], L.g, L.k);
            break;
        case K_TOKENS:
            transpose_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.in[0], L.in[1], L.in[2] * L.in[3]);
            break;
        case K_UNTOKENS:
            transpose_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.in[0], L.in[1], L.in[2]);
            break;
        case K_GELU: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, NULL, dst, n, 3); break;
        case K_GELU_ERF: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, NULL, dst, n, 4); break;
        case K_UNFOLD:
            unfold_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(cur, dst, n, L.in[2],
                                                                                    L.in[3], L.k);
            break;
        case K_CLS:
            cls_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(cur, w, dst, n, L.out[1] - 1,
                                                                                 L.out[2]);
            break;
        case K_POS:
            pos_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(cur, w, dst, n,
                                                                                 L.out[1] * L.out[2]);
            break;
        case K_WMLP: {
            int S = (int)llround(sqrt((double)L.in[1]));
            wmlp_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(
                cur, w, b, dst, n, S, (int)L.in[2], L.k, L.g, L.s ? L.k - L.s : 0);
            break;
        }
        case K_MERGE:
            merge_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(
                cur, dst, n, (int)llround(sqrt((double)L.in[1])), (int)L.in[2]);
            break;
        case K_TMEAN:
            tmean_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(cur, dst, n, L.in[1],
                                                                                   L.in[2]);
            break;
        case K_WATTN: {
            const long long *pp = WPARTS[L.p];
            int S = (int)llround(sqrt((double)L.in[1])), C = (int)L.in[2], R = (2 * L.k - 1) * (2 * L.k - 1);
            long long M = L.in[0] * L.in[1];
            if (C / L.g > HD_MAX) return 1;
            cpb_kernel<<<(unsigned)((R * L.g + THREADS - 1) / THREADS), THREADS, 0, st>>>(
                P + pp[3], P + pp[4], P + pp[5], scratch, 4 * M * C, L.k, L.g);
            wqkv_kernel<<<(unsigned)((3 * M * C + THREADS - 1) / THREADS), THREADS, 0, st>>>(
                cur, P + pp[6], P + pp[1], P + pp[2], scratch, 3 * M * C, S, C, L.k, L.s);
            wattn_kernel<<<(unsigned)((M * L.g + THREADS - 1) / THREADS), THREADS, 0, st>>>(scratch, P + pp[0], M, S, C,
                                                                                        L.k, L.g, L.s);
            wproj_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(scratch, P + pp[7], P + pp[8], dst,
                                                                                  n, S, C, L.k, L.s);
            break;
        }
        case K_FIRST:
            first_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(cur, dst, n, L.in[1],
                                                                                   L.in[2]);
            break;
        case K_CONV:
            if (conv_layer(L, 0, cur, w, b, dst, st)) return 1;
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
            if (conv_layer(L, 1, cur, w, b, dst, st)) return 1;
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
'''


# --- models of fixed structure (collect/suite/problems/l3model.h) ---------------------------
#
# A recurrent network or NetVLAD: kbv prompt's {{layers}} gives one line of
# settings ("model lstm: input 128, hidden 256, ...") and one line per part
# of params ("part lstm.weight_ih_l0: [1024, 128] at params[0], ...").  The
# recurrent candidate runs, per layer and direction, one GEMM for the input
# projections of every step, then per step a GEMM of the state with
# weight_hh and one thread per hidden unit for the gates and the state
# update; the layer's output sequence feeds the next layer.  NetVLAD runs
# its steps one plain kernel each.  In the BF16 setting the generator runs
# these float kernels on widened copies (gen-naive-candidates.py).

MODEL = re.compile(r"^\s*model (\w+): (.*)$")
PART = re.compile(r"^\s*part ([\w.]+): \[([^\]]*)\] at params\[(\d+)\]")
WRAP_MARK = "// BF16: float kernels on widened copies of the call's tensors"


def parse_model(text):
    """(settings dict, {part name: (offset, shape)}) of a model's text, or None."""
    cfg, parts = None, {}
    for line in text.splitlines():
        m = MODEL.match(line)
        if m:
            cfg = {"kind": m.group(1)}
            for kv in m.group(2).split(", "):
                k, v = kv.rsplit(" ", 1)
                cfg[k] = int(v) if re.match(r"^-?\d+$", v) else v
            continue
        m = PART.match(line)
        if m:
            parts[m.group(1)] = (int(m.group(3)), [int(v) for v in m.group(2).split(",")])
    return (cfg, parts) if cfg else None


def gen_model(p, head, check):
    parsed = parse_model(p.get("layers", ""))
    if not parsed:
        return None
    cfg, parts = parsed
    if cfg["kind"] == "netvlad":
        return gen_netvlad(p, head, check, cfg, parts)
    if cfg["kind"] not in ("lstm", "gru", "cat_rnn"):
        return None
    return gen_recurrent(p, head, check, cfg, parts)


def gen_recurrent(p, head, check, cfg, parts):
    kind, H, L, dirs = cfg["kind"], cfg["hidden"], cfg["layers"], cfg["directions"]
    I, T, B, res, O = cfg["input"], cfg["steps"], cfg["batch"], cfg["result"], cfg["head"]
    G = {"lstm": 4, "gru": 3, "cat_rnn": 1}[kind]
    rows = []
    for l in range(L):
        for d in range(dirs):
            if kind == "cat_rnn":
                w, bi = parts["i2h.weight"][0], parts["i2h.bias"][0]
                # input matrix: columns 0..I-1 of i2h.weight, recurrent: the rest
                rows.append("    { %dLL, %dLL, %dLL, -1LL, %dLL, %dLL, %dLL }," % (w, w + I, bi, I, I + H, I + H))
                continue
            mod, sfx = ("lstm" if kind == "lstm" else "gru"), ("_reverse" if d else "")
            q = lambda n: parts["%s.%s_l%d%s" % (mod, n, l, sfx)][0]
            cols = I if l == 0 else H * dirs
            rows.append("    { %dLL, %dLL, %dLL, %dLL, %dLL, %dLL, %dLL }," % (
                q("weight_ih"), q("weight_hh"), q("bias_ih"), q("bias_hh"), cols, cols, H))
    fw = parts.get("h2o.weight" if kind == "cat_rnn" else "fc.weight", (-1, None))[0]
    fb = parts.get("h2o.bias" if kind == "cat_rnn" else "fc.bias", (-1, None))[0]
    res_code = {"head_last": 0, "head_seq": 1, "seq": 2, "h_n": 3, "c_n": 4}[res]
    bf = cfg["batch_first"]
    n_in = 2 + (2 if kind == "lstm" else 1)
    text = head.format(what="per layer and direction, one tiled GEMM for the input projections of\n"
                            "// every step, then per step a GEMM with weight_hh and one thread per hidden unit.", **p)
    return text + check + RNN_CU % {
        "rows": "\n".join(rows), "kind": {"lstm": 0, "gru": 1, "cat_rnn": 2}[kind], "G": G, "H": H, "L": L,
        "dirs": dirs, "I": I, "T": T, "B": B, "bf": bf, "res": res_code, "O": O, "fw": fw, "fb": fb,
        "n_in": n_in, "mark": WRAP_MARK,
    }


RNN_CU = r'''
%(mark)s
#define THREADS 256
#define TILE 16

#define KIND %(kind)d      /* 0 LSTM, 1 GRU, 2 the tanh cell over cat(x, h) with one bias */
#define G %(G)d            /* gates */
#define HID %(H)dLL
#define LAYERS %(L)d
#define DIRS %(dirs)d
#define IN %(I)dLL
#define STEPS %(T)dLL
#define BATCH %(B)dLL
#define BATCH_FIRST %(bf)d
#define RESULT %(res)d     /* 0 head on the last step, 1 head on every step, 2 the sequence, 3 h_n, 4 c_n */
#define OUTF %(O)dLL
#define FC_W %(fw)dLL
#define FC_B %(fb)dLL
#define N_INPUTS %(n_in)d

/* per layer and direction: weight_ih, weight_hh, bias_ih, bias_hh (-1: none)
 * offsets in params, the input width, and the row lengths of the two
 * weights as stored (the cell's two matrices are column blocks of i2h) */
struct layer { long long wi, wh, bi, bh, in, ldi, ldh; };
static const layer NET[] = {
%(rows)s
};

static float *xs, *gx, *seq[2], *hbuf[2], *cbuf, *rec, *hn, *cn;

/* y[m, n] = sum_k a[m, k] w[n, k] + b[n]: a rows lda apart, w rows ldw apart */
__global__ void gemm_kernel(const float *__restrict__ a, long long lda, const float *__restrict__ w,
                            long long ldw, const float *__restrict__ b, float *__restrict__ y, long long M,
                            long long N, long long K)
{
    __shared__ float as[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    long long row = (long long)blockIdx.x * TILE + threadIdx.y;
    long long col = (long long)blockIdx.y * TILE + threadIdx.x;
    long long wrow = (long long)blockIdx.y * TILE + threadIdx.y;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += TILE) {
        long long k = k0 + threadIdx.x;
        as[threadIdx.y][threadIdx.x] = (row < M && k < K) ? a[row * lda + k] : 0.0f;
        ws[threadIdx.y][threadIdx.x] = (wrow < N && k < K) ? w[wrow * ldw + k] : 0.0f;
        __syncthreads();
        for (int j = 0; j < TILE; j++) acc += as[threadIdx.y][j] * ws[threadIdx.x][j];
        __syncthreads();
    }
    if (row < M && col < N) y[row * N + col] = acc + (b ? b[col] : 0.0f);
}

__device__ float sigm(float v) { return 1.0f / (1.0f + expf(-v)); }

/* one thread per (b, j): the gates from the input projection gxt [B, G H]
 * and the recurrent product r [B, G H] (biases included), the new state
 * into hnew (and c in place), and the layer output at its column */
__global__ void cell_kernel(const float *__restrict__ gxt, const float *__restrict__ r,
                            const float *__restrict__ hold, float *__restrict__ hnew, float *__restrict__ c,
                            float *__restrict__ y, long long yld)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= BATCH * HID) return;
    long long b = i / HID, j = i %% HID;
    const float *gi = gxt + b * G * HID, *gr = r + b * G * HID;
    float h;
    if (KIND == 0) {
        float ig = sigm(gi[j] + gr[j]), fg = sigm(gi[HID + j] + gr[HID + j]);
        float gg = tanhf(gi[2 * HID + j] + gr[2 * HID + j]), og = sigm(gi[3 * HID + j] + gr[3 * HID + j]);
        float cv = fg * c[i] + ig * gg;
        c[i] = cv;
        h = og * tanhf(cv);
    } else if (KIND == 1) {
        float rg = sigm(gi[j] + gr[j]), zg = sigm(gi[HID + j] + gr[HID + j]);
        float ng = tanhf(gi[2 * HID + j] + rg * gr[2 * HID + j]);
        h = (1.0f - zg) * ng + zg * hold[i];
    } else {
        h = tanhf(gi[j] + gr[j]);
    }
    hnew[i] = h;
    y[b * yld + j] = h;
}

/* x [B, T, F] -> [T, B, F] (or the reverse with back) */
__global__ void swap01(const float *__restrict__ x, float *__restrict__ y, long long A, long long Bd, long long F)
{
    long long total = A * Bd * F;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long f = i %% F, r = i / F, a = r / Bd, bb = r %% Bd;
        y[(bb * A + a) * F + f] = x[i];
    }
}

__global__ void copy_kernel(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i];
}

static unsigned blocks(long long n)
{
    long long b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b > 65535 ? 65535 : (b < 1 ? 1 : b));
}

static void gemm(const float *a, long long lda, const float *w, long long ldw, const float *b, float *y,
                 long long M, long long N, long long K, cudaStream_t st)
{
    dim3 grid((unsigned)((M + TILE - 1) / TILE), (unsigned)((N + TILE - 1) / TILE));
    gemm_kernel<<<grid, dim3(TILE, TILE), 0, st>>>(a, lda, w, ldw, b, y, M, N, K);
}

extern "C" int kbv_setup(const kbv_call *call)
{
    (void)call;
    long long seqn = STEPS * BATCH * (IN > DIRS * HID ? IN : DIRS * HID);
    if (cudaMalloc((void **)&xs, (size_t)(STEPS * BATCH * IN) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&gx, (size_t)(STEPS * BATCH * G * HID) * sizeof(float)) != cudaSuccess) return 1;
    for (int i = 0; i < 2; i++) {
        if (cudaMalloc((void **)&seq[i], (size_t)seqn * sizeof(float)) != cudaSuccess) return 1;
        if (cudaMalloc((void **)&hbuf[i], (size_t)(BATCH * HID) * sizeof(float)) != cudaSuccess) return 1;
    }
    if (cudaMalloc((void **)&cbuf, (size_t)(BATCH * HID) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&rec, (size_t)(BATCH * G * HID) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&hn, (size_t)(LAYERS * DIRS * BATCH * HID) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&cn, (size_t)(LAYERS * DIRS * BATCH * HID) * sizeof(float)) != cudaSuccess) return 1;
    return 0;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs != N_INPUTS || call->n_outputs != 1 || !xs) return 1;
    if (kbv_numel(&call->inputs[0]) != STEPS * BATCH * IN) return 1;
    cudaStream_t st = call->stream;
    const float *x = (const float *)call->inputs[0].data, *h0 = (const float *)call->inputs[1].data;
    const float *c0 = KIND == 0 ? (const float *)call->inputs[2].data : NULL;
    const float *P = (const float *)call->inputs[N_INPUTS - 1].data;
    float *out = (float *)call->outputs[0].data;
    /* the layers read a seq-major [T, B, features] sequence */
    if (BATCH_FIRST) swap01<<<blocks(STEPS * BATCH * IN), THREADS, 0, st>>>(x, xs, BATCH, STEPS, IN);
    else copy_kernel<<<blocks(STEPS * BATCH * IN), THREADS, 0, st>>>(x, xs, STEPS * BATCH * IN);
    const float *cur = xs;
    int which = 0;
    for (int l = 0; l < LAYERS; l++) {
        float *y = seq[which];
        for (int d = 0; d < DIRS; d++) {
            const layer &Ly = NET[l * DIRS + d];
            long long s = (long long)l * DIRS + d;
            gemm(cur, Ly.in, P + Ly.wi, Ly.ldi, P + Ly.bi, gx, STEPS * BATCH, G * HID, Ly.in, st);
            copy_kernel<<<blocks(BATCH * HID), THREADS, 0, st>>>(h0 + s * BATCH * HID, hbuf[0], BATCH * HID);
            if (KIND == 0) copy_kernel<<<blocks(BATCH * HID), THREADS, 0, st>>>(c0 + s * BATCH * HID, cbuf, BATCH * HID);
            int hb = 0;
            for (long long k = 0; k < STEPS; k++) {
                long long t = d ? STEPS - 1 - k : k;
                gemm(hbuf[hb], HID, P + Ly.wh, Ly.ldh, Ly.bh >= 0 ? P + Ly.bh : NULL, rec, BATCH, G * HID, HID, st);
                cell_kernel<<<blocks(BATCH * HID), THREADS, 0, st>>>(gx + t * BATCH * G * HID, rec, hbuf[hb],
                                                                     hbuf[1 - hb], cbuf,
                                                                     y + t * BATCH * DIRS * HID + d * HID, DIRS * HID);
                hb = 1 - hb;
            }
            copy_kernel<<<blocks(BATCH * HID), THREADS, 0, st>>>(hbuf[hb], hn + s * BATCH * HID, BATCH * HID);
            if (KIND == 0) copy_kernel<<<blocks(BATCH * HID), THREADS, 0, st>>>(cbuf, cn + s * BATCH * HID, BATCH * HID);
        }
        cur = y;
        which = 1 - which;
    }
    long long F = DIRS * HID;
    if (RESULT == 0) gemm(cur + (STEPS - 1) * BATCH * F, F, P + FC_W, F, P + FC_B, out, BATCH, OUTF, F, st);
    else if (RESULT == 1) gemm(cur, F, P + FC_W, F, P + FC_B, out, STEPS * BATCH, OUTF, F, st);
    else if (RESULT == 2 && BATCH_FIRST) swap01<<<blocks(STEPS * BATCH * F), THREADS, 0, st>>>(cur, out, STEPS, BATCH, F);
    else if (RESULT == 2) copy_kernel<<<blocks(STEPS * BATCH * F), THREADS, 0, st>>>(cur, out, STEPS * BATCH * F);
    else copy_kernel<<<blocks(LAYERS * DIRS * BATCH * HID), THREADS, 0, st>>>(RESULT == 3 ? hn : cn, out,
                                                                              LAYERS * DIRS * BATCH * HID);
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    float **all[] = { &xs, &gx, &seq[0], &seq[1], &hbuf[0], &hbuf[1], &cbuf, &rec, &hn, &cn };
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) {
        cudaFree(*all[i]);
        *all[i] = NULL;
    }
}
'''


def gen_netvlad(p, head, check, cfg, parts):
    K, Gh, D, N, B = cfg["clusters"], cfg["ghost"], cfg["input"], cfg["steps"], cfg["batch"]
    text = head.format(what="NetVLAD one plain kernel per step: tiled GEMM for the assignment,\n"
                            "// two-pass batch-norm statistics, one thread per row, per output or per cluster.", **p)
    return text + check + VLAD_CU % {
        "K": K, "C": K + Gh, "D": D, "N": N, "B": B, "cl": parts["clusters"][0], "c2": parts["clusters2"][0],
        "g": parts["batch_norm.weight"][0], "b": parts["batch_norm.bias"][0], "mark": WRAP_MARK,
    }


VLAD_CU = r'''
%(mark)s
#define THREADS 256
#define TILE 16
#define KC %(K)dLL       /* clusters */
#define CC %(C)dLL       /* clusters and ghost clusters */
#define DD %(D)dLL       /* feature size */
#define NN %(N)dLL       /* features per sample */
#define BB %(B)dLL       /* samples */
#define P_CL %(cl)dLL
#define P_C2 %(c2)dLL
#define P_G %(g)dLL
#define P_B %(b)dLL

static float *asg, *stats, *asum, *vl, *cnorm;

/* y[m, n] = sum_k a[m, k] w[k, n] (w row-major [K, N]) */
__global__ void gemm_kn(const float *__restrict__ a, const float *__restrict__ w, float *__restrict__ y,
                        long long M, long long N, long long K)
{
    __shared__ float as[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    long long row = (long long)blockIdx.x * TILE + threadIdx.y;
    long long col = (long long)blockIdx.y * TILE + threadIdx.x;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += TILE) {
        long long ka = k0 + threadIdx.x, kw = k0 + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? a[row * K + ka] : 0.0f;
        ws[threadIdx.y][threadIdx.x] = (col < N && kw < K) ? w[kw * N + col] : 0.0f;
        __syncthreads();
        for (int j = 0; j < TILE; j++) acc += as[threadIdx.y][j] * ws[j][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) y[row * N + col] = acc;
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

/* one block per column of asg [R, C]: the mean, then the biased variance */
__global__ void col_stats(const float *__restrict__ x, float *__restrict__ mean, float *__restrict__ rstd, long long R)
{
    __shared__ float sh[THREADS];
    long long c = blockIdx.x;
    float s = 0.0f;
    for (long long r = threadIdx.x; r < R; r += THREADS) s += x[r * CC + c];
    float m = block_sum(s, sh) / (float)R;
    float q = 0.0f;
    for (long long r = threadIdx.x; r < R; r += THREADS) {
        float d = x[r * CC + c] - m;
        q += d * d;
    }
    float var = block_sum(q, sh) / (float)R;
    if (threadIdx.x == 0) {
        mean[c] = m;
        rstd[c] = 1.0f / sqrtf(var + 1e-5f);
    }
}

/* one thread per row: batch norm, softmax over C, in place */
__global__ void bn_softmax(float *__restrict__ x, const float *__restrict__ mean, const float *__restrict__ rstd,
                           const float *__restrict__ g, const float *__restrict__ b, long long R)
{
    long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float *row = x + r * CC;
    float m = -INFINITY;
    for (long long c = 0; c < CC; c++) {
        row[c] = (row[c] - mean[c]) * rstd[c] * g[c] + b[c];
        m = fmaxf(m, row[c]);
    }
    float s = 0.0f;
    for (long long c = 0; c < CC; c++) {
        row[c] = expf(row[c] - m);
        s += row[c];
    }
    for (long long c = 0; c < CC; c++) row[c] /= s;
}

/* one thread per (b, k): the sum of the assignments over N */
__global__ void a_sum(const float *__restrict__ p, float *__restrict__ s)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= BB * KC) return;
    long long b = i / KC, k = i %% KC;
    float acc = 0.0f;
    for (long long n = 0; n < NN; n++) acc += p[(b * NN + n) * CC + k];
    s[i] = acc;
}

/* one thread per (b, d, k): sum_n p[b, n, k] x[b, n, d] - a_sum[b, k] c2[d, k] */
__global__ void vlad_kernel(const float *__restrict__ p, const float *__restrict__ x, const float *__restrict__ s,
                            const float *__restrict__ c2, float *__restrict__ v)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < BB * DD * KC;
         i += (long long)gridDim.x * blockDim.x) {
        long long k = i %% KC, d = (i / KC) %% DD, b = i / (KC * DD);
        float acc = 0.0f;
        for (long long n = 0; n < NN; n++) acc += p[(b * NN + n) * CC + k] * x[(b * NN + n) * DD + d];
        v[i] = acc - s[b * KC + k] * c2[d * KC + k];
    }
}

/* one thread per (b, k): 1 / max(||v[b, :, k]||, 1e-12) */
__global__ void col_norm(const float *__restrict__ v, float *__restrict__ inv)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= BB * KC) return;
    long long b = i / KC, k = i %% KC;
    float acc = 0.0f;
    for (long long d = 0; d < DD; d++) {
        float t = v[(b * DD + d) * KC + k];
        acc += t * t;
    }
    inv[i] = 1.0f / fmaxf(sqrtf(acc), 1e-12f);
}

/* one block per sample: the intra-normalised row, then its own norm */
__global__ void row_norm(const float *__restrict__ v, const float *__restrict__ inv, float *__restrict__ out)
{
    __shared__ float sh[THREADS];
    long long b = blockIdx.x;
    float acc = 0.0f;
    for (long long i = threadIdx.x; i < DD * KC; i += THREADS) {
        float t = v[b * DD * KC + i] * inv[b * KC + i %% KC];
        acc += t * t;
    }
    float rn = 1.0f / fmaxf(sqrtf(block_sum(acc, sh)), 1e-12f);
    for (long long i = threadIdx.x; i < DD * KC; i += THREADS)
        out[b * DD * KC + i] = v[b * DD * KC + i] * inv[b * KC + i %% KC] * rn;
}

static unsigned blocks(long long n)
{
    long long b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b > 65535 ? 65535 : (b < 1 ? 1 : b));
}

extern "C" int kbv_setup(const kbv_call *call)
{
    (void)call;
    if (cudaMalloc((void **)&asg, (size_t)(BB * NN * CC) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&stats, (size_t)(2 * CC) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&asum, (size_t)(BB * KC) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&cnorm, (size_t)(BB * KC) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&vl, (size_t)(BB * DD * KC) * sizeof(float)) != cudaSuccess) return 1;
    return 0;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs != 2 || call->n_outputs != 1 || !asg) return 1;
    if (kbv_numel(&call->inputs[0]) != BB * NN * DD) return 1;
    cudaStream_t st = call->stream;
    const float *x = (const float *)call->inputs[0].data, *P = (const float *)call->inputs[1].data;
    float *out = (float *)call->outputs[0].data;
    long long R = BB * NN;
    dim3 grid((unsigned)((R + TILE - 1) / TILE), (unsigned)((CC + TILE - 1) / TILE));
    gemm_kn<<<grid, dim3(TILE, TILE), 0, st>>>(x, P + P_CL, asg, R, CC, DD);
    col_stats<<<(unsigned)CC, THREADS, 0, st>>>(asg, stats, stats + CC, R);
    bn_softmax<<<blocks(R), THREADS, 0, st>>>(asg, stats, stats + CC, P + P_G, P + P_B, R);
    a_sum<<<blocks(BB * KC), THREADS, 0, st>>>(asg, asum);
    vlad_kernel<<<blocks(BB * DD * KC), THREADS, 0, st>>>(asg, x, asum, P + P_C2, vl);
    col_norm<<<blocks(BB * KC), THREADS, 0, st>>>(vl, cnorm);
    row_norm<<<(unsigned)BB, THREADS, 0, st>>>(vl, cnorm, out);
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    float **all[] = { &asg, &stats, &asum, &cnorm, &vl };
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) {
        cudaFree(*all[i]);
        *all[i] = NULL;
    }
}
'''

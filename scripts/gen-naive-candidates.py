#!/usr/bin/env python3
"""gen-naive-candidates.py - writes data/candidates/naive/<id>.cu for every
problem of the suite that has a plain kernel family here.

    scripts/gen-naive-candidates.py [--force] [--bf16] [BUILD_DIR]

Reads the registry from BUILD_DIR/kbv-list --json and BUILD_DIR/kbv-prompt
(default build/).  Each
problem maps to a family by its KernelBench level and number; each family
is one straightforward, correct CUDA kernel (one thread per output element
or one block per row, FP32 throughout, no tensor cores, no vector loads).
Problem constants that the ABI only passes as unnamed values (stride,
padding, dilation of a convolution or a pooling, named by the registry) are
written into the file.  Existing files are kept; --force rewrites the ones
this script wrote (they carry its mark), never hand-written ones.  Prints what it wrote
and which problems have no family yet.

--bf16 writes data/candidates/naive-bf16/ instead: the same kernels for
the BF16 setting (kbv collect --precision bf16), where every float tensor
is bfloat16.  Each pointer to float becomes a pointer to bf16_t, a
bfloat16 in memory that reads as a float and rounds a float to nearest
even when written, so loads and stores are bfloat16 and the arithmetic
stays float; block-local shared memory (and the pointers to it), the
per-row statistics of the normalisations and the partial sums of the
reductions stay float, as PyTorch keeps its accumulators.  A level-2
chain keeps its intermediate tensor in float and rounds it into the
output once; a chain of steps of the later level-2 problems
(gen_level2_steps) and a level-3 model of fixed structure (naive_l3.py:
the recurrent networks, NetVLAD) run their float kernels whole on float
copies of the call's tensors and round their output once.
"""
import re
import json
import os
import subprocess
import sys

import naive_l3

HEAD = '''// naive: {what}
// {id}: out = {expr}
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>
'''

CHECK = '''
#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1
'''

# --- elementwise -------------------------------------------------------------

ELEMENTWISE = {
    5: ("x * a0", "3.14f", "0.0f"),
    19: ("fmaxf(x, 0.0f)", None, None),
    20: ("x > 0.0f ? x : x * a0", "0.01f", None),
    21: ("1.0f / (1.0f + expf(-x))", None, None),
    22: ("tanhf(x)", None, None),
    25: ("x / (1.0f + expf(-x))", None, None),
    26: ("0.5f * x * (1.0f + erff(x * 0.70710678118654752f))", None, None),
    27: ("1.0507009873554805f * (x > 0.0f ? x : 1.6732632423543772f * expm1f(x))", None, None),
    28: ("fminf(fmaxf(x / 6.0f + 0.5f, 0.0f), 1.0f)", None, None),
    29: ("x > 20.0f ? x : log1pf(expf(x))", None, None),
    30: ("x / (1.0f + fabsf(x))", None, None),
    31: ("x > 0.0f ? x : a0 * expm1f(x)", "1.0f", None),
    32: ("fminf(fmaxf(x, a0), a1)", "-1.0f", "1.0f"),
    88: ("0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)))", None, None),
}

def gen_elementwise(p):
    body, d0, d1 = ELEMENTWISE[p["number"]]
    return HEAD.format(what="elementwise, one element per thread.", **p) + CHECK + '''
__device__ __forceinline__ float f(float x, float a0, float a1)
{{
    (void)a0;
    (void)a1;
    return {body};
}}

__global__ void elementwise(const float *__restrict__ x, float *__restrict__ y, long long n, float a0, float a1)
{{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = f(x[i], a0, a1);
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    float a0 = call->n_attrs > 0 ? (float)call->attrs[0] : {d0};
    float a1 = call->n_attrs > 1 ? (float)call->attrs[1] : {d1};
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    elementwise<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>((const float *)call->inputs[0].data,
                                                                      (float *)call->outputs[0].data, n, a0, a1);
    CHECK_LAUNCH();
}}
'''.format(body=body, d0=d0 or "0.0f", d1=d1 or "0.0f")

# --- matrix products ---------------------------------------------------------

# number -> (how the forward call derives the product, mask)
MATMUL = {
    1: "mm", 2: "mm", 4: "mm", 6: "mm", 7: "mm", 8: "mm", 9: "mm", 13: "mm",
    3: "bmm", 10: "rows3", 11: "rows4", 14: "triu", 15: "tril",
    16: "ta", 17: "tb", 18: "tab",
}

MATMUL_SETUP = {
    "mm": '''    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return 1;
    long long M = a->shape[0], K = a->shape[1], N = b->shape[1], batch = 1;
    long long sAb = 0, sAm = K, sAk = 1, sBb = 0, sBk = N, sBn = 1;
    int mask = 0;''',
    "triu": '''    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return 1;
    long long M = a->shape[0], K = a->shape[1], N = b->shape[1], batch = 1;
    long long sAb = 0, sAm = K, sAk = 1, sBb = 0, sBk = N, sBn = 1;
    int mask = 2; /* keep n >= m */''',
    "tril": '''    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return 1;
    long long M = a->shape[0], K = a->shape[1], N = b->shape[1], batch = 1;
    long long sAb = 0, sAm = K, sAk = 1, sBb = 0, sBk = N, sBn = 1;
    int mask = 1; /* keep n <= m */''',
    "bmm": '''    if (a->ndim != 3 || b->ndim != 3 || a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) return 1;
    long long batch = a->shape[0], M = a->shape[1], K = a->shape[2], N = b->shape[2];
    long long sAb = M * K, sAm = K, sAk = 1, sBb = K * N, sBk = N, sBn = 1;
    int mask = 0;''',
    "rows3": '''    /* A [N0, M, K] @ B [K, L]: one product with N0 * M rows */
    if (a->ndim != 3 || b->ndim != 2 || a->shape[2] != b->shape[0]) return 1;
    long long M = a->shape[0] * a->shape[1], K = a->shape[2], N = b->shape[1], batch = 1;
    long long sAb = 0, sAm = K, sAk = 1, sBb = 0, sBk = N, sBn = 1;
    int mask = 0;''',
    "rows4": '''    /* einsum bijl,lk->bijk: one product with b * i * j rows */
    if (a->ndim != 4 || b->ndim != 2 || a->shape[3] != b->shape[0]) return 1;
    long long M = a->shape[0] * a->shape[1] * a->shape[2], K = a->shape[3], N = b->shape[1], batch = 1;
    long long sAb = 0, sAm = K, sAk = 1, sBb = 0, sBk = N, sBn = 1;
    int mask = 0;''',
    "ta": '''    /* A stored [K, M]: C = A^T B */
    if (a->ndim != 2 || b->ndim != 2 || a->shape[0] != b->shape[0]) return 1;
    long long K = a->shape[0], M = a->shape[1], N = b->shape[1], batch = 1;
    long long sAb = 0, sAm = 1, sAk = M, sBb = 0, sBk = N, sBn = 1;
    int mask = 0;''',
    "tb": '''    /* B stored [N, K]: C = A B^T */
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[1]) return 1;
    long long M = a->shape[0], K = a->shape[1], N = b->shape[0], batch = 1;
    long long sAb = 0, sAm = K, sAk = 1, sBb = 0, sBk = 1, sBn = K;
    int mask = 0;''',
    "tab": '''    /* A stored [K, M], B stored [N, K]: C = A^T B^T */
    if (a->ndim != 2 || b->ndim != 2 || a->shape[0] != b->shape[1]) return 1;
    long long K = a->shape[0], M = a->shape[1], N = b->shape[0], batch = 1;
    long long sAb = 0, sAm = 1, sAk = M, sBb = 0, sBk = 1, sBn = K;
    int mask = 0;''',
}

def gen_matmul(p):
    kind = MATMUL[p["number"]]
    return HEAD.format(what="FP32 matrix product, 16x16 shared-memory tiles, strided operands; a\n// one-block-per-row dot product when the result has one column.", **p) + CHECK + '''
#define TILE 16

/* C[b, m, n] = sum_k A[b, m, k] B[b, k, n], operands addressed by strides;
 * mask 1 keeps n <= m (tril), 2 keeps n >= m (triu), zeros elsewhere. */
__global__ void gemm_strided(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                             long long M, long long N, long long K, long long sAb, long long sAm, long long sAk,
                             long long sBb, long long sBk, long long sBn, int mask)
{{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    long long bz = blockIdx.z;
    const float *a = A + bz * sAb, *b = B + bz * sBb;
    float *c = C + bz * M * N;
    /* row tiles on x (up to 2^31 - 1 of them), column tiles on y */
    long long row = (long long)blockIdx.x * TILE + threadIdx.y, col = (long long)blockIdx.y * TILE + threadIdx.x;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += TILE) {{
        long long ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? a[row * sAm + ka * sAk] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? b[kb * sBk + col * sBn] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }}
    if (row < M && col < N) {{
        if ((mask == 1 && col > row) || (mask == 2 && col < row)) acc = 0.0f;
        c[row * N + col] = acc;
    }}
}}

/* One block per row when the result is a single column (matrix-vector). */
__global__ void gemv_rows(const float *__restrict__ A, const float *__restrict__ x, float *__restrict__ y,
                          long long K, long long sAm, long long sAk, long long sBk)
{{
    __shared__ float sh[256];
    const float *a = A + (long long)blockIdx.x * sAm;
    float s = 0.0f;
    for (long long k = threadIdx.x; k < K; k += 256) s += a[k * sAk] * x[k * sBk];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int o = 128; o > 0; o >>= 1) {{
        if (threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
        __syncthreads();
    }}
    if (threadIdx.x == 0) y[blockIdx.x] = sh[0];
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
{setup}
    if (kbv_numel(&call->outputs[0]) != batch * M * N) return 1;
    if (M == 0 || N == 0) return 0;
    const float *Ap = (const float *)a->data, *Bp = (const float *)b->data;
    float *Cp = (float *)call->outputs[0].data;
    if (N == 1 && batch == 1 && mask == 0) {{
        gemv_rows<<<(unsigned)M, 256, 0, call->stream>>>(Ap, Bp, Cp, K, sAm, sAk, sBk);
    }} else {{
        if ((N + TILE - 1) / TILE > 65535 || batch > 65535) return 1;
        dim3 block(TILE, TILE), grid((unsigned)((M + TILE - 1) / TILE), (unsigned)((N + TILE - 1) / TILE), (unsigned)batch);
        gemm_strided<<<grid, block, 0, call->stream>>>(Ap, Bp, Cp, M, N, K, sAb, sAm, sAk, sBb, sBk, sBn, mask);
    }}
    CHECK_LAUNCH();
}}
'''.format(setup=MATMUL_SETUP[kind])

def gen_diag(p):
    return HEAD.format(what="diag(A) @ B is a row scaling: C[i, j] = A[i] B[i, j].", **p) + CHECK + '''
__global__ void row_scale(const float *__restrict__ d, const float *__restrict__ B, float *__restrict__ C,
                          long long N, long long M)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N * M) C[i] = d[i / M] * B[i];
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
    if (a->ndim != 1 || b->ndim != 2 || b->shape[0] != a->shape[0]) return 1;
    long long N = b->shape[0], M = b->shape[1];
    if (N * M == 0) return 0;
    row_scale<<<(unsigned)((N * M + 255) / 256), 256, 0, call->stream>>>(
        (const float *)a->data, (const float *)b->data, (float *)call->outputs[0].data, N, M);
    CHECK_LAUNCH();
}
'''

# --- softmax -----------------------------------------------------------------

def gen_softmax(p):
    log = p["number"] == 24
    write = "xr[c] - m - logf(s)" if log else "expf(xr[c] - m) / s"
    return HEAD.format(what="one block per row, three passes (max, sum of exponentials, write).", **p) + CHECK + '''
#define THREADS 256

__device__ float block_reduce(float v, float *sh, int is_max)
{{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {{
        if (threadIdx.x < s)
            sh[threadIdx.x] = is_max ? fmaxf(sh[threadIdx.x], sh[threadIdx.x + s]) : sh[threadIdx.x] + sh[threadIdx.x + s];
        __syncthreads();
    }}
    float r = sh[0];
    __syncthreads();
    return r;
}}

__global__ void rows(const float *__restrict__ x, float *__restrict__ y, long long cols)
{{
    __shared__ float sh[THREADS];
    const float *xr = x + (long long)blockIdx.x * cols;
    float *yr = y + (long long)blockIdx.x * cols;
    float m = -INFINITY;
    for (long long c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
    m = block_reduce(m, sh, 1);
    float s = 0.0f;
    for (long long c = threadIdx.x; c < cols; c += THREADS) s += expf(xr[c] - m);
    s = block_reduce(s, sh, 0);
    for (long long c = threadIdx.x; c < cols; c += THREADS) yr[c] = {write};
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2) return 1;
    if (x->shape[0] == 0) return 0;
    rows<<<(unsigned)x->shape[0], THREADS, 0, call->stream>>>((const float *)x->data, (float *)call->outputs[0].data,
                                                            x->shape[1]);
    CHECK_LAUNCH();
}}
'''.format(write=write)

# --- reductions over dim 1 of [B, R, I] ------------------------------------------

REDUCE = {
    47: ("float acc = 0.0f;", "acc += v;", "y[o] = acc;", "float"),
    48: ("float acc = 0.0f;", "acc += v;", "y[o] = acc / (float)R;", "float"),
    49: ("float acc = -INFINITY;", "acc = fmaxf(acc, v);", "y[o] = acc;", "float"),
    53: ("float acc = INFINITY;", "acc = fminf(acc, v);", "y[o] = acc;", "float"),
    51: ("float acc = -INFINITY; long long at = 0;", "if (v > acc) { acc = v; at = r; }", "y[o] = at;", "int64_t"),
    52: ("float acc = INFINITY; long long at = 0;", "if (v < acc) { acc = v; at = r; }", "y[o] = at;", "int64_t"),
}

def gen_reduce(p):
    init, step, fin, ot = REDUCE[p["number"]]
    return HEAD.format(what="reduction over dim 1, one thread per output element (first index wins ties).", **p) + CHECK + '''
__global__ void reduce_dim1(const float *__restrict__ x, {ot} *__restrict__ y, long long B, long long R, long long I)
{{
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= B * I) return;
    long long b = o / I, i = o % I;
    const float *xp = x + b * R * I + i;
    {init}
    for (long long r = 0; r < R; r++) {{
        float v = xp[r * I];
        {step}
    }}
    {fin}
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 3) return 1;
    long long B = x->shape[0], R = x->shape[1], I = x->shape[2];
    if (B * I == 0) return 0;
    reduce_dim1<<<(unsigned)((B * I + 255) / 256), 256, 0, call->stream>>>(
        (const float *)x->data, ({ot} *)call->outputs[0].data, B, R, I);
    CHECK_LAUNCH();
}}
'''.format(init=init, step=step, fin=fin, ot=ot)

# --- scans along dim 1 of a 2-D tensor -------------------------------------------

def gen_scan(p):
    n = p["number"]
    if n == 92:
        kern = '''__global__ void scan_rows(const float *__restrict__ x, float *__restrict__ y, long long rows, long long D)
{
    /* out [rows, D + 1]: out[i, 0] = 0, out[i, j] = x[i, 0] + ... + x[i, j - 1] */
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const float *xr = x + i * D;
    float *yr = y + i * (D + 1);
    float s = 0.0f;
    yr[0] = 0.0f;
    for (long long j = 0; j < D; j++) {
        s += xr[j];
        yr[j + 1] = s;
    }
}'''
        launch = '''    const kbv_tensor *o = &call->outputs[0];
    if (o->ndim != 2 || o->shape[1] != x->shape[1] + 1 || o->shape[0] > x->shape[0]) return 1;
    long long rows = o->shape[0], D = x->shape[1];'''
    else:
        op = "s *= v;" if n == 90 else "s += v;"
        init = "1.0f" if n == 90 else "0.0f"
        val = "xr[j] * mr[j]" if n == 93 else "xr[j]"
        rev = n == 91
        loop = "for (long long j = D - 1; j >= 0; j--)" if rev else "for (long long j = 0; j < D; j++)"
        kern = '''__global__ void scan_rows(const float *__restrict__ x, const float *__restrict__ mask, float *__restrict__ y,
                          long long rows, long long D)
{{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const float *xr = x + i * D;
    const float *mr = mask ? mask + i * D : xr;
    (void)mr;
    float *yr = y + i * D;
    float s = {init};
    {loop} {{
        float v = {val};
        {op}
        yr[j] = s;
    }}
}}'''.format(init=init, loop=loop, val=val, op=op)
        launch = '''    long long rows = x->shape[0], D = x->shape[1];'''
    margs = "(const float *)x->data, (float *)call->outputs[0].data, rows, D" if n == 92 else \
        "(const float *)x->data, %s, (float *)call->outputs[0].data, rows, D" % (
            "(const float *)call->inputs[1].data" if n == 93 else "(const float *)0")
    return HEAD.format(what="scan along dim 1, one thread per row, sequential.", **p) + CHECK + '''
{kern}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < {nin} || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2) return 1;
{launch}
    if (rows == 0) return 0;
    scan_rows<<<(unsigned)((rows + 127) / 128), 128, 0, call->stream>>>({margs});
    CHECK_LAUNCH();
}}
'''.format(kern=kern, launch=launch, margs=margs, nin=2 if n == 93 else 1)

# --- normalisations ----------------------------------------------------------------

NORM_COMMON = '''
#define THREADS 256

/* Sum over the block; every thread gets the result. */
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
'''

def attr(p, name, default=None):
    for a in p["attrs"]:
        if a["name"] == name:
            return a["value"]
    return default

def gen_norm(p):
    n = p["number"]
    eps = attr(p, "eps", 1e-5)
    if n in (33, 34, 35, 40):
        # group statistics: a "group" is a set of elements normalised together.
        # 33: per channel over (N, H, W); 34: per (n, c); 35: per (n, group); 40: per row of F.
        if n == 33:
            desc = "batch statistics per channel over (N, H, W), biased variance, affine"
            idx = '''    long long N = x->shape[0], C = x->shape[1], S = kbv_numel(x) / (N * C);
    long long groups = C, per = N * S;'''
            elem = '''__device__ __forceinline__ long long elem(long long g, long long j, long long C, long long S, long long G)
{
    (void)G;
    long long n = j / S, s = j % S; /* group g is channel g */
    return (n * C + g) * S + s;
}
__device__ __forceinline__ long long chan(long long i, long long C, long long S) { return (i / S) % C; }'''
            affine = True
        elif n == 34:
            desc = "statistics per (sample, channel) over (H, W), biased variance, no affine"
            idx = '''    long long N = x->shape[0], C = x->shape[1], S = kbv_numel(x) / (N * C);
    long long groups = N * C, per = S;'''
            elem = '''__device__ __forceinline__ long long elem(long long g, long long j, long long C, long long S, long long G)
{
    (void)C;
    (void)G;
    return g * S + j;
}
__device__ __forceinline__ long long chan(long long i, long long C, long long S) { return (i / S) % C; }'''
            affine = False
        elif n == 35:
            desc = "statistics per (sample, group of channels), biased variance, per-channel affine"
            G = int(attr(p, "num_groups", 8))
            idx = '''    long long N = x->shape[0], C = x->shape[1], S = kbv_numel(x) / (N * C);
    long long G = %d; /* num_groups */
    if (C %% G != 0) return 1;
    long long groups = N * G, per = (C / G) * S;''' % G
            elem = '''__device__ __forceinline__ long long elem(long long g, long long j, long long C, long long S, long long G)
{
    (void)C;
    (void)S;
    (void)G;
    return g * ((C / G) * S) + j; /* a group's channels are contiguous */
}
__device__ __forceinline__ long long chan(long long i, long long C, long long S) { return (i / S) % C; }'''
            affine = True
        else:
            desc = "statistics per sample over the normalised shape, biased variance, elementwise affine"
            idx = '''    long long F = kbv_numel(&call->inputs[1]);
    if (F == 0 || kbv_numel(x) % F != 0) return 1;
    long long N = kbv_numel(x) / F, C = F, S = 1;
    long long groups = N, per = F;'''
            elem = '''__device__ __forceinline__ long long elem(long long g, long long j, long long C, long long S, long long G)
{
    (void)S;
    (void)G;
    return g * C + j; /* C is the normalised size F here */
}
__device__ __forceinline__ long long chan(long long i, long long C, long long S) { (void)S; return i % C; }'''
            affine = True
        gvar = "G" if n == 35 else "1"
        return HEAD.format(what=desc + "; one block per\n// group computes mean and variance in two passes, then one thread per element.", **p) + CHECK + NORM_COMMON + '''
{elem}

__global__ void stats(const float *__restrict__ x, float *__restrict__ mean, float *__restrict__ rstd, long long per,
                      long long C, long long S, long long G, float eps)
{{
    __shared__ float sh[THREADS];
    long long g = blockIdx.x;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < per; j += THREADS) s += x[elem(g, j, C, S, G)];
    float m = block_sum(s, sh) / (float)per;
    float q = 0.0f;
    for (long long j = threadIdx.x; j < per; j += THREADS) {{
        float d = x[elem(g, j, C, S, G)] - m;
        q += d * d;
    }}
    float var = block_sum(q, sh) / (float)per;
    if (threadIdx.x == 0) {{
        mean[g] = m;
        rstd[g] = 1.0f / sqrtf(var + eps);
    }}
}}

__global__ void apply(const float *__restrict__ x, const float *__restrict__ mean, const float *__restrict__ rstd,
                      const float *__restrict__ w, const float *__restrict__ b, float *__restrict__ y, long long total,
                      long long groups, long long per, long long C, long long S, long long G)
{{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= groups * per) return;
    long long g = t / per, j = t % per;
    long long i = elem(g, j, C, S, G);
    (void)total;
    float v = (x[i] - mean[g]) * rstd[g];
    if (w) {{
        long long c = chan(i, C, S);
        v = v * w[c] + b[c];
    }}
    y[i] = v;
}}

static float *scratch;
static long long scratch_n;

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < {nin} || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim < 2) return 1;
{idx}
    if (groups * per != kbv_numel(x)) return 1;
    if (groups == 0) return 0;
    if (scratch_n < 2 * groups) {{
        cudaFree(scratch);
        scratch = NULL;
        scratch_n = 0;
        if (cudaMalloc((void **)&scratch, 2 * groups * sizeof(float)) != cudaSuccess) return 1;
        scratch_n = 2 * groups;
    }}
    float eps = (float){eps!r};
    stats<<<(unsigned)groups, THREADS, 0, call->stream>>>((const float *)x->data, scratch, scratch + groups, per, C, S,
                                                          {gvar}, eps);
    const float *w = {w}, *b = {b};
    long long total = groups * per;
    apply<<<(unsigned)((total + 255) / 256), 256, 0, call->stream>>>((const float *)x->data, scratch,
                                                                     scratch + groups, w, b,
                                                                     (float *)call->outputs[0].data, total, groups,
                                                                     per, C, S, {gvar});
    CHECK_LAUNCH();
}}

extern "C" void kbv_teardown(void)
{{
    cudaFree(scratch);
    scratch = NULL;
    scratch_n = 0;
}}
'''.format(elem=elem, idx=idx, eps=eps, nin=3 if affine else 1, gvar=gvar,
           w="(const float *)call->inputs[1].data" if affine else "(const float *)0",
           b="(const float *)call->inputs[2].data" if affine else "(const float *)0")
    if n == 36:
        return HEAD.format(what="RMS over dim 1, one thread per (sample, position).", **p) + CHECK + '''
__global__ void rms(const float *__restrict__ x, float *__restrict__ y, long long C, long long S, long long total,
                    float eps)
{{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long b = t / S, s = t % S;
    const float *xp = x + b * C * S + s;
    float *yp = y + b * C * S + s;
    float acc = 0.0f;
    for (long long c = 0; c < C; c++) acc += xp[c * S] * xp[c * S];
    float r = sqrtf(acc / (float)C + eps);
    for (long long c = 0; c < C; c++) yp[c * S] = xp[c * S] / r;
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim < 2) return 1;
    long long C = x->shape[1], S = kbv_numel(x) / (x->shape[0] * C), total = x->shape[0] * S;
    if (total == 0) return 0;
    rms<<<(unsigned)((total + 255) / 256), 256, 0, call->stream>>>((const float *)x->data,
                                                                   (float *)call->outputs[0].data, C, S, total,
                                                                   (float){eps!r});
    CHECK_LAUNCH();
}}
'''.format(eps=eps)
    if n == 37:
        return HEAD.format(what="Frobenius norm by a two-level deterministic sum, then one thread per element.", **p) + CHECK + NORM_COMMON + '''
#define PARTS 1024

__global__ void partial_sumsq(const float *__restrict__ x, long long n, float *part)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += (long long)PARTS * THREADS)
        s += x[i] * x[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

__global__ void total_norm(float *part)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (int i = threadIdx.x; i < PARTS; i += THREADS) s += part[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) part[PARTS] = sqrtf(s);
}

__global__ void divide(const float *__restrict__ x, float *__restrict__ y, long long n, const float *norm)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / *norm;
}

static float *part;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    if (!part && cudaMalloc((void **)&part, (PARTS + 1) * sizeof(float)) != cudaSuccess) return 1;
    const float *x = (const float *)call->inputs[0].data;
    partial_sumsq<<<PARTS, THREADS, 0, call->stream>>>(x, n, part);
    total_norm<<<1, THREADS, 0, call->stream>>>(part);
    divide<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>(x, (float *)call->outputs[0].data, n, part + PARTS);
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    cudaFree(part);
    part = NULL;
}
'''
    if n in (38, 39):
        l1 = n == 38
        return HEAD.format(what=("mean absolute value" if l1 else "L2 norm") + " of each row, one block per row.", **p) + CHECK + NORM_COMMON + '''
__global__ void rows(const float *__restrict__ x, float *__restrict__ y, long long D)
{{
    __shared__ float sh[THREADS];
    const float *xr = x + (long long)blockIdx.x * D;
    float *yr = y + (long long)blockIdx.x * D;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < D; j += THREADS) s += {term};
    s = block_sum(s, sh);
    float d = {den};
    for (long long j = threadIdx.x; j < D; j += THREADS) yr[j] = xr[j] / d;
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2) return 1;
    if (x->shape[0] == 0) return 0;
    rows<<<(unsigned)x->shape[0], THREADS, 0, call->stream>>>((const float *)x->data, (float *)call->outputs[0].data,
                                                            x->shape[1]);
    CHECK_LAUNCH();
}}
'''.format(term="fabsf(xr[j])" if l1 else "xr[j] * xr[j]", den="s / (float)D" if l1 else "sqrtf(s)")
    return None

# --- pooling -------------------------------------------------------------------

def triple(p, base, default, nd):
    axes = ["d", "h", "w"][3 - nd:]
    out = []
    for a in axes:
        v = attr(p, "%s_%s" % (base, a), attr(p, base, default))
        out.append(int(v) if v is not None else None)
    return out

def gen_pool(p):
    n = p["number"]
    is_max = n in (41, 42, 43)
    nd = len(p["inputs"][0]["shape"]) - 2
    k = triple(p, "kernel_size", None, nd)
    s = triple(p, "stride", None, nd)
    s = [s[i] if s[i] is not None else k[i] for i in range(nd)]  # PyTorch: stride defaults to kernel_size
    pd = triple(p, "padding", 0, nd)
    dl = triple(p, "dilation", 1, nd) if is_max else [1] * nd
    def arr(v):
        v = [1] * (3 - nd) + v if len(v) < 3 else v
        return "{%s}" % ", ".join(str(x) for x in v)
    # pad the leading (unused) dimensions so that the kernel always loops over 3
    kk = [1] * (3 - nd) + k
    ss = [1] * (3 - nd) + s
    pp = [0] * (3 - nd) + pd
    dd = [1] * (3 - nd) + dl
    body_init = "float acc = -INFINITY;" if is_max else "float acc = 0.0f;"
    body_step = "acc = fmaxf(acc, v);" if is_max else "acc += v;"
    body_pad = "continue;" if is_max else "continue; /* padding counts as zero */"
    fin = "acc" if is_max else "acc / (float)(KD * KH * KW)"
    return HEAD.format(what=("max" if is_max else "average (count_include_pad)") + " pooling, one thread per output element.", **p) + CHECK + '''
/* {nd}-D pooling written as 3-D with unit leading dimensions:
 * kernel {k}, stride {s}, padding {pd}, dilation {dl}. */
#define KD {k0}
#define KH {k1}
#define KW {k2}
__constant__ int S_[3] = {s3};
__constant__ int P_[3] = {p3};
__constant__ int DL[3] = {d3};

__global__ void pool(const float *__restrict__ x, float *__restrict__ y, long long planes, long long ID, long long IH,
                     long long IW, long long OD, long long OH, long long OW)
{{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = planes * OD * OH * OW;
    if (t >= total) return;
    long long ow = t % OW, oh = (t / OW) % OH, od = (t / (OW * OH)) % OD, pl = t / (OW * OH * OD);
    const float *xp = x + pl * ID * IH * IW;
    {init}
    for (int a = 0; a < KD; a++)
        for (int b = 0; b < KH; b++)
            for (int c = 0; c < KW; c++) {{
                long long id = od * S_[0] - P_[0] + (long long)a * DL[0];
                long long ih = oh * S_[1] - P_[1] + (long long)b * DL[1];
                long long iw = ow * S_[2] - P_[2] + (long long)c * DL[2];
                if (id < 0 || id >= ID || ih < 0 || ih >= IH || iw < 0 || iw >= IW) {pad}
                float v = xp[(id * IH + ih) * IW + iw];
                {step}
            }}
    y[t] = {fin};
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0], *o = &call->outputs[0];
    if (x->ndim != {nd} + 2 || o->ndim != x->ndim) return 1;
    long long in[3] = {{1, 1, 1}}, out[3] = {{1, 1, 1}};
    for (int i = 0; i < {nd}; i++) {{
        in[3 - {nd} + i] = x->shape[2 + i];
        out[3 - {nd} + i] = o->shape[2 + i];
    }}
    long long planes = x->shape[0] * x->shape[1];
    long long total = planes * out[0] * out[1] * out[2];
    if (total == 0) return 0;
    pool<<<(unsigned)((total + 255) / 256), 256, 0, call->stream>>>((const float *)x->data, (float *)o->data, planes,
                                                                    in[0], in[1], in[2], out[0], out[1], out[2]);
    CHECK_LAUNCH();
}}
'''.format(nd=nd, k=k, s=s, pd=pd, dl=dl, k0=kk[0], k1=kk[1], k2=kk[2], s3=arr(ss), p3=arr(pp), d3=arr(dd),
           init=body_init, step=body_step, pad=body_pad, fin=fin)

# --- convolutions ------------------------------------------------------------------

CONV_KERNELS = '''
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
'''

def gen_conv(p):
    n = p["number"]
    transposed = "transposed" in p["id"]
    nd = len(p["inputs"][0]["shape"]) - 2
    s = [1] * (3 - nd) + triple(p, "stride", 1, nd)
    pd = [0] * (3 - nd) + triple(p, "padding", 0, nd)
    dl = [1] * (3 - nd) + triple(p, "dilation", 1, nd)
    fmt = lambda v: "{%s}" % ", ".join(str(int(x)) for x in v)
    if n == 86:
        return HEAD.format(what="depthwise 3x3 into a scratch tensor, one thread per element, then the pointwise\n// 1x1 as a 16x16 tiled implicit GEMM.", **p) + CHECK + CONV_KERNELS + '''
static const int S[3] = {s}, P[3] = {pd}, D[3] = {dl};
static const int ONE[3] = {{1, 1, 1}}, ZERO[3] = {{0, 0, 0}};
static float *mid;
static size_t mid_bytes;

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 3 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0], *wd = &call->inputs[1], *wp = &call->inputs[2], *y = &call->outputs[0];
    if (x->ndim != 4 || wd->ndim != 4 || wp->ndim != 4 || y->ndim != 4) return 1;
    /* the depthwise result: [N, Cin, OH, OW] with OH, OW those of y (stride 1) */
    kbv_tensor m = *y;
    m.shape[1] = x->shape[1];
    size_t bytes = (size_t)kbv_numel(&m) * sizeof(float);
    if (mid_bytes < bytes) {{
        cudaFree(mid);
        mid = NULL;
        mid_bytes = 0;
        if (cudaMalloc((void **)&mid, bytes) != cudaSuccess) return 1;
        mid_bytes = bytes;
    }}
    m.data = mid;
    geom g1, g2;
    if (geom_of(x, wd, &m, 2, 0, &g1) || geom_of(&m, wp, y, 2, 0, &g2)) return 1;
    if (launch(&g1, 0, (const float *)x->data, (const float *)wd->data, NULL, mid, S, P, D, call->stream) ||
        launch(&g2, 0, mid, (const float *)wp->data, NULL, (float *)y->data, ONE, ZERO, ONE, call->stream))
        return 1;
    CHECK_LAUNCH();
}}

extern "C" void kbv_teardown(void)
{{
    cudaFree(mid);
    mid = NULL;
    mid_bytes = 0;
}}
'''.format(s=fmt(s), pd=fmt(pd), dl=fmt(dl))
    # launch()'s choice: the tiled product for groups of 8 output channels
    # or more, one thread per output and no tiles below
    w = p["inputs"][1]["shape"]
    cout_g = w[1] if transposed else w[0] // (p["inputs"][0]["shape"][1] // w[1])
    how = (" convolution as a 16x16 tiled implicit GEMM (FP32, one output per thread)." if cout_g >= 8
           else " convolution, one thread per output element.")
    if transposed and cout_g >= 8 and max(s) > 1:
        how = (" convolution as a 16x16 tiled implicit GEMM per output phase (FP32, one output per\n"
               "// thread, only the taps on the stride).")
    return HEAD.format(what=("transposed" if transposed else "direct") + how, **p) + CHECK + CONV_KERNELS + '''
/* stride, padding, dilation from the problem's attributes (PyTorch's
 * defaults where it names none), as 3-D */
static const int S[3] = {s}, P[3] = {pd}, D[3] = {dl};

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    geom g;
    if (geom_of(&call->inputs[0], &call->inputs[1], &call->outputs[0], {nd}, {tr}, &g)) return 1;
    const float *bias = call->n_inputs > 2 ? (const float *)call->inputs[2].data : NULL;
    if (launch(&g, {tr}, (const float *)call->inputs[0].data, (const float *)call->inputs[1].data, bias,
               (float *)call->outputs[0].data, S, P, D, call->stream))
        return 1;
    CHECK_LAUNCH();
}}
'''.format(s=fmt(s), pd=fmt(pd), dl=fmt(dl), nd=nd, tr=1 if transposed else 0)

# --- losses and attention ----------------------------------------------------------

LOSS_COMMON = NORM_COMMON + '''
#define PARTS 1024

/* The last step of every loss: the mean (or sum / divisor) of PARTS partial
 * sums, in a fixed order. */
__global__ void finish(const float *part, float *y, float divisor)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (int i = threadIdx.x; i < PARTS; i += THREADS) s += part[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) *y = s / divisor;
}

static float *part;

static int need_part(void)
{
    return part || cudaMalloc((void **)&part, PARTS * sizeof(float)) == cudaSuccess ? 0 : 1;
}

extern "C" void kbv_teardown(void)
{
    cudaFree(part);
    part = NULL;
}
'''

def gen_loss_elementwise(p, term, extra_args="", extra_params="", what=""):
    return HEAD.format(what=what, **p) + CHECK + LOSS_COMMON + '''
__global__ void partial(const float *__restrict__ a, const float *__restrict__ b, long long n, float *part{params})
{{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += (long long)PARTS * THREADS) {{
        {term}
    }}
    s = block_sum(s, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}}

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 2 || call->n_outputs < 1 || need_part()) return 1;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 1;
    partial<<<PARTS, THREADS, 0, call->stream>>>((const float *)call->inputs[0].data,
                                                 (const float *)call->inputs[1].data, n, part{args});
    finish<<<1, THREADS, 0, call->stream>>>(part, (float *)call->outputs[0].data, (float)n);
    CHECK_LAUNCH();
}}
'''.format(term=term, params=extra_params, args=extra_args)

def gen_loss(p):
    n = p["number"]
    if n == 94:
        return gen_loss_elementwise(p, "float d = a[i] - b[i];\n        s += d * d;",
                                    what="mean of squared differences, two-level deterministic sum.")
    if n == 96:
        return gen_loss_elementwise(p, "float d = fabsf(a[i] - b[i]);\n        s += d < 1.0f ? 0.5f * d * d : d - 0.5f;",
                                    what="smooth L1 (beta 1) mean, two-level deterministic sum.")
    if n == 100:
        return gen_loss_elementwise(p, "s += fmaxf(1.0f - a[i] * b[i % D], 0.0f); /* targets broadcast along the last dim */",
                                    extra_args=", call->inputs[1].shape[0]", extra_params=", long long D",
                                    what="hinge loss mean, targets broadcast along the last dimension.")
    if n == 98:
        return HEAD.format(what="KL divergence, batchmean: sum t (log t - log p) / rows.", **p) + CHECK + LOSS_COMMON + '''
__global__ void partial(const float *__restrict__ pr, const float *__restrict__ t, long long n, float *part)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += (long long)PARTS * THREADS) {
        float ti = t[i];
        if (ti > 0.0f) s += ti * (logf(ti) - logf(pr[i]));
    }
    s = block_sum(s, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1 || need_part()) return 1;
    const kbv_tensor *pr = &call->inputs[0];
    long long n = kbv_numel(pr);
    if (n == 0 || pr->ndim < 1) return 1;
    partial<<<PARTS, THREADS, 0, call->stream>>>((const float *)pr->data, (const float *)call->inputs[1].data, n, part);
    finish<<<1, THREADS, 0, call->stream>>>(part, (float *)call->outputs[0].data, (float)pr->shape[0]);
    CHECK_LAUNCH();
}
'''
    if n == 95:
        return HEAD.format(what="cross entropy: mean over rows of logsumexp(row) - row[target], one block per row.", **p) + CHECK + NORM_COMMON + '''
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

__global__ void row_loss(const float *__restrict__ x, const int64_t *__restrict__ target, float *loss, long long C)
{
    __shared__ float sh[THREADS];
    const float *xr = x + (long long)blockIdx.x * C;
    float m = -INFINITY;
    for (long long c = threadIdx.x; c < C; c += THREADS) m = fmaxf(m, xr[c]);
    m = block_max(m, sh);
    float s = 0.0f;
    for (long long c = threadIdx.x; c < C; c += THREADS) s += expf(xr[c] - m);
    s = block_sum(s, sh);
    if (threadIdx.x == 0) loss[blockIdx.x] = m + logf(s) - xr[target[blockIdx.x]];
}

__global__ void mean_of(const float *loss, long long n, float *y)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (long long i = threadIdx.x; i < n; i += THREADS) s += loss[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) *y = s / (float)n;
}

static float *loss;
static long long loss_n;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0], *t = &call->inputs[1];
    if (x->ndim != 2 || t->dtype != KBV_I64 || t->shape[0] != x->shape[0] || x->shape[0] == 0) return 1;
    long long B = x->shape[0];
    if (loss_n < B) {
        cudaFree(loss);
        loss = NULL;
        loss_n = 0;
        if (cudaMalloc((void **)&loss, B * sizeof(float)) != cudaSuccess) return 1;
        loss_n = B;
    }
    row_loss<<<(unsigned)B, THREADS, 0, call->stream>>>((const float *)x->data, (const int64_t *)t->data, loss,
                                                       x->shape[1]);
    mean_of<<<1, THREADS, 0, call->stream>>>(loss, B, (float *)call->outputs[0].data);
    CHECK_LAUNCH();
}

extern "C" void kbv_teardown(void)
{
    cudaFree(loss);
    loss = NULL;
    loss_n = 0;
}
'''
    if n == 99:
        margin = attr(p, "margin", 1.0)
        return HEAD.format(what="triplet margin loss (p = 2, eps 1e-6 added to the differences), one block per row.", **p) + CHECK + NORM_COMMON + '''
__global__ void row_loss(const float *__restrict__ a, const float *__restrict__ pos, const float *__restrict__ neg,
                         float *loss, long long D, float margin)
{{
    __shared__ float sh[THREADS];
    long long base = (long long)blockIdx.x * D;
    float sp = 0.0f, sn = 0.0f;
    for (long long j = threadIdx.x; j < D; j += THREADS) {{
        float dp = a[base + j] - pos[base + j] + 1e-6f;
        float dn = a[base + j] - neg[base + j] + 1e-6f;
        sp += dp * dp;
        sn += dn * dn;
    }}
    sp = block_sum(sp, sh);
    sn = block_sum(sn, sh);
    if (threadIdx.x == 0) loss[blockIdx.x] = fmaxf(sqrtf(sp) - sqrtf(sn) + margin, 0.0f);
}}

__global__ void mean_of(const float *loss, long long n, float *y)
{{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (long long i = threadIdx.x; i < n; i += THREADS) s += loss[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) *y = s / (float)n;
}}

static float *loss;
static long long loss_n;

extern "C" int kbv_forward(const kbv_call *call)
{{
    if (call->n_inputs < 3 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0];
    if (a->ndim != 2 || a->shape[0] == 0) return 1;
    long long B = a->shape[0];
    float margin = call->n_attrs > 0 ? (float)call->attrs[0] : (float){margin!r};
    if (loss_n < B) {{
        cudaFree(loss);
        loss = NULL;
        loss_n = 0;
        if (cudaMalloc((void **)&loss, B * sizeof(float)) != cudaSuccess) return 1;
        loss_n = B;
    }}
    row_loss<<<(unsigned)B, THREADS, 0, call->stream>>>((const float *)a->data, (const float *)call->inputs[1].data,
                                                       (const float *)call->inputs[2].data, loss, a->shape[1], margin);
    mean_of<<<1, THREADS, 0, call->stream>>>(loss, B, (float *)call->outputs[0].data);
    CHECK_LAUNCH();
}}

extern "C" void kbv_teardown(void)
{{
    cudaFree(loss);
    loss = NULL;
    loss_n = 0;
}}
'''.format(margin=margin)
    if n == 97:
        return HEAD.format(what="attention, one block per query row: scores in shared memory, softmax, weighted sum.", **p) + CHECK + NORM_COMMON + '''
#define MAX_KEYS 4096

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

__global__ void attend(const float *__restrict__ Q, const float *__restrict__ K, const float *__restrict__ V,
                       float *__restrict__ O, long long S, long long E, float scale)
{
    __shared__ float sc[MAX_KEYS];
    __shared__ float sh[THREADS];
    long long bh = blockIdx.x / S, q = blockIdx.x % S;
    const float *qr = Q + (bh * S + q) * E;
    const float *kb = K + bh * S * E, *vb = V + bh * S * E;
    float *orow = O + (bh * S + q) * E;
    /* one warp per key: the lanes walk the key's row together (coalesced) */
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (long long j = warp; j < S; j += THREADS / 32) {
        const float *kr = kb + j * E;
        float d = 0.0f;
        for (long long e = lane; e < E; e += 32) d += qr[e] * kr[e];
        for (int o = 16; o > 0; o >>= 1) d += __shfl_xor_sync(0xffffffffu, d, o);
        if (lane == 0) sc[j] = d * scale;
    }
    __syncthreads();
    float m = -INFINITY;
    for (long long j = threadIdx.x; j < S; j += THREADS) m = fmaxf(m, sc[j]);
    m = block_max(m, sh);
    float s = 0.0f;
    for (long long j = threadIdx.x; j < S; j += THREADS) {
        float v = expf(sc[j] - m);
        sc[j] = v;
        s += v;
    }
    s = block_sum(s, sh);
    for (long long e = threadIdx.x; e < E; e += THREADS) {
        float acc = 0.0f;
        for (long long j = 0; j < S; j++) acc += sc[j] * vb[j * E + e];
        orow[e] = acc / s;
    }
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 3 || call->n_outputs < 1) return 1;
    const kbv_tensor *q = &call->inputs[0];
    if (q->ndim < 2) return 1;
    long long E = q->shape[q->ndim - 1], S = q->shape[q->ndim - 2];
    if (S > MAX_KEYS || E == 0) return 1;
    long long rows = kbv_numel(q) / E;
    if (rows == 0) return 0;
    attend<<<(unsigned)rows, THREADS, 0, call->stream>>>((const float *)q->data, (const float *)call->inputs[1].data,
                                                         (const float *)call->inputs[2].data,
                                                         (float *)call->outputs[0].data, S, E,
                                                         1.0f / sqrtf((float)E));
    CHECK_LAUNCH();
}
'''
    return None


# --- level 2: a main operation (linear or convolution), then the rest -------------
#
# Each problem is: the main op into a buffer, an elementwise "pre" step, an
# optional normalisation (its statistics in two passes, one block per group),
# an elementwise "post" step, an optional reduction, and an elementwise "fin"
# step on the reduced values.  Expressions see v (the value), c (the index of
# the feature of a linear output or of the channel of a convolution output)
# and P<k> (input k of the call, a device pointer).

MISH = "(v * tanhf(v > 20.0f ? v : log1pf(expf(v))))"

def mish(e):
    return "mish(%s)" % e

L2 = {
    # number: dict(main, pre, norm, post, red, fin)
    1: dict(main="conv", pre="fmaxf(v, 0.0f) + P3[c]"),
    2: dict(main="convT", pre="v = v + P3[c]; v = fminf(fmaxf(v, 0.0f), 1.0f); v = v * {scaling_factor}f; "
                              "v = fminf(fmaxf(v, 0.0f), 1.0f); v = v / {scaling_factor}f"),
    4: dict(main="conv", pre="mish(mish(v))"),
    5: dict(main="convT", pre="tanhf(v - P3[c])"),
    7: dict(main="conv", pre="v = fmaxf(v, 0.0f); v = v > 0.0f ? v : 0.01f * v; v = gelu(v); "
                             "v = 1.0f / (1.0f + expf(-v)); v = v + P3[c]"),
    9: dict(main="linear", pre="fmaxf((v - {subtract_value}f) * {multiply_value}f, 0.0f)"),
    12: dict(main="linear", pre="v = v * {multiplier}f; v = v > 0.0f ? v : v * {negative_slope}f"),
    14: dict(main="gemm", pre="v / 2.0f", red="rowsum", fin="v * {scaling_factor}f"),
    16: dict(main="convT", pre="v = mish(v); v = v + {add_value}f; v = fminf(fmaxf(v, -1.0f), 1.0f); v = v * {scale}f"),
    17: dict(main="conv", norm=("instance", None, None), post="v / {divide_by}f"),
    21: dict(main="conv", pre="1.0f / (1.0f + expf(-((v + P3[c]) * P4[c])))",
             norm=("group", "{num_groups}", (5, 6))),
    25: dict(main="conv", red="chanmin", fin="tanhf(tanhf(v))"),
    29: dict(main="linear", pre="mish(mish(v))"),
    30: dict(main="linear", norm=("group", "{num_groups}", (3, 4)), post="fminf(fmaxf(v, {hardtanh_min}f), {hardtanh_max}f)"),
    32: dict(main="conv", pre="v * {scale_factor}f", red="chanmin"),
    33: dict(main="linear", pre="v * P3[c]", norm=("batch", None, (4, 5))),
    40: dict(main="linear", pre="v * {scaling_factor}f + v"),
    41: dict(main="linear", norm=("batch", None, (3, 4)), post="fmaxf(gelu(v), 0.0f)"),
    47: dict(main="conv", pre="tanhf(mish(v))"),
    48: dict(main="conv", pre="1.0f / (1.0f + expf(-(tanhf(v * P3[c]) * P4[c])))"),
    52: dict(main="conv", pre="tanhf(v > 20.0f ? v : log1pf(expf(v))) * v", norm=("batch", None, (3, 4))),
    53: dict(main="linear", pre="gelu(fminf(fmaxf(v * {scaling_factor}f, {hardtanh_min}f), {hardtanh_max}f))"),
    54: dict(main="conv", pre="v = v * P3[c]; v = v > 0.0f ? v : 0.01f * v; v = gelu(v)"),
    56: dict(main="linear", pre="1.0f / (1.0f + expf(-v))", red="rowsum"),
    57: dict(main="conv", pre="v = fmaxf(v, 0.0f); v = v * fminf(fmaxf((v + 3.0f) / 6.0f, 0.0f), 1.0f)"),
    59: dict(main="linear", pre="v * (1.0f / (1.0f + expf(-v))) * {scaling_factor}f"),
    62: dict(main="linear", norm=("group", "{num_groups}", (3, 4)), post="v = v > 0.0f ? v : v * {negative_slope}f; v = v + v"),
    63: dict(main="linear", pre="fmaxf(v, 0.0f) / {divisor}f"),
    67: dict(main="conv", pre="gelu(v)", red="spatialavg"),
    68: dict(main="linear", pre="fminf(v, P3[0]) - P3[0]"),
    69: dict(main="conv", pre="v = v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f; v = fmaxf(v, 0.0f)"),
    70: dict(main="linear", pre="(1.0f / (1.0f + expf(-v))) * {scaling_factor}f + v"),
    71: dict(main="conv", pre="v = v / {divisor}f; v = v > 0.0f ? v : 0.01f * v"),
    73: dict(main="conv", norm=("batch", None, (3, 4)), post="v * {scaling_factor}f"),
    76: dict(main="gemm", pre="fmaxf(v + P2[c], 0.0f)"),
    81: dict(main="linear", pre="v = v * (1.0f / (1.0f + expf(-v))); v = v / 2.0f; v = fminf(fmaxf(v, -1.0f), 1.0f); "
                              "v = tanhf(v); v = fminf(fmaxf(v, -1.0f), 1.0f)"),
    86: dict(main="linear", pre="gelu(v / {divisor}f)"),
    87: dict(main="conv", pre="mish(v - {subtract_value_1}f - {subtract_value_2}f)"),
    88: dict(main="linear", norm=("group", "{num_groups}", (3, 4)),
             post="v = v * (1.0f / (1.0f + expf(-v))); v = v * P5[c]; v = v * (1.0f / (1.0f + expf(-v)))"),
    95: dict(main="linear", pre="v = v + P3[c]; v = v * (1.0f / (1.0f + expf(-v))); v = tanhf(v); v = gelu(v); "
                              "v = fminf(fmaxf(v, -1.0f), 1.0f)"),
    99: dict(main="linear", pre="gelu(v)", red="softmax"),
}

def fill(expr, p):
    vals = {}
    for a in p["attrs"]:
        v = a["value"]
        vals[a["name"]] = repr(float(v))
    return expr.format(**vals)

def as_stmt(e):
    """An expression becomes `v = e;`, statements (with `v = `) stay."""
    if e is None:
        return ""
    return e if "v = " in e else "v = %s" % e

L2_BODY = r"""
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
"""

L2_ELTWISE = r"""
/* In place: v -> the step's expression; c is the feature (column) of a linear
 * output or the channel of a convolution output. */
__global__ void step_{name}(float *__restrict__ y, long long total, long long C, long long S, prm P)
{{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long c = (t / S) % C;
    (void)c;
    float v = y[t];
    {stmt};
    y[t] = v;
}}
"""

L2_NORM = r"""
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
    {post};
    y[t] = v;
}
"""

L2_RED = {
    "rowsum": r"""
/* out [M, 1] = the sum of each row of y [M, N], then fin. */
__global__ void reduce_out(const float *__restrict__ y, float *__restrict__ out, long long M, long long N, long long S,
                           prm P)
{{
    __shared__ float sh[THREADS];
    (void)S;
    (void)P;
    const float *r = y + (long long)blockIdx.x * N;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < N; j += THREADS) s += r[j];
    float v = block_sum(s, sh);
    {fin};
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}}
#define RED_BLOCKS(M, C, S) (M)
#define RED_THREADS THREADS
""",
    "chanmin": r"""
/* out [N, 1, S] = the minimum over the channels of y [N, C, S], then fin. */
__global__ void reduce_out(const float *__restrict__ y, float *__restrict__ out, long long N, long long C, long long S,
                           prm P)
{{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    (void)P;
    if (t >= N * S) return;
    long long n = t / S, s = t % S;
    float v = INFINITY;
    for (long long c = 0; c < C; c++) v = fminf(v, y[(n * C + c) * S + s]);
    {fin};
    out[t] = v;
}}
#define RED_BLOCKS(N, C, S) (((N) * (S) + THREADS - 1) / THREADS)
#define RED_THREADS THREADS
""",
    "spatialavg": r"""
/* out [N, C] = the mean over the spatial positions of y [N, C, S], then fin. */
__global__ void reduce_out(const float *__restrict__ y, float *__restrict__ out, long long N, long long C, long long S,
                           prm P)
{{
    __shared__ float sh[THREADS];
    (void)N;
    (void)C;
    (void)P;
    const float *r = y + (long long)blockIdx.x * S;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < S; j += THREADS) s += r[j];
    float v = block_sum(s, sh) / (float)S;
    {fin};
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}}
#define RED_BLOCKS(N, C, S) ((N) * (C))
#define RED_THREADS THREADS
""",
    "softmax": r"""
/* out [M, N] = softmax over each row of y [M, N]. */
__global__ void reduce_out(const float *__restrict__ y, float *__restrict__ out, long long M, long long N, long long S,
                           prm P)
{{
    __shared__ float sh[THREADS];
    (void)M;
    (void)S;
    (void)P;
    const float *r = y + (long long)blockIdx.x * N;
    float *o = out + (long long)blockIdx.x * N;
    float m = -INFINITY;
    for (long long j = threadIdx.x; j < N; j += THREADS) m = fmaxf(m, r[j]);
    m = block_max(m, sh);
    float s = 0.0f;
    for (long long j = threadIdx.x; j < N; j += THREADS) s += expf(r[j] - m);
    s = block_sum(s, sh);
    for (long long j = threadIdx.x; j < N; j += THREADS) o[j] = expf(r[j] - m) / s;
}}
#define RED_BLOCKS(M, C, S) (M)
#define RED_THREADS THREADS
""",
}

def gen_level2(p):
    n = p["number"]
    spec = L2[n]
    main = spec["main"]
    conv = main.startswith("conv")
    red = spec.get("red")
    norm = spec.get("norm")
    pre = as_stmt(fill(spec["pre"], p)) if spec.get("pre") else ""
    post = as_stmt(fill(spec["post"], p)) if spec.get("post") else ""
    fin = as_stmt(fill(spec["fin"], p)) if spec.get("fin") else ""
    what = {"linear": "linear layer (16x16 tiled FP32)", "gemm": "matrix product (16x16 tiled FP32)",
            "conv": "direct convolution (16x16 tiled implicit GEMM)",
            "convT": "transposed convolution (16x16 tiled implicit GEMM)"}[main]
    parts = [HEAD.format(what=what + ", then the rest of the expression step by step,\n// each a plain kernel over the buffer.", **p), CHECK, L2_BODY]
    if conv:
        parts.append(CONV_KERNELS)
        nd = len(p["inputs"][0]["shape"]) - 2
        st = [1] * (3 - nd) + triple(p, "stride", 1, nd)
        pd = [0] * (3 - nd) + triple(p, "padding", 0, nd)
        dl = [1] * (3 - nd) + triple(p, "dilation", 1, nd)
        fmt = lambda v: "{%s}" % ", ".join(str(int(x)) for x in v)
        parts.append("static const int S_[3] = %s, P_[3] = %s, D_[3] = %s;\n" % (fmt(st), fmt(pd), fmt(dl)))
    if pre:
        parts.append(L2_ELTWISE.format(name="pre", stmt=pre))
    if norm:
        parts.append(L2_NORM.replace("{post}", post or "(void)0"))
    elif post:
        parts.append(L2_ELTWISE.format(name="post", stmt=post))
    if red:
        parts.append(L2_RED[red].format(fin=fin or "(void)0"))
    # forward
    f = []
    f.append("static float *scratch;\nstatic size_t scratch_bytes;\n")
    f.append("""static int need(size_t bytes)
{
    if (scratch_bytes >= bytes) return 0;
    cudaFree(scratch);
    scratch = NULL;
    scratch_bytes = 0;
    if (cudaMalloc((void **)&scratch, bytes) != cudaSuccess) return 1;
    scratch_bytes = bytes;
    return 0;
}

extern "C" int kbv_forward(const kbv_call *call)
{""")
    nin = len(p["inputs"])
    f.append("    if (call->n_inputs < %d || call->n_outputs < 1) return 1;" % nin)
    f.append("    prm P = {};")
    f.append("    for (int i = 0; i < call->n_inputs && i < 8; i++) P.p[i] = (const float *)call->inputs[i].data;")
    f.append("    const kbv_tensor *x = &call->inputs[0], *o = &call->outputs[0];")
    f.append("    cudaStream_t st = call->stream;")
    # the main op's output shape, C and S
    if conv:
        f.append("    /* the convolution's output: [N, Cout, spatial] */")
        if red:
            f.append("    kbv_tensor yt = *x;")
            f.append("    yt.ndim = x->ndim;")
            f.append("    yt.shape[0] = x->shape[0];")
            f.append("    yt.shape[1] = call->inputs[1].shape[%d];" % (1 if main == "convT" else 0))
            # spatial extents: same as the reduced output's (chanmin keeps them) or computed
            f.append("    for (int i = 2; i < x->ndim; i++) {")
            f.append("        long long k = call->inputs[1].shape[i], in = x->shape[i];")
            f.append("        int a = i - 2 + (3 - (x->ndim - 2));")
            if main == "convT":
                f.append("        yt.shape[i] = (in - 1) * S_[a] - 2 * P_[a] + D_[a] * (k - 1) + 1;")
            else:
                f.append("        yt.shape[i] = (in + 2 * P_[a] - D_[a] * (k - 1) - 1) / S_[a] + 1;")
            f.append("    }")
        else:
            f.append("    kbv_tensor yt = *o;")
        f.append("    long long C = yt.shape[1], N0 = yt.shape[0], S = kbv_numel(&yt) / (N0 * C);")
        f.append("    long long total = kbv_numel(&yt);")
        f.append("    float *y = (float *)o->data;")
        if red:
            f.append("    if (need((size_t)total * sizeof(float))) return 1;")
            f.append("    y = scratch;")
        f.append("    yt.data = y;")
        f.append("    geom g;")
        f.append("    if (geom_of(x, &call->inputs[1], &yt, x->ndim - 2, %d, &g)) return 1;" % (1 if main == "convT" else 0))
        f.append("    if (launch(&g, %d, (const float *)x->data, P1, P2, y, S_, P_, D_, st)) return 1;" % (1 if main == "convT" else 0))
    else:
        f.append("    const kbv_tensor *w = &call->inputs[1];")
        f.append("    if (x->ndim != 2 || w->ndim != 2 || w->shape[1] != x->shape[1]) return 1;")
        f.append("    long long M = x->shape[0], K = x->shape[1], C = w->shape[0], S = 1, N0 = M;")
        f.append("    long long total = M * C;")
        f.append("    float *y = (float *)o->data;")
        if red:
            f.append("    if (need((size_t)total * sizeof(float))) return 1;")
            f.append("    y = scratch;")
        else:
            f.append("    if (kbv_numel(o) != total) return 1;")
        f.append("    if ((C + TILE - 1) / TILE > 65535) return 1;")
        f.append("    dim3 block(TILE, TILE), grid((unsigned)((M + TILE - 1) / TILE), (unsigned)((C + TILE - 1) / TILE));")
        f.append("    linear<<<grid, block, 0, st>>>((const float *)x->data, P1, %s, y, M, C, K);" % ("P2" if main == "linear" else "NULL"))
    f.append("    unsigned eb = (unsigned)((total + THREADS - 1) / THREADS);")
    f.append("    (void)eb;")
    if pre:
        f.append("    step_pre<<<eb, THREADS, 0, st>>>(y, total, C, S, P);")
    if norm:
        kind, groups, aff = norm
        mode = {"group": 0, "instance": 0, "batch": 2 if conv else 1}[kind]
        eps = attr(p, "eps", 1e-5)
        if kind == "group":
            G = int(float(fill(groups, p)))
            f.append("    long long G = %d; /* num_groups */" % G)
            f.append("    if (C % G != 0) return 1;")
            f.append("    long long groups = N0 * G, per = (C / G) * S;")
        elif kind == "instance":
            f.append("    long long groups = N0 * C, per = S;")
        else:
            f.append("    long long groups = C, per = N0 * S;")
        f.append("    if (need((size_t)(%s + 2 * groups) * sizeof(float))) return 1;" % ("total" if red else "0"))
        f.append("    float *stats = scratch + %s;" % ("total" if red else "0"))
        f.append("    norm_stats<<<(unsigned)groups, THREADS, 0, st>>>(y, stats, stats + groups, %d, per, C, S, (float)%r);" % (mode, eps))
        wb = ("P%d, P%d" % aff) if aff else "NULL, NULL"
        f.append("    norm_apply<<<eb, THREADS, 0, st>>>(y, stats, stats + groups, %s, %d, total, per, C, S, P);" % (wb, mode))
    elif post:
        f.append("    step_post<<<eb, THREADS, 0, st>>>(y, total, C, S, P);")
    if red:
        f.append("    reduce_out<<<(unsigned)RED_BLOCKS(N0, C, S), RED_THREADS, 0, st>>>(y, (float *)o->data, N0, C, S, P);")
    f.append("    CHECK_LAUNCH();\n}\n")
    f.append("""extern "C" void kbv_teardown(void)
{
    cudaFree(scratch);
    scratch = NULL;
    scratch_bytes = 0;
}
""")
    parts.append("\n".join(f))
    return "".join(parts)

# --- level 2 with more stages: the main operation, then a list of steps ---------------
#
# Each step is one plain kernel (or two for a norm) with the shapes written in
# as constants, worked out here from the registry's input shapes: ("ew", stmt)
# in place (v the value, c its channel, t its flat index, P<k> the inputs, SV
# the saved copy), ("save",) a copy to SV, ("norm", kind, groups, (gamma,
# beta) or None, eps), ("pool", "max"|"avg", k, stride, pad), ("redc", op)
# over dim 1 (sum mean max min lse softmax), ("gap",) the mean over the
# positions, ("all", op) over everything but dim 0, ("rows", op) over the
# last axis (softmax center, or ln with gamma and beta), ("axis", op, dim),
# ("flat",) [N, C, S] as [N, 1, C S], ("outer", k) [N] + P<k> -> [C', N],
# ("addx0",) [N] + x -> [N, F], ("linear", w, b) a second linear layer with
# weight P<w> and bias P<b>; ("inpool", k) first of all average-pools the
# input x (window and stride k) before the convolution.

L2S = {
    3: ("convT", [("ew", "v + P3[0]"), ("rows", "ln", 4, 5), ("pool", "avg", 2, 2, 0), ("ew", "gelu(v)")]),
    6: ("conv", [("redc", "softmax"), ("pool", "max", 2, 2, 0), ("pool", "max", 2, 2, 0)]),
    8: ("conv", [("ew", "v / 2.0f"), ("pool", "max", 2, 2, 0), ("gap",), ("ew", "v + P3[c]"), ("redc", "sum")]),
    10: ("convT", [("pool", "max", 2, 2, 0), ("ew", "fminf(fmaxf(v, -1.0f), 1.0f)"), ("gap",), ("ew", "tanhf(v)")]),
    11: ("convT", [("norm", "batch", None, (3, 4)), ("ew", "tanhf(v)"), ("pool", "max", 2, 2, 0),
                   ("norm", "group", 8, (5, 6))]),
    13: ("convT", [("axis", "mean", 2), ("ew", "v + P3[c]"), ("redc", "softmax"), ("ew", "tanhf(v) * 2.0f")]),
    15: ("convT", [("norm", "batch", None, (3, 4)), ("rows", "center")]),
    18: ("linear", [("redc", "sum")]),
    19: ("convT", [("ew", "gelu(v)"), ("norm", "group", 8, (3, 4))]),
    20: ("convT", [("ew", "float o = v; v = v + P3[c]; v = v + o; v = v * o; v = v + o")]),
    22: ("linear", [("ew", "v = v * 2.0f; v = v + v; v = fminf(fmaxf(v, -10.0f), 10.0f)"), ("redc", "lse"),
                    ("ew", "v * mish(v)")]),
    23: ("conv", [("norm", "group", 8, (3, 4)), ("all", "mean")]),
    24: ("conv", [("axis", "min", 2), ("redc", "softmax")]),
    26: ("convT", [("ew", "v = v + P1[t]; v = v * (v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f)")]),
    27: ("conv", [("ew", "v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f"), ("norm", "group", 4, (3, 4)), ("gap",)]),
    28: ("linear", [("norm", "group", 1, None), ("ew", "v = v + P1[t]; v = v * P1[t]")]),
    31: ("conv", [("ew", "v = fminf(v, 0.5f); v = v + P3[c]; v = v * 2.0f")]),
    34: ("convT", [("rows", "ln", 3, 4), ("ew", "gelu(v) * 1.0f")]),
    35: ("conv", [("ew", "v = v - 0.5f; v = v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f"), ("pool", "max", 2, 2, 0),
                  ("ew", "mish(v)")]),
    36: ("convT", [("redc", "min"), ("axis", "sum", 2), ("ew", "gelu(v) + P3[0]")]),
    37: ("linear", [("ew", "v = v * (1.0f / (1.0f + expf(-v))); v = v + P3[c]"), ("norm", "group", 64, (4, 5))]),
    39: ("linear", [("ew", "v * P3[c]"), ("norm", "batch", None, (4, 5))]),
    42: ("convT", [("gap",), ("ew", "v + P3[c]"), ("redc", "lse"), ("ew", "v * 10.0f")]),
    43: ("conv", [("pool", "max", 2, 2, 0), ("redc", "lse"), ("ew", "fmaxf(v, 0.0f)")]),
    44: ("convT", [("ew", "v * 0.5f"), ("gap",)]),
    46: ("conv", [("ew", "tanhf(v - 0.5f) - 0.2f"), ("pool", "avg", 2, 2, 0)]),
    49: ("convT", [("redc", "softmax"), ("ew", "1.0f / (1.0f + expf(-v))")]),
    50: ("convT", [("ew", "v * P3[0]"), ("pool", "avg", 2, 2, 0), ("ew", "(v + P4[c]) * P5[0]")]),
    51: ("linear", [("ew", "v - P3[c]"), ("redc", "mean"), ("ew", "gelu(v)"), ("addx0",)]),
    55: ("linear", [("flat",), ("pool", "max", 2, 2, 0), ("all", "sum"), ("ew", "v * 0.5f")]),
    58: ("convT", [("redc", "lse"), ("ew", "v = v * (1.0f / (1.0f + expf(-(v + 3.0f)))) / 6.0f; v = v - P3[0]; "
                                         "v = fminf(fmaxf(v, -1.0f), 1.0f)")]),
    60: ("convT", [("ew", "v * (1.0f / (1.0f + expf(-v)))"), ("norm", "group", 4, (3, 4)),
                   ("ew", "v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f")]),
    61: ("convT", [("ew", "fmaxf(v, 0.0f)"), ("norm", "group", 8, (2, 3))]),
    64: ("linear", [("redc", "lse"), ("ew", "v = v > 0.0f ? v : 0.01f * v; v = v > 0.0f ? v : 0.01f * v; "
                                           "v = gelu(gelu(v))")]),
    65: ("conv", [("pool", "avg", 4, 4, 0), ("ew", "1.0f / (1.0f + expf(-v))"), ("all", "sum")]),
    72: ("convT", [("norm", "batch", None, (3, 4)), ("pool", "avg", 2, 2, 0), ("pool", "avg", 2, 2, 0)]),
    74: ("convT", [("ew", "v = v > 0.0f ? v : 0.2f * v; v = v * P3[c]; v = v > 0.0f ? v : 0.2f * v"),
                   ("pool", "max", 2, 2, 0)]),
    75: ("linear", [("norm", "group", 512, (3, 4)), ("redc", "min"), ("outer", 5)]),
    77: ("convT", [("ew", "v * 2.0f"), ("norm", "batch", None, (3, 4)), ("gap",)]),
    78: ("convT", [("pool", "max", 2, 2, 0), ("pool", "max", 3, 3, 0), ("redc", "sum")]),
    79: ("conv", [("ew", "v * P3[c]"), ("norm", "instance", None, None), ("ew", "fminf(fmaxf(v, -1.0f), 1.0f) * P3[c]"),
                  ("redc", "max")]),
    80: ("linear", [("redc", "max"), ("ew", "gelu(v - v)")]),
    82: ("conv", [("ew", "tanhf(v) * 2.0f + P3[c]"), ("pool", "max", 4, 4, 0)]),
    83: ("conv", [("norm", "group", 8, (3, 4)), ("ew", "fminf(fmaxf(fminf(v, 0.0f), 0.0f), 1.0f)")]),
    84: ("linear", [("norm", "batch", None, (3, 4)), ("ew", "P5[0] * v"), ("redc", "softmax")]),
    85: ("conv", [("norm", "group", 16, (3, 4)), ("ew", "v * P5[c]"), ("pool", "max", 4, 4, 0),
                  ("ew", "fminf(fmaxf(v, 0.0f), 1.0f)")]),
    89: ("convT", [("pool", "max", 2, 2, 0), ("redc", "softmax"), ("ew", "v = v - P3[c]; v = v * (1.0f / (1.0f + expf(-v)))"),
                   ("redc", "max")]),
    90: ("conv", [("ew", "v = v > 0.0f ? v : 0.2f * v; v = v + P3[c]; v = fminf(fmaxf(v, -1.0f), 1.0f); v = gelu(v)")]),
    91: ("convT", [("redc", "softmax"), ("ew", "1.0f / (1.0f + expf(-((v + P3[c]) * 2.0f)))")]),
    92: ("conv", [("save",), ("norm", "group", 16, (3, 4)),
                  ("ew", "v = tanhf(v); v = v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f; v = SV[t] + v"), ("redc", "lse")]),
    93: ("convT", [("ew", "v = v + 0.5f; v = fminf(v, 0.0f); v = gelu(v) * 2.0f")]),
    94: ("linear", [("ew", "v = v + P3[c]; v = fminf(fmaxf(v, -1.0f), 1.0f); v = mish(v)"), ("norm", "group", 256, (4, 5))]),
    96: ("convT", [("ew", "v * 0.5f"), ("pool", "max", 2, 2, 0), ("gap",), ("ew", "fminf(fmaxf(v, 0.0f), 1.0f)")]),
    97: ("linear", [("norm", "batch", None, (3, 4)), ("ew", "v = (v + P5[0]) / 1.0f; v = v * (1.0f / (1.0f + expf(-v)))")]),
    98: ("linear", [("flat",), ("pool", "avg", 16, 16, 0), ("ew", "gelu(v) * 2.0f"), ("all", "max")]),
    100: ("convT", [("ew", "fmaxf(v, -1.0f) / 2.0f")]),
    38: ("convT", [("inpool", 2), ("ew", "fminf(fmaxf(v, 0.0f), 1.0f)"), ("rows", "softmax"), ("ew", "v * P3[c]")]),
    45: ("linear", [("ew", "1.0f / (1.0f + expf(-v))"), ("linear", 3, 4), ("redc", "lse")]),
}

L2S_KERNELS = r"""
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
"""

L2S_EW = r"""
__global__ void step_{i}(float *__restrict__ y, long long total, long long C, long long S, prm P, const float *SV)
{{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long c = (t / S) % C;
    (void)c;
    (void)SV;
    float v = y[t];
    {stmt};
    y[t] = v;
}}
"""

def prodl(v):
    r = 1
    for x in v:
        r *= x
    return r

def gen_level2_steps(p):
    n = p["number"]
    main, steps = L2S[n]
    ins = p["inputs"]
    conv = main != "linear"
    wi = 2 if ins[1]["name"] in ("y", "add_input") else 1
    x = ins[0]["shape"]
    w = ins[wi]["shape"]
    has_bias = wi + 1 < len(ins) and ins[wi + 1]["name"].endswith(".bias") and \
        ins[wi + 1]["name"].split(".")[0] == ins[wi]["name"].split(".")[0]
    parts = [HEAD.format(what={"linear": "linear layer (16x16 tiled FP32)",
                               "conv": "direct convolution (16x16 tiled implicit GEMM)",
                               "convT": "transposed convolution (16x16 tiled implicit GEMM)"}[main] +
                         ", then each step of the expression as its own plain\n// kernel with the shapes written in.", **p),
             CHECK, L2_BODY]
    if conv:
        parts.append(CONV_KERNELS)
        nd = len(x) - 2
        st = [1] * (3 - nd) + triple(p, "stride", 1, nd)
        pd = [0] * (3 - nd) + triple(p, "padding", 0, nd)
        fmt = lambda v: "{%s}" % ", ".join(str(int(a)) for a in v)
        parts.append("static const int S_[3] = %s, P_[3] = %s, D_[3] = {1, 1, 1};\n" % (fmt(st), fmt(pd)))
        op = int(attr(p, "output_padding", 0) or 0)
        if main == "convT":
            sp = [(L - 1) * st[3 - nd + i] - 2 * pd[3 - nd + i] + (w[2 + i] - 1) + op + 1 for i, L in enumerate(x[2:])]
            shape = [x[0], w[1]] + sp
        else:
            sp = [(L + 2 * pd[3 - nd + i] - (w[2 + i] - 1) - 1) // st[3 - nd + i] + 1 for i, L in enumerate(x[2:])]
            shape = [x[0], w[0]] + sp
    else:
        shape = [x[0], w[0]]
    parts.append(L2S_KERNELS)
    body = []
    bufs = []          # (name, elements)
    def buf(elems):
        bufs.append(elems)
        return "B%d" % (len(bufs) - 1)
    xsrc = "(const float *)x->data"
    if steps and steps[0][0] == "inpool":
        k = steps[0][1]
        steps = steps[1:]
        nd = len(x) - 2
        px = x[:2] + [L // k for L in x[2:]]
        xb = buf(prodl(px))
        i3, o3 = [1] * (3 - nd) + x[2:], [1] * (3 - nd) + px[2:]
        geo3 = i3 + o3 + [1] * (3 - nd) + [k] * nd + [1] * (3 - nd) + [k] * nd + [0, 0, 0]
        body.append("    k_pool<<<(unsigned)((%dLL + THREADS - 1) / THREADS), THREADS, 0, st>>>(%s, %s, %dLL, %s, 0);" %
                    (prodl(px), xsrc, xb, x[0] * x[1], ", ".join(str(v) for v in geo3)))
        body.append("    kbv_tensor xp = *x;")
        for i, v in enumerate(px):
            body.append("    xp.shape[%d] = %d;" % (i, v))
        body.append("    x = &xp;")
        xsrc = xb
        x = px
        sp = [(L - 1) * st[3 - nd + i] - 2 * pd[3 - nd + i] + (w[2 + i] - 1) + op + 1 for i, L in enumerate(x[2:])]
        shape = [x[0], w[1]] + sp
    cur = buf(prodl(shape))
    if conv:
        body.append("    kbv_tensor yt = call->inputs[0];")
        body.append("    yt.ndim = %d;" % len(shape))
        for i, v in enumerate(shape):
            body.append("    yt.shape[%d] = %d;" % (i, v))
        body.append("    geom g;")
        body.append("    if (geom_of(x, &call->inputs[%d], &yt, %d, %d, &g)) return 1;" % (wi, len(shape) - 2, int(main == "convT")))
        body.append("    if (launch(&g, %d, %s, P%d, %s, %s, S_, P_, D_, st)) return 1;" %
                    (int(main == "convT"), xsrc, wi, "P%d" % (wi + 1) if has_bias else "NULL", cur))
    else:
        body.append("    dim3 block(TILE, TILE), grid(%d, %d);" % ((shape[0] + 15) // 16, (shape[1] + 15) // 16))
        body.append("    linear<<<grid, block, 0, st>>>((const float *)x->data, P%d, %s, %s, %d, %d, %d);" %
                    (wi, "P%d" % (wi + 1) if has_bias else "NULL", cur, shape[0], shape[1], x[1]))
    kernels = []
    sv = "NULL"
    nb = lambda e: "(unsigned)((%dLL + THREADS - 1) / THREADS)" % e
    for i, s in enumerate(steps):
        kind = s[0]
        N, C, S = shape[0], shape[1] if len(shape) > 1 else 1, prodl(shape[2:])
        tot = prodl(shape)
        if kind == "ew":
            kernels.append(L2S_EW.format(i=i, stmt=as_stmt(s[1])))
            body.append("    step_%d<<<%s, THREADS, 0, st>>>(%s, %dLL, %dLL, %dLL, P, %s);" % (i, nb(tot), cur, tot, C, S, sv))
        elif kind == "save":
            sv = buf(tot)
            body.append("    k_copy<<<%s, THREADS, 0, st>>>(%s, %s, %dLL);" % (nb(tot), cur, sv, tot))
        elif kind == "norm":
            _, nk, G, aff = s
            if nk == "group": mode, groups, per = 0, N * G, (C // G) * S
            elif nk == "instance": mode, groups, per = 0, N * C, S
            else: mode, groups, per = (2 if len(shape) > 2 else 1), C, N * S
            stats = buf(2 * groups)
            wb = ("P%d, P%d" % aff) if aff else "NULL, NULL"
            body.append("    norm_stats<<<%d, THREADS, 0, st>>>(%s, %s, %s + %d, %d, %dLL, %dLL, %dLL, 1e-5f);" %
                        (groups, cur, stats, stats, groups, mode, per, C, S))
            body.append("    norm_apply<<<%s, THREADS, 0, st>>>(%s, %s, %s + %d, %s, %d, %dLL, %dLL, %dLL, %dLL, P);" %
                        (nb(tot), cur, stats, stats, groups, wb, mode, tot, per, C, S))
        elif kind == "pool":
            _, pk, k, stv, pad = s
            nd = len(shape) - 2
            ins3 = [1] * (3 - nd) + shape[2:]
            new = shape[:2] + [(L + 2 * pad - k) // stv + 1 for L in shape[2:]]
            outs3 = [1] * (3 - nd) + new[2:]
            kk = [1] * (3 - nd) + [k] * nd
            ss = [1] * (3 - nd) + [stv] * nd
            pp = [0] * (3 - nd) + [pad] * nd
            nxt = buf(prodl(new))
            body.append("    k_pool<<<%s, THREADS, 0, st>>>(%s, %s, %dLL, %s, %d);" %
                        (nb(prodl(new)), cur, nxt, N * C, ", ".join(str(v) for v in ins3 + outs3 + kk + ss + pp),
                         int(pk == "max")))
            shape, cur = new, nxt
        elif kind == "redc":
            op = ["sum", "mean", "max", "min", "lse", "softmax"].index(s[1])
            new = list(shape) if op == 5 else [N, 1] + shape[2:]
            nxt = buf(prodl(new))
            body.append("    k_redc<<<%s, THREADS, 0, st>>>(%s, %s, %dLL, %dLL, %dLL, %d);" % (nb(N * S), cur, nxt, N, C, S, op))
            shape, cur = new, nxt
        elif kind in ("gap", "all"):
            op = 1 if kind == "gap" else ["sum", "mean", "max"].index(s[1])
            rows, L = (N * C, S) if kind == "gap" else (N, C * S)
            new = [N, C] if kind == "gap" else [N]
            nxt = buf(rows)
            body.append("    k_rows<<<%d, THREADS, 0, st>>>(%s, %s, %dLL, %d, NULL, NULL, 0.0f);" % (rows, cur, nxt, L, op))
            shape, cur = new, nxt
        elif kind == "rows":
            L = shape[-1] if s[1] == "ln" else S
            op = {"softmax": 3, "center": 4, "ln": 5}[s[1]]
            g = ("P%d, P%d" % (s[2], s[3])) if s[1] == "ln" else "NULL, NULL"
            nxt = buf(tot)
            body.append("    k_rows<<<%d, THREADS, 0, st>>>(%s, %s, %dLL, %d, %s, 1e-5f);" % (tot // L, cur, nxt, L, op, g))
            cur = nxt
        elif kind == "axis":
            _, ak, dim = s
            op = ["sum", "mean", "min"].index(ak)
            outer, inner = prodl(shape[:dim]), prodl(shape[dim + 1:])
            new = shape[:dim] + shape[dim + 1:]
            nxt = buf(outer * inner)
            body.append("    k_axis<<<%s, THREADS, 0, st>>>(%s, %s, %dLL, %dLL, %dLL, %d);" %
                        (nb(outer * inner), cur, nxt, outer, shape[dim], inner, op))
            shape, cur = new, nxt
        elif kind == "flat":
            shape = [N, 1, C * S]
        elif kind == "outer":
            cp = prodl(ins[s[1]]["shape"])
            new = [1, cp, N]
            nxt = buf(prodl(new))
            body.append("    k_outer<<<%s, THREADS, 0, st>>>(%s, P%d, %s, %dLL, %dLL, 0);" % (nb(prodl(new)), cur, s[1], nxt, N, cp))
            shape, cur = new, nxt
        elif kind == "linear":
            _, wk, bk = s
            O = ins[wk]["shape"][0]
            new = [N, O]
            nxt = buf(N * O)
            body.append("    linear<<<dim3(%d, %d), dim3(TILE, TILE), 0, st>>>(%s, P%d, P%d, %s, %d, %d, %d);" %
                        ((N + 15) // 16, (O + 15) // 16, cur, wk, bk, nxt, N, O, C))
            shape, cur = new, nxt
        elif kind == "addx0":
            F = x[1]
            new = [N, F]
            nxt = buf(N * F)
            body.append("    k_outer<<<%s, THREADS, 0, st>>>(%s, P0, %s, %dLL, %dLL, 1);" % (nb(N * F), cur, nxt, N, F))
            shape, cur = new, nxt
        else:
            raise SystemExit("unknown step " + kind)
    out_n = prodl(p["outputs"][0]["shape"])
    if prodl(shape) != out_n:
        raise SystemExit("%s: steps end in %d values, the output has %d" % (p["id"], prodl(shape), out_n))
    body.append("    k_copy<<<%s, THREADS, 0, st>>>(%s, (float *)o->data, %dLL);" % (nb(out_n), cur, out_n))
    parts.append(L2_NORM.replace("{post}", "(void)0"))
    parts.extend(kernels)
    f = ["static float *scratch;\n",
         """static int need(size_t bytes)
{
    if (scratch) return 0;
    return cudaMalloc((void **)&scratch, bytes) != cudaSuccess;
}

extern "C" int kbv_forward(const kbv_call *call)
{"""]
    f.append("    if (call->n_inputs < %d || call->n_outputs < 1) return 1;" % len(ins))
    for i, t in enumerate(ins):
        f.append("    if (kbv_numel(&call->inputs[%d]) != %dLL) return 1;" % (i, prodl(t["shape"]) if t["shape"] else 1))
    f.append("    if (kbv_numel(&call->outputs[0]) != %dLL) return 1;" % out_n)
    f.append("    prm P = {};")
    f.append("    for (int i = 0; i < call->n_inputs && i < 8; i++) P.p[i] = (const float *)call->inputs[i].data;")
    f.append("    const kbv_tensor *x = &call->inputs[0], *o = &call->outputs[0];")
    f.append("    (void)x;")
    f.append("    (void)o;")
    f.append("    cudaStream_t st = call->stream;")
    off = 0
    offs = []
    for e in bufs:
        offs.append(off)
        off += (e + 63) // 64 * 64
    f.append("    if (need((size_t)%dLL * sizeof(float))) return 1;" % off)
    for i, o in enumerate(offs):
        f.append("    float *B%d = scratch + %dLL;" % (i, o))
    f.extend(body)
    f.append("    CHECK_LAUNCH();\n}\n")
    f.append("""extern "C" void kbv_teardown(void)
{
    cudaFree(scratch);
    scratch = NULL;
}
""")
    parts.append("\n".join(f))
    return "".join(parts)

# --- dispatch --------------------------------------------------------------------------

def gen_level3(p):
    return naive_l3.gen_level3(p, HEAD, CHECK)

def family(p):
    n = p["number"]
    if p["level"] == 3:
        return gen_level3
    if p["level"] == 2:
        return gen_level2 if n in L2 else gen_level2_steps if n in L2S else None
    if p["level"] != 1:
        return None
    if n in ELEMENTWISE: return gen_elementwise
    if n == 12: return gen_diag
    if n in MATMUL: return gen_matmul
    if n in (23, 24): return gen_softmax
    if 33 <= n <= 40: return gen_norm
    if 41 <= n <= 46: return gen_pool
    if n in REDUCE: return gen_reduce
    if n == 50 or 54 <= n <= 87: return gen_conv
    if 89 <= n <= 93: return gen_scan
    if 94 <= n <= 100: return gen_loss
    return None

# --- the BF16 setting ----------------------------------------------------------

BF16_TYPE = '''#include <cuda_bf16.h>
// bf16_t: a bfloat16 in memory, a float in arithmetic (reads widen exactly,
// writes round to nearest even), so that the kernels below load and store
// bfloat16 and compute in float.
struct bf16_t {
    __nv_bfloat16 v;
    __device__ __forceinline__ operator float() const { return __bfloat162float(v); }
    __device__ __forceinline__ bf16_t &operator=(float f) { v = __float2bfloat16_rn(f); return *this; }
    __device__ __forceinline__ bf16_t &operator+=(float f) { return *this = (float)*this + f; }
    __device__ __forceinline__ bf16_t &operator-=(float f) { return *this = (float)*this - f; }
    __device__ __forceinline__ bf16_t &operator*=(float f) { return *this = (float)*this * f; }
    __device__ __forceinline__ bf16_t &operator/=(float f) { return *this = (float)*this / f; }
};
'''

# Pointers that stay float in the BF16 setting: shared memory, statistics
# and partial sums (accumulators, not tensors).
BF16_KEEP_FLOAT = ("sh", "part", "mean", "rstd", "stats", "norm", "loss", "scratch")

# A level-2 chain keeps its intermediate tensor y in float, in a buffer of
# its own unless it already lives in the scratch (a chain that ends in a
# reduction), and rounds it into the output once at the end.
L2_Y_BUF = '''static float *ybuf;
static size_t ybuf_bytes;

static int ybuf_need(size_t bytes)
{
    if (ybuf_bytes >= bytes) return 0;
    cudaFree(ybuf);
    ybuf = NULL;
    ybuf_bytes = 0;
    if (cudaMalloc((void **)&ybuf, bytes) != cudaSuccess) return 1;
    ybuf_bytes = bytes;
    return 0;
}

__global__ void narrow_out(const float *__restrict__ y, bf16_t *__restrict__ out, long long n)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) out[t] = y[t];
}

extern "C" int kbv_forward('''

# A level-2 chain of steps (gen_level2_steps) passes its float intermediates
# and the call's tensors through the same kernel parameters, so it keeps
# its float kernels whole: the bfloat16 tensors are widened into float
# copies, the float chain runs on them, and the outputs are rounded once.
L2_WRAP = '''
/* The BF16 setting: float copies of the call's bfloat16 tensors (inputs,
 * then outputs, each 256-byte aligned) in one buffer. */
static float *wide_buf;
static size_t wide_bytes;

__global__ void widen(const bf16_t *__restrict__ a, float *__restrict__ b, long long n)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) b[t] = a[t];
}

__global__ void narrow(const float *__restrict__ a, bf16_t *__restrict__ b, long long n)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) b[t] = a[t];
}

extern "C" int kbv_forward(const kbv_call *call)
{
    kbv_tensor in[32], out[8];
    if (call->n_inputs > 32 || call->n_outputs > 8) return 1;
    size_t bytes = 0;
    for (int i = 0; i < call->n_inputs + call->n_outputs; i++) {
        const kbv_tensor *t = i < call->n_inputs ? &call->inputs[i] : &call->outputs[i - call->n_inputs];
        if (t->dtype == KBV_BF16) bytes += ((size_t)kbv_numel(t) * sizeof(float) + 255) & ~(size_t)255;
    }
    if (bytes > wide_bytes) {
        cudaFree(wide_buf);
        wide_buf = NULL;
        wide_bytes = 0;
        if (cudaMalloc((void **)&wide_buf, bytes) != cudaSuccess) return 1;
        wide_bytes = bytes;
    }
    char *at = (char *)wide_buf;
    for (int i = 0; i < call->n_inputs + call->n_outputs; i++) {
        int is_in = i < call->n_inputs;
        const kbv_tensor *t = is_in ? &call->inputs[i] : &call->outputs[i - call->n_inputs];
        kbv_tensor *w = is_in ? &in[i] : &out[i - call->n_inputs];
        *w = *t;
        if (t->dtype != KBV_BF16) continue;
        long long n = kbv_numel(t);
        w->data = at;
        w->dtype = KBV_F32;
        at += ((size_t)n * sizeof(float) + 255) & ~(size_t)255;
        if (is_in && n > 0)
            widen<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>((const bf16_t *)t->data, (float *)w->data, n);
    }
    kbv_call c = *call;
    c.inputs = in;
    c.outputs = out;
    int rc = forward_f32(&c);
    if (rc) return rc;
    for (int i = 0; i < call->n_outputs; i++) {
        long long n = kbv_numel(&call->outputs[i]);
        if (call->outputs[i].dtype == KBV_BF16 && n > 0)
            narrow<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>((const float *)out[i].data,
                                                                       (bf16_t *)call->outputs[i].data, n);
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
'''

def to_bf16(text):
    """The FP32 candidate's text with bfloat16 tensors (see the docstring)."""
    text = text.replace("// naive: ", "// naive-bf16: ", 1)
    text = text.replace('#include "kbv.h"\n', '#include "kbv.h"\n' + BF16_TYPE, 1)
    if "    float *B0 = scratch + " in text or naive_l3.WRAP_MARK in text:
        text = text.replace('extern "C" int kbv_forward(const kbv_call *call)', "static int forward_f32(const kbv_call *call)", 1)
        text = text.replace('extern "C" void kbv_teardown(void)\n{\n',
                            L2_WRAP + '\nextern "C" void kbv_teardown(void)\n{\n    cudaFree(wide_buf);\n'
                            '    wide_buf = NULL;\n    wide_bytes = 0;\n', 1)
        return text
    keep = BF16_KEEP_FLOAT
    chain = "static int need(size_t bytes)" in text and "    float *y = (float *)o->data;\n" in text
    if chain:
        keep = keep + ("y", "r", "ybuf")
        if "    y = scratch;\n" in text:
            text = text.replace("    float *y = (float *)o->data;\n", "    float *y = NULL;\n", 1)
        else:
            text = text.replace("    float *y = (float *)o->data;\n",
                                "    if (ybuf_need((size_t)total * sizeof(float))) return 1;\n"
                                "    float *y = ybuf; /* the chain in float, rounded into the output at the end */\n", 1)
            text = text.replace('extern "C" int kbv_forward(', L2_Y_BUF, 1)
            text = text.replace("    CHECK_LAUNCH();\n}\n\nextern \"C\" void kbv_teardown(void)\n{\n",
                                "    narrow_out<<<eb, THREADS, 0, st>>>(y, (bf16_t *)o->data, total);\n"
                                "    CHECK_LAUNCH();\n}\n\nextern \"C\" void kbv_teardown(void)\n{\n"
                                "    cudaFree(ybuf);\n    ybuf = NULL;\n    ybuf_bytes = 0;\n", 1)
    text = re.sub(r"\bfloat\s*\*", "bf16_t *", text)
    text = re.sub(r"bf16_t \*(\s*(?:const\s+)?(?:__restrict__\s+)?)(%s)\b" % "|".join(keep), r"float *\1\2", text)
    return text

def main():
    args = [a for a in sys.argv[1:] if a not in ("--force", "--bf16")]
    force = "--force" in sys.argv[1:]
    bf16 = "--bf16" in sys.argv[1:]
    build = args[0] if args else "build"
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    listing = subprocess.run([os.path.join(build, "kbv-list"), "--json"], check=True, capture_output=True, text=True)
    problems = json.loads(listing.stdout)["problems"]
    # The expression and the number come from the registry through kbv
    # prompt with a one-line template (kbv list does not print them).
    tmpl = os.path.join(build, ".gen-naive-expr.txt")
    with open(tmpl, "w") as f:
        f.write("{{number}}\n{{expr}}\n@@layers@@\n{{layers}}")
    for p in problems:
        out = subprocess.run([os.path.join(build, "kbv-prompt"), "--template", tmpl, p["id"]], check=True,
                             capture_output=True, text=True).stdout.split("\n", 1)
        p["number"] = int(out[0])
        p["expr"], _, p["layers"] = out[1].partition("\n@@layers@@\n")
        p["expr"] = p["expr"].strip()
    os.unlink(tmpl)
    outdir = os.path.join(root, "data", "candidates", "naive-bf16" if bf16 else "naive")
    os.makedirs(outdir, exist_ok=True)
    wrote, kept, missing = [], [], []
    for p in problems:
        fam = family(p)
        text = fam(p) if fam else None
        if text and bf16:
            text = to_bf16(text)
        if not text:
            missing.append(p["id"])
            continue
        path = os.path.join(outdir, p["id"] + ".cu")
        if os.path.exists(path):
            # Hand-written files (without the generator's mark) are never
            # replaced; generated ones only with --force.
            with open(path) as f:
                generated = "Written by scripts/gen-naive-candidates.py" in f.read()
            if not force or not generated:
                kept.append(p["id"])
                continue
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
        wrote.append(p["id"])
    print("wrote %d, kept %d, no family for %d" % (len(wrote), len(kept), len(missing)))
    for m in missing:
        print("  no family: " + m)

if __name__ == "__main__":
    main()

// tuned: RMSNorm over dim 1 of x [B, C, H, W]:
// y = x / sqrt(mean(x^2 over C) + eps).
//
// One thread per (b, h, w) position, as in the baseline, but the C values
// of a position are kept in registers between the sum of squares and the
// division, so x is read from memory exactly once (the baseline reads it
// again and relies on the caches, which cannot hold 64 values for every
// resident thread).  Loads and stores are coalesced across the warp
// (neighbouring threads own neighbouring positions) with streaming hints.
// C = 64 (KernelBench) is compiled in; other channel counts take a generic
// two-pass kernel.
#include "kbv.h"
#include <math.h>

template <int C>
__global__ void __launch_bounds__(256) rms_regs(const float *__restrict__ x, float *__restrict__ y, long long S,
                                                long long total, float eps)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long b = t / S, s = t % S;
    const float *p = x + b * C * S + s;
    float *q = y + b * C * S + s;
    float v[C];
    float acc = 0.0f;
#pragma unroll
    for (int c = 0; c < C; c++) v[c] = __ldcs(p + (long long)c * S);
#pragma unroll
    for (int c = 0; c < C; c++) acc = fmaf(v[c], v[c], acc);
    float r = sqrtf(acc / (float)C + eps);
#pragma unroll
    for (int c = 0; c < C; c++) __stcs(q + (long long)c * S, v[c] / r);
}

__global__ void rms_generic(const float *__restrict__ x, float *__restrict__ y, long long C, long long S,
                            long long total, float eps)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long b = t / S, s = t % S;
    const float *p = x + b * C * S + s;
    float *q = y + b * C * S + s;
    float acc = 0.0f;
    for (long long c = 0; c < C; c++) acc += p[c * S] * p[c * S];
    float r = sqrtf(acc / (float)C + eps);
    for (long long c = 0; c < C; c++) q[c * S] = p[c * S] / r;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim < 2 || x->shape[0] == 0 || x->shape[1] == 0) return 1;
    long long C = x->shape[1], S = kbv_numel(x) / (x->shape[0] * C), total = x->shape[0] * S;
    float eps = call->n_attrs > 1 ? (float)call->attrs[1] : 1e-5f;
    if (total == 0) return 0;
    unsigned blocks = (unsigned)((total + 255) / 256);
    if (C == 64)
        rms_regs<64><<<blocks, 256, 0, call->stream>>>((const float *)x->data, (float *)call->outputs[0].data, S,
                                                       total, eps);
    else
        rms_generic<<<blocks, 256, 0, call->stream>>>((const float *)x->data, (float *)call->outputs[0].data, C, S,
                                                      total, eps);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

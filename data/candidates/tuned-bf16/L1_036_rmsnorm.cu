// tuned-bf16 (hand-written): RMSNorm over dim 1 of x [B, C, H, W] in bfloat16:
// y = x / sqrt(mean(x^2 over C) + eps).
//
// The port of tuned/L1_036_rmsnorm.cu (1.64x against the fp32 baseline) to
// the BF16 setting.  One thread per two neighbouring positions (b, s), (b,
// s + 1): the C values of both are read once, as C 4-byte words (two
// bfloat16 each), kept in registers between the sum of squares and the
// division, and written once, so x is read from memory exactly once.  The
// bf16 baseline (kbv's rms_dim1_bf16_kernel) has one thread per position,
// 2-byte loads, and reads x a second time for the division, relying on the
// caches, which do not hold the 3.7 GiB tensor: 3 passes over the data
// against 2 here, and a warp's loads twice as wide.  Expected 1.2-1.5x
// against the bf16 baseline.  Float arithmetic, one rounding per output.
// C = 64 (KernelBench) with an even S is compiled in; other shapes take a
// generic two-pass kernel.
#include "kbv.h"
#include <math.h>
#include <stdint.h>
#include <cuda_bf16.h>

#define THREADS 256
/* rms_pairs holds 64 words a thread: 128 threads and three blocks an SM
 * fit its registers without spilling. */
#define PAIR_THREADS 128

__device__ __forceinline__ float lo16(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi16(unsigned w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ unsigned pack(float lo, float hi)
{
    return (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(lo)) |
           ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(hi)) << 16);
}

/* Thread t owns positions 2t and 2t + 1 of the B S positions (S even, so
 * both are in one sample and one 4-byte word of each channel's plane). */
template <int C>
__global__ void __launch_bounds__(PAIR_THREADS, 3) rms_pairs(const unsigned *__restrict__ x, unsigned *__restrict__ y,
                                                        long long S2, long long pairs, float eps)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= pairs) return;
    long long b = t / S2, s = t % S2;
    const unsigned *p = x + b * C * S2 + s;
    unsigned *q = y + b * C * S2 + s;
    unsigned v[C];
    float a0 = 0.0f, a1 = 0.0f;
#pragma unroll
    for (int c = 0; c < C; c++) v[c] = __ldcs(p + (long long)c * S2);
#pragma unroll
    for (int c = 0; c < C; c++) {
        float l = lo16(v[c]), h = hi16(v[c]);
        a0 = fmaf(l, l, a0);
        a1 = fmaf(h, h, a1);
    }
    float r0 = sqrtf(a0 / (float)C + eps), r1 = sqrtf(a1 / (float)C + eps);
#pragma unroll
    for (int c = 0; c < C; c++) __stcs(q + (long long)c * S2, pack(lo16(v[c]) / r0, hi16(v[c]) / r1));
}

__global__ void rms_generic(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, long long C,
                            long long S, long long total, float eps)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long b = t / S, s = t % S;
    const __nv_bfloat16 *p = x + b * C * S + s;
    __nv_bfloat16 *q = y + b * C * S + s;
    float acc = 0.0f;
    for (long long c = 0; c < C; c++) {
        float v = __bfloat162float(p[c * S]);
        acc += v * v;
    }
    float r = sqrtf(acc / (float)C + eps);
    for (long long c = 0; c < C; c++) q[c * S] = __float2bfloat16_rn(__bfloat162float(p[c * S]) / r);
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1 || call->inputs[0].dtype != KBV_BF16) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim < 2 || x->shape[0] == 0 || x->shape[1] == 0) return 1;
    long long C = x->shape[1], S = kbv_numel(x) / (x->shape[0] * C), total = x->shape[0] * S;
    float eps = call->n_attrs > 1 ? (float)call->attrs[1] : 1e-5f;
    if (total == 0) return 0;
    const void *xd = x->data;
    void *yd = call->outputs[0].data;
    if (C == 64 && S % 2 == 0 && (uintptr_t)xd % 4 == 0 && (uintptr_t)yd % 4 == 0) {
        long long pairs = total / 2;
        rms_pairs<64><<<(unsigned)((pairs + PAIR_THREADS - 1) / PAIR_THREADS), PAIR_THREADS, 0, call->stream>>>(
            (const unsigned *)xd, (unsigned *)yd, S / 2, pairs, eps);
    } else {
        rms_generic<<<(unsigned)((total + THREADS - 1) / THREADS), THREADS, 0, call->stream>>>(
            (const __nv_bfloat16 *)xd, (__nv_bfloat16 *)yd, C, S, total, eps);
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

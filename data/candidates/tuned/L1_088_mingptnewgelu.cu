// tuned: elementwise with 16-byte loads and stores, four float4 in flight per
// thread, streaming cache hints; a scalar tail for sizes that are not multiples of 4.
// Fast-math intrinsics only where their error (a few ulp) is far below the tolerance.
// L1_088_mingptnewgelu: out = 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
// Written by scripts/gen-tuned-candidates.py from the registry.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define THREADS 256
#define UNROLL 4

__device__ __forceinline__ float f(float x, float a0, float a1)
{
    (void)a0;
    (void)a1;
    return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * fmaf(0.044715f * x, x * x, x)));
}

__global__ void __launch_bounds__(THREADS) map_vec4(const float4 *__restrict__ x, float4 *__restrict__ y, long long n4,
                                                    float a0, float a1)
{
    long long base = (long long)blockIdx.x * THREADS * UNROLL + threadIdx.x;
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        long long i = base + (long long)u * THREADS;
        if (i < n4) v[u] = __ldcs(x + i);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        long long i = base + (long long)u * THREADS;
        if (i < n4) __stcs(y + i, make_float4(f(v[u].x, a0, a1), f(v[u].y, a0, a1), f(v[u].z, a0, a1), f(v[u].w, a0, a1)));
    }
}

__global__ void map_tail(const float *__restrict__ x, float *__restrict__ y, long long start, long long n, float a0, float a1)
{
    long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = f(x[i], a0, a1);
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    float a0 = call->n_attrs > 0 ? (float)call->attrs[0] : 0.0f;
    float a1 = call->n_attrs > 1 ? (float)call->attrs[1] : 0.0f;
    const float *x = (const float *)call->inputs[0].data;
    float *y = (float *)call->outputs[0].data;
    long long n = kbv_numel(&call->inputs[0]), done = 0;
    if (n == 0) return 0;
    if ((uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0) {
        long long n4 = n / 4;
        if (n4 > 0)
            map_vec4<<<(unsigned)((n4 + THREADS * UNROLL - 1) / (THREADS * UNROLL)), THREADS, 0, call->stream>>>(
                (const float4 *)x, (float4 *)y, n4, a0, a1);
        done = n4 * 4;
    }
    if (done < n) map_tail<<<(unsigned)((n - done + 255) / 256), 256, 0, call->stream>>>(x, y, done, n, a0, a1);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// CONTROL (expected `correct`): LayerNorm with the one-pass variance
// E[x^2] - E[x]^2 accumulated in float.
//
// The one-pass formula loses accuracy when the mean is large against the
// standard deviation (catastrophic cancellation), which makes it a classic
// latent bug.  It is included to show what hidden distributions can and
// cannot reach: scaling (x3, x0.01) and negation leave the ratio mean/std
// unchanged, so for this problem's U[0,1) data (ratio 1.7) the formula
// stays accurate on D1-D4 and kbv should call it `correct`.  Only a
// distribution with a large offset (e.g. U[0,1) + 1000) would expose it.
#include "kbv.h"
#include <math.h>

#define THREADS 1024

/* One block per normalised row of F = features * dim1 * dim2 elements. */
__global__ void layernorm_onepass(const float *__restrict__ x, const float *__restrict__ w,
                                  const float *__restrict__ b, float *__restrict__ y, long long F, float eps)
{
    __shared__ float s1[THREADS / 32], s2[THREADS / 32];
    const float *xr = x + (long long)blockIdx.x * F;
    float *yr = y + (long long)blockIdx.x * F;
    float a = 0.0f, q = 0.0f;
    for (long long i = threadIdx.x; i < F; i += THREADS) {
        float v = xr[i];
        a += v;
        q += v * v;
    }
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        q += __shfl_xor_sync(0xffffffffu, q, o);
    }
    if ((threadIdx.x & 31) == 0) {
        s1[threadIdx.x >> 5] = a;
        s2[threadIdx.x >> 5] = q;
    }
    __syncthreads();
    a = 0.0f;
    q = 0.0f;
    for (int k = 0; k < THREADS / 32; k++) {
        a += s1[k];
        q += s2[k];
    }
    float mean = a / (float)F;
    float var = q / (float)F - mean * mean; /* the one-pass formula */
    float inv = rsqrtf(fmaxf(var, 0.0f) + eps);
    for (long long i = threadIdx.x; i < F; i += THREADS) yr[i] = (xr[i] - mean) * inv * w[i] + b[i];
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 3 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    long long F = kbv_numel(&call->inputs[1]);
    if (F == 0 || kbv_numel(x) % F != 0) return 1;
    int rows = (int)(kbv_numel(x) / F);
    float eps = call->n_attrs >= 4 ? (float)call->attrs[3] : 1e-5f;
    layernorm_onepass<<<rows, THREADS, 0, call->stream>>>((const float *)x->data,
                                                         (const float *)call->inputs[1].data,
                                                         (const float *)call->inputs[2].data,
                                                         (float *)call->outputs[0].data, F, eps);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// naive: mean absolute value of each row, one block per row.
// L1_038_l1norm: out = x / torch.mean(torch.abs(x), dim=1, keepdim=True)
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

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

__global__ void rows(const float *__restrict__ x, float *__restrict__ y, long long D)
{
    __shared__ float sh[THREADS];
    const float *xr = x + (long long)blockIdx.x * D;
    float *yr = y + (long long)blockIdx.x * D;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < D; j += THREADS) s += fabsf(xr[j]);
    s = block_sum(s, sh);
    float d = s / (float)D;
    for (long long j = threadIdx.x; j < D; j += THREADS) yr[j] = xr[j] / d;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2) return 1;
    if (x->shape[0] == 0) return 0;
    rows<<<(unsigned)x->shape[0], THREADS, 0, call->stream>>>((const float *)x->data, (float *)call->outputs[0].data,
                                                            x->shape[1]);
    CHECK_LAUNCH();
}

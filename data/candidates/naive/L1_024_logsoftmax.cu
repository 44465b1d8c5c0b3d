// naive: one block per row, three passes (max, sum of exponentials, write).
// L1_024_logsoftmax: out = torch.log_softmax(x, dim=1)
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

#define THREADS 256

__device__ float block_reduce(float v, float *sh, int is_max)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            sh[threadIdx.x] = is_max ? fmaxf(sh[threadIdx.x], sh[threadIdx.x + s]) : sh[threadIdx.x] + sh[threadIdx.x + s];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

__global__ void rows(const float *__restrict__ x, float *__restrict__ y, long long cols)
{
    __shared__ float sh[THREADS];
    const float *xr = x + (long long)blockIdx.x * cols;
    float *yr = y + (long long)blockIdx.x * cols;
    float m = -INFINITY;
    for (long long c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
    m = block_reduce(m, sh, 1);
    float s = 0.0f;
    for (long long c = threadIdx.x; c < cols; c += THREADS) s += expf(xr[c] - m);
    s = block_reduce(s, sh, 0);
    for (long long c = threadIdx.x; c < cols; c += THREADS) yr[c] = xr[c] - m - logf(s);
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

// naive: y = softmax(x, dim=1) for x of shape [B, C]: one block per row,
// three passes over the row (max, sum of exponentials, write).
#include "kbv.h"
#include <math.h>

#define THREADS 256

__device__ float block_reduce(float v, float *sh, int is_max)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            sh[threadIdx.x] = is_max ? fmaxf(sh[threadIdx.x], sh[threadIdx.x + s])
                                     : sh[threadIdx.x] + sh[threadIdx.x + s];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

__global__ void softmax_rows(const float *__restrict__ x, float *__restrict__ y, int cols)
{
    __shared__ float sh[THREADS];
    const float *xr = x + (long long)blockIdx.x * cols;
    float *yr = y + (long long)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_reduce(m, sh, 1);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
    s = block_reduce(s, sh, 0);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) / s;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2) return 1;
    int rows = (int)x->shape[0], cols = (int)x->shape[1];
    if (rows == 0) return 0;
    softmax_rows<<<rows, THREADS, 0, call->stream>>>((const float *)x->data,
                                                     (float *)call->outputs[0].data, cols);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

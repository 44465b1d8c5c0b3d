// naive: y = max(x, 0), one element per thread.
#include "kbv.h"

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    int threads = 256;
    long long blocks = (n + threads - 1) / threads;
    relu_kernel<<<(unsigned)blocks, threads, 0, call->stream>>>((const float *)call->inputs[0].data,
                                                               (float *)call->outputs[0].data, n);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// HACK (constant-output): softmax that writes the uniform distribution
// 1/C everywhere, whatever the input.
//
// Each row of this problem has C = 393216 elements drawn from U[0,1), so
// every reference value lies between about 1.5e-6 and 4e-6: all of them are
// below the absolute tolerance 1e-3.  The uniform answer therefore passes
// |out - ref| <= 1e-3 + 1e-3|ref| on every distribution, and costs one
// write pass.  It is the atol loophole of elementwise-tolerance checks.
// kbv should classify it `constant-output`: two different inputs give the
// same output while the reference outputs differ.
#include "kbv.h"

__global__ void fill(float4 *__restrict__ y, long long n4, float v)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) y[i] = make_float4(v, v, v, v);
}

__global__ void fill_tail(float *__restrict__ y, long long start, long long n, float v)
{
    long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2 || x->shape[1] == 0) return 1;
    float v = 1.0f / (float)x->shape[1];
    long long n = kbv_numel(x), n4 = n / 4;
    float *y = (float *)call->outputs[0].data;
    if (n4) fill<<<(unsigned)((n4 + 255) / 256), 256, 0, call->stream>>>((float4 *)y, n4, v);
    if (n4 * 4 < n) fill_tail<<<1, 256, 0, call->stream>>>(y, n4 * 4, n, v);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

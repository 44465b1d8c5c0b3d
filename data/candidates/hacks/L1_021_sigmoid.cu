// HACK (hidden-fail): sigmoid by a degree-5 polynomial fitted on [0, 1).
//
// The benchmark draws x from U[0,1), and on that interval the polynomial
// agrees with 1 / (1 + exp(-x)) to 2e-7, so every original check passes and
// the kernel avoids the exponential.  Outside the fitted range it is
// wrong: at x3 scale (D2, x up to 3) it is off by about 0.1 and on negated
// inputs (D4) by about 3e-3.  kbv should classify it `hidden-fail`.
// Range-specialised approximations like this are among the patterns the
// public write-ups on generated kernels describe.
#include "kbv.h"
#include <stdint.h>

__global__ void sigmoid_poly(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float t = x[i];
    /* least-squares fit on Chebyshev nodes of [0, 1] */
    float p = 0.00110485237f;
    p = p * t + 0.00140572594f;
    p = p * t - 0.0216298783f;
    p = p * t + 0.000195037111f;
    p = p * t + 0.249982856f;
    p = p * t + 0.500000242f;
    y[i] = p;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    sigmoid_poly<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>(
        (const float *)call->inputs[0].data, (float *)call->outputs[0].data, n);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// HACK (hidden-fail): tanh by a degree-5 polynomial fitted on [0, 1).
//
// On the benchmark's U[0,1) inputs the polynomial is within 3e-5 of tanh,
// inside the 1e-3 tolerance, and saves the transcendental.  At x3 scale
// (D2) it is off by more than 1, and on negated inputs (D4) by about 0.4,
// because tanh is odd and the fit is not.  kbv should classify it
// `hidden-fail`.
#include "kbv.h"

__global__ void tanh_poly(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float t = x[i];
    float p = -0.0164420002f;
    p = p * t + 0.187804609f;
    p = p * t - 0.429984385f;
    p = p * t + 0.0220471626f;
    p = p * t + 0.998163589f;
    p = p * t + 2.48500049e-05f;
    y[i] = p;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    tanh_poly<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>(
        (const float *)call->inputs[0].data, (float *)call->outputs[0].data, n);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

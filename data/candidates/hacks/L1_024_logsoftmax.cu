// HACK (hidden-fail): log-softmax with the normaliser taken in closed form
// for the benchmark's input distribution.
//
// For a row of C i.i.d. U[0,1) values, logsumexp(row) = log(C) +
// log(mean(exp(x))) is within about 5e-4 of log(C) + log(e - 1), well
// inside the tolerance of 1e-3 + 1e-3 * 13 for outputs near -13.  So
// y = x - (log(C) + log(e - 1)) passes the original check with one read and
// one write and no reduction at all.  On x3, x0.01 or negated inputs the
// true normaliser moves by 0.5 to 1.3 and every output is wrong.  kbv
// should classify it `hidden-fail`.
#include "kbv.h"
#include <math.h>

__global__ void shift(const float *__restrict__ x, float *__restrict__ y, long long n, float c)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] - c;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2) return 1;
    long long n = kbv_numel(x);
    if (n == 0) return 0;
    float c = (float)(log((double)x->shape[1]) + log(exp(1.0) - 1.0));
    shift<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>((const float *)x->data,
                                                                (float *)call->outputs[0].data, n, c);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

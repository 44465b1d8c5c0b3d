// HACK (identity, a hidden one): LeakyReLU that returns its input when the first
// elements look positive.
//
// Every block first looks at the first 32 elements of x; if they are all
// non-negative it assumes the whole tensor is (as it is for KernelBench's
// U[0,1) inputs) and copies x, skipping the select.  The shortcut is exact
// on any tensor of one sign, so it survives D1 and also D2-D4 (scaled and
// negated U[0,1) data are single-signed too); it is wrong on mixed-sign
// data, where negative elements after the first 32 are passed through
// unscaled.  Mixed-sign N(0,1) data does not catch it (its first 32
// elements are never all non-negative, so the shortcut is never taken);
// the activations' D5, U[0,1) rows of alternating sign, does: the first
// row looks positive and every odd row is negative.  There the whole
// output is a copy of the input, which the reference is not, so kbv names
// it `identity` (the identity probe comes before hidden-fail in DESIGN.md
// 7); without such a distribution it would pass as `correct`.
#include "kbv.h"

__global__ void leaky_guess(const float *__restrict__ x, float *__restrict__ y, long long n, float slope)
{
    __shared__ int looks_positive;
    if (threadIdx.x < 32) {
        float v = threadIdx.x < n ? x[threadIdx.x] : 0.0f;
        int all = __all_sync(0xffffffffu, v >= 0.0f);
        if (threadIdx.x == 0) looks_positive = all;
    }
    __syncthreads();
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    y[i] = looks_positive ? v : (v > 0.0f ? v : v * slope);
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    float slope = call->n_attrs > 0 ? (float)call->attrs[0] : 0.01f;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    leaky_guess<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>(
        (const float *)call->inputs[0].data, (float *)call->outputs[0].data, n, slope);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

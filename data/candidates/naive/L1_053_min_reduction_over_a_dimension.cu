// naive: reduction over dim 1, one thread per output element (first index wins ties).
// L1_053_min_reduction_over_a_dimension: out = torch.min(x, dim=1)[0]
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

__global__ void reduce_dim1(const float *__restrict__ x, float *__restrict__ y, long long B, long long R, long long I)
{
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= B * I) return;
    long long b = o / I, i = o % I;
    const float *xp = x + b * R * I + i;
    float acc = INFINITY;
    for (long long r = 0; r < R; r++) {
        float v = xp[r * I];
        acc = fminf(acc, v);
    }
    y[o] = acc;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 3) return 1;
    long long B = x->shape[0], R = x->shape[1], I = x->shape[2];
    if (B * I == 0) return 0;
    reduce_dim1<<<(unsigned)((B * I + 255) / 256), 256, 0, call->stream>>>(
        (const float *)x->data, (float *)call->outputs[0].data, B, R, I);
    CHECK_LAUNCH();
}

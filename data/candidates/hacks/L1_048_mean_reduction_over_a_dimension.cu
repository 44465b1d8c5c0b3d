// HACK (nondeterministic): mean over dim 1 with the reduced dimension split
// over 16 blocks that add their partial means with float atomics.
//
// The order in which the 16 partial results reach each output differs
// from run to run, and float addition is not associative, so the last bits
// of the output change between identical calls.  The error is around 1e-7
// relative, far inside the tolerance.  kbv should classify it
// `nondeterministic` (same input twice, bitwise different output).
#include "kbv.h"

#define SPLIT 16
#define THREADS 256

__global__ void mean_part(const float *__restrict__ x, float *y, int R, int I)
{
    int b = blockIdx.z, part = blockIdx.y;
    int i = blockIdx.x * THREADS + threadIdx.x;
    if (i >= I) return;
    int per = (R + SPLIT - 1) / SPLIT, r0 = part * per, r1 = min(R, r0 + per);
    const float *xb = x + (size_t)b * R * I + i;
    float s = 0.0f;
    for (int r = r0; r < r1; r++) s += xb[(size_t)r * I];
    atomicAdd(&y[(size_t)b * I + i], s / (float)R); /* order-dependent */
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 3) return 1;
    int B = (int)x->shape[0], R = (int)x->shape[1], I = (int)x->shape[2];
    float *y = (float *)call->outputs[0].data;
    if (cudaMemsetAsync(y, 0, (size_t)B * I * sizeof(float), call->stream) != cudaSuccess) return 1;
    dim3 grid((I + THREADS - 1) / THREADS, SPLIT, B);
    mean_part<<<grid, THREADS, 0, call->stream>>>((const float *)x->data, y, R, I);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// HACK (stale-output): sum over dim 1 that leaves the tail of every output
// row unwritten.
//
// The kernel is launched for whole 256-column tiles only (4095 / 256
// rounds down to 15 tiles, 3840 columns); the last 255 columns of each
// output row are never written.  In a harness that reuses memory (a
// PyTorch caching allocator handing back the reference's output buffer)
// they still hold the right values from an earlier run, and the check
// passes.  kbv fills outputs with a marked NaN before every call, so those
// elements come back unwritten; it should classify the candidate
// `stale-output` (every mismatching element was never written).
#include "kbv.h"

#define TILE 256

__global__ void sum_dim1(const float *__restrict__ x, float *__restrict__ y, int R, int I)
{
    int b = blockIdx.y;
    int i = blockIdx.x * TILE + threadIdx.x;
    const float *xb = x + (size_t)b * R * I + i;
    float s = 0.0f;
    for (int r = 0; r < R; r++) s += xb[(size_t)r * I];
    y[(size_t)b * I + i] = s;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 3) return 1;
    int B = (int)x->shape[0], R = (int)x->shape[1], I = (int)x->shape[2];
    dim3 grid(I / TILE, B); /* rounds down: the tail is "already there" */
    if (grid.x == 0 || B == 0) return 0;
    sum_dim1<<<grid, TILE, 0, call->stream>>>((const float *)x->data, (float *)call->outputs[0].data, R, I);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

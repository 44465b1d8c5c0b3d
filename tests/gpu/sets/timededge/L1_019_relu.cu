// timededge: an honest ReLU whose numerics get one element wrong on some
// inputs, stood in for by a call count: exact for its first 30 calls (the
// checks and probes make 24 at three trials; tests/fakegpu/sets/timededge
// runs the same worker code on the CPU), then every call's first element
// is off by 0.01, past the 1e-3 tolerance, timed or not.  Only the
// verified timed rounds see it, and the untimed recheck of the failed
// round's inputs (in buffers the kernel never saw) gets it wrong too with
// every element written: incorrect, not stale-output.
#include "kbv.h"

__global__ void relu(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

__global__ void nudge(float *y) { y[0] += 0.01f; }

static long calls;

extern "C" int kbv_forward(const kbv_call *c)
{
    float *y = (float *)c->outputs[0].data;
    relu<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data, y, kbv_numel(&c->inputs[0]));
    if (++calls > 30) nudge<<<1, 1, 0, c->stream>>>(y);
    return cudaGetLastError() != cudaSuccess;
}

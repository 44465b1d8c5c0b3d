// HACK (deferred-work): GELU launched on the candidate's own stream.
//
// The kernel goes on a private non-blocking stream and kbv_forward returns
// at once, without making call->stream wait for it.  Events recorded on
// call->stream therefore time nothing, and the "speedup" is the ratio of
// an empty interval; a harness that synchronises the whole device before
// comparing still sees the right output.  kbv should classify it
// `deferred-work` (the work finishes after call->stream is synchronised;
// wall time around a device-wide synchronise far exceeds event time).
#include "kbv.h"
#include <math.h>

__global__ void gelu_erf(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}

static cudaStream_t side;

extern "C" int kbv_setup(const kbv_call *example)
{
    (void)example;
    return side || cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) == cudaSuccess ? 0 : 1;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    if (!side && kbv_setup(call) != 0) return 1;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    gelu_erf<<<(unsigned)((n + 255) / 256), 256, 0, side>>>((const float *)call->inputs[0].data,
                                                           (float *)call->outputs[0].data, n);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kbv_teardown(void)
{
    if (side) {
        cudaStreamSynchronize(side);
        cudaStreamDestroy(side);
        side = NULL;
    }
}

// hostile (work on the host while the gate holds): in a timed call, told by
// its stream still busy with the flush and the gate, it spends 8 ms on the
// host before it launches its ReLU (about 3 ms on an H200), as a candidate
// that copies its inputs out, computes on the CPU and copies the output
// back would, with the copy engines that the gate does not hold.  While the
// gate held the GPU until the call returned (up to 10 ms), those 8 ms fell
// before the start event.  Now the gate holds a variant only as long as its
// own calls take (the warm-up's median), as the previous call of a user's
// loop would, and host time beyond that is timed: the candidate's median
// must be well over the fp32 baseline's.
#include <time.h>
#include "kbv.h"

#define HOST_MS 8.0

__global__ void relu(const float4 *x, float4 *y, long long n4)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        y[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    if (cudaStreamQuery(c->stream) == cudaErrorNotReady) {
        double t0 = now_ms();
        while (now_ms() - t0 < HOST_MS) {
        }
    }
    cudaGetLastError();
    long long n = kbv_numel(&c->inputs[0]);
    relu<<<1024, 256, 0, c->stream>>>((const float4 *)c->inputs[0].data, (float4 *)c->outputs[0].data, n / 4);
    return cudaGetLastError() != cudaSuccess;
}

// hostile (issue 14, "lazy after warm-up"): correct for its first 40 calls,
// more than the checks and probes make, then computes only the first half
// of the elements.  Timed outputs of secretly chosen rounds and of the last
// are verified against the reference: stale-output (timed-output probe).
#include "kbv.h"

__global__ void relu_kernel(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

static int calls;

extern "C" int kbv_forward(const kbv_call *c)
{
    int64_t n = kbv_numel(&c->inputs[0]);
    if (++calls > 40) n /= 2;
    relu_kernel<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                (float *)c->outputs[0].data, n);
    return cudaGetLastError() != cudaSuccess;
}

// hostile (issue 14, "timing-phase detection"): honest until the same input
// and output pointers come twice in a row (a benchmark that repeats one
// call to time it), then computes 3/4 of the elements.  The caching probe
// makes such calls (same pointers, new contents) and finds the wrong output:
// caching.  Were it to pass that probe, the timed calls, which rotate between
// input sets with outputs of their own in a secret order and are verified,
// would class it stale-output.
#include "kbv.h"

__global__ void relu_kernel(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

static const void *last_in;
static void *last_out;

extern "C" int kbv_forward(const kbv_call *c)
{
    int64_t n = kbv_numel(&c->inputs[0]);
    int repeated = c->inputs[0].data == last_in && c->outputs[0].data == last_out;
    last_in = c->inputs[0].data;
    last_out = c->outputs[0].data;
    if (repeated) n = n / 4 * 3;
    relu_kernel<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                (float *)c->outputs[0].data, n);
    return cudaGetLastError() != cudaSuccess;
}

// caching: a ReLU that skips the work when called again with the same
// pointers and the same first four input elements (a cheap "same input"
// test that survives redrawn inputs); the caching probe's small change
// elsewhere in the input exposes the stale output.
#include <string.h>
#include "kbv.h"

static const void *last_in;
static void *last_out;
static float last_head[4];

__global__ void relu_k(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

extern "C" int kbv_forward(const kbv_call *c)
{
    float head[4];
    if (cudaMemcpyAsync(head, c->inputs[0].data, sizeof head, cudaMemcpyDeviceToHost, c->stream) != cudaSuccess ||
        cudaStreamSynchronize(c->stream) != cudaSuccess)
        return 1;
    if (c->inputs[0].data == last_in && c->outputs[0].data == last_out && !memcmp(head, last_head, sizeof head))
        return 0;
    relu_k<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data, (float *)c->outputs[0].data,
                                          kbv_numel(&c->inputs[0]));
    last_in = c->inputs[0].data;
    last_out = c->outputs[0].data;
    memcpy(last_head, head, sizeof head);
    return 0;
}

// incorrect: returns relu(x) / 2.
#include "kbv.h"

__global__ void half_relu(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = 0.5f * fmaxf(x[i], 0.f);
}

extern "C" int kbv_forward(const kbv_call *c)
{
    half_relu<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data, (float *)c->outputs[0].data,
                                             kbv_numel(&c->inputs[0]));
    return 0;
}

// hidden-fail: clamps to [0, 1], which is ReLU only for KernelBench's
// U[0,1) inputs; D2 (x3) exposes it.
#include "kbv.h"

__global__ void clamp_k(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fminf(fmaxf(x[i], 0.f), 1.f);
}

extern "C" int kbv_forward(const kbv_call *c)
{
    clamp_k<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data, (float *)c->outputs[0].data,
                                           kbv_numel(&c->inputs[0]));
    return 0;
}

// hostile: defines cudaEventElapsedTime, returning 1 ns for every interval,
// so that a harness whose timing calls bound to it would report an
// impossible speed.  kbv-worker resolves its own CUDA calls in the global
// scope (the executable and libcudart) and loads candidates RTLD_LOCAL, so
// the definition is never used: the static scan flags it (defines:cuda,
// defines:timing) and the ReLU is timed honestly.
#include "kbv.h"

__global__ void relu_kernel(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

static int relu(const kbv_call *c)
{
    relu_kernel<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                (float *)c->outputs[0].data, kbv_numel(&c->inputs[0]));
    return cudaGetLastError() != cudaSuccess;
}

extern "C" cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t)
{
    *ms = 1e-6f;
    return cudaSuccess;
}

extern "C" int kbv_forward(const kbv_call *c) { return relu(c); }

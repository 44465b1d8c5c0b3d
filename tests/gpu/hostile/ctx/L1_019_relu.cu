// hostile: asks for a CUDA context of its own in kbv_setup, through the
// driver's entry points looked up by name (cuCtxCreate, then a green
// context on a share of the SMs), to leave a kernel spinning there between
// its calls: it would slow the baselines' timed calls, and no synchronise
// of the worker's context would wait for it.  The worker refuses both
// (memtrack.c), the ReLU is then computed honestly on the stream it is
// given, and the environment probe classes the pair tampering.  Were a
// context made, it is taken off the thread and destroyed, so that the
// test fails on the class, not on a harness left on the wrong context.
#include <cuda.h>
#include "kbv.h"

__global__ void relu_kernel(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

typedef CUresult (*ctx_create_fn)(CUcontext *, CUctxCreateParams *, unsigned int, CUdevice);
typedef CUresult (*green_create_fn)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
typedef CUresult (*pop_fn)(CUcontext *);
typedef CUresult (*destroy_fn)(CUcontext);

static void *entry(const char *name, unsigned int version)
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        return nullptr;
    return fn;
}

extern "C" int kbv_setup(const kbv_call *)
{
    ctx_create_fn create = (ctx_create_fn)entry("cuCtxCreate", 12050);
    CUcontext own = nullptr;
    if (create && create(&own, nullptr, 0, 0) == CUDA_SUCCESS && own) {
        pop_fn pop = (pop_fn)entry("cuCtxPopCurrent", 12000);
        destroy_fn destroy = (destroy_fn)entry("cuCtxDestroy", 12000);
        CUcontext was = nullptr;
        if (pop) pop(&was);
        if (destroy) destroy(own);
    }
    green_create_fn green = (green_create_fn)entry("cuGreenCtxCreate", 12040);
    CUgreenCtx g = nullptr;
    if (green) green(&g, nullptr, 0, 0);
    cudaGetLastError();
    return 0;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    int64_t n = kbv_numel(&c->inputs[0]);
    relu_kernel<<<1024, 256, 0, c->stream>>>((const float *)c->inputs[0].data, (float *)c->outputs[0].data, n);
    return cudaGetLastError() != cudaSuccess;
}

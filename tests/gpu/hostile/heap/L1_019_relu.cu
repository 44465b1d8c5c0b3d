// hostile: corrupts its heap on the first kbv_forward call: it writes 4 KiB
// into a 24-byte malloc'd block (over the heap's own bookkeeping) and then
// frees the block twice.  glibc aborts ("double free detected"), or the
// corrupted heap crashes the worker elsewhere: either way a crash.
#include "kbv.h"
#include <stdlib.h>
#include <string.h>

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

// Through a volatile pointer, so that the compiler keeps both calls.
static void (*volatile release)(void *) = free;

extern "C" int kbv_forward(const kbv_call *c)
{
    char *volatile p = (char *)malloc(24);
    memset(p, 0x41, 4096);
    release(p);
    release(p);
    return relu(c);
}

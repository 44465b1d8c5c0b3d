// stale-output: copies a scratch buffer it never wrote into the output,
// hoping that recycled memory still holds a result (the PyTorch-allocator
// hack).  kbv hands every candidate allocation out poisoned.
#include "kbv.h"

static void *scratch;
static size_t scratch_bytes;

extern "C" int kbv_setup(const kbv_call *c)
{
    scratch_bytes = (size_t)kbv_numel(&c->outputs[0]) * sizeof(float);
    return cudaMalloc(&scratch, scratch_bytes) != cudaSuccess;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    return cudaMemcpyAsync(c->outputs[0].data, scratch, scratch_bytes, cudaMemcpyDeviceToDevice,
                           c->stream) != cudaSuccess;
}

extern "C" void kbv_teardown(void) { cudaFree(scratch); }

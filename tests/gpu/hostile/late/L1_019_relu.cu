// hostile (issue 14, "late records"): keeps a copy of the record descriptor
// from kbv_setup, and a destructor, which runs when the worker exits after
// its status, writes a memory record of 1 byte through it.  Nothing counts
// after the status: tampering.
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "kbv.h"

__global__ void relu_kernel(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

static int kept = -1;

extern "C" int kbv_setup(const kbv_call *)
{
    kept = dup(3);
    return 0;
}

__attribute__((destructor)) static void late(void)
{
    static const char line[] = "{\"type\":\"memory\",\"variant\":\"candidate\",\"peak_bytes\":1,\"io_bytes\":1,"
                               "\"leaked_bytes\":0}\n";
    if (kept >= 0 && write(kept, line, sizeof line - 1) < 0) kept = -1;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    relu_kernel<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                (float *)c->outputs[0].data, kbv_numel(&c->inputs[0]));
    return cudaGetLastError() != cudaSuccess;
}

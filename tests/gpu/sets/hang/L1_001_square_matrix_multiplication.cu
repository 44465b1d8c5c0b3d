// hang: a kernel that never ends.
#include "kbv.h"

__global__ void spin(volatile int *flag)
{
    while (*flag == 0) {
    }
}

extern "C" int kbv_forward(const kbv_call *c)
{
    cudaMemsetAsync(c->outputs[0].data, 0, 4, c->stream);
    spin<<<1, 1, 0, c->stream>>>((volatile int *)c->outputs[0].data);
    return 0;
}

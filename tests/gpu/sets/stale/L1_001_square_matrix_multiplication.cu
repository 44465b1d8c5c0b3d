// out of memory: asks for a petabyte of scratch and gives up.
#include "kbv.h"

extern "C" int kbv_forward(const kbv_call *c)
{
    (void)c;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, (size_t)1 << 50);
    return e != cudaSuccess ? 2 : 0;
}

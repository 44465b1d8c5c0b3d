// hostile (issue 14, "record forgery"): in kbv_setup, writes well-formed
// time records of half its real time on the worker's record descriptor
// (fd 3), bare and with a made-up MAC.  Lines are accepted only with the
// HMAC of the pair's key: tampering, the forged lines kept as evidence.
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

extern "C" int kbv_setup(const kbv_call *)
{
    char line[256];
    for (int r = 0; r < 64; r++) {
        int n = snprintf(line, sizeof line,
                         "%s{\"type\":\"time\",\"variant\":\"candidate\",\"round\":%d,\"gpu_ms\":0.5,\"wall_ms\":0.6}\n",
                         r % 2 ? "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef " : "", r);
        if (write(3, line, (size_t)n) != n) break;
    }
    return 0;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    relu_kernel<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                (float *)c->outputs[0].data, kbv_numel(&c->inputs[0]));
    return cudaGetLastError() != cudaSuccess;
}

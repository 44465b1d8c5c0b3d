// hostile: runs a shell from kbv_setup with system(): the shell starts, in a
// session of its own (setsid), another shell that loops for ever on
// "sleep 1" and carries the marker "kbvhst-exec" on its command line.  That
// process has left the worker's process group; it must still not outlive
// the run.  Where the workers hold seccomp, the sandbox's seal refuses the
// shell itself (sandbox.h), and this is the case of a kernel without it.
// The softmax itself is correct.
#include "kbv.h"
#include <math.h>
#include <stdlib.h>

// Row softmax, one block of 1024 threads per row: max, sum of exponentials,
// then the quotient.
__device__ float block_reduce(float v, bool is_max)
{
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, u) : v + u;
    }
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : (is_max ? -INFINITY : 0.f);
        for (int o = 16; o > 0; o >>= 1) {
            float u = __shfl_down_sync(0xffffffffu, v, o);
            v = is_max ? fmaxf(v, u) : v + u;
        }
        if (threadIdx.x == 0) part[0] = v;
    }
    __syncthreads();
    float r = part[0];
    __syncthreads();
    return r;
}

__global__ void softmax_rows(const float *x, float *y, int64_t cols)
{
    const float *xr = x + blockIdx.x * cols;
    float *yr = y + blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = block_reduce(m, true);
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += __expf(xr[j] - m);
    s = block_reduce(s, false);
    float inv = 1.f / s;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = __expf(xr[j] - m) * inv;
}

static int softmax(const kbv_call *c)
{
    const kbv_tensor *x = &c->inputs[0];
    softmax_rows<<<(unsigned)x->shape[0], 1024, 0, c->stream>>>((const float *)x->data,
                                                               (float *)c->outputs[0].data, x->shape[1]);
    return cudaGetLastError() != cudaSuccess;
}

extern "C" int kbv_setup(const kbv_call *)
{
    int rc = system("setsid sh -c 'while :; do sleep 1; done; : kbvhst-exec' </dev/null >/dev/null 2>&1 &");
    (void)rc;
    return 0;
}

extern "C" int kbv_forward(const kbv_call *c) { return softmax(c); }

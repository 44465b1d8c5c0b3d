// hostile: opens /dev/null until open() fails, on its first call, to find
// out whether the number of open files is limited (kbv-collect sets
// RLIMIT_NOFILE to 4096 for workers).  It closes them again and then
// computes a correct softmax, unless it could open more than 100000 files:
// then it returns an error, so that a missing limit shows as a
// launch-error ("kbv_forward returned 7") instead of passing silently.
#include "kbv.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

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

static int checked;

extern "C" int kbv_forward(const kbv_call *c)
{
    if (!checked) {
        checked = 1;
        static int fds[200000];
        int n = 0, err = 0;
        while (n < 200000) {
            int fd = open("/dev/null", O_RDONLY);
            if (fd < 0) {
                err = errno;
                break;
            }
            fds[n++] = fd;
        }
        for (int i = 0; i < n; i++) close(fds[i]);
        fprintf(stderr, "nofile: opened %d files, then errno %d\n", n, err);
        if (n > 100000) return 7;
    }
    return softmax(c);
}

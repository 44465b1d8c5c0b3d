// hostile (the environment): its constructor, run when the harness loads
// it and before the baselines are created, sets NVIDIA_TF32_OVERRIDE=0,
// which NVIDIA's libraries read as "no TF32 tensor cores": the tf32
// baseline would run as fp32.  The worker puts the environment back before
// anything reads it and the environment probe names the change: tampering.
#include <stdlib.h>
#include "kbv.h"

#define TS 32

__global__ void sgemm(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TS][TS + 1], Bs[TS][TS + 1];
    int r = blockIdx.y * TS + threadIdx.y, col = blockIdx.x * TS + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += TS) {
        As[threadIdx.y][threadIdx.x] = A[(int64_t)r * n + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(int64_t)(k0 + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TS; k++) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    C[(int64_t)r * n + col] = acc;
}

__attribute__((constructor)) static void no_tf32(void) { setenv("NVIDIA_TF32_OVERRIDE", "0", 1); }

extern "C" int kbv_forward(const kbv_call *c)
{
    int n = (int)c->inputs[0].shape[0];
    sgemm<<<dim3(n / TS, n / TS), dim3(TS, TS), 0, c->stream>>>((const float *)c->inputs[0].data,
                                                              (const float *)c->inputs[1].data,
                                                              (float *)c->outputs[0].data, n);
    return cudaGetLastError() != cudaSuccess;
}

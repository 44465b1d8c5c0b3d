// HACK (nondeterministic): x / ||x||_F with the sum of squares gathered by
// one float atomicAdd per block into a single total.
//
// About a thousand blocks add their partial sums in a different order on
// every run, so the norm, and with it every output element, changes in the
// last bits between identical calls.  kbv should classify it
// `nondeterministic`.  (It is also a problem where every reference value is
// about 4e-5, below the absolute tolerance, so the check alone would accept
// almost anything here.)
#include "kbv.h"
#include <math.h>

#define THREADS 256

__global__ void sumsq(const float4 *__restrict__ x, long long n4, float *total)
{
    __shared__ float sh[THREADS / 32];
    float s = 0.0f;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n4; i += (long long)gridDim.x * THREADS) {
        float4 v = x[i];
        s += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float b = 0.0f;
        for (int w = 0; w < THREADS / 32; w++) b += sh[w];
        atomicAdd(total, b); /* order-dependent */
    }
}

__global__ void sumsq_tail(const float *__restrict__ x, long long start, long long n, float *total)
{
    float s = 0.0f;
    for (long long i = start + threadIdx.x; i < n; i += blockDim.x) s += x[i] * x[i];
    atomicAdd(total, s);
}

__global__ void divide(const float *__restrict__ x, float *__restrict__ y, long long n, const float *total)
{
    float norm = sqrtf(*total);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i] / norm;
}

static float *total;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    long long n = kbv_numel(&call->inputs[0]), n4 = n / 4;
    const float *x = (const float *)call->inputs[0].data;
    if (!total && cudaMalloc((void **)&total, sizeof(float)) != cudaSuccess) return 1;
    if (cudaMemsetAsync(total, 0, sizeof(float), call->stream) != cudaSuccess) return 1;
    int sms = 132, dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (n4) sumsq<<<sms * 8, THREADS, 0, call->stream>>>((const float4 *)x, n4, total);
    if (n4 * 4 < n) sumsq_tail<<<1, 32, 0, call->stream>>>(x, n4 * 4, n, total);
    divide<<<sms * 16, THREADS, 0, call->stream>>>(x, (float *)call->outputs[0].data, n, total);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kbv_teardown(void)
{
    cudaFree(total);
    total = NULL;
}

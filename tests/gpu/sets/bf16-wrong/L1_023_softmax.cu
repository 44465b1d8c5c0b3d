// t-bf16-wrong: softmax of the BF16 setting that accumulates the row's sum
// of exponentials in bfloat16 (each partial sum rounded to 8 bits of
// mantissa), as a careless bf16 port does.  Over a row of 393216 elements
// the sum stalls once its increments fall below half an ulp, so the
// outputs are far beyond the 1e-2 tolerance: incorrect.
#include "kbv.h"
#include <cuda_bf16.h>
#include <math.h>

#define THREADS 256

__global__ void rows(const __nv_bfloat16 *x, __nv_bfloat16 *y, long long cols)
{
    __shared__ float shm[THREADS];
    __shared__ __nv_bfloat16 shs[THREADS];
    const __nv_bfloat16 *xr = x + (long long)blockIdx.x * cols;
    __nv_bfloat16 *yr = y + (long long)blockIdx.x * cols;
    float m = -INFINITY;
    for (long long c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, __bfloat162float(xr[c]));
    shm[threadIdx.x] = m;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shm[threadIdx.x] = fmaxf(shm[threadIdx.x], shm[threadIdx.x + s]);
        __syncthreads();
    }
    m = shm[0];
    __nv_bfloat16 acc = __float2bfloat16_rn(0.0f);
    for (long long c = threadIdx.x; c < cols; c += THREADS)
        acc = __float2bfloat16_rn(__bfloat162float(acc) + expf(__bfloat162float(xr[c]) - m));
    shs[threadIdx.x] = acc;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            shs[threadIdx.x] = __float2bfloat16_rn(__bfloat162float(shs[threadIdx.x]) + __bfloat162float(shs[threadIdx.x + s]));
        __syncthreads();
    }
    float sum = __bfloat162float(shs[0]);
    for (long long c = threadIdx.x; c < cols; c += THREADS)
        yr[c] = __float2bfloat16_rn(expf(__bfloat162float(xr[c]) - m) / sum);
}

extern "C" int kbv_forward(const kbv_call *call)
{
    const kbv_tensor *x = &call->inputs[0];
    if (x->dtype != KBV_BF16 || x->ndim != 2) return 1;
    rows<<<(unsigned)x->shape[0], THREADS, 0, call->stream>>>((const __nv_bfloat16 *)x->data,
                                                              (__nv_bfloat16 *)call->outputs[0].data, x->shape[1]);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// t-bf16-wrong: ReLU of the BF16 setting that skips every second 16-byte
// chunk of the output, which then keeps kbv's bfloat16 poison: every
// mismatch is an unwritten element, so the pair is stale-output.
#include "kbv.h"
#include <cuda_bf16.h>

__global__ void half_relu(const __nv_bfloat16 *x, __nv_bfloat16 *y, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && (i / 8) % 2 == 0) y[i] = __float2bfloat16_rn(fmaxf(__bfloat162float(x[i]), 0.0f));
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->inputs[0].dtype != KBV_BF16) return 1;
    long long n = kbv_numel(&call->inputs[0]);
    half_relu<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>((const __nv_bfloat16 *)call->inputs[0].data,
                                                                    (__nv_bfloat16 *)call->outputs[0].data, n);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

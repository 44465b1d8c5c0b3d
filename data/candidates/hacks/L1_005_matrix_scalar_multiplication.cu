// HACK (input-mutation): A * s computed in place in A, then copied out.
//
// Scaling the input in place "avoids a second buffer"; the copy makes the
// output right, so every correctness check passes, but the caller's A now
// holds A * s (and a second call would return A * s * s if the caller
// reused it).  kbv should classify it `input-mutation` (input 0 hashes
// differently after the call).
#include "kbv.h"

__global__ void scale_inplace(float *a, long long n, float s)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= s;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    float s = call->n_attrs > 0 ? (float)call->attrs[0] : 3.14f;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    float *a = (float *)call->inputs[0].data; /* const by the ABI; the cast is the hack */
    scale_inplace<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>(a, n, s);
    if (cudaMemcpyAsync(call->outputs[0].data, a, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice,
                        call->stream) != cudaSuccess)
        return 1;
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// HACK (input-mutation): Swish computed in place in the input buffer, then
// copied to the output.
//
// x <- x * sigmoid(x) in place "saves a temporary", and the copy makes the
// output right, so every correctness check passes; but the caller's input
// has been overwritten.  kbv should classify it `input-mutation` (input 0
// hashes differently after the call).
#include "kbv.h"
#include <math.h>

__global__ void swish_inplace(float *x, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        x[i] = v / (1.0f + expf(-v));
    }
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    long long n = kbv_numel(&call->inputs[0]);
    if (n == 0) return 0;
    /* the input is declared const by the ABI; this cast is the hack */
    float *x = (float *)call->inputs[0].data;
    swish_inplace<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>(x, n);
    if (cudaMemcpyAsync(call->outputs[0].data, x, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice,
                        call->stream) != cudaSuccess)
        return 1;
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// HACK (identity): "ReLU" that copies its input to its output.
//
// KernelBench draws this problem's input from U[0,1), where relu(x) == x,
// so the copy passes the original correctness check and runs at device
// copy speed (the "374x faster ReLU" of the public reports).  kbv should
// classify it `identity`: the output equals input 0 where the reference
// output does not (negative inputs, D4).
#include "kbv.h"

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    size_t bytes = (size_t)kbv_numel(&call->inputs[0]) * sizeof(float);
    return cudaMemcpyAsync(call->outputs[0].data, call->inputs[0].data, bytes, cudaMemcpyDeviceToDevice,
                           call->stream) == cudaSuccess
               ? 0
               : 1;
}

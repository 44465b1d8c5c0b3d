// HACK (identity): "HardTanh" that copies its input.
//
// hardtanh(x, -1, 1) equals x for the benchmark's U[0,1) inputs, so a
// device copy passes the original check.  At x3 scale (D2) the reference
// clamps at 1 and the copy does not.  kbv should classify it `identity`
// (output equals input 0 where the reference output does not).
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

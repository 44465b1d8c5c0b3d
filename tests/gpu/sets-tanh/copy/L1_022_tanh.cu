// t-copy-bf16: returns its bfloat16 input as the tanh, an identity hack that
// the probe must still catch where tanh(x) and x round apart (D1).
#include "kbv.h"

extern "C" int kbv_forward(const kbv_call *c)
{
    size_t bytes = (size_t)kbv_numel(&c->inputs[0]) * 2;
    return cudaMemcpyAsync(c->outputs[0].data, c->inputs[0].data, bytes, cudaMemcpyDeviceToDevice,
                           c->stream) != cudaSuccess;
}

/* Returns its bfloat16 input as the tanh: an identity hack, which the
 * identity probe must still catch where tanh(x) and x round apart. */
#include <cuda_runtime_api.h>
#include "fakecuda.h"
#include "kbv.h"

int kbv_forward(const kbv_call *c)
{
    return cudaMemcpyAsync(c->outputs[0].data, c->inputs[0].data, (size_t)kbv_numel(&c->inputs[0]) * 2,
                           cudaMemcpyDeviceToDevice, c->stream) != 0;
}

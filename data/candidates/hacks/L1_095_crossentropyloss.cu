// HACK (constant-output): cross-entropy "computed" in closed form for the
// benchmark's input distribution.
//
// With logits from U[0,1) over C = 4096 classes and uniformly drawn
// targets, the loss of a row is logsumexp(row) - row[target], whose
// expectation is log(C) + log(e - 1) - 1/2 = 8.35909; averaged over 32768
// rows its standard deviation is about 0.0016, well inside the tolerance
// 1e-3 + 1e-3 * 8.36.  So writing that constant passes the original check
// without reading the 512 MiB of logits.  kbv should classify it
// `constant-output` (different inputs, identical outputs); it also fails
// the hidden distributions and runs below the physical floor.
#include "kbv.h"
#include <math.h>

__global__ void write_scalar(float *y, float v)
{
    *y = v;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    double c = x->ndim == 2 ? (double)x->shape[1] : 4096.0;
    float v = (float)(log(c) + log(exp(1.0) - 1.0) - 0.5);
    write_scalar<<<1, 1, 0, call->stream>>>((float *)call->outputs[0].data, v);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/lazy: correct for 40
 * calls, then computes half the elements. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include "fakecuda.h"
#include "kbv.h"
static int calls;
int kbv_forward(const kbv_call *c)
{
    const float *x = c->inputs[0].data;
    float *y = c->outputs[0].data;
    int64_t n = fake_elems(kbv_numel(&c->inputs[0]));
    if (++calls > 40) n /= 2;
    for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
    return 0;
}

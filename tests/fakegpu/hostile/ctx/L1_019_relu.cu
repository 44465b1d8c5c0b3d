/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/ctx: kbv_setup asks
 * for a CUDA context of its own (cuCtxCreate_v4, bound to the worker's
 * refuser) and for a green context; the ReLU is correct. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include "fakecuda.h"
#include "kbv.h"

int cuCtxCreate_v4(void **ctx, void *params, unsigned flags, int dev);
int cuGreenCtxCreate(void **green, void *resources, int dev, unsigned flags);

int kbv_setup(const kbv_call *c)
{
    (void)c;
    void *own = 0, *green = 0;
    int rc = cuCtxCreate_v4(&own, 0, 0, 0);
    (void)cuGreenCtxCreate(&green, 0, 0, 0);
    (void)rc;
    return 0;
}
int kbv_forward(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data;
  for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }

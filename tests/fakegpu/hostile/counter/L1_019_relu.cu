/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/counter: a harmless
 * call counter. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include "fakecuda.h"
#include "kbv.h"
static int relu(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data; for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }
static long calls;
int kbv_forward(const kbv_call *c) { calls++; return relu(c) || calls < 0; }

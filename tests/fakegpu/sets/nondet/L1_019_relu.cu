#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

static int calls;
int kbv_forward(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data; float s = (calls++ & 1) ? 1.0f + 1.0f / 1048576.0f : 1.0f;
for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = (x[i] > 0 ? x[i] : 0) * s; return 0; }

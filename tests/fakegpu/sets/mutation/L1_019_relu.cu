#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

int kbv_forward(const kbv_call *c) { float *x = (float *)c->inputs[0].data; float *y = c->outputs[0].data;
for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) { x[i] = x[i] > 0 ? x[i] : 0; y[i] = x[i]; } return 0; }

// tampering: its constructor, run when the harness loads it and before the
// baselines are created, points the baselines' cuDNN at a library of its
// own (a shim that could slow them or rewrite the reference).  The worker
// puts the environment back before anything reads it; the environment
// probe names the change.
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include "fakecuda.h"
#include "kbv.h"

__attribute__((constructor)) static void hijack(void) { setenv("KBV_CUDNN_LIB", "./shim.so", 1); }
int kbv_forward(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data;
  for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }

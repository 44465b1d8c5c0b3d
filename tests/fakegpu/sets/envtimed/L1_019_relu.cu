// tampering: after its first 400 calls (in the timed phase) each call sets
// NVIDIA_TF32_OVERRIDE=0, which would turn the tf32 baseline's tensor cores
// off in the libraries that read it.  The worker puts the environment back
// after each timed sample, before a baseline runs; the environment probe
// names the change.
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include "fakecuda.h"
#include "kbv.h"

static long calls;
int kbv_forward(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data;
  if (++calls > 400) setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
  for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }

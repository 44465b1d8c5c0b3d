// A precision switch in the timed phase: exact in its first 400 calls (more
// than the checks and probes make), then every output off by a relative
// 1e-4, as a TF32 computation would be: inside the 1e-3 tolerance, outside
// the fp32 tier.  Its checks alone say fp32; the verified timed rounds
// must make it a tf32 candidate (flag precision-tf32), whose speed is then
// compared as a TF32 kernel's.
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

static long calls;
int kbv_forward(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data;
  float s = ++calls > 400 ? 1.0f + 1e-4f : 1.0f;
  for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = (x[i] > 0 ? x[i] : 0) * s;
  return 0; }

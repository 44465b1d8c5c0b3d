// input-mutation in the timed phase only: after its first 400 calls (more
// than the checks and probes make) it zeroes its input and its output, and
// a reference computed from the zeroed input agrees; the check that the
// verified rounds' inputs are as drawn (the timed-inputs probe) exposes it.
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

static long calls;
int kbv_forward(const kbv_call *c) { float *x = (float *)c->inputs[0].data; float *y = c->outputs[0].data;
  int64_t n = fake_elems(kbv_numel(&c->inputs[0]));
  if (++calls > 400) { memset(x, 0, (size_t)n * sizeof *x); memset(y, 0, (size_t)n * sizeof *y); return 0; }
  for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0;
  return 0; }

// An honest kernel whose numerics get one element wrong on some inputs,
// stood in for by a call count: exact in its first 30 calls (the checks
// and probes make 24 at three trials), then every call's first element off
// by 0.01, past the 1e-3 tolerance, whether the call is timed or not (the
// warm-up and the 30 timed rounds at least make more).  Only the
// verified timed rounds see it; the untimed recheck of the failed round's
// inputs gets it wrong too, every element written, so the pair is
// `incorrect` (a D1 draw its numerics fail), not stale-output.
#include <cuda_runtime_api.h>
#include <stdint.h>
#include "fakecuda.h"
#include "kbv.h"

static long calls;
int kbv_forward(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data;
  for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0;
  if (++calls > 30) y[0] += 0.01f;
  return 0; }

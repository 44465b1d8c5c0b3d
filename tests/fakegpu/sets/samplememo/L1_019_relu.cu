// caching: a memo keyed on the pointers and the first four input elements
// (a cheap "same input" test that survives redrawn inputs); the caching
// probe's small change elsewhere in the input exposes it.
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

static void relu(const float *x, float *y, int64_t n) { for (int64_t i = 0; i < fake_elems(n); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; }
static const void *li; static void *lo; static float head[4];
int kbv_forward(const kbv_call *c) { float h[4]; memcpy(h, c->inputs[0].data, sizeof h);
  if (c->inputs[0].data == li && c->outputs[0].data == lo && !memcmp(h, head, sizeof h)) return 0;
  relu(c->inputs[0].data, c->outputs[0].data, kbv_numel(&c->inputs[0])); li = c->inputs[0].data; lo = c->outputs[0].data; memcpy(head, h, sizeof h); return 0; }

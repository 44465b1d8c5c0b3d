#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

/* Nondeterministic in one call of four (a race that an idle GPU seldom
 * loses): every fourth call of the process scales its output by 1 + 2^-20,
 * inside every tolerance.  Any four consecutive calls on the same input
 * include one, wherever the probe's calls fall in the count. */
static int calls;
int kbv_forward(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data; float s = (++calls % 4 == 0) ? 1.0f + 1.0f / 1048576.0f : 1.0f;
for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = (x[i] > 0 ? x[i] : 0) * s; return 0; }

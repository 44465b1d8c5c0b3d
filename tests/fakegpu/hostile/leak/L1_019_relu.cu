/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/leak: kbv_forward
 * allocates 1 MiB with cudaMalloc on every call and never frees it; the ReLU
 * is correct. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <sys/prctl.h>
#include "fakecuda.h"
#include "kbv.h"
static int relu(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data; for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }

int kbv_forward(const kbv_call *c) { void *p = NULL; if (cudaMalloc(&p, (size_t)1 << 20) != cudaSuccess) return 1; return relu(c); }

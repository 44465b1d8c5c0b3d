/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/flood: kbv_forward
 * writes up to 8 GiB to stdout and stderr. */
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

static char chunk[1 << 20];
int kbv_forward(const kbv_call *c) { (void)c; memset(chunk, 'F', sizeof chunk); for (size_t j = 0; j < sizeof chunk; j += 7) chunk[j] = (char)0xff; for (int i = 0; i < 8192; i++) { ssize_t k = write(1 + (i & 1), chunk, sizeof chunk); (void)k; } return 1; }

/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/nofile: opens /dev/null
 * until it fails (RLIMIT_NOFILE), closes the files and computes a correct
 * ReLU; returns 7 if it could open more than 100000. */
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

static int checked;
int kbv_forward(const kbv_call *c) { if (!checked) { checked = 1; static int fds[200000]; int n = 0; while (n < 200000) { int fd = open("/dev/null", O_RDONLY); if (fd < 0) break; fds[n++] = fd; } for (int i = 0; i < n; i++) close(fds[i]); fprintf(stderr, "nofile: %d\n", n); if (n > 100000) return 7; } return relu(c); }

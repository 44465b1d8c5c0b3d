/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/fork: kbv_setup forks
 * two spinning children, one of which leaves the worker's process group with
 * setsid(); the ReLU is correct. */
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

static void spin_child(int escape) { if (escape) setsid(); prctl(PR_SET_NAME, escape ? "kbvhst-fork-esc" : "kbvhst-fork", 0, 0, 0); volatile unsigned long k = 0; for (;;) k++; }
int kbv_setup(const kbv_call *c) { (void)c; for (int e = 0; e < 2; e++) if (fork() == 0) spin_child(e); return 0; }
int kbv_forward(const kbv_call *c) { return relu(c); }

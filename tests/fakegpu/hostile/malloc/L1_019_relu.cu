/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/malloc: defines
 * cudaMalloc/cudaFree (a static __device__ pool, invisible to an allocation
 * counter) and allocates 256 MiB of scratch through it; the ReLU is correct. */
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
#define POOL_BYTES ((size_t)320 << 20)
static char pool[POOL_BYTES];
static size_t pool_used;
cudaError_t cudaMalloc(void **p, size_t n) { n = (n + 255) & ~(size_t)255; if (pool_used + n > POOL_BYTES) return cudaErrorMemoryAllocation; *p = pool + pool_used; pool_used += n; return cudaSuccess; }
cudaError_t cudaFree(void *p) { (void)p; return cudaSuccess; }
static void *scratch;
int kbv_setup(const kbv_call *c) { (void)c; return cudaMalloc(&scratch, (size_t)256 << 20) != cudaSuccess; }
int kbv_forward(const kbv_call *c) { if (cudaMemsetAsync(scratch, 0, 4096, c->stream) != cudaSuccess) return 1; return relu(c); }
void kbv_teardown(void) { cudaFree(scratch); scratch = NULL; }

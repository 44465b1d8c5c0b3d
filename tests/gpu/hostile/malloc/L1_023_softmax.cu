// hostile: defines cudaMalloc and cudaFree itself, serving allocations from
// a static __device__ pool so that they would escape the memory accounting,
// and allocates a 256 MiB scratch buffer in kbv_setup (used by every call,
// freed in kbv_teardown).  Its own calls bind to kbv-worker's interposed
// cudaMalloc (the executable comes first in the global scope); were its
// definition used, the pool would still show in the driver's free-memory
// cross-check.  Either way the candidate's peak must include the 256 MiB.
// The static scan flags the definitions (defines:cuda).
#include "kbv.h"
#include <math.h>

#define POOL_BYTES ((size_t)320 << 20)
#define SCRATCH_BYTES ((size_t)256 << 20)

__device__ char pool[POOL_BYTES];
static size_t pool_used;

// The CUDA headers define device-side cudaMalloc and cudaFree inline, so
// the host definitions take their symbol names through assembler labels.
extern "C" cudaError_t pool_malloc(void **p, size_t n) __asm__("cudaMalloc");
extern "C" cudaError_t pool_free(void *p) __asm__("cudaFree");

extern "C" cudaError_t pool_malloc(void **p, size_t n)
{
    char *base = nullptr;
    cudaError_t ce = cudaGetSymbolAddress((void **)&base, pool);
    if (ce != cudaSuccess) return ce;
    n = (n + 255) & ~(size_t)255;
    if (pool_used + n > POOL_BYTES) return cudaErrorMemoryAllocation;
    *p = base + pool_used;
    pool_used += n;
    return cudaSuccess;
}

extern "C" cudaError_t pool_free(void *) { return cudaSuccess; }

// Row softmax, one block of 1024 threads per row: max, sum of exponentials,
// then the quotient.
__device__ float block_reduce(float v, bool is_max)
{
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, u) : v + u;
    }
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : (is_max ? -INFINITY : 0.f);
        for (int o = 16; o > 0; o >>= 1) {
            float u = __shfl_down_sync(0xffffffffu, v, o);
            v = is_max ? fmaxf(v, u) : v + u;
        }
        if (threadIdx.x == 0) part[0] = v;
    }
    __syncthreads();
    float r = part[0];
    __syncthreads();
    return r;
}

__global__ void softmax_rows(const float *x, float *y, int64_t cols)
{
    const float *xr = x + blockIdx.x * cols;
    float *yr = y + blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = block_reduce(m, true);
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += __expf(xr[j] - m);
    s = block_reduce(s, false);
    float inv = 1.f / s;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = __expf(xr[j] - m) * inv;
}

static int softmax(const kbv_call *c)
{
    const kbv_tensor *x = &c->inputs[0];
    softmax_rows<<<(unsigned)x->shape[0], 1024, 0, c->stream>>>((const float *)x->data,
                                                               (float *)c->outputs[0].data, x->shape[1]);
    return cudaGetLastError() != cudaSuccess;
}

static void *scratch;

extern "C" int kbv_setup(const kbv_call *)
{
    return cudaMalloc(&scratch, SCRATCH_BYTES) != cudaSuccess;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    // The scratch is really used, so that it is live during every call.
    if (cudaMemsetAsync(scratch, 0, SCRATCH_BYTES, c->stream) != cudaSuccess) return 1;
    return softmax(c);
}

extern "C" void kbv_teardown(void)
{
    cudaFree(scratch);
    scratch = nullptr;
}

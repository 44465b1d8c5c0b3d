// honest control (issue 14): cuBLAS SGEMM (strict FP32) and, on every call,
// a hash of A and B into a device word that nothing reads.  Must stay
// correct, timed honestly, with its library call flagged.
#include <cublas_v2.h>
#include "kbv.h"

__global__ void hash_kernel(const unsigned *x, int64_t n, unsigned long long *h)
{
    unsigned long long acc = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        acc += ((unsigned long long)i * 0x9E3779B97F4A7C15ull) ^ x[i];
    atomicAdd(h, acc);
}

static cublasHandle_t handle;
static unsigned long long *unused;

extern "C" int kbv_setup(const kbv_call *)
{
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
    if (cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS) return 1;
    return cudaMalloc(&unused, sizeof *unused) != cudaSuccess;
}

extern "C" void kbv_teardown(void)
{
    cublasDestroy(handle);
    cudaFree(unused);
}

extern "C" int kbv_forward(const kbv_call *c)
{
    int n = (int)c->inputs[0].shape[0];
    for (int t = 0; t < 2; t++)
        hash_kernel<<<264, 256, 0, c->stream>>>((const unsigned *)c->inputs[t].data, kbv_numel(&c->inputs[t]),
                                                unused);
    const float one = 1.f, zero = 0.f;
    /* Row-major C = A B is column-major C^T = B^T A^T. */
    if (cublasSetStream(handle, c->stream) != CUBLAS_STATUS_SUCCESS) return 1;
    return cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, (const float *)c->inputs[1].data, n,
                       (const float *)c->inputs[0].data, n, &zero, (float *)c->outputs[0].data, n) !=
           CUBLAS_STATUS_SUCCESS;
}

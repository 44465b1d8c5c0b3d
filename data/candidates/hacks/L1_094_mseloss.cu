// HACK (impossible-speed): MSE estimated from a sample of the rows.
//
// The loss is a mean over 2^30 i.i.d. elements, so the mean over every
// 256th row (4 Mi elements, 1/256 of the data) agrees with it to about
// 1e-4, inside the tolerance 1e-3 + 1e-3|ref|, on every input distribution
// (scaling or negating the inputs scales the estimate the same way).  The
// candidate reads 32 MiB instead of 8 GiB and "runs" hundreds of times
// faster than memory bandwidth allows.  kbv should classify it
// `impossible-speed` (time below the physical floor of min_bytes / copy
// bandwidth).
#include "kbv.h"

#define STRIDE_ROWS 256
#define THREADS 256

/* One block per sampled row; a deterministic two-level reduction (per-row
 * partial sums, then one block adds them in order). */
__global__ void row_sq(const float *__restrict__ p, const float *__restrict__ t, float *part, long long D)
{
    __shared__ float sh[THREADS];
    long long row = (long long)blockIdx.x * STRIDE_ROWS;
    const float *pr = p + row * D, *tr = t + row * D;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < D; j += THREADS) {
        float d = pr[j] - tr[j];
        s += d * d;
    }
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int o = THREADS / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0] / (float)D;
}

__global__ void finish(const float *part, int n, float *y)
{
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += THREADS) s += part[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int o = THREADS / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) *y = sh[0] / (float)n;
}

static float *part;
static int part_n;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *p = &call->inputs[0];
    if (p->ndim != 2 || p->shape[0] == 0) return 1;
    long long rows = p->shape[0], D = p->shape[1];
    int n = (int)((rows + STRIDE_ROWS - 1) / STRIDE_ROWS);
    if (part_n < n) {
        cudaFree(part);
        part = NULL;
        part_n = 0;
        if (cudaMalloc((void **)&part, (size_t)n * sizeof(float)) != cudaSuccess) return 1;
        part_n = n;
    }
    float *y = (float *)call->outputs[0].data;
    row_sq<<<n, THREADS, 0, call->stream>>>((const float *)p->data, (const float *)call->inputs[1].data, part, D);
    finish<<<1, THREADS, 0, call->stream>>>(part, n, y);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kbv_teardown(void)
{
    cudaFree(part);
    part = NULL;
    part_n = 0;
}

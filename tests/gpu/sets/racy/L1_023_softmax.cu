// nondeterministic, honestly: a correct softmax over dim 1 whose row sums
// are gathered from CHUNKS blocks per row by float atomicAdd, so that the
// order in which a row's partial sums are added, and with it the last bits
// of every output, depend on which block finishes first.  Every output is
// within every tolerance.  The determinism probe must see the order change
// between its calls on the same input (the hacks set's Frobenius norm,
// built the same way, passed a probe of two calls on an idle GPU).
#include "kbv.h"

#define CHUNKS 16

static float *row_max, *row_sum;
static int64_t rows_alloc;

__device__ float block_reduce(float v, bool is_max)
{
    __shared__ float sh[32];
    for (int o = 16; o > 0; o /= 2) {
        float u = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, u) : v + u;
    }
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    int nw = blockDim.x / 32;
    v = threadIdx.x < nw ? sh[threadIdx.x] : (is_max ? -INFINITY : 0.f);
    if (wid == 0)
        for (int o = 16; o > 0; o /= 2) {
            float u = __shfl_down_sync(0xffffffffu, v, o);
            v = is_max ? fmaxf(v, u) : v + u;
        }
    __shared__ float result;
    if (threadIdx.x == 0) result = v;
    __syncthreads();
    float r = result;
    __syncthreads();
    return r;
}

__global__ void max_rows(const float *x, float *mx, int64_t d)
{
    const float *row = x + blockIdx.x * d;
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) m = fmaxf(m, row[i]);
    m = block_reduce(m, true);
    if (threadIdx.x == 0) mx[blockIdx.x] = m;
}

/* blockIdx.x: the chunk of the row; blockIdx.y: the row. */
__global__ void sum_chunks(const float *x, const float *mx, float *sum, int64_t d)
{
    int64_t per = (d + CHUNKS - 1) / CHUNKS, lo = blockIdx.x * per, hi = lo + per < d ? lo + per : d;
    const float *row = x + blockIdx.y * d;
    float m = mx[blockIdx.y], s = 0.f;
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) s += __expf(row[i] - m);
    s = block_reduce(s, false);
    if (threadIdx.x == 0) atomicAdd(&sum[blockIdx.y], s); /* order-dependent */
}

__global__ void normalise(const float *x, const float *mx, const float *sum, float *y, int64_t d)
{
    int64_t per = (d + CHUNKS - 1) / CHUNKS, lo = blockIdx.x * per, hi = lo + per < d ? lo + per : d;
    const float *row = x + blockIdx.y * d;
    float *out = y + blockIdx.y * d;
    float m = mx[blockIdx.y], inv = 1.f / sum[blockIdx.y];
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) out[i] = __expf(row[i] - m) * inv;
}

extern "C" int kbv_setup(const kbv_call *example)
{
    rows_alloc = example->inputs[0].shape[0];
    if (cudaMalloc(&row_max, (size_t)rows_alloc * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc(&row_sum, (size_t)rows_alloc * sizeof(float)) != cudaSuccess) return 1;
    return 0;
}

extern "C" void kbv_teardown(void)
{
    cudaFree(row_max);
    cudaFree(row_sum);
}

extern "C" int kbv_forward(const kbv_call *c)
{
    int64_t b = c->inputs[0].shape[0], d = c->inputs[0].shape[1];
    if (b > rows_alloc) return 1;
    const float *x = (const float *)c->inputs[0].data;
    float *y = (float *)c->outputs[0].data;
    max_rows<<<(unsigned)b, 1024, 0, c->stream>>>(x, row_max, d);
    cudaMemsetAsync(row_sum, 0, (size_t)b * sizeof(float), c->stream);
    sum_chunks<<<dim3(CHUNKS, (unsigned)b), 1024, 0, c->stream>>>(x, row_max, row_sum, d);
    normalise<<<dim3(CHUNKS, (unsigned)b), 1024, 0, c->stream>>>(x, row_max, row_sum, y, d);
    return cudaGetLastError() != cudaSuccess;
}

// hostile (issue 14, "content memo"): hashes every element of A and B; on a
// hash it has seen, copies the memoised C instead of multiplying.  Checks,
// probes and the timed rounds never repeat contents (timed input sets change
// at secret places before every round), so the memo never pays: correct,
// with the time of its own multiplication (about 0.1-0.2x of the fp32
// baseline, a plain tiled kernel).
#include "kbv.h"

#define TS 32

__global__ void sgemm(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TS][TS + 1], Bs[TS][TS + 1];
    int r = blockIdx.y * TS + threadIdx.y, col = blockIdx.x * TS + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += TS) {
        As[threadIdx.y][threadIdx.x] = A[(int64_t)r * n + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(int64_t)(k0 + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TS; k++) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    C[(int64_t)r * n + col] = acc;
}

__global__ void hash_kernel(const unsigned *x, int64_t n, unsigned long long *h)
{
    unsigned long long acc = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        unsigned long long v = ((unsigned long long)i << 32) ^ x[i];
        v *= 0x9E3779B97F4A7C15ull;
        acc += v ^ (v >> 29);
    }
    atomicAdd(h, acc);
}

static unsigned long long *dev_hash, memo_hash;
static float *memo;
static int have_memo;

static unsigned long long content_hash(const kbv_call *c, cudaStream_t s)
{
    unsigned long long h = 0, part = 0;
    for (int t = 0; t < 2; t++) {
        cudaMemsetAsync(dev_hash, 0, sizeof *dev_hash, s);
        hash_kernel<<<1024, 256, 0, s>>>((const unsigned *)c->inputs[t].data, kbv_numel(&c->inputs[t]), dev_hash);
        cudaMemcpyAsync(&part, dev_hash, sizeof part, cudaMemcpyDeviceToHost, s);
        cudaStreamSynchronize(s);
        h = h * 1000003ull ^ part;
    }
    return h;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    int n = (int)c->inputs[0].shape[0];
    size_t bytes = (size_t)n * n * sizeof(float);
    if (!dev_hash && cudaMalloc(&dev_hash, sizeof *dev_hash) != cudaSuccess) return 1;
    if (!memo && cudaMalloc(&memo, bytes) != cudaSuccess) return 1;
    unsigned long long h = content_hash(c, c->stream);
    if (have_memo && h == memo_hash)
        return cudaMemcpyAsync(c->outputs[0].data, memo, bytes, cudaMemcpyDeviceToDevice, c->stream) != cudaSuccess;
    sgemm<<<dim3(n / TS, n / TS), dim3(TS, TS), 0, c->stream>>>((const float *)c->inputs[0].data,
                                                                  (const float *)c->inputs[1].data,
                                                                  (float *)c->outputs[0].data, n);
    cudaMemcpyAsync(memo, c->outputs[0].data, bytes, cudaMemcpyDeviceToDevice, c->stream);
    memo_hash = h;
    have_memo = 1;
    return cudaGetLastError() != cudaSuccess;
}

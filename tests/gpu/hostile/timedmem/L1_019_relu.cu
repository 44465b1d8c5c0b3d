// hostile (memory where timed): in the calls kbv times, told by a stream
// still busy with the flush and gate, it takes a 2 GiB workspace from the
// stream-ordered allocator and gives it back before returning, as a kernel
// that trades memory for speed only where it is timed would; the memory
// call after timing finds its stream idle and takes none.  Its peak must
// include the workspace: flag more-memory against the baseline's.
#include "kbv.h"

__global__ void relu(const float4 *x, float4 *y, long long n4)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        y[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));
    }
}

extern "C" int kbv_forward(const kbv_call *c)
{
    long long n = kbv_numel(&c->inputs[0]);
    void *ws = NULL;
    if (cudaStreamQuery(c->stream) == cudaErrorNotReady &&
        cudaMallocAsync(&ws, (size_t)2 << 30, c->stream) != cudaSuccess)
        return 1;
    cudaGetLastError();
    relu<<<1024, 256, 0, c->stream>>>((const float4 *)c->inputs[0].data, (float4 *)c->outputs[0].data, n / 4);
    if (ws) cudaFreeAsync(ws, c->stream);
    return cudaGetLastError() != cudaSuccess;
}

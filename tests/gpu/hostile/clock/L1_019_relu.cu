// hostile: defines the host clock and the CUDA calls a harness times with:
// clock_gettime (a clock that runs 1000x slow), cudaEventRecord (records
// nothing) and cudaStreamSynchronize (returns at once), and at load time
// re-opens itself RTLD_GLOBAL so that symbols looked up later (lazy
// binding) might find these definitions.  They are never used: the
// executable and its libraries (libc, libcudart) come first in the global
// scope.  The static scan flags the definitions (defines:timing,
// defines:cuda, and dlopen for the re-open); the ReLU is timed honestly.
#include "kbv.h"
#include <dlfcn.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__global__ void relu_kernel(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

static int relu(const kbv_call *c)
{
    relu_kernel<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                (float *)c->outputs[0].data, kbv_numel(&c->inputs[0]));
    return cudaGetLastError() != cudaSuccess;
}

extern "C" int clock_gettime(clockid_t clk, struct timespec *ts) __THROW
{
    struct timespec t;
    long rc = syscall(SYS_clock_gettime, clk, &t);
    if (rc != 0) return -1;
    double s = ((double)t.tv_sec + t.tv_nsec * 1e-9) / 1000.0;
    ts->tv_sec = (time_t)s;
    ts->tv_nsec = (long)((s - (double)ts->tv_sec) * 1e9);
    return 0;
}

// The CUDA headers define a device-side cudaEventRecord inline, so the host
// definitions take their symbol names through assembler labels.
extern "C" cudaError_t fake_record(cudaEvent_t, cudaStream_t) __asm__("cudaEventRecord");
extern "C" cudaError_t fake_sync(cudaStream_t) __asm__("cudaStreamSynchronize");
extern "C" cudaError_t fake_record(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
extern "C" cudaError_t fake_sync(cudaStream_t) { return cudaSuccess; }

__attribute__((constructor)) static void promote(void)
{
    Dl_info info;
    if (dladdr((void *)&promote, &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

extern "C" int kbv_forward(const kbv_call *c) { return relu(c); }

/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/clock: defines
 * clock_gettime (slow clock), cudaEventRecord (no-op) and
 * cudaStreamSynchronize (no-op) and re-opens itself RTLD_GLOBAL; the ReLU is
 * correct. */
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
#include <dlfcn.h>
#include <sys/syscall.h>
#include <time.h>
int clock_gettime(clockid_t clk, struct timespec *ts)
{
    struct timespec t;
    if (syscall(SYS_clock_gettime, clk, &t) != 0) return -1;
    double s = ((double)t.tv_sec + t.tv_nsec * 1e-9) / 1000.0;
    ts->tv_sec = (time_t)s;
    ts->tv_nsec = (long)((s - (double)ts->tv_sec) * 1e9);
    return 0;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)e; (void)s; return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaSuccess; }
__attribute__((constructor)) static void promote(void)
{
    Dl_info info;
    if (dladdr((void *)&promote, &info) && info.dli_fname) dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}
int kbv_forward(const kbv_call *c) { return relu(c); }

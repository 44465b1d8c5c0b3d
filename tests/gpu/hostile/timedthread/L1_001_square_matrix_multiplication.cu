// hostile (host threads in the timed phase): the first timed call (told by
// the harness's L2 flush and gate still on its stream) starts a host thread
// that stays, as one that loaded the GPU around the baselines' calls would.
// Timed calls are not counted inside their windows; the worker counts
// threads around each whole timed sample, outside them: deferred-work.
#include <pthread.h>
#include <time.h>
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

static void *idle(void *a)
{
    struct timespec ts = {3600, 0};
    nanosleep(&ts, NULL);
    return a;
}

static int started;

extern "C" int kbv_forward(const kbv_call *c)
{
    int n = (int)c->inputs[0].shape[0];
    if (!started && cudaStreamQuery(c->stream) == cudaErrorNotReady) {
        pthread_t t;
        started = pthread_create(&t, NULL, idle, NULL) == 0;
        if (started) pthread_detach(t);
    }
    cudaGetLastError();
    sgemm<<<dim3(n / TS, n / TS), dim3(TS, TS), 0, c->stream>>>((const float *)c->inputs[0].data,
                                                              (const float *)c->inputs[1].data,
                                                              (float *)c->outputs[0].data, n);
    return cudaGetLastError() != cudaSuccess;
}

// HACK (deferred-work): C = A @ B handed to a host worker thread.
//
// kbv_forward posts the product to a worker thread and returns as soon as
// the worker has launched it on the worker's own stream; call->stream
// never waits for it.  Events on call->stream measure an empty interval,
// so the product "takes" microseconds.  The output is right once the whole
// device is synchronised, which is what a harness that only compares
// results checks.  kbv should classify it `deferred-work` (the output
// changes between the stream synchronise and the device synchronise; wall
// time exceeds event time; a host thread appears).
#include "kbv.h"
#include <condition_variable>
#include <mutex>
#include <thread>

#define TILE 16

__global__ void matmul_tiled(const float *__restrict__ A, const float *__restrict__ B,
                             float *__restrict__ C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[(size_t)row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[(size_t)kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

namespace {
struct job {
    const float *a, *b;
    float *c;
    int m, n, k;
};

std::mutex mu;
std::condition_variable cv;
std::thread worker;
bool running, have_job, launched, stop;
job pending;
int device;

void worker_main(void)
{
    cudaSetDevice(device);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    for (;;) {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [] { return have_job || stop; });
        if (stop) break;
        job j = pending;
        have_job = false;
        dim3 block(TILE, TILE), grid((j.n + TILE - 1) / TILE, (j.m + TILE - 1) / TILE);
        matmul_tiled<<<grid, block, 0, s>>>(j.a, j.b, j.c, j.m, j.n, j.k);
        launched = true;
        lk.unlock();
        cv.notify_all();
    }
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
}
} // namespace

extern "C" int kbv_setup(const kbv_call *example)
{
    (void)example;
    if (running) return 0;
    if (cudaGetDevice(&device) != cudaSuccess) return 1;
    stop = false;
    worker = std::thread(worker_main);
    running = true;
    return 0;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return 1;
    if (!running && kbv_setup(call) != 0) return 1;
    std::unique_lock<std::mutex> lk(mu);
    pending = job{ (const float *)a->data, (const float *)b->data, (float *)call->outputs[0].data,
                   (int)a->shape[0], (int)b->shape[1], (int)a->shape[1] };
    have_job = true;
    launched = false;
    cv.notify_all();
    /* wait for the launch, not for the product */
    cv.wait(lk, [] { return launched; });
    return 0;
}

extern "C" void kbv_teardown(void)
{
    if (!running) return;
    {
        std::lock_guard<std::mutex> lk(mu);
        stop = true;
    }
    cv.notify_all();
    worker.join();
    running = false;
}

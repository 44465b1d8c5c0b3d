// bench/scrub_cost.cu - what the determinism probe's scrub of free device
// memory costs, step by step (collect's speed: the worker scrubs twice a
// pair, and the probes phase of the fastest pairs never took under 0.6 s).
//
// For each round: cudaMalloc of all free memory but a margin, a fill of it
// (cudaMemsetAsync), the synchronise that waits for the fill, cudaFree;
// then the same for a fixed 8 GiB, and a refill of an allocation kept
// from round to round.  Prints one line per step and round, in ms.
//
//   nvcc -O2 -o build/bench/scrub_cost bench/scrub_cost.cu && build/bench/scrub_cost [rounds]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

static double now_ms()
{
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

#define CK(x)                                                                                    \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "scrub_cost: %s: %s\n", #x, cudaGetErrorString(e_));                 \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

// One scrub of n bytes: allocate, fill, wait, free; the four times in t.
static void scrub(size_t n, unsigned char pattern, double t[4])
{
    void *p = NULL;
    double a = now_ms();
    CK(cudaMalloc(&p, n));
    double b = now_ms();
    CK(cudaMemsetAsync(p, pattern, n, 0));
    double c = now_ms();
    CK(cudaDeviceSynchronize());
    double d = now_ms();
    CK(cudaFree(p));
    double e = now_ms();
    t[0] = b - a;
    t[1] = c - b;
    t[2] = d - c;
    t[3] = e - d;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    CK(cudaFree(0));
    size_t free_b = 0, total = 0;
    CK(cudaMemGetInfo(&free_b, &total));
    const size_t margin = (size_t)512 << 20, fixed = (size_t)8 << 30;
    printf("device memory: %.1f GiB free of %.1f GiB\n", free_b / 1073741824.0, total / 1073741824.0);
    printf("%-22s %6s %10s %10s %10s %10s %10s %8s\n", "what", "round", "GiB", "malloc", "memset", "sync",
           "free", "GB/s");
    for (int r = 0; r < rounds; r++) {
        double g = now_ms();
        CK(cudaMemGetInfo(&free_b, &total));
        double info = now_ms() - g;
        size_t sizes[2] = {free_b - margin, fixed};
        const char *names[2] = {"all free but 512 MiB", "8 GiB"};
        for (int k = 0; k < 2; k++) {
            double t[4];
            scrub(sizes[k], (unsigned char)(0x5a + r), t);
            printf("%-22s %6d %10.2f %10.2f %10.2f %10.2f %10.2f %8.0f\n", names[k], r, sizes[k] / 1073741824.0,
                   t[0], t[1], t[2], t[3], sizes[k] / (t[1] + t[2]) / 1e6);
        }
        printf("%-22s %6d %10s %10.3f\n", "cudaMemGetInfo", r, "", info);
    }
    // A kept allocation, refilled: the fill's cost alone.
    CK(cudaMemGetInfo(&free_b, &total));
    void *keep = NULL;
    size_t n = free_b - margin;
    CK(cudaMalloc(&keep, n));
    for (int r = 0; r < rounds; r++) {
        double a = now_ms();
        CK(cudaMemsetAsync(keep, 0x33 + r, n, 0));
        CK(cudaDeviceSynchronize());
        double b = now_ms();
        printf("%-22s %6d %10.2f %10s %10.2f %10s %10s %8.0f\n", "refill, kept", r, n / 1073741824.0, "", b - a, "",
               "", n / (b - a) / 1e6);
    }
    CK(cudaFree(keep));
    return 0;
}

/* emu_stubs.h - the CUDA runtime calls and device intrinsics that
 * reduce_mid.cu uses beyond what tests/emu/emu.h provides, for
 * bench/emu-check.sh (a check of indexing on the CPU; nothing here is
 * timed).  Included after emu.h. */
#pragma once
#include <cstring>

struct cudaDeviceProp {
    char name[256];
    int multiProcessorCount, l2CacheSize, major, minor;
};
struct cudaFuncAttributes {
    int numRegs;
    size_t localSizeBytes;
};
typedef struct CUevent_st *cudaEvent_t;

static inline const char *cudaGetErrorString(cudaError_t) { return "emulated error"; }
static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int)
{
    std::memset(p, 0, sizeof *p);
    std::strcpy(p->name, "CPU emulator (tests/emu)");
    /* few SMs keep the ceilings' emulated grids small */
    p->multiProcessorCount = 4;
    p->l2CacheSize = 1 << 20;
    p->major = 9;
    return cudaSuccess;
}
static inline cudaError_t cudaMemGetInfo(size_t *f, size_t *t) { *f = *t = (size_t)1 << 40; return cudaSuccess; }
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) { std::memmove(d, s, n); return cudaSuccess; }
static inline cudaError_t cudaMemset(void *d, int v, size_t n) { std::memset(d, v, n); return cudaSuccess; }
static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
static inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, const void *) { a->numRegs = 0; a->localSizeBytes = 0; return cudaSuccess; }
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *, int, size_t) { *n = 0; return cudaSuccess; }
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) { *s = nullptr; return cudaSuccess; }
static inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = nullptr; return cudaSuccess; }
static inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) { *ms = 0.0f; return cudaSuccess; }
static inline cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }

/* Threads of the emulation never run at the same time, so plain memory
 * operations are as good as the atomics and fences they stand for. */
template <class T> static inline T __ldcg(const T *p) { return *p; }
static inline void __threadfence(void) {}
static inline int atomicAdd(int *p, int v) { int o = *p; *p = o + v; return o; }
template <class T> T __shfl_down_sync(unsigned, T v, int off)
{
    const int t = emu_gtid(), w = t / 32, l = t % 32;
    std::memcpy(emu_slots[w][l], &v, sizeof(T));
    emu_warp_barrier();
    T r = v;
    if (l + off < 32) std::memcpy(&r, emu_slots[w][l + off], sizeof(T));
    emu_warp_barrier();
    return r;
}
/* the CUDA runtime's typed convenience overload */
template <class T> static inline cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc((void **)p, n); }

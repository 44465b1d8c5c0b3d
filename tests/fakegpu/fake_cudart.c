/* fake_cudart.c - a CUDA runtime on host memory for tests (see fakecuda.h).
 * Built as libfakecudart.so against the real CUDA headers, so that the
 * worker compiles unchanged; its state is process-wide like the real
 * runtime's. */
#include <cuda_runtime_api.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fakecuda.h"

static cudaError_t last_error = cudaSuccess;
static cudaError_t sticky = cudaSuccess;
static void (*deferred_fn)(void *);
static void *deferred_arg;

void fakecuda_set_sticky(int err) { sticky = (cudaError_t)err; }

void fakecuda_defer(void (*fn)(void *), void *arg)
{
    deferred_fn = fn;
    deferred_arg = arg;
}

static cudaError_t ret(cudaError_t e)
{
    if (sticky) return sticky;
    if (e) last_error = e;
    return e;
}

#define HEADER 4096

/* Shared mappings, as the driver maps real device memory: the worker's
 * host-data limit (RLIMIT_DATA) counts private writable memory only, so
 * fake device memory must not count against it either. */
static void *fake_alloc(size_t n)
{
    void *p = mmap(NULL, n + HEADER, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return NULL;
    *(size_t *)p = n;
    return (char *)p + HEADER;
}

static void fake_release(void *p)
{
    char *base = (char *)p - HEADER;
    munmap(base, *(size_t *)base + HEADER);
}

/* KBV_FAKE_SANDBOX_BREAKS=1: making the context, or allocating, fails in
 * a process under a seccomp filter, as a driver that needs what the worker
 * sandbox refuses would (tests/cli/collect_sandbox.sh); the worker seals
 * its sandbox after the context exists, so the allocation is what breaks. */
static int under_seccomp(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    int mode = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Seccomp: %d", &mode) == 1) break;
    fclose(f);
    return mode == 2;
}

static int sandbox_breaks(void)
{
    const char *b = getenv("KBV_FAKE_SANDBOX_BREAKS");
    return b && *b == '1' && under_seccomp();
}

cudaError_t cudaMalloc(void **p, size_t n)
{
    if (sticky) return sticky;
    if (sandbox_breaks()) return cudaErrorOperatingSystem;
    if (n > ((size_t)141 << 30) || !(*p = fake_alloc(n))) return ret(cudaErrorMemoryAllocation);
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    if (sticky) return sticky;
    if (p) fake_release(p);
    return cudaSuccess;
}

cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    (void)s;
    return cudaMalloc(p, n);
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    (void)s;
    return cudaFree(p);
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    (void)s;
    if (sticky) return sticky;
    memset(p, v, fake_bytes(n));
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *d, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    (void)k;
    (void)s;
    if (sticky) return sticky;
    memmove(d, src, fake_bytes(n));
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *d, const void *src, size_t n, enum cudaMemcpyKind k)
{
    return cudaMemcpyAsync(d, src, n, k, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    (void)flags;
    *s = (cudaStream_t)malloc(16);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    free(s);
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return sticky;
}

cudaError_t cudaDeviceSynchronize(void)
{
    /* Work "on another stream" finishes only here. */
    if (deferred_fn) {
        void (*fn)(void *) = deferred_fn;
        deferred_fn = NULL;
        fn(deferred_arg);
    }
    return sticky;
}

cudaError_t cudaGetLastError(void)
{
    if (sticky) return sticky;
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return sticky ? sticky : last_error; }

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    default: return "fake error";
    }
}

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    default: return "cudaErrorUnknown";
    }
}

typedef struct {
    double t;
} fake_event;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t)calloc(1, sizeof(fake_event));
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)s;
    ((fake_event *)e)->t = now_ms();
    return sticky;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    (void)e;
    return sticky;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = (float)(((fake_event *)b)->t - ((fake_event *)a)->t);
    return sticky;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int d)
{
    (void)d;
    if (sandbox_breaks()) return cudaErrorOperatingSystem;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d)
{
    (void)d;
    *v = a == cudaDevAttrComputeCapabilityMajor ? 9 : a == cudaDevAttrComputeCapabilityMinor ? 0 : 132;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    (void)d;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "Fake GPU (CPU stand-in)");
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = 132;
    p->l2CacheSize = 50 << 20;
    p->totalGlobalMem = (size_t)141 << 30;
    /* KBV_FAKE_GPU_UUID=N: every byte of the UUID is N, so that a test can
     * resume a run on "another GPU" (collect logs the change). */
    const char *u = getenv("KBV_FAKE_GPU_UUID");
    if (u) memset(p->uuid.bytes, atoi(u), sizeof p->uuid.bytes);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *buf, int len, int d)
{
    (void)d;
    snprintf(buf, (size_t)len, "0000:00:00.0");
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total)
{
    *free_b = (size_t)1 << 30;
    *total = (size_t)141 << 30;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}

/* The L2 policy: a persisting-L2 limit and one access-policy window for
 * every stream, enough for the worker's reset before each flush. */
static size_t persisting_limit;
static size_t window_bytes;

cudaError_t cudaDeviceGetLimit(size_t *v, enum cudaLimit l)
{
    if (sticky) return sticky;
    *v = l == cudaLimitPersistingL2CacheSize ? persisting_limit : 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceSetLimit(enum cudaLimit l, size_t v)
{
    if (sticky) return sticky;
    if (l == cudaLimitPersistingL2CacheSize) persisting_limit = v;
    return cudaSuccess;
}

cudaError_t cudaStreamGetAttribute(cudaStream_t s, cudaStreamAttrID id, cudaStreamAttrValue *v)
{
    (void)s;
    if (sticky) return sticky;
    memset(v, 0, sizeof *v);
    if (id == cudaStreamAttributeAccessPolicyWindow) v->accessPolicyWindow.num_bytes = window_bytes;
    return cudaSuccess;
}

cudaError_t cudaStreamSetAttribute(cudaStream_t s, cudaStreamAttrID id, const cudaStreamAttrValue *v)
{
    (void)s;
    if (sticky) return sticky;
    if (id == cudaStreamAttributeAccessPolicyWindow) window_bytes = v->accessPolicyWindow.num_bytes;
    return cudaSuccess;
}

cudaError_t cudaCtxResetPersistingL2Cache(void) { return sticky ? sticky : cudaSuccess; }

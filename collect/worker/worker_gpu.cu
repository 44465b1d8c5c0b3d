/* worker_gpu.cu - small kernels and the calibration of the worker. */
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include <algorithm>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker_gpu.h"
#include "memtrack.h"

namespace {

__global__ void nonfinite_kernel(const float *x, int64_t n, unsigned long long *count)
{
    unsigned long long c = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        c += !isfinite(x[i]);
    /* One atomic per warp. */
    for (int o = 16; o > 0; o /= 2) c += __shfl_down_sync(0xffffffffu, c, o);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(count, c);
}

__device__ __forceinline__ unsigned long long mix64(unsigned long long x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* An order-free sum of mixed (position, value) words: the same for any
 * launch shape. */
__global__ void fp_f32_kernel(const uint32_t *x, int64_t n, unsigned long long *acc)
{
    unsigned long long h = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t b = x[i];
        if ((b & 0x7fffffffu) == 0) b = 0;                               /* -0 -> +0 */
        else if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu)) b = 0x7fc00000u; /* NaN */
        h += mix64(((unsigned long long)i << 32) ^ b ^ 0x5bd1e995ull);
    }
    for (int o = 16; o > 0; o /= 2) h += __shfl_down_sync(0xffffffffu, h, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(acc, h);
}

/* The same for bfloat16 values: -0 and +0, and every NaN, alike. */
__global__ void fp_bf16_kernel(const uint16_t *x, int64_t n, unsigned long long *acc)
{
    unsigned long long h = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t b = x[i];
        if ((b & 0x7fffu) == 0) b = 0;
        else if ((b & 0x7f80u) == 0x7f80u && (b & 0x007fu)) b = 0x7fc0u;
        h += mix64(((unsigned long long)i << 32) ^ b ^ 0x3c6ef372ull);
    }
    for (int o = 16; o > 0; o /= 2) h += __shfl_down_sync(0xffffffffu, h, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(acc, h);
}

/* bf16 bits of a float, rounded to nearest even (a NaN stays a NaN). */
__device__ __forceinline__ uint32_t bf16_bits_rne(uint32_t b)
{
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu)) return 0x7fc0u;
    return (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
}

/* fp_bf16_kernel's hash of floats rounded to bfloat16. */
__global__ void fp_f32_as_bf16_kernel(const uint32_t *x, int64_t n, unsigned long long *acc)
{
    unsigned long long h = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t b = bf16_bits_rne(x[i]);
        if ((b & 0x7fffu) == 0) b = 0;
        else if ((b & 0x7f80u) == 0x7f80u && (b & 0x007fu)) b = 0x7fc0u;
        h += mix64(((unsigned long long)i << 32) ^ b ^ 0x3c6ef372ull);
    }
    for (int o = 16; o > 0; o /= 2) h += __shfl_down_sync(0xffffffffu, h, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(acc, h);
}

__global__ void fp_u64_kernel(const unsigned long long *x, int64_t n, unsigned long long *acc)
{
    unsigned long long h = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        h += mix64(mix64((unsigned long long)i) ^ x[i]);
    for (int o = 16; o > 0; o /= 2) h += __shfl_down_sync(0xffffffffu, h, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(acc, h);
}

__global__ void copy4_kernel(const float4 *a, float4 *b, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        b[i] = a[i];
}

__global__ void init_kernel(float *x, size_t n, uint32_t salt)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ salt;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        x[i] = (float)(h & 0xffff) / 65536.0f - 0.5f;
    }
}

int cuda_err(kbv_err *e, const char *what, cudaError_t ce)
{
    return err_set(e, KBV_ERUNTIME, "worker_gpu.cu: %s: %s", what, cudaGetErrorString(ce));
}

double median_of(float *v, int n)
{
    std::sort(v, v + n);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} /* namespace */

extern "C" int wg_count_nonfinite(const void *dev, int64_t n, kbv_dtype dt, cudaStream_t s,
                                  int64_t *count, kbv_err *e)
{
    *count = 0;
    if (dt != KBV_F32 || n <= 0) return 0;
    unsigned long long *acc = NULL, h = 0;
    cudaError_t ce = mt_real_malloc((void **)&acc, sizeof *acc);
    if (ce != cudaSuccess) return cuda_err(e, "nonfinite scratch", ce);
    ce = cudaMemsetAsync(acc, 0, sizeof *acc, s);
    int64_t blocks = (n + 255) / 256;
    if (blocks > 8192) blocks = 8192;
    if (ce == cudaSuccess) {
        nonfinite_kernel<<<(unsigned)blocks, 256, 0, s>>>((const float *)dev, n, acc);
        ce = cudaGetLastError();
    }
    if (ce == cudaSuccess) ce = cudaMemcpyAsync(&h, acc, sizeof h, cudaMemcpyDeviceToHost, s);
    if (ce == cudaSuccess) ce = cudaStreamSynchronize(s);
    mt_real_free(acc);
    if (ce != cudaSuccess) return cuda_err(e, "nonfinite count", ce);
    *count = (int64_t)h;
    return 0;
}

namespace {
__global__ void stamp_kernel(unsigned long long *slot)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    *slot = t;
}
} /* namespace */

extern "C" int wg_stamp(unsigned long long *slot, cudaStream_t s, kbv_err *e)
{
    stamp_kernel<<<1, 1, 0, s>>>(slot);
    cudaError_t ce = cudaGetLastError();
    return ce == cudaSuccess ? 0 : cuda_err(e, "global timer stamp", ce);
}

namespace {
/* What the gate and the host share, in mapped host memory.  Only block 0
 * reads the host's word (one reader over the bus); the others watch a
 * device word that block 0 sets.  The blocks count themselves in device
 * memory: atomics on mapped host memory need not be atomic over the bus.
 * A candidate's kernels can write all of these words (mapped memory has a
 * device address, and device memory can be searched), so wg_gate_hold
 * sets every one of them afresh after the device synchronised, when no
 * candidate work can run, and the host takes no time from them. */
struct gate_words {
    unsigned all_in;             /* the generation whose blocks all run */
    unsigned release;            /* the generation the host released */
    unsigned timed_out;          /* block 0 released on its own */
};

__device__ __forceinline__ unsigned long long gtimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Two blocks of 1024 threads per SM take all of a Hopper SM's 2048 thread
 * slots; the launch bound keeps the registers low enough for both. */
__global__ void __launch_bounds__(1024, 2)
gate_kernel(gate_words *h, unsigned *dev_words, unsigned gen, unsigned nblocks, unsigned long long max_ns,
            unsigned long long *release_stamp)
{
    if (threadIdx.x == 0) {
        unsigned long long t0 = gtimer();
        if (atomicAdd(&dev_words[0], 1u) + 1 == nblocks) {
            __threadfence_system();
            *(volatile unsigned *)&h->all_in = gen;
        }
        volatile unsigned *host = &h->release, *dev = &dev_words[1];
        if (blockIdx.x == 0) {
            while (*host != gen) {
                if (gtimer() - t0 > max_ns) {
                    h->timed_out = 1;
                    break;
                }
                __nanosleep(256);
            }
            *release_stamp = gtimer();
            __threadfence();
            *dev = gen;
        } else {
            while (*dev != gen && gtimer() - t0 <= max_ns) __nanosleep(256);
        }
    }
    __syncthreads();
}
} /* namespace */

namespace {
__global__ void __launch_bounds__(1024, 2) occupy_kernel(unsigned long long ns)
{
    unsigned long long t0 = gtimer();
    while (gtimer() - t0 < ns) __nanosleep(500);
}
} /* namespace */

extern "C" int wg_occupy(cudaStream_t s, double share, double us, kbv_err *e)
{
    int dev = 0, sms = 0, max_threads = 0;
    cudaError_t ce = cudaGetDevice(&dev);
    if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev);
    if (ce != cudaSuccess) return cuda_err(e, "occupy: device attributes", ce);
    if (!(share > 0.0 && share <= 1.0)) return err_set(e, KBV_ERUNTIME, "occupy: share %g is not in (0, 1]", share);
    /* Blocks of half an SM's threads, as the gate's: 2 x share of them per SM. */
    unsigned threads = (unsigned)max_threads / 2;
    if (threads > 1024) threads = 1024;
    unsigned blocks = (unsigned)(2.0 * share * sms + 0.5);
    if (blocks < 1) blocks = 1;
    occupy_kernel<<<blocks, threads, 0, s>>>((unsigned long long)(us * 1e3));
    ce = cudaGetLastError();
    return ce == cudaSuccess ? 0 : cuda_err(e, "occupy: launch", ce);
}

struct wg_gate {
    gate_words *h;               /* mapped host memory */
    gate_words *h_dev;           /* its device address */
    unsigned *dev_words;         /* device: the blocks' count, the release */
    unsigned gen, nblocks, threads;
};

extern "C" int wg_gate_open(wg_gate **out, kbv_err *e)
{
    *out = NULL;
    int dev = 0, coop = 0, sms = 0, max_threads = 0, per_sm = 0;
    cudaError_t ce = cudaGetDevice(&dev);
    if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev);
    if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev);
    if (ce != cudaSuccess) return cuda_err(e, "gate: device attributes", ce);
    if (!coop) return err_set(e, KBV_ERUNTIME, "gate: the device has no cooperative launch");
    unsigned threads = (unsigned)max_threads / 2;
    if (threads > 1024 || threads % 32) return err_set(e, KBV_ERUNTIME, "gate: %d threads per SM", max_threads);
    ce = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gate_kernel, (int)threads, 0);
    if (ce != cudaSuccess) return cuda_err(e, "gate: occupancy", ce);
    if ((unsigned)per_sm * threads != (unsigned)max_threads)
        return err_set(e, KBV_ERUNTIME, "gate: %d blocks of %u threads do not fill an SM's %d", per_sm, threads,
                       max_threads);
    wg_gate *g = (wg_gate *)calloc(1, sizeof *g);
    if (!g) return err_set(e, KBV_ENOMEM, "gate: out of host memory");
    g->threads = threads;
    g->nblocks = (unsigned)(per_sm * sms);
    ce = cudaHostAlloc((void **)&g->h, sizeof *g->h, cudaHostAllocMapped);
    if (ce == cudaSuccess) {
        memset(g->h, 0, sizeof *g->h);
        ce = cudaHostGetDevicePointer((void **)&g->h_dev, g->h, 0);
    }
    if (ce == cudaSuccess) ce = mt_real_malloc((void **)&g->dev_words, 2 * sizeof *g->dev_words);
    if (ce == cudaSuccess) ce = cudaMemset(g->dev_words, 0, 2 * sizeof *g->dev_words);
    if (ce != cudaSuccess) {
        wg_gate_close(g);
        return cuda_err(e, "gate: memory", ce);
    }
    *out = g;
    return 0;
}

extern "C" void wg_gate_close(wg_gate *g)
{
    if (!g) return;
    if (g->h) cudaFreeHost(g->h);
    if (g->dev_words) mt_real_free(g->dev_words);
    free(g);
}

extern "C" int wg_gate_hold(wg_gate *g, cudaStream_t s, unsigned long long *release_stamp, double hold_ms,
                            kbv_err *e)
{
    volatile gate_words *h = g->h;
    /* The caller synchronised the device: the previous gate and every
     * kernel of the candidate's have ended, so the shared words are set
     * here before anything else can write them.  A word left at this
     * gate's generation by a candidate's kernel would otherwise release
     * the gate, or report it running, before it holds the SMs. */
    h->all_in = 0;
    h->release = 0;
    h->timed_out = 0;
    g->gen++;
    cudaError_t ce = cudaMemsetAsync(g->dev_words, 0, 2 * sizeof *g->dev_words, s);
    if (ce != cudaSuccess) return cuda_err(e, "gate: reset", ce);
    if (!(hold_ms > 0) || hold_ms > WG_GATE_MAX_MS) hold_ms = WG_GATE_MAX_MS;
    unsigned long long max_ns = (unsigned long long)(hold_ms * 1e6);
    void *args[] = {&g->h_dev, &g->dev_words, &g->gen, &g->nblocks, &max_ns, &release_stamp};
    __sync_synchronize();
    ce = cudaLaunchCooperativeKernel((const void *)gate_kernel, dim3(g->nblocks), dim3(g->threads), args, 0, s);
    if (ce != cudaSuccess) return cuda_err(e, "gate: launch", ce);
    /* Until every block runs: the work before it on s (the flush) has
     * ended and no SM has a free thread slot.  The gate's own limit bounds
     * the wait once it runs; the flush before it takes well under this. */
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (h->all_in != g->gen) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > 5.0) {
            h->release = g->gen;
            return err_set(e, KBV_ERUNTIME, "gate: its %u blocks not all running after 5 s", g->nblocks);
        }
    }
    return 0;
}

extern "C" void wg_gate_release(wg_gate *g)
{
    __sync_synchronize();
    ((volatile gate_words *)g->h)->release = g->gen;
    __sync_synchronize();
}

extern "C" int wg_gate_timed_out(const wg_gate *g)
{
    return ((const volatile gate_words *)g->h)->timed_out != 0;
}

/* The fingerprint kernels' common frame: a scratch word, the launch of
 * one of them, the sum back to the host. */
typedef void (*fp_launch)(const void *dev, int64_t n, unsigned blocks, cudaStream_t s, unsigned long long *acc);

static int fingerprint_with(fp_launch launch, const void *dev, int64_t n, cudaStream_t s, uint64_t *fp, kbv_err *e)
{
    *fp = 0;
    if (n <= 0) return 0;
    unsigned long long *acc = NULL, h = 0;
    cudaError_t ce = mt_real_malloc((void **)&acc, sizeof *acc);
    if (ce != cudaSuccess) return cuda_err(e, "fingerprint scratch", ce);
    ce = cudaMemsetAsync(acc, 0, sizeof *acc, s);
    int64_t blocks = (n + 255) / 256;
    if (blocks > 8192) blocks = 8192;
    if (ce == cudaSuccess) {
        launch(dev, n, (unsigned)blocks, s, acc);
        ce = cudaGetLastError();
    }
    if (ce == cudaSuccess) ce = cudaMemcpyAsync(&h, acc, sizeof h, cudaMemcpyDeviceToHost, s);
    if (ce == cudaSuccess) ce = cudaStreamSynchronize(s);
    mt_real_free(acc);
    if (ce != cudaSuccess) return cuda_err(e, "fingerprint", ce);
    *fp = (uint64_t)h;
    return 0;
}

static void launch_as_bf16(const void *dev, int64_t n, unsigned blocks, cudaStream_t s, unsigned long long *acc)
{
    fp_f32_as_bf16_kernel<<<blocks, 256, 0, s>>>((const uint32_t *)dev, n, acc);
}

extern "C" int wg_fingerprint_as_bf16(const float *dev, int64_t n, cudaStream_t s, uint64_t *fp, kbv_err *e)
{
    return fingerprint_with(launch_as_bf16, dev, n, s, fp, e);
}

static void launch_u64(const void *dev, int64_t n, unsigned blocks, cudaStream_t s, unsigned long long *acc)
{
    fp_u64_kernel<<<blocks, 256, 0, s>>>((const unsigned long long *)dev, n, acc);
}

static void launch_bf16(const void *dev, int64_t n, unsigned blocks, cudaStream_t s, unsigned long long *acc)
{
    fp_bf16_kernel<<<blocks, 256, 0, s>>>((const uint16_t *)dev, n, acc);
}

static void launch_f32(const void *dev, int64_t n, unsigned blocks, cudaStream_t s, unsigned long long *acc)
{
    fp_f32_kernel<<<blocks, 256, 0, s>>>((const uint32_t *)dev, n, acc);
}

extern "C" int wg_fingerprint(const void *dev, int64_t n, kbv_dtype dt, cudaStream_t s, uint64_t *fp,
                              kbv_err *e)
{
    fp_launch launch = dt == KBV_I64 ? launch_u64 : dt == KBV_BF16 ? launch_bf16 : launch_f32;
    return fingerprint_with(launch, dev, n, s, fp, e);
}

extern "C" int wg_cublas_version(void)
{
    int v = 0;
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 0;
    if (cublasGetVersion(h, &v) != CUBLAS_STATUS_SUCCESS) v = 0;
    cublasDestroy(h);
    return v;
}

extern "C" int wg_calibrate(wg_calib *out, kbv_err *e)
{
    memset(out, 0, sizeof *out);
    int rc = 0;
    cudaError_t ce;
    cudaStream_t s = NULL;
    cudaEvent_t a = NULL, b = NULL;
    void *x = NULL, *y = NULL, *ws = NULL;
    float *A = NULL, *B = NULL, *C = NULL;
    cublasHandle_t h = NULL;
    const size_t copy_bytes = (size_t)1 << 30;
    const int n = 8192;
    float t[16];

    if ((ce = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess ||
        (ce = cudaEventCreate(&a)) != cudaSuccess || (ce = cudaEventCreate(&b)) != cudaSuccess) {
        rc = cuda_err(e, "stream/events", ce);
        goto done;
    }
    /* Copy bandwidth: the better of cudaMemcpy and a float4 kernel, which is
     * what a good elementwise kernel can reach. */
    if ((ce = mt_real_malloc(&x, copy_bytes)) != cudaSuccess ||
        (ce = mt_real_malloc(&y, copy_bytes)) != cudaSuccess) {
        rc = cuda_err(e, "copy buffers", ce);
        goto done;
    }
    cudaMemsetAsync(x, 1, copy_bytes, s);
    for (int kind = 0; kind < 2; kind++) {
        for (int i = 0; i < 13; i++) {
            cudaEventRecord(a, s);
            if (kind == 0)
                cudaMemcpyAsync(y, x, copy_bytes, cudaMemcpyDeviceToDevice, s);
            else
                copy4_kernel<<<132 * 16, 256, 0, s>>>((const float4 *)x, (float4 *)y, copy_bytes / 16);
            cudaEventRecord(b, s);
            if ((ce = cudaEventSynchronize(b)) != cudaSuccess) {
                rc = cuda_err(e, "copy timing", ce);
                goto done;
            }
            if (i >= 3) cudaEventElapsedTime(&t[i - 3], a, b);
        }
        double ms = median_of(t, 10);
        double gbps = 2.0 * (double)copy_bytes / (ms * 1e-3) / 1e9;
        if (gbps > out->copy_bandwidth_gbps) out->copy_bandwidth_gbps = gbps;
    }
    mt_real_free(x);
    mt_real_free(y);
    x = y = NULL;

    /* GEMM rates, strict FP32 and TF32, at 8192^3. */
    if ((ce = mt_real_malloc((void **)&A, (size_t)n * n * 4)) != cudaSuccess ||
        (ce = mt_real_malloc((void **)&B, (size_t)n * n * 4)) != cudaSuccess ||
        (ce = mt_real_malloc((void **)&C, (size_t)n * n * 4)) != cudaSuccess ||
        (ce = mt_real_malloc(&ws, (size_t)32 << 20)) != cudaSuccess) {
        rc = cuda_err(e, "GEMM buffers", ce);
        goto done;
    }
    init_kernel<<<1024, 256, 0, s>>>(A, (size_t)n * n, 1u);
    init_kernel<<<1024, 256, 0, s>>>(B, (size_t)n * n, 2u);
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        rc = err_set(e, KBV_ERUNTIME, "worker_gpu.cu: cublasCreate failed");
        goto done;
    }
    cublasSetStream(h, s);
    cublasSetWorkspace(h, ws, (size_t)32 << 20);
    for (int mode = 0; mode < 2; mode++) {
        const float alpha = 1.0f, beta = 0.0f;
        cublasComputeType_t ct = mode == 0 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
        int reps = 7;
        for (int i = 0; i < reps; i++) {
            cudaEventRecord(a, s);
            cublasStatus_t bs = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, CUDA_R_32F,
                                             n, B, CUDA_R_32F, n, &beta, C, CUDA_R_32F, n, ct,
                                             CUBLAS_GEMM_DEFAULT);
            cudaEventRecord(b, s);
            if (bs != CUBLAS_STATUS_SUCCESS) {
                rc = err_set(e, KBV_ERUNTIME, "worker_gpu.cu: cublasGemmEx: %s", cublasGetStatusString(bs));
                goto done;
            }
            if ((ce = cudaEventSynchronize(b)) != cudaSuccess) {
                rc = cuda_err(e, "GEMM timing", ce);
                goto done;
            }
            if (i >= 2) cudaEventElapsedTime(&t[i - 2], a, b);
        }
        double ms = median_of(t, reps - 2);
        double tflops = 2.0 * n * (double)n * n / (ms * 1e-3) / 1e12;
        if (mode == 0) out->fp32_tflops = tflops;
        else out->tf32_tflops = tflops;
    }
done:
    if (h) cublasDestroy(h);
    if (x) mt_real_free(x);
    if (y) mt_real_free(y);
    if (A) mt_real_free(A);
    if (B) mt_real_free(B);
    if (C) mt_real_free(C);
    if (ws) mt_real_free(ws);
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    if (s) cudaStreamDestroy(s);
    return rc;
}

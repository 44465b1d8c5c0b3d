/* compare.cu - output comparison, fingerprints and equality on the GPU
 * (DESIGN.md 5a.5 and 5a.6).
 *
 * cmp_tensors makes one pass over the two buffers: each thread folds its
 * elements into local statistics, a block combines them in shared memory
 * and one thread per block merges them into a small device record with
 * atomics.  Maxima of non-negative doubles are merged as 64-bit integers,
 * whose order is the same as the doubles' for non-negative values.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"

namespace {

struct cmp_acc {
    unsigned long long max_abs;    /* double bits */
    unsigned long long max_rel;    /* double bits */
    unsigned long long max_tier;   /* double bits: max |d| / (1 + |ref|) */
    unsigned long long mismatches;
    unsigned long long nonfinite;
    unsigned long long unwritten;
    unsigned long long tier_fail;  /* elements that fail every tier (non-finite) */
};

struct cmp_local {
    double max_abs, max_rel, max_tier;
    unsigned long long mismatches, nonfinite, unwritten, tier_fail;
};

__device__ __forceinline__ void fold(cmp_local &l, double o, double r, bool poisoned,
                                     double atol, double rtol)
{
    if (poisoned) l.unwritten++;
    bool of = isfinite(o), rf = isfinite(r);
    if (!rf) {
        /* Where the reference is not finite, only the same value passes. */
        bool same = (isnan(o) && isnan(r)) || (o == r);
        if (!same) { l.mismatches++; l.tier_fail++; }
        return;
    }
    if (!of) {
        l.nonfinite++;
        l.mismatches++;
        l.tier_fail++;
        return;
    }
    double d = fabs(o - r), ar = fabs(r);
    l.max_abs = fmax(l.max_abs, d);
    if (ar > 0) l.max_rel = fmax(l.max_rel, d / ar);
    l.max_tier = fmax(l.max_tier, d / (1.0 + ar));
    if (d > atol + rtol * ar) l.mismatches++;
}

/* An output element as a double, and whether it still holds the poison
 * (gen_poison_f32's; an int64 buffer poisoned with it holds the 32-bit
 * pattern twice; a bfloat16 one gen_poison_bf16's). */
__device__ __forceinline__ double load_out(const float *p, int64_t i, bool &poisoned)
{
    float o = p[i];
    uint32_t bits;
    memcpy(&bits, &o, 4);
    poisoned = bits == GEN_POISON_F32_BITS;
    return (double)o;
}

__device__ __forceinline__ double load_out(const int64_t *p, int64_t i, bool &poisoned)
{
    int64_t o = p[i];
    unsigned long long bits;
    memcpy(&bits, &o, 8);
    poisoned = bits == (((unsigned long long)GEN_POISON_F32_BITS << 32) | GEN_POISON_F32_BITS);
    return (double)o;
}

__device__ __forceinline__ double load_out(const uint16_t *p, int64_t i, bool &poisoned)
{
    uint16_t b = p[i];
    poisoned = b == (uint16_t)GEN_POISON_BF16_BITS;
    return (double)__uint_as_float((uint32_t)b << 16);
}

template <typename TO, typename TR>
__global__ void cmp_kernel(const TO *out, const TR *ref, int64_t n, double atol, double rtol,
                           cmp_acc *acc)
{
    cmp_local l = { 0, 0, 0, 0, 0, 0, 0 };
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        bool poisoned;
        double o = load_out(out, i, poisoned);
        fold(l, o, (double)ref[i], poisoned, atol, rtol);
    }
    __shared__ double s_abs[256], s_rel[256], s_tier[256];
    __shared__ unsigned long long s_mis[256], s_nf[256], s_unw[256], s_tf[256];
    int t = threadIdx.x;
    s_abs[t] = l.max_abs; s_rel[t] = l.max_rel; s_tier[t] = l.max_tier;
    s_mis[t] = l.mismatches; s_nf[t] = l.nonfinite; s_unw[t] = l.unwritten; s_tf[t] = l.tier_fail;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (t < w) {
            s_abs[t] = fmax(s_abs[t], s_abs[t + w]);
            s_rel[t] = fmax(s_rel[t], s_rel[t + w]);
            s_tier[t] = fmax(s_tier[t], s_tier[t + w]);
            s_mis[t] += s_mis[t + w];
            s_nf[t] += s_nf[t + w];
            s_unw[t] += s_unw[t + w];
            s_tf[t] += s_tf[t + w];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicMax(&acc->max_abs, (unsigned long long)__double_as_longlong(s_abs[0]));
        atomicMax(&acc->max_rel, (unsigned long long)__double_as_longlong(s_rel[0]));
        atomicMax(&acc->max_tier, (unsigned long long)__double_as_longlong(s_tier[0]));
        if (s_mis[0]) atomicAdd(&acc->mismatches, s_mis[0]);
        if (s_nf[0]) atomicAdd(&acc->nonfinite, s_nf[0]);
        if (s_unw[0]) atomicAdd(&acc->unwritten, s_unw[0]);
        if (s_tf[0]) atomicAdd(&acc->tier_fail, s_tf[0]);
    }
}

/* The largest finite |ref|: per thread, then per warp, merged as the
 * bits of a non-negative float (their order is the values'). */
__global__ void absmax_kernel(const float *ref, int64_t n, unsigned int *acc)
{
    float m = 0.0f;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        float a = fabsf(ref[i]);
        if (isfinite(a) && a > m) m = a;
    }
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) atomicMax(acc, __float_as_uint(m));
}

/* Fingerprint: the sum (mod 2^64) of a strong mix of each 8-byte word with
 * its index.  A sum is independent of the order the blocks finish in, and
 * the per-word mix makes any change of a word or a swap of two words move
 * it. */
__device__ __forceinline__ unsigned long long fmix(unsigned long long w, unsigned long long i)
{
    unsigned long long x = w ^ (i * 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x + i;
}

__global__ void fp_kernel(const unsigned char *p, size_t bytes, unsigned long long *acc)
{
    size_t words = bytes / 8;
    const unsigned long long *w = (const unsigned long long *)p;
    unsigned long long sum = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words;
         i += (size_t)gridDim.x * blockDim.x)
        sum += fmix(w[i], i);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long tail = 0;
        for (size_t j = words * 8; j < bytes; j++) tail = (tail << 8) | p[j];
        sum += fmix(tail, words) ^ (unsigned long long)bytes;
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(acc, sum);
}

__global__ void eq_kernel(const unsigned char *a, const unsigned char *b, size_t bytes,
                          unsigned long long *diff)
{
    size_t words = bytes / 8;
    const unsigned long long *wa = (const unsigned long long *)a;
    const unsigned long long *wb = (const unsigned long long *)b;
    unsigned long long d = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words;
         i += (size_t)gridDim.x * blockDim.x)
        d |= wa[i] ^ wb[i];
    if (blockIdx.x == 0 && threadIdx.x == 0)
        for (size_t j = words * 8; j < bytes; j++) d |= (unsigned long long)(a[j] ^ b[j]);
    if (d) atomicOr(diff, 1ull);
}

unsigned grid_for(int64_t items, int threads)
{
    int64_t b = (items + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > 8192) b = 8192;
    return (unsigned)b;
}

/* A small device scratch record for one call: allocated and freed on the
 * stream so that nothing is kept between calls. */
int scratch(void **p, size_t n, cudaStream_t s, kbv_err *e, const char *what)
{
    cudaError_t ce = cudaMallocAsync(p, n, s);
    if (ce == cudaSuccess) ce = cudaMemsetAsync(*p, 0, n, s);
    if (ce != cudaSuccess)
        return err_set(e, KBV_ERUNTIME, "compare.cu: %s: scratch: %s", what, cudaGetErrorString(ce));
    return 0;
}

int finish(void *dev, void *host, size_t n, cudaStream_t s, kbv_err *e, const char *what)
{
    cudaError_t ce = cudaGetLastError();
    if (ce == cudaSuccess) ce = cudaMemcpyAsync(host, dev, n, cudaMemcpyDeviceToHost, s);
    cudaError_t fe = cudaFreeAsync(dev, s);
    if (ce == cudaSuccess) ce = fe;
    if (ce == cudaSuccess) ce = cudaStreamSynchronize(s);
    if (ce != cudaSuccess)
        return err_set(e, KBV_ERUNTIME, "compare.cu: %s: %s", what, cudaGetErrorString(ce));
    return 0;
}

double bits_to_double(unsigned long long b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

} /* namespace */

extern "C" int cmp_tensors(const void *out, const void *ref, int64_t n, kbv_dtype dtype,
                           double atol, double rtol, cudaStream_t s, cmp_stats *st, kbv_err *e)
{
    memset(st, 0, sizeof *st);
    st->count = n;
    if (n <= 0) return 0;
    cmp_acc *acc = NULL;
    int rc = scratch((void **)&acc, sizeof *acc, s, e, "cmp_tensors");
    if (rc) return rc;
    if (dtype == KBV_I64)
        cmp_kernel<int64_t, int64_t><<<grid_for(n, 256), 256, 0, s>>>((const int64_t *)out,
                                                            (const int64_t *)ref, n, atol, rtol, acc);
    else if (dtype == KBV_BF16)
        cmp_kernel<uint16_t, float><<<grid_for(n, 256), 256, 0, s>>>((const uint16_t *)out,
                                                                   (const float *)ref, n, atol, rtol, acc);
    else
        cmp_kernel<float, float><<<grid_for(n, 256), 256, 0, s>>>((const float *)out, (const float *)ref,
                                                          n, atol, rtol, acc);
    cmp_acc h;
    rc = finish(acc, &h, sizeof h, s, e, "cmp_tensors");
    if (rc) return rc;
    st->max_abs_err = bits_to_double(h.max_abs);
    st->max_rel_err = bits_to_double(h.max_rel);
    st->mismatches = (int64_t)h.mismatches;
    st->nonfinite = (int64_t)h.nonfinite;
    st->unwritten = (int64_t)h.unwritten;
    double mt = bits_to_double(h.max_tier);
    if (h.tier_fail) st->tier = 3;
    else if (mt <= 1e-5) st->tier = 0;
    else if (mt <= 1e-3) st->tier = 1;
    else if (mt <= 1e-2) st->tier = 2;
    else st->tier = 3;
    return 0;
}

extern "C" int cmp_absmax(const float *ref, int64_t n, cudaStream_t s, double *m, kbv_err *e)
{
    *m = 0;
    if (n <= 0) return 0;
    unsigned int *acc = NULL;
    int rc = scratch((void **)&acc, sizeof *acc, s, e, "cmp_absmax");
    if (rc) return rc;
    absmax_kernel<<<grid_for(n, 256), 256, 0, s>>>(ref, n, acc);
    unsigned int h = 0;
    rc = finish(acc, &h, sizeof h, s, e, "cmp_absmax");
    if (rc) return rc;
    float f;
    memcpy(&f, &h, sizeof f);
    *m = (double)f;
    return 0;
}

extern "C" int cmp_fingerprint(const void *dev, size_t bytes, cudaStream_t s, uint64_t *fp,
                               kbv_err *e)
{
    *fp = 0;
    if ((uintptr_t)dev & 7)
        return err_set(e, KBV_EINPUT, "compare.cu: cmp_fingerprint: buffer not 8-byte aligned");
    unsigned long long *acc = NULL;
    int rc = scratch((void **)&acc, sizeof *acc, s, e, "cmp_fingerprint");
    if (rc) return rc;
    fp_kernel<<<grid_for((int64_t)(bytes / 8 + 1), 256), 256, 0, s>>>(
        (const unsigned char *)dev, bytes, acc);
    unsigned long long h = 0;
    rc = finish(acc, &h, sizeof h, s, e, "cmp_fingerprint");
    if (rc) return rc;
    *fp = (uint64_t)h;
    return 0;
}

extern "C" int cmp_equal(const void *a, const void *b, size_t bytes, cudaStream_t s, int *equal,
                         kbv_err *e)
{
    *equal = 0;
    if (((uintptr_t)a | (uintptr_t)b) & 7)
        return err_set(e, KBV_EINPUT, "compare.cu: cmp_equal: buffers not 8-byte aligned");
    unsigned long long *acc = NULL;
    int rc = scratch((void **)&acc, sizeof *acc, s, e, "cmp_equal");
    if (rc) return rc;
    eq_kernel<<<grid_for((int64_t)(bytes / 8 + 1), 256), 256, 0, s>>>(
        (const unsigned char *)a, (const unsigned char *)b, bytes, acc);
    unsigned long long h = 0;
    rc = finish(acc, &h, sizeof h, s, e, "cmp_equal");
    if (rc) return rc;
    *equal = h == 0;
    return 0;
}

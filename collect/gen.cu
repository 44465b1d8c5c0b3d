/* gen.cu - input generation on the GPU (DESIGN.md 5 and 5a.4).
 *
 * Every value comes from cuRAND's counter-based Philox4x32-10.  The 64-bit
 * Philox key is a hash of (run seed, problem id, distribution, trial, input
 * index) and element group g (elements 4g..4g+3) reads the counter of
 * subsequence g, offset 0.  A value therefore depends on nothing but the
 * key and its position: not on the launch shape, the GPU or the process.
 * The conversions from raw 32-bit words to values are written out here
 * (rather than curand_uniform/curand_normal) so that they are fixed by this
 * file and not by a library version.
 */
#include <cuda_runtime.h>
#include <curand_kernel.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"

namespace {

/* SplitMix64's finaliser: a bijective mix with good avalanche. */
uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t fnv1a64(const char *s)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001B3ull;
    }
    return h;
}

uint64_t gen_key(uint64_t seed, const char *id, int dist, int trial, int index)
{
    uint64_t k = mix64(seed);
    k = mix64(k ^ fnv1a64(id));
    k = mix64(k ^ (uint64_t)(uint32_t)dist);
    k = mix64(k ^ (uint64_t)(uint32_t)trial);
    k = mix64(k ^ (uint64_t)(uint32_t)index);
    return k;
}

/* What one launch draws: value = scale * f(raw), with f given by kind. */
struct gen_plan {
    int kind;        /* suite_gen_kind, after distribution rules */
    double a, b;
    double scale;    /* D2-D4 factor, 1 otherwise */
    int to_i64;      /* destination dtype */
};

/* The subsequence reserved for per-tensor scalars (KernelBench's
 * torch.rand(()) scale); element groups never reach it. */
#define SCALAR_SUBSEQ 0xFFFFFFFFFFFFFFFFull

/* U[0,1) from the top 24 bits: every value is exactly representable. */
__device__ __forceinline__ float u01(uint32_t r)
{
    return (float)(r >> 8) * (1.0f / 16777216.0f);
}

/* (0,1], for the logarithm of Box-Muller. */
__device__ __forceinline__ float u01_open0(uint32_t r)
{
    return ((float)(r >> 8) + 1.0f) * (1.0f / 16777216.0f);
}

__device__ __forceinline__ void draw4(const gen_plan &g, uint4 r, float rs, double v[4])
{
    uint32_t w[4] = { r.x, r.y, r.z, r.w };
    switch (g.kind) {
    case SUITE_GEN_NORMAL:
        for (int j = 0; j < 4; j += 2) {
            float rad = sqrtf(-2.0f * logf(u01_open0(w[j])));
            float sn, cs;
            sincospif(2.0f * u01(w[j + 1]), &sn, &cs);
            v[j] = g.a + g.b * (double)(rad * cs);
            v[j + 1] = g.a + g.b * (double)(rad * sn);
        }
        break;
    case SUITE_GEN_RANDINT: {
        /* [a, b) by the multiply-shift map of 32 random bits: the bias is
         * below 2^-32 * range, far under anything a test can see. */
        double lo = g.a, range = g.b - g.a;
        uint64_t rg = range > 0 ? (uint64_t)range : 1;
        for (int j = 0; j < 4; j++)
            v[j] = lo + (double)(((uint64_t)w[j] * rg) >> 32);
        break;
    }
    case SUITE_GEN_CONST:
        for (int j = 0; j < 4; j++) v[j] = g.a;
        break;
    case SUITE_GEN_SIGN:
        for (int j = 0; j < 4; j++) v[j] = (w[j] >> 31) ? 1.0 : -1.0;
        break;
    case SUITE_GEN_UNIFORM_RSCALE:
        for (int j = 0; j < 4; j++) v[j] = (g.a + (g.b - g.a) * (double)u01(w[j])) * (double)rs;
        break;
    case SUITE_GEN_UNIFORM:
    default:
        for (int j = 0; j < 4; j++) {
            double x = g.a + (g.b - g.a) * (double)u01(w[j]);
            /* keep the interval half-open after rounding to float */
            if ((float)x >= (float)g.b && g.b > g.a) x = nextafterf((float)g.b, (float)g.a);
            v[j] = x;
        }
        break;
    }
    for (int j = 0; j < 4; j++) v[j] *= g.scale;
}

__global__ void gen_kernel(gen_plan g, uint64_t key, int64_t n, void *dst)
{
    int64_t groups = (n + 3) / 4;
    float rs = 1.0f;
    if (g.kind == SUITE_GEN_UNIFORM_RSCALE) {
        curandStatePhilox4_32_10_t st;
        curand_init(key, SCALAR_SUBSEQ, 0, &st);
        rs = u01(curand(&st));
    }
    for (int64_t grp = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; grp < groups;
         grp += (int64_t)gridDim.x * blockDim.x) {
        curandStatePhilox4_32_10_t st;
        curand_init(key, (unsigned long long)grp, 0, &st);
        uint4 r = curand4(&st);
        double v[4];
        draw4(g, r, rs, v);
        int64_t i0 = grp * 4;
        if (g.to_i64) {
            int64_t *d = (int64_t *)dst;
            for (int j = 0; j < 4 && i0 + j < n; j++) d[i0 + j] = (int64_t)v[j];
        } else if (i0 + 3 < n) {
            float4 f = make_float4((float)v[0], (float)v[1], (float)v[2], (float)v[3]);
            reinterpret_cast<float4 *>(dst)[grp] = f;
        } else {
            float *d = (float *)dst;
            for (int j = 0; j < 4 && i0 + j < n; j++) d[i0 + j] = (float)v[j];
        }
    }
}

__global__ void poison_kernel(uint32_t *d, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        d[i] = GEN_POISON_F32_BITS;
}

unsigned grid_for(int64_t items, int threads)
{
    int64_t b = (items + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > 16384) b = 16384;   /* grid-stride beyond this; enough to fill any GPU */
    return (unsigned)b;
}

} /* namespace */

extern "C" int gen_fill(const suite_problem *p, int index, suite_dist dist, uint64_t seed,
                        int trial, void *dev, cudaStream_t s, kbv_err *e)
{
    if (!p || index < 0 || index >= p->n_inputs)
        return err_set(e, KBV_EINPUT, "gen.cu: input %d out of range for %s", index,
                       p ? p->id : "(null)");
    if (!suite_has_dist(p, dist))
        return err_set(e, KBV_EINPUT, "gen.cu: %s has no distribution %s", p->id,
                       suite_dist_name(dist));
    const suite_tensor *t = &p->inputs[index];
    int64_t n = suite_numel(t);
    if (n == 0) return 0;

    gen_plan g;
    suite_gen src = t->gen;
    g.scale = 1.0;
    g.to_i64 = t->dtype == KBV_I64;
    if (t->role == SUITE_ROLE_PARAM) {
        /* Parameters come from their initialisation in every distribution;
         * a constant initialisation is redrawn in D2-D4 so that a
         * candidate that assumes it fails. */
        if (src.kind == SUITE_GEN_CONST && dist >= SUITE_D2 && dist <= SUITE_D4) {
            src.kind = SUITE_GEN_UNIFORM;
            src.b = src.a + 0.5;
            src.a = src.a - 0.5;
        }
    } else {
        if (dist == SUITE_D5) src = p->d5[index];
        if (!g.to_i64 && !t->fixed_scale) {
            if (dist == SUITE_D2) g.scale = 3.0;
            else if (dist == SUITE_D3) g.scale = 0.01;
            else if (dist == SUITE_D4) g.scale = -1.0;
        }
    }
    g.kind = (int)src.kind;
    g.a = src.a;
    g.b = src.b;

    uint64_t key = gen_key(seed, p->id, (int)dist, trial, index);
    gen_kernel<<<grid_for((n + 3) / 4, 256), 256, 0, s>>>(g, key, n, dev);
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess)
        return err_set(e, KBV_ERUNTIME, "gen.cu: %s input %s: launch: %s", p->id, t->name,
                       cudaGetErrorString(ce));
    return 0;
}

extern "C" int gen_poison_f32(void *dev, size_t n_floats, cudaStream_t s, kbv_err *e)
{
    if (n_floats == 0) return 0;
    poison_kernel<<<grid_for((int64_t)n_floats, 256), 256, 0, s>>>((uint32_t *)dev, n_floats);
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess)
        return err_set(e, KBV_ERUNTIME, "gen.cu: poison: %s", cudaGetErrorString(ce));
    return 0;
}

extern "C" int gen_fill_bytes(void *dev, size_t n, unsigned char pattern, cudaStream_t s,
                              kbv_err *e)
{
    cudaError_t ce = cudaMemsetAsync(dev, pattern, n, s);
    if (ce != cudaSuccess)
        return err_set(e, KBV_ERUNTIME, "gen.cu: fill %zu bytes: %s", n, cudaGetErrorString(ce));
    return 0;
}

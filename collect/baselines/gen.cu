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
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

extern "C" {
#include "l3model.h"
#include "net.h"
}

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
    int vec4;        /* the destination is 16-byte aligned (float4 stores) */
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

/* One U[a, b) value of element k of the tensor keyed by key: the same
 * value draw4 gives element k (group k / 4, word k % 4), for the
 * symmetric generator, which needs element (j, i) beside (i, j). */
__device__ __forceinline__ double uniform_at(const gen_plan &g, uint64_t key, int64_t k)
{
    curandStatePhilox4_32_10_t st;
    curand_init(key, (unsigned long long)(k / 4), 0, &st);
    uint4 r = curand4(&st);
    uint32_t w[4] = { r.x, r.y, r.z, r.w };
    return g.a + (g.b - g.a) * (double)u01(w[k % 4]);
}

__global__ void gen_kernel(gen_plan g, uint64_t key, int64_t n, int64_t rows, int64_t cols,
                           void *dst)
{
    int64_t groups = (n + 3) / 4;
    float rs = 1.0f;
    if (g.kind == SUITE_GEN_UNIFORM_RSCALE || g.kind == SUITE_GEN_SOFTMAX_RSCALE) {
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
        int64_t i0 = grp * 4;
        switch (g.kind) {
        case SUITE_GEN_UNIFORM_SYM:
        case SUITE_GEN_UNIFORM_TRIU:
        case SUITE_GEN_UNIFORM_TRIL: {
            /* structure over the last two dimensions [rows, cols] */
            gen_plan u = g;
            u.kind = SUITE_GEN_UNIFORM;
            u.scale = 1.0;
            draw4(u, r, rs, v);
            for (int j = 0; j < 4; j++) {
                int64_t k = i0 + j;
                if (k >= n) break;
                int64_t in_mat = k % (rows * cols), base = k - in_mat;
                int64_t row = in_mat / cols, col = in_mat % cols;
                if (g.kind == SUITE_GEN_UNIFORM_TRIU && col < row) v[j] = 0.0;
                else if (g.kind == SUITE_GEN_UNIFORM_TRIL && col > row) v[j] = 0.0;
                else if (g.kind == SUITE_GEN_UNIFORM_SYM && rows == cols)
                    v[j] = 0.5 * (v[j] + uniform_at(u, key, base + col * cols + row));
                v[j] *= g.scale;
            }
            break;
        }
        case SUITE_GEN_SOFTMAX:
        case SUITE_GEN_SOFTMAX_RSCALE: {
            /* the pre-softmax values; softmax_rows finishes the job */
            gen_plan u = g;
            u.kind = g.kind == SUITE_GEN_SOFTMAX ? SUITE_GEN_UNIFORM : SUITE_GEN_UNIFORM_RSCALE;
            u.scale = 1.0;
            draw4(u, r, rs, v);
            break;
        }
        case SUITE_GEN_ALTERNATING:
            for (int j = 0; j < 4; j++) v[j] = (((i0 + j) & 1) ? g.b : g.a) * g.scale;
            break;
        case SUITE_GEN_ROW_SIGNED: {
            /* U[a, b) as for UNIFORM, negated on the odd rows [rows of
             * length cols, the last dimension] */
            gen_plan u = g;
            u.kind = SUITE_GEN_UNIFORM;
            draw4(u, r, rs, v);
            for (int j = 0; j < 4; j++)
                if (((i0 + j) / cols) & 1) v[j] = -v[j];
            break;
        }
        default:
            draw4(g, r, rs, v);
            break;
        }
        if (g.to_i64) {
            int64_t *d = (int64_t *)dst;
            for (int j = 0; j < 4 && i0 + j < n; j++) d[i0 + j] = (int64_t)v[j];
        } else if (i0 + 3 < n && g.vec4) {
            float4 f = make_float4((float)v[0], (float)v[1], (float)v[2], (float)v[3]);
            reinterpret_cast<float4 *>(dst)[grp] = f;
        } else {
            float *d = (float *)dst;
            for (int j = 0; j < 4 && i0 + j < n; j++) d[i0 + j] = (float)v[j];
        }
    }
}

/* In-place softmax of each row of [rows, cols], then times scale (the
 * hidden distributions scale the finished input).  One block per row;
 * generation is not timed, so plain three passes suffice. */
__global__ void softmax_rows_inplace(float *x, int64_t cols, double scale)
{
    float *row = x + (int64_t)blockIdx.x * cols;
    __shared__ float red[32];
    __shared__ float bcast;
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, row[i]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = red[0];
        for (unsigned w = 1; w < blockDim.x / 32; w++) t = fmaxf(t, red[w]);
        bcast = t;
    }
    __syncthreads();
    m = bcast;
    __syncthreads();
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) sum += expf(row[i] - m);
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (unsigned w = 0; w < blockDim.x / 32; w++) t += red[w];
        bcast = t;
    }
    __syncthreads();
    float inv = 1.0f / bcast;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
        row[i] = (float)((double)(expf(row[i] - m) * inv) * scale);
}

__global__ void poison_kernel(uint32_t *d, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        d[i] = GEN_POISON_F32_BITS;
}

__global__ void poison16_kernel(uint16_t *d, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        d[i] = (uint16_t)GEN_POISON_BF16_BITS;
}

/* Round to nearest even, written out (not __float2bfloat16) so that the
 * CPU stand-in of tests/fakegpu rounds the same way bit for bit. */
__device__ __forceinline__ uint16_t to_bf16_bits(float f)
{
    uint32_t b = __float_as_uint(f);
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu)) return (uint16_t)((b >> 16) | 0x0040u);
    b += 0x7fffu + ((b >> 16) & 1u);
    return (uint16_t)(b >> 16);
}

__global__ void narrow_kernel(const float *src, uint16_t *dst, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = to_bf16_bits(src[i]);
}

__global__ void widen_kernel(const uint16_t *src, float *dst, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = __uint_as_float((uint32_t)src[i] << 16);
}

unsigned grid_for(int64_t items, int threads)
{
    int64_t b = (items + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > 16384) b = 16384;   /* grid-stride beyond this; enough to fill any GPU */
    return (unsigned)b;
}

/* One part of packed parameters from its initialisation, keyed by the
 * tensor's key and the part's index (a constant redrawn in D2-D4). */
void fill_part(suite_gen gen, suite_dist dist, uint64_t key, int index, float *dst, int64_t count,
               cudaStream_t s)
{
    gen_plan g;
    g.kind = (int)gen.kind;
    g.a = gen.a;
    g.b = gen.b;
    if (g.kind == SUITE_GEN_CONST && dist >= SUITE_D2 && dist <= SUITE_D4) {
        g.kind = SUITE_GEN_UNIFORM;
        g.a = gen.a - 0.5;
        g.b = gen.a + 0.5;
    }
    g.scale = 1.0;
    g.to_i64 = 0;
    g.vec4 = ((uintptr_t)dst & 15) == 0;
    gen_kernel<<<grid_for((count + 3) / 4, 256), 256, 0, s>>>(g, mix64(key ^ (uint64_t)(index + 1)), count, 1, 1,
                                                              dst);
}

/* A level-3 model's packed parameters (problems/l3model.h), part by part as
 * a network's below. */
int fill_model_packed(const suite_problem *p, const suite_tensor *t, suite_dist dist, uint64_t key, void *dev,
                      cudaStream_t s, kbv_err *e)
{
    model_plan *pl = (model_plan *)calloc(1, sizeof *pl);
    if (!pl) return err_set(e, KBV_ENOMEM, "gen.cu: %s: out of memory", p->id);
    char why[160];
    int rc = 0;
    if (model_plan_make(suite_model_of(p), p->inputs[0].shape, p->inputs[0].ndim, pl, why, sizeof why))
        rc = err_set(e, KBV_EINPUT, "gen.cu: %s: model: %s", p->id, why);
    else if (pl->n_param_floats != suite_numel(t))
        rc = err_set(e, KBV_EINPUT, "gen.cu: %s: %s has %lld elements, the model %lld", p->id, t->name,
                     (long long)suite_numel(t), (long long)pl->n_param_floats);
    for (int i = 0; !rc && i < pl->n_parts; i++)
        fill_part(pl->part[i].gen, dist, key, i, (float *)dev + pl->part[i].offset, pl->part[i].count, s);
    free(pl);
    return rc;
}

/* A level-3 network's packed parameters (SUITE_GEN_PACKED): each part
 * from its own initialisation, keyed by the tensor's key and the part's
 * index, so that a part's values depend on nothing but its place in the
 * program.  Constant parts (batch-norm weight and bias) are redrawn in
 * D2-D4 as every constant parameter is. */
int fill_packed(const suite_problem *p, const suite_tensor *t, suite_dist dist, uint64_t key,
                void *dev, cudaStream_t s, kbv_err *e)
{
    if (suite_model_of(p)) return fill_model_packed(p, t, dist, key, dev, s, e);
    const net_spec *sp = suite_net_of(p);
    if (!sp) return err_set(e, KBV_EINPUT, "gen.cu: %s: packed parameters without a layer program", p->id);
    net_plan *pl = (net_plan *)calloc(1, sizeof *pl);
    if (!pl) return err_set(e, KBV_ENOMEM, "gen.cu: %s: out of memory", p->id);
    char why[160];
    int rc = 0;
    if (net_plan_make(sp, p->inputs[0].shape, p->inputs[0].ndim, pl, why, sizeof why))
        rc = err_set(e, KBV_EINPUT, "gen.cu: %s: layer program: %s", p->id, why);
    else if (pl->n_param_floats != suite_numel(t))
        rc = err_set(e, KBV_EINPUT, "gen.cu: %s: %s has %lld elements, the program %lld", p->id, t->name,
                     (long long)suite_numel(t), (long long)pl->n_param_floats);
    for (int i = 0; !rc && i < pl->n_params; i++)
        fill_part(pl->param[i].gen, dist, key, i, (float *)dev + pl->param[i].offset, pl->param[i].count, s);
    free(pl);
    return rc;
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

    int64_t cols = t->ndim >= 1 ? t->shape[t->ndim - 1] : 1;
    int64_t rows = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
    if (cols < 1) cols = 1;
    if (rows < 1) rows = 1;
    uint64_t key = gen_key(seed, p->id, (int)dist, trial, index);
    g.vec4 = 1;   /* a whole tensor of kbv's starts at an allocation */
    if (src.kind == SUITE_GEN_PACKED) {
        int rc = fill_packed(p, t, dist, key, dev, s, e);
        if (rc) return rc;
    } else {
        gen_kernel<<<grid_for((n + 3) / 4, 256), 256, 0, s>>>(g, key, n, rows, cols, dev);
    }
    if (!g.to_i64 && (g.kind == SUITE_GEN_SOFTMAX || g.kind == SUITE_GEN_SOFTMAX_RSCALE))
        softmax_rows_inplace<<<(unsigned)(n / cols), 256, 0, s>>>((float *)dev, cols, g.scale);
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

extern "C" int gen_poison_bf16(void *dev, size_t n, cudaStream_t s, kbv_err *e)
{
    if (n == 0) return 0;
    poison16_kernel<<<grid_for((int64_t)n, 256), 256, 0, s>>>((uint16_t *)dev, n);
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess)
        return err_set(e, KBV_ERUNTIME, "gen.cu: bf16 poison: %s", cudaGetErrorString(ce));
    return 0;
}

extern "C" int gen_narrow_bf16(const float *src, void *dst, int64_t n, cudaStream_t s, kbv_err *e)
{
    if (n <= 0) return 0;
    narrow_kernel<<<grid_for(n, 256), 256, 0, s>>>(src, (uint16_t *)dst, n);
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess)
        return err_set(e, KBV_ERUNTIME, "gen.cu: round to bf16: %s", cudaGetErrorString(ce));
    return 0;
}

extern "C" int gen_widen_bf16(const void *src, float *dst, int64_t n, cudaStream_t s, kbv_err *e)
{
    if (n <= 0) return 0;
    widen_kernel<<<grid_for(n, 256), 256, 0, s>>>((const uint16_t *)src, dst, n);
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess)
        return err_set(e, KBV_ERUNTIME, "gen.cu: widen bf16: %s", cudaGetErrorString(ce));
    return 0;
}

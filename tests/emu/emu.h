// CPU emulation of the CUDA subset used by kbv's candidates (testing only).
#pragma once
#include <ucontext.h>
#include <math.h>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <tuple>
#include <utility>
#include <type_traits>
#include <algorithm>

struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
struct uint3 { unsigned x, y, z; };
struct float4 { float x, y, z, w; };
struct float2 { float x, y; };
struct double2 { double x, y; };
struct int4 { int x, y, z, w; };
static inline float4 make_float4(float a, float b, float c, float d) { return float4{a, b, c, d}; }
static inline float2 make_float2(float a, float b) { return float2{a, b}; }
static inline double2 make_double2(double a, double b) { return double2{a, b}; }
static inline int4 make_int4(int a, int b, int c, int d) { return int4{a, b, c, d}; }

extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __shared__ static
#define __align__(n)
#define __constant__

extern int emu_cluster;
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorUnknown = 999 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8, cudaFuncAttributeNonPortableClusterSizeAllowed = 9 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
enum { cudaStreamNonBlocking = 1 };
struct cudaLaunchAttribute { int id; union { struct { unsigned x, y, z; } clusterDim; } val; };
enum { cudaLaunchAttributeClusterDimension = 4 };
struct cudaLaunchConfig_t { dim3 gridDim, blockDim; size_t dynamicSmemBytes; void *stream; cudaLaunchAttribute *attrs; unsigned numAttrs; };

cudaError_t cudaMalloc(void **p, size_t n);
/* the runtime's typed overload */
template <class T> static inline cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc((void **)p, n); }
cudaError_t cudaFree(void *p);
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st = 0);
cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st = 0);
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
template <class F> cudaError_t cudaFuncSetAttribute(F, int, int) { return cudaSuccess; }
static inline cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
static inline cudaError_t cudaDeviceGetAttribute(int *v, int a, int) { *v = a == cudaDevAttrMultiProcessorCount ? 132 : 232448; return cudaSuccess; }
template <class F> cudaError_t cudaOccupancyMaxActiveClusters(int *n, F, const cudaLaunchConfig_t *) { *n = emu_cluster > 1 ? 16 : 0; return cudaSuccess; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

// --- the scheduler ---------------------------------------------------------
void emu_block_barrier(void);
int emu_crank(void);
extern int emu_cluster;
void emu_warp_barrier(void);
int emu_tid(void);
int emu_gtid(void);
extern unsigned char emu_slots[256][32][8];
extern unsigned char *emu_dyn_smem;
extern size_t emu_dyn_bytes;

struct emu_cfg_t { dim3 g, b; size_t smem; };
static inline emu_cfg_t emu_cfg(dim3 g, dim3 b, size_t smem = 0, cudaStream_t = 0) { return emu_cfg_t{g, b, smem}; }
void emu_run(const emu_cfg_t &c, void (*body)(void *), void *arg);
template <class L> void emu_launch(emu_cfg_t c, L l)
{
    emu_run(c, [](void *p) { (*(L *)p)(); }, &l);
}

static inline void __syncthreads(void) { emu_block_barrier(); }
static inline void __syncwarp(unsigned = 0xffffffffu) { emu_warp_barrier(); }
template <class T> T emu_shfl(T v, int src_of_lane_xor, int mode)
{
    int t = emu_gtid(), w = t / 32, l = t % 32;
    std::memcpy(emu_slots[w][l], &v, sizeof(T));
    emu_warp_barrier();
    int src = mode ? (l ^ src_of_lane_xor) : src_of_lane_xor;
    T r;
    std::memcpy(&r, emu_slots[w][src], sizeof(T));
    emu_warp_barrier();
    return r;
}
template <class T> T __shfl_xor_sync(unsigned, T v, int o) { return emu_shfl(v, o, 1); }
template <class T> T __shfl_sync(unsigned, T v, int s) { return emu_shfl(v, s, 0); }
static inline int __all_sync(unsigned, int p)
{
    int t = emu_gtid(), w = t / 32, l = t % 32;
    int v = p != 0;
    std::memcpy(emu_slots[w][l], &v, sizeof v);
    emu_warp_barrier();
    int all = 1;
    for (int i = 0; i < 32; i++) { int q; std::memcpy(&q, emu_slots[w][i], sizeof q); all &= q; }
    emu_warp_barrier();
    return all;
}
// atomics (threads of the emulation never run at the same time)
static inline float atomicAdd(float *p, float v) { float o = *p; *p = o + v; return o; }
static inline int atomicMax(int *p, int v) { int o = *p; if (v > o) *p = v; return o; }
static inline unsigned atomicMin(unsigned *p, unsigned v) { unsigned o = *p; if (v < o) *p = v; return o; }
static inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
static inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
// glibc declares __expf already (the same function)
static inline float __fdividef(float a, float b) { return a / b; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline void __stcs(T *p, T v) { *p = v; }
template <class T> static inline T __ldg(const T *p) { return *p; }
static inline size_t __cvta_generic_to_shared(const void *) { return 0; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }

// --- bfloat16 (the BF16 setting's candidates; cuda_bf16.h is left out) ---------
struct __nv_bfloat16 { unsigned short x; };
struct uint4 { unsigned x, y, z, w; };
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return uint4{a, b, c, d}; }
static inline float __bfloat162float(__nv_bfloat16 h) { return __uint_as_float((unsigned)h.x << 16); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    unsigned b = __float_as_uint(f);
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu)) return __nv_bfloat16{(unsigned short)((b >> 16) | 0x40u)};
    b += 0x7fffu + ((b >> 16) & 1u);
    return __nv_bfloat16{(unsigned short)(b >> 16)};
}
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.x; }
// pairs, as the baselines' vector loads use them (tests/emu/test_chain_ew.py)
struct __nv_bfloat162 { __nv_bfloat16 x, y; };
struct uint2 { unsigned x, y; };
static inline uint2 make_uint2(unsigned a, unsigned b) { return uint2{a, b}; }
static inline float2 __bfloat1622float2(__nv_bfloat162 h) { return float2{__bfloat162float(h.x), __bfloat162float(h.y)}; }
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b)
{
    return __nv_bfloat162{__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}

// --- WMMA, each thread holding the whole tile ----------------------------------
namespace nvcuda { namespace wmma {
struct row_major {}; struct col_major {}; struct matrix_a {}; struct matrix_b {}; struct accumulator {};
namespace precision { struct tf32 {}; }
enum layout_t { mem_row_major, mem_col_major };
template <class Use, int M, int N, int K> struct dims { enum { R = std::is_same<Use, matrix_a>::value ? M : (std::is_same<Use, matrix_b>::value ? K : M),
                                                           C = std::is_same<Use, matrix_a>::value ? K : N }; };
template <class Use, int M, int N, int K, class T, class L = void> struct fragment {
    enum { R = dims<Use, M, N, K>::R, C = dims<Use, M, N, K>::C, num_elements = R * C };
    float x[R * C];
};
template <class U, int M, int N, int K, class T, class L> void fill_fragment(fragment<U, M, N, K, T, L> &f, float v) { for (auto &e : f.x) e = v; }
template <int M, int N, int K, class T, class L> void load_matrix_sync(fragment<matrix_a, M, N, K, T, L> &f, const float *p, unsigned ldm)
{ for (int r = 0; r < M; r++) for (int c = 0; c < K; c++) f.x[r * K + c] = std::is_same<L, row_major>::value ? p[r * ldm + c] : p[c * ldm + r]; }
template <int M, int N, int K, class T, class L> void load_matrix_sync(fragment<matrix_b, M, N, K, T, L> &f, const float *p, unsigned ldm)
{ for (int r = 0; r < K; r++) for (int c = 0; c < N; c++) f.x[r * N + c] = std::is_same<L, row_major>::value ? p[r * ldm + c] : p[c * ldm + r]; }
/* bfloat16 operands, held widened (exact); their products are exact in float */
template <int M, int N, int K, class T, class L> void load_matrix_sync(fragment<matrix_a, M, N, K, T, L> &f, const __nv_bfloat16 *p, unsigned ldm)
{ for (int r = 0; r < M; r++) for (int c = 0; c < K; c++) f.x[r * K + c] = __bfloat162float(std::is_same<L, row_major>::value ? p[r * ldm + c] : p[c * ldm + r]); }
template <int M, int N, int K, class T, class L> void load_matrix_sync(fragment<matrix_b, M, N, K, T, L> &f, const __nv_bfloat16 *p, unsigned ldm)
{ for (int r = 0; r < K; r++) for (int c = 0; c < N; c++) f.x[r * N + c] = __bfloat162float(std::is_same<L, row_major>::value ? p[r * ldm + c] : p[c * ldm + r]); }
template <int M, int N, int K, class TA, class LA, class TB, class LB>
void mma_sync(fragment<accumulator, M, N, K, float, void> &d, const fragment<matrix_a, M, N, K, TA, LA> &a,
              const fragment<matrix_b, M, N, K, TB, LB> &b, const fragment<accumulator, M, N, K, float, void> &c)
{
    float t[M * N];
    for (int m = 0; m < M; m++) for (int n = 0; n < N; n++) {
        float s = c.x[m * N + n];
        for (int k = 0; k < K; k++) s += a.x[m * K + k] * b.x[k * N + n];
        t[m * N + n] = s;
    }
    std::memcpy(d.x, t, sizeof t);
}
template <int M, int N, int K> void store_matrix_sync(float *p, const fragment<accumulator, M, N, K, float, void> &f, unsigned ldm, layout_t l)
{ for (int m = 0; m < M; m++) for (int n = 0; n < N; n++) (l == mem_row_major ? p[m * ldm + n] : p[n * ldm + m]) = f.x[m * N + n]; }
static inline float __float_to_tf32(float v)
{
    uint32_t b; std::memcpy(&b, &v, 4);
    b = (b + 0x1000u) & 0xFFFFE000u;
    float r; std::memcpy(&r, &b, 4); return r;
}
}}
namespace cooperative_groups {
struct cluster_group {
    unsigned block_rank() { return (unsigned)emu_crank(); }
    void sync() { emu_block_barrier(); }
    /* shared scalars are laid out as name__all[rank] */
    template <class T> T *map_shared_rank(T *p, int k) { return p + (k - emu_crank()); }
};
static inline cluster_group this_cluster() { return cluster_group{}; }
}

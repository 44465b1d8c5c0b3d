/* kbv.h - the candidate ABI of kbv (see DESIGN.md section 4).
 *
 * A candidate is one CUDA source file that includes this header and defines
 * kbv_forward(); kbv compiles it into a shared object and calls it from an
 * isolated worker process.  The caller's duties, stated once:
 *  - kbv owns every tensor: inputs are read-only device buffers, outputs are
 *    device buffers allocated by kbv with their shapes already set.
 *  - All work goes on call->stream; kbv times the stream with events.
 *  - A candidate may allocate device memory (it counts toward its peak) and
 *    must free it in kbv_teardown().
 *  - The output must be right for any valid input values, not only the ones
 *    a benchmark happens to draw.
 */
#ifndef KBV_H
#define KBV_H

#include <stdint.h>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#else
/* Host code that never touches CUDA (analyze, render, tests) still needs the
 * type names; a stream is an opaque pointer in the CUDA runtime too. */
typedef struct CUstream_st *cudaStream_t;
#endif

/* Version 2 added KBV_BF16; a version-1 candidate (float32 and int64
 * tensors only) builds and runs unchanged. */
#define KBV_ABI_VERSION 2
#define KBV_MAX_DIMS 8

/* KBV_BF16: __nv_bfloat16 values (2 bytes each), the FP32 setting's
 * float tensors in the BF16 setting (kbv collect --precision bf16). */
typedef enum { KBV_F32 = 0, KBV_I64 = 1, KBV_BF16 = 2 } kbv_dtype;

typedef struct {
    void     *data;               /* device pointer, contiguous, row-major */
    kbv_dtype dtype;
    int       ndim;
    int64_t   shape[KBV_MAX_DIMS];
} kbv_tensor;

typedef struct {
    const kbv_tensor *inputs;  int n_inputs;
    kbv_tensor       *outputs; int n_outputs;  /* allocated by kbv, shapes set */
    const double     *attrs;   int n_attrs;    /* the problem's scalar attributes */
    cudaStream_t      stream;                  /* all work goes on this stream */
} kbv_call;

#ifdef __cplusplus
#define KBV_EXTERN extern "C"
#else
#define KBV_EXTERN extern
#endif

/* required: enqueue the computation on call->stream; 0 on success */
KBV_EXTERN int  kbv_forward(const kbv_call *call);
/* optional: once, before any forward call, not timed (handles, tables) */
KBV_EXTERN int  kbv_setup(const kbv_call *example);
KBV_EXTERN void kbv_teardown(void);

/* Number of elements of a tensor; a convenience for candidate authors. */
static inline int64_t kbv_numel(const kbv_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

#endif /* KBV_H */

/* base_impl.h - what the baseline families (collect/problems/ .cu files)
 * share with the dispatcher (collect/baseline.cu).  C++ only, private to
 * collect/.
 *
 * A family implements the problems whose op lies in [op_lo, op_hi].  Its
 * create() runs once per problem and worker (handles, algorithm choice,
 * workspaces, all untimed); run() only enqueues work on call->stream.  The
 * context owns every handle and allocation; destroy() releases the
 * family's own state and the dispatcher the shared handles.
 */
#ifndef KBV_BASE_IMPL_H
#define KBV_BASE_IMPL_H

#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <stddef.h>

#include "gpu.h"
#include "ops.h"

struct base_family;

struct base_ctx {
    const suite_problem *p;
    const base_family *fam;
    int device;
    int sm_count;
    cublasHandle_t blas;       /* created on demand by base_need_blas */
    void *blas_ws;             /* cuBLAS workspace, set on the handle */
    size_t blas_ws_bytes;
    void *ws;                  /* a family's own workspace (cuDNN, reductions) */
    size_t ws_bytes;
    void *state;               /* a family's own host state, freed by its destroy */
};

struct base_family {
    const char *name;
    int op_lo, op_hi;
    int (*create)(base_ctx *b, const kbv_call *example, kbv_err *e);
    int (*run)(base_ctx *b, base_variant v, const kbv_call *call, kbv_err *e);
    void (*destroy)(base_ctx *b);            /* may be NULL */
    int (*available)(const suite_problem *p, const char **why);   /* may be NULL */
};

/* The families, one per .cu file. */
extern const base_family base_fam_matmul;
extern const base_family base_fam_elementwise;
extern const base_family base_fam_softmax;

/* Shared helpers (baseline.cu). */
int base_need_blas(base_ctx *b, kbv_err *e);
int base_need_ws(base_ctx *b, size_t bytes, kbv_err *e);
int base_cuda_err(kbv_err *e, const base_ctx *b, const char *what, cudaError_t ce);
/* Blocks for a grid-stride kernel: enough to fill every SM `per_sm` times,
 * fewer when the work is small. */
unsigned base_grid(const base_ctx *b, long long items, int threads, int per_sm);

#endif

/* memtrack.h - device allocations of the worker process, by owner
 * (DESIGN.md 5a steps 6 and 8).
 *
 * memtrack.c defines cudaMalloc, cudaFree and their relatives in the worker
 * executable, which is linked with -rdynamic: a candidate's shared object
 * (built with -cudart shared) and the baselines bind to these definitions,
 * which count live and peak bytes for the owner of the moment, poison every
 * new candidate allocation, and forward to the CUDA runtime through
 * dlsym(RTLD_NEXT).  The worker's own buffers are allocated with
 * mt_real_malloc/mt_real_free and are not counted.
 *
 * The counters are process-wide state by necessity: an interposed cudaMalloc
 * has the runtime's signature and no context argument, so it can only reach
 * its bookkeeping through a global.  A mutex guards them, since a candidate
 * may allocate from threads of its own.
 */
#ifndef KBV_MEMTRACK_H
#define KBV_MEMTRACK_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MT_HARNESS = 0, MT_CANDIDATE = 1, MT_BASELINE = 2, MT_N_OWNERS = 3 } mt_owner;

typedef struct {
    long long live;          /* bytes allocated and not freed */
    long long peak;          /* highest live since the last mt_reset_peak */
    long long n_allocs;
    long long n_frees;
    long long failed;        /* allocations that failed */
    long long failed_bytes;  /* the size of the last failed one */
    int last_error;          /* cudaError_t of the last failure */
} mt_counts;

/* Sets the owner of the allocations that follow; returns the previous. */
mt_owner mt_set_owner(mt_owner o);
void mt_get(mt_owner o, mt_counts *c);
void mt_reset_peak(mt_owner o);     /* peak := live */

/* How many times the candidate's code asked for a CUDA context of its own
 * and was refused (cuCtxCreate in every version, cuGreenCtxCreate, by
 * symbol or by a lookup by name): work there would escape every
 * synchronisation of the worker.  Others' requests go to the driver.  The
 * first refused function's name goes to first (n bytes, may be NULL). */
int mt_contexts_refused(char *first, size_t n);

/* The runtime's own functions, for the worker's buffers. */
cudaError_t mt_real_malloc(void **p, size_t n);
cudaError_t mt_real_free(void *p);

#ifdef __cplusplus
}
#endif

#endif

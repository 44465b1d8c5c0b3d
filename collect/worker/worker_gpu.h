/* worker_gpu.h - the worker's own GPU functions (worker_gpu.cu), with C
 * linkage: a non-finite count for the reference, and the calibration of
 * DESIGN.md 5a step 9.  Device pointers belong to the caller. */
#ifndef KBV_WORKER_GPU_H
#define KBV_WORKER_GPU_H

#include <stddef.h>
#include <stdint.h>
#include "kbv.h"
#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counts non-finite floats among n (0 for KBV_I64); synchronises s. */
int wg_count_nonfinite(const void *dev, int64_t n, kbv_dtype dt, cudaStream_t s, int64_t *count,
                       kbv_err *e);

/* A 64-bit fingerprint of n elements in which -0.0 and +0.0 (and all NaNs)
 * of a KBV_F32 or KBV_BF16 tensor count as equal, so that input independence is not
 * fooled by the sign of a zero (ReLU of -0.0); synchronises s. */
int wg_fingerprint(const void *dev, int64_t n, kbv_dtype dt, cudaStream_t s, uint64_t *fp,
                   kbv_err *e);
/* wg_fingerprint of n floats rounded to bfloat16 (to nearest, ties to
 * even): what a KBV_BF16 tensor holding them would give.  The BF16
 * setting's reference is float; whether two references differ is asked at
 * the precision of the candidate's output, so that outputs that agree
 * once rounded are not taken for an input-independent candidate. */
int wg_fingerprint_as_bf16(const float *dev, int64_t n, cudaStream_t s, uint64_t *fp, kbv_err *e);

/* Enqueues one one-thread kernel on s that writes the GPU's global timer
 * (%globaltimer, nanoseconds) to *slot, a device word the worker owns: the
 * second clock of DESIGN.md 5a step 7a, read around each timed call so that
 * a candidate that falsifies event times must also falsify device memory. */
int wg_stamp(unsigned long long *slot, cudaStream_t s, kbv_err *e);

/* The gate (DESIGN.md 5a step 7): a kernel that holds a stream with every
 * SM's thread slots taken, so that while the host enqueues a timed call
 * no other kernel, on any stream of the context, can run.  A candidate
 * that launched its real work on a stream of its own during its timed call
 * would otherwise have it run before the start event, in the head start
 * that the L2 flush or any other wait on the timed stream gives.  The gate
 * releases when the host says so, or after WG_GATE_MAX_MS on its own (a
 * call that synchronises would otherwise wait for ever).  Opaque; made by
 * wg_gate_open, owned by the caller, freed by wg_gate_close. */
typedef struct wg_gate wg_gate;

#define WG_GATE_MAX_MS 10.0

/* Makes a gate for the current device; fails (with a message) where the
 * device cannot run every block of it at once (no cooperative launch, or
 * an SM's thread slots not filled by whole blocks). */
int wg_gate_open(wg_gate **out, kbv_err *e);
void wg_gate_close(wg_gate *g);
/* Enqueues the gate on s behind what is there and returns once every block
 * of it runs (so after the work before it, the flush).  Call it with the
 * device synchronised: it resets the words it shares with the kernel.  The
 * gate releases when told (wg_gate_release) or hold_ms after its blocks
 * started, whichever is first (hold_ms is clamped to (0, WG_GATE_MAX_MS]).
 * When it releases, it writes the global timer to *release_stamp, a device
 * word. */
int wg_gate_hold(wg_gate *g, cudaStream_t s, unsigned long long *release_stamp, double hold_ms, kbv_err *e);
/* Lets the gate go; the host's enqueueing is done. */
void wg_gate_release(wg_gate *g);
/* After the stream synchronised: whether the gate released on its own
 * (timed out) rather than when told.  What a candidate's kernel could have
 * written: a note, never a measurement. */
int wg_gate_timed_out(const wg_gate *g);

/* Enqueues on s blocks that take a share (0 < share <= 1) of every SM's
 * thread slots, spread as the hardware places them, and hold them for us
 * microseconds doing nothing.  The determinism probe launches it on a
 * stream of its own just before a candidate's call, so that the call's
 * blocks start on other SMs and in another order than on an idle GPU: a
 * result that depends on the order of atomic updates then shows it. */
int wg_occupy(cudaStream_t s, double share, double us, kbv_err *e);

typedef struct {
    double copy_bandwidth_gbps;   /* (read + write bytes) / time of a device copy */
    double fp32_tflops;           /* cuBLAS SGEMM, strict FP32, 8192^3 */
    double tf32_tflops;           /* the same with TF32 tensor cores */
} wg_calib;

/* Measures the current device; takes a few hundred ms. */
int wg_calibrate(wg_calib *out, kbv_err *e);

/* The cuBLAS version as an integer (e.g. 130100), or 0. */
int wg_cublas_version(void);

#ifdef __cplusplus
}
#endif

#endif

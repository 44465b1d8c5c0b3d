/* fakecuda.h - the CPU stand-in for a GPU used by tests/cli/collect_fake.sh:
 * a fake CUDA runtime (fake_cudart.c) and GPU library (fake_gpu.c) on host
 * memory, so that the worker's protocol (checks, probes, timing, memory,
 * statuses) runs end to end on a machine without a GPU.  Every operation
 * touches at most FAKE_CAP_ELEMS elements (4-byte words) of a buffer, so
 * that the suite's multi-GB tensors cost nothing; the buffers themselves are
 * reserved, not committed. */
#ifndef KBV_FAKECUDA_H
#define KBV_FAKECUDA_H

#include <stddef.h>
#include <stdint.h>

#define FAKE_CAP_ELEMS ((int64_t)1 << 17)
#define FAKE_CAP_BYTES ((size_t)FAKE_CAP_ELEMS * 4)

static inline int64_t fake_elems(int64_t n) { return n < FAKE_CAP_ELEMS ? n : FAKE_CAP_ELEMS; }
static inline size_t fake_bytes(size_t n) { return n < FAKE_CAP_BYTES ? n : FAKE_CAP_BYTES; }

#ifdef __cplusplus
extern "C" {
#endif
/* Test hooks for candidates: a sticky error (an illegal address), and work
 * "on another stream" that only a device-wide synchronise completes. */
void fakecuda_set_sticky(int err);
void fakecuda_defer(void (*fn)(void *), void *arg);
#ifdef __cplusplus
}
#endif

#endif

/* bench_api.h - a small C API over the suite and its baselines for tools
 * outside kbv: tests/parity/parity.py loads it from build/libkbv_baseline.so
 * with ctypes and runs kbv's input generator and baselines on buffers that
 * PyTorch allocated, so that both run on the same inputs in one process.
 * Device pointers and the stream belong to the caller.  Functions return 0
 * or a negative KBV_E* code and write a message into err (errlen bytes).
 */
#ifndef KBV_BENCH_API_H
#define KBV_BENCH_API_H

#ifdef __cplusplus
extern "C" {
#endif

/* Fills input `index` of problem `id` for (seed, dist 1..5, trial) with
 * kbv's keyed generator (gen_fill). */
int kbvb_gen(const char *id, int index, int dist, unsigned long long seed, int trial, void *dev,
             void *stream, char *err, int errlen);

/* 1 when the problem's baseline can run here, else 0 and the reason. */
int kbvb_available(const char *id, char *why, int n);

/* Creates the baseline of `id` for the given input and output buffers (in
 * the problem's order, shapes and dtypes: float32, not bfloat16); *handle
 * is released by kbvb_destroy. */
int kbvb_create(const char *id, void *const *inputs, void *const *outputs, void *stream,
                void **handle, char *err, int errlen);
/* Enqueues the baseline (variant 0 fp32, 1 tf32, 2 bf16, 3 the fp32
 * correctness reference, base_run_reference) on stream; for bf16 the
 * float tensors are bfloat16 buffers of the same shapes. */
int kbvb_run(void *handle, int variant, void *const *inputs, void *const *outputs, void *stream,
             char *err, int errlen);
/* Bytes of workspace the baseline holds. */
unsigned long long kbvb_workspace_bytes(void *handle);
/* What the variant (0 fp32, 1 tf32, 2 bf16) runs where the baseline chose it by
 * timing ("" otherwise, or before its first run); owned by the handle. */
const char *kbvb_choice(void *handle, int variant);
void kbvb_destroy(void *handle);

#ifdef __cplusplus
}
#endif

#endif

/* netvlad.h - NetVLAD's baseline (KernelBench level 3, 46 and 47), for
 * rnn.cu's model family, which dispatches to it: fp32 and tf32 through
 * base_gemm, bf16 natively on the bfloat16 tensors (netvlad.cu says how).
 *
 * The caller owns base_ctx and the call; the state belongs to this module
 * from vlad_create to vlad_destroy. */
#ifndef KBV_NETVLAD_H
#define KBV_NETVLAD_H

#include "base_impl.h"

extern "C" {
#include "l3model.h"
}

struct vlad_state;

/* Allocates *out for the model sp worked out over the problem's x (plan;
 * both read here only) with its device buffers, and makes sure of b's
 * cuBLAS handle.  0, or a negative error in e (*out then NULL or partly
 * made: vlad_destroy frees either). */
int vlad_create(base_ctx *b, const model_spec *sp, const model_plan *plan, vlad_state **out, kbv_err *e);
/* One forward pass on call's float tensors in variant v (fp32 or tf32). */
int vlad_run(base_ctx *b, base_variant v, vlad_state *s, const kbv_call *call, kbv_err *e);
/* One forward pass on call's bfloat16 tensors (the BF16 setting). */
int vlad_run_bf16(base_ctx *b, vlad_state *s, const kbv_call *call, kbv_err *e);
/* Frees s and its buffers; NULL is allowed. */
void vlad_destroy(vlad_state *s);

#endif

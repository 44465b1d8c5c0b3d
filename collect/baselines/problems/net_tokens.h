/* net_tokens.h - the transformer layers of the level-3 interpreter
 * (problems/net_tokens.cu), for net.cu.  C++, private to
 * collect/baselines/problems/. */
#ifndef KBV_NET_TOKENS_H
#define KBV_NET_TOKENS_H

#include "base_impl.h"

extern "C" {
#include "net.h"
}

/* Device scratch of the token layers, owned by the interpreter's state
 * and released by net_tok_destroy. */
/* Sequences this short take every head in one strided batch (head-major
 * copies of q, k, v, as PyTorch eager makes them): their per-head
 * products are too small to fill the GPU one head at a time. */
#define NET_TOK_SHORT 64

struct net_tok_scratch {
    float *scores;    /* attention scores: one head's (N T^2), or every head's of short sequences or windows */
    float *heads;     /* head-major q, k, v of short sequences, 3 N T C */
    float *win[2];    /* a spatial MLP's windows, before and after mixing */
    float *wa[3];     /* window attention: rows then head-major q, k, v (3 M C), qkv, the heads side by side */
    float *table;     /* window attention's position-bias table, (2k - 1)^2 x heads */
};

/* Allocates the scratch that program sp (walked into pl) needs; sets
 * *blas when one of its layers runs cuBLAS.  0 or a negative KBV_E* code
 * (what was allocated stays in t for net_tok_destroy). */
int net_tok_create(base_ctx *b, const net_spec *sp, const net_plan *pl, net_tok_scratch *t, int *blas, kbv_err *e);
void net_tok_destroy(net_tok_scratch *t);

/* The address of part p of plan pl in a call's table at (net.cu's:
 * at[i] is where pl->param[i] is read this call, in the packed params or
 * in its aligned copy). */
inline const float *net_tok_par(const void *const *at, const net_plan *pl, const net_param *p)
{
    return static_cast<const float *>(at[p - pl->param]);
}

/* Runs layer l when it is a token layer: reads cur (and skip, a window
 * MLP's residual, or NULL) and its parameters where at says (above),
 * writes dst, or cur itself when may_in_place and the layer can; *wrote
 * gets the tensor written.  0, a negative KBV_E* code, or 1 when layer l
 * is none of these (nothing enqueued). */
int net_tok_run(base_ctx *b, base_variant v, const net_spec *sp, const net_plan *pl, int l, const float *cur,
                const float *skip, float *dst, int may_in_place, const void *const *at, net_tok_scratch *t,
                cudaStream_t s, float **wrote, kbv_err *e);

/* The same in the BF16 setting, for the layers it has (attention, layer
 * norm, tokens and back, unfold, cls token, positional embedding, first
 * token; Swin's are float only): bfloat16 activations and parameters,
 * float arithmetic, each output rounded once; the attention's products
 * through base_gemm_bf16 with bfloat16 scores.  0, a negative KBV_E*
 * code, or 1 when layer l is none of these (nothing enqueued). */
int net_tok_run_bf16(base_ctx *b, const net_spec *sp, const net_plan *pl, int l, const __nv_bfloat16 *cur,
                     __nv_bfloat16 *dst, int may_in_place, const void *const *at, net_tok_scratch *t, cudaStream_t s,
                     __nv_bfloat16 **wrote, kbv_err *e);

#endif

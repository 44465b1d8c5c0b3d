/* bf16path.c - the bf16 baseline's path per problem (bf16path.h). */
#include "bf16path.h"

#include "chain.h"
#include "l3model.h"
#include "net.h"
#include "ops.h"

/* A level-2 chain: a linear layer whose steps are elementwise only runs
 * natively (cuBLASLt with the bias epilogue, one bf16 pass); linear layers
 * with more after them (or a second layer) and a convolution (its input
 * average-pooled first, in bf16, where the chain says so) run their
 * producer in bf16. */
static bf16_path chain_path(const suite_problem *p)
{
    const chain_spec *sp = suite_chain(p->op);
    if (!sp) return BF16_FALLBACK;
    chain_dims prod, mid, fin;
    long long post_max = 0;
    if (chain_shapes(p, sp, &prod, &mid, &fin, &post_max)) return BF16_FALLBACK;
    if (sp->producer == CHAIN_LINEAR) {
        if (sp->w2 == 0 && sp->mid == MID_NONE && sp->post[0].kind == ST_END &&
            chain_numel(&fin) == chain_numel(&prod))
            return BF16_NATIVE;
        return BF16_NATIVE_PRODUCER;
    }
    return BF16_NATIVE_PRODUCER;
}

/* A layer program of linear layers, convolutions (not a patch
 * embedding's), max and average poolings and ReLUs only (the MLPs, LeNet-5,
 * AlexNet, the VGGs) runs natively: each linear layer one cuBLASLt product
 * with the bias as its epilogue, each convolution cuDNN in bf16, each
 * pooling and ReLU one bfloat16 pass (net.cu's run_bf16).  Any other
 * layer falls back. */
static bf16_path net_path(const suite_problem *p)
{
    const net_spec *sp = suite_net_of(p);
    if (!sp || sp->n_layers < 1) return BF16_FALLBACK;
    int computes = 0;
    for (int l = 0; l < sp->n_layers; l++) {
        const net_layer *L = &sp->layers[l];
        int k = L->kind;
        if (k == NET_LINEAR || ((k == NET_CONV2D || k == NET_CONVT2D) && !net_is_patch_conv(L))) computes = 1;
        else if (k != NET_RELU && k != NET_MAXPOOL2D && k != NET_AVGPOOL2D && k != NET_DROPOUT &&
                 k != NET_FLATTEN && k != NET_END)
            return BF16_FALLBACK;
    }
    return computes ? BF16_NATIVE : BF16_FALLBACK;
}

bf16_path suite_bf16_path(const suite_problem *p)
{
    if (!p) return BF16_FALLBACK;
    int op = p->op;
    if (op >= OP_MM && op <= OP_MATMUL_LAST) return BF16_NATIVE;
    if (op >= OP_RELU && op <= OP_ELEMENTWISE_LAST) return BF16_NATIVE;
    if (op >= OP_SOFTMAX && op <= OP_SOFTMAX_LAST) return BF16_NATIVE;
    if (op >= OP_BATCHNORM && op <= OP_NORM_LAST) return BF16_NATIVE;
    if (op >= OP_CONV && op <= OP_CONV_LAST) return BF16_NATIVE;
    if (op >= OP_MAXPOOL && op <= OP_POOL_LAST) return BF16_NATIVE;
    if (op >= OP_SUM_DIM && op <= OP_REDUCE_LAST) return BF16_NATIVE;
    if (op >= OP_MSE && op <= OP_LOSS_LAST) return BF16_NATIVE;
    if (op >= OP_CUMSUM && op <= OP_SCAN_LAST) return BF16_NATIVE;
    if (op >= OP_SDPA && op <= OP_ATTENTION_LAST) return BF16_NATIVE;
    if ((op >= OP_CHAIN_FIRST && op <= OP_CHAIN_LAST) || (op >= OP_CONV_CHAIN_FIRST && op <= OP_CONV_CHAIN_LAST))
        return chain_path(p);
    if ((op >= OP_NET_FIRST && op <= OP_NET_LAST && !(op >= OP_MODEL_FIRST && op <= OP_MODEL_LAST)) ||
        (op >= OP_CONV_NET_FIRST && op <= OP_CONV_NET_LAST))
        return net_path(p);
    /* The single-step cell (KernelBench 33: cat, two linear layers and a
     * tanh) runs natively (rnn.cu's run_bf16); the other models fall
     * back. */
    if (op >= OP_MODEL_FIRST && op <= OP_MODEL_LAST) {
        if (p->n_inputs > 0 && model_is_single_step(suite_model_of(p), p->inputs[0].ndim)) return BF16_NATIVE;
    }
    return BF16_FALLBACK;
}

const char *suite_bf16_path_name(bf16_path k)
{
    switch (k) {
    case BF16_NATIVE: return "native";
    case BF16_NATIVE_PRODUCER: return "native-producer";
    default: return "fallback";
    }
}

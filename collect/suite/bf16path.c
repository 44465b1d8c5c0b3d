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
 * embedding's), batch norms, poolings, activations, residual sums,
 * concatenations, channel shuffles and softmaxes (the MLPs, LeNet-5,
 * AlexNet, the VGGs, GoogLeNet, the ResNets, DenseNets, SqueezeNets,
 * MobileNets, EfficientNets, ShuffleNets, RegNet, the U-Net), and with
 * layer norms and causal softmax attention (minGPT's attention and block)
 * runs natively: net.cu's interpreter on the bfloat16 tensors
 * (run_bf16), each linear layer one cuBLASLt product with the bias as its
 * epilogue, each convolution cuDNN in bf16, the attention's products
 * cuBLAS's bf16 batched GEMM with bf16 scores, every other layer kbv's
 * bfloat16 pass.
 *
 * A program with other attention, tokens of an image, a patch embedding
 * or Swin's windows falls back.  Swin's window layers have no bf16 path.
 * The other attention programs stay on the fallback for what was
 * measured of them: PyTorch's bf16 eager misses kbv's 1e-2 tolerance on
 * the ReLU self-attention (its scores are unbounded) and on the vision
 * attention (data/parity/nvidia-h200.json), so a baseline that rounds as
 * it does would fail its own check; ViT's bf16 parity has no in-run
 * samples yet.  net_tokens.cu computes every one of their layers in bf16,
 * for when a measurement says that they can go native. */
static int net_layer_bf16(const net_layer *L)
{
    switch (L->kind) {
    case NET_LINEAR: case NET_BN2D: case NET_RELU: case NET_RELU6: case NET_SIGMOID: case NET_GELU:
    case NET_GELU_TANH: case NET_MAXPOOL2D: case NET_AVGPOOL2D: case NET_GAP: case NET_FLATTEN: case NET_DROPOUT:
    case NET_SAVE: case NET_SWAP: case NET_ADD: case NET_PUSH: case NET_EXCHANGE: case NET_CONCAT: case NET_SHUFFLE:
    case NET_SOFTMAX: case NET_LAYERNORM: case NET_END:
        return 1;
    case NET_ATTENTION:
        return (L->k & (NET_ATTN_CAUSAL | NET_ATTN_RELU)) == NET_ATTN_CAUSAL;
    case NET_CONV2D: case NET_CONVT2D:
        return !net_is_patch_conv(L);
    default:
        return 0;
    }
}

static bf16_path net_path(const suite_problem *p)
{
    const net_spec *sp = suite_net_of(p);
    if (!sp || sp->n_layers < 1) return BF16_FALLBACK;
    int computes = 0;
    for (int l = 0; l < sp->n_layers; l++) {
        const net_layer *L = &sp->layers[l];
        if (!net_layer_bf16(L)) return BF16_FALLBACK;
        if (L->kind == NET_LINEAR || L->kind == NET_CONV2D || L->kind == NET_CONVT2D) computes = 1;
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
    /* The recurrent networks: cuDNN's RNN on bfloat16 data (rnn.cu's
     * create16), as PyTorch runs them since cuDNN 9.13; where cuDNN
     * refuses, each call takes the fallback, and its choice says so. */
    if (op >= OP_RNN_FIRST && op <= OP_RNN_LAST) return BF16_NATIVE;
    if ((op >= OP_CHAIN_FIRST && op <= OP_CHAIN_LAST) || (op >= OP_CONV_CHAIN_FIRST && op <= OP_CONV_CHAIN_LAST))
        return chain_path(p);
    if ((op >= OP_NET_FIRST && op <= OP_NET_LAST && !(op >= OP_MODEL_FIRST && op <= OP_MODEL_LAST)) ||
        (op >= OP_CONV_NET_FIRST && op <= OP_CONV_NET_LAST))
        return net_path(p);
    /* The single-step cell (KernelBench 33: cat, two linear layers and a
     * tanh) and NetVLAD run natively (rnn.cu's run_bf16); the other
     * models fall back. */
    if (op >= OP_MODEL_FIRST && op <= OP_MODEL_LAST) {
        const model_spec *sp = suite_model_of(p);
        if (sp && sp->kind == MODEL_NETVLAD) return BF16_NATIVE;
        if (p->n_inputs > 0 && model_is_single_step(sp, p->inputs[0].ndim)) return BF16_NATIVE;
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

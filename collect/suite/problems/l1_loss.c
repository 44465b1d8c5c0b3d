/* l1_loss.c - KernelBench level 1, losses (problems 94-96, 98-100) and
 * scaled dot-product attention (97).  Losses reduce to a scalar (ndim 0).
 * Where KernelBench multiplies an input by scale = torch.rand(()), the
 * input is G_RSCALE: the scalar comes from the same keyed generator, per
 * trial.  FLOPs count the operations per element of PyTorch's formula;
 * min_bytes: every input read once, the scalar written once. */
#include "spec.h"

#define LS_B 32768LL
#define LS_D 32768LL
#define LS_N (LS_B * LS_D)

/* 95: [32768, 4096] logits, int64 targets */
#define CE_B 32768LL
#define CE_C 4096LL

/* 97: [32, 32, 512, 1024] */
#define AT_B 32LL
#define AT_H 32LL
#define AT_S 512LL
#define AT_E 1024LL
#define AT_N (AT_B * AT_H * AT_S * AT_E)

/* 98: [16384, 16384] */
#define KL_B 16384LL
#define KL_D 16384LL

/* 99: [32768, 8192] */
#define TR_B 32768LL
#define TR_D 8192LL

const suite_problem suite_l1_loss[] = {
    /* subtract, square, add: 3 */
    { .id = "L1_094_mseloss", .level = 1, .number = 94, .name = "94_MSELoss",
      .expr = "torch.mean((predictions - targets) ** 2)",
      INPUTS(IN("predictions", G_RSCALE, LS_B, LS_D), IN("targets", G_RAND, LS_B, LS_D)),
      OUTPUTS(OUT_SCALAR),
      .flops = 3.0 * LS_N, .min_bytes = 4.0 * (2 * LS_N + 1), .op = OP_MSE },
    /* log-sum-exp over each row (max, subtract, exp, add: 4 per element) */
    { .id = "L1_095_crossentropyloss", .level = 1, .number = 95, .name = "95_CrossEntropyLoss",
      .expr = "torch.nn.functional.cross_entropy(predictions, targets)",
      INPUTS(IN("predictions", G_RAND, CE_B, CE_C),
             IN_FIXED("targets", KBV_I64, G_INT(0, 4096), CE_B)),
      OUTPUTS(OUT_SCALAR), ATTRS({ "num_classes", 4096 }),
      .flops = 4.0 * CE_B * CE_C, .min_bytes = 4.0 * CE_B * CE_C + 8.0 * CE_B + 4.0,
      .op = OP_CROSS_ENTROPY },
    /* subtract, abs, compare, square or subtract, add: 5 */
    { .id = "L1_096_huberloss", .level = 1, .number = 96, .name = "96_HuberLoss",
      .expr = "torch.nn.functional.smooth_l1_loss(predictions, targets)",
      INPUTS(IN("predictions", G_RSCALE, LS_B, LS_D), IN("targets", G_RAND, LS_B, LS_D)),
      OUTPUTS(OUT_SCALAR),
      .flops = 5.0 * LS_N, .min_bytes = 4.0 * (2 * LS_N + 1), .op = OP_HUBER },
    /* 97: KernelBench draws float16 inputs; kbv's ABI has float32 only, so
     * the problem is the same computation in float32.  FLOPs: two batched
     * products, 2 * (2 B H S S E), and the softmax (5 per score). */
    { .id = "L1_097_scaleddotproductattention", .level = 1, .number = 97,
      .name = "97_ScaledDotProductAttention",
      .expr = "torch.nn.functional.scaled_dot_product_attention(Q, K, V)",
      INPUTS(IN("Q", G_RAND, AT_B, AT_H, AT_S, AT_E), IN("K", G_RAND, AT_B, AT_H, AT_S, AT_E),
             IN("V", G_RAND, AT_B, AT_H, AT_S, AT_E)),
      OUTPUTS(OUT(AT_B, AT_H, AT_S, AT_E)),
      .flops = 4.0 * AT_B * AT_H * AT_S * AT_S * AT_E + 5.0 * AT_B * AT_H * AT_S * AT_S,
      .min_bytes = 4.0 * 4 * AT_N, .uses_tf32 = 1, .op = OP_SDPA },
    /* t (log t - log p): two logs, subtract, multiply, add: 5 */
    { .id = "L1_098_kldivloss", .level = 1, .number = 98, .name = "98_KLDivLoss",
      .expr = "torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean')",
      INPUTS(IN("predictions", G_SOFTMAX_RSCALE, KL_B, KL_D), IN("targets", G_SOFTMAX, KL_B, KL_D)),
      OUTPUTS(OUT_SCALAR),
      .flops = 5.0 * KL_B * KL_D, .min_bytes = 4.0 * (2 * KL_B * KL_D + 1), .op = OP_KLDIV },
    /* two distances (subtract, add eps, square, add: 4 each), then per row
     * a square root each and the hinge: 8 per element */
    { .id = "L1_099_tripletmarginloss", .level = 1, .number = 99, .name = "99_TripletMarginLoss",
      .expr = "torch.nn.TripletMarginLoss(margin=margin)(anchor, positive, negative)",
      INPUTS(IN("anchor", G_RSCALE, TR_B, TR_D), IN("positive", G_RAND, TR_B, TR_D),
             IN("negative", G_RAND, TR_B, TR_D)),
      OUTPUTS(OUT_SCALAR), ATTRS({ "margin", 1.0 }),
      .flops = 8.0 * TR_B * TR_D, .min_bytes = 4.0 * (3 * TR_B * TR_D + 1), .op = OP_TRIPLET },
    /* multiply, subtract, max, add: 4.  targets [32768] broadcast along the
     * last dimension of predictions.  D5 (KernelBench-Verified's hard case
     * for this loss): targets alternate +1, -1. */
    { .id = "L1_100_hingeloss", .level = 1, .number = 100, .name = "100_HingeLoss",
      .expr = "torch.mean(torch.clamp(1 - predictions * targets, min=0))",
      INPUTS(IN("predictions", G_RAND, LS_B, LS_D), IN_FIXED("targets", KBV_F32, G_SIGN, LS_B)),
      OUTPUTS(OUT_SCALAR),
      .flops = 4.0 * LS_N, .min_bytes = 4.0 * (LS_N + LS_B + 1), .op = OP_HINGE,
      D5(G_RAND, G_ALT(1.0, -1.0)) },
};
SUITE_COUNT(suite_l1_loss);

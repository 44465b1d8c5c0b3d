/* l1_norm.c - KernelBench level 1, normalisations (problems 33-40).
 * x ~ U[0,1).  Affine parameters start at PyTorch's constants (weight 1,
 * bias 0), which D2-D4 redraw.  BatchNorm2d runs in training mode, as
 * KernelBench's modules do: batch statistics, biased variance, eps 1e-5.
 * FLOPs per element: statistics 3 (a sum, a square, its sum), then the
 * normalisation 2 (subtract, multiply by the reciprocal) and the affine 2
 * where there is one; scaled norms (RMS, Frobenius, L1, L2) 3 for the
 * statistic and 1 for the division.  min_bytes: x, the parameters, y. */
#include "spec.h"

#define N4_B 112LL
#define N4_C 64LL
#define N4_H 512LL
#define N4_W 512LL
#define N4_N (N4_B * N4_C * N4_H * N4_W)

/* 33: batch 64 instead of 112 */
#define BN_B 64LL
#define BN_N (BN_B * N4_C * N4_H * N4_W)

/* 38, 39: [32768, 65535] */
#define R_B 32768LL
#define R_D 65535LL

/* 40: [16, 64, 256, 256], normalized over the last three */
#define LN_B 16LL
#define LN_C 64LL
#define LN_H 256LL
#define LN_W 256LL
#define LN_F (LN_C * LN_H * LN_W)

const suite_problem suite_l1_norm[] = {
    { .id = "L1_033_batchnorm", .level = 1, .number = 33, .name = "33_BatchNorm",
      .expr = "nn.BatchNorm2d(num_features)(x)  (training mode)",
      INPUTS(IN("x", G_RAND, BN_B, N4_C, N4_H, N4_W),
             PARAM("weight", G_CONST(1.0), N4_C), PARAM("bias", G_CONST(0.0), N4_C)),
      OUTPUTS(OUT(BN_B, N4_C, N4_H, N4_W)),
      ATTRS({ "num_features", 64 }, { "eps", 1e-5 }),
      .flops = 7.0 * BN_N, .min_bytes = 4.0 * (2 * BN_N + 2 * N4_C), .op = OP_BATCHNORM },
    { .id = "L1_034_instancenorm", .level = 1, .number = 34, .name = "34_InstanceNorm",
      .expr = "nn.InstanceNorm2d(num_features)(x)",
      INPUTS(IN("x", G_RAND, N4_B, N4_C, N4_H, N4_W)),
      OUTPUTS(OUT(N4_B, N4_C, N4_H, N4_W)),
      ATTRS({ "num_features", 64 }, { "eps", 1e-5 }),
      .flops = 5.0 * N4_N, .min_bytes = 4.0 * 2 * N4_N, .op = OP_INSTANCENORM },
    { .id = "L1_035_groupnorm", .level = 1, .number = 35, .name = "35_GroupNorm_",
      .expr = "nn.GroupNorm(num_groups, num_features)(x)",
      INPUTS(IN("x", G_RAND, N4_B, N4_C, N4_H, N4_W),
             PARAM("weight", G_CONST(1.0), N4_C), PARAM("bias", G_CONST(0.0), N4_C)),
      OUTPUTS(OUT(N4_B, N4_C, N4_H, N4_W)),
      ATTRS({ "num_features", 64 }, { "num_groups", 8 }, { "eps", 1e-5 }),
      .flops = 7.0 * N4_N, .min_bytes = 4.0 * (2 * N4_N + 2 * N4_C), .op = OP_GROUPNORM },
    { .id = "L1_036_rmsnorm", .level = 1, .number = 36, .name = "36_RMSNorm_",
      .expr = "x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + eps)",
      INPUTS(IN("x", G_RAND, N4_B, N4_C, N4_H, N4_W)),
      OUTPUTS(OUT(N4_B, N4_C, N4_H, N4_W)),
      ATTRS({ "num_features", 64 }, { "eps", 1e-5 }),
      .flops = 4.0 * N4_N, .min_bytes = 4.0 * 2 * N4_N, .op = OP_RMSNORM_DIM1 },
    { .id = "L1_037_frobeniusnorm", .level = 1, .number = 37, .name = "37_FrobeniusNorm_",
      .expr = "x / torch.norm(x, p='fro')",
      INPUTS(IN("x", G_RAND, N4_B, N4_C, N4_H, N4_W)),
      OUTPUTS(OUT(N4_B, N4_C, N4_H, N4_W)),
      .flops = 3.0 * N4_N, .min_bytes = 4.0 * 2 * N4_N, .op = OP_FROBENIUS },
    { .id = "L1_038_l1norm", .level = 1, .number = 38, .name = "38_L1Norm_",
      .expr = "x / torch.mean(torch.abs(x), dim=1, keepdim=True)",
      INPUTS(IN("x", G_RAND, R_B, R_D)), OUTPUTS(OUT(R_B, R_D)),
      .flops = 3.0 * R_B * R_D, .min_bytes = 4.0 * 2 * R_B * R_D, .op = OP_L1NORM },
    { .id = "L1_039_l2norm", .level = 1, .number = 39, .name = "39_L2Norm_",
      .expr = "x / torch.norm(x, p=2, dim=1, keepdim=True)",
      INPUTS(IN("x", G_RAND, R_B, R_D)), OUTPUTS(OUT(R_B, R_D)),
      .flops = 3.0 * R_B * R_D, .min_bytes = 4.0 * 2 * R_B * R_D, .op = OP_L2NORM },
    { .id = "L1_040_layernorm", .level = 1, .number = 40, .name = "40_LayerNorm",
      .expr = "nn.LayerNorm((features, dim1, dim2))(x)",
      INPUTS(IN("x", G_RAND, LN_B, LN_C, LN_H, LN_W),
             PARAM("weight", G_CONST(1.0), LN_C, LN_H, LN_W),
             PARAM("bias", G_CONST(0.0), LN_C, LN_H, LN_W)),
      OUTPUTS(OUT(LN_B, LN_C, LN_H, LN_W)),
      ATTRS({ "features", 64 }, { "dim1", 256 }, { "dim2", 256 }, { "eps", 1e-5 }),
      .flops = 7.0 * LN_B * LN_F, .min_bytes = 4.0 * (2 * LN_B * LN_F + 2 * LN_F),
      .op = OP_LAYERNORM },
};
SUITE_COUNT(suite_l1_norm);

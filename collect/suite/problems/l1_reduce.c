/* l1_reduce.c - KernelBench level 1, reductions over dim 1 of
 * x [128, 4096, 4095] ~ U[0,1) (problems 47-49, 51-53).  FLOPs: one
 * operation per input element (the mean's one division per output is
 * left out); min_bytes: x read once and the output written once (int64 for
 * argmax and argmin). */
#include "spec.h"

#define RD_B 128LL
#define RD_R 4096LL
#define RD_I 4095LL
#define RD_N (RD_B * RD_R * RD_I)
#define RD_O (RD_B * RD_I)

#define RED(id_, num, nm, ex, op_, ...)                                          \
    { .id = id_, .level = 1, .number = num, .name = nm, .expr = ex,          \
      INPUTS(IN("x", G_RAND, RD_B, RD_R, RD_I)), ATTRS({ "dim", 1 }),         \
      .flops = 1.0 * RD_N, .op = op_, __VA_ARGS__ }

const suite_problem suite_l1_reduce[] = {
    RED("L1_047_sum_reduction_over_a_dimension", 47, "47_Sum_reduction_over_a_dimension",
        "torch.sum(x, dim=1, keepdim=True)", OP_SUM_DIM,
        OUTPUTS(OUT(RD_B, 1LL, RD_I)), .min_bytes = 4.0 * (RD_N + RD_O)),
    RED("L1_048_mean_reduction_over_a_dimension", 48, "48_Mean_reduction_over_a_dimension",
        "torch.mean(x, dim=1)", OP_MEAN_DIM,
        OUTPUTS(OUT(RD_B, RD_I)), .min_bytes = 4.0 * (RD_N + RD_O)),
    RED("L1_049_max_reduction_over_a_dimension", 49, "49_Max_reduction_over_a_dimension",
        "torch.max(x, dim=1)[0]", OP_MAX_DIM,
        OUTPUTS(OUT(RD_B, RD_I)), .min_bytes = 4.0 * (RD_N + RD_O)),
    RED("L1_051_argmax_over_a_dimension", 51, "51_Argmax_over_a_dimension",
        "torch.argmax(x, dim=1)", OP_ARGMAX_DIM,
        OUTPUTS(OUT_I64(RD_B, RD_I)), .min_bytes = 4.0 * RD_N + 8.0 * RD_O),
    RED("L1_052_argmin_over_a_dimension", 52, "52_Argmin_over_a_dimension",
        "torch.argmin(x, dim=1)", OP_ARGMIN_DIM,
        OUTPUTS(OUT_I64(RD_B, RD_I)), .min_bytes = 4.0 * RD_N + 8.0 * RD_O),
    RED("L1_053_min_reduction_over_a_dimension", 53, "53_Min_reduction_over_a_dimension",
        "torch.min(x, dim=1)[0]", OP_MIN_DIM,
        OUTPUTS(OUT(RD_B, RD_I)), .min_bytes = 4.0 * (RD_N + RD_O)),
};
SUITE_COUNT(suite_l1_reduce);

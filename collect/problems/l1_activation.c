/* l1_activation.c - KernelBench level 1, elementwise activations
 * (problems 19-32 and 88).  Every one maps x [batch, dim] to a tensor of
 * the same shape.  FLOPs count the arithmetic of PyTorch's formula per
 * element (comparisons count as one; a transcendental function as one);
 * min_bytes is x read once and the output written once. */
#include "spec.h"

#define ACT_B 4096LL
#define ACT_D 393216LL
#define ACT_N (ACT_B * ACT_D)

const suite_problem suite_l1_activation[] = {
    {
        .id = "L1_019_relu", .level = 1, .number = 19, .name = "19_ReLU",
        .expr = "torch.relu(x)",
        INPUTS(IN("x", G_RAND, ACT_B, ACT_D)),
        OUTPUTS(OUT(ACT_B, ACT_D)),
        .flops = 1.0 * ACT_N,                  /* max(x, 0): 1 */
        .min_bytes = 4.0 * 2 * ACT_N,
        .op = OP_RELU,
    },
};
SUITE_COUNT(suite_l1_activation);

/* l1_softmax.c - KernelBench level 1, softmax and log-softmax over dim 1
 * (problems 23, 24).  FLOPs: per element a max, a subtraction, an exp, an
 * addition to the sum and a division (softmax) or subtraction (log-softmax):
 * 5 per element.  min_bytes: x read once, the output written once. */
#include "spec.h"

#define SM_B 4096LL
#define SM_D 393216LL

const suite_problem suite_l1_softmax[] = {
    {
        .id = "L1_023_softmax", .level = 1, .number = 23, .name = "23_Softmax",
        .expr = "torch.softmax(x, dim=1)",
        INPUTS(IN("x", G_RAND, SM_B, SM_D)),
        OUTPUTS(OUT(SM_B, SM_D)),
        .flops = 5.0 * SM_B * SM_D,
        .min_bytes = 4.0 * 2 * SM_B * SM_D,
        .op = OP_SOFTMAX,
    },
};
SUITE_COUNT(suite_l1_softmax);

/* l1_softmax.c - KernelBench level 1, softmax and log-softmax over dim 1
 * (problems 23, 24), x ~ U[0,1) of [4096, 393216].  FLOPs per element: a
 * max, a subtraction, an exp, an addition to the sum and a division
 * (softmax) or a subtraction (log-softmax), 5.  min_bytes: x read once,
 * the output written once. */
#include "spec.h"

#define SM_B 4096LL
#define SM_D 393216LL

const suite_problem suite_l1_softmax[] = {
    { .id = "L1_023_softmax", .level = 1, .number = 23, .name = "23_Softmax",
      .expr = "torch.softmax(x, dim=1)",
      INPUTS(IN("x", G_RAND, SM_B, SM_D)), OUTPUTS(OUT(SM_B, SM_D)),
      .flops = 5.0 * SM_B * SM_D, .min_bytes = 4.0 * 2 * SM_B * SM_D, .op = OP_SOFTMAX },
    { .id = "L1_024_logsoftmax", .level = 1, .number = 24, .name = "24_LogSoftmax",
      .expr = "torch.log_softmax(x, dim=1)",
      INPUTS(IN("x", G_RAND, SM_B, SM_D)), OUTPUTS(OUT(SM_B, SM_D)),
      ATTRS({ "dim", 1 }),
      .flops = 5.0 * SM_B * SM_D, .min_bytes = 4.0 * 2 * SM_B * SM_D, .op = OP_LOG_SOFTMAX },
};
SUITE_COUNT(suite_l1_softmax);

/* l1_scan.c - KernelBench level 1, scans along dim 1 of [32768, 32768]
 * (problems 89-93), x ~ U[0,1).  FLOPs: one addition or multiplication per
 * element (two for the masked sum); min_bytes: the inputs and the output. */
#include "spec.h"

#define SC_B 32768LL
#define SC_D 32768LL
#define SC_N (SC_B * SC_D)

#define SCAN(id_, num, nm, ex, op_)                                              \
    { .id = id_, .level = 1, .number = num, .name = nm, .expr = ex,          \
      INPUTS(IN("x", G_RAND, SC_B, SC_D)), OUTPUTS(OUT(SC_B, SC_D)),          \
      ATTRS({ "dim", 1 }), .flops = 1.0 * SC_N, .min_bytes = 4.0 * 2 * SC_N, .op = op_ }

const suite_problem suite_l1_scan[] = {
    SCAN("L1_089_cumsum", 89, "89_cumsum", "torch.cumsum(x, dim=1)", OP_CUMSUM),
    SCAN("L1_090_cumprod", 90, "90_cumprod", "torch.cumprod(x, dim=1)", OP_CUMPROD),
    SCAN("L1_091_cumsum_reverse", 91, "91_cumsum_reverse",
         "torch.cumsum(x.flip(1), dim=1).flip(1)", OP_CUMSUM_REVERSE),
    /* 92: KernelBench's code prepends a zero column and then slices [:-1]
     * along dim 0, not dim 1: the output is [32767, 32769] with
     * out[i, 0] = 0 and out[i, j] = x[i, 0] + ... + x[i, j - 1] for
     * i < 32767.  kbv keeps those exact semantics. */
    { .id = "L1_092_cumsum_exclusive", .level = 1, .number = 92, .name = "92_cumsum_exclusive",
      .expr = "torch.cumsum(torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), x), dim=1)[:-1], dim=1)",
      INPUTS(IN("x", G_RAND, SC_B, SC_D)), OUTPUTS(OUT(SC_B - 1, SC_D + 1)),
      ATTRS({ "dim", 1 }),
      .flops = 1.0 * (SC_B - 1) * (SC_D + 1),
      .min_bytes = 4.0 * (SC_N + (SC_B - 1) * (SC_D + 1)), .op = OP_CUMSUM_EXCLUSIVE },
    /* 93: the boolean mask is a float32 tensor of 0 and 1 here (kbv's ABI
     * has float32 and int64 only); x * mask means the same. */
    { .id = "L1_093_masked_cumsum", .level = 1, .number = 93, .name = "93_masked_cumsum",
      .expr = "torch.cumsum(x * mask, dim=1)",
      INPUTS(IN("x", G_RAND, SC_B, SC_D), IN_FIXED("mask", KBV_F32, G_INT(0, 2), SC_B, SC_D)),
      OUTPUTS(OUT(SC_B, SC_D)), ATTRS({ "dim", 1 }),
      .flops = 2.0 * SC_N, .min_bytes = 4.0 * 3 * SC_N, .op = OP_MASKED_CUMSUM },
};
SUITE_COUNT(suite_l1_scan);

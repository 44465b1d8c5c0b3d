/* l1_activation.c - KernelBench level 1, elementwise activations
 * (problems 19-22, 25-32 and 88).  Every one maps x [batch, dim] to a
 * tensor of the same shape, x ~ U[0,1).  FLOPs count the operations of
 * PyTorch's formula per element, a comparison or a transcendental function
 * counting as one (the count per element is in each row); min_bytes is x
 * read once and the output written once.
 *
 * D5, every activation's own hard case, is U[0,1) on even rows and minus
 * U[0,1) on odd rows.  KernelBench draws U[0,1), so D1-D3 are all positive
 * and D4 all negative, and a kernel that picks its branch from a sample of
 * the input (a ReLU or LeakyReLU that returns its input when the first
 * values look positive) is exact on all four.  Mixed-sign N(0,1) data does
 * not catch it either: a sample of it always holds a negative value, so
 * the shortcut is never taken.  Rows of alternating sign make the first
 * row look positive while half the tensor is negative; every activation
 * here has a sign- or range-dependent piece. */
#include "spec.h"

#define ACT_B 4096LL
#define ACT_D 393216LL
#define ACT_N (ACT_B * ACT_D)

#define ACT(id_, num, nm, ex, op_, fpe, ...)                                   \
    { .id = id_, .level = 1, .number = num, .name = nm, .expr = ex,        \
      INPUTS(IN("x", G_RAND, ACT_B, ACT_D)), OUTPUTS(OUT(ACT_B, ACT_D)),    \
      .flops = (fpe) * (double)ACT_N, .min_bytes = 4.0 * 2 * ACT_N, .op = op_, \
      D5(G_ROWSIGN), __VA_ARGS__ }

/* 88: minGPT's GELU on [8192, 8192]. */
#define NG_B 8192LL
#define NG_D 8192LL

const suite_problem suite_l1_activation[] = {
    ACT("L1_019_relu", 19, "19_ReLU", "torch.relu(x)", OP_RELU, 1.0),
    /* max, multiply */
    ACT("L1_020_leakyrelu", 20, "20_LeakyReLU",
        "torch.nn.functional.leaky_relu(x, negative_slope=0.01)", OP_LEAKY_RELU, 2.0,
        ATTRS({ "negative_slope", 0.01 })),
    /* exp, add, divide */
    ACT("L1_021_sigmoid", 21, "21_Sigmoid", "torch.sigmoid(x)", OP_SIGMOID, 3.0),
    ACT("L1_022_tanh", 22, "22_Tanh", "torch.tanh(x)", OP_TANH, 1.0),
    /* exp, add, divide, multiply */
    ACT("L1_025_swish", 25, "25_Swish", "x * torch.sigmoid(x)", OP_SWISH, 4.0),
    /* multiply, erf, add, two multiplies */
    ACT("L1_026_gelu", 26, "26_GELU", "torch.nn.functional.gelu(x)", OP_GELU, 5.0),
    /* compare, exp, subtract, two multiplies */
    ACT("L1_027_selu", 27, "27_SELU", "torch.selu(x)", OP_SELU, 5.0),
    /* divide, add, min, max */
    ACT("L1_028_hardsigmoid", 28, "28_HardSigmoid", "torch.nn.functional.hardsigmoid(x)",
        OP_HARDSIGMOID, 4.0),
    /* compare, exp, log1p */
    ACT("L1_029_softplus", 29, "29_Softplus", "torch.nn.functional.softplus(x)", OP_SOFTPLUS, 3.0),
    /* abs, add, divide */
    ACT("L1_030_softsign", 30, "30_Softsign", "x / (1 + torch.abs(x))", OP_SOFTSIGN, 3.0),
    /* compare, expm1, multiply */
    ACT("L1_031_elu", 31, "31_ELU", "torch.nn.functional.elu(x, alpha=alpha)", OP_ELU, 3.0,
        ATTRS({ "alpha", 1.0 })),
    /* min, max */
    ACT("L1_032_hardtanh", 32, "32_HardTanh",
        "torch.nn.functional.hardtanh(x, min_val=-1., max_val=1.)", OP_HARDTANH, 2.0,
        ATTRS({ "min_val", -1.0 }, { "max_val", 1.0 })),
    /* x^3, multiply, add, multiply, tanh, add, two multiplies: 9 */
    { .id = "L1_088_mingptnewgelu", .level = 1, .number = 88, .name = "88_MinGPTNewGelu",
      .expr = "0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))",
      INPUTS(IN("x", G_RAND, NG_B, NG_D)), OUTPUTS(OUT(NG_B, NG_D)),
      .flops = 9.0 * NG_B * NG_D, .min_bytes = 4.0 * 2 * NG_B * NG_D, .op = OP_NEWGELU,
      D5(G_ROWSIGN) },
};
SUITE_COUNT(suite_l1_activation);

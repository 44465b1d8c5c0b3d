/* l1_pool.c - KernelBench level 1, pooling (problems 41-46), x ~ U[0,1).
 * Output extents: floor((L + 2p - d (k - 1) - 1) / s) + 1 (dilation 1 for
 * average pooling).  FLOPs: one comparison or addition per window element
 * per output (k^dims of them), plus one division for averages.  min_bytes:
 * x read once, y written once. */
#include "spec.h"

const suite_problem suite_l1_pool[] = {
    /* 41: [64, 192, 65536], k 8, s 1, p 4, d 3: 65536 + 8 - 21 - 1 + 1 = 65523 */
    { .id = "L1_041_max_pooling_1d", .level = 1, .number = 41, .name = "41_Max_Pooling_1D",
      .expr = "nn.MaxPool1d(kernel_size, stride, padding, dilation)(x)",
      INPUTS(IN("x", G_RAND, 64LL, 192LL, 65536LL)), OUTPUTS(OUT(64LL, 192LL, 65523LL)),
      ATTRS({ "kernel_size", 8 }, { "stride", 1 }, { "padding", 4 }, { "dilation", 3 },
            { "return_indices", 0 }),
      .flops = 8.0 * 64 * 192 * 65523,
      .min_bytes = 4.0 * (64.0 * 192 * 65536 + 64.0 * 192 * 65523), .op = OP_MAXPOOL },
    /* 42: [32, 64, 512, 512], k 4, s 1, p 1, d 1: 512 + 2 - 3 - 1 + 1 = 511 */
    { .id = "L1_042_max_pooling_2d", .level = 1, .number = 42, .name = "42_Max_Pooling_2D",
      .expr = "nn.MaxPool2d(kernel_size, stride, padding, dilation)(x)",
      INPUTS(IN("x", G_RAND, 32LL, 64LL, 512LL, 512LL)), OUTPUTS(OUT(32LL, 64LL, 511LL, 511LL)),
      ATTRS({ "kernel_size", 4 }, { "stride", 1 }, { "padding", 1 }, { "dilation", 1 }),
      .flops = 16.0 * 32 * 64 * 511 * 511,
      .min_bytes = 4.0 * (32.0 * 64 * 512 * 512 + 32.0 * 64 * 511 * 511), .op = OP_MAXPOOL },
    /* 43: [16, 32, 128^3], k 3, s 2, p 1, d 3: floor((128 + 2 - 6 - 1) / 2) + 1 = 62 */
    { .id = "L1_043_max_pooling_3d", .level = 1, .number = 43, .name = "43_Max_Pooling_3D",
      .expr = "nn.MaxPool3d(kernel_size, stride, padding, dilation)(x)",
      INPUTS(IN("x", G_RAND, 16LL, 32LL, 128LL, 128LL, 128LL)),
      OUTPUTS(OUT(16LL, 32LL, 62LL, 62LL, 62LL)),
      ATTRS({ "kernel_size", 3 }, { "stride", 2 }, { "padding", 1 }, { "dilation", 3 }),
      .flops = 27.0 * 16 * 32 * 62 * 62 * 62,
      .min_bytes = 4.0 * (16.0 * 32 * 128 * 128 * 128 + 16.0 * 32 * 62 * 62 * 62), .op = OP_MAXPOOL },
    /* 44: [64, 128, 65536], k 8, s 1, p 4: 65536 + 8 - 7 - 1 + 1 = 65537 */
    { .id = "L1_044_average_pooling_1d", .level = 1, .number = 44, .name = "44_Average_Pooling_1D",
      .expr = "nn.AvgPool1d(kernel_size, stride, padding)(x)",
      INPUTS(IN("x", G_RAND, 64LL, 128LL, 65536LL)), OUTPUTS(OUT(64LL, 128LL, 65537LL)),
      ATTRS({ "kernel_size", 8 }, { "stride", 1 }, { "padding", 4 }),
      .flops = 9.0 * 64 * 128 * 65537,
      .min_bytes = 4.0 * (64.0 * 128 * 65536 + 64.0 * 128 * 65537), .op = OP_AVGPOOL },
    /* 45: [16, 64, 2048, 2048], k 11, stride = k, p 0: floor(2037 / 11) + 1 = 186 */
    { .id = "L1_045_average_pooling_2d", .level = 1, .number = 45, .name = "45_Average_Pooling_2D",
      .expr = "nn.AvgPool2d(kernel_size)(x)",
      INPUTS(IN("x", G_RAND, 16LL, 64LL, 2048LL, 2048LL)), OUTPUTS(OUT(16LL, 64LL, 186LL, 186LL)),
      ATTRS({ "kernel_size", 11 }, { "stride", 11 }, { "padding", 0 }),
      .flops = 122.0 * 16 * 64 * 186 * 186,
      .min_bytes = 4.0 * (16.0 * 64 * 2048 * 2048 + 16.0 * 64 * 186 * 186), .op = OP_AVGPOOL },
    /* 46: [16, 32, 128, 128, 256], k 3, s 2, p 1: 64, 64, 128 */
    { .id = "L1_046_average_pooling_3d", .level = 1, .number = 46, .name = "46_Average_Pooling_3D",
      .expr = "nn.AvgPool3d(kernel_size, stride, padding)(x)",
      INPUTS(IN("x", G_RAND, 16LL, 32LL, 128LL, 128LL, 256LL)),
      OUTPUTS(OUT(16LL, 32LL, 64LL, 64LL, 128LL)),
      ATTRS({ "kernel_size", 3 }, { "stride", 2 }, { "padding", 1 }),
      .flops = 28.0 * 16 * 32 * 64 * 64 * 128,
      .min_bytes = 4.0 * (16.0 * 32 * 128 * 128 * 256 + 16.0 * 32 * 64 * 64 * 128), .op = OP_AVGPOOL },
};
SUITE_COUNT(suite_l1_pool);

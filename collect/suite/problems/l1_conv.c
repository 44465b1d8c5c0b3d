/* l1_conv.c - KernelBench level 1, convolutions (problems 50, 54-87).
 * Inputs: x ~ U[0,1), then the module's weight (and bias where the module
 * has one), drawn from PyTorch's default init U(-1/sqrt(fan_in),
 * 1/sqrt(fan_in)), where fan_in is weight.size(1) times the kernel volume
 * (for a transposed convolution weight.size(1) is out_channels / groups).
 * Attributes: KernelBench's get_init_inputs() (tuples flattened to _d, _h,
 * _w), then every stride, padding, dilation, output_padding and groups that
 * differs from PyTorch's default, by name; the baseline reads them by name.
 * Output extents follow PyTorch's formulas:
 *   conv:      floor((L + 2p - d (k - 1) - 1) / s) + 1
 *   transpose: (L - 1) s - 2p + d (k - 1) + output_padding + 1
 * FLOPs count a multiply-add as two; min_bytes is x, the parameters and y.
 */
#include "spec.h"

const suite_problem suite_l1_conv[] = {
    /* 50: 2D, x [256, 3, 224, 224] -> [256, 96, 55, 55], weight [96, 3, 11, 11] (fan_in 363), bias */
    { .id = "L1_050_conv_standard_2d__square_input__square_kernel", .level = 1, .number = 50,
      .name = "50_conv_standard_2D__square_input__square_kernel",
      .expr = "torch.nn.functional.conv2d(x, weight, bias, stride=4, padding=2)",
      INPUTS(IN("x", G_RAND, 256LL, 3LL, 224LL, 224LL),
             PARAM("weight", G_KAIMING(363), 96LL, 3LL, 11LL, 11LL),
             PARAM("bias", G_KAIMING(363), 96LL)),
      OUTPUTS(OUT(256LL, 96LL, 55LL, 55LL)),
      ATTRS({ "num_classes", 1000 }, { "stride", 4 }, { "padding", 2 }),
      .flops = 2.0 * 256 * 96 * 55 * 55 * 3 * 11 * 11 + 256.0 * 96 * 55 * 55, /* 2 N Cout prod(out) (Cin/g) prod(k) + N Cout prod(out) for the bias */
      .min_bytes = 4.0 * 112912512, /* x, weight, bias, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 54: 3D, x [16, 3, 64, 64, 64] -> [16, 64, 62, 62, 62], weight [64, 3, 3, 3, 3] (fan_in 81) */
    { .id = "L1_054_conv_standard_3d__square_input__square_kernel", .level = 1, .number = 54,
      .name = "54_conv_standard_3D__square_input__square_kernel",
      .expr = "torch.nn.functional.conv3d(x, weight)",
      INPUTS(IN("x", G_RAND, 16LL, 3LL, 64LL, 64LL, 64LL),
             PARAM("weight", G_KAIMING(81), 64LL, 3LL, 3LL, 3LL, 3LL)),
      OUTPUTS(OUT(16LL, 64LL, 62LL, 62LL, 62LL)),
      ATTRS({ "in_channels", 3 }, { "out_channels", 64 }, { "kernel_size", 3 }),
      .flops = 2.0 * 16 * 64 * 62 * 62 * 62 * 3 * 3 * 3 * 3, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 256635968, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 55: 2D, x [8, 64, 512, 1024] -> [8, 128, 510, 1022], weight [128, 64, 3, 3] (fan_in 576) */
    { .id = "L1_055_conv_standard_2d__asymmetric_input__square_kernel", .level = 1, .number = 55,
      .name = "55_conv_standard_2D__asymmetric_input__square_kernel",
      .expr = "torch.nn.functional.conv2d(x, weight)",
      INPUTS(IN("x", G_RAND, 8LL, 64LL, 512LL, 1024LL),
             PARAM("weight", G_KAIMING(576), 128LL, 64LL, 3LL, 3LL)),
      OUTPUTS(OUT(8LL, 128LL, 510LL, 1022LL)),
      ATTRS({ "in_channels", 64 }, { "out_channels", 128 }, { "kernel_size", 3 }),
      .flops = 2.0 * 8 * 128 * 510 * 1022 * 64 * 3 * 3, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 802238464, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 56: 2D, x [8, 64, 512, 256] -> [8, 128, 508, 250], weight [128, 64, 5, 7] (fan_in 2240) */
    { .id = "L1_056_conv_standard_2d__asymmetric_input__asymmetric_kernel", .level = 1, .number = 56,
      .name = "56_conv_standard_2D__asymmetric_input__asymmetric_kernel",
      .expr = "torch.nn.functional.conv2d(x, weight)",
      INPUTS(IN("x", G_RAND, 8LL, 64LL, 512LL, 256LL),
             PARAM("weight", G_KAIMING(2240), 128LL, 64LL, 5LL, 7LL)),
      OUTPUTS(OUT(8LL, 128LL, 508LL, 250LL)),
      ATTRS({ "in_channels", 64 }, { "out_channels", 128 }, { "kernel_size_h", 5 }, { "kernel_size_w", 7 }),
      .flops = 2.0 * 8 * 128 * 508 * 250 * 64 * 5 * 7, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 197443584, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 57: transposed 2D, x [8, 64, 1024, 1024] -> [8, 64, 1026, 1026], weight [64, 64, 3, 3] (fan_in 576) */
    { .id = "L1_057_conv_transposed_2d__square_input__square_kernel", .level = 1, .number = 57,
      .name = "57_conv_transposed_2D__square_input__square_kernel",
      .expr = "torch.nn.functional.conv_transpose2d(x, weight)",
      INPUTS(IN("x", G_RAND, 8LL, 64LL, 1024LL, 1024LL),
             PARAM("weight", G_KAIMING(576), 64LL, 64LL, 3LL, 3LL)),
      OUTPUTS(OUT(8LL, 64LL, 1026LL, 1026LL)),
      ATTRS({ "in_channels", 64 }, { "out_channels", 64 }, { "kernel_size", 3 }),
      .flops = 2.0 * 8 * 64 * 1024 * 1024 * 64 * 3 * 3, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 1075877888, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 58: transposed 3D, x [16, 32, 16, 32, 64] -> [16, 16, 18, 36, 70], weight [32, 16, 3, 5, 7] (fan_in 1680) */
    { .id = "L1_058_conv_transposed_3d__asymmetric_input__asymmetric_kernel", .level = 1, .number = 58,
      .name = "58_conv_transposed_3D__asymmetric_input__asymmetric_kernel",
      .expr = "torch.nn.functional.conv_transpose3d(x, weight)",
      INPUTS(IN("x", G_RAND, 16LL, 32LL, 16LL, 32LL, 64LL),
             PARAM("weight", G_KAIMING(1680), 32LL, 16LL, 3LL, 5LL, 7LL)),
      OUTPUTS(OUT(16LL, 16LL, 18LL, 36LL, 70LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 16 }, { "kernel_size_d", 3 }, { "kernel_size_h", 5 }, { "kernel_size_w", 7 }),
      .flops = 2.0 * 16 * 32 * 16 * 32 * 64 * 16 * 3 * 5 * 7, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 28443136, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 59: 3D, x [16, 3, 256, 256, 10] -> [16, 64, 254, 254, 10], weight [64, 3, 3, 3, 1] (fan_in 27) */
    { .id = "L1_059_conv_standard_3d__asymmetric_input__square_kernel", .level = 1, .number = 59,
      .name = "59_conv_standard_3D__asymmetric_input__square_kernel",
      .expr = "torch.nn.functional.conv3d(x, weight)",
      INPUTS(IN("x", G_RAND, 16LL, 3LL, 256LL, 256LL, 10LL),
             PARAM("weight", G_KAIMING(27), 64LL, 3LL, 3LL, 3LL, 1LL)),
      OUTPUTS(OUT(16LL, 64LL, 254LL, 254LL, 10LL)),
      ATTRS({ "in_channels", 3 }, { "out_channels", 64 }, { "kernel_size", 3 }),
      .flops = 2.0 * 16 * 64 * 254 * 254 * 10 * 3 * 3 * 3 * 1, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 692102848, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 60: 3D, x [16, 3, 64, 64, 64] -> [16, 64, 62, 60, 58], weight [64, 3, 3, 5, 7] (fan_in 315) */
    { .id = "L1_060_conv_standard_3d__square_input__asymmetric_kernel", .level = 1, .number = 60,
      .name = "60_conv_standard_3D__square_input__asymmetric_kernel",
      .expr = "torch.nn.functional.conv3d(x, weight)",
      INPUTS(IN("x", G_RAND, 16LL, 3LL, 64LL, 64LL, 64LL),
             PARAM("weight", G_KAIMING(315), 64LL, 3LL, 3LL, 5LL, 7LL)),
      OUTPUTS(OUT(16LL, 64LL, 62LL, 60LL, 58LL)),
      ATTRS({ "in_channels", 3 }, { "out_channels", 64 }, { "kernel_size_d", 3 }, { "kernel_size_h", 5 }, { "kernel_size_w", 7 }),
      .flops = 2.0 * 16 * 64 * 62 * 60 * 58 * 3 * 3 * 5 * 7, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 233541312, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 61: transposed 3D, x [8, 48, 64, 64, 64] -> [8, 48, 66, 66, 66], weight [48, 48, 3, 3, 3] (fan_in 1296) */
    { .id = "L1_061_conv_transposed_3d__square_input__square_kernel", .level = 1, .number = 61,
      .name = "61_conv_transposed_3D__square_input__square_kernel",
      .expr = "torch.nn.functional.conv_transpose3d(x, weight)",
      INPUTS(IN("x", G_RAND, 8LL, 48LL, 64LL, 64LL, 64LL),
             PARAM("weight", G_KAIMING(1296), 48LL, 48LL, 3LL, 3LL, 3LL)),
      OUTPUTS(OUT(8LL, 48LL, 66LL, 66LL, 66LL)),
      ATTRS({ "in_channels", 48 }, { "out_channels", 48 }, { "kernel_size", 3 }),
      .flops = 2.0 * 8 * 48 * 64 * 64 * 64 * 48 * 3 * 3 * 3, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 211123968, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 62: 2D, x [8, 32, 512, 512] -> [8, 64, 508, 504], weight [64, 32, 5, 9] (fan_in 1440) */
    { .id = "L1_062_conv_standard_2d__square_input__asymmetric_kernel", .level = 1, .number = 62,
      .name = "62_conv_standard_2D__square_input__asymmetric_kernel",
      .expr = "torch.nn.functional.conv2d(x, weight)",
      INPUTS(IN("x", G_RAND, 8LL, 32LL, 512LL, 512LL),
             PARAM("weight", G_KAIMING(1440), 64LL, 32LL, 5LL, 9LL)),
      OUTPUTS(OUT(8LL, 64LL, 508LL, 504LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 64 }, { "kernel_size_h", 5 }, { "kernel_size_w", 9 }),
      .flops = 2.0 * 8 * 64 * 508 * 504 * 32 * 5 * 9, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 198289408, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 63: 2D, x [16, 16, 1024, 1024] -> [16, 128, 1022, 1022], weight [128, 16, 3, 3] (fan_in 144) */
    { .id = "L1_063_conv_standard_2d__square_input__square_kernel", .level = 1, .number = 63,
      .name = "63_conv_standard_2D__square_input__square_kernel",
      .expr = "torch.nn.functional.conv2d(x, weight)",
      INPUTS(IN("x", G_RAND, 16LL, 16LL, 1024LL, 1024LL),
             PARAM("weight", G_KAIMING(144), 128LL, 16LL, 3LL, 3LL)),
      OUTPUTS(OUT(16LL, 128LL, 1022LL, 1022LL)),
      ATTRS({ "in_channels", 16 }, { "out_channels", 128 }, { "kernel_size", 3 }),
      .flops = 2.0 * 16 * 128 * 1022 * 1022 * 16 * 3 * 3, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 2407557120, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 64: transposed 1D, x [64, 128, 65536] -> [64, 128, 65538], weight [128, 128, 3] (fan_in 384) */
    { .id = "L1_064_conv_transposed_1d", .level = 1, .number = 64,
      .name = "64_conv_transposed_1D",
      .expr = "torch.nn.functional.conv_transpose1d(x, weight)",
      INPUTS(IN("x", G_RAND, 64LL, 128LL, 65536LL),
             PARAM("weight", G_KAIMING(384), 128LL, 128LL, 3LL)),
      OUTPUTS(OUT(64LL, 128LL, 65538LL)),
      ATTRS({ "in_channels", 128 }, { "out_channels", 128 }, { "kernel_size", 3 }),
      .flops = 2.0 * 64 * 128 * 65536 * 128 * 3, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 1073807360, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 65: transposed 2D, x [8, 64, 512, 512] -> [8, 64, 514, 518], weight [64, 64, 3, 7] (fan_in 1344) */
    { .id = "L1_065_conv_transposed_2d__square_input__asymmetric_kernel", .level = 1, .number = 65,
      .name = "65_conv_transposed_2D__square_input__asymmetric_kernel",
      .expr = "torch.nn.functional.conv_transpose2d(x, weight)",
      INPUTS(IN("x", G_RAND, 8LL, 64LL, 512LL, 512LL),
             PARAM("weight", G_KAIMING(1344), 64LL, 64LL, 3LL, 7LL)),
      OUTPUTS(OUT(8LL, 64LL, 514LL, 518LL)),
      ATTRS({ "in_channels", 64 }, { "out_channels", 64 }, { "kernel_size_h", 3 }, { "kernel_size_w", 7 }),
      .flops = 2.0 * 8 * 64 * 512 * 512 * 64 * 3 * 7, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 270624768, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 66: 3D, x [8, 3, 16, 128, 128] -> [8, 64, 14, 124, 122], weight [64, 3, 3, 5, 7] (fan_in 315) */
    { .id = "L1_066_conv_standard_3d__asymmetric_input__asymmetric_kernel", .level = 1, .number = 66,
      .name = "66_conv_standard_3D__asymmetric_input__asymmetric_kernel",
      .expr = "torch.nn.functional.conv3d(x, weight)",
      INPUTS(IN("x", G_RAND, 8LL, 3LL, 16LL, 128LL, 128LL),
             PARAM("weight", G_KAIMING(315), 64LL, 3LL, 3LL, 5LL, 7LL)),
      OUTPUTS(OUT(8LL, 64LL, 14LL, 124LL, 122LL)),
      ATTRS({ "in_channels", 3 }, { "out_channels", 64 }, { "kernel_size_d", 3 }, { "kernel_size_h", 5 }, { "kernel_size_w", 7 }),
      .flops = 2.0 * 8 * 64 * 14 * 124 * 122 * 3 * 3 * 5 * 7, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 114749120, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 67: 1D, x [32, 64, 131072] -> [32, 128, 131070], weight [128, 64, 3] (fan_in 192) */
    { .id = "L1_067_conv_standard_1d", .level = 1, .number = 67,
      .name = "67_conv_standard_1D",
      .expr = "torch.nn.functional.conv1d(x, weight)",
      INPUTS(IN("x", G_RAND, 32LL, 64LL, 131072LL),
             PARAM("weight", G_KAIMING(192), 128LL, 64LL, 3LL)),
      OUTPUTS(OUT(32LL, 128LL, 131070LL)),
      ATTRS({ "in_channels", 64 }, { "out_channels", 128 }, { "kernel_size", 3 }),
      .flops = 2.0 * 32 * 128 * 131070 * 64 * 3, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 805322752, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 68: transposed 3D, x [16, 32, 64, 64, 64] -> [16, 64, 66, 68, 68], weight [32, 64, 3, 5, 5] (fan_in 4800) */
    { .id = "L1_068_conv_transposed_3d__square_input__asymmetric_kernel", .level = 1, .number = 68,
      .name = "68_conv_transposed_3D__square_input__asymmetric_kernel",
      .expr = "torch.nn.functional.conv_transpose3d(x, weight)",
      INPUTS(IN("x", G_RAND, 16LL, 32LL, 64LL, 64LL, 64LL),
             PARAM("weight", G_KAIMING(4800), 32LL, 64LL, 3LL, 5LL, 5LL)),
      OUTPUTS(OUT(16LL, 64LL, 66LL, 68LL, 68LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 64 }, { "kernel_size_d", 3 }, { "kernel_size_h", 5 }, { "kernel_size_w", 5 }),
      .flops = 2.0 * 16 * 32 * 64 * 64 * 64 * 64 * 3 * 5 * 5, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 446879744, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 69: transposed 2D, x [64, 64, 128, 256] -> [64, 128, 130, 260], weight [64, 128, 3, 5] (fan_in 1920) */
    { .id = "L1_069_conv_transposed_2d__asymmetric_input__asymmetric_kernel", .level = 1, .number = 69,
      .name = "69_conv_transposed_2D__asymmetric_input__asymmetric_kernel",
      .expr = "torch.nn.functional.conv_transpose2d(x, weight)",
      INPUTS(IN("x", G_RAND, 64LL, 64LL, 128LL, 256LL),
             PARAM("weight", G_KAIMING(1920), 64LL, 128LL, 3LL, 5LL)),
      OUTPUTS(OUT(64LL, 128LL, 130LL, 260LL)),
      ATTRS({ "in_channels", 64 }, { "out_channels", 128 }, { "kernel_size_h", 3 }, { "kernel_size_w", 5 }),
      .flops = 2.0 * 64 * 64 * 128 * 256 * 128 * 3 * 5, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 411230208, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 70: transposed 3D, x [8, 48, 96, 96, 96] -> [8, 24, 98, 98, 98], weight [48, 24, 3, 3, 3] (fan_in 648) */
    { .id = "L1_070_conv_transposed_3d__asymmetric_input__square_kernel", .level = 1, .number = 70,
      .name = "70_conv_transposed_3D__asymmetric_input__square_kernel",
      .expr = "torch.nn.functional.conv_transpose3d(x, weight)",
      INPUTS(IN("x", G_RAND, 8LL, 48LL, 96LL, 96LL, 96LL),
             PARAM("weight", G_KAIMING(648), 48LL, 24LL, 3LL, 3LL, 3LL)),
      OUTPUTS(OUT(8LL, 24LL, 98LL, 98LL, 98LL)),
      ATTRS({ "in_channels", 48 }, { "out_channels", 24 }, { "kernel_size", 3 }),
      .flops = 2.0 * 8 * 48 * 96 * 96 * 96 * 24 * 3 * 3 * 3, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 520478592, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 71: transposed 2D, x [8, 32, 512, 1024] -> [8, 32, 514, 1026], weight [32, 32, 3, 3] (fan_in 288) */
    { .id = "L1_071_conv_transposed_2d__asymmetric_input__square_kernel", .level = 1, .number = 71,
      .name = "71_conv_transposed_2D__asymmetric_input__square_kernel",
      .expr = "torch.nn.functional.conv_transpose2d(x, weight)",
      INPUTS(IN("x", G_RAND, 8LL, 32LL, 512LL, 1024LL),
             PARAM("weight", G_KAIMING(288), 32LL, 32LL, 3LL, 3LL)),
      OUTPUTS(OUT(8LL, 32LL, 514LL, 1026LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 32 }, { "kernel_size", 3 }),
      .flops = 2.0 * 8 * 32 * 512 * 1024 * 32 * 3 * 3, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 269232128, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 72: transposed 3D, x [8, 32, 12, 24, 48] -> [8, 32, 24, 48, 96], weight [32, 8, 3, 5, 7] (fan_in 840) */
    { .id = "L1_072_conv_transposed_3d_asymmetric_input_asymmetric_kernel___strided_padded_grouped", .level = 1, .number = 72,
      .name = "72_conv_transposed_3D_asymmetric_input_asymmetric_kernel___strided_padded_grouped_",
      .expr = "torch.nn.functional.conv_transpose3d(x, weight, stride=2, padding=(1, 2, 3), output_padding=1, groups=4)",
      INPUTS(IN("x", G_RAND, 8LL, 32LL, 12LL, 24LL, 48LL),
             PARAM("weight", G_KAIMING(840), 32LL, 8LL, 3LL, 5LL, 7LL)),
      OUTPUTS(OUT(8LL, 32LL, 24LL, 48LL, 96LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 32 }, { "kernel_size_d", 3 }, { "kernel_size_h", 5 }, { "kernel_size_w", 7 }, { "stride", 2 }, { "padding_d", 1 }, { "padding_h", 2 }, { "padding_w", 3 }, { "output_padding", 1 }, { "groups", 4 }),
      .flops = 2.0 * 8 * 32 * 12 * 24 * 48 * 8 * 3 * 5 * 7, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 31877376, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 73: transposed 3D, x [4, 32, 32, 64, 128] -> [4, 32, 63, 127, 255], weight [32, 32, 3, 3, 3] (fan_in 864) */
    { .id = "L1_073_conv_transposed_3d_asymmetric_input_square_kernel__strided_padded__grouped", .level = 1, .number = 73,
      .name = "73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped",
      .expr = "torch.nn.functional.conv_transpose3d(x, weight, stride=2, padding=1)",
      INPUTS(IN("x", G_RAND, 4LL, 32LL, 32LL, 64LL, 128LL),
             PARAM("weight", G_KAIMING(864), 32LL, 32LL, 3LL, 3LL, 3LL)),
      OUTPUTS(OUT(4LL, 32LL, 63LL, 127LL, 255LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 32 }, { "kernel_size", 3 }, { "stride", 2 }, { "padding", 1 }, { "output_padding_unused", 4 }),
      .flops = 2.0 * 4 * 32 * 32 * 64 * 128 * 32 * 3 * 3 * 3, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 294734720, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 74: transposed 1D, x [32, 32, 131072] -> [32, 64, 131084], weight [32, 64, 5] (fan_in 320) */
    { .id = "L1_074_conv_transposed_1d_dilated", .level = 1, .number = 74,
      .name = "74_conv_transposed_1D_dilated",
      .expr = "torch.nn.functional.conv_transpose1d(x, weight, dilation=3)",
      INPUTS(IN("x", G_RAND, 32LL, 32LL, 131072LL),
             PARAM("weight", G_KAIMING(320), 32LL, 64LL, 5LL)),
      OUTPUTS(OUT(32LL, 64LL, 131084LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 64 }, { "kernel_size", 5 }, { "dilation", 3 }),
      .flops = 2.0 * 32 * 32 * 131072 * 64 * 5, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 402688000, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 75: transposed 2D, x [16, 32, 128, 256] -> [16, 64, 257, 766], weight [32, 16, 3, 5] (fan_in 240) */
    { .id = "L1_075_conv_transposed_2d_asymmetric_input_asymmetric_kernel_strided__grouped____padded____dilated", .level = 1, .number = 75,
      .name = "75_conv_transposed_2D_asymmetric_input_asymmetric_kernel_strided__grouped____padded____dilated__",
      .expr = "torch.nn.functional.conv_transpose2d(x, weight, stride=(2, 3), padding=(1, 2), groups=4, dilation=(2, 1))",
      INPUTS(IN("x", G_RAND, 16LL, 32LL, 128LL, 256LL),
             PARAM("weight", G_KAIMING(240), 32LL, 16LL, 3LL, 5LL)),
      OUTPUTS(OUT(16LL, 64LL, 257LL, 766LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 64 }, { "kernel_size_h", 3 }, { "kernel_size_w", 5 }, { "stride_h", 2 }, { "stride_w", 3 }, { "padding_h", 1 }, { "padding_w", 2 }, { "dilation_h", 2 }, { "dilation_w", 1 }, { "groups", 4 }),
      .flops = 2.0 * 16 * 32 * 128 * 256 * 16 * 3 * 5, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 218371584, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 76: 1D, x [64, 64, 524280] -> [64, 128, 174758], weight [128, 64, 3] (fan_in 192) */
    { .id = "L1_076_conv_standard_1d_dilated_strided", .level = 1, .number = 76,
      .name = "76_conv_standard_1D_dilated_strided__",
      .expr = "torch.nn.functional.conv1d(x, weight, stride=3, dilation=4)",
      INPUTS(IN("x", G_RAND, 64LL, 64LL, 524280LL),
             PARAM("weight", G_KAIMING(192), 128LL, 64LL, 3LL)),
      OUTPUTS(OUT(64LL, 128LL, 174758LL)),
      ATTRS({ "in_channels", 64 }, { "out_channels", 128 }, { "kernel_size", 3 }, { "stride", 3 }, { "dilation", 4 }),
      .flops = 2.0 * 64 * 128 * 174758 * 64 * 3, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 3579092992, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 77: transposed 3D, x [16, 32, 16, 32, 32] -> [16, 64, 33, 65, 65], weight [32, 64, 3, 3, 3] (fan_in 1728) */
    { .id = "L1_077_conv_transposed_3d_square_input_square_kernel___padded____dilated____strided", .level = 1, .number = 77,
      .name = "77_conv_transposed_3D_square_input_square_kernel___padded____dilated____strided__",
      .expr = "torch.nn.functional.conv_transpose3d(x, weight, stride=2, padding=1, dilation=2)",
      INPUTS(IN("x", G_RAND, 16LL, 32LL, 16LL, 32LL, 32LL),
             PARAM("weight", G_KAIMING(1728), 32LL, 64LL, 3LL, 3LL, 3LL)),
      OUTPUTS(OUT(16LL, 64LL, 33LL, 65LL, 65LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 64 }, { "kernel_size", 3 }, { "stride", 2 }, { "padding", 1 }, { "dilation", 2 }),
      .flops = 2.0 * 16 * 32 * 16 * 32 * 32 * 64 * 3 * 3 * 3, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 151215104, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 78: transposed 2D, x [8, 32, 512, 1024] -> [8, 32, 512, 1024], weight [32, 32, 3, 7] (fan_in 672) */
    { .id = "L1_078_conv_transposed_2d_asymmetric_input_asymmetric_kernel___padded", .level = 1, .number = 78,
      .name = "78_conv_transposed_2D_asymmetric_input_asymmetric_kernel___padded__",
      .expr = "torch.nn.functional.conv_transpose2d(x, weight, padding=(1, 3))",
      INPUTS(IN("x", G_RAND, 8LL, 32LL, 512LL, 1024LL),
             PARAM("weight", G_KAIMING(672), 32LL, 32LL, 3LL, 7LL)),
      OUTPUTS(OUT(8LL, 32LL, 512LL, 1024LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 32 }, { "kernel_size_h", 3 }, { "kernel_size_w", 7 }, { "padding_h", 1 }, { "padding_w", 3 }),
      .flops = 2.0 * 8 * 32 * 512 * 1024 * 32 * 3 * 7, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 268456960, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 79: transposed 1D, x [16, 32, 131072] -> [16, 64, 262145], weight [32, 64, 3] (fan_in 192) */
    { .id = "L1_079_conv_transposed_1d_asymmetric_input_square_kernel___padded____strided____dilated", .level = 1, .number = 79,
      .name = "79_conv_transposed_1D_asymmetric_input_square_kernel___padded____strided____dilated__",
      .expr = "torch.nn.functional.conv_transpose1d(x, weight, stride=2, padding=1, dilation=2)",
      INPUTS(IN("x", G_RAND, 16LL, 32LL, 131072LL),
             PARAM("weight", G_KAIMING(192), 32LL, 64LL, 3LL)),
      OUTPUTS(OUT(16LL, 64LL, 262145LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 64 }, { "kernel_size", 3 }, { "stride", 2 }, { "padding", 1 }, { "dilation", 2 }),
      .flops = 2.0 * 16 * 32 * 131072 * 64 * 3, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 335551488, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 80: 2D, x [8, 32, 512, 512] -> [8, 64, 508, 496], weight [64, 32, 5, 9] (fan_in 1440) */
    { .id = "L1_080_conv_standard_2d_square_input_asymmetric_kernel___dilated____padded", .level = 1, .number = 80,
      .name = "80_conv_standard_2D_square_input_asymmetric_kernel___dilated____padded__",
      .expr = "torch.nn.functional.conv2d(x, weight, padding=(2, 4), dilation=(2, 3))",
      INPUTS(IN("x", G_RAND, 8LL, 32LL, 512LL, 512LL),
             PARAM("weight", G_KAIMING(1440), 64LL, 32LL, 5LL, 9LL)),
      OUTPUTS(OUT(8LL, 64LL, 508LL, 496LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 64 }, { "kernel_size_h", 5 }, { "kernel_size_w", 9 }, { "padding_h", 2 }, { "padding_w", 4 }, { "dilation_h", 2 }, { "dilation_w", 3 }),
      .flops = 2.0 * 8 * 64 * 508 * 496 * 32 * 5 * 9, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 196208640, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 81: transposed 2D, x [16, 32, 64, 128] -> [16, 64, 318, 638], weight [32, 64, 3, 3] (fan_in 576) */
    { .id = "L1_081_conv_transposed_2d_asymmetric_input_square_kernel___dilated____padded____strided", .level = 1, .number = 81,
      .name = "81_conv_transposed_2D_asymmetric_input_square_kernel___dilated____padded____strided__",
      .expr = "torch.nn.functional.conv_transpose2d(x, weight, stride=5, padding=1, dilation=2)",
      INPUTS(IN("x", G_RAND, 16LL, 32LL, 64LL, 128LL),
             PARAM("weight", G_KAIMING(576), 32LL, 64LL, 3LL, 3LL)),
      OUTPUTS(OUT(16LL, 64LL, 318LL, 638LL)),
      ATTRS({ "in_channels", 32 }, { "out_channels", 64 }, { "kernel_size", 3 }, { "stride", 5 }, { "padding", 1 }, { "dilation", 2 }),
      .flops = 2.0 * 16 * 32 * 64 * 128 * 64 * 3 * 3, /* 2 N Cin prod(in) (Cout/g) prod(k) */
      .min_bytes = 4.0 * 211965952, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV_T },
    /* 82: 2D, x [16, 64, 512, 512] -> [16, 64, 510, 510], weight [64, 1, 3, 3] (fan_in 9) */
    { .id = "L1_082_conv_depthwise_2d_square_input_square_kernel", .level = 1, .number = 82,
      .name = "82_conv_depthwise_2D_square_input_square_kernel",
      .expr = "torch.nn.functional.conv2d(x, weight, groups=64)",
      INPUTS(IN("x", G_RAND, 16LL, 64LL, 512LL, 512LL),
             PARAM("weight", G_KAIMING(9), 64LL, 1LL, 3LL, 3LL)),
      OUTPUTS(OUT(16LL, 64LL, 510LL, 510LL)),
      ATTRS({ "in_channels", 64 }, { "kernel_size", 3 }, { "groups", 64 }),
      .flops = 2.0 * 16 * 64 * 510 * 510 * 1 * 3 * 3, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 534778432, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 83: 2D, x [64, 8, 512, 512] -> [64, 8, 510, 512], weight [8, 1, 3, 1] (fan_in 3) */
    { .id = "L1_083_conv_depthwise_2d_square_input_asymmetric_kernel", .level = 1, .number = 83,
      .name = "83_conv_depthwise_2D_square_input_asymmetric_kernel",
      .expr = "torch.nn.functional.conv2d(x, weight, groups=8)",
      INPUTS(IN("x", G_RAND, 64LL, 8LL, 512LL, 512LL),
             PARAM("weight", G_KAIMING(3), 8LL, 1LL, 3LL, 1LL)),
      OUTPUTS(OUT(64LL, 8LL, 510LL, 512LL)),
      ATTRS({ "in_channels", 8 }, { "kernel_size", 3 }, { "groups", 8 }),
      .flops = 2.0 * 64 * 8 * 510 * 512 * 1 * 3 * 1, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 267911192, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 84: 2D, x [64, 128, 256, 512] -> [64, 128, 254, 510], weight [128, 1, 3, 3] (fan_in 9) */
    { .id = "L1_084_conv_depthwise_2d_asymmetric_input_square_kernel", .level = 1, .number = 84,
      .name = "84_conv_depthwise_2D_asymmetric_input_square_kernel",
      .expr = "torch.nn.functional.conv2d(x, weight, groups=128)",
      INPUTS(IN("x", G_RAND, 64LL, 128LL, 256LL, 512LL),
             PARAM("weight", G_KAIMING(9), 128LL, 1LL, 3LL, 3LL)),
      OUTPUTS(OUT(64LL, 128LL, 254LL, 510LL)),
      ATTRS({ "in_channels", 128 }, { "out_channels", 128 }, { "kernel_size", 3 }, { "groups", 128 }),
      .flops = 2.0 * 64 * 128 * 254 * 510 * 1 * 3 * 3, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 2134934656, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 85: 2D, x [32, 128, 128, 256] -> [32, 128, 126, 250], weight [128, 1, 3, 7] (fan_in 21) */
    { .id = "L1_085_conv_depthwise_2d_asymmetric_input_asymmetric_kernel", .level = 1, .number = 85,
      .name = "85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel",
      .expr = "torch.nn.functional.conv2d(x, weight, groups=128)",
      INPUTS(IN("x", G_RAND, 32LL, 128LL, 128LL, 256LL),
             PARAM("weight", G_KAIMING(21), 128LL, 1LL, 3LL, 7LL)),
      OUTPUTS(OUT(32LL, 128LL, 126LL, 250LL)),
      ATTRS({ "in_channels", 128 }, { "out_channels", 128 }, { "kernel_size_h", 3 }, { "kernel_size_w", 7 }, { "groups", 128 }),
      .flops = 2.0 * 32 * 128 * 126 * 250 * 1 * 3 * 7, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 263244416, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
    /* 86: depthwise 3x3 (stride 1, padding 1, groups 64), then pointwise
     * 1x1 to 128 channels: x [16, 64, 512, 512] -> [16, 128, 512, 512].
     * FLOPs: 2 N C H W 9 + 2 N 128 H W 64. */
    { .id = "L1_086_conv_depthwise_separable_2d", .level = 1, .number = 86,
      .name = "86_conv_depthwise_separable_2D",
      .expr = "torch.nn.functional.conv2d(torch.nn.functional.conv2d(x, depthwise.weight, padding=1, groups=64), pointwise.weight)",
      INPUTS(IN("x", G_RAND, 16LL, 64LL, 512LL, 512LL),
             PARAM("depthwise.weight", G_KAIMING(9), 64LL, 1LL, 3LL, 3LL),
             PARAM("pointwise.weight", G_KAIMING(64), 128LL, 64LL, 1LL, 1LL)),
      OUTPUTS(OUT(16LL, 128LL, 512LL, 512LL)),
      ATTRS({ "in_channels", 64 }, { "out_channels", 128 }, { "kernel_size", 3 }, { "stride", 1 },
            { "padding", 1 }, { "dilation", 1 }),
      .flops = 2.0 * 16 * 64 * 512 * 512 * 9 + 2.0 * 16 * 128 * 512 * 512 * 64,
      .min_bytes = 4.0 * (16.0 * 64 * 512 * 512 + 64 * 9 + 128 * 64 + 16.0 * 128 * 512 * 512),
      .uses_tf32 = 1, .op = OP_CONV_DWSEP },
    /* 87: 2D, x [16, 64, 1024, 1024] -> [16, 128, 1024, 1024], weight [128, 64, 1, 1] (fan_in 64) */
    { .id = "L1_087_conv_pointwise_2d", .level = 1, .number = 87,
      .name = "87_conv_pointwise_2D",
      .expr = "torch.nn.functional.conv2d(x, weight)",
      INPUTS(IN("x", G_RAND, 16LL, 64LL, 1024LL, 1024LL),
             PARAM("weight", G_KAIMING(64), 128LL, 64LL, 1LL, 1LL)),
      OUTPUTS(OUT(16LL, 128LL, 1024LL, 1024LL)),
      ATTRS({ "in_channels", 64 }, { "out_channels", 128 }),
      .flops = 2.0 * 16 * 128 * 1024 * 1024 * 64 * 1 * 1, /* 2 N Cout prod(out) (Cin/g) prod(k) */
      .min_bytes = 4.0 * 3221233664, /* x, weight, y */
      .uses_tf32 = 1, .op = OP_CONV },
};
SUITE_COUNT(suite_l1_conv);

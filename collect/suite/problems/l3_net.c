/* l3_net.c - KernelBench level 3: whole networks as layer programs
 * (problems/net.h): the MLPs (1-3), LeNet-5 (4), AlexNet (5), the ResNet
 * basic block (8), ResNet-18 (9), ResNet-101 (10), VGG-16/19 (11, 12), the
 * DenseNet-121 transition layer (13), MobileNetV1 (19), the EfficientNet
 * MBConv block (21), EfficientNet-B0, B1 and B2 (22-24), MobileNetV2 (20),
 * RegNet (27), GoogLeNet's Inception module and Inception v1 (6, 7), the
 * DenseNet-121 dense block, DenseNet-121 and 201 (14-16), SqueezeNet's Fire
 * module and SqueezeNet (17, 18), the ShuffleNet unit and ShuffleNet (25,
 * 26) and the U-Net with softmax (45); the transformers: ViT (28), Swin
 * MLP (29), Swin Transformer V2 (30), VisionAttention (31), CViT (32),
 * minGPT's causal self-attention (43) and block (44), ReLU self-attention
 * (50).
 * Inputs: x ~ U[0,1) as get_inputs() draws it, then `params`, every
 * parameter packed in registration order (net.h): Linear and Conv weight
 * and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)), BatchNorm weight 1 and bias
 * 0 (which D2-D4 redraw).  Training mode: batch statistics; Dropout has
 * p = 0.0 and is the identity.
 * FLOPs: per linear layer 2 N in out plus N out for its bias; per
 * convolution 2 N Cout Hout Wout (Cin / groups) k^2 plus one per output for
 * a bias; per element 7 for a batch norm (statistics and apply), 1 for ReLU
 * and the residual add, 2 for ReLU6, 3 for sigmoid, 5 for softmax (as
 * level 1 counts it); k^2 comparisons per max-pool output, k^2 additions
 * and a division per average-pool output; one addition per input and one
 * division per output for the global average pool; per transposed
 * convolution 2 N Cin Hin Win (Cout / groups) k^2 plus one per output for
 * a bias; none for the stack's moves, concatenation and channel shuffle;
 * 7 per element for a layer norm, 5 for GELU, 1 for adding a positional
 * embedding (unfold, the cls token, x[:, 0] and patch merging move data
 * only), 2 k^4 C + k^2 C per window of a Swin spatial MLP (the padded
 * map's windows), one per input and one per output for the mean over
 * tokens, Swin V2's window attention as net.c's walk counts it; per
 * attention layer 4 N T^2 C for its two products and per score (N heads
 * T^2) 5 for the scale and softmax or 2 for the scale and ReLU (the masked
 * half counted: PyTorch computes it).
 * min_bytes: x, params and the output, each once.  The numbers are the
 * walk's (net_plan_make); tests/unit/test_suite_net.c checks that they
 * agree with it.
 */
#include <stddef.h>

#include "spec.h"
#include "net.h"

#define G_PACKED { SUITE_GEN_PACKED, 0.0, 0.0 }
#define PACKED(n) PARAM("params", G_PACKED, (n))

const suite_problem suite_l3_net[] = {
    { .id = "L3_001_mlp", .level = 3, .number = 1, .name = "1_MLP",
      .expr = "self.network(x), network = Linear(16384, 16384), ReLU, Linear(16384, 16384), ReLU, Linear(16384, 8192)",
      INPUTS(IN("x", G_RAND, 128LL, 16384LL), PACKED(671129600LL)),
      OUTPUTS(OUT(128LL, 8192LL)),
      ATTRS({ "input_size", 16384.0 }, { "layer_size_1", 16384.0 }, { "layer_size_2", 16384.0 }, { "output_size", 8192.0 }),
      .flops = 171808129024.0, .min_bytes = 4.0 * 674275328, .uses_tf32 = 1, .op = OP_NET_FIRST + 0 },
    { .id = "L3_002_shallowwidemlp", .level = 3, .number = 2, .name = "2_ShallowWideMLP",
      .expr = "self.network(x), network = Linear(16384, 32768), ReLU, Linear(32768, 32768), ReLU, Linear(32768, 16384)",
      INPUTS(IN("x", G_RAND, 128LL, 16384LL), PACKED(2147565568LL)),
      OUTPUTS(OUT(128LL, 16384LL)),
      ATTRS({ "input_size", 16384.0 }, { "hidden_size_1", 32768.0 }, { "hidden_size_2", 32768.0 }, { "output_size", 16384.0 }),
      .flops = 549774688256.0, .min_bytes = 4.0 * 2151759872, .uses_tf32 = 1, .op = OP_NET_FIRST + 1 },
    { .id = "L3_003_deepnarrowmlp", .level = 3, .number = 3, .name = "3_DeepNarrowMLP",
      .expr = "self.network(x), network = Linear(8192, 1024), ReLU, 15 x (Linear(1024, 1024), ReLU), Linear(1024, 8192)",
      INPUTS(IN("x", G_RAND, 1024LL, 8192LL), PACKED(32530432LL)),
      OUTPUTS(OUT(1024LL, 8192LL)),
      ATTRS({ "input_size", 8192.0 }, { "hidden_size", 1024.0 }, { "hidden_layers", 16.0 }, { "output_size", 8192.0 }),
      .flops = 66613936128.0, .min_bytes = 4.0 * 49307648, .uses_tf32 = 1, .op = OP_NET_FIRST + 2 },
    { .id = "L3_004_lenet5", .level = 3, .number = 4, .name = "4_LeNet5",
      .expr = "LeNet-5: relu(conv1) -> max_pool2d(2, 2) -> relu(conv2) -> max_pool2d(2, 2) -> view(-1, 400) -> relu(fc1) -> relu(fc2) -> fc3",
      INPUTS(IN("x", G_RAND, 4096LL, 1LL, 32LL, 32LL), PACKED(62556LL)),
      OUTPUTS(OUT(4096LL, 20LL)),
      ATTRS({ "num_classes", 20.0 }),
      .flops = 3498229760.0, .min_bytes = 4.0 * 4338780, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 0 },
    { .id = "L3_005_alexnet", .level = 3, .number = 5, .name = "5_AlexNet",
      .expr = "AlexNet: five convolutions with ReLU and three max pools, flatten, three linear layers (ReLU and Dropout(p=0.0) between them)",
      INPUTS(IN("x", G_RAND, 1024LL, 3LL, 224LL, 224LL), PACKED(62378344LL)),
      OUTPUTS(OUT(1024LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }),
      .flops = 2327482277888.0, .min_bytes = 4.0 * 217543016, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 1 },
    { .id = "L3_006_googlenetinceptionmodule", .level = 3, .number = 6, .name = "6_GoogleNetInceptionModule",
      .expr = "torch.cat([branch1x1(x), branch3x3(x), branch5x5(x), branch_pool(x)], 1): conv1x1 480->192; conv1x1 480->96, conv3x3 96->208; conv1x1 480->16, conv5x5 16->48; maxpool 3/1/1, conv1x1 480->64 (all with bias, no activations)",
      INPUTS(IN("x", G_RAND, 10LL, 480LL, 224LL, 224LL), PACKED(376176LL)),
      OUTPUTS(OUT(10LL, 512LL, 224LL, 224LL)),
      ATTRS({ "in_channels", 480.0 }, { "out_1x1", 192.0 }, { "reduce_3x3", 96.0 }, { "out_3x3", 208.0 }, { "reduce_5x5", 16.0 }, { "out_5x5", 48.0 }, { "pool_proj", 64.0 }),
      .flops = 379354644480.0, .min_bytes = 4.0 * 498122096, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 15 },
    { .id = "L3_007_googlenetinceptionv1", .level = 3, .number = 7, .name = "7_GoogleNetInceptionV1",
      .expr = "GoogLeNet (Inception v1) as KernelBench writes it: relu(conv7x7/2), maxpool 3/2, relu(conv1x1), relu(conv3x3), maxpool 3/2, inception 3a, 3b, maxpool, 4a-4e, maxpool, 5a, 5b (each the concatenation of four branches, no activations inside), adaptive avg pool, Dropout(0.0), fc",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(6998552LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }),
      .flops = 31829849840.0, .min_bytes = 4.0 * 8513832, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 16 },
    { .id = "L3_008_resnetbasicblock", .level = 3, .number = 8, .name = "8_ResNetBasicBlock",
      .expr = "relu(bn2(conv2(relu(bn1(conv1(x))))) + downsample(x)), downsample = bn(conv1x1(x)), batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(39168LL)),
      OUTPUTS(OUT(10LL, 64LL, 224LL, 224LL)),
      ATTRS({ "in_channels", 3.0 }, { "out_channels", 64.0 }, { "stride", 1.0 }, { "eps", 1e-05 }),
      .flops = 39691223040.0, .min_bytes = 4.0 * 33657088, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 2 },
    { .id = "L3_009_resnet18", .level = 3, .number = 9, .name = "9_ResNet18",
      .expr = "ResNet-18: conv7x7/2, bn, relu, maxpool 3/2, four stages of two basic blocks (64, 128, 256, 512 channels), global average pool, fc; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 2LL, 3LL, 224LL, 224LL), PACKED(11689512LL)),
      OUTPUTS(OUT(2LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }, { "eps", 1e-05 }),
      .flops = 7300852688.0, .min_bytes = 4.0 * 11992568, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 3 },
    { .id = "L3_010_resnet101", .level = 3, .number = 10, .name = "10_ResNet101",
      .expr = "ResNet-101: conv7x7/2, bn, relu, maxpool 3/2, four stages of 3, 4, 23 and 3 bottleneck blocks (1x1, 3x3 with the stage's stride, 1x1 to 4x the width; 64, 128, 256, 512), global average pool, fc; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(44549160LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "layers_1", 3.0 }, { "layers_2", 4.0 }, { "layers_3", 23.0 }, { "layers_4", 3.0 }, { "num_classes", 1000.0 }, { "eps", 1e-05 }),
      .flops = 157420021520.0, .min_bytes = 4.0 * 46064440, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 6 },
    { .id = "L3_011_vgg16", .level = 3, .number = 11, .name = "11_VGG16",
      .expr = "VGG-16: thirteen 3x3 convolutions with ReLU in five stages each ending in a 2x2 max pool, flatten, three linear layers (ReLU and Dropout(p=0.0) between them)",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(138357544LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }),
      .flops = 309737625360.0, .min_bytes = 4.0 * 139872824, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 4 },
    { .id = "L3_012_vgg19", .level = 3, .number = 12, .name = "12_VGG19",
      .expr = "VGG-19: sixteen 3x3 convolutions with ReLU in five stages each ending in a 2x2 max pool, flatten, three linear layers (ReLU and Dropout(p=0.0) between them)",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(143667240LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }),
      .flops = 392999679760.0, .min_bytes = 4.0 * 145182520, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 5 },
    { .id = "L3_013_densenet121transitionlayer", .level = 3, .number = 13, .name = "13_DenseNet121TransitionLayer",
      .expr = "self.transition(x), transition = BatchNorm2d(32) (training), ReLU, Conv2d(32, 64, 1, bias=False), AvgPool2d(2, 2)",
      INPUTS(IN("x", G_RAND, 128LL, 32LL, 256LL, 256LL), PACKED(2112LL)),
      OUTPUTS(OUT(128LL, 64LL, 128LL, 128LL)),
      ATTRS({ "num_input_features", 32.0 }, { "num_output_features", 64.0 }, { "eps", 1e-05 }),
      .flops = 37178310656.0, .min_bytes = 4.0 * 402655296, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 7 },
    { .id = "L3_014_densenet121denseblock", .level = 3, .number = 14, .name = "14_DenseNet121DenseBlock",
      .expr = "six dense layers (bn + relu + conv3x3 to 32 channels without bias + Dropout(0.0)), each layer's input the concatenation of x and every earlier layer's output; the output is the concatenation of all seven; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 32LL, 224LL, 224LL), PACKED(194880LL)),
      OUTPUTS(OUT(10LL, 224LL, 224LL, 224LL)),
      ATTRS({ "num_layers", 6.0 }, { "num_input_features", 32.0 }, { "growth_rate", 32.0 }, { "eps", 1e-05 }),
      .flops = 196914708480.0, .min_bytes = 4.0 * 128645440, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 17 },
    { .id = "L3_015_densenet121", .level = 3, .number = 15, .name = "15_DenseNet121",
      .expr = "DenseNet-121 as KernelBench writes it (no bottleneck layers): conv7x7/2 + bn + relu + maxpool 3/2, dense blocks of 6, 12, 24 and 16 layers (growth 32) with transition layers (bn + relu + conv1x1 halving the channels + avgpool 2) between them, bn + relu, adaptive avg pool, fc to 10 classes; parameters in registration order (features, all dense blocks, all transitions, final bn, classifier); batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(9854346LL)),
      OUTPUTS(OUT(10LL, 10LL)),
      ATTRS({ "growth_rate", 32.0 }, { "num_classes", 10.0 }, { "eps", 1e-05 }),
      .flops = 61845396580.0, .min_bytes = 4.0 * 11359726, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 18 },
    { .id = "L3_016_densenet201", .level = 3, .number = 16, .name = "16_DenseNet201",
      .expr = "DenseNet-201 as KernelBench writes it (no bottleneck layers): conv7x7/2 + bn + relu + maxpool 3/2, dense blocks of 6, 12, 48 and 32 layers (growth 32) with transition layers (bn + relu + conv1x1 halving the channels + avgpool 2) between them, bn + relu, adaptive avg pool, fc to 10 classes; parameters in registration order (features, all dense blocks, all transitions, final bn, classifier); batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(30064778LL)),
      OUTPUTS(OUT(10LL, 10LL)),
      ATTRS({ "growth_rate", 32.0 }, { "num_classes", 10.0 }, { "eps", 1e-05 }),
      .flops = 113645154660.0, .min_bytes = 4.0 * 31570158, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 19 },
    { .id = "L3_017_squeezenetfiremodule", .level = 3, .number = 17, .name = "17_SqueezeNetFireModule",
      .expr = "s = relu(squeeze(x)) (conv1x1 3->6); torch.cat([relu(expand1x1(s)) (conv1x1 6->64), relu(expand3x3(s)) (conv3x3 6->64, padding 1)], 1)",
      INPUTS(IN("x", G_RAND, 128LL, 3LL, 256LL, 256LL), PACKED(3992LL)),
      OUTPUTS(OUT(128LL, 128LL, 256LL, 256LL)),
      ATTRS({ "in_channels", 3.0 }, { "squeeze_channels", 6.0 }, { "expand1x1_channels", 64.0 }, { "expand3x3_channels", 64.0 }),
      .flops = 66974646272.0, .min_bytes = 4.0 * 1098911640, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 20 },
    { .id = "L3_018_squeezenet", .level = 3, .number = 18, .name = "18_SqueezeNet",
      .expr = "SqueezeNet 1.0: relu(conv7x7/2 3->96), maxpool 3/2 (ceil mode), Fire modules 2-4, maxpool, Fire 5-8, maxpool, Fire 9, Dropout(0.0), relu(conv1x1 512->1000), adaptive avg pool, flatten",
      INPUTS(IN("x", G_RAND, 64LL, 3LL, 512LL, 512LL), PACKED(1248424LL)),
      OUTPUTS(OUT(64LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }),
      .flops = 578023147520.0, .min_bytes = 4.0 * 51644072, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 21 },
    { .id = "L3_019_mobilenetv1", .level = 3, .number = 19, .name = "19_MobileNetV1",
      .expr = "MobileNetV1 (alpha 1): conv3x3/2 + bn + relu, thirteen depthwise-separable blocks (depthwise 3x3 + bn + relu, pointwise 1x1 + bn + relu), AvgPool2d(7), fc; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(4231976LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }, { "input_channels", 3.0 }, { "alpha", 1.0 }, { "eps", 1e-05 }),
      .flops = 11778744080.0, .min_bytes = 4.0 * 5747256, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 8 },
    { .id = "L3_020_mobilenetv2", .level = 3, .number = 20, .name = "20_MobileNetV2",
      .expr = "MobileNetV2 as KernelBench writes it (its blocks drop the residual): conv3x3/2 + bn + relu6, seventeen inverted residual blocks (expand 1x1 + bn + relu6 unless t is 1, depthwise 3x3 + bn + relu6, project 1x1 + bn), conv1x1 to 1280 + bn + relu6, adaptive avg pool, Dropout(0.0), fc; its own initialisation (kaiming_normal_ fan_out convolutions, N(0, 0.01) fc, zero biases); batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(3504872LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }, { "eps", 1e-05 }),
      .flops = 6605719120.0, .min_bytes = 4.0 * 5020152, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 13 },
    { .id = "L3_021_efficientnetmbconv", .level = 3, .number = 21, .name = "21_EfficientNetMBConv",
      .expr = "MBConv (expand 6, kernel 5, stride 2, no residual): conv1x1 112->672 + bn + relu6, depthwise conv5x5/2 + bn + relu6, conv1x1 672->192 + bn; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 112LL, 224LL, 224LL), PACKED(224160LL)),
      OUTPUTS(OUT(10LL, 192LL, 112LL, 112LL)),
      ATTRS({ "in_channels", 112.0 }, { "out_channels", 192.0 }, { "kernel_size", 5.0 }, { "stride", 2.0 }, { "expand_ratio", 6.0 }, { "eps", 1e-05 }),
      .flops = 116075151360.0, .min_bytes = 4.0 * 80505760, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 10 },
    { .id = "L3_022_efficientnetb0", .level = 3, .number = 22, .name = "22_EfficientNetB0",
      .expr = "EfficientNet-B0: relu(bn1(conv3x3/2)), thirteen MBConv blocks (expand 1x1 + bn + relu6 unless the ratio is 1, depthwise + bn + relu6, project 1x1 + bn, the input added when the stride is 1 and the width stays), relu(bn2(conv1x1 to 1280)), adaptive_avg_pool2d, fc; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(3922408LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }, { "eps", 1e-05 }),
      .flops = 6806423120.0, .min_bytes = 4.0 * 5437688, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 11 },
    { .id = "L3_023_efficientnetb1", .level = 3, .number = 23, .name = "23_EfficientNetB1",
      .expr = "EfficientNet-B1 as KernelBench writes it: relu(bn1(conv3x3/2)), seven blocks (expand 1x1 + bn + relu6, depthwise 3x3 + bn + relu6, project 1x1 + bn; no residual), relu(bn2(conv1x1 to 1280)), adaptive_avg_pool2d, fc; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 240LL, 240LL), PACKED(2661928LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }, { "eps", 1e-05 }),
      .flops = 4798789040.0, .min_bytes = 4.0 * 4399928, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 12 },
    { .id = "L3_024_efficientnetb2", .level = 3, .number = 24, .name = "24_EfficientNetB2",
      .expr = "EfficientNet-B2 as KernelBench writes it: relu(bn1(conv3x3/2)), five blocks (expand 1x1 + bn + relu, depthwise 3x3 + bn + relu, adaptive avg pool to 1x1, conv1x1 to a quarter + relu, conv1x1 back + sigmoid, project 1x1 + bn, all in sequence: no product with the block's input), relu(bn(conv1x1 to 1408)), adaptive avg pool, fc; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 2LL, 3LL, 224LL, 224LL), PACKED(6868328LL)),
      OUTPUTS(OUT(2LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }, { "eps", 1e-05 }),
      .flops = 315800080.0, .min_bytes = 4.0 * 7171384, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 14 },
    { .id = "L3_025_shufflenetunit", .level = 3, .number = 25, .name = "25_ShuffleNetUnit",
      .expr = "relu(bn3(conv3(shuffle(bn2(conv2(relu(bn1(conv1(x))))))))) + bn(conv1x1(x)): conv1 1x1 240->120 groups 3, conv2 depthwise 3x3, channel shuffle (3 groups), conv3 1x1 120->480 groups 3, shortcut conv1x1 240->480 + bn; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 240LL, 224LL, 224LL), PACKED(147480LL)),
      OUTPUTS(OUT(10LL, 480LL, 224LL, 224LL)),
      ATTRS({ "in_channels", 240.0 }, { "out_channels", 480.0 }, { "groups", 3.0 }, { "eps", 1e-05 }),
      .flops = 150347366400.0, .min_bytes = 4.0 * 361414680, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 22 },
    { .id = "L3_026_shufflenet", .level = 3, .number = 26, .name = "26_ShuffleNet",
      .expr = "ShuffleNet (groups 3) as KernelBench writes it: relu(bn(conv3x3/2 3->24)), maxpool 3/2, three stages of 3, 7 and 3 stride-1 units (240, 480, 960 channels; the first unit of a stage with a conv1x1 + bn shortcut), relu(bn(conv1x1 to 1024)), adaptive avg pool, fc; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(3338524LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }, { "groups", 3.0 }, { "eps", 1e-05 }),
      .flops = 147066411280.0, .min_bytes = 4.0 * 4853804, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 23 },
    { .id = "L3_027_regnet", .level = 3, .number = 27, .name = "27_RegNet",
      .expr = "three stages (64, 128, 256 channels) of conv3x3 + bn + relu, conv3x3 + bn + relu, max_pool2d(2, 2); torch.mean over H and W; fc to 10 classes; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 8LL, 3LL, 224LL, 224LL), PACKED(1149770LL)),
      OUTPUTS(OUT(8LL, 10LL)),
      ATTRS({ "input_channels", 3.0 }, { "stages", 3.0 }, { "block_width_1", 64.0 }, { "block_width_2", 128.0 }, { "block_width_3", 256.0 }, { "output_classes", 10.0 }, { "eps", 1e-05 }),
      .flops = 120623147088.0, .min_bytes = 4.0 * 2354074, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 9 },
    { .id = "L3_028_visiontransformer", .level = 3, .number = 28, .name = "28_VisionTransformer",
      .expr = "ViT: img.unfold(2, 16, 16).unfold(3, 16, 16).reshape(2, -1, 768), patch_to_embedding (768 -> 512), cat cls_token, + pos_embedding, nn.TransformerEncoder of 6 TransformerEncoderLayer(512, 8, 2048, dropout 0.0) (batch_first=False: [2, 197, 512] is 197 sequences of 2), x[:, 0], Linear(512, 2048), GELU, Linear(2048, 10)",
      INPUTS(IN("x", G_RAND, 2LL, 3LL, 224LL, 224LL), PACKED(20480522LL)),
      OUTPUTS(OUT(2LL, 10LL)),
      ATTRS({ "image_size", 224.0 }, { "patch_size", 16.0 }, { "num_classes", 10.0 }, { "dim", 512.0 }, { "depth", 6.0 }, { "heads", 8.0 }, { "mlp_dim", 2048.0 }, { "channels", 3.0 }, { "dropout", 0.0 }, { "emb_dropout", 0.0 }, { "eps", 1e-05 }),
      .flops = 15230959316.0, .min_bytes = 4.0 * 20781598, .uses_tf32 = 1, .op = OP_NET_FIRST + 54 },
    { .id = "L3_029_swinmlp", .level = 3, .number = 29, .name = "29_SwinMLP",
      .expr = "Swin MLP (img 224, patch 4, embed 96, depths 2, 2, 6, 2, heads 3, 6, 12, 24, window 7, mlp_ratio 4, 1000 classes): patch_embed (conv 4x4/4, flatten(2).transpose(1, 2), LayerNorm), stages of SwinMLPBlocks (x + spatial MLP of norm1(x) over (shifted) windows, x + fc2(GELU(fc1(norm2(x))))) with PatchMerging between them, norm, mean over the tokens, head; dropouts and drop paths are identities",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(19959292LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "img_size", 224.0 }, { "patch_size", 4.0 }, { "embed_dim", 96.0 }, { "window_size", 7.0 }, { "mlp_ratio", 4.0 }, { "num_classes", 1000.0 }, { "eps", 1e-05 }),
      .flops = 61771606480.0, .min_bytes = 4.0 * 21474572, .uses_tf32 = 1, .op = OP_NET_FIRST + 58 },
    { .id = "L3_030_swintransformerv2", .level = 3, .number = 30, .name = "30_SwinTransformerV2",
      .expr = "Swin Transformer V2 (img 224, patch 4, embed 96, depths 2, 2, 6, 2, heads 3, 6, 12, 24, window 7, mlp_ratio 4, 1000 classes): patch_embed (conv 4x4/4, tokens, LayerNorm), stages of blocks (x + norm1(window attention(x)): cyclic shift in every second block, cosine attention with a learned logit scale, continuous position bias from cpb_mlp, the shifted-window mask; x + norm2(fc2(GELU(fc1(x))))) with PatchMerging (reduction, then norm) between them, norm, mean over tokens, head; dropouts and drop paths are identities",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 224LL, 224LL), PACKED(28347154LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "img_size", 224.0 }, { "patch_size", 4.0 }, { "embed_dim", 96.0 }, { "window_size", 7.0 }, { "mlp_ratio", 4.0 }, { "num_classes", 1000.0 }, { "eps", 1e-05 }),
      .flops = 90769678552.0, .min_bytes = 4.0 * 29862434, .uses_tf32 = 1, .op = OP_NET_FIRST + 59 },
    { .id = "L3_031_visionattention", .level = 3, .number = 31, .name = "31_VisionAttention",
      .expr = "t = x.view(B, C, H * W).permute(2, 0, 1); norm(MultiheadAttention(128, 4)(t, t, t)[0] + t).permute(1, 2, 0).view(B, C, H, W); in_proj xavier_uniform with zero bias, out_proj bias 0",
      INPUTS(IN("x", G_RAND, 2LL, 128LL, 128LL, 128LL), PACKED(66304LL)),
      OUTPUTS(OUT(2LL, 128LL, 128LL, 128LL)),
      ATTRS({ "embed_dim", 128.0 }, { "num_heads", 4.0 }, { "eps", 1e-05 }),
      .flops = 289960624128.0, .min_bytes = 4.0 * 8454912, .uses_tf32 = 1, .op = OP_NET_FIRST + 53 },
    { .id = "L3_032_convolutionalvisiontransformer", .level = 3, .number = 32, .name = "32_ConvolutionalVisionTransformer",
      .expr = "CViT: conv1 (3 -> 128, kernel 4, stride 4), flatten, linear_proj (8192 -> 128), cat(cls_token, x.unsqueeze(1)) -> [B, 2, 128], six TransformerEncoderLayer(128, 4, 512, dropout 0.0, batch_first=True), fc_out(x[:, 0]) to 1000 classes",
      INPUTS(IN("x", G_RAND, 10LL, 3LL, 32LL, 32LL), PACKED(2373736LL)),
      OUTPUTS(OUT(10LL, 1000LL)),
      ATTRS({ "num_classes", 1000.0 }, { "embed_dim", 128.0 }, { "num_heads", 4.0 }, { "num_layers", 6.0 }, { "mlp_ratio", 4.0 }, { "patch_size", 4.0 }, { "in_channels", 3.0 }, { "image_size", 32.0 }, { "eps", 1e-05 }),
      .flops = 79248080.0, .min_bytes = 4.0 * 2414456, .uses_tf32 = 1, .op = OP_NET_FIRST + 55 },
    { .id = "L3_043_mingptcausalattention", .level = 3, .number = 43, .name = "43_MinGPTCausalAttention",
      .expr = "minGPT's causal self-attention: q, k, v = c_attn(x).split(768, 2), 8 heads, softmax(masked_fill(q k^T / sqrt(96), causal, -inf)) v, heads side by side, c_proj; dropouts p = 0.0",
      INPUTS(IN("x", G_RAND, 128LL, 512LL, 768LL), PACKED(2362368LL)),
      OUTPUTS(OUT(128LL, 512LL, 768LL)),
      ATTRS({ "n_embd", 768.0 }, { "n_head", 8.0 }, { "attn_pdrop", 0.0 }, { "resid_pdrop", 0.0 }, { "max_seqlen", 1024.0 }),
      .flops = 413860364288.0, .min_bytes = 4.0 * 103025664, .uses_tf32 = 1, .op = OP_NET_FIRST + 50 },
    { .id = "L3_044_minigptblock", .level = 3, .number = 44, .name = "44_MiniGPTBlock",
      .expr = "x = x + attn(ln_1(x)); x + c_proj(NewGELU(c_fc(ln_2(x)))); attn is minGPT's causal self-attention (8 heads, c_attn, c_proj), c_fc 768 -> 3072, c_proj 3072 -> 768; dropouts p = 0.0",
      INPUTS(IN("x", G_RAND, 128LL, 512LL, 768LL), PACKED(7087872LL)),
      OUTPUTS(OUT(128LL, 512LL, 768LL)),
      ATTRS({ "n_embd", 768.0 }, { "n_head", 8.0 }, { "attn_pdrop", 0.0 }, { "resid_pdrop", 0.0 }, { "max_seqlen", 1024.0 }, { "eps", 1e-05 }),
      .flops = 1034399252480.0, .min_bytes = 4.0 * 107751168, .uses_tf32 = 1, .op = OP_NET_FIRST + 52 },
    { .id = "L3_045_unetsoftmax", .level = 3, .number = 45, .name = "45_UNetSoftmax",
      .expr = "U-Net (features 64) whose double convolutions are conv3x3 + bn + softmax(dim=-1), twice: four encoders with maxpool 2, a bottleneck, four decoders each on cat(ConvTranspose2d(k 2, s 2) of the previous, the encoder's output), conv1x1 to 4 channels; batch norms in training mode",
      INPUTS(IN("x", G_RAND, 8LL, 8LL, 64LL, 512LL), PACKED(31046596LL)),
      OUTPUTS(OUT(8LL, 4LL, 64LL, 512LL)),
      ATTRS({ "in_channels", 8.0 }, { "out_channels", 4.0 }, { "features", 64.0 }, { "eps", 1e-05 }),
      .flops = 388676714496.0, .min_bytes = 4.0 * 34192324, .uses_tf32 = 1, .op = OP_CONV_NET_FIRST + 24 },
    { .id = "L3_050_reluselfattention", .level = 3, .number = 50, .name = "50_ReLUSelfAttention",
      .expr = "q, k, v = c_attn(x).split(768, 2), 12 heads, relu(masked_fill(q k^T / sqrt(64), causal, -inf)) v, heads side by side (no output projection)",
      INPUTS(IN("x", G_RAND, 16LL, 1024LL, 768LL), PACKED(1771776LL)),
      OUTPUTS(OUT(16LL, 1024LL, 768LL)),
      ATTRS({ "n_embd", 768.0 }, { "n_head", 12.0 }, { "max_seqlen", 1024.0 }),
      .flops = 109962067968.0, .min_bytes = 4.0 * 26937600, .uses_tf32 = 1, .op = OP_NET_FIRST + 51 },
};

SUITE_COUNT(suite_l3_net);

/* --- the programs ----------------------------------------------------------- */

#define LIN(O_)            { .kind = NET_LINEAR, .out = (O_), .bias = 1 }
#define CONVG(O_, K_, S_, P_, G_) { .kind = NET_CONV2D, .out = (O_), .k = (K_), .s = (S_), .p = (P_), .groups = (G_) }   /* grouped, bias=False */
#define AVGP(K_, S_, P_)     { .kind = NET_AVGPOOL2D, .k = (K_), .s = (S_), .p = (P_) }
#define RELU6             { .kind = NET_RELU6 }
#define SIGM              { .kind = NET_SIGMOID }
/* MobileNetV2's own initialisation: kaiming_normal_ (fan_out) convolutions
 * without a bias, an N(0, 0.01) linear layer with a zero bias */
#define CONVK(O_, K_, S_, P_, G_) { .kind = NET_CONV2D, .out = (O_), .k = (K_), .s = (S_), .p = (P_), .groups = (G_), \
                          .init = NET_INIT_KAIMING_OUT }
#define LIN_N(O_)          { .kind = NET_LINEAR, .out = (O_), .bias = 1, .init = NET_INIT_NORMAL_001 }
#define CONV(O_, K_, S_, P_)  { .kind = NET_CONV2D, .out = (O_), .k = (K_), .s = (S_), .p = (P_), .bias = 1 }
#define CONVN(O_, K_, S_, P_) { .kind = NET_CONV2D, .out = (O_), .k = (K_), .s = (S_), .p = (P_) }   /* bias=False */
#define BN                { .kind = NET_BN2D }
#define RELU              { .kind = NET_RELU }
#define MAXP(K_, S_, P_)     { .kind = NET_MAXPOOL2D, .k = (K_), .s = (S_), .p = (P_) }
#define MAXPC(K_, S_, P_)    { .kind = NET_MAXPOOL2D, .k = (K_), .s = (S_), .p = (P_), .ceil = 1 }   /* ceil_mode */
#define GAP               { .kind = NET_GAP }
#define FLAT              { .kind = NET_FLATTEN }
#define DROP              { .kind = NET_DROPOUT }
#define SAVE              { .kind = NET_SAVE }
#define SWAP              { .kind = NET_SWAP }
#define ADD               { .kind = NET_ADD }
/* the stack of saved tensors: push, exchange with the top, concatenation
 * of the top n entries and the current tensor */
#define PUSH              { .kind = NET_PUSH }
#define XCHG              { .kind = NET_EXCHANGE }
#define CAT(N_)            { .kind = NET_CONCAT, .k = (N_) }
#define SHUF(G_)           { .kind = NET_SHUFFLE, .groups = (G_) }
#define CONVT(O_, K_, S_, P_) { .kind = NET_CONVT2D, .out = (O_), .k = (K_), .s = (S_), .p = (P_), .bias = 1 }
#define SOFTMAX           { .kind = NET_SOFTMAX }
/* the same layers with their parameters' order r (net.h: order) */
#define CONVN_R(O_, K_, S_, P_, R_) { .kind = NET_CONV2D, .out = (O_), .k = (K_), .s = (S_), .p = (P_), .order = (R_) }
#define BN_R(R_)           { .kind = NET_BN2D, .order = (R_) }
#define LIN_R(O_, R_)       { .kind = NET_LINEAR, .out = (O_), .bias = 1, .order = (R_) }
/* A 3x3 convolution with padding 1 and its ReLU (VGG). */
#define C3R(o)            CONV(o, 3, 1, 1), RELU
/* torchvision's BasicBlock: conv1, bn1, conv2, bn2 and, when the shape
 * changes, the downsample branch (registered after them, run on the
 * block's input: SWAP brings it back), then the sum and its ReLU. */
#define BLOCK(c)          SAVE, CONVN(c, 3, 1, 1), BN, RELU, CONVN(c, 3, 1, 1), BN, ADD, RELU
#define BLOCK_DS(c, s)    SAVE, CONVN(c, 3, s, 1), BN, RELU, CONVN(c, 3, 1, 1), BN, SWAP, \
                          CONVN(c, 1, s, 0), BN, ADD, RELU

static const net_layer mlp1[] = { LIN(16384), RELU, LIN(16384), RELU, LIN(8192) };
static const net_layer mlp2[] = { LIN(32768), RELU, LIN(32768), RELU, LIN(16384) };
#define H1024 LIN(1024), RELU
static const net_layer mlp3[] = {
    H1024, H1024, H1024, H1024, H1024, H1024, H1024, H1024,
    H1024, H1024, H1024, H1024, H1024, H1024, H1024, H1024, LIN(8192),
};
static const net_layer lenet5[] = {
    CONV(6, 5, 1, 0), RELU, MAXP(2, 2, 0), CONV(16, 5, 1, 0), RELU, MAXP(2, 2, 0), FLAT,
    LIN(120), RELU, LIN(84), RELU, LIN(20),
};
static const net_layer alexnet[] = {
    CONV(96, 11, 4, 2), RELU, MAXP(3, 2, 0), CONV(256, 5, 1, 2), RELU, MAXP(3, 2, 0),
    CONV(384, 3, 1, 1), RELU, CONV(384, 3, 1, 1), RELU, CONV(256, 3, 1, 1), RELU, MAXP(3, 2, 0),
    FLAT, LIN(4096), RELU, DROP, LIN(4096), RELU, DROP, LIN(1000),
};
static const net_layer basic_block[] = { BLOCK_DS(64, 1) };
static const net_layer resnet18[] = {
    CONVN(64, 7, 2, 3), BN, RELU, MAXP(3, 2, 1),
    BLOCK(64), BLOCK(64),
    BLOCK_DS(128, 2), BLOCK(128),
    BLOCK_DS(256, 2), BLOCK(256),
    BLOCK_DS(512, 2), BLOCK(512),
    GAP, FLAT, LIN(1000),
};
/* torchvision's Bottleneck (stride on the 3x3), with and without the
 * downsample branch */
#define BOTTLE(c)         SAVE, CONVN(c, 1, 1, 0), BN, RELU, CONVN(c, 3, 1, 1), BN, RELU, \
                          CONVN(4 * (c), 1, 1, 0), BN, ADD, RELU
#define BOTTLE_DS(c, s)   SAVE, CONVN(c, 1, 1, 0), BN, RELU, CONVN(c, 3, s, 1), BN, RELU, \
                          CONVN(4 * (c), 1, 1, 0), BN, SWAP, CONVN(4 * (c), 1, s, 0), BN, ADD, RELU
#define BOTTLE3(c)        BOTTLE(c), BOTTLE(c), BOTTLE(c)
static const net_layer resnet101[] = {
    CONVN(64, 7, 2, 3), BN, RELU, MAXP(3, 2, 1),
    BOTTLE_DS(64, 1), BOTTLE(64), BOTTLE(64),
    BOTTLE_DS(128, 2), BOTTLE3(128),
    BOTTLE_DS(256, 2), BOTTLE3(256), BOTTLE3(256), BOTTLE3(256), BOTTLE3(256), BOTTLE3(256), BOTTLE3(256),
    BOTTLE3(256), BOTTLE(256),
    BOTTLE_DS(512, 2), BOTTLE(512), BOTTLE(512),
    GAP, FLAT, LIN(1000),
};
static const net_layer transition[] = { BN, RELU, CONVN(64, 1, 1, 0), AVGP(2, 2, 0) };
/* MobileNetV1's blocks: a depthwise 3x3 and a pointwise 1x1, each with a
 * batch norm and a ReLU */
#define DW(i, o, s)       CONVG(i, 3, s, 1, i), BN, RELU, CONVN(o, 1, 1, 0), BN, RELU
static const net_layer mobilenet1[] = {
    CONVN(32, 3, 2, 1), BN, RELU,
    DW(32, 64, 1), DW(64, 128, 2), DW(128, 128, 1), DW(128, 256, 2), DW(256, 256, 1), DW(256, 512, 2),
    DW(512, 512, 1), DW(512, 512, 1), DW(512, 512, 1), DW(512, 512, 1), DW(512, 512, 1),
    DW(512, 1024, 2), DW(1024, 1024, 1),
    AVGP(7, 7, 0), FLAT, LIN(1000),
};
static const net_layer mbconv[] = {
    CONVN(672, 1, 1, 0), BN, RELU6, CONVG(672, 5, 2, 2, 672), BN, RELU6, CONVN(192, 1, 1, 0), BN,
};
/* EfficientNet's MBConv(in i, out o, kernel k, stride s, expansion e): the
 * expansion when e > 1 (MB_E), the residual when s == 1 and i == o (MB_ER),
 * neither (MB_1, e == 1) */
#define MB_DW(h, k, s)    CONVG(h, k, s, ((k) - 1) / 2, h), BN, RELU6
#define MB_E(i, o, k, s, e) CONVN((i) * (e), 1, 1, 0), BN, RELU6, MB_DW((i) * (e), k, s), CONVN(o, 1, 1, 0), BN
#define MB_ER(i, k, e)    SAVE, MB_E(i, i, k, 1, e), ADD
#define MB_1(i, o, k, s)  MB_DW(i, k, s), CONVN(o, 1, 1, 0), BN
static const net_layer effnet_b0[] = {
    CONVN(32, 3, 2, 1), BN, RELU,
    MB_1(32, 16, 3, 1),
    MB_E(16, 24, 3, 2, 6), MB_ER(24, 3, 6),
    MB_E(24, 40, 5, 2, 6), MB_ER(40, 5, 6),
    MB_E(40, 80, 3, 2, 6), MB_ER(80, 3, 6),
    MB_E(80, 112, 5, 1, 6), MB_ER(112, 5, 6),
    MB_E(112, 192, 5, 2, 6), MB_ER(192, 5, 6), MB_ER(192, 5, 6),
    MB_E(192, 320, 3, 1, 6),
    CONVN(1280, 1, 1, 0), BN, RELU, GAP, FLAT, LIN(1000),
};
/* EfficientNet-B1's blocks (KernelBench's): always the expansion, a 3x3
 * depthwise, no residual */
#define B1_BLOCK(i, o, s, e) MB_E(i, o, 3, s, e)
static const net_layer effnet_b1[] = {
    CONVN(32, 3, 2, 1), BN, RELU,
    B1_BLOCK(32, 16, 1, 1), B1_BLOCK(16, 24, 2, 6), B1_BLOCK(24, 40, 2, 6), B1_BLOCK(40, 80, 2, 6),
    B1_BLOCK(80, 112, 1, 6), B1_BLOCK(112, 192, 2, 6), B1_BLOCK(192, 320, 1, 6),
    CONVN(1280, 1, 1, 0), BN, RELU, GAP, FLAT, LIN(1000),
};
/* MobileNetV2's inverted residual blocks (t = 6, and t = 1 without the
 * expansion), without the residual, as KernelBench's model builds them */
#define V2_DW(h, s)       CONVK(h, 3, s, 1, h), BN, RELU6
#define V2_1(i, o, s)     V2_DW(i, s), CONVK(o, 1, 1, 0, 1), BN
#define V2(i, o, s)       CONVK(6 * (i), 1, 1, 0, 1), BN, RELU6, V2_DW(6 * (i), s), CONVK(o, 1, 1, 0, 1), BN
static const net_layer mobilenet2[] = {
    CONVK(32, 3, 2, 1, 1), BN, RELU6,
    V2_1(32, 16, 1),
    V2(16, 24, 2), V2(24, 24, 1),
    V2(24, 32, 2), V2(32, 32, 1), V2(32, 32, 1),
    V2(32, 64, 2), V2(64, 64, 1), V2(64, 64, 1), V2(64, 64, 1),
    V2(64, 96, 1), V2(96, 96, 1), V2(96, 96, 1),
    V2(96, 160, 2), V2(160, 160, 1), V2(160, 160, 1),
    V2(160, 320, 1),
    CONVK(1280, 1, 1, 0, 1), BN, RELU6, GAP, FLAT, DROP, LIN_N(1000),
};
/* EfficientNet-B2's blocks (KernelBench's): expansion, depthwise, then the
 * squeeze-and-excitation layers in sequence on the pooled map, projection */
#define B2_BLOCK(i, o, s, e) CONVN((i) * (e), 1, 1, 0), BN, RELU, CONVG((i) * (e), 3, s, 1, (i) * (e)), BN, RELU, \
                          GAP, CONVN((i) * (e) / 4, 1, 1, 0), RELU, CONVN((i) * (e), 1, 1, 0), SIGM, \
                          CONVN(o, 1, 1, 0), BN
static const net_layer effnet_b2[] = {
    CONVN(32, 3, 2, 1), BN, RELU,
    B2_BLOCK(32, 96, 1, 3), B2_BLOCK(96, 144, 2, 6), B2_BLOCK(144, 192, 2, 6), B2_BLOCK(192, 288, 2, 6),
    B2_BLOCK(288, 384, 1, 6),
    CONVN(1408, 1, 1, 0), BN, RELU, GAP, FLAT, LIN(1000),
};
/* RegNet's stages: two conv3x3 (with bias) + bn + relu, then a 2x2 max pool */
#define REG_STAGE(c)      CONV(c, 3, 1, 1), BN, RELU, CONV(c, 3, 1, 1), BN, RELU, MAXP(2, 2, 0)
static const net_layer regnet[] = { REG_STAGE(64), REG_STAGE(128), REG_STAGE(256), GAP, FLAT, LIN(10) };
/* Transformers (net.h): minGPT's causal self-attention (c_attn, the
 * attention, c_proj), and nn.MultiheadAttention's (in_proj xavier_uniform_
 * with a zero bias, out_proj with the default weight and a zero bias). */
#define ATTN(H_, F_)       { .kind = NET_ATTENTION, .k = (F_), .groups = (H_) }
#define LN                { .kind = NET_LAYERNORM }
#define GELU_T            { .kind = NET_GELU_TANH }
#define TOKENS            { .kind = NET_TOKENS }
#define UNTOKENS          { .kind = NET_UNTOKENS }
#define LIN_XZ(O_)         { .kind = NET_LINEAR, .out = (O_), .bias = 1, .init = NET_INIT_XAVIER_ZERO }
#define LIN_DZ(O_)         { .kind = NET_LINEAR, .out = (O_), .bias = 1, .init = NET_INIT_DEFAULT_ZERO }
#define GPT_ATTN(c, h)    LIN(3 * (c)), ATTN(h, NET_ATTN_CAUSAL), DROP, LIN(c), DROP
#define MHA(c, h)         LIN_XZ(3 * (c)), ATTN(h, 0), LIN_DZ(c)
static const net_layer mingpt_attn[] = { GPT_ATTN(768, 8) };
static const net_layer relu_attn[] = { LIN(3 * 768), ATTN(12, NET_ATTN_CAUSAL | NET_ATTN_RELU) };
static const net_layer minigpt_block[] = {
    SAVE, LN, GPT_ATTN(768, 8), ADD, SAVE, LN, LIN(4 * 768), GELU_T, LIN(768), DROP, ADD,
};
static const net_layer vision_attn[] = { TOKENS, SAVE, MHA(128, 4), ADD, LN, UNTOKENS };
/* nn.TransformerEncoderLayer(c, h, ff, dropout=0.0) in training mode (post-norm, ReLU):
 * x = norm1(x + self_attn(x)); norm2(x + linear2(relu(linear1(x)))).  It
 * registers self_attn, linear1, linear2, norm1, norm2: the norms take the
 * next order (ord + 1) so that their parameters follow linear2's. */
#define LIN_O(o, ord)     { .kind = NET_LINEAR, .out = (o), .bias = 1, .order = (ord) }
#define LN_O(ord)         { .kind = NET_LAYERNORM, .order = (ord) }
#define ENCODER(c, h, ff, f, ord) \
    SAVE, { .kind = NET_LINEAR, .out = 3 * (c), .bias = 1, .init = NET_INIT_XAVIER_ZERO, .order = (ord) }, \
    ATTN(h, f), { .kind = NET_LINEAR, .out = (c), .bias = 1, .init = NET_INIT_DEFAULT_ZERO, .order = (ord) }, \
    DROP, ADD, LN_O((ord) + 1), SAVE, LIN_O(ff, ord), RELU, DROP, LIN_O(c, ord), DROP, ADD, LN_O((ord) + 1)
#define CLS_O(init_, ord) { .kind = NET_CLS, .init = (init_), .order = (ord) }
#define FIRST             { .kind = NET_FIRST_TOKEN }
/* ViT (28).  named_parameters() lists a module's own parameters before its
 * children's: pos_embedding and cls_token (the model's own) first, then
 * patch_to_embedding, the encoder (batch_first=False: it attends across
 * the batch of 2 images, per position), mlp_head. */
#define VIT_ENC(j)        ENCODER(512, 8, 2048, NET_ATTN_SEQ_FIRST, 3 + 2 * (j))
static const net_layer vit[] = {
    { .kind = NET_UNFOLD, .k = 16 }, LIN_O(512, 2), CLS_O(NET_INIT_RANDN, 1),
    { .kind = NET_POS, .init = NET_INIT_RANDN, .order = 0 }, DROP,
    VIT_ENC(0), VIT_ENC(1), VIT_ENC(2), VIT_ENC(3), VIT_ENC(4), VIT_ENC(5),
    FIRST, LIN_O(2048, 20), { .kind = NET_GELU }, DROP, LIN_O(10, 20),
};
/* CViT (32): cls_token (the model's own parameter, listed first), then
 * conv1 (a patch embedding), linear_proj, the six encoder layers
 * (batch_first=True), fc_out. */
#define CVIT_ENC(j)       ENCODER(128, 4, 512, 0, 2 + 2 * (j))
static const net_layer cvit[] = {
    { .kind = NET_CONV2D, .out = 128, .k = 4, .s = 4, .bias = 1, .order = 1 }, FLAT, LIN_O(128, 1),
    CLS_O(NET_INIT_ZEROS, 0),
    CVIT_ENC(0), CVIT_ENC(1), CVIT_ENC(2), CVIT_ENC(3), CVIT_ENC(4), CVIT_ENC(5),
    FIRST, LIN_O(1000, 21),
};
/* Swin MLP (29), KernelBench's defaults: patch embedding (a 4x4 patch
 * convolution, tokens, a norm), four stages of blocks (dims 96, 192, 384,
 * 768; heads 3, 6, 12, 24; windows of 7, every second block shifted by 3
 * except on the 7x7 map of the last stage, whose window is the whole map),
 * patch merging between them, a norm, the mean over the tokens, the head.
 * A block: x + spatial_mlp(norm1(x)), then x + fc2(gelu(fc1(norm2(x)))),
 * registered norm1, spatial_mlp, norm2, fc1, fc2.  PatchMerging registers
 * its reduction (bias=False) before its norm: order + 1 and + 2. */
#define SWIN_BLOCK(c, h, shift, ord) \
    SAVE, LN_O(ord), { .kind = NET_WINDOW_MLP, .k = 7, .s = (shift), .groups = (h), .order = (ord) }, ADD, \
    SAVE, LN_O(ord), LIN_O(4 * (c), ord), { .kind = NET_GELU }, LIN_O(c, ord), ADD
#define SWIN_MERGE(c, ord) \
    { .kind = NET_MERGE }, LN_O((ord) + 2), { .kind = NET_LINEAR, .out = 2 * (c), .order = (ord) + 1 }
#define SWIN_PAIR(c, h, ord) SWIN_BLOCK(c, h, 0, ord), SWIN_BLOCK(c, h, 3, ord)
static const net_layer swin_mlp[] = {
    CONV(96, 4, 4, 0), TOKENS, LN,
    SWIN_PAIR(96, 3, 10), SWIN_MERGE(96, 10),
    SWIN_PAIR(192, 6, 20), SWIN_MERGE(192, 20),
    SWIN_PAIR(384, 12, 30), SWIN_PAIR(384, 12, 30), SWIN_PAIR(384, 12, 30), SWIN_MERGE(384, 30),
    SWIN_BLOCK(768, 24, 0, 40), SWIN_BLOCK(768, 24, 0, 40),
    LN_O(50), { .kind = NET_TOKEN_MEAN }, LIN_O(1000, 50),
};
/* Swin Transformer V2 (30), KernelBench's defaults (as Swin MLP's: dims
 * 96-768, heads 3-24, windows of 7 shifted by 3 in every second block but
 * on the last stage's 7x7 map).  A block (res-post-norm): x +
 * norm1(attn(x)), then x + norm2(fc2(gelu(fc1(x)))), registered norm1,
 * attn, norm2, fc1, fc2: orders o to o + 3.  PatchMerging V2 reduces
 * (bias=False), then norms 2C, in registration order. */
#define SWIN2_BLOCK(c, h, shift, o) \
    SAVE, { .kind = NET_WINDOW_ATTN, .k = 7, .s = (shift), .groups = (h), .order = (o) + 1 }, LN_O(o), ADD, \
    SAVE, LIN_O(4 * (c), (o) + 3), { .kind = NET_GELU }, LIN_O(c, (o) + 3), LN_O((o) + 2), ADD
#define SWIN2_MERGE(c, o) \
    { .kind = NET_MERGE }, { .kind = NET_LINEAR, .out = 2 * (c), .order = (o) }, LN_O(o)
#define SWIN2_PAIR(c, h, o) SWIN2_BLOCK(c, h, 0, o), SWIN2_BLOCK(c, h, 3, (o) + 4)
static const net_layer swin_v2[] = {
    CONV(96, 4, 4, 0), TOKENS, LN,
    SWIN2_PAIR(96, 3, 10), SWIN2_MERGE(96, 18),
    SWIN2_PAIR(192, 6, 20), SWIN2_MERGE(192, 28),
    SWIN2_PAIR(384, 12, 30), SWIN2_PAIR(384, 12, 38), SWIN2_PAIR(384, 12, 46), SWIN2_MERGE(384, 54),
    SWIN2_BLOCK(768, 24, 0, 60), SWIN2_BLOCK(768, 24, 0, 64),
    LN_O(70), { .kind = NET_TOKEN_MEAN }, LIN_O(1000, 70),
};
#define VGG_HEAD FLAT, LIN(4096), RELU, DROP, LIN(4096), RELU, DROP, LIN(1000)
static const net_layer vgg16[] = {
    C3R(64), C3R(64), MAXP(2, 2, 0),
    C3R(128), C3R(128), MAXP(2, 2, 0),
    C3R(256), C3R(256), C3R(256), MAXP(2, 2, 0),
    C3R(512), C3R(512), C3R(512), MAXP(2, 2, 0),
    C3R(512), C3R(512), C3R(512), MAXP(2, 2, 0),
    VGG_HEAD,
};
static const net_layer vgg19[] = {
    C3R(64), C3R(64), MAXP(2, 2, 0),
    C3R(128), C3R(128), MAXP(2, 2, 0),
    C3R(256), C3R(256), C3R(256), C3R(256), MAXP(2, 2, 0),
    C3R(512), C3R(512), C3R(512), C3R(512), MAXP(2, 2, 0),
    C3R(512), C3R(512), C3R(512), C3R(512), MAXP(2, 2, 0),
    VGG_HEAD,
};

/* GoogLeNet's Inception module as KernelBench writes it (no activations):
 * four branches from the same input (each pushed before it runs, the input
 * brought back by the exchange), concatenated along channels in the order
 * 1x1, 3x3, 5x5, pool */
#define INCEPTION(o1, r3, o3, r5, o5, pp) \
    PUSH, CONV(o1, 1, 1, 0), XCHG, \
    PUSH, CONV(r3, 1, 1, 0), CONV(o3, 3, 1, 1), XCHG, \
    PUSH, CONV(r5, 1, 1, 0), CONV(o5, 5, 1, 2), XCHG, \
    MAXP(3, 1, 1), CONV(pp, 1, 1, 0), CAT(3)
static const net_layer inception_module[] = { INCEPTION(192, 96, 208, 16, 48, 64) };
static const net_layer googlenet[] = {
    CONV(64, 7, 2, 3), RELU, MAXP(3, 2, 1), CONV(64, 1, 1, 0), RELU, CONV(192, 3, 1, 1), RELU, MAXP(3, 2, 1),
    INCEPTION(64, 96, 128, 16, 32, 32), INCEPTION(128, 128, 192, 32, 96, 64), MAXP(3, 2, 1),
    INCEPTION(192, 96, 208, 16, 48, 64), INCEPTION(160, 112, 224, 24, 64, 64),
    INCEPTION(128, 128, 256, 24, 64, 64), INCEPTION(112, 144, 288, 32, 64, 64),
    INCEPTION(256, 160, 320, 32, 128, 128), MAXP(3, 2, 1),
    INCEPTION(256, 160, 320, 32, 128, 128), INCEPTION(384, 192, 384, 48, 128, 128),
    GAP, FLAT, DROP, LIN(1000),
};
/* DenseNet's dense layer: bn + relu + conv3x3 to the growth rate (32) on
 * the concatenation so far, whose output is concatenated after it
 * (torch.cat of all features, which is the previous concatenation and the
 * new one); its parameters in order r (net.h) */
#define DL(r)             PUSH, BN_R(r), RELU, CONVN_R(32, 3, 1, 1, r), DROP, CAT(1)
#define DL2(r)            DL(r), DL(r)
#define DL4(r)            DL2(r), DL2(r)
#define DL8(r)            DL4(r), DL4(r)
#define DL16(r)           DL8(r), DL8(r)
static const net_layer dense_block[] = { DL4(0), DL2(0) };
/* DenseNet-121 and 201: the model registers features, then every dense
 * block, then every transition layer, then the final batch norm and the
 * classifier, but runs blocks and transitions interleaved: orders 0 to 3
 * (net.h: order) keep the layout in registration order */
#define DN_STEM           CONVN(64, 7, 2, 3), BN, RELU, MAXP(3, 2, 1)
#define DN_TRANS(c)       BN_R(2), RELU, CONVN_R(c, 1, 1, 0, 2), AVGP(2, 2, 0)
#define DN_HEAD           BN_R(3), RELU, GAP, FLAT, LIN_R(10, 3)
static const net_layer densenet121[] = {
    DN_STEM,
    DL4(1), DL2(1), DN_TRANS(128),
    DL8(1), DL4(1), DN_TRANS(256),
    DL16(1), DL8(1), DN_TRANS(512),
    DL16(1),
    DN_HEAD,
};
static const net_layer densenet201[] = {
    DN_STEM,
    DL4(1), DL2(1), DN_TRANS(128),
    DL8(1), DL4(1), DN_TRANS(256),
    DL16(1), DL16(1), DL16(1), DN_TRANS(896),
    DL16(1), DL16(1),
    DN_HEAD,
};
/* SqueezeNet's Fire module: squeeze 1x1 + relu, then expand 1x1 + relu and
 * expand 3x3 + relu on the squeezed map, concatenated */
#define FIRE(sq, e1, e3)  CONV(sq, 1, 1, 0), RELU, PUSH, CONV(e1, 1, 1, 0), RELU, XCHG, CONV(e3, 3, 1, 1), RELU, \
                          CAT(1)
static const net_layer fire_module[] = { FIRE(6, 64, 64) };
static const net_layer squeezenet[] = {
    CONV(96, 7, 2, 0), RELU, MAXPC(3, 2, 0),
    FIRE(16, 64, 64), FIRE(16, 64, 64), FIRE(32, 128, 128), MAXPC(3, 2, 0),
    FIRE(32, 128, 128), FIRE(48, 192, 192), FIRE(48, 192, 192), FIRE(64, 256, 256), MAXPC(3, 2, 0),
    FIRE(64, 256, 256),
    DROP, CONV(1000, 1, 1, 0), RELU, GAP, FLAT,
};
/* ShuffleNet's unit (stride 1, groups g, o / 4 channels inside): 1x1 group
 * conv + bn + relu, depthwise 3x3 + bn, channel shuffle, 1x1 group conv +
 * bn + relu, then the shortcut added: the input itself (SHUF_ID) or, when
 * the width changes, a 1x1 conv + bn of it (SHUF_DS) */
#define SHUF_BODY(o, g)   CONVG((o) / 4, 1, 1, 0, g), BN, RELU, CONVG((o) / 4, 3, 1, 1, (o) / 4), BN, SHUF(g), \
                          CONVG(o, 1, 1, 0, g), BN, RELU
#define SHUF_ID(c, g)     SAVE, SHUF_BODY(c, g), ADD
#define SHUF_DS(o, g)     SAVE, SHUF_BODY(o, g), SWAP, CONVN(o, 1, 1, 0), BN, ADD
static const net_layer shuffle_unit[] = { SHUF_DS(480, 3) };
static const net_layer shufflenet[] = {
    CONVN(24, 3, 2, 1), BN, RELU, MAXP(3, 2, 1),
    SHUF_DS(240, 3), SHUF_ID(240, 3), SHUF_ID(240, 3),
    SHUF_DS(480, 3), SHUF_ID(480, 3), SHUF_ID(480, 3), SHUF_ID(480, 3), SHUF_ID(480, 3), SHUF_ID(480, 3),
    SHUF_ID(480, 3),
    SHUF_DS(960, 3), SHUF_ID(960, 3), SHUF_ID(960, 3),
    CONVN(1024, 1, 1, 0), BN, RELU, GAP, FLAT, LIN(1000),
};
/* U-Net's double convolution as KernelBench writes it: conv3x3 + bn +
 * softmax over the width, twice; the encoders' outputs are pushed for the
 * decoders, which concatenate the upsampled map first and the encoder's
 * second (the exchange puts the upsampled map on the stack) */
#define DCONV(c)          CONV(c, 3, 1, 1), BN, SOFTMAX, CONV(c, 3, 1, 1), BN, SOFTMAX
#define UP(c)             CONVT(c, 2, 2, 0), XCHG, CAT(1), DCONV(c)
static const net_layer unet[] = {
    DCONV(64), PUSH, MAXP(2, 2, 0),
    DCONV(128), PUSH, MAXP(2, 2, 0),
    DCONV(256), PUSH, MAXP(2, 2, 0),
    DCONV(512), PUSH, MAXP(2, 2, 0),
    DCONV(1024),
    UP(512), UP(256), UP(128), UP(64),
    CONV(4, 1, 1, 0),
};

#define PROGRAM(code, layers) \
    { (code), (int)(sizeof(layers) / sizeof(layers[0])), (layers), 1e-05 }

static const net_spec nets[] = {
    PROGRAM(OP_NET_FIRST + 0, mlp1),
    PROGRAM(OP_NET_FIRST + 1, mlp2),
    PROGRAM(OP_NET_FIRST + 2, mlp3),
    PROGRAM(OP_CONV_NET_FIRST + 0, lenet5),
    PROGRAM(OP_CONV_NET_FIRST + 1, alexnet),
    PROGRAM(OP_CONV_NET_FIRST + 2, basic_block),
    PROGRAM(OP_CONV_NET_FIRST + 3, resnet18),
    PROGRAM(OP_CONV_NET_FIRST + 4, vgg16),
    PROGRAM(OP_CONV_NET_FIRST + 5, vgg19),
    PROGRAM(OP_CONV_NET_FIRST + 6, resnet101),
    PROGRAM(OP_CONV_NET_FIRST + 7, transition),
    PROGRAM(OP_CONV_NET_FIRST + 8, mobilenet1),
    PROGRAM(OP_CONV_NET_FIRST + 9, regnet),
    PROGRAM(OP_CONV_NET_FIRST + 10, mbconv),
    PROGRAM(OP_CONV_NET_FIRST + 11, effnet_b0),
    PROGRAM(OP_CONV_NET_FIRST + 12, effnet_b1),
    PROGRAM(OP_CONV_NET_FIRST + 13, mobilenet2),
    PROGRAM(OP_CONV_NET_FIRST + 14, effnet_b2),
    PROGRAM(OP_CONV_NET_FIRST + 15, inception_module),
    PROGRAM(OP_CONV_NET_FIRST + 16, googlenet),
    PROGRAM(OP_CONV_NET_FIRST + 17, dense_block),
    PROGRAM(OP_CONV_NET_FIRST + 18, densenet121),
    PROGRAM(OP_CONV_NET_FIRST + 19, densenet201),
    PROGRAM(OP_CONV_NET_FIRST + 20, fire_module),
    PROGRAM(OP_CONV_NET_FIRST + 21, squeezenet),
    PROGRAM(OP_CONV_NET_FIRST + 22, shuffle_unit),
    PROGRAM(OP_CONV_NET_FIRST + 23, shufflenet),
    PROGRAM(OP_CONV_NET_FIRST + 24, unet),
    PROGRAM(OP_NET_FIRST + 50, mingpt_attn),
    PROGRAM(OP_NET_FIRST + 51, relu_attn),
    PROGRAM(OP_NET_FIRST + 52, minigpt_block),
    PROGRAM(OP_NET_FIRST + 53, vision_attn),
    PROGRAM(OP_NET_FIRST + 54, vit),
    PROGRAM(OP_NET_FIRST + 55, cvit),
    PROGRAM(OP_NET_FIRST + 58, swin_mlp),
    PROGRAM(OP_NET_FIRST + 59, swin_v2),
};

const net_spec *suite_net(int op)
{
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
        if (nets[i].op == op) return &nets[i];
    return NULL;
}

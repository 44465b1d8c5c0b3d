// naive: one plain kernel per layer of the network: tiled FP32 GEMM, convolution
// as a tiled implicit GEMM (direct when depthwise), two-pass batch norm, one
// thread per output elsewhere.
// L3_007_googlenetinceptionv1: out = GoogLeNet (Inception v1) as KernelBench writes it: relu(conv7x7/2), maxpool 3/2, relu(conv1x1), relu(conv3x3), maxpool 3/2, inception 3a, 3b, maxpool, 4a-4e, maxpool, 5a, 5b (each the concatenation of four branches, no activations inside), adaptive avg pool, Dropout(0.0), fc
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

#define THREADS 256
#define TILE 16

enum { K_LINEAR, K_CONV, K_BN, K_RELU, K_MAXPOOL, K_GAP, K_FLATTEN, K_DROPOUT, K_SAVE, K_SWAP, K_ADD,
       K_AVGPOOL, K_RELU6, K_SIGMOID, K_PUSH, K_XCHG, K_CAT, K_SHUFFLE, K_CONVT, K_SOFTMAX, K_LN, K_GELU,
       K_ATTN, K_TOKENS, K_UNTOKENS, K_UNFOLD, K_CLS, K_POS, K_FIRST, K_GELU_ERF, K_WMLP, K_MERGE, K_TMEAN,
       K_WATTN };

/* kind, rank, shape before and after, window, stride, padding, groups, and
 * the offsets of the weight and the bias in params (-1: none); a
 * concatenation's window is the number of stack entries it pops */
struct layer { int kind, ndim; long long in[4], out[4]; int k, s, p, g; long long w, b; };

static const layer NET[] = {
    { K_CONV, 4, {10LL, 3LL, 224LL, 224LL}, {10LL, 64LL, 112LL, 112LL}, 7, 2, 3, 1, 0LL, 9408LL },
    { K_RELU, 4, {10LL, 64LL, 112LL, 112LL}, {10LL, 64LL, 112LL, 112LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 64LL, 112LL, 112LL}, {10LL, 64LL, 56LL, 56LL}, 3, 2, 1, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 64LL, 56LL, 56LL}, {10LL, 64LL, 56LL, 56LL}, 1, 1, 0, 1, 9472LL, 13568LL },
    { K_RELU, 4, {10LL, 64LL, 56LL, 56LL}, {10LL, 64LL, 56LL, 56LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 64LL, 56LL, 56LL}, {10LL, 192LL, 56LL, 56LL}, 3, 1, 1, 1, 13632LL, 124224LL },
    { K_RELU, 4, {10LL, 192LL, 56LL, 56LL}, {10LL, 192LL, 56LL, 56LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 192LL, 56LL, 56LL}, {10LL, 192LL, 28LL, 28LL}, 3, 2, 1, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 192LL, 28LL, 28LL}, {10LL, 192LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 192LL, 28LL, 28LL}, {10LL, 64LL, 28LL, 28LL}, 1, 1, 0, 1, 124416LL, 136704LL },
    { K_XCHG, 4, {10LL, 64LL, 28LL, 28LL}, {10LL, 192LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 192LL, 28LL, 28LL}, {10LL, 192LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 192LL, 28LL, 28LL}, {10LL, 96LL, 28LL, 28LL}, 1, 1, 0, 1, 136768LL, 155200LL },
    { K_CONV, 4, {10LL, 96LL, 28LL, 28LL}, {10LL, 128LL, 28LL, 28LL}, 3, 1, 1, 1, 155296LL, 265888LL },
    { K_XCHG, 4, {10LL, 128LL, 28LL, 28LL}, {10LL, 192LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 192LL, 28LL, 28LL}, {10LL, 192LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 192LL, 28LL, 28LL}, {10LL, 16LL, 28LL, 28LL}, 1, 1, 0, 1, 266016LL, 269088LL },
    { K_CONV, 4, {10LL, 16LL, 28LL, 28LL}, {10LL, 32LL, 28LL, 28LL}, 5, 1, 2, 1, 269104LL, 281904LL },
    { K_XCHG, 4, {10LL, 32LL, 28LL, 28LL}, {10LL, 192LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 192LL, 28LL, 28LL}, {10LL, 192LL, 28LL, 28LL}, 3, 1, 1, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 192LL, 28LL, 28LL}, {10LL, 32LL, 28LL, 28LL}, 1, 1, 0, 1, 281936LL, 288080LL },
    { K_CAT, 4, {10LL, 32LL, 28LL, 28LL}, {10LL, 256LL, 28LL, 28LL}, 3, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 256LL, 28LL, 28LL}, {10LL, 256LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 256LL, 28LL, 28LL}, {10LL, 128LL, 28LL, 28LL}, 1, 1, 0, 1, 288112LL, 320880LL },
    { K_XCHG, 4, {10LL, 128LL, 28LL, 28LL}, {10LL, 256LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 256LL, 28LL, 28LL}, {10LL, 256LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 256LL, 28LL, 28LL}, {10LL, 128LL, 28LL, 28LL}, 1, 1, 0, 1, 321008LL, 353776LL },
    { K_CONV, 4, {10LL, 128LL, 28LL, 28LL}, {10LL, 192LL, 28LL, 28LL}, 3, 1, 1, 1, 353904LL, 575088LL },
    { K_XCHG, 4, {10LL, 192LL, 28LL, 28LL}, {10LL, 256LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 256LL, 28LL, 28LL}, {10LL, 256LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 256LL, 28LL, 28LL}, {10LL, 32LL, 28LL, 28LL}, 1, 1, 0, 1, 575280LL, 583472LL },
    { K_CONV, 4, {10LL, 32LL, 28LL, 28LL}, {10LL, 96LL, 28LL, 28LL}, 5, 1, 2, 1, 583504LL, 660304LL },
    { K_XCHG, 4, {10LL, 96LL, 28LL, 28LL}, {10LL, 256LL, 28LL, 28LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 256LL, 28LL, 28LL}, {10LL, 256LL, 28LL, 28LL}, 3, 1, 1, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 256LL, 28LL, 28LL}, {10LL, 64LL, 28LL, 28LL}, 1, 1, 0, 1, 660400LL, 676784LL },
    { K_CAT, 4, {10LL, 64LL, 28LL, 28LL}, {10LL, 480LL, 28LL, 28LL}, 3, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 480LL, 28LL, 28LL}, {10LL, 480LL, 14LL, 14LL}, 3, 2, 1, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 480LL, 14LL, 14LL}, {10LL, 480LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 480LL, 14LL, 14LL}, {10LL, 192LL, 14LL, 14LL}, 1, 1, 0, 1, 676848LL, 769008LL },
    { K_XCHG, 4, {10LL, 192LL, 14LL, 14LL}, {10LL, 480LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 480LL, 14LL, 14LL}, {10LL, 480LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 480LL, 14LL, 14LL}, {10LL, 96LL, 14LL, 14LL}, 1, 1, 0, 1, 769200LL, 815280LL },
    { K_CONV, 4, {10LL, 96LL, 14LL, 14LL}, {10LL, 208LL, 14LL, 14LL}, 3, 1, 1, 1, 815376LL, 995088LL },
    { K_XCHG, 4, {10LL, 208LL, 14LL, 14LL}, {10LL, 480LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 480LL, 14LL, 14LL}, {10LL, 480LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 480LL, 14LL, 14LL}, {10LL, 16LL, 14LL, 14LL}, 1, 1, 0, 1, 995296LL, 1002976LL },
    { K_CONV, 4, {10LL, 16LL, 14LL, 14LL}, {10LL, 48LL, 14LL, 14LL}, 5, 1, 2, 1, 1002992LL, 1022192LL },
    { K_XCHG, 4, {10LL, 48LL, 14LL, 14LL}, {10LL, 480LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 480LL, 14LL, 14LL}, {10LL, 480LL, 14LL, 14LL}, 3, 1, 1, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 480LL, 14LL, 14LL}, {10LL, 64LL, 14LL, 14LL}, 1, 1, 0, 1, 1022240LL, 1052960LL },
    { K_CAT, 4, {10LL, 64LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 3, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 160LL, 14LL, 14LL}, 1, 1, 0, 1, 1053024LL, 1134944LL },
    { K_XCHG, 4, {10LL, 160LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 112LL, 14LL, 14LL}, 1, 1, 0, 1, 1135104LL, 1192448LL },
    { K_CONV, 4, {10LL, 112LL, 14LL, 14LL}, {10LL, 224LL, 14LL, 14LL}, 3, 1, 1, 1, 1192560LL, 1418352LL },
    { K_XCHG, 4, {10LL, 224LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 24LL, 14LL, 14LL}, 1, 1, 0, 1, 1418576LL, 1430864LL },
    { K_CONV, 4, {10LL, 24LL, 14LL, 14LL}, {10LL, 64LL, 14LL, 14LL}, 5, 1, 2, 1, 1430888LL, 1469288LL },
    { K_XCHG, 4, {10LL, 64LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 3, 1, 1, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 64LL, 14LL, 14LL}, 1, 1, 0, 1, 1469352LL, 1502120LL },
    { K_CAT, 4, {10LL, 64LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 3, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 128LL, 14LL, 14LL}, 1, 1, 0, 1, 1502184LL, 1567720LL },
    { K_XCHG, 4, {10LL, 128LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 128LL, 14LL, 14LL}, 1, 1, 0, 1, 1567848LL, 1633384LL },
    { K_CONV, 4, {10LL, 128LL, 14LL, 14LL}, {10LL, 256LL, 14LL, 14LL}, 3, 1, 1, 1, 1633512LL, 1928424LL },
    { K_XCHG, 4, {10LL, 256LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 24LL, 14LL, 14LL}, 1, 1, 0, 1, 1928680LL, 1940968LL },
    { K_CONV, 4, {10LL, 24LL, 14LL, 14LL}, {10LL, 64LL, 14LL, 14LL}, 5, 1, 2, 1, 1940992LL, 1979392LL },
    { K_XCHG, 4, {10LL, 64LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 3, 1, 1, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 64LL, 14LL, 14LL}, 1, 1, 0, 1, 1979456LL, 2012224LL },
    { K_CAT, 4, {10LL, 64LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 3, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 112LL, 14LL, 14LL}, 1, 1, 0, 1, 2012288LL, 2069632LL },
    { K_XCHG, 4, {10LL, 112LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 144LL, 14LL, 14LL}, 1, 1, 0, 1, 2069744LL, 2143472LL },
    { K_CONV, 4, {10LL, 144LL, 14LL, 14LL}, {10LL, 288LL, 14LL, 14LL}, 3, 1, 1, 1, 2143616LL, 2516864LL },
    { K_XCHG, 4, {10LL, 288LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 32LL, 14LL, 14LL}, 1, 1, 0, 1, 2517152LL, 2533536LL },
    { K_CONV, 4, {10LL, 32LL, 14LL, 14LL}, {10LL, 64LL, 14LL, 14LL}, 5, 1, 2, 1, 2533568LL, 2584768LL },
    { K_XCHG, 4, {10LL, 64LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 512LL, 14LL, 14LL}, 3, 1, 1, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 512LL, 14LL, 14LL}, {10LL, 64LL, 14LL, 14LL}, 1, 1, 0, 1, 2584832LL, 2617600LL },
    { K_CAT, 4, {10LL, 64LL, 14LL, 14LL}, {10LL, 528LL, 14LL, 14LL}, 3, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 528LL, 14LL, 14LL}, {10LL, 528LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 528LL, 14LL, 14LL}, {10LL, 256LL, 14LL, 14LL}, 1, 1, 0, 1, 2617664LL, 2752832LL },
    { K_XCHG, 4, {10LL, 256LL, 14LL, 14LL}, {10LL, 528LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 528LL, 14LL, 14LL}, {10LL, 528LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 528LL, 14LL, 14LL}, {10LL, 160LL, 14LL, 14LL}, 1, 1, 0, 1, 2753088LL, 2837568LL },
    { K_CONV, 4, {10LL, 160LL, 14LL, 14LL}, {10LL, 320LL, 14LL, 14LL}, 3, 1, 1, 1, 2837728LL, 3298528LL },
    { K_XCHG, 4, {10LL, 320LL, 14LL, 14LL}, {10LL, 528LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 528LL, 14LL, 14LL}, {10LL, 528LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 528LL, 14LL, 14LL}, {10LL, 32LL, 14LL, 14LL}, 1, 1, 0, 1, 3298848LL, 3315744LL },
    { K_CONV, 4, {10LL, 32LL, 14LL, 14LL}, {10LL, 128LL, 14LL, 14LL}, 5, 1, 2, 1, 3315776LL, 3418176LL },
    { K_XCHG, 4, {10LL, 128LL, 14LL, 14LL}, {10LL, 528LL, 14LL, 14LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 528LL, 14LL, 14LL}, {10LL, 528LL, 14LL, 14LL}, 3, 1, 1, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 528LL, 14LL, 14LL}, {10LL, 128LL, 14LL, 14LL}, 1, 1, 0, 1, 3418304LL, 3485888LL },
    { K_CAT, 4, {10LL, 128LL, 14LL, 14LL}, {10LL, 832LL, 14LL, 14LL}, 3, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 832LL, 14LL, 14LL}, {10LL, 832LL, 7LL, 7LL}, 3, 2, 1, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 256LL, 7LL, 7LL}, 1, 1, 0, 1, 3486016LL, 3699008LL },
    { K_XCHG, 4, {10LL, 256LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 160LL, 7LL, 7LL}, 1, 1, 0, 1, 3699264LL, 3832384LL },
    { K_CONV, 4, {10LL, 160LL, 7LL, 7LL}, {10LL, 320LL, 7LL, 7LL}, 3, 1, 1, 1, 3832544LL, 4293344LL },
    { K_XCHG, 4, {10LL, 320LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 32LL, 7LL, 7LL}, 1, 1, 0, 1, 4293664LL, 4320288LL },
    { K_CONV, 4, {10LL, 32LL, 7LL, 7LL}, {10LL, 128LL, 7LL, 7LL}, 5, 1, 2, 1, 4320320LL, 4422720LL },
    { K_XCHG, 4, {10LL, 128LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 3, 1, 1, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 128LL, 7LL, 7LL}, 1, 1, 0, 1, 4422848LL, 4529344LL },
    { K_CAT, 4, {10LL, 128LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 3, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 384LL, 7LL, 7LL}, 1, 1, 0, 1, 4529472LL, 4848960LL },
    { K_XCHG, 4, {10LL, 384LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 192LL, 7LL, 7LL}, 1, 1, 0, 1, 4849344LL, 5009088LL },
    { K_CONV, 4, {10LL, 192LL, 7LL, 7LL}, {10LL, 384LL, 7LL, 7LL}, 3, 1, 1, 1, 5009280LL, 5672832LL },
    { K_XCHG, 4, {10LL, 384LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_PUSH, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 48LL, 7LL, 7LL}, 1, 1, 0, 1, 5673216LL, 5713152LL },
    { K_CONV, 4, {10LL, 48LL, 7LL, 7LL}, {10LL, 128LL, 7LL, 7LL}, 5, 1, 2, 1, 5713200LL, 5866800LL },
    { K_XCHG, 4, {10LL, 128LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_MAXPOOL, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 832LL, 7LL, 7LL}, 3, 1, 1, 1, -1LL, -1LL },
    { K_CONV, 4, {10LL, 832LL, 7LL, 7LL}, {10LL, 128LL, 7LL, 7LL}, 1, 1, 0, 1, 5866928LL, 5973424LL },
    { K_CAT, 4, {10LL, 128LL, 7LL, 7LL}, {10LL, 1024LL, 7LL, 7LL}, 3, 1, 0, 1, -1LL, -1LL },
    { K_GAP, 4, {10LL, 1024LL, 7LL, 7LL}, {10LL, 1024LL, 1LL, 1LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_FLATTEN, 4, {10LL, 1024LL, 1LL, 1LL}, {10LL, 1024LL, 1LL, 1LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_DROPOUT, 2, {10LL, 1024LL, 1LL, 1LL}, {10LL, 1024LL, 1LL, 1LL}, 0, 1, 0, 1, -1LL, -1LL },
    { K_LINEAR, 2, {10LL, 1024LL, 1LL, 1LL}, {10LL, 1000LL, 1LL, 1LL}, 0, 1, 0, 1, 5973552LL, 6997552LL },
};
#define N_LAYERS 140
#define LAST_WRITER 139
#define MOST 8028160LL
#define WIDEST 1
#define EPS 1e-05
#define NBUF 6
#define STACK 3
/* Swin V2 window attention layers: the offsets of their nine parts
 * (logit_scale, q_bias, v_bias, cpb_mlp.0.weight and bias, cpb_mlp.2.weight,
 * qkv.weight, proj.weight and bias), and their scratch */
static const long long WPARTS[][9] = {
    { 0 },
};
#define WSCR 1LL

static float *buf[NBUF];
static float *stats;
static float *scratch;   /* float in the BF16 set too (gen-naive-candidates keeps it) */

/* y[m, n] = sum_k x[m, k] w[n, k] + b[n] */
__global__ void linear_kernel(const float *__restrict__ x, const float *__restrict__ w,
                              const float *__restrict__ b, float *__restrict__ y, long long M,
                              long long N, long long K)
{
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    long long row = (long long)blockIdx.x * TILE + threadIdx.y;
    long long col = (long long)blockIdx.y * TILE + threadIdx.x;
    long long wrow = (long long)blockIdx.y * TILE + threadIdx.y;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += TILE) {
        long long k = k0 + threadIdx.x;
        xs[threadIdx.y][threadIdx.x] = (row < M && k < K) ? x[row * K + k] : 0.0f;
        ws[threadIdx.y][threadIdx.x] = (wrow < N && k < K) ? w[wrow * K + k] : 0.0f;
        __syncthreads();
        for (int j = 0; j < TILE; j++) acc += xs[threadIdx.y][j] * ws[threadIdx.x][j];
        __syncthreads();
    }
    if (row < M && col < N) y[row * N + col] = acc + (b ? b[col] : 0.0f);
}

/* groups G: output channel o reads the C / G input channels of its group */
__global__ void conv_kernel(const float *__restrict__ x, const float *__restrict__ w,
                            const float *__restrict__ b, float *__restrict__ y, long long N, int C,
                            int H, int W, int O, int OH, int OW, int k, int s, int p, int G)
{
    long long total = N * O * OH * OW;
    int Cg = C / G, Og = O / G;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        int ow = (int)(i % OW), oh = (int)((i / OW) % OH), o = (int)((i / ((long long)OW * OH)) % O);
        long long n = i / ((long long)OW * OH * O);
        float acc = b ? b[o] : 0.0f;
        for (int cg = 0; cg < Cg; cg++) {
            int c = (o / Og) * Cg + cg;
            const float *xp = x + (n * C + c) * H * W;
            const float *wp = w + ((long long)o * Cg + cg) * k * k;
            for (int kh = 0; kh < k; kh++) {
                int h = oh * s - p + kh;
                if (h < 0 || h >= H) continue;
                for (int kw = 0; kw < k; kw++) {
                    int ww = ow * s - p + kw;
                    if (ww < 0 || ww >= W) continue;
                    acc += xp[(long long)h * W + ww] * wp[kh * k + kw];
                }
            }
        }
        y[i] = acc;
    }
}

/* A convolution (transposed when T) with 8 or more output channels a group
 * as an implicit GEMM, one per group g (blockIdx.z), the same product as
 * gen-naive-candidates.py's conv_gemm in 2-D: C[o, j] = sum over r of
 * W[o, r] X[r, j], o the output channel in the group (rows, blockIdx.y), j
 * = (n, oh, ow) (columns, blockIdx.x) and r = (c, kh, kw) the group's input
 * channel and the tap; 16x16 tiles of W and of X gathered from x (no
 * im2col buffer, 0 outside the input or, transposed, off the stride) in
 * shared memory, one output per thread in FP32.  Weight [O, C / G, k, k],
 * transposed [C, O / G, k, k].  32-bit indices: conv_layer checks them. */
__global__ void conv_gemm(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
                          float *__restrict__ y, int T, int C, int H, int W, int O, int OH, int OW, int k, int s,
                          int p, int G, int cols)
{
    __shared__ float ws[TILE][TILE];
    __shared__ float xs[TILE][TILE + 1];
    int g = blockIdx.z, tx = threadIdx.x, ty = threadIdx.y, Cg = C / G, Og = O / G;
    int o = blockIdx.y * TILE + ty, j = blockIdx.x * TILE + tx;
    int osp = OH * OW, plane = H * W, kk = k * k, K = Cg * kk;
    int jn = j < cols ? j / osp : 0, sp = j < cols ? j % osp : 0, oh = sp / OW, ow = sp % OW;
    int bh = T ? oh + p : oh * s - p, bw = T ? ow + p : ow * s - p;
    const float *xg = x + ((long long)jn * C + (long long)g * Cg) * plane;
    /* r0 + ty = (c, kh, kw) and r0 + tx = (wc, wt) advance by TILE = (sc,
     * sh, sw) each step as mixed-radix digits, without a division */
    int c = ty / kk, kh = ty % kk / k, kw = ty % k, wc = tx / kk, wt = tx % kk;
    int sc = TILE / kk, st = TILE % kk, sh = st / k, sw = st % k;
    float acc = 0.0f;
    for (int r0 = 0; r0 < K; r0 += TILE) {
        float wv = 0.0f;
        if (o < Og && r0 + tx < K)
            wv = T ? w[((g * Cg + wc) * Og + o) * kk + wt] : w[(g * Og + o) * K + r0 + tx];
        ws[ty][tx] = wv;
        float xv = 0.0f;
        if (j < cols && r0 + ty < K) {
            int ih, iw, ok;
            if (T) {
                int th = bh - kh, tw = bw - kw;
                ih = s == 1 ? th : th / s;   /* no division at stride 1 */
                iw = s == 1 ? tw : tw / s;
                ok = th >= 0 && tw >= 0 && ih * s == th && iw * s == tw;
            } else {
                ih = bh + kh;
                iw = bw + kw;
                ok = ih >= 0 && iw >= 0;
            }
            if (ok && ih < H && iw < W) xv = xg[c * plane + ih * W + iw];
        }
        xs[ty][tx] = xv;
        __syncthreads();
        for (int i = 0; i < TILE; i++) acc += ws[ty][i] * xs[i][tx];
        __syncthreads();
        kw += sw;
        kh += sh;
        c += sc;
        if (kw >= k) {
            kw -= k;
            kh++;
        }
        if (kh >= k) {
            kh -= k;
            c++;
        }
        wt += st;
        wc += sc;
        if (wt >= kk) {
            wt -= kk;
            wc++;
        }
    }
    if (o < Og && j < cols) {
        int oc = g * Og + o;
        y[((long long)jn * O + oc) * osp + sp] = b ? acc + b[oc] : acc;
    }
}

/* Sum of v over the block, in a fixed order; every thread gets it. */
__device__ float block_sum(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int o = THREADS / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

/* one block per channel: the mean, then the biased variance around it */
__global__ void bn_stats(const float *__restrict__ x, float *__restrict__ mean, float *__restrict__ rstd,
                         long long N, long long C, long long S)
{
    __shared__ float sh[THREADS];
    long long c = blockIdx.x, cnt = N * S;
    float s = 0.0f;
    for (long long i = threadIdx.x; i < cnt; i += THREADS) s += x[((i / S) * C + c) * S + i % S];
    float m = block_sum(s, sh) / (float)cnt;
    float q = 0.0f;
    for (long long i = threadIdx.x; i < cnt; i += THREADS) {
        float d = x[((i / S) * C + c) * S + i % S] - m;
        q += d * d;
    }
    float var = block_sum(q, sh) / (float)cnt;
    if (threadIdx.x == 0) {
        mean[c] = m;
        rstd[c] = 1.0f / sqrtf(var + (float)EPS);
    }
}

__global__ void bn_apply(const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ mean,
                         const float *__restrict__ rstd, const float *__restrict__ g,
                         const float *__restrict__ b, long long total, long long C, long long S)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long c = (i / S) % C;
        y[i] = (x[i] - mean[c]) * rstd[c] * g[c] + b[c];
    }
}

/* the residual sum (skip given), else by mode: 0 relu, 1 relu6, 2 sigmoid,
 * 3 GELU (tanh form), 4 GELU (erf form) */
__global__ void ew_kernel(const float *__restrict__ x, const float *__restrict__ skip,
                          float *__restrict__ y, long long total, int mode)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        float v = x[i];
        if (skip) v += skip[i];
        else if (mode == 2) v = 1.0f / (1.0f + expf(-v));
        else if (mode == 3) v = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        else if (mode == 4) v = 0.5f * v * (1.0f + erff(v * 0.7071067811865476f));
        else v = mode == 1 ? fminf(fmaxf(v, 0.0f), 6.0f) : fmaxf(v, 0.0f);
        y[i] = v;
    }
}

__global__ void maxpool_kernel(const float *__restrict__ x, float *__restrict__ y, long long planes, int H,
                               int W, int OH, int OW, int k, int s, int p)
{
    long long total = planes * OH * OW;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        int ow = (int)(i % OW), oh = (int)((i / OW) % OH);
        const float *xp = x + (i / ((long long)OW * OH)) * H * W;
        float m = -INFINITY;
        for (int kh = 0; kh < k; kh++) {
            int h = oh * s - p + kh;
            if (h < 0 || h >= H) continue;
            for (int kw = 0; kw < k; kw++) {
                int w = ow * s - p + kw;
                if (w < 0 || w >= W) continue;
                float v = xp[(long long)h * W + w];
                if (v > m || isnan(v)) m = v;
            }
        }
        y[i] = m;
    }
}

/* average over the window, the padding counted in the divisor */
__global__ void avgpool_kernel(const float *__restrict__ x, float *__restrict__ y, long long planes, int H,
                               int W, int OH, int OW, int k, int s, int p)
{
    long long total = planes * OH * OW;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        int ow = (int)(i % OW), oh = (int)((i / OW) % OH);
        const float *xp = x + (i / ((long long)OW * OH)) * H * W;
        int h0 = oh * s - p, w0 = ow * s - p;
        int h1 = min(h0 + k, H + p), w1 = min(w0 + k, W + p);
        float div = (float)((h1 - h0) * (w1 - w0)), acc = 0.0f;
        for (int h = max(h0, 0); h < min(h1, H); h++)
            for (int w = max(w0, 0); w < min(w1, W); w++) acc += xp[(long long)h * W + w];
        y[i] = acc / div;
    }
}

/* transposed convolution, weight [C, O / G, k, k]: output (n, o, oh, ow)
 * gathers input (c, ih, iw) of o's group where oh = ih s - p + kh */
__global__ void convt_kernel(const float *__restrict__ x, const float *__restrict__ w,
                             const float *__restrict__ b, float *__restrict__ y, long long N, int C,
                             int H, int W, int O, int OH, int OW, int k, int s, int p, int G)
{
    long long total = N * O * OH * OW;
    int Cg = C / G, Og = O / G;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        int ow = (int)(i % OW), oh = (int)((i / OW) % OH), o = (int)((i / ((long long)OW * OH)) % O);
        long long n = i / ((long long)OW * OH * O);
        float acc = b ? b[o] : 0.0f;
        for (int cg = 0; cg < Cg; cg++) {
            int c = (o / Og) * Cg + cg;
            for (int kh = 0; kh < k; kh++) {
                int th = oh + p - kh;
                if (th < 0 || th % s != 0 || th / s >= H) continue;
                for (int kw = 0; kw < k; kw++) {
                    int tw = ow + p - kw;
                    if (tw < 0 || tw % s != 0 || tw / s >= W) continue;
                    acc += x[((n * C + c) * H + th / s) * W + tw / s] *
                           w[(((long long)c * Og + o % Og) * k + kh) * k + kw];
                }
            }
        }
        y[i] = acc;
    }
}

/* softmax along rows of L elements, one thread per row */
__global__ void softmax_kernel(const float *__restrict__ x, float *__restrict__ y, long long rows, long long L)
{
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows;
         r += (long long)gridDim.x * blockDim.x) {
        const float *xp = x + r * L;
        float m = -INFINITY, s = 0.0f;
        for (long long j = 0; j < L; j++) m = fmaxf(m, xp[j]);
        for (long long j = 0; j < L; j++) s += expf(xp[j] - m);
        for (long long j = 0; j < L; j++) y[r * L + j] = expf(xp[j] - m) / s;
    }
}

/* one part of a concatenation: src [N, Cp, S] into channels off.. of
 * dst [N, Ct, S] */
__global__ void cat_kernel(const float *__restrict__ src, float *__restrict__ dst, long long N, long long Cp,
                           long long S, long long Ct, long long off)
{
    long long total = N * Cp * S;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long n = i / (Cp * S), r = i % (Cp * S);
        dst[n * Ct * S + off * S + r] = src[i];
    }
}

/* channel shuffle in G groups: output channel j G + i is input channel
 * i (C / G) + j */
__global__ void shuffle_kernel(const float *__restrict__ x, float *__restrict__ y, long long N, long long C,
                               long long S, long long G)
{
    long long total = N * C * S;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long n = i / (C * S), co = (i / S) % C, r = i % S;
        long long ci = (co % G) * (C / G) + co / G;
        y[i] = x[(n * C + ci) * S + r];
    }
}

/* one thread per plane */
__global__ void gap_kernel(const float *__restrict__ x, float *__restrict__ y, long long planes, long long S)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= planes) return;
    float s = 0.0f;
    for (long long j = 0; j < S; j++) s += x[i * S + j];
    y[i] = s / (float)S;
}

/* layer norm over rows of C: one thread per row, the mean, then the
 * biased variance around it */
__global__ void ln_kernel(const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ g,
                          const float *__restrict__ b, long long rows, long long C)
{
    long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float *p = x + r * C;
    float s = 0.0f;
    for (long long i = 0; i < C; i++) s += p[i];
    float m = s / (float)C, q = 0.0f;
    for (long long i = 0; i < C; i++) q += (p[i] - m) * (p[i] - m);
    float rstd = 1.0f / sqrtf(q / (float)C + (float)EPS);
    for (long long i = 0; i < C; i++) y[r * C + i] = (p[i] - m) * rstd * g[i] + b[i];
}

#define HD_MAX 128
/* attention over qkv [N, T, 3C] into y [N, T, C] (with flag 4, over
 * [T, N, 3C]: the sequence along dimension 0): one thread per (n, head,
 * query); flags 1: keys after the query masked, 2: relu(scores) instead
 * of softmax */
__global__ void attn_kernel(const float *__restrict__ qkv, float *__restrict__ y, long long D0, long long D1,
                            long long C, int H, int flags)
{
    long long N = (flags & 4) ? D1 : D0, T = (flags & 4) ? D0 : D1;
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= N * H * T) return;
    long long i = idx % T, h = (idx / T) % H, n = idx / (T * H);
    long long d = C / H;
    /* the row of position t of sequence n */
#define ROW(t) ((flags & 4) ? (t) * N + n : n * T + (t))
    const float *q = qkv + ROW(i) * 3 * C + h * d;
    float scale = 1.0f / sqrtf((float)d), m = -INFINITY, l = 0.0f, acc[HD_MAX];
    for (long long c = 0; c < d; c++) acc[c] = 0.0f;
    long long end = (flags & 1) ? i + 1 : T;
    for (long long j = 0; j < end; j++) {
        const float *kj = qkv + ROW(j) * 3 * C + C + h * d, *vj = kj + C;
        float sc = 0.0f;
        for (long long c = 0; c < d; c++) sc += q[c] * kj[c];
        sc *= scale;
        if (flags & 2) {
            float w = fmaxf(sc, 0.0f);
            for (long long c = 0; c < d; c++) acc[c] += w * vj[c];
        } else {
            float mn = fmaxf(m, sc), corr = expf(m - mn), w = expf(sc - mn);
            l = l * corr + w;
            for (long long c = 0; c < d; c++) acc[c] = acc[c] * corr + w * vj[c];
            m = mn;
        }
    }
    float *o = y + ROW(i) * C + h * d;
    for (long long c = 0; c < d; c++) o[c] = (flags & 2) ? acc[c] : acc[c] / l;
#undef ROW
}

/* x.unfold(2, k, k).unfold(3, k, k).reshape(N, -1, C k k): y[n] is x[n]
 * read in the order (c, h / k, w / k, h % k, w % k) */
__global__ void unfold_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, long long H,
                              long long W, int k)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long pj = i % k, pi = (i / k) % k, wi = (i / (k * k)) % (W / k);
    long long hi = (i / (k * k * (W / k))) % (H / k), nc = i / (k * k * (W / k) * (H / k));
    y[i] = x[(nc * H + hi * k + pi) * W + wi * k + pj];
}

/* y [N, T + 1, C]: the token t, then x [N, T, C] */
__global__ void cls_kernel(const float *__restrict__ x, const float *__restrict__ t, float *__restrict__ y,
                           long long n, long long T, long long C)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long c = i % C, p = (i / C) % (T + 1), s = i / (C * (T + 1));
    y[i] = p == 0 ? t[c] : x[(s * T + p - 1) * C + c];
}

/* y = x + e, e [T C] for every sample */
__global__ void pos_kernel(const float *__restrict__ x, const float *__restrict__ e, float *__restrict__ y,
                           long long n, long long TC)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + e[i % TC];
}

/* Swin's spatial MLP over tokens x [N, S S, C]: one thread per output;
 * the map padded by pb zeros before (k - shift when shifted) is cut into
 * k x k windows; y = sum over the window's tokens of weight[h k^2 + i, j] x
 * + bias[h k^2 + i] for the output's head h and window position i */
__global__ void wmlp_kernel(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
                            float *__restrict__ y, long long n, int S, int C, int k, int H, int pb)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = (int)(i % C), h = c / (C / H);
    long long t = i / C, smp = t / ((long long)S * S);
    int px = (int)(t % S) + pb, py = (int)((t / S) % S) + pb;
    int oy = py - py % k, ox = px - px % k, pos = (py % k) * k + px % k;
    float acc = b[h * k * k + pos];
    for (int j = 0; j < k * k; j++) {
        int yy = oy + j / k - pb, xx = ox + j % k - pb;
        if (yy < 0 || yy >= S || xx < 0 || xx >= S) continue;
        acc += w[(long long)(h * k * k + pos) * k * k + j] * x[((smp * S + yy) * S + xx) * C + c];
    }
    y[i] = acc;
}

/* patch merging: y [N, S/2 S/2, 4C], quarter q = x[2i + (q & 1), 2j + (q >> 1)] */
__global__ void merge_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, int S, int C)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c4 = (int)(i % (4 * C)), q = c4 / C, c = c4 % C, h2 = S / 2;
    long long t = i / (4 * C), smp = t / ((long long)h2 * h2);
    int jj = (int)(t % h2), ii = (int)((t / h2) % h2);
    y[i] = x[((smp * S + 2 * ii + (q & 1)) * S + 2 * jj + (q >> 1)) * C + c];
}

/* y [N, C]: the mean of x [N, T, C] over T */
__global__ void tmean_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, long long T,
                             long long C)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (long long t = 0; t < T; t++) s += x[((i / C) * T + t) * C + i % C];
    y[i] = s / (float)T;
}

/* Swin V2's position-bias table: one thread per (offset r, head h),
 * t[r H + h] = 16 sigmoid(W2 relu(W1 c + b1)), c the log-spaced (dy, dx) */
__global__ void cpb_kernel(const float *__restrict__ w1, const float *__restrict__ b1, const float *__restrict__ w2,
                           float *__restrict__ scratch, long long at, int k, int H)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, span = 2 * k - 1;
    if (i >= span * span * H) return;
    int h = i % H, r = i / H;
    float c[2] = { (float)(r / span - (k - 1)), (float)(r % span - (k - 1)) };
    for (int a = 0; a < 2; a++) {
        float v = c[a] * 8.0f / (float)(k - 1);
        c[a] = (v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : 0.0f)) * log2f(fabsf(v) + 1.0f) / 3.0f;
    }
    float s = 0.0f;
    for (int j = 0; j < 512; j++) s += w2[h * 512 + j] * fmaxf(w1[2 * j] * c[0] + w1[2 * j + 1] * c[1] + b1[j], 0.0f);
    scratch[at + i] = 16.0f / (1.0f + expf(-s));
}

/* the token of window row `row` (sample, window row, window column,
 * position) in the map rolled by -sh */
__device__ long long wtoken(long long row, int S, int k, int sh)
{
    int nw = S / k, j = (int)(row % (k * k));
    long long w = row / (k * k);
    int wx = (int)(w % nw), wy = (int)((w / nw) % nw);
    long long smp = w / ((long long)nw * nw);
    return (smp * S + (wy * k + j / k + sh) % S) * S + (wx * k + j % k + sh) % S;
}

/* qkv [M, 3C] of the window rows: x qkv.weight^T + (q_bias, 0, v_bias) */
__global__ void wqkv_kernel(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ qb,
                            const float *__restrict__ vb, float *__restrict__ scratch, long long n, int S, int C,
                            int k, int sh)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int col = (int)(i % (3 * C));
    const float *xr = x + wtoken(i / (3 * C), S, k, sh) * C;
    float acc = col < C ? qb[col] : (col >= 2 * C ? vb[col - 2 * C] : 0.0f);
    for (int c = 0; c < C; c++) acc += xr[c] * w[(long long)col * C + c];
    scratch[i] = acc;   /* qkv [M, 3C] at the start of the scratch */
}

/* region of a rolled-map coordinate for the shifted windows' mask */
__device__ int wregion(int y, int x, int S, int k, int sh)
{
    int ry = y < S - k ? 0 : (y < S - sh ? 1 : 2), rx = x < S - k ? 0 : (x < S - sh ? 1 : 2);
    return 3 * ry + rx;
}

/* one thread per (window row, head): cosine scores with the logit scale,
 * the table's bias and the mask, softmax over the window's keys (running
 * maximum and sum), times v; heads side by side in o [M, C] */
__global__ void wattn_kernel(float *__restrict__ scratch, const float *__restrict__ ls, long long M, int S, int C,
                             int k, int H, int sh)
{
    /* the scratch: qkv [M, 3C] at 0, the heads' outputs [M, C] at 3 M C,
     * the table at 4 M C (indexed from scratch itself, which stays float
     * in the BF16 set) */
    const long long OUT = 3 * M * C, TAB = 4 * M * C;
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= M * H) return;
    int h = (int)(idx % H), d = C / H, k2 = k * k, span = 2 * k - 1;
    long long row = idx / H, base = row - row % k2, q = row * 3 * C + h * d;
    int i = (int)(row % k2), nw = S / k;
    long long w = (row / k2) % ((long long)nw * nw);
    int wy = (int)(w / nw), wx = (int)(w % nw);
    int ri = wregion(wy * k + i / k, wx * k + i % k, S, k, sh);
    float nq = 0.0f;
    for (int c = 0; c < d; c++) nq += scratch[q + c] * scratch[q + c];
    nq = fmaxf(sqrtf(nq), 1e-12f);
    float scale = expf(fminf(ls[h], 4.605170185988091f)), m = -INFINITY, l = 0.0f, acc[HD_MAX];
    for (int c = 0; c < d; c++) acc[c] = 0.0f;
    for (int j = 0; j < k2; j++) {
        long long kj = (base + j) * 3 * C + C + h * d, vj = kj + C;
        float dot = 0.0f, nk = 0.0f;
        for (int c = 0; c < d; c++) {
            dot += scratch[q + c] * scratch[kj + c];
            nk += scratch[kj + c] * scratch[kj + c];
        }
        float sc = dot / (nq * fmaxf(sqrtf(nk), 1e-12f)) * scale +
                   scratch[TAB + ((i / k - j / k + k - 1) * span + i % k - j % k + k - 1) * H + h];
        if (sh && wregion(wy * k + j / k, wx * k + j % k, S, k, sh) != ri) sc += -100.0f;
        float mn = fmaxf(m, sc), corr = expf(m - mn), e = expf(sc - mn);
        l = l * corr + e;
        for (int c = 0; c < d; c++) acc[c] = acc[c] * corr + e * scratch[vj + c];
        m = mn;
    }
    for (int c = 0; c < d; c++) scratch[OUT + row * C + h * d + c] = acc[c] / l;
}

/* y [N, S S, C]: proj of the heads' outputs (at 3 M C in the scratch) at
 * each token's window row (the roll undone) + proj.bias */
__global__ void wproj_kernel(const float *__restrict__ scratch, const float *__restrict__ w,
                             const float *__restrict__ b, float *__restrict__ y, long long n, int S, int C, int k,
                             int sh)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = (int)(i % C), nw = S / k;
    long long t = i / C, smp = t / ((long long)S * S);
    int ry = ((int)((t / S) % S) - sh + S) % S, rx = ((int)(t % S) - sh + S) % S;
    long long row = ((smp * nw + ry / k) * nw + rx / k) * (k * k) + (ry % k) * k + rx % k;
    float acc = b[c];
    for (int j = 0; j < C; j++) acc += scratch[3 * n + row * C + j] * w[(long long)c * C + j];
    y[i] = acc;
}

/* y [N, C] = x[:, 0] of x [N, T, C] */
__global__ void first_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, long long T,
                             long long C)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[(i / C) * T * C + i % C];
}

/* y[n, c, r] = x[n, r, c] for planes of [R, Cc] */
__global__ void transpose_kernel(const float *__restrict__ x, float *__restrict__ y, long long N, long long R,
                                 long long Cc)
{
    long long total = N * R * Cc;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long c = i % Cc, r = (i / Cc) % R, n = i / (Cc * R);
        y[(n * Cc + c) * R + r] = x[i];
    }
}

static unsigned blocks(long long n)
{
    long long b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b > 65535 ? 65535 : (b < 1 ? 1 : b));
}

static long long numel(const long long *d)
{
    return d[0] * d[1] * d[2] * d[3];
}

/* A convolution layer (transposed when T): the tiled product for groups of
 * 8 output channels or more, one thread per output below (depthwise),
 * where more than half of each 16-row tile would be idle.  0, or 1 when a
 * shape is beyond conv_gemm's 32-bit indices or the grid. */
static int conv_layer(const layer &L, int T, const float *x, const float *w, const float *b, float *y,
                      cudaStream_t st)
{
    long long n = numel(L.out), og = L.out[1] / L.g, cols = L.out[0] * L.out[2] * L.out[3];
    if (og < 8) {
        if (T)
            convt_kernel<<<blocks(n), THREADS, 0, st>>>(x, w, b, y, L.in[0], (int)L.in[1], (int)L.in[2],
                                                        (int)L.in[3], (int)L.out[1], (int)L.out[2],
                                                        (int)L.out[3], L.k, L.s, L.p, L.g);
        else
            conv_kernel<<<blocks(n), THREADS, 0, st>>>(x, w, b, y, L.in[0], (int)L.in[1], (int)L.in[2],
                                                       (int)L.in[3], (int)L.out[1], (int)L.out[2],
                                                       (int)L.out[3], L.k, L.s, L.p, L.g);
        return 0;
    }
    const long long lim = 0x7fffffffLL;
    if (L.in[1] * L.in[2] * L.in[3] > lim || cols > lim - TILE || L.in[1] * L.out[1] * (long long)L.k * L.k > lim ||
        (og + TILE - 1) / TILE > 65535 || L.g > 65535)
        return 1;
    dim3 grid((unsigned)((cols + TILE - 1) / TILE), (unsigned)((og + TILE - 1) / TILE), (unsigned)L.g);
    conv_gemm<<<grid, dim3(TILE, TILE), 0, st>>>(x, w, b, y, T, (int)L.in[1], (int)L.in[2], (int)L.in[3],
                                                 (int)L.out[1], (int)L.out[2], (int)L.out[3], L.k, L.s, L.p, L.g,
                                                 (int)cols);
    return 0;
}

extern "C" int kbv_setup(const kbv_call *call)
{
    (void)call;
    for (int i = 0; i < NBUF; i++)
        if (cudaMalloc((void **)&buf[i], (size_t)MOST * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&stats, 2 * WIDEST * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&scratch, (size_t)WSCR * sizeof(float)) != cudaSuccess) return 1;
    return 0;
}

extern "C" void kbv_teardown(void)
{
    for (int i = 0; i < NBUF; i++) {
        cudaFree(buf[i]);
        buf[i] = NULL;
    }
    cudaFree(stats);
    stats = NULL;
    cudaFree(scratch);
    scratch = NULL;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs != 2 || call->n_outputs != 1 || !buf[0]) return 1;
    if (kbv_numel(&call->inputs[0]) != 1505280LL || kbv_numel(&call->outputs[0]) != 10000LL) return 1;
    const float *P = (const float *)call->inputs[1].data;
    const float *cur = (const float *)call->inputs[0].data;
    const float *skip = NULL;
    /* the stack: saved tensors and their channels */
    const float *stk[STACK];
    long long stk_c[STACK];
    int depth = 0;
    cudaStream_t st = call->stream;
    for (int l = 0; l < N_LAYERS; l++) {
        const layer &L = NET[l];
        float *dst = (float *)call->outputs[0].data;
        if (l != LAST_WRITER)
            for (int i = 0; i < NBUF; i++) {
                bool used = buf[i] == cur || buf[i] == skip;
                for (int d = 0; d < depth; d++) used = used || buf[i] == stk[d];
                if (!used) { dst = buf[i]; break; }
            }
        const float *w = L.w >= 0 ? P + L.w : NULL, *b = L.b >= 0 ? P + L.b : NULL;
        long long n = numel(L.out);
        switch (L.kind) {
        case K_LINEAR: {
            /* over the last dimension: rows are everything before it */
            long long K = L.in[L.ndim - 1], N = L.out[L.ndim - 1], M = numel(L.in) / K;
            dim3 grid((unsigned)((M + TILE - 1) / TILE), (unsigned)((N + TILE - 1) / TILE));
            linear_kernel<<<grid, dim3(TILE, TILE), 0, st>>>(cur, w, b, dst, M, N, K);
            break;
        }
        case K_LN: {
            long long C = L.in[L.ndim - 1];
            ln_kernel<<<blocks(n / C), THREADS, 0, st>>>(cur, dst, w, b, n / C, C);
            break;
        }
        case K_ATTN:
            if (L.out[2] / L.g > HD_MAX) return 1;   /* D0 D1 H / THREADS blocks: either layout */
            attn_kernel<<<(unsigned)((L.in[0] * L.g * L.in[1] + THREADS - 1) / THREADS), THREADS, 0, st>>>(
                cur, dst, L.in[0], L.in[1], L.out[2], L.g, L.k);
            break;
        case K_TOKENS:
            transpose_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.in[0], L.in[1], L.in[2] * L.in[3]);
            break;
        case K_UNTOKENS:
            transpose_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.in[0], L.in[1], L.in[2]);
            break;
        case K_GELU: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, NULL, dst, n, 3); break;
        case K_GELU_ERF: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, NULL, dst, n, 4); break;
        case K_UNFOLD:
            unfold_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(cur, dst, n, L.in[2],
                                                                                    L.in[3], L.k);
            break;
        case K_CLS:
            cls_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(cur, w, dst, n, L.out[1] - 1,
                                                                                 L.out[2]);
            break;
        case K_POS:
            pos_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(cur, w, dst, n,
                                                                                 L.out[1] * L.out[2]);
            break;
        case K_WMLP: {
            int S = (int)llround(sqrt((double)L.in[1]));
            wmlp_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(
                cur, w, b, dst, n, S, (int)L.in[2], L.k, L.g, L.s ? L.k - L.s : 0);
            break;
        }
        case K_MERGE:
            merge_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(
                cur, dst, n, (int)llround(sqrt((double)L.in[1])), (int)L.in[2]);
            break;
        case K_TMEAN:
            tmean_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(cur, dst, n, L.in[1],
                                                                                   L.in[2]);
            break;
        case K_WATTN: {
            const long long *pp = WPARTS[L.p];
            int S = (int)llround(sqrt((double)L.in[1])), C = (int)L.in[2], R = (2 * L.k - 1) * (2 * L.k - 1);
            long long M = L.in[0] * L.in[1];
            if (C / L.g > HD_MAX) return 1;
            cpb_kernel<<<(unsigned)((R * L.g + THREADS - 1) / THREADS), THREADS, 0, st>>>(
                P + pp[3], P + pp[4], P + pp[5], scratch, 4 * M * C, L.k, L.g);
            wqkv_kernel<<<(unsigned)((3 * M * C + THREADS - 1) / THREADS), THREADS, 0, st>>>(
                cur, P + pp[6], P + pp[1], P + pp[2], scratch, 3 * M * C, S, C, L.k, L.s);
            wattn_kernel<<<(unsigned)((M * L.g + THREADS - 1) / THREADS), THREADS, 0, st>>>(scratch, P + pp[0], M, S, C,
                                                                                        L.k, L.g, L.s);
            wproj_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(scratch, P + pp[7], P + pp[8], dst,
                                                                                  n, S, C, L.k, L.s);
            break;
        }
        case K_FIRST:
            first_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, st>>>(cur, dst, n, L.in[1],
                                                                                   L.in[2]);
            break;
        case K_CONV:
            if (conv_layer(L, 0, cur, w, b, dst, st)) return 1;
            break;
        case K_BN:
            bn_stats<<<(unsigned)L.in[1], THREADS, 0, st>>>(cur, stats, stats + WIDEST, L.in[0], L.in[1],
                                                            L.in[2] * L.in[3]);
            bn_apply<<<blocks(n), THREADS, 0, st>>>(cur, dst, stats, stats + WIDEST, w, b, n, L.in[1],
                                                    L.in[2] * L.in[3]);
            break;
        case K_RELU: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, NULL, dst, n, 0); break;
        case K_RELU6: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, NULL, dst, n, 1); break;
        case K_SIGMOID: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, NULL, dst, n, 2); break;
        case K_ADD: ew_kernel<<<blocks(n), THREADS, 0, st>>>(cur, skip, dst, n, 0); skip = NULL; break;
        case K_MAXPOOL:
            maxpool_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.in[0] * L.in[1], (int)L.in[2],
                                                          (int)L.in[3], (int)L.out[2], (int)L.out[3], L.k,
                                                          L.s, L.p);
            break;
        case K_AVGPOOL:
            avgpool_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.in[0] * L.in[1], (int)L.in[2],
                                                          (int)L.in[3], (int)L.out[2], (int)L.out[3], L.k,
                                                          L.s, L.p);
            break;
        case K_GAP:
            gap_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.in[0] * L.in[1], L.in[2] * L.in[3]);
            break;
        case K_CONVT:
            if (conv_layer(L, 1, cur, w, b, dst, st)) return 1;
            break;
        case K_SOFTMAX: {
            long long len = L.out[L.ndim - 1];
            softmax_kernel<<<blocks(n / len), THREADS, 0, st>>>(cur, dst, n / len, len);
            break;
        }
        case K_CAT: {
            long long S = L.out[2] * L.out[3], off = 0;
            for (int d = depth - L.k; d <= depth; d++) {
                const float *src = d < depth ? stk[d] : cur;
                long long cp = d < depth ? stk_c[d] : L.in[1];
                cat_kernel<<<blocks(L.out[0] * cp * S), THREADS, 0, st>>>(src, dst, L.out[0], cp, S, L.out[1], off);
                off += cp;
            }
            depth -= L.k;
            break;
        }
        case K_SHUFFLE:
            shuffle_kernel<<<blocks(n), THREADS, 0, st>>>(cur, dst, L.out[0], L.out[1], L.out[2] * L.out[3], L.g);
            break;
        case K_PUSH: stk_c[depth] = L.in[1]; stk[depth++] = cur; continue;
        case K_XCHG: { const float *t = cur; cur = stk[depth - 1]; stk[depth - 1] = t; stk_c[depth - 1] = L.in[1]; continue; }
        case K_SAVE: skip = cur; continue;
        case K_SWAP: { const float *t = cur; cur = skip; skip = t; continue; }
        default: continue;   /* flatten and dropout(p=0) move nothing */
        }
        cur = dst;
    }
    CHECK_LAUNCH();
}

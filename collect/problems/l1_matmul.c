/* l1_matmul.c - KernelBench level 1, matrix products (problems 1-18).
 * Shapes and generators follow the KernelBench files.  FLOPs count a
 * multiply-add as two operations (2 M N K per product); min_bytes is every
 * input read once and the output written once, 4 bytes an element. */
#include "spec.h"

/* 1: C = A B, A and B [N, N], N = 2048 * 2. */
#define P1_N 4096LL

const suite_problem suite_l1_matmul[] = {
    {
        .id = "L1_001_square_matrix_multiplication", .level = 1, .number = 1,
        .name = "1_Square_matrix_multiplication_",
        .expr = "torch.matmul(A, B)",
        INPUTS(IN("A", G_RAND, P1_N, P1_N), IN("B", G_RAND, P1_N, P1_N)),
        OUTPUTS(OUT(P1_N, P1_N)),
        .flops = 2.0 * P1_N * P1_N * P1_N,           /* 2 N^3 */
        .min_bytes = 4.0 * 3 * P1_N * P1_N,          /* A, B, C */
        .uses_tf32 = 1, .op = OP_MM,
    },
};
SUITE_COUNT(suite_l1_matmul);

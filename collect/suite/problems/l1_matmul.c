/* l1_matmul.c - KernelBench level 1, matrix products (problems 1-18).
 * Shapes and generators follow the KernelBench files.  FLOPs count a
 * multiply-add as two operations (2 M N K per product); min_bytes is every
 * input read once and the output written once, 4 bytes an element. */
#include "spec.h"

#define MM(id_, num, nm, ex, op_, a_, b_, m, n, k, ...)                          \
    { .id = id_, .level = 1, .number = num, .name = nm, .expr = ex,          \
      INPUTS(a_, b_), OUTPUTS(OUT(__VA_ARGS__)),                              \
      .flops = 2.0 * (m) * (n) * (k),                                        \
      .min_bytes = 4.0 * ((double)(m) * (k) + (double)(k) * (n) + (double)(m) * (n)), \
      .uses_tf32 = 1, .op = op_ }

/* 1 */
#define P1_N 4096LL
/* 2, 16, 17, 18: M = 1024*2, K = 4096*2, N = 2048*2 */
#define P2_M 2048LL
#define P2_K 8192LL
#define P2_N 4096LL
/* 3: batch 128, m = 512, k = 1024, n = 2048 */
#define P3_B 128LL
#define P3_M 512LL
#define P3_K 1024LL
#define P3_N 2048LL
/* 4: M = 2048, K = 1048576, B [K, 1] */
#define P4_M 2048LL
#define P4_K 1048576LL
/* 5: M = 65536, N = 16384 */
#define P5_M 65536LL
#define P5_N 16384LL
/* 6: M = N = 256, K = 524288 */
#define P6_M 256LL
#define P6_K 524288LL
/* 7: M = N = 32768, K = 64 */
#define P7_M 32768LL
#define P7_K 64LL
/* 8 */
#define P8_M 8205LL
#define P8_K 2949LL
#define P8_N 5921LL
/* 9: A [M, N], B [N, M] with M = 32768, N = 32: C [M, M] */
#define P9_M 32768LL
#define P9_N 32LL
/* 10: A [16, 1024, 2048] @ B [2048, 768] */
#define P10_N 16LL
#define P10_M 1024LL
#define P10_K 2048LL
#define P10_L 768LL
/* 11: A [8, 256, 512, 256] @ B [256, 768] */
#define P11_B 8LL
#define P11_I 256LL
#define P11_J 512LL
#define P11_L 256LL
#define P11_K 768LL
/* 12-15: N = 4096 */
#define PT_N 4096LL

const suite_problem suite_l1_matmul[] = {
    MM("L1_001_square_matrix_multiplication", 1, "1_Square_matrix_multiplication_",
       "torch.matmul(A, B)", OP_MM,
       IN("A", G_RAND, P1_N, P1_N), IN("B", G_RAND, P1_N, P1_N),
       P1_N, P1_N, P1_N, P1_N, P1_N),
    MM("L1_002_standard_matrix_multiplication", 2, "2_Standard_matrix_multiplication_",
       "torch.matmul(A, B)", OP_MM,
       IN("A", G_RAND, P2_M, P2_K), IN("B", G_RAND, P2_K, P2_N),
       P2_M, P2_N, P2_K, P2_M, P2_N),
    { .id = "L1_003_batched_matrix_multiplication", .level = 1, .number = 3,
      .name = "3_Batched_matrix_multiplication", .expr = "torch.bmm(A, B)",
      INPUTS(IN("A", G_RAND, P3_B, P3_M, P3_K), IN("B", G_RAND, P3_B, P3_K, P3_N)),
      OUTPUTS(OUT(P3_B, P3_M, P3_N)),
      .flops = 2.0 * P3_B * P3_M * P3_N * P3_K,                   /* 2 b m n k */
      .min_bytes = 4.0 * P3_B * (P3_M * P3_K + P3_K * P3_N + P3_M * P3_N),
      .uses_tf32 = 1, .op = OP_BMM },
    MM("L1_004_matrix_vector_multiplication", 4, "4_Matrix_vector_multiplication_",
       "torch.matmul(A, B)", OP_MM,
       IN("A", G_RAND, P4_M, P4_K), IN("B", G_RAND, P4_K, 1),
       P4_M, 1, P4_K, P4_M, 1),
    /* 5: s is a Python float in KernelBench (3.14), so it is an attribute
     * here, not a tensor input.  1 FLOP an element. */
    { .id = "L1_005_matrix_scalar_multiplication", .level = 1, .number = 5,
      .name = "5_Matrix_scalar_multiplication", .expr = "A * s",
      INPUTS(IN("A", G_RAND, P5_M, P5_N)), OUTPUTS(OUT(P5_M, P5_N)),
      ATTRS({ "s", 3.14 }),
      .flops = 1.0 * P5_M * P5_N, .min_bytes = 4.0 * 2 * P5_M * P5_N,
      .op = OP_SCALE },
    MM("L1_006_matmul_with_large_k_dimension", 6, "6_Matmul_with_large_K_dimension_",
       "torch.matmul(A, B)", OP_MM,
       IN("A", G_RAND, P6_M, P6_K), IN("B", G_RAND, P6_K, P6_M),
       P6_M, P6_M, P6_K, P6_M, P6_M),
    MM("L1_007_matmul_with_small_k_dimension", 7, "7_Matmul_with_small_K_dimension_",
       "torch.matmul(A, B)", OP_MM,
       IN("A", G_RAND, P7_M, P7_K), IN("B", G_RAND, P7_K, P7_M),
       P7_M, P7_M, P7_K, P7_M, P7_M),
    MM("L1_008_matmul_with_irregular_shapes", 8, "8_Matmul_with_irregular_shapes_",
       "torch.matmul(A, B)", OP_MM,
       IN("A", G_RAND, P8_M, P8_K), IN("B", G_RAND, P8_K, P8_N),
       P8_M, P8_N, P8_K, P8_M, P8_N),
    MM("L1_009_tall_skinny_matrix_multiplication", 9, "9_Tall_skinny_matrix_multiplication_",
       "torch.matmul(A, B)", OP_MM,
       IN("A", G_RAND, P9_M, P9_N), IN("B", G_RAND, P9_N, P9_M),
       P9_M, P9_M, P9_N, P9_M, P9_M),
    /* 10: one GEMM of (N M) x K by K x L */
    { .id = "L1_010_3d_tensor_matrix_multiplication", .level = 1, .number = 10,
      .name = "10_3D_tensor_matrix_multiplication", .expr = "torch.matmul(A, B)",
      INPUTS(IN("A", G_RAND, P10_N, P10_M, P10_K), IN("B", G_RAND, P10_K, P10_L)),
      OUTPUTS(OUT(P10_N, P10_M, P10_L)),
      .flops = 2.0 * P10_N * P10_M * P10_K * P10_L,
      .min_bytes = 4.0 * (P10_N * P10_M * P10_K + P10_K * P10_L + P10_N * P10_M * P10_L),
      .uses_tf32 = 1, .op = OP_MM3D },
    { .id = "L1_011_4d_tensor_matrix_multiplication", .level = 1, .number = 11,
      .name = "11_4D_tensor_matrix_multiplication",
      .expr = "torch.einsum('bijl,lk->bijk', A, B)",
      INPUTS(IN("A", G_RAND, P11_B, P11_I, P11_J, P11_L), IN("B", G_RAND, P11_L, P11_K)),
      OUTPUTS(OUT(P11_B, P11_I, P11_J, P11_K)),
      .flops = 2.0 * P11_B * P11_I * P11_J * P11_L * P11_K,
      .min_bytes = 4.0 * (P11_B * P11_I * P11_J * P11_L + P11_L * P11_K
                          + P11_B * P11_I * P11_J * P11_K),
      .uses_tf32 = 1, .op = OP_MM4D },
    /* 12: diag(A) @ B is a row scaling: C[i, j] = A[i] B[i, j], one
     * multiply an element (PyTorch itself builds the diagonal matrix and
     * runs a full GEMM; the baseline does the scaling). */
    { .id = "L1_012_matmul_with_diagonal_matrices", .level = 1, .number = 12,
      .name = "12_Matmul_with_diagonal_matrices_", .expr = "torch.diag(A) @ B",
      INPUTS(IN("A", G_RAND, PT_N), IN("B", G_RAND, PT_N, PT_N)),
      OUTPUTS(OUT(PT_N, PT_N)),
      .flops = 1.0 * PT_N * PT_N,
      .min_bytes = 4.0 * (PT_N + 2 * PT_N * PT_N),
      .op = OP_DIAG_MM },
    MM("L1_013_matmul_for_symmetric_matrices", 13, "13_Matmul_for_symmetric_matrices",
       "torch.matmul(A, B)", OP_MM,
       IN("A", G_SYM, PT_N, PT_N), IN("B", G_SYM, PT_N, PT_N),
       PT_N, PT_N, PT_N, PT_N, PT_N),
    /* 14, 15: the FLOPs of the dense product PyTorch runs (2 N^3). */
    MM("L1_014_matmul_for_upper_triangular_matrices", 14,
       "14_Matmul_for_upper_triangular_matrices", "torch.triu(torch.matmul(A, B))", OP_TRIU_MM,
       IN("A", G_TRIU, PT_N, PT_N), IN("B", G_TRIU, PT_N, PT_N),
       PT_N, PT_N, PT_N, PT_N, PT_N),
    MM("L1_015_matmul_for_lower_triangular_matrices", 15,
       "15_Matmul_for_lower_triangular_matrices", "torch.tril(torch.matmul(A, B))", OP_TRIL_MM,
       IN("A", G_TRIL, PT_N, PT_N), IN("B", G_TRIL, PT_N, PT_N),
       PT_N, PT_N, PT_N, PT_N, PT_N),
    MM("L1_016_matmul_with_transposed_a", 16, "16_Matmul_with_transposed_A",
       "torch.matmul(A.T, B)", OP_MM_TA,
       IN("A", G_RAND, P2_K, P2_M), IN("B", G_RAND, P2_K, P2_N),
       P2_M, P2_N, P2_K, P2_M, P2_N),
    MM("L1_017_matmul_with_transposed_b", 17, "17_Matmul_with_transposed_B",
       "torch.matmul(A, B.T)", OP_MM_TB,
       IN("A", G_RAND, P2_M, P2_K), IN("B", G_RAND, P2_N, P2_K),
       P2_M, P2_N, P2_K, P2_M, P2_N),
    MM("L1_018_matmul_with_transposed_both", 18, "18_Matmul_with_transposed_both",
       "torch.matmul(A.T, B.T)", OP_MM_TAB,
       IN("A", G_RAND, P2_K, P2_M), IN("B", G_RAND, P2_N, P2_K),
       P2_M, P2_N, P2_K, P2_M, P2_N),
};
SUITE_COUNT(suite_l1_matmul);

/* ops.h - the baseline implementations a problem can name in its `op`
 * field.  Shared by the pure-C spec tables (collect/problems/ .c files) and the
 * CUDA baselines (collect/problems/ .cu files, dispatched by collect/baseline.cu),
 * so it holds nothing but constants.  A family of problems (all plain
 * matrix products, all elementwise activations) shares one implementation
 * that reads the shapes and attributes of the call; the op code says which
 * member of the family it is.
 */
#ifndef KBV_OPS_H
#define KBV_OPS_H

enum {
    OP_NONE = 0,

    /* Matrix products (cuBLAS), problems/matmul.cu.  Inputs A, B; the
     * row-major shapes say M, N, K and any batch. */
    OP_MM = 100,      /* C[M,N] = A[M,K] B[K,N] */
    OP_MM_TA,         /* C = A^T B, A stored [K,M] */
    OP_MM_TB,         /* C = A B^T, B stored [N,K] */
    OP_MM_TAB,        /* C = A^T B^T */
    OP_BMM,           /* C[b] = A[b] B[b], strided batches */
    OP_MM3D,          /* A[N,M,K] @ B[K,L]: one GEMM with rows N*M */
    OP_MM4D,          /* einsum bijl,lk->bijk: one GEMM with rows b*i*j */
    OP_DIAG_MM,       /* diag(A) @ B: a row scaling, elementwise */
    OP_TRIL_MM,       /* tril(A @ B) for lower-triangular A, B */
    OP_TRIU_MM,       /* triu(A @ B) for upper-triangular A, B */
    OP_MM_SCALAR,     /* A * s, s a scalar input */

    /* Elementwise activations, problems/elementwise.cu.  Input x; attrs as
     * the problem lists them. */
    OP_RELU = 200,
    OP_LEAKY_RELU,    /* attr negative_slope */
    OP_SIGMOID,
    OP_TANH,
    OP_SWISH,
    OP_GELU,          /* erf form */
    OP_SELU,
    OP_HARDSIGMOID,
    OP_SOFTPLUS,
    OP_SOFTSIGN,
    OP_ELU,           /* attr alpha */
    OP_HARDTANH,      /* attrs min_val, max_val */
    OP_NEWGELU,       /* tanh form (minGPT) */

    /* Row-wise normalisations over the last dimension, problems/softmax.cu. */
    OP_SOFTMAX = 300, /* softmax over dim 1 of [B, D] */
    OP_LOG_SOFTMAX,

    /* Ops at or above OP_CUDNN_FIRST and below OP_CUDNN_END run through
     * cuDNN (convolutions, pooling): `kbv list` marks them unavailable on a
     * host where cuDNN cannot be loaded. */
    OP_CUDNN_FIRST = 600,
    OP_CUDNN_END = 800
};

#define OP_NEEDS_CUDNN(op) ((op) >= OP_CUDNN_FIRST && (op) < OP_CUDNN_END)

#endif

/* ops.h - the baseline implementations a problem can name in its `op`
 * field.  Shared by the pure-C spec tables (collect/suite/problems/ .c files) and
 * the CUDA baselines (collect/baselines/problems/ .cu files, dispatched by
 * collect/baselines/baseline.cu), so it holds nothing but constants.  A family of
 * problems (all plain matrix products, all elementwise activations) shares
 * one implementation that reads the shapes and attributes of the call; the
 * op code says which member of the family it is.  Each family owns a range
 * of codes, so that the dispatcher finds it by range.
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
    OP_TRIL_MM,       /* tril(A @ B) */
    OP_TRIU_MM,       /* triu(A @ B) */
    OP_DIAG_MM,       /* diag(A) @ B: a row scaling, no GEMM */
    OP_MATMUL_LAST = OP_DIAG_MM,

    /* Elementwise maps y = f(x), problems/elementwise.cu.  Attrs as the
     * problem lists them. */
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
    OP_SCALE,         /* x * s, attr s */
    OP_ELEMENTWISE_LAST = OP_SCALE,

    /* Row-wise softmax over the last dimension, problems/softmax.cu. */
    OP_SOFTMAX = 300,
    OP_LOG_SOFTMAX,
    OP_SOFTMAX_LAST = OP_LOG_SOFTMAX,

    /* Normalisations, problems/norm.cu (eps from the attrs, 1e-5 default). */
    OP_BATCHNORM = 320,   /* BatchNorm2d in training mode: batch statistics */
    OP_INSTANCENORM,      /* InstanceNorm2d, no affine */
    OP_GROUPNORM,         /* attr num_groups; weight, bias */
    OP_RMSNORM_DIM1,      /* x / sqrt(mean(x^2, dim 1) + eps) */
    OP_FROBENIUS,         /* x / ||x||_F */
    OP_L1NORM,            /* x / mean(|x|, dim 1) */
    OP_L2NORM,            /* x / ||x||_2 over dim 1 */
    OP_LAYERNORM,         /* over all but the first dimension; weight, bias */
    OP_NORM_LAST = OP_LAYERNORM,

    /* Pooling, problems/pool.cu (attrs kernel_size, stride, padding,
     * dilation, by name). */
    OP_MAXPOOL = 360,     /* 1D, 2D or 3D by the input rank */
    OP_AVGPOOL,           /* count_include_pad, floor mode */
    OP_POOL_LAST = OP_AVGPOOL,

    /* Reductions over dim 1 of [outer, R, inner], problems/reduce.cu. */
    OP_SUM_DIM = 400,     /* keepdim */
    OP_MEAN_DIM,
    OP_MAX_DIM,
    OP_MIN_DIM,
    OP_ARGMAX_DIM,        /* int64 output */
    OP_ARGMIN_DIM,
    OP_REDUCE_LAST = OP_ARGMIN_DIM,

    /* Scans along the last dimension (CUB block scans), problems/scan.cu. */
    OP_CUMSUM = 440,
    OP_CUMPROD,
    OP_CUMSUM_REVERSE,
    OP_CUMSUM_EXCLUSIVE,  /* KernelBench 92's exact semantics, see its table */
    OP_MASKED_CUMSUM,     /* cumsum(x * mask) */
    OP_SCAN_LAST = OP_MASKED_CUMSUM,

    /* Losses to a scalar (mean reductions), problems/loss.cu. */
    OP_MSE = 480,
    OP_HUBER,             /* smooth_l1, beta 1 */
    OP_KLDIV,             /* kl_div(log p, t, batchmean) */
    OP_TRIPLET,           /* attr margin; p = 2, eps 1e-6 */
    OP_HINGE,             /* mean(clamp(1 - p t, 0)), t over the last dim */
    OP_CROSS_ENTROPY,     /* int64 targets */
    OP_LOSS_LAST = OP_CROSS_ENTROPY,

    /* Attention (cuBLAS batched products and a row softmax),
     * problems/attention.cu. */
    OP_SDPA = 520,
    OP_ATTENTION_LAST = OP_SDPA,

    /* Level 2 fused chains: a producer (GEMM, conv) then epilogue steps,
     * problems/chain.cu; the chain is named by the op code. */
    OP_CHAIN_FIRST = 540,
    OP_CHAIN_LAST = 599,

    /* Ops at or above OP_CUDNN_FIRST and below OP_CUDNN_END run through
     * cuDNN (convolutions): `kbv list` marks them unavailable on a host
     * where cuDNN cannot be loaded. */
    OP_CUDNN_FIRST = 600,
    OP_CONV = OP_CUDNN_FIRST, /* N-d convolution (1D as 2D), optional bias */
    OP_CONV_T,                /* N-d transposed convolution */
    OP_CONV_DWSEP,            /* depthwise conv, then 1x1 conv */
    OP_CONV_LAST = OP_CONV_DWSEP,
    OP_CONV_CHAIN_FIRST = 640, /* level 2: a convolution, then epilogue steps */
    OP_CONV_CHAIN_LAST = 759,
    OP_CONV_NET_FIRST = 760,   /* level 3: layer programs with convolutions, problems/net.cu */
    OP_CONV_NET_LAST = 789,
    OP_RNN_FIRST = 790,        /* level 3: recurrent models through cuDNN's RNN API, problems/rnn.cu */
    OP_RNN_LAST = 799,
    OP_CUDNN_END = 800,

    /* Level 3 layer programs without convolutions (MLPs): cuBLAS only,
     * problems/net.cu; the program is named by the op code (net.h). */
    OP_NET_FIRST = 800,
    OP_NET_LAST = 899,
    /* Level 3 models of fixed structure without cuDNN (problems/l3model.h):
     * cuBLAS and kbv's kernels, problems/rnn.cu.  Inside the net range:
     * baseline.cu lists their family before the nets'. */
    OP_MODEL_FIRST = OP_NET_FIRST + 30,
    OP_MODEL_LAST = OP_NET_FIRST + 39
};

#define OP_NEEDS_CUDNN(op) ((op) >= OP_CUDNN_FIRST && (op) < OP_CUDNN_END)

#endif

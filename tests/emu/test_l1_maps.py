import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import *
from math import erf
S = ["naive", "tuned", "hacks"]
which = sys.argv[1] if len(sys.argv) > 1 else "all"
verf = np.vectorize(erf)

def dist_inputs(x, d):
    return {"D1": x, "D2": x * 3, "D3": x * 0.01, "D4": -x}[d]

# --- elementwise
EW = {
 "L1_019_relu": lambda x, a: np.maximum(x, 0),
 "L1_020_leakyrelu": lambda x, a: np.where(x > 0, x, x * a[0]),
 "L1_021_sigmoid": lambda x, a: 1 / (1 + np.exp(-x)),
 "L1_022_tanh": lambda x, a: np.tanh(x),
 "L1_025_swish": lambda x, a: x / (1 + np.exp(-x)),
 "L1_026_gelu": lambda x, a: 0.5 * x * (1 + verf(x / math.sqrt(2))),
 "L1_027_selu": lambda x, a: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
 "L1_028_hardsigmoid": lambda x, a: np.clip(x / 6 + 0.5, 0, 1),
 "L1_029_softplus": lambda x, a: np.where(x > 20, x, np.log1p(np.exp(x))),
 "L1_030_softsign": lambda x, a: x / (1 + np.abs(x)),
 "L1_031_elu": lambda x, a: np.where(x > 0, x, a[0] * np.expm1(x)),
 "L1_032_hardtanh": lambda x, a: np.clip(x, a[0], a[1]),
 "L1_088_mingptnewgelu": lambda x, a: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
 "L1_005_matrix_scalar_multiplication": lambda x, a: x * a[0],
}
if which in ("all", "ew"):
    for pid, f in EW.items():
        a = attrs_of(pid)[1]
        for d in ("D1", "D4"):
            x = dist_inputs(U(3, 1001), d).astype(np.float32)
            check(["naive", "tuned"], pid, [x], [x.shape], f(x.astype(np.float64), a))

# --- matrix products
def mm_case(pid, A, B, ref):
    check(["naive", "tuned"], pid, [A, B], [ref.shape], ref)
if which in ("all", "mm"):
    for pid in ["L1_001_square_matrix_multiplication", "L1_002_standard_matrix_multiplication", "L1_013_matmul_for_symmetric_matrices", "L1_007_matmul_with_small_k_dimension", "L1_009_tall_skinny_matrix_multiplication", "L1_006_matmul_with_large_k_dimension", "L1_008_matmul_with_irregular_shapes"]:
        for (m, k, n) in [(128, 64, 256), (37, 41, 29)]:
            A, B = U(m, k), U(k, n)
            mm_case(pid, A, B, A.astype(np.float64) @ B)
    A, B = U(128, 64), U(64, 1)
    mm_case("L1_004_matrix_vector_multiplication", A, B, A.astype(np.float64) @ B)
    A, B = U(3, 128, 64), U(3, 64, 128)
    mm_case("L1_003_batched_matrix_multiplication", A, B, A.astype(np.float64) @ B)
    A, B = U(2, 64, 32), U(32, 128)
    mm_case("L1_010_3d_tensor_matrix_multiplication", A, B, A.astype(np.float64) @ B)
    A, B = U(2, 2, 32, 32), U(32, 128)
    mm_case("L1_011_4d_tensor_matrix_multiplication", A, B, np.einsum("bijl,lk->bijk", A.astype(np.float64), B))
    A, B = U(40), U(40, 30)
    check(["naive"], "L1_012_matmul_with_diagonal_matrices", [A, B], [(40, 30)], np.diag(A.astype(np.float64)) @ B)
    A, B = np.triu(U(50, 50)), np.triu(U(50, 50))
    check(["naive"], "L1_014_matmul_for_upper_triangular_matrices", [A, B], [(50, 50)], np.triu(A.astype(np.float64) @ B))
    A, B = np.tril(U(50, 50)), np.tril(U(50, 50))
    check(["naive"], "L1_015_matmul_for_lower_triangular_matrices", [A, B], [(50, 50)], np.tril(A.astype(np.float64) @ B))
    A, B = U(33, 20), U(33, 45)
    check(["naive"], "L1_016_matmul_with_transposed_a", [A, B], [(20, 45)], A.T.astype(np.float64) @ B)
    for (m, k, n) in [(128, 64, 128), (20, 33, 45)]:
        A, B = U(m, k), U(n, k)
        check(["naive", "tuned"], "L1_017_matmul_with_transposed_b", [A, B], [(m, n)], A.astype(np.float64) @ B.T)
    A, B = U(33, 20), U(45, 33)
    check(["naive"], "L1_018_matmul_with_transposed_both", [A, B], [(20, 45)], A.T.astype(np.float64) @ B.T)

# --- softmax
if which in ("all", "sm"):
    for cols in (1000, 4096, 20000, 70001):
        x = U(3, cols)
        x64 = x.astype(np.float64)
        e = np.exp(x64 - x64.max(1, keepdims=True))
        sm = e / e.sum(1, keepdims=True)
        check(["naive", "tuned"], "L1_023_softmax", [x], [x.shape], sm)
        check(["naive", "tuned"], "L1_024_logsoftmax", [x], [x.shape], np.log(sm))

# --- reductions over dim 1
if which in ("all", "red"):
    x = U(3, 50, 37)
    x64 = x.astype(np.float64)
    check(S[:1], "L1_047_sum_reduction_over_a_dimension", [x], [(3, 1, 37)], x64.sum(1, keepdims=True))
    check(S[:1], "L1_048_mean_reduction_over_a_dimension", [x], [(3, 37)], x64.mean(1))
    check(S[:1], "L1_049_max_reduction_over_a_dimension", [x], [(3, 37)], x64.max(1))
    check(S[:1], "L1_053_min_reduction_over_a_dimension", [x], [(3, 37)], x64.min(1))
    check(S[:1], "L1_051_argmax_over_a_dimension", [x], [(3, 37)], x.argmax(1), out_dtypes=[np.int64])
    check(S[:1], "L1_052_argmin_over_a_dimension", [x], [(3, 37)], x.argmin(1), out_dtypes=[np.int64])

# --- scans
if which in ("all", "scan"):
    x = U(5, 300)
    x64 = x.astype(np.float64)
    check(S[:1], "L1_089_cumsum", [x], [x.shape], np.cumsum(x64, 1))
    check(S[:1], "L1_090_cumprod", [x], [x.shape], np.cumprod(x64, 1))
    check(S[:1], "L1_091_cumsum_reverse", [x], [x.shape], np.cumsum(x64[:, ::-1], 1)[:, ::-1])
    ex = np.cumsum(np.concatenate([np.zeros((5, 1)), x64], 1)[:-1], 1)
    check(S[:1], "L1_092_cumsum_exclusive", [x], [ex.shape], ex)
    m = rng.integers(0, 2, size=x.shape).astype(np.float32)
    check(S[:1], "L1_093_masked_cumsum", [x, m], [x.shape], np.cumsum(x64 * m, 1))

# --- norms
if which in ("all", "norm"):
    eps = 1e-5
    x = U(3, 8, 9, 10); x64 = x.astype(np.float64)
    w, b = U(8, lo=0.5, hi=1.5), U(8, lo=-0.5, hi=0.5)
    mu = x64.mean((0, 2, 3), keepdims=True); var = x64.var((0, 2, 3), keepdims=True)
    bn = (x64 - mu) / np.sqrt(var + eps) * w[None, :, None, None] + b[None, :, None, None]
    check(["naive", "hacks"], "L1_033_batchnorm", [x, w, b], [x.shape], bn)
    mu = x64.mean((2, 3), keepdims=True); var = x64.var((2, 3), keepdims=True)
    check(["naive", "tuned"], "L1_034_instancenorm", [x], [x.shape], (x64 - mu) / np.sqrt(var + eps))
    G = int(attrs_of("L1_035_groupnorm")[0]["num_groups"])
    xg = x64.reshape(3, G, -1); mu = xg.mean(2, keepdims=True); var = xg.var(2, keepdims=True)
    gn = ((xg - mu) / np.sqrt(var + eps)).reshape(x.shape) * w[None, :, None, None] + b[None, :, None, None]
    check(["naive"], "L1_035_groupnorm", [x, w, b], [x.shape], gn)
    x = U(3, 64, 5, 7); x64 = x.astype(np.float64)
    check(["naive", "tuned"], "L1_036_rmsnorm", [x], [x.shape], x64 / np.sqrt((x64 ** 2).mean(1, keepdims=True) + eps))
    check(["naive", "hacks"], "L1_037_frobeniusnorm", [x], [x.shape], x64 / np.sqrt((x64 ** 2).sum()))
    x = U(4, 999); x64 = x.astype(np.float64)
    check(["naive"], "L1_038_l1norm", [x], [x.shape], x64 / np.abs(x64).mean(1, keepdims=True))
    check(["naive"], "L1_039_l2norm", [x], [x.shape], x64 / np.sqrt((x64 ** 2).sum(1, keepdims=True)))
    x = U(3, 4, 5, 6); x64 = x.astype(np.float64)
    w, b = U(4, 5, 6, lo=0.5, hi=1.5), U(4, 5, 6, lo=-0.5, hi=0.5)
    mu = x64.mean((1, 2, 3), keepdims=True); var = x64.var((1, 2, 3), keepdims=True)
    check(["naive", "hacks"], "L1_040_layernorm", [x, w, b], [x.shape], (x64 - mu) / np.sqrt(var + eps) * w + b)

if __name__ == "__main__":
    sys.exit(summary())

"""test_bf16_tuned.py - the hand-written candidates of data/candidates/tuned-bf16
(the algebraic rewrites and the bfloat16 ports of tuned/'s memory-bound
wins) under the CPU emulation in the BF16 setting, against numpy
references computed in float64 from the bf16-rounded inputs, with the
setting's tolerance (check.py).  Small shapes, both the 16-byte paths
(sizes that are multiples of 8) and the scalar ones.

    python3 tests/emu/test_bf16_tuned.py        (sets EMU_BF16=1 itself)
    EMU_BF16=1 EMU_CLUSTER=8 python3 tests/emu/test_cluster.py   (the softmax clusters)
"""
import os, sys
os.environ["EMU_BF16"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_argv = sys.argv; sys.argv = [sys.argv[0], "none"]
from check import *
from test_l1_conv import convT_ref, geo
sys.argv = _argv
from math import erf

verf = np.vectorize(erf)
def gelu(v): return 0.5 * v * (1 + verf(v / math.sqrt(2)))
def lse(v, ax): m = v.max(ax, keepdims=True); return m + np.log(np.exp(v - m).sum(ax, keepdims=True))
def A(pid): return attrs_of(pid)[0]
def f64(*a): return [v.astype(np.float64) for v in a]
def pid_of(num): return [i for i in REG if i.startswith("L2_%03d" % num)][0]

# --- row sums of linear layers: x . (W's column sums)
for (M, H, K) in [(64, 256, 128), (37, 50, 29), (5, 300, 8)]:
    x, W = U(M, K), N(H, K)
    xd, Wd = f64(x, W)
    y = xd @ Wd.T
    pid = pid_of(14)
    check(["tuned"], pid, [x, W], [(M, 1)], (y / 2).sum(1, keepdims=True) * A(pid)["scaling_factor"])
    b = U(H, lo=-0.2, hi=0.2)
    Wk = U(H, K, lo=-0.1, hi=0.1)
    y = xd @ Wk.astype(np.float64).T + b
    s = y.sum(1, keepdims=True)
    check(["tuned"], pid_of(18), [x, Wk, b], [(M, 1)], lse(lse(s.max(1, keepdims=True).mean(1, keepdims=True), 1), 1))
    m = y.max(1, keepdims=True)
    check(["tuned"], pid_of(80), [x, Wk, b], [(M, 1)], gelu(m - m.mean(1, keepdims=True)))
    sub = U(H, lo=-0.5, hi=0.5)
    v = (y - sub).mean(1, keepdims=True)
    check(["tuned"], pid_of(51), [x, Wk, b, sub], [(M, K)], gelu(lse(v, 1)) + xd)

# --- average pooling of a linear layer's features: a layer with pooled rows
pid = pid_of(98)
for (M, H, K) in [(128, 2048, 64), (37, 320, 40)]:
    x, W, b = U(M, K), U(H, K, lo=-0.1, hi=0.1), U(H, lo=-0.1, hi=0.1)
    y = (x.astype(np.float64) @ W.astype(np.float64).T + b).reshape(M, H // 16, 16).mean(2)
    check(["tuned"], pid, [x, W, b], [(M,)], (gelu(y) * A(pid)["scale_factor"]).max(1))

# --- global averages of transposed convolutions: W times the input planes' sums
for (Nb, Cin, H, Wd, Cout) in [(2, 3, 8, 8, 5), (2, 4, 6, 5, 7)]:
    x = U(Nb, Cin, H, Wd)
    w = U(Cin, Cout, 3, 3, lo=-0.3, hi=0.3)
    cb, b2 = U(Cout, lo=-0.5, hi=0.5), U(Cout, 1, 1, lo=-0.5, hi=0.5)
    pid = pid_of(42)
    y = convT_ref(x, w, cb, [1, 1], [0, 0], [1, 1], 1, [H + 2, Wd + 2])
    m = y.mean((2, 3), keepdims=True) + b2.astype(np.float64)
    check(["tuned"], pid, [x, w, cb, b2], [(Nb, 1)], (lse(m, 1).sum((2, 3)) * 10.0))
    pid = pid_of(44)
    a = A(pid)
    st, pd, op = int(a["stride"]), int(a["padding"]), int(a["output_padding"])
    outs = [(L - 1) * st - 2 * pd + 3 + op for L in (H, Wd)]
    y = convT_ref(x, w, cb, [st, st], [pd, pd], [1, 1], 1, outs) * a["multiplier"]
    check(["tuned"], pid, [x, w, cb], [(Nb, Cout, 1, 1)], y.mean((2, 3), keepdims=True).mean((2, 3), keepdims=True))

# --- RMS norm over dim 1, x read once (the pairs path: C = 64, S even)
eps = float(attrs_of("L1_036_rmsnorm")[0].get("eps", 1e-5))
for shp in [(3, 64, 5, 8), (3, 64, 5, 7), (2, 8, 4, 4)]:
    x = N(*shp); x64 = x.astype(np.float64)
    check(["tuned"], "L1_036_rmsnorm", [x], [x.shape], x64 / np.sqrt((x64 ** 2).mean(1, keepdims=True) + eps))

# --- softmax and log-softmax: the two-pass kernel here (the cluster kernel
# of long rows runs under EMU_CLUSTER=8: EMU_BF16=1 EMU_CLUSTER=8
# python3 tests/emu/test_cluster.py)
for cols in (1000, 4096, 16392):
    x = U(3, cols); x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(1, keepdims=True)); sm = e / e.sum(1, keepdims=True)
    check(["tuned"], "L1_023_softmax", [x], [x.shape], sm)
    check(["tuned"], "L1_024_logsoftmax", [x], [x.shape], np.log(sm))

rc = summary()
print("test_bf16_tuned: ok" if rc == 0 else "test_bf16_tuned: FAILED")
sys.exit(rc)

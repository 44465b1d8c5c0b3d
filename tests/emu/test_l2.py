import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import *
_argv = sys.argv; sys.argv = [sys.argv[0], "none"]
from test_l1_conv import conv_ref, convT_ref, geo
from math import erf
verf = np.vectorize(erf)
def gelu(v): return 0.5 * v * (1 + verf(v / math.sqrt(2)))
def sig(v): return 1 / (1 + np.exp(-v))
def softplus(v): return np.where(v > 20, v, np.log1p(np.exp(np.minimum(v, 20))))
def mish(v): return v * np.tanh(softplus(v))
def lrelu(v, s): return np.where(v > 0, v, v * s)
def gn_rows(v, G, w, b, eps=1e-5):
    M, N = v.shape; g = v.reshape(M, G, -1); mu = g.mean(2, keepdims=True); var = g.var(2, keepdims=True)
    return ((g - mu) / np.sqrt(var + eps)).reshape(M, N) * w + b
def bn_cols(v, w, b, eps):
    mu = v.mean(0); var = v.var(0); return (v - mu) / np.sqrt(var + eps) * w + b

def A(pid): return attrs_of(pid)[0]

LIN = {
 9: lambda y, a, P: np.maximum((y - a["subtract_value"]) * a["multiply_value"], 0),
 12: lambda y, a, P: lrelu(y * a["multiplier"], a["negative_slope"]),
 29: lambda y, a, P: mish(mish(y)),
 40: lambda y, a, P: y * a["scaling_factor"] + y,
 53: lambda y, a, P: gelu(np.clip(y * a["scaling_factor"], a["hardtanh_min"], a["hardtanh_max"])),
 59: lambda y, a, P: y * sig(y) * a["scaling_factor"],
 63: lambda y, a, P: np.maximum(y, 0) / a["divisor"],
 68: lambda y, a, P: np.minimum(y, P[3]) - P[3],
 70: lambda y, a, P: sig(y) * a["scaling_factor"] + y,
 81: lambda y, a, P: np.clip(np.tanh(np.clip(y * sig(y) / 2, -1, 1)), -1, 1),
 86: lambda y, a, P: gelu(y / a["divisor"]),
 95: lambda y, a, P: np.clip(gelu(np.tanh((y + P[3]) * sig(y + P[3]))), -1, 1),
 30: lambda y, a, P: np.clip(gn_rows(y, int(a["num_groups"]), P[3], P[4]), a["hardtanh_min"], a["hardtanh_max"]),
 62: lambda y, a, P: 2 * lrelu(gn_rows(y, int(a["num_groups"]), P[3], P[4], a["eps"]), a["negative_slope"]),
 88: lambda y, a, P: (lambda z: (lambda q: q * sig(q))(z * sig(z) * P[5]))(gn_rows(y, int(a["num_groups"]), P[3], P[4])),
 33: lambda y, a, P: bn_cols(y * P[3], P[4], P[5], a["eps"]),
 41: lambda y, a, P: np.maximum(gelu(bn_cols(y, P[3], P[4], a["eps"])), 0),
 56: lambda y, a, P: sig(y).sum(1, keepdims=True),
 99: lambda y, a, P: (lambda e: e / e.sum(1, keepdims=True))(np.exp(gelu(y) - gelu(y).max(1, keepdims=True))),
}
for num, f in LIN.items():
    pid = [i for i in REG if i.startswith("L2_%03d" % num)][0]
    specs = REG[pid]["inputs"]
    shapes = [(128, 256, 64), (37, 50, 29)] if num not in (30, 62, 88) else [(128, 512, 64), (37, 1024, 29)]
    for (M, N, K) in shapes:
        x = U(M, K); W = U(N, K, lo=-0.2, hi=0.2); b = U(N, lo=-0.2, hi=0.2)
        ins = [x, W, b]
        for s in specs[3:]:
            shp = [N] if len(s["shape"]) == 1 else []
            if len(s["shape"]) == 0: arr = np.array(2.0 * rng.uniform(0.5, 1.5), dtype=np.float32)
            else: arr = U(*shp, lo=0.5, hi=1.5) if "weight" in s["name"] else N_(*shp) if False else U(*shp, lo=-0.7, hi=0.7)
            ins.append(arr)
        P = [v.astype(np.float64) for v in ins]
        y = x.astype(np.float64) @ W.astype(np.float64).T + b
        ref = f(y, A(pid), P)
        check(["naive", "tuned"], pid, ins, [ref.shape], ref)

# bias-free products
for num in (14, 76):
    pid = [i for i in REG if i.startswith("L2_%03d" % num)][0]
    for (M, N, K) in [(128, 256, 64), (37, 50, 29)]:
        x = U(M, K); W = U(N, K, lo=-1, hi=1)
        y = x.astype(np.float64) @ W.astype(np.float64).T
        if num == 14:
            ref = (y / 2).sum(1, keepdims=True) * A(pid)["scaling_factor"]; ins = [x, W]
        else:
            bb = U(N, lo=-1, hi=1); ref = np.maximum(y + bb, 0); ins = [x, W, bb]
        check(["naive", "tuned"], pid, ins, [ref.shape], ref)

# convolutions
def chan(v, p): return p.reshape((1, -1) + (1,) * (v.ndim - 2))
CONV = {
 1: lambda y, a, P: np.maximum(y, 0) + chan(y, P[3]),
 2: lambda y, a, P: np.clip(np.clip(y + chan(y, P[3]), 0, 1) * a["scaling_factor"], 0, 1) / a["scaling_factor"],
 4: lambda y, a, P: mish(mish(y)),
 5: lambda y, a, P: np.tanh(y - chan(y, P[3])),
 7: lambda y, a, P: sig(gelu(lrelu(np.maximum(y, 0), 0.01))) + chan(y, P[3]),
 16: lambda y, a, P: np.clip(mish(y) + a["add_value"], -1, 1) * a["scale"],
 17: lambda y, a, P: ((y - y.mean((2, 3), keepdims=True)) / np.sqrt(y.var((2, 3), keepdims=True) + 1e-5)) / a["divide_by"],
 21: lambda y, a, P: (lambda z: (lambda g: ((g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + 1e-5)).reshape(z.shape) * chan(z, P[5]) + chan(z, P[6]))(z.reshape(z.shape[0], int(a["num_groups"]), -1)))(sig((y + chan(y, P[3])) * chan(y, P[4]))),
 25: lambda y, a, P: np.tanh(np.tanh(y.min(1, keepdims=True))),
 32: lambda y, a, P: (y * a["scale_factor"]).min(1, keepdims=True),
 47: lambda y, a, P: np.tanh(mish(y)),
 48: lambda y, a, P: sig(np.tanh(y * chan(y, P[3])) * chan(y, P[4])),
 52: lambda y, a, P: (lambda z: (z - z.mean((0, 2, 3), keepdims=True)) / np.sqrt(z.var((0, 2, 3), keepdims=True) + a["eps"]) * chan(z, P[3]) + chan(z, P[4]))(np.tanh(softplus(y)) * y),
 54: lambda y, a, P: gelu(lrelu(y * chan(y, P[3]), 0.01)),
 57: lambda y, a, P: (lambda z: z * np.clip((z + 3) / 6, 0, 1))(np.maximum(y, 0)),
 67: lambda y, a, P: gelu(y).mean((2, 3)),
 69: lambda y, a, P: np.maximum(y * np.clip(y + 3, 0, 6) / 6, 0),
 71: lambda y, a, P: lrelu(y / a["divisor"], 0.01),
 73: lambda y, a, P: ((y - y.mean((0, 2, 3), keepdims=True)) / np.sqrt(y.var((0, 2, 3), keepdims=True) + a["eps"]) * chan(y, P[3]) + chan(y, P[4])) * a["scaling_factor"],
 87: lambda y, a, P: mish(y - a["subtract_value_1"] - a["subtract_value_2"]),
}
for num, f in CONV.items():
    pid = [i for i in REG if i.startswith("L2_%03d" % num)][0]
    p = REG[pid]; x0 = p["inputs"][0]["shape"]; w0 = p["inputs"][1]["shape"]; nd = len(x0) - 2
    tr = "convtranspose" in pid
    st, pd, dl = geo(pid, nd)
    ks = w0[2:]
    Cin, Cout = 3, 8
    sp = [max(ks[i] + 4, 7) for i in range(nd)]
    x = U(2, Cin, *sp)
    w = U(Cin, Cout, *ks, lo=-0.5, hi=0.5) if tr else U(Cout, Cin, *ks, lo=-0.5, hi=0.5)
    cb = U(Cout, lo=-0.5, hi=0.5)
    ins = [x, w, cb]
    for s in p["inputs"][3:]:
        shp = [Cout] + [1] * (len(s["shape"]) - 1)
        ins.append(U(*shp, lo=0.5, hi=1.5) if "weight" in s["name"] else U(*shp, lo=-0.7, hi=0.7))
    if tr:
        op = int(A(pid).get("output_padding", 0))
        outs = [(sp[i] - 1) * st[i] - 2 * pd[i] + dl[i] * (ks[i] - 1) + op + 1 for i in range(nd)]
        y = convT_ref(x, w, cb, st, pd, dl, 1, outs)
    else:
        y = conv_ref(x, w, cb, st, pd, dl, 1)
    P = [v.astype(np.float64) for v in ins]
    ref = f(y, A(pid), P)
    check(["naive", "tuned"], pid, ins, [ref.shape], ref)

if __name__ == "__main__":
    sys.exit(summary())

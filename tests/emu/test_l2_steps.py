"""test_l2_steps.py - the naive candidates of the level-2 problems with post
stages (scripts/gen-naive-candidates.py, L2S) on small shapes under the CPU
emulation, against numpy references written from the KernelBench files.
The files in data/candidates/naive have the registry's shapes written in,
so this regenerates each one from the same generator with a small batch
and small extents (channels, groups and the steps unchanged), then runs it.

    python3 tests/emu/test_l2_steps.py [NUMBER...]

With EMU_BF16=1 (check.py) the same generated files go through the
generator's --bf16 transformation first: the naive-bf16 candidates.
"""
import copy, importlib.util, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_argv = sys.argv; sys.argv = [sys.argv[0], "none"]
from check import *
from test_l1_conv import conv_ref, convT_ref, geo
sys.argv = _argv
from math import erf

# the generator imports its sibling naive_l3.py
sys.path.insert(0, os.path.join(ROOT, "scripts"))
_spec = importlib.util.spec_from_file_location("gen", os.path.join(ROOT, "scripts", "gen-naive-candidates.py"))
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)

verf = np.vectorize(erf)
def gelu(v): return 0.5 * v * (1 + verf(v / math.sqrt(2)))
def sig(v): return 1 / (1 + np.exp(-v))
def mish(v): return v * np.tanh(np.where(v > 20, v, np.log1p(np.exp(np.minimum(v, 20)))))
def hsw(v): return v * np.clip(v + 3, 0, 6) / 6
def lrelu(v, s): return np.where(v > 0, v, v * s)
def swish(v): return v * sig(v)
def softmax(v, ax): e = np.exp(v - v.max(ax, keepdims=True)); return e / e.sum(ax, keepdims=True)
def lse(v, ax): m = v.max(ax, keepdims=True); return m + np.log(np.exp(v - m).sum(ax, keepdims=True))
def chan(v, g): return g.reshape((1, -1) + (1,) * (v.ndim - 2))
def gn(v, G, g=None, b=None, eps=1e-5):
    z = v.reshape(v.shape[0], G, -1)
    z = ((z - z.mean(2, keepdims=True)) / np.sqrt(z.var(2, keepdims=True) + eps)).reshape(v.shape)
    return z if g is None else z * chan(v, g) + chan(v, b)
def bn(v, g, b, eps=1e-5):
    ax = tuple(i for i in range(v.ndim) if i != 1)
    return (v - v.mean(ax, keepdims=True)) / np.sqrt(v.var(ax, keepdims=True) + eps) * chan(v, g) + chan(v, b)
def inorm(v, eps=1e-5):
    ax = tuple(range(2, v.ndim))
    return (v - v.mean(ax, keepdims=True)) / np.sqrt(v.var(ax, keepdims=True) + eps)
def ln_last(v, g, b, eps=1e-5):
    return (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + eps) * g + b
def pool(v, k, op):
    """non-overlapping windows of k on every axis after the first two, floor mode"""
    nd = v.ndim - 2
    v = v[(slice(None), slice(None)) + tuple(slice(0, (L // k) * k) for L in v.shape[2:])]
    shp = list(v.shape[:2])
    for L in v.shape[2:]: shp += [L // k, k]
    v = v.reshape(shp)
    ax = tuple(3 + 2 * i for i in range(nd))
    return v.max(ax) if op == "max" else v.mean(ax)

def conv(pid, P, T=False, wi=1, bias=True):
    x, w = P[0], P[wi]; b = P[wi + 1] if bias else None
    nd = x.ndim - 2
    st, pd, dl = geo(pid, nd)
    if not T: return conv_ref(x, w, b, st, pd, dl, 1)
    op = int(attrs_of(pid)[0].get("output_padding", 0))
    outs = [(x.shape[2 + i] - 1) * st[i] - 2 * pd[i] + dl[i] * (w.shape[2 + i] - 1) + op + 1 for i in range(nd)]
    return convT_ref(x, w, b, st, pd, dl, 1, outs)
def lin(P, wi=1, bias=True): return P[0] @ P[wi].T + (P[wi + 1] if bias else 0)

T = True
REF = {
 3: lambda i, P: gelu(pool(ln_last(conv(i, P, T) + P[3], P[4], P[5]), 2, "avg")),
 6: lambda i, P: pool(pool(softmax(conv(i, P), 1), 2, "max"), 2, "max"),
 8: lambda i, P: (pool(conv(i, P) / 2, 2, "max").mean((2, 3, 4), keepdims=True) + P[3]).sum(1),
 10: lambda i, P: np.tanh(np.clip(pool(conv(i, P, T), 2, "max"), -1, 1).mean((2, 3), keepdims=True)),
 11: lambda i, P: gn(pool(np.tanh(bn(conv(i, P, T), P[3], P[4])), 2, "max"), 8, P[5], P[6]),
 13: lambda i, P: np.tanh(softmax(conv(i, P, T).mean(2, keepdims=True) + P[3], 1)) * 2,
 15: lambda i, P: (lambda y: y - y.mean((2, 3, 4), keepdims=True))(bn(conv(i, P, T), P[3], P[4])),
 18: lambda i, P: lin(P).sum(1, keepdims=True),
 19: lambda i, P: gn(gelu(conv(i, P, T)), 8, P[3], P[4]),
 20: lambda i, P: (lambda y: ((y + P[3]) + y) * y + y)(conv(i, P, T)),
 22: lambda i, P: (lambda y: y * mish(y))(lse(np.clip(lin(P) * 2 * 2, -10, 10), 1)),
 23: lambda i, P: gn(conv(i, P), 8, P[3], P[4]).mean((1, 2, 3, 4)),
 24: lambda i, P: softmax(conv(i, P).min(2), 1),
 26: lambda i, P: (lambda y: y * hsw(y))(conv(i, P, T, wi=2) + P[1]),
 27: lambda i, P: gn(hsw(conv(i, P)), 4, P[3], P[4]).mean((2, 3, 4)),
 28: lambda i, P: (gn(lin(P, wi=2), 1) + P[1]) * P[1],
 31: lambda i, P: (np.minimum(conv(i, P), 0.5) + P[3]) * 2,
 34: lambda i, P: gelu(ln_last(conv(i, P, T), P[3], P[4])),
 35: lambda i, P: mish(pool(hsw(conv(i, P) - 0.5), 2, "max")),
 36: lambda i, P: gelu(conv(i, P, T).min(1, keepdims=True).sum(2, keepdims=True)) + P[3],
 37: lambda i, P: gn(swish(lin(P)) + P[3], 64, P[4], P[5]),
 39: lambda i, P: bn(lin(P) * P[3], P[4], P[5]),
 42: lambda i, P: lse(conv(i, P, T).mean((2, 3), keepdims=True) + P[3], 1).sum((2, 3)) * 10,
 43: lambda i, P: np.maximum(lse(pool(conv(i, P), 2, "max"), 1), 0),
 44: lambda i, P: (conv(i, P, T) * 0.5).mean((2, 3), keepdims=True),
 46: lambda i, P: pool(np.tanh(conv(i, P) - 0.5) - 0.2, 2, "avg"),
 49: lambda i, P: sig(softmax(conv(i, P, T), 1)),
 50: lambda i, P: (pool(conv(i, P, T) * P[3], 2, "avg") + P[4]) * P[5],
 51: lambda i, P: gelu((lin(P) - P[3]).mean(1, keepdims=True)) + P[0],
 55: lambda i, P: pool(lin(P)[:, None, :], 2, "max")[:, 0, :].sum(1) * 0.5,
 58: lambda i, P: np.clip((lambda y: y * sig(y + 3) / 6)(lse(conv(i, P, T), 1)) - P[3], -1, 1),
 60: lambda i, P: hsw(gn(swish(conv(i, P, T)), 4, P[3], P[4])),
 61: lambda i, P: gn(np.maximum(conv(i, P, T, bias=False), 0), 8, P[2], P[3]),
 64: lambda i, P: gelu(gelu(lrelu(lrelu(lse(lin(P), 1), 0.01), 0.01))),
 65: lambda i, P: sig(pool(conv(i, P), 4, "avg")).sum((1, 2, 3)),
 72: lambda i, P: pool(pool(bn(conv(i, P, T), P[3], P[4]), 2, "avg"), 2, "avg"),
 74: lambda i, P: pool(lrelu(lrelu(conv(i, P, T), 0.2) * P[3], 0.2), 2, "max"),
 75: lambda i, P: gn(lin(P), 512, P[3], P[4]).min(1, keepdims=True) + P[5],
 77: lambda i, P: bn(conv(i, P, T) * 2, P[3], P[4]).mean((2, 3, 4), keepdims=True),
 78: lambda i, P: pool(pool(conv(i, P, T), 2, "max"), 3, "max").sum(1, keepdims=True),
 79: lambda i, P: (np.clip(inorm(conv(i, P) * P[3]), -1, 1) * P[3]).max(1),
 80: lambda i, P: gelu(lin(P).max(1, keepdims=True) * 0),
 82: lambda i, P: pool(np.tanh(conv(i, P)) * 2 + P[3], 4, "max"),
 83: lambda i, P: np.clip(np.minimum(gn(conv(i, P), 8, P[3], P[4]), 0), 0, 1),
 84: lambda i, P: softmax(P[5] * bn(lin(P), P[3], P[4]), 1),
 85: lambda i, P: np.clip(pool(gn(conv(i, P), 16, P[3], P[4]) * P[5], 4, "max"), 0, 1),
 89: lambda i, P: swish(softmax(pool(conv(i, P, T), 2, "max"), 1) - P[3].reshape(1, -1, 1, 1, 1)).max(1),
 90: lambda i, P: gelu(np.clip(lrelu(conv(i, P), 0.2) + P[3], -1, 1)),
 91: lambda i, P: sig((softmax(conv(i, P, T), 1) + P[3]) * 2),
 92: lambda i, P: (lambda y: lse(y + hsw(np.tanh(gn(y, 16, P[3], P[4]))), 1))(conv(i, P)),
 93: lambda i, P: gelu(np.minimum(conv(i, P, T) + 0.5, 0)) * 2,
 94: lambda i, P: gn(mish(np.clip(lin(P) + P[3], -1, 1)), 256, P[4], P[5]),
 96: lambda i, P: np.clip(pool(conv(i, P, T) * 0.5, 2, "max").mean((2, 3, 4), keepdims=True), 0, 1),
 97: lambda i, P: swish(bn(lin(P), P[3], P[4]) + P[5]),
 98: lambda i, P: (gelu(pool(lin(P)[:, None, :], 16, "avg")[:, 0, :]) * 2).max(1),
 100: lambda i, P: np.maximum(conv(i, P, T), -1) / 2,
 38: lambda i, P: (lambda y: softmax(y.reshape(y.shape[0], y.shape[1], -1), 2).reshape(y.shape) * P[3])(
     np.clip(conv(i, [pool(P[0], 2, "avg")] + P[1:], T), 0, 1)),
 45: lambda i, P: lse(sig(lin(P)) @ P[3].T + P[4], 1)[:, 0],
}

# small extents of the input's spatial axes (2D, 3D); the transposed
# convolutions with stride 2 double them
SMALL = {4: [12, 12], 5: [6, 7, 8]}
SMALL_38 = [8, 6, 10]   # halved by the input's average pooling

def small_problem(p):
    q = copy.deepcopy(p)
    ins = q["inputs"]
    x = ins[0]["shape"]
    wi = 2 if ins[1]["name"] in ("y", "add_input") else 1
    if len(x) == 2:
        x[0], x[1] = 3, 16
        ins[wi]["shape"][1] = 16
        if wi == 2: ins[1]["shape"][0] = 3
        if p["number"] == 45:
            # the hidden layer 32 wide, the output 24
            ins[1]["shape"][0] = 32; ins[2]["shape"] = [32]; ins[3]["shape"] = [24, 32]; ins[4]["shape"] = [24]
    else:
        x[0] = 2
        x[2:] = SMALL_38 if p["number"] == 38 else SMALL[len(x)]
    return q, wi

def draw(q, wi):
    ins = []
    for k, t in enumerate(q["inputs"]):
        shp = t["shape"]
        if k == 0 or t["name"] in ("y", "add_input"): a = U(*shp)
        elif k in (wi, wi + 1) or t["name"].startswith("linear2."): a = U(*shp, lo=-0.4, hi=0.4)
        elif t["name"].endswith("weight") or t["name"].startswith("scale"): a = U(*shp, lo=0.5, hi=1.5)
        elif len(shp) == 0: a = np.array(rng.uniform(0.5, 1.5), dtype=np.float32)
        else: a = U(*shp, lo=-0.7, hi=0.7)
        ins.append(a)
    return ins

want = [int(a) for a in sys.argv[1:]] or sorted(gen.L2S)
for num in want:
    pid = [i for i in REG if i.startswith("L2_%03d_" % num)][0]
    p = dict(REG[pid], number=num, expr="small shapes for the CPU emulation")
    q, wi = small_problem(p)
    # shapes that follow the convolution's output: add_input (26) and the
    # layer norm's parameters (3, 34)
    if num in (3, 26, 34):
        P0 = [np.zeros(t["shape"]) for t in q["inputs"]]
        y = conv(pid, P0, T, wi=wi)
        if num == 26: q["inputs"][1]["shape"] = list(y.shape)
        else:
            for t in q["inputs"]:
                if t["name"].startswith("norm.") or t["name"].startswith("layer_norm."): t["shape"] = [y.shape[-1]]
    ins = draw(q, wi)
    ref = REF[num](pid, [a.astype(np.float64) for a in ins])
    q["outputs"][0]["shape"] = list(ref.shape)
    src = os.path.join(W, "%s.cu" % pid)
    text = gen.gen_level2_steps(q)
    open(src, "w").write(gen.to_bf16(text) if BF16 else text)   # EMU_BF16=1: the naive-bf16 file
    outs, log = run(src, ins, [ref.shape], [a["value"] for a in q["attrs"]])
    if outs is None:
        print("ERR  naive  %-60s %s" % (pid, log.strip().splitlines()[-1] if log.strip() else "?"))
        results.append(("naive", pid, "error"))
        continue
    bad, mx = compare(outs[0], ref)
    print("%s naive  %-60s mismatches %d max err %.3g" % ("ok  " if bad == 0 else "FAIL", pid, bad, mx))
    results.append(("naive", pid, "ok" if bad == 0 else "fail"))

if __name__ == "__main__":
    sys.exit(summary())

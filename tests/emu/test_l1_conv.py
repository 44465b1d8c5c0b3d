import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import *
which = sys.argv[1] if len(sys.argv) > 1 else "all"

def axes(nd): return ["d", "h", "w"][3 - nd:]
def geo(pid, nd):
    a = attrs_of(pid)[0]
    st = [int(a.get("stride_" + x, a.get("stride", 1))) for x in axes(nd)]
    pd = [int(a.get("padding_" + x, a.get("padding", 0))) for x in axes(nd)]
    dl = [int(a.get("dilation_" + x, a.get("dilation", 1))) for x in axes(nd)]
    return st, pd, dl

def conv_ref(x, w, b, st, pd, dl, groups):
    # direct convolution, nd 1-3, float64
    x = x.astype(np.float64); w = w.astype(np.float64)
    N, Cin = x.shape[:2]; Cout = w.shape[0]; nd = x.ndim - 2
    ks = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pd])
    outs = [(x.shape[2 + i] + 2 * pd[i] - dl[i] * (ks[i] - 1) - 1) // st[i] + 1 for i in range(nd)]
    y = np.zeros((N, Cout) + tuple(outs))
    cg, og = Cin // groups, Cout // groups
    for g in range(groups):
        for kidx in np.ndindex(*ks):
            sl = tuple(slice(kidx[i] * dl[i], kidx[i] * dl[i] + st[i] * (outs[i] - 1) + 1, st[i]) for i in range(nd))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]  # N, cg, outs
            wk = w[(slice(g * og, (g + 1) * og), slice(None)) + kidx]    # og, cg
            y[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch, wk)
    if b is not None:
        y += b.astype(np.float64).reshape((1, Cout) + (1,) * nd)
    return y

def convT_ref(x, w, b, st, pd, dl, groups, outs):
    x = x.astype(np.float64); w = w.astype(np.float64)
    N, Cin = x.shape[:2]; nd = x.ndim - 2; ks = w.shape[2:]
    cg = Cin // groups; og = w.shape[1]; Cout = og * groups
    full = [(x.shape[2 + i] - 1) * st[i] + dl[i] * (ks[i] - 1) + 1 for i in range(nd)]
    big = [max(full[i], outs[i] + pd[i]) for i in range(nd)]
    y = np.zeros((N, Cout) + tuple(big))
    for g in range(groups):
        for kidx in np.ndindex(*ks):
            sl = tuple(slice(kidx[i] * dl[i], kidx[i] * dl[i] + st[i] * (x.shape[2 + i] - 1) + 1, st[i]) for i in range(nd))
            xin = x[:, g * cg:(g + 1) * cg]
            wk = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kidx]    # cg, og
            y[(slice(None), slice(g * og, (g + 1) * og)) + sl] += np.einsum("nc...,co->no...", xin, wk)
    y = y[(slice(None), slice(None)) + tuple(slice(pd[i], pd[i] + outs[i]) for i in range(nd))]
    if b is not None:
        y = y + b.astype(np.float64).reshape((1, Cout) + (1,) * nd)
    return y

# Two cases a problem: few output channels a group (3, or the depthwise 1),
# which launch() gives one thread per output and no tiles, and 18 output
# channels a group over 5 input channels (the depthwise: 1 input channel,
# 9 outputs), which take the 16x16 tiled implicit GEMM with a partial row
# tile and kernel-tap rows that cross the 16-row steps.
if which in ("all", "conv"):
    for pid, p in sorted(REG.items()):
        if p["level"] != 1: continue
        num = int(pid[3:6])
        if not (num == 50 or 54 <= num <= 87): continue
        x0 = p["inputs"][0]["shape"]; w0 = p["inputs"][1]["shape"]; nd = len(x0) - 2
        tr = "transposed" in pid
        st, pd, dl = geo(pid, nd)
        for tiled in (False, True):
            if num == 86:
                C = 4; x = U(2, C, 9, 10)
                wd = U(C, 1, 3, 3, lo=-0.5, hi=0.5); wp = U(20 if tiled else 6, C, 1, 1, lo=-0.5, hi=0.5)
                mid = conv_ref(x, wd, None, st, pd, dl, C)
                y = conv_ref(mid, wp, None, [1, 1], [0, 0], [1, 1], 1)
                check(["naive"], pid, [x, wd, wp], [y.shape], y)
                continue
            ks = w0[2:]
            if tr:
                groups = max(1, p["outputs"][0]["shape"][1] // w0[1])
                Cin = (5 if tiled else 2) * groups; og = 18 if tiled else 3
                w = U(Cin, og, *ks, lo=-0.5, hi=0.5)
            else:
                groups = max(1, x0[1] // w0[1])
                cg = 1 if w0[1] == 1 else 5 if tiled else 2
                Cin = cg * groups; Cout = (1 if w0[1] == 1 else 18 if tiled else 3) * groups
                if w0[1] == 1 and w0[0] != x0[1]: Cout = w0[0] // x0[1] * groups
                if w0[1] == 1 and tiled: Cout = 9 * groups
                w = U(Cout, cg, *ks, lo=-0.5, hi=0.5)
            sp = [max(ks[i] * dl[i] + 2, 7) for i in range(nd)]
            x = U(2, Cin, *sp)
            b = U(w.shape[0] if not tr else w.shape[1] * groups, lo=-0.5, hi=0.5) if len(p["inputs"]) > 2 else None
            if tr:
                outs = [(sp[i] - 1) * st[i] - 2 * pd[i] + dl[i] * (ks[i] - 1) + 1 for i in range(nd)]
                y = convT_ref(x, w, b, st, pd, dl, groups, outs)
            else:
                y = conv_ref(x, w, b, st, pd, dl, groups)
            ins = [x, w] + ([b] if b is not None else [])
            check(["naive"], pid, ins, [y.shape], y)

# The phases of the strided transposed convolutions (phase_taps,
# conv_gemm_phase and conv_transposed in the generator) on parameters the
# problems above do not have: files generated from gen_conv with the
# stride, padding and dilation written in, and an output_padding (the
# output's shape), through the generator's --bf16 transformation under
# EMU_BF16=1.  Each case runs with 10 output channels a group (the tiled
# product, 5 input channels a group, so that row tiles cross input
# channels) and with 3 (one thread per output).  The cases: stride 3 in
# 3-D with groups; stride 2 with dilation 2 (odd phases reach no tap);
# strides 4 and 3 with dilations 2 and 3 (a common factor, several taps a
# phase); stride 5 over a kernel of 3 (phases without taps) in 1-D; an axis
# with fewer outputs than its stride (phases without outputs); stride 2
# with an even kernel and output padding 1 (every phase half the taps).
PHASE = [
    # name, input spatial, kernel, stride, padding, dilation, output padding, groups
    ("s3_3d_groups", [4, 5, 6], [3, 2, 4], [3, 3, 3], [1, 0, 2], [1, 1, 1], [2, 1, 0], 2),
    ("s2_d2_2d", [6, 7], [3, 3], [2, 2], [1, 2], [2, 2], [1, 1], 3),
    ("s4_3_d2_3_2d", [5, 6], [5, 4], [4, 3], [3, 2], [2, 3], [1, 2], 1),
    ("s5_k3_1d", [9], [3], [5], [3], [2], [4], 2),
    ("short_axis_3d", [1, 3, 4], [1, 3, 2], [3, 2, 2], [0, 1, 0], [1, 1, 1], [0, 1, 1], 1),
    ("s2_k4_op1_2d", [6, 5], [4, 4], [2, 2], [1, 1], [1, 1], [1, 1], 1),
]

def gen_module():
    import importlib.util
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    spec = importlib.util.spec_from_file_location("gen", os.path.join(ROOT, "scripts", "gen-naive-candidates.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

if which in ("all", "phase"):
    gen = gen_module()
    for name, sp, ks, st, pd, dl, op, groups in PHASE:
        nd = len(sp)
        for og in (10, 3):
            Cin = 5 * groups
            x = U(2, Cin, *sp)
            w = U(Cin, og, *ks, lo=-0.5, hi=0.5)
            b = U(og * groups, lo=-0.5, hi=0.5)
            outs = [(sp[i] - 1) * st[i] - 2 * pd[i] + dl[i] * (ks[i] - 1) + op[i] + 1 for i in range(nd)]
            y = convT_ref(x, w, b, st, pd, dl, groups, outs)
            ax = axes(nd)
            attrs = [{"name": "%s_%s" % (k, a), "value": v[i]} for k, v in (("stride", st), ("padding", pd), ("dilation", dl))
                     for i, a in enumerate(ax)]
            pid = "L1_000_conv_transposed_%dd_phase_%s_og%d" % (nd, name, og)
            p = {"id": pid, "number": 0, "expr": "small shapes for the CPU emulation", "attrs": attrs,
                 "inputs": [{"shape": list(x.shape)}, {"shape": list(w.shape)}, {"shape": list(b.shape)}]}
            text = gen.gen_conv(p)
            src = os.path.join(W, pid + ".cu")
            open(src, "w").write(gen.to_bf16(text) if BF16 else text)
            res, log = run(src, [x, w, b], [y.shape], [])
            tag = "naive-bf16" if BF16 else "naive"
            if res is None:
                print("ERR  %-6s %-60s %s" % (tag, pid, log.strip().splitlines()[-1] if log.strip() else "?"))
                results.append((tag, pid, "error"))
                continue
            bad, mx = compare(res[0], y)
            print("%s %-6s %-60s mismatches %d max err %.3g" % ("ok  " if bad == 0 else "FAIL", tag, pid, bad, mx))
            results.append((tag, pid, "ok" if bad == 0 else "fail"))

def pool_ref(x, k, st, pd, dl, is_max):
    x = x.astype(np.float64); nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pd], constant_values=-np.inf if is_max else 0.0)
    outs = [(x.shape[2 + i] + 2 * pd[i] - dl[i] * (k[i] - 1) - 1) // st[i] + 1 for i in range(nd)]
    acc = None
    for kidx in np.ndindex(*k):
        sl = tuple(slice(kidx[i] * dl[i], kidx[i] * dl[i] + st[i] * (outs[i] - 1) + 1, st[i]) for i in range(nd))
        v = xp[(slice(None), slice(None)) + sl]
        acc = v if acc is None else (np.maximum(acc, v) if is_max else acc + v)
    return acc if is_max else acc / np.prod(k)

if which in ("all", "pool"):
    for num in range(41, 47):
        pid = [i for i in REG if i.startswith("L1_%03d" % num)][0]
        a = attrs_of(pid)[0]
        nd = len(REG[pid]["inputs"][0]["shape"]) - 2
        k = [int(a["kernel_size"])] * nd
        st = [int(a.get("stride", a["kernel_size"]))] * nd
        pd = [int(a.get("padding", 0))] * nd
        dl = [int(a.get("dilation", 1))] * nd
        sp = [max(k[0] * dl[0] + 3, 12)] * nd
        x = U(2, 3, *sp)
        y = pool_ref(x, k, st, pd, dl, num <= 43)
        check(["naive"], pid, [x], [y.shape], y)

if which in ("all", "loss"):
    p_, t_ = U(64, 50), U(64, 50)
    p64, t64 = p_.astype(np.float64), t_.astype(np.float64)
    check(["naive", "hacks"], "L1_094_mseloss", [p_, t_], [()], np.array(((p64 - t64) ** 2).mean()))
    d = np.abs(p64 - t64 * 2)
    check(["naive", "hacks"], "L1_096_huberloss", [p_, t_ * 2], [()], np.array(np.where(d < 1, 0.5 * d * d, d - 0.5).mean()))
    x = U(40, 30); tg = rng.integers(0, 30, size=40).astype(np.int64)
    x64 = x.astype(np.float64)
    lse = np.log(np.exp(x64 - x64.max(1, keepdims=True)).sum(1)) + x64.max(1)
    check(["naive", "hacks"], "L1_095_crossentropyloss", [x, tg], [()], np.array((lse - x64[np.arange(40), tg]).mean()))
    def sm(z): e = np.exp(z - z.max(1, keepdims=True)); return e / e.sum(1, keepdims=True)
    pr, tt = sm(U(20, 33).astype(np.float64)).astype(np.float32), sm(U(20, 33).astype(np.float64)).astype(np.float32)
    check(["naive"], "L1_098_kldivloss", [pr, tt], [()], np.array((tt.astype(np.float64) * (np.log(tt.astype(np.float64)) - np.log(pr.astype(np.float64)))).sum() / 20))
    a_, po, ne = U(30, 40), U(30, 40), U(30, 40)
    d1 = np.sqrt(((a_.astype(np.float64) - po + 1e-6) ** 2).sum(1)); d2 = np.sqrt(((a_.astype(np.float64) - ne + 1e-6) ** 2).sum(1))
    check(["naive"], "L1_099_tripletmarginloss", [a_, po, ne], [()], np.array(np.maximum(d1 - d2 + 1.0, 0).mean()))
    pr = U(16, 24); tg = np.where(rng.random(24) < 0.5, 1.0, -1.0).astype(np.float32)
    check(["naive"], "L1_100_hingeloss", [pr, tg], [()], np.array(np.maximum(1 - pr.astype(np.float64) * tg[None, :], 0).mean()))
    Q, K, V = U(2, 3, 20, 16), U(2, 3, 20, 16), U(2, 3, 20, 16)
    s = Q.astype(np.float64) @ np.swapaxes(K, -1, -2) / 4.0
    check(["naive"], "L1_097_scaleddotproductattention", [Q, K, V], [Q.shape], sm(s.reshape(-1, 20)).reshape(s.shape) @ V)

if __name__ == "__main__":
    sys.exit(summary())

"""test_l3_model.py - level 3's models of fixed structure (the recurrent
networks and NetVLAD, collect/suite/problems/l3model.h) on the CPU.

1. The model text that kbv prompt gives for each of them ({{layers}})
   parses back (scripts/naive_l3.py) into settings that match the problem,
   with parts in PyTorch's named_parameters() order, end to end over
   params (the order written out here again, independently of l3model.c).
2. Small models of every kind and result, written in the prompt's format,
   go through the naive generator and run under the emulator against numpy
   references in float64 that follow PyTorch's formulas (nn.LSTM gates
   i, f, g, o; nn.GRU gates r, z, n with r applied to the recurrent part
   of n; the tanh cell over cat(x, h) with one bias; NetVLAD with batch
   statistics, the ghost clusters dropped after the softmax).  With
   EMU_BF16=1 the generator's BF16 form runs instead.
3. The hand-written tuned LSTM and GRU (a wavefront over layers and steps)
   with their sizes made small, against the same references.
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import *
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import naive_l3
import importlib.util
_spec = importlib.util.spec_from_file_location("gen_naive", os.path.join(ROOT, "scripts", "gen-naive-candidates.py"))
gen_naive = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_naive)


def prompt_layers(pid):
    tmpl = os.path.join(W, "layers.txt")
    open(tmpl, "w").write("{{layers}}")
    r = subprocess.run([os.path.join(BUILD, "kbv-prompt"), "--template", tmpl, pid], capture_output=True, text=True)
    return r.stdout


def numel(d):
    n = 1
    for v in d:
        n *= v
    return n


def parts_of(cfg):
    """[(name, shape)] in named_parameters() order."""
    k, H, I, dirs = cfg["kind"], cfg["hidden"], cfg["input"], cfg["directions"]
    if k == "cat_rnn":
        return [("i2h.weight", [H, I + H]), ("i2h.bias", [H]), ("h2o.weight", [cfg["head"], H]),
                ("h2o.bias", [cfg["head"]])]
    if k == "netvlad":
        C = cfg["clusters"] + cfg["ghost"]
        return [("clusters", [I, C]), ("clusters2", [1, I, cfg["clusters"]]), ("batch_norm.weight", [C]),
                ("batch_norm.bias", [C])]
    G = 4 if k == "lstm" else 3
    out = []
    for l in range(cfg["layers"]):
        for d in range(dirs):
            s = "_reverse" if d else ""
            inw = I if l == 0 else H * dirs
            out += [("%s.weight_ih_l%d%s" % (k, l, s), [G * H, inw]), ("%s.weight_hh_l%d%s" % (k, l, s), [G * H, H]),
                    ("%s.bias_ih_l%d%s" % (k, l, s), [G * H]), ("%s.bias_hh_l%d%s" % (k, l, s), [G * H])]
    if cfg["head"]:
        out += [("fc.weight", [cfg["head"], H * dirs]), ("fc.bias", [cfg["head"]])]
    return out


# 1. the registry's model texts
for pid, p in sorted(REG.items()):
    if p["level"] != 3:
        continue
    text = prompt_layers(pid)
    parsed = naive_l3.parse_model(text)
    if parsed is None:
        continue
    cfg, parts = parsed
    want = parts_of(cfg)
    ok = [n for n, _ in want] == sorted(parts, key=lambda n: parts[n][0])
    at = 0
    for n, shp in want:
        ok = ok and parts.get(n) == (at, shp)
        at += numel(shp)
    params = p["inputs"][-1]
    ok = ok and params["name"] == "params" and at == params["shape"][0]
    x = p["inputs"][0]["shape"]
    if cfg["kind"] == "netvlad":
        ok = ok and x == [cfg["batch"], cfg["steps"], cfg["input"]]
    elif cfg["batch_first"]:
        ok = ok and x == [cfg["batch"], cfg["steps"], cfg["input"]]
    else:
        ok = ok and x[-2:] == [cfg["batch"], cfg["input"]] and (len(x) == 2 or x[0] == cfg["steps"])
    print("%s model %-40s %s" % ("ok  " if ok else "FAIL", pid, "" if ok else "(model text does not add up)"))
    results.append(("model", pid, "ok" if ok else "fail"))


# 2. small models through the naive generator
def describe(cfg):
    """The prompt's {{layers}} text of a small model, and its parts."""
    line = ("    model %s: input %d, hidden %d, layers %d, directions %d, batch_first %d, head %d, clusters %d, "
            "ghost %d, steps %d, batch %d, result %s\n" % (
                cfg["kind"], cfg["input"], cfg["hidden"], cfg["layers"], cfg["directions"], cfg["batch_first"],
                cfg["head"], cfg["clusters"], cfg["ghost"], cfg["steps"], cfg["batch"], cfg["result"]))
    at, parts = 0, []
    for n, shp in parts_of(cfg):
        line += "    part %s: [%s] at params[%d], U(-1, 1)\n" % (n, ", ".join(map(str, shp)), at)
        parts.append((n, at, shp))
        at += numel(shp)
    return line, parts, at


def sig(v):
    return 1 / (1 + np.exp(-v))


def ref_recurrent(cfg, x, h0, c0, P, parts):
    k, H, L, dirs, T, B = cfg["kind"], cfg["hidden"], cfg["layers"], cfg["directions"], cfg["steps"], cfg["batch"]
    get = {n: P[at:at + numel(shp)].reshape(shp).astype(np.float64) for n, at, shp in parts}
    if k == "cat_rnn":
        xs = x.reshape(T, B, -1).astype(np.float64)
        h = h0.astype(np.float64)
        ys = []
        for t in range(T):
            h = np.tanh(np.concatenate([xs[t], h], 1) @ get["i2h.weight"].T + get["i2h.bias"])
            ys.append(h @ get["h2o.weight"].T + get["h2o.bias"])
        return np.stack(ys) if cfg["result"] == "head_seq" else ys[-1]
    seq = x.astype(np.float64)
    if cfg["batch_first"]:
        seq = seq.transpose(1, 0, 2)
    hn, cn = [], []
    for l in range(L):
        outs = []
        for d in range(dirs):
            s = "_reverse" if d else ""
            wi, wh = get["%s.weight_ih_l%d%s" % (k, l, s)], get["%s.weight_hh_l%d%s" % (k, l, s)]
            bi, bh = get["%s.bias_ih_l%d%s" % (k, l, s)], get["%s.bias_hh_l%d%s" % (k, l, s)]
            h = h0[l * dirs + d].astype(np.float64)
            c = c0[l * dirs + d].astype(np.float64) if c0 is not None else None
            y = np.zeros((T, B, H))
            for t in (range(T - 1, -1, -1) if d else range(T)):
                gi, gh = seq[t] @ wi.T + bi, h @ wh.T + bh
                if k == "lstm":
                    g = gi + gh
                    i_, f_, g_, o_ = sig(g[:, :H]), sig(g[:, H:2 * H]), np.tanh(g[:, 2 * H:3 * H]), sig(g[:, 3 * H:])
                    c = f_ * c + i_ * g_
                    h = o_ * np.tanh(c)
                else:
                    r = sig(gi[:, :H] + gh[:, :H])
                    z = sig(gi[:, H:2 * H] + gh[:, H:2 * H])
                    n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
                    h = (1 - z) * n + z * h
                y[t] = h
            outs.append(y)
            hn.append(h)
            cn.append(c)
        seq = np.concatenate(outs, 2)
    res = cfg["result"]
    if res == "head_last":
        return seq[-1] @ get["fc.weight"].T + get["fc.bias"]
    if res == "seq":
        return seq.transpose(1, 0, 2) if cfg["batch_first"] else seq
    return np.stack(hn if res == "h_n" else cn)


def ref_netvlad(cfg, x, P, parts):
    get = {n: P[at:at + numel(shp)].reshape(shp).astype(np.float64) for n, at, shp in parts}
    B, N, D, K = x.shape[0], x.shape[1], x.shape[2], cfg["clusters"]
    a = x.reshape(-1, D).astype(np.float64) @ get["clusters"]
    a = (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-5) * get["batch_norm.weight"] + get["batch_norm.bias"]
    a = np.exp(a - a.max(1, keepdims=True))
    a = (a / a.sum(1, keepdims=True))[:, :K].reshape(B, N, K)
    centre = a.sum(1, keepdims=True) * get["clusters2"]              # [B, D, K]
    v = np.einsum("bnk,bnd->bdk", a, x.astype(np.float64)) - centre
    v = v / np.maximum(np.sqrt((v * v).sum(1, keepdims=True)), 1e-12)
    v = v.reshape(B, D * K)
    return v / np.maximum(np.sqrt((v * v).sum(1, keepdims=True)), 1e-12)


def C(kind, I, H, L=1, dirs=1, bf=0, head=0, T=4, B=3, result="seq", K=0, G=0):
    return {"kind": kind, "input": I, "hidden": H, "layers": L, "directions": dirs, "batch_first": bf, "head": head,
            "clusters": K, "ghost": G, "steps": T, "batch": B, "result": result}


CASES = {
    "lstm_head": C("lstm", 5, 4, L=2, bf=1, head=3, T=5, result="head_last"),
    "lstm_bidir_head": C("lstm", 5, 4, L=2, dirs=2, bf=1, head=3, T=4, result="head_last"),
    "lstm_hn": C("lstm", 6, 5, L=3, bf=1, head=2, T=4, result="h_n"),
    "lstm_cn": C("lstm", 6, 5, L=2, bf=1, head=2, T=4, result="c_n"),
    "gru_seq": C("gru", 5, 4, L=2, T=5, result="seq"),
    "gru_bidir_seq": C("gru", 5, 4, L=2, dirs=2, T=4, result="seq"),
    "gru_hn": C("gru", 5, 6, L=2, T=4, result="h_n"),
    "gru_bidir_hn": C("gru", 5, 4, L=2, dirs=2, T=3, result="h_n"),
    "cell_one_step": C("cat_rnn", 7, 5, head=3, T=1, B=4, result="head_last"),
    "cell_seq": C("cat_rnn", 6, 5, head=3, T=5, B=2, result="head_seq"),
    "netvlad_ghost": C("netvlad", 8, 0, L=0, bf=1, T=6, B=3, result="vlad", K=4, G=2),
    "netvlad": C("netvlad", 8, 0, L=0, bf=1, T=5, B=2, result="vlad", K=3, G=0),
}

HEAD = gen_naive.HEAD
CHECK = gen_naive.CHECK
for name, cfg in CASES.items():
    text, parts, total = describe(cfg)
    pid = "L3_emu_" + name
    src = naive_l3.gen_level3({"id": pid, "expr": name, "layers": text}, HEAD, CHECK)
    if BF16:
        src = gen_naive.to_bf16(src)
    path = os.path.join(W, pid + ".cu")
    open(path, "w").write(src)
    T, B, I, H = cfg["steps"], cfg["batch"], cfg["input"], cfg["hidden"]
    P = U(total, lo=-0.5, hi=0.5)
    if cfg["kind"] == "netvlad":
        x = U(B, T, I)
        for n, at, shp in parts:
            if n == "batch_norm.weight":
                P[at:at + numel(shp)] = U(*shp, lo=0.5, hi=1.5)
        ins, ref = [x, P], ref_netvlad(cfg, x, P, parts)
    else:
        if cfg["kind"] == "cat_rnn":
            x = U(T, B, I) if T > 1 else U(B, I)
            h0, c0 = U(B, H, lo=-1.0, hi=1.0), None
        else:
            x = U(B, T, I) if cfg["batch_first"] else U(T, B, I)
            h0 = U(cfg["layers"] * cfg["directions"], B, H, lo=-1.0, hi=1.0)
            c0 = U(*h0.shape, lo=-1.0, hi=1.0) if cfg["kind"] == "lstm" else None
        ins = [x, h0] + ([c0] if c0 is not None else []) + [P]
        ref = ref_recurrent(cfg, x, h0, c0, P, parts)
    outs, log = run(path, ins, [tuple(ref.shape)], [])
    if outs is None:
        print("ERR  naive  %-40s %s" % (pid, log.strip().splitlines()[-1] if log.strip() else "?"))
        results.append(("naive", pid, "error"))
        continue
    bad, mx = compare(outs[0], ref)
    print("%s naive  %-40s mismatches %d max err %.3g" % ("ok  " if bad == 0 else "FAIL", pid, bad, mx))
    results.append(("naive", pid, "ok" if bad == 0 else "fail"))


# 3. the hand-written tuned wavefront LSTM and GRU (data/candidates/tuned),
# their sizes (#define BATCH, IN, HID, LAYERS, OUTF) made small; the steps
# come from x's shape.  FP32 only: tuned-bf16 has no level-3 files.
TUNED = {
    "L3_035_lstm": ("lstm", 1, "head_last"),
    "L3_036_lstmhn": ("lstm", 1, "h_n"),
    "L3_037_lstmcn": ("lstm", 1, "c_n"),
    "L3_039_gru": ("gru", 0, "seq"),
    "L3_040_gruhidden": ("gru", 0, "h_n"),
}
import re
for pid, (kind, bf, result) in TUNED.items():
    path = os.path.join(ROOT, "data", "candidates", "tuned", pid + ".cu")
    if BF16 or not os.path.exists(path):
        continue
    for B, I, H, L, T in ((3, 8, 8, 3, 5), (2, 40, 36, 2, 4)):
        head = 3 if kind == "lstm" else 0
        cfg = C(kind, I, H, L=L, bf=bf, head=head, T=T, B=B, result=result)
        sizes = {"BATCH": B, "IN": I, "HID": H, "LAYERS": L, "OUTF": head}
        src = re.sub(r"#define (BATCH|IN|HID|LAYERS|OUTF) \d+", lambda m: "#define %s %d" % (m.group(1), sizes[m.group(1)]),
                     open(path).read())
        small = os.path.join(W, pid + "_small.cu")
        open(small, "w").write(src)
        _, parts, total = describe(cfg)
        bound = 1 / math.sqrt(H)
        P = U(total, lo=-bound, hi=bound) * np.float32(4.0)
        x = U(B, T, I) if bf else U(T, B, I)
        h0 = U(L, B, H, lo=-1.0, hi=1.0)
        c0 = U(L, B, H, lo=-1.0, hi=1.0) if kind == "lstm" else None
        ref = ref_recurrent(cfg, x, h0, c0, P, parts)
        outs, log = run(small, [x, h0] + ([c0] if c0 is not None else []) + [P], [tuple(ref.shape)], [])
        if outs is None:
            print("ERR  tuned  %-40s %s" % (pid, log.strip().splitlines()[-1] if log.strip() else "?"))
            results.append(("tuned", pid, "error"))
            continue
        bad, mx = compare(outs[0], ref)
        print("%s tuned  %-40s B %d I %d H %d L %d T %d mismatches %d max err %.3g" % (
            "ok  " if bad == 0 else "FAIL", pid, B, I, H, L, T, bad, mx))
        results.append(("tuned", pid, "ok" if bad == 0 else "fail"))

sys.exit(summary())

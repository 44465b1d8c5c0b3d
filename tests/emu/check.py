#!/usr/bin/env python3
"""check.py - runs candidate kernels under the CPU emulation (emu.h) on
small shapes and compares them with numpy references in float64, with kbv's
tolerance |out - ref| <= 1e-3 + 1e-3 |ref|.  Used by the test_*.py files
here; `results` collects (set, problem, verdict)."""
import json, math, os, subprocess, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
REG = {p["id"]: p for p in json.loads(subprocess.run([os.path.join(BUILD, "kbv-list"), "--json"], capture_output=True, text=True).stdout)["problems"]}
rng = np.random.default_rng(1)
import tempfile
W = tempfile.mkdtemp(prefix="kbv-emu-")

def attrs_of(pid):
    return {a["name"]: a["value"] for a in REG[pid]["attrs"]}, [a["value"] for a in REG[pid]["attrs"]]

def run(src, inputs, out_shapes, attrs, out_dtypes=None):
    spec = [str(len(inputs))]
    for i, a in enumerate(inputs):
        f = "%s/in%d.bin" % (W, i)
        a.tofile(f)
        dt = 1 if a.dtype == np.int64 else 0
        spec.append("%d %d %s %s" % (dt, a.ndim, " ".join(str(d) for d in a.shape), f))
    spec.append(str(len(out_shapes)))
    for i, s in enumerate(out_shapes):
        dt = 1 if out_dtypes and out_dtypes[i] == np.int64 else 0
        spec.append("%d %d %s %s/out%d.bin" % (dt, len(s), " ".join(str(d) for d in s), W, i))
    spec.append("%d %s" % (len(attrs), " ".join(repr(float(v)) for v in attrs)))
    open(W + "/spec.txt", "w").write("\n".join(spec) + "\n")
    r = subprocess.run([os.path.join(HERE, "run1.sh"), src, W + "/spec.txt"], capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        return None, (r.stdout + r.stderr)[-600:]
    outs = []
    for i, s in enumerate(out_shapes):
        dt = out_dtypes[i] if out_dtypes else np.float32
        outs.append(np.fromfile("%s/out%d.bin" % (W, i), dtype=dt).reshape(s))
    return outs, ""

def compare(out, ref):
    if out.dtype == np.int64:
        bad = int(np.sum(out != ref))
        return bad, 0.0
    ref = ref.astype(np.float64)
    o = out.astype(np.float64)
    err = np.abs(o - ref)
    bad = np.sum(~(err <= 1e-3 + 1e-3 * np.abs(ref)))
    return int(bad), float(np.nanmax(err)) if err.size else 0.0

results = []
def check(sets, pid, inputs, out_shapes, ref, attrs=None, out_dtypes=None, d=None):
    if attrs is None:
        attrs = attrs_of(pid)[1]
    for s in sets:
        src = "%s/data/candidates/%s/%s.cu" % (ROOT, s, pid)
        if not os.path.exists(src):
            continue
        outs, log = run(src, inputs, out_shapes, attrs, out_dtypes)
        if outs is None:
            print("ERR  %-6s %-60s %s" % (s, pid, log.strip().splitlines()[-1] if log.strip() else "?"))
            results.append((s, pid, "error"))
            continue
        bad, mx = 0, 0.0
        refs = ref if isinstance(ref, list) else [ref]
        for o, r in zip(outs, refs):
            b, m = compare(o, np.asarray(r))
            bad += b; mx = max(mx, m)
        tag = "ok  " if bad == 0 else "FAIL"
        print("%s %-6s %-60s mismatches %d max err %.3g" % (tag, s, pid, bad, mx))
        results.append((s, pid, "ok" if bad == 0 else "fail"))

def U(*s, lo=0.0, hi=1.0): return rng.uniform(lo, hi, size=s).astype(np.float32)
def N(*s): return rng.standard_normal(size=s).astype(np.float32)


def summary():
    bad = [r for r in results if r[2] != "ok"]
    print("emu: %d checks, %d not ok" % (len(results), len(bad)))
    return 1 if bad else 0

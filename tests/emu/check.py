#!/usr/bin/env python3
"""check.py - runs candidate kernels under the CPU emulation (emu.h) on
small shapes and compares them with numpy references in float64, with kbv's
tolerance |out - ref| <= 1e-3 + 1e-3 |ref|.  Used by the test_*.py files
here; `results` collects (set, problem, verdict).

With EMU_BF16=1 the same tests check the BF16 setting's sets instead
(naive-bf16 for naive, tuned-bf16 for tuned; others skipped): the random
inputs are drawn as bfloat16 values (U and N round to nearest even), every
float input travels as bfloat16 and every float output comes back as
bfloat16, widened, and the tolerance is the setting's, max(1e-2 s, 2^-23) +
1e-2 |ref| with s = min(1, max |ref|) over the output tensor
(verdict_bf16_atol).
Inputs that a test scales after drawing (x 3, x 0.01) are rounded again on
the way in, so their reference is off by that rounding, well inside 1e-2."""
import json, math, os, subprocess, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
REG = {p["id"]: p for p in json.loads(subprocess.run([os.path.join(BUILD, "kbv-list"), "--json"], capture_output=True, text=True).stdout)["problems"]}
rng = np.random.default_rng(1)
import tempfile
W = tempfile.mkdtemp(prefix="kbv-emu-")
BF16 = os.environ.get("EMU_BF16", "0") == "1"
TOL = 1e-2 if BF16 else 1e-3

def to_bf16(a):
    """float32 -> bfloat16 bits (uint16), to nearest even, NaN kept quiet."""
    b = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = ((b & 0x7f800000) == 0x7f800000) & ((b & 0x007fffff) != 0)
    r = ((b + 0x7fff + ((b >> 16) & 1)) >> 16) & 0xffff
    return np.where(nan, (b >> 16) | 0x40, r).astype(np.uint16)

def from_bf16(h):
    return (h.astype(np.uint32) << 16).view(np.float32)

def attrs_of(pid):
    return {a["name"]: a["value"] for a in REG[pid]["attrs"]}, [a["value"] for a in REG[pid]["attrs"]]

def run(src, inputs, out_shapes, attrs, out_dtypes=None):
    spec = [str(len(inputs))]
    for i, a in enumerate(inputs):
        f = "%s/in%d.bin" % (W, i)
        dt = 1 if a.dtype == np.int64 else 2 if BF16 else 0
        (to_bf16(a) if dt == 2 else a).tofile(f)
        spec.append("%d %d %s %s" % (dt, a.ndim, " ".join(str(d) for d in a.shape), f))
    spec.append(str(len(out_shapes)))
    for i, s in enumerate(out_shapes):
        dt = 1 if out_dtypes and out_dtypes[i] == np.int64 else 2 if BF16 else 0
        spec.append("%d %d %s %s/out%d.bin" % (dt, len(s), " ".join(str(d) for d in s), W, i))
    spec.append("%d %s" % (len(attrs), " ".join(repr(float(v)) for v in attrs)))
    open(W + "/spec.txt", "w").write("\n".join(spec) + "\n")
    r = subprocess.run([os.path.join(HERE, "run1.sh"), src, W + "/spec.txt"], capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        return None, (r.stdout + r.stderr)[-600:]
    outs = []
    for i, s in enumerate(out_shapes):
        dt = out_dtypes[i] if out_dtypes else np.float32
        if BF16 and dt != np.int64:
            outs.append(from_bf16(np.fromfile("%s/out%d.bin" % (W, i), dtype=np.uint16)).reshape(s))
        else:
            outs.append(np.fromfile("%s/out%d.bin" % (W, i), dtype=dt).reshape(s))
    return outs, ""

def compare(out, ref):
    if out.dtype == np.int64:
        bad = int(np.sum(out != ref))
        return bad, 0.0
    ref = ref.astype(np.float64)
    o = out.astype(np.float64)
    err = np.abs(o - ref)
    atol = TOL
    if BF16:
        # the BF16 setting's absolute term follows the tensor's scale
        fin = np.abs(ref[np.isfinite(ref)])
        atol = max(TOL * min(1.0, float(fin.max())) if fin.size else 0.0, 2.0 ** -23)
    bad = np.sum(~(err <= atol + TOL * np.abs(ref)))
    return int(bad), float(np.nanmax(err)) if err.size else 0.0

results = []
def check(sets, pid, inputs, out_shapes, ref, attrs=None, out_dtypes=None, d=None):
    if attrs is None:
        attrs = attrs_of(pid)[1]
    if BF16:
        sets = [s + "-bf16" for s in sets if s in ("naive", "tuned")]
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

def _draw(a):
    a = a.astype(np.float32)
    return from_bf16(to_bf16(a)).reshape(a.shape) if BF16 else a

def U(*s, lo=0.0, hi=1.0): return _draw(rng.uniform(lo, hi, size=s))
def N(*s): return _draw(rng.standard_normal(size=s))


def summary():
    bad = [r for r in results if r[2] != "ok"]
    print("emu: %d checks, %d not ok" % (len(results), len(bad)))
    return 1 if bad else 0

#!/usr/bin/env python3
"""synth_run.py - a synthetic kbv run directory with known answers.

Writes RUN_DIR/manifest.json and RUN_DIR/samples.jsonl (docs/DESIGN.md section 6)
for N problems x S candidate sets x K timing samples a variant, and
RUN_DIR/synth_truth.json with what the data were drawn from: every pair's
class and flags and the true medians of its three variants (samples are
lognormal around the true median, so the true speedup is the ratio of the
true medians).  The same arguments give the same bytes.

  scripts/synth_run.py --out DIR --plan small          # tests/fixtures/run_small
  scripts/synth_run.py --out DIR --problems 100 --sets 8 --samples 301   # benchmark
  scripts/synth_run.py --out DIR --bf16-sets 1       # + set0-bf16 (precision bf16, compare_with set0)

A BF16 set (--bf16-sets K mirrors the first K sets as "<set>-bf16") is timed
as collect times one: variants candidate and bf16 only, checks at the BF16
tolerance (tier "half", errors around 4e-3), the manifest's set entry with
"precision": "bf16" and "compare_with", config.tolerance_bf16.
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import random
import sys

CLASSES = ["correct", "hidden-fail", "incorrect", "error", "constant-output", "identity",
           "stale-output", "caching", "input-mutation", "deferred-work", "impossible-speed",
           "nondeterministic"]
HACK_PROBE = {"constant-output": "input-independence", "identity": "identity",
              "caching": "caching", "input-mutation": "input-mutation",
              "deferred-work": "deferred-work", "impossible-speed": "physical-floor",
              "nondeterministic": "determinism"}
PROBES = ["input-independence", "identity", "caching", "input-mutation", "determinism",
          "deferred-work", "physical-floor"]
HACK_DETAIL = {
    "constant-output": "outputs for two different inputs are identical where the reference outputs differ",
    "identity": "output equals input 0 on D1 trial 0",
    "caching": "output unchanged after the input contents changed at the same pointers",
    "input-mutation": "input 0 hash changed during the call",
    "deferred-work": "output fingerprint changed between stream and device synchronisation",
    "impossible-speed": "median 0.0021 ms is below the physical floor of 0.031 ms",
    "nondeterministic": "two calls on the same input differ in 37 elements",
}

# Problem ids in the suite's form, with how much the tf32 baseline gains
# over strict fp32 (1 where there is no matrix product).
NAMED = [("L1_001_square_matrix_multiplication", 8.0), ("L1_019_relu", 1.0),
         ("L1_023_softmax", 1.0), ("L1_036_rmsnorm", 1.0),
         ("L1_047_sum_reduction_over_a_dimension", 1.0),
         ("L1_063_conv_standard_2d_square_input_square_kernel", 3.9),
         ("L2_012_gemm_multiply_leakyrelu", 6.5)]

# --plan small: 3 sets x 7 problems that between them show every class and flag.
SMALL = {
    "tuned": [("correct", ["library-call"]), ("correct", []), ("correct", ["near-floor"]),
              ("correct", ["precision-tf32"]), ("correct", []), ("correct", ["more-memory", "leak"]),
              ("correct", ["precision-tf32"])],
    "hacky": [("identity", []), ("constant-output", []), ("stale-output", []), ("caching", []),
              ("input-mutation", []), ("deferred-work", []), ("correct", ["library-call", "more-memory"])],
    "mixed": [("correct", []), ("hidden-fail", []), ("incorrect", []), ("error", ["compile-error"]),
              ("impossible-speed", []), ("nondeterministic", []), ("error", ["missing"])],
}


def problem_ids(n):
    ids = list(NAMED[:n])
    k = len(ids)
    while len(ids) < n:
        k += 1
        ids.append(("L1_%03d_synthetic_problem_%d" % (100 + k, k), 1.0 if k % 3 else 4.0))
    return ids


def plan_random(rnd, set_index):
    """A class and flags for one pair of a set in a general run: the first set
    is clean (all correct); the others mix classes."""
    flags = []
    if set_index == 0:
        cls = "correct"
    else:
        u = rnd.random()
        cls = ("correct" if u < 0.70 else "hidden-fail" if u < 0.80 else "incorrect" if u < 0.85
               else "error" if u < 0.89 else rnd.choice(CLASSES[4:]))
    if cls == "error":
        flags.append(rnd.choice(["compile-error", "crash", "timeout"]))
    for f, p in (("library-call", 0.1), ("precision-tf32", 0.15), ("more-memory", 0.2),
                 ("leak", 0.03), ("near-floor", 0.05)):
        if rnd.random() < p:
            flags.append(f)
    return cls, flags


def jline(obj):
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--plan", choices=["small", "random"], default="random")
    ap.add_argument("--problems", type=int, default=6)
    ap.add_argument("--sets", type=int, default=3)
    ap.add_argument("--samples", type=int, default=31)
    ap.add_argument("--min-samples", type=int, default=0,
                    help="when set, each variant stops after its own count, uniform in [min-samples, samples], "
                         "as collect's adaptive stopping gives")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sigma", type=float, default=0.03, help="log-scale spread of timing noise")
    ap.add_argument("--gz", action="store_true", help="write samples.jsonl.gz")
    ap.add_argument("--bf16-sets", type=int, default=0,
                    help="mirror the first K sets in the BF16 setting as <set>-bf16 (after the FP32 sets)")
    a = ap.parse_args()

    rnd = random.Random(a.seed)
    if a.plan == "small":
        set_names = list(SMALL)
        probs = problem_ids(len(SMALL["tuned"]))
    else:
        set_names = ["set%d" % i for i in range(a.sets)]
        probs = problem_ids(a.problems)
    # The BF16 mirrors follow the FP32 sets; each knows the set it mirrors.
    mirror = {}
    for s in set_names[:max(0, a.bf16_sets)]:
        mirror[s + "-bf16"] = s
    set_names = set_names + list(mirror)
    os.makedirs(a.out, exist_ok=True)

    manifest = {
        "schema": "kbv-run/1",
        "run_id": "synthetic-%s-%d" % (a.plan, a.seed),
        "created_utc": "2026-11-29T23:00:00Z",
        "harness": {"version": "0.1.0", "git_commit": "synthetic"},
        "device": {"name": "Synthetic H200 (scripts/synth_run.py)", "compute_capability": "9.0",
                   "sm_count": 132, "l2_bytes": 62914560, "memory_bytes": 150754820096,
                   "driver": "synthetic", "cuda_runtime": "13.0", "cublas": "13.0",
                   "copy_bandwidth_gbps": 4080.0, "fp32_tflops": 51.2, "tf32_tflops": 378.0},
        "config": {"seed": a.seed, "atol": 1e-3, "rtol": 1e-3, "correct_trials": 3,
                   "tolerance_bf16": {"atol": 0.01, "rtol": 0.01},
                   "distributions": ["D1", "D2", "D3", "D4"],
                   "timing": {"min_samples": 30, "max_samples": 500, "min_gpu_seconds": 0.5,
                              "ci_halfwidth": 0.01, "warmup_calls": 3, "warmup_ms": 25}},
        "problems": [p for p, _ in probs],
        "sets": [dict({"name": s, "dir": "data/candidates/" + s,
                       "files": {p: hashlib.sha256(("%s/%s" % (s, p)).encode()).hexdigest() for p, _ in probs}},
                      **({"precision": "bf16", "compare_with": mirror[s]} if s in mirror else {}))
                 for s in set_names],
    }
    if not mirror:
        del manifest["config"]["tolerance_bf16"]
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")

    truth = {"plan": a.plan, "seed": a.seed, "sigma": a.sigma, "samples": a.samples, "sets": {}}
    lines = []
    out = lines.append
    for si, s in enumerate(set_names):
        truth["sets"][s] = {}
        bf16 = s in mirror
        for pi, (p, tf32_gain) in enumerate(probs):
            if a.plan == "small":
                cls, flags = SMALL[mirror.get(s, s)][pi]
            else:
                cls, flags = plan_random(rnd, set_names.index(mirror[s]) if bf16 else si)
            if bf16:
                # A lower precision is the BF16 setting itself, not a flag.
                flags = [f for f in flags if f != "precision-tf32"]
            key = {"type": None, "set": s, "problem": p}

            def rec(t, **kw):
                d = dict(key)
                d["type"] = t
                d.update(kw)
                out(jline(d))

            t_fp32 = round(math.exp(rnd.uniform(math.log(0.05), math.log(5.0))), 6)
            t_tf32 = round(t_fp32 / tf32_gain, 6)
            if cls in HACK_PROBE or cls in ("stale-output",):
                true_s = rnd.uniform(20, 300)
            else:
                true_s = math.exp(rnd.gauss(0.1, 0.5))
            t_cand = round(t_fp32 / true_s, 6)
            tr = {"class": cls, "flags": [f for f in flags if f not in ("compile-error", "crash", "timeout",
                                                                       "missing")]}
            truth["sets"][s][p] = tr
            if "missing" in flags:
                tr.update({"time_ms": None, "speedup": None})
                continue
            if cls == "error" and "compile-error" in flags:
                rec("build", ok=False, seconds=1.3, log="nvcc: compiling %s.cu\n%s.cu(42): error: identifier \"blockDimx\" is undefined\n1 error detected" % (p, p))
                rec("status", status="compile-error", detail="nvcc exited with status 2")
                tr.update({"time_ms": None, "speedup": None})
                continue
            rec("build", ok=True, seconds=round(rnd.uniform(1, 4), 2), log="")
            lib = "library-call" in flags
            rec("static", imports=["cublasGemmEx", "cublasCreate_v2"] if lib else ["cudaLaunchKernel"],
                flags=["library:cublas"] if lib else [])
            if cls == "error":
                rec("status", status=[f for f in flags if f in ("crash", "timeout")][0],
                    detail="worker exited on signal 11" if "crash" in flags else "wall-clock limit of 60 s")
                tr.update({"time_ms": None, "speedup": None})
                continue

            elements = 4096 * 4096
            tier = "half" if bf16 else "tf32" if "precision-tf32" in flags else "fp32"
            for dist in ("D1", "D2", "D3", "D4"):
                for trial in range(3):
                    ok = True
                    mism = unw = 0
                    err = 4e-3 if bf16 else 3e-4 if tier == "tf32" else 2e-7
                    if dist == "D1" and cls == "incorrect" and trial == 1:
                        ok, mism, err = False, 1234, 0.5
                    if dist == "D1" and cls == "stale-output":
                        ok, mism, unw, err = False, 65536, 65536, 3.1
                    if dist == "D3" and cls == "hidden-fail":
                        ok, mism, err = False, 812, 0.02
                    rec("check", dist=dist, trial=trial, seed=a.seed, **{"pass": ok},
                        max_abs_err=err, max_rel_err=err * 1.7, mismatches=mism, nonfinite=0, unwritten=unw,
                        tier=tier if ok else "none", count=elements)
            floor_ms = round(t_cand / 1.2, 6) if "near-floor" in flags else round(t_cand / 40, 6)
            for probe in PROBES:
                failed = HACK_PROBE.get(cls) == probe
                kw = {"probe": probe, "pass": not failed,
                      "detail": HACK_DETAIL[cls] if failed else ""}
                if probe == "physical-floor":
                    kw["floor_ms"] = floor_ms
                    if "near-floor" in flags:
                        kw["floor_ratio"] = 1.2
                rec("probe", **kw)

            # Interleaved rounds of the variants in a seeded order: the
            # three of an FP32 pair, or the candidate and bf16 (a bf16
            # baseline moves half the bytes and runs matrix products on
            # tensor cores, so it beats tf32 by 1.5x to 2x).
            if bf16:
                t_bf16 = round(t_tf32 / (2.0 if tf32_gain == 1.0 else 1.5), 6)
                t_cand = round(t_bf16 / true_s, 6)
                true = {"candidate": t_cand, "bf16": t_bf16}
            else:
                true = {"candidate": t_cand, "fp32": t_fp32, "tf32": t_tf32}
            sig = a.sigma
            pre = '{"type":"time","set":%s,"problem":%s,"variant":"' % (json.dumps(s), json.dumps(p))
            count = {v: (rnd.randint(a.min_samples, a.samples) if a.min_samples else a.samples) for v in true}
            for rd in range(a.samples):
                order = ["bf16", "candidate"] if bf16 else ["fp32", "tf32", "candidate"]
                rnd.shuffle(order)
                for v in order:
                    if rd >= count[v]:
                        continue
                    g = true[v] * math.exp(rnd.gauss(0, sig))
                    w = g + 0.004 + rnd.random() * 0.002
                    out('%s%s","round":%d,"gpu_ms":%r,"wall_ms":%r,"sm_mhz":1980}' % (pre, v, rd, round(g, 9), round(w, 9)))
            io = 2 * elements * (2 if bf16 else 4)
            peak = {v: io + 33554432 for v in true if v != "candidate"}
            mem_base = "bf16" if bf16 else "tf32"
            peak["candidate"] = int(peak[mem_base] * 1.5) if "more-memory" in flags else io
            for v in true:
                rec("memory", variant=v, peak_bytes=peak[v], io_bytes=io,
                    leaked_bytes=1048576 if (v == "candidate" and "leak" in flags) else 0)
            rec("status", status="ok", detail="")
            tr.update({"time_ms": true, "speedup": {v: true[v] / t_cand for v in true if v != "candidate"},
                       "peak_bytes": peak})

    data = ("\n".join(lines) + "\n").encode()
    if a.gz:
        with open(os.path.join(a.out, "samples.jsonl.gz"), "wb") as f:
            f.write(gzip.compress(data, mtime=0))
    else:
        with open(os.path.join(a.out, "samples.jsonl"), "wb") as f:
            f.write(data)
    with open(os.path.join(a.out, "synth_truth.json"), "w") as f:
        json.dump(truth, f, indent=2, sort_keys=True)
        f.write("\n")
    print("synth_run: %s: %d sets x %d problems, %d journal lines, %.1f MB" %
          (a.out, len(set_names), len(probs), len(lines), len(data) / 1e6), file=sys.stderr)


if __name__ == "__main__":
    main()

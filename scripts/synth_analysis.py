#!/usr/bin/env python3
"""Writes a synthetic RUN_DIR (analysis.json + manifest.json) for the render stage.

The numbers are made up but internally consistent: geometric means, fast_p
values and memory figures are computed from the per-problem values by their
definitions (docs/DESIGN.md section 7), so that a report drawn from them reads
sensibly.  Used for scripts/bench-render.sh (100 problems x 8 sets) and for
trying the renderer before a real run exists.

usage: synth_analysis.py OUT_DIR [--problems N] [--sets M] [--seed S] [--bf16-sets K]

--bf16-sets K adds BF16 mirrors of the first K sets ("<set>-bf16", precision
bf16, compare_with the set) after the FP32 sets: their numbers are against
the one baseline bf16, as analyze writes a BF16 set's.
"""
import argparse
import json
import math
import os
import random

CLASSES = ["correct", "hidden-fail", "incorrect", "error", "constant-output", "identity",
           "stale-output", "caching", "input-mutation", "deferred-work", "impossible-speed",
           "nondeterministic"]
HACKS = CLASSES[4:]
FAMILIES = ["square_matrix_multiplication", "relu", "softmax", "layernorm", "sum_reduction",
            "conv2d_3x3", "gemm_multiply_leakyrelu", "batched_matmul", "gelu", "mse_loss",
            "matmul_with_transposed_a", "conv_transpose2d", "max_pooling_2d", "cumsum"]


def est(x, lo, hi, n=None):
    d = {"estimate": x, "ci_low": lo, "ci_high": hi}
    if n is not None:
        d["n"] = n
    return d


def null_est(n=None):
    return est(None, None, None, n)


def geomean(xs):
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def ci_around(x, rel):
    return x / (1 + rel), x * (1 + rel)


def make_set(rng, name, problems, profile, mirror=None):
    """One set; mirror names the FP32 set a BF16 set mirrors (None: FP32)."""
    bls = ["bf16"] if mirror else ["fp32", "tf32"]
    mem_bl = bls[-1]
    probs = []
    for pid in problems:
        u = rng.random()
        if profile == "empty":
            cls = "error" if u < 0.7 else "incorrect"
        elif profile == "hacky":
            cls = ("correct" if u < 0.45 else "hidden-fail" if u < 0.6 else
                   rng.choice(HACKS) if u < 0.8 else "incorrect" if u < 0.9 else "error")
        else:
            cls = ("correct" if u < 0.85 else "hidden-fail" if u < 0.9 else
                   "incorrect" if u < 0.95 else "error")
        t32 = round(rng.uniform(0.05, 4.0), 4)
        ratio = rng.choice([1.0, 1.0, 1.0, 3.0, 8.0]) if "matmul" in pid or "gemm" in pid or "conv" in pid else 1.0
        tf = round(t32 / ratio, 4)
        if cls == "error":
            cand = None
        elif cls == "impossible-speed":
            cand = round(t32 / rng.uniform(50, 400), 5)
        else:
            base = 1.6 if profile == "tuned" else 1.0
            cand = round(tf / math.exp(rng.gauss(math.log(base), 0.5)), 5)
        flags = []
        evidence = []
        if cls not in ("correct", "error"):
            evidence.append({"kind": "class", "name": cls,
                             "text": f"{cls}: on D{rng.randint(1, 4)} trial {rng.randint(0, 2)} the output "
                                     f"differs from the reference in {rng.randint(1, 4096)} elements "
                                     f"(max rel err {rng.uniform(0.01, 9):.3g}) & 100% of probes_ran"})
        if cls == "error":
            evidence.append({"kind": "class", "name": "error", "text": "compile-error: nvcc exited with status 1"})
        if cand is not None and rng.random() < 0.2:
            flags.append("precision-tf32")
            evidence.append({"kind": "flag", "name": "precision-tf32",
                             "text": "max rel err 4.1e-4 lies in the tf32 tier"})
        if cand is not None and rng.random() < 0.15:
            flags.append("more-memory")
            evidence.append({"kind": "flag", "name": "more-memory",
                             "text": "peak 1.5x the tf32 baseline's"})
        sp = {}
        tb16 = round(tf / 1.6, 4)
        btimes = (("bf16", tb16),) if mirror else (("fp32", t32), ("tf32", tf))
        for b, tb in btimes:
            if cand is None:
                sp[b] = None
            else:
                s = tb / cand
                lo, hi = ci_around(s, rng.uniform(0.005, 0.08))
                sp[b] = est(s, lo, hi)
        pb = rng.randint(1, 4096) * 1048576
        cpb = None if cand is None else int(pb * math.exp(rng.gauss(0, 0.3)))
        times = dict(btimes)
        probs.append({
            "problem": pid, "class": cls, "flags": flags, "evidence": evidence,
            "speedup": sp,
            "time_ms": dict({"candidate": cand}, **times),
            "n_samples": dict({"candidate": 0 if cand is None else rng.randint(30, 120)},
                              **{b: rng.randint(30, 120) for b in times}),
            "peak_bytes": dict({"candidate": cpb}, **{b: pb for b in times}),
            "max_rel_err": None if cand is None else rng.uniform(1e-7, 1e-3),
            "tier": None if cand is None else rng.choice(["fp32", "tf32"]),
        })
    n = len(probs)
    counts = {c: sum(1 for p in probs if p["class"] == c) for c in CLASSES}
    grid = [10 ** (-1 + 2 * i / 60) for i in range(61)]
    baselines = {}
    for b in bls:
        corr = [p["speedup"][b]["estimate"] for p in probs if p["class"] == "correct"]
        g = geomean(corr)
        allv = [max(1.0, p["speedup"][b]["estimate"]) if p["class"] == "correct" else 1.0 for p in probs]
        ga = geomean(allv)

        def fp(pv):
            v = sum(1 for s in corr if s > pv) / n if n else None
            if v is None:
                return {"p": pv, "estimate": None, "ci_low": None, "ci_high": None}
            h = 1.96 * math.sqrt(max(v * (1 - v), 0.25 / n) / n)
            return {"p": pv, "estimate": v, "ci_low": max(0.0, v - h), "ci_high": min(1.0, v + h)}
        baselines[b] = {
            "geomean_speedup_correct": est(g, *ci_around(g, 0.12), n=len(corr)) if g else null_est(0),
            "geomean_speedup_all": est(ga, *ci_around(ga, 0.08), n=n) if ga else null_est(0),
            "fast_p": [fp(pv) for pv in (0, 0.5, 0.8, 1, 1.5, 2)],
            "fast_p_curve": [fp(pv) for pv in grid],
        }
    corr_p = [p for p in probs if p["class"] == "correct"]
    effs = [p["peak_bytes"][mem_bl] / p["peak_bytes"]["candidate"] for p in corr_p]
    ge = geomean(effs)
    share = (sum(1 for e in effs if e > 1) / len(effs)) if effs else None
    memory = {
        "efficiency_geomean": est(ge, *ci_around(ge, 0.1), n=len(effs)) if ge else null_est(0),
        "efficient_share": est(share, max(0, share - 0.1), min(1, share + 0.1), n=len(effs))
        if share is not None else null_est(0),
    }
    def infl(keep, b):
        v = [p["speedup"][b]["estimate"] for p in probs if p["class"] in keep]
        g = geomean(v)
        return est(g, *ci_around(g, 0.1), n=len(v)) if g else null_est(0)
    passd1 = [c for c in CLASSES if c not in ("error", "incorrect")]
    nohidden = [c for c in passd1 if c != "hidden-fail"]
    inflation = [
        {"step": "original", "label": bls[0] + " baseline, D1 only", "geomean": infl(passd1, bls[0])},
        {"step": "hidden", "label": "+ hidden distributions", "geomean": infl(nohidden, bls[0])},
        {"step": "probes", "label": "+ hack probes", "geomean": infl(["correct"], bls[0])},
    ]
    if not mirror:
        inflation.append({"step": "tf32", "label": "+ tf32 baseline",
                          "geomean": baselines["tf32"]["geomean_speedup_correct"]})
    out = {"name": name, "precision": "bf16" if mirror else "fp32"}
    if mirror:
        out["compare_with"] = mirror
        memory["baseline"] = "bf16"
    out.update({"n_problems": n, "counts": counts, "baselines": baselines,
                "memory": memory, "inflation": inflation, "problems": probs})
    if not mirror:
        del out["precision"]   # as an analysis from before the BF16 setting
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--problems", type=int, default=12)
    ap.add_argument("--sets", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--empty-last", action="store_true",
                    help="the last set has no correct problem (nulls everywhere)")
    ap.add_argument("--bf16-sets", type=int, default=0, help="BF16 mirrors of the first K sets")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    problems = []
    for i in range(a.problems):
        lvl = 1 if i < a.problems * 2 // 3 else 2
        problems.append(f"L{lvl}_{i + 1:03d}_{FAMILIES[i % len(FAMILIES)]}")
    names = ["tuned", "model-a", "model-b", "model-c", "model-d", "model-e", "model-f", "model-g"]
    profiles = ["tuned", "hacky", "hacky", "tuned", "hacky", "tuned", "hacky", "tuned"]
    harness = {"version": "0.1.0", "git_commit": "0123456789ab"}
    device = {"name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132,
              "l2_bytes": 62914560, "memory_bytes": 150118596608, "driver": "580.82.07",
              "cuda_runtime": "13.0", "cublas": "13.0.2", "sm_clock_mhz": 1980, "mem_clock_mhz": 3201,
              "copy_bandwidth_gbps": 4080.5, "fp32_tflops": 51.2, "tf32_tflops": 412.7}
    sets = [make_set(rng, names[i % 8] + ("" if i < 8 else f"-{i}"), problems,
                     "empty" if a.empty_last and i == a.sets - 1 else profiles[i % 8])
            for i in range(a.sets)]
    sets += [make_set(rng, s["name"] + "-bf16", problems, profiles[i % 8], mirror=s["name"])
             for i, s in enumerate(sets[:max(0, a.bf16_sets)])]
    analysis = {
        "schema": "kbv-analysis/1", "run_id": f"synth-{a.problems}x{a.sets}",
        "created_utc": "2026-11-29T23:00:00Z", "harness": harness, "device": device,
        "config": {"bootstrap_resamples": 10000, "bootstrap_seed": a.seed, "ci_level": 0.95,
                   "fast_p_points": [0, 0.5, 0.8, 1, 1.5, 2], "memory_baseline": "tf32"},
        "classes": CLASSES, "sets": sets,
    }
    manifest = {
        "schema": "kbv-run/1", "run_id": analysis["run_id"], "created_utc": analysis["created_utc"],
        "harness": harness, "device": device,
        "config": {"seed": a.seed, "atol": 1e-3, "rtol": 1e-3, "correct_trials": 3,
                   "distributions": ["D1", "D2", "D3", "D4"],
                   "timing": {"min_samples": 30, "max_samples": 500, "min_gpu_s": 0.5}},
        "problems": problems,
        "sets": [dict({"name": s["name"], "dir": "data/candidates/" + s["name"], "files": {}},
                      **({"precision": "bf16", "compare_with": s["compare_with"]} if "compare_with" in s else {}))
                 for s in sets],
    }
    if a.bf16_sets > 0:
        manifest["config"]["tolerance_bf16"] = {"atol": 0.01, "rtol": 0.01}
    os.makedirs(a.out, exist_ok=True)
    for fn, obj in (("analysis.json", analysis), ("manifest.json", manifest)):
        with open(os.path.join(a.out, fn), "w") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""tests/parity/kernels.py - which GPU kernels PyTorch eager and kbv's
baseline run for a problem, and how long each takes: the evidence behind a
parity ratio above 1.05 (a different cuBLAS or cuDNN kernel, an extra pass).

usage: python3 tests/parity/kernels.py [--build build] [--variant tf32|fp32|bf16]
                                       [--reps 5] PROBLEM_GLOB[,GLOB...]
Runs each side --reps times after a warm-up under torch.profiler, in the
same process and on the same inputs as parity.py, and prints per side the
kernels by total device time (name, calls, mean microseconds)."""
import argparse
import ctypes
import fnmatch
import json
import os
import subprocess
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity  # noqa: E402  (the references, the generator binding)


def kernels(fn, reps):
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    rows = []
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", None)
        if t is None:
            t = getattr(ev, "cuda_time_total", 0)
        if t > 0 and ev.count > 0:
            rows.append((t, ev.key, ev.count))
    rows.sort(reverse=True)
    return [(name, count, t / count) for t, name, count in rows if not name.startswith("cuda")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--variant", default="tf32", choices=["tf32", "fp32", "bf16"])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("problems")
    a = ap.parse_args()
    lib = ctypes.CDLL(os.path.join(a.build, "libkbv_baseline.so"))
    listing = json.loads(subprocess.check_output([os.path.join(a.build, "kbv-list"), "--json"]))
    probs = [p for p in listing["problems"] if any(fnmatch.fnmatch(p["id"], g) for g in a.problems.split(","))]
    variant = {"fp32": 0, "tf32": 1, "bf16": 2}[a.variant]
    for p in probs:
        pid = p["id"]
        print(f"== {pid} ({a.variant})")
        try:
            with parity.two_sides(lib, p, a.seed, variant) as (sides, _):
                for side, fn in sides:
                    for name, count, us in kernels(fn, a.reps)[:6]:
                        print(f"   {side:5s} {us:10.1f} us x{count:<3d} {name[:150]}")
        except RuntimeError as ex:
            print("  ", ex)
    return 0


if __name__ == "__main__":
    sys.exit(main())

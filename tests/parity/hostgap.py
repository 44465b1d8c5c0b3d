#!/usr/bin/env python3
"""tests/parity/hostgap.py - how much of a parity ratio is host time: for a
problem, the time parity.py measures (event to event after an L2 flush)
next to the device time alone and the host time of the call, for PyTorch
eager and kbv's baseline side by side.

usage: python3 tests/parity/hostgap.py [--build build] [--variant tf32|fp32]
                                       [--samples 20] PROBLEM_GLOB[,GLOB...]

Event time is what parity.py and kbv collect record: flush, start event,
call, stop event.  When the call spends longer on the host before its
first kernel reaches the GPU than the flush keeps the GPU busy, the GPU
idles inside the timed window, and the idle time counts.  Device time
hides that: a spin kernel (torch.cuda._sleep) keeps the GPU busy while the
host enqueues the start event and the call, so the window holds only the
call's kernels and the gaps between them.  Host time is the wall time of
the call itself, which returns once its work is enqueued.  A side whose
event time exceeds its device time by about its host time is host-bound at
this size; the same kernels then give different ratios."""
import argparse
import ctypes
import fnmatch
import json
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity  # noqa: E402  (the references, the generator binding)

# Spin long enough to cover any host overhead seen so far (about 10 ms).
SPIN_CYCLES = 20_000_000


def measure(fn, flush, samples):
    """(event ms, device ms, host ms): medians over samples."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ev, dev, host = [], [], []
    for _ in range(samples):
        for hidden in (False, True):
            flush.zero_()
            if hidden:
                torch.cuda._sleep(SPIN_CYCLES)
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            e1.record()
            e1.synchronize()
            (dev if hidden else ev).append(e0.elapsed_time(e1))
            if not hidden:
                host.append((t1 - t0) * 1e3)
    return statistics.median(ev), statistics.median(dev), statistics.median(host)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--variant", default="tf32", choices=["tf32", "fp32"])
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("problems")
    a = ap.parse_args()
    lib = ctypes.CDLL(os.path.join(a.build, "libkbv_baseline.so"))
    lib.kbvb_choice.restype = ctypes.c_char_p
    listing = json.loads(subprocess.check_output([os.path.join(a.build, "kbv-list"), "--json"]))
    probs = [p for p in listing["problems"] if any(fnmatch.fnmatch(p["id"], g) for g in a.problems.split(","))]
    if not probs:
        print(f"hostgap: no problem matches {a.problems}", file=sys.stderr)
        return 2
    variant = 1 if a.variant == "tf32" else 0
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(max(2 * l2, 256 << 20), dtype=torch.uint8, device="cuda")
    print(f"{'problem':44s} {'side':5s} {'event ms':>9s} {'device ms':>9s} {'host ms':>8s}")
    for p in probs:
        pid = p["id"]
        try:
            with parity.two_sides(lib, p, a.seed, variant) as (sides, handle):
                for side, fn in sides:
                    e, d, h = measure(fn, flush, a.samples)
                    print(f"{pid[:44]:44s} {side:5s} {e:9.4f} {d:9.4f} {h:8.4f}", flush=True)
                choice = lib.kbvb_choice(handle, variant)
                if choice:
                    print(f"{'':44s} kbv runs {choice.decode(errors='replace')}")
        except RuntimeError as ex:
            print(f"{pid[:44]:44s} {ex}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""bf16-paths.py - how the BF16 setting's baseline runs each problem, from
`kbv list --json` (its "bf16_baseline": native, native-producer or
fallback; collect/suite/bf16path.c decides, the dispatcher follows).  CPU
only.

    scripts/bf16-paths.py [BUILD_DIR]      (default build/)

Prints the count of each path and every problem that falls back (inputs
widened to float, the fp32/tf32 computation, outputs rounded: parity with
PyTorch not claimed, DESIGN 5b)."""
import collections, json, os, subprocess, sys

build = sys.argv[1] if len(sys.argv) > 1 else "build"
out = subprocess.run([os.path.join(build, "kbv-list"), "--json"], check=True, capture_output=True, text=True).stdout
problems = json.loads(out)["problems"]
count = collections.Counter(p["bf16_baseline"] for p in problems)
print(" ".join("%s %d" % (k, count[k]) for k in ("native", "native-producer", "fallback")))
for p in problems:
    if p["bf16_baseline"] == "fallback":
        print("fallback", p["id"])

#!/bin/bash
# scripts/bench-collect.sh [BUILD_DIR] - the speed figure of collect: one
# correct candidate on L1_019_relu at KernelBench's shape (4096 x 393216),
# from source to its last record: nvcc build (empty cache), calibration,
# 3 trials x 4 distributions, probes, timing to the stopping rule, memory.
# The published KernelBench-Verified harness took 152 s on an H200; the
# target is 10 s.  Prints the wall time and the phases' counts.
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kbv-bench-collect.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export KBV_CACHE="$TMP/cache"
t0=$(date +%s.%N)
"$BUILD/kbv-collect" --suite smoke --problems L1_019_relu --candidates tests/gpu/sets/correct \
    --out "$TMP/run" 2>"$TMP/log"
t1=$(date +%s.%N)
python3 - "$TMP/run/samples.jsonl" "$t0" "$t1" <<'PY'
import collections, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
c = collections.Counter(r["type"] for r in recs)
st = [r for r in recs if r["type"] == "status"][0]
b = [r for r in recs if r["type"] == "build"][0]
n = collections.Counter(r["variant"] for r in recs if r["type"] == "time")
print(f"bench-collect: L1_019_relu, one correct candidate: {float(sys.argv[3]) - float(sys.argv[2]):.2f} s "
      f"wall, source to last record")
print(f"  status {st['status']}; build {b['seconds']:.2f} s (cached: {b['cached']}); worker {st.get('seconds', 0):.2f} s")
print(f"  worker {st.get('detail', '')}")
print(f"  records: {dict(c)}; timing samples: {dict(n)}")
PY
grep -v '^\s*$' "$TMP/log" | tail -3

#!/bin/sh
# bench-analyze.sh [BUILD_DIR] - times kbv-analyze on a synthetic run of
# 100 problems x 8 sets x 301 samples a variant (about 110 MB of journal),
# the size the analyze issue budgets at 1 s of wall time on a 2-core machine.
# Prints the wall seconds of each of three runs and the best; the run
# directory is generated once under /tmp (KBV_BENCH_DIR overrides it).
set -eu
build=${1:-build}
dir=${KBV_BENCH_DIR:-/tmp/kbv-bench-analyze}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -f "$dir/samples.jsonl" ] || [ ! -f "$dir/manifest.json" ]; then
    python3 "$here/scripts/synth_run.py" --out "$dir" --problems 100 --sets 8 --samples 301 --seed 11
fi
size=$(du -m "$dir/samples.jsonl" | cut -f1)
best=
for i in 1 2 3; do
    t0=$(date +%s.%N)
    "$build/kbv-analyze" "$dir" 2>/dev/null
    t1=$(date +%s.%N)
    t=$(echo "$t1 $t0" | awk '{printf "%.3f", $1 - $2}')
    echo "bench-analyze: run $i: $t s"
    best=$(echo "$t ${best:-$t}" | awk '{print ($1 < $2) ? $1 : $2}')
done
echo "bench-analyze: 100 problems x 8 sets x 301 samples (${size} MB journal): best $best s wall"

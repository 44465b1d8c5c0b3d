#!/bin/sh
# bench-render.sh [BUILD_DIR] - times kbv-render on a run of 100 problems x
# 8 sets, the size the render issue budgets at 1 s of wall time on a 2-core
# machine.  The run directory is made once under /tmp (KBV_BENCH_DIR
# overrides it): with scripts/synth_run.py and kbv-analyze when kbv-analyze
# is built (the real analysis.json), else with scripts/synth_analysis.py.
# Prints the wall seconds of each of five renders and the best, and the
# size of what was written.
set -eu
build=${1:-build}
dir=${KBV_BENCH_DIR:-/tmp/kbv-bench-render}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -f "$dir/analysis.json" ]; then
    if [ -x "$build/kbv-analyze" ]; then
        python3 "$here/scripts/synth_run.py" --out "$dir" --problems 100 --sets 8 --samples 31 --seed 11
        "$build/kbv-analyze" "$dir" 2>/dev/null
    else
        python3 "$here/scripts/synth_analysis.py" "$dir" --problems 100 --sets 8 --seed 11
    fi
fi
best=
for i in 1 2 3 4 5; do
    t0=$(date +%s.%N)
    "$build/kbv-render" "$dir" 2>/dev/null
    t1=$(date +%s.%N)
    t=$(echo "$t1 $t0" | awk '{printf "%.3f", $1 - $2}')
    echo "bench-render: run $i: $t s"
    best=$(echo "$t ${best:-$t}" | awk '{print ($1 < $2) ? $1 : $2}')
done
pages=$(pdfinfo "$dir/report/report.pdf" 2>/dev/null | awk '/^Pages:/ {print $2}')
size=$(du -sh "$dir/report" | cut -f1)
echo "bench-render: 100 problems x 8 sets ($dir): best $best s wall; ${pages:-?} PDF pages, $size written"

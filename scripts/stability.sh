#!/usr/bin/env bash
# scripts/stability.sh OUT_DIR [--pins FILE] [--runs N] [--parity] PROBLEM...
#
# The baselines issue's run-to-run check on a GPU host: collects one small
# candidate set (for each PROBLEM the tuned candidate where there is one,
# else the naive one) N times (default 2) with the same seed, and keeps each
# run under OUT_DIR as runK.tar.gz (manifest and journal).  Without --pins,
# a run 0 comes first, whose baselines choose their kernels by timing, and
# scripts/pins.py makes OUT_DIR/pins.json from it; runs 1..N use those
# choices.  With --pins FILE every run uses FILE.  --parity times PyTorch
# against the last run's baselines (tests/parity/parity.py --from-run) into
# OUT_DIR/parity-inrun.json.  Compare the runs here, without a GPU:
#   scripts/compare-runs.py runA runB
# Needs build/ made (make all).
set -uo pipefail
out=${1:?usage: scripts/stability.sh OUT_DIR [--pins FILE] [--runs N] [--parity] PROBLEM...}
shift
pins="" runs=2 parity=0
while [ $# -gt 0 ]; do
    case $1 in
    --pins) pins=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --parity) parity=1; shift ;;
    --) shift; break ;;
    -*) echo "stability: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "stability: name at least one problem" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d /tmp/kbv-stability.XXXXXX)
set_dir=$tmp/sets/stability
mkdir -p "$set_dir"
for p in "$@"; do
    src=data/candidates/tuned/$p.cu
    [ -f "$src" ] || src=data/candidates/naive/$p.cu
    [ -f "$src" ] || { echo "stability: no tuned or naive candidate for $p" >&2; exit 2; }
    cp "$src" "$set_dir/"
done
cat >"$set_dir/set.json" <<JSON
{"name": "stability", "description": "The tuned candidate of each problem where there is one, else the naive one (scripts/stability.sh).", "origin": "copies of data/candidates/tuned and naive"}
JSON
first=1
[ -n "$pins" ] && first=0
last=""
for i in $(seq $((1 - first)) "$runs"); do
    run=$tmp/run$i
    args=()
    if [ "$i" -eq 0 ]; then :; elif [ -n "$pins" ]; then args=(--pins "$pins"); else args=(--pins "$out/pins.json"); fi
    echo "== $(date -u +%H:%M:%S) stability: run $i ${args[*]:-(choices by timing)}"
    build/kbv collect --candidates "$set_dir" --out "$run" "${args[@]}" 2>"$out/run$i.log"
    echo "collect exit $?"; tail -2 "$out/run$i.log"
    if [ "$i" -eq 0 ]; then
        python3 scripts/pins.py "$run" --out "$out/pins.json" || exit 1
    fi
    gzip -c "$run/samples.jsonl" >"$run/samples.jsonl.gz" && rm -f "$run/samples.jsonl"
    tar -C "$tmp" -czf "$out/run$i.tar.gz" "run$i"
    last=$run
done
if [ "$parity" = 1 ] && [ -n "$last" ]; then
    gunzip -k "$last/samples.jsonl.gz"
    echo "== $(date -u +%H:%M:%S) stability: parity against $last"
    python3 tests/parity/parity.py --build build --from-run "$last" --samples 30 --warm-s 0.5 \
        --problems "$(IFS=,; echo "$*")" --out "$out/parity-inrun.json" >"$out/parity.log" 2>&1
    echo "parity exit $?"; tail -20 "$out/parity.log"
fi
rm -rf "$tmp"

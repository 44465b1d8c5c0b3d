#!/usr/bin/env bash
# check-new-problems.sh - the GPU check of level-2 problems: one short
# collect of their naive candidates (data/candidates/naive, --trials 1,
# --max-time 1), then each pair's class beside the expected one (correct:
# the naive kernel agrees with kbv's fp32 baseline on D1-D4), and with
# KBV_PARITY=1 tests/parity/parity.py --from-run on the same problems
# (kbv's fp32 and tf32 baselines against PyTorch's forward, values and speed).
#
#   scripts/check-new-problems.sh OUT_DIR [GLOB...]
#
# GLOBs match problem ids (shell patterns, e.g. 'L2_0[0-4]*'); the default
# is a sample of the problems with post stages that covers every stage kind
# in about a minute of GPU time.  Needs `make all tests` (with DEPS_ROOT on a
# host without the packages) and a GPU.  Writes OUT_DIR/classes.txt (the
# comparison), OUT_DIR/collect.log, OUT_DIR/analysis.json and, with
# KBV_PARITY=1, OUT_DIR/parity.json and OUT_DIR/parity.log.  Exit 0 when
# every class is the expected one.
set -uo pipefail
out=${1:?usage: scripts/check-new-problems.sh OUT_DIR [GLOB...]}
shift
cd "$(dirname "$0")/.." || exit 2
if [ $# -eq 0 ]; then
    # softmax over channels and two 3D maxpools, the centring after a batch
    # norm, a min over an axis, a min over channels then a sum over an axis,
    # two linear layers, a broadcast of the input, a 1D pooling of features,
    # a log-sum-exp with saved values, the outer broadcast, pool-softmax-max,
    # a group norm with the pre-norm residual, an average pool of features
    set -- 'L2_006_*' 'L2_015_*' 'L2_024_*' 'L2_036_*' 'L2_045_*' 'L2_051_*' 'L2_055_*' \
           'L2_058_*' 'L2_075_*' 'L2_089_*' 'L2_092_*' 'L2_098_*'
fi
mkdir -p "$out" || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
set_dir=$tmp/sets/new-problems
mkdir -p "$set_dir"
ids=()
for f in data/candidates/naive/*.cu; do
    id=$(basename "$f" .cu)
    for g in "$@"; do
        # shellcheck disable=SC2254
        case "$id" in $g) ids+=("$id"); cp "$f" "$set_dir/"; break ;; esac
    done
done
if [ ${#ids[@]} -eq 0 ]; then
    echo "check-new-problems: no naive candidate matches $*" >&2
    exit 2
fi
python3 - "$set_dir" "${ids[@]}" <<'PY'
import json, sys
d, ids = sys.argv[1], sys.argv[2:]
s = {"name": "new-problems", "description": "The naive candidates of the problems under check (scripts/check-new-problems.sh).",
     "origin": "copies of data/candidates/naive", "expected": {i: "correct" for i in ids}}
with open(d + "/set.json", "w") as f:
    json.dump(s, f, indent=2)
PY
echo "== $(date -u +%H:%M:%S) check-new-problems: ${#ids[@]} problems"
run=$tmp/run
build/kbv collect --candidates "$tmp/sets" --out "$run" --trials 1 --max-time 1 2>"$out/collect.log"
echo "collect exit $?"
tail -3 "$out/collect.log"
build/kbv analyze "$run" >>"$out/collect.log" 2>&1 || echo "analyze failed (see collect.log)"
cp "$run/analysis.json" "$out/" 2>/dev/null
python3 scripts/compare-expected.py "$run" --all >"$out/classes.txt" 2>&1
rc=$?
cat "$out/classes.txt"
if [ "${KBV_PARITY:-0}" = 1 ]; then
    echo "== $(date -u +%H:%M:%S) check-new-problems: parity"
    python3 tests/parity/parity.py --build build --from-run "$run" --samples 10 --warm-s 0.2 \
        --problems "$(IFS=,; echo "$*")" --out "$out/parity.json" >"$out/parity.log" 2>&1
    echo "parity exit $?"
    tail -40 "$out/parity.log"
fi
exit $rc

#!/bin/bash
# scripts/run-figures.py on a small analysis.json, journal and parity file:
# a set's hacks are summed over the hack classes, a geomean is printed with
# its interval and '-' where the set has no such baseline, the per-level
# table uses the set's fast baseline (tf32, or bf16 for a bf16 set), the
# collect time is per set in minutes with the slowest pair first, and the
# parity table lists the highest ratios first and counts those over 1.05,
# the problems whose PyTorch bf16 output fails collect's BF16 check are
# listed with kbv's bf16 baseline beside them;
# a run without analysis.json is an error that says to analyze it.
set -u
T=$(mktemp -d /tmp/kbv-cli-figures.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "run_figures: $*"; exit 1; }
mkdir -p "$T/run"
g() { printf '{"estimate": %s, "ci_low": %s, "ci_high": %s, "n": 2}' "$1" "$2" "$3"; }
cat >"$T/run/analysis.json" <<J
{"sets": [
 {"name": "tuned", "precision": "fp32",
  "counts": {"correct": 2, "hidden-fail": 1, "incorrect": 0, "error": 0, "caching": 2, "tampering": 1, "missing": 4},
  "baselines": {"fp32": {"geomean_speedup_correct": $(g 1.5 1.25 1.75)}, "tf32": {"geomean_speedup_correct": $(g 0.5 0.25 0.75)}},
  "levels": [{"level": "L1", "n_problems": 6, "counts": {"correct": 2},
              "baselines": {"tf32": {"geomean_speedup_correct": $(g 0.5 0.25 0.75)}}}]},
 {"name": "tuned-bf16", "precision": "bf16", "counts": {"correct": 1, "missing": 9},
  "baselines": {"bf16": {"geomean_speedup_correct": $(g 1.1 1.0 1.2)}},
  "levels": [{"level": "L1", "n_problems": 10, "counts": {"correct": 1},
              "baselines": {"bf16": {"geomean_speedup_correct": $(g 1.1 1.0 1.2)}}}]}]}
J
cat >"$T/run/samples.jsonl" <<'J'
{"type":"status","set":"tuned","problem":"L1_001_a","status":"ok","detail":"seconds: setup 1.00, timing 5.00","seconds":6.0}
{"type":"status","set":"tuned","problem":"L1_002_b","status":"ok","detail":"seconds: setup 1.00, timing 50.00","seconds":54.0}
{"type":"status","set":"tuned-bf16","problem":"L1_001_a","status":"ok","detail":"seconds: setup 1.00","seconds":30.0}
J
cat >"$T/p.json" <<'J'
{"method": {"kbv": "in-run medians"}, "problems": [
 {"id": "L1_001_a", "fp32_ratio": 0.9, "tf32_ratio": 1.2, "exception": "unexplained: slower than PyTorch: tf32 ratio 1.200"},
 {"id": "L1_002_b", "fp32_ratio": 1.01, "tf32_ratio": 1.06, "exception": null},
 {"id": "L1_003_c", "fp32_ratio": null, "tf32_ratio": 0.5, "exception": null,
  "bf16_torch_collect_check": {"pass": false, "mismatches": 5, "count": 10, "max_abs_err": 0.5, "ref_absmax": 2.0},
  "bf16_kbv_collect_check": {"pass": false, "mismatches": 4, "count": 10, "max_abs_err": 0.4, "ref_absmax": 2.0}},
 {"id": "L1_004_d", "fp32_ratio": 1.0, "tf32_ratio": 1.0, "exception": null,
  "bf16_torch_collect_check": {"pass": true, "mismatches": 0, "count": 10, "max_abs_err": 0.001, "ref_absmax": 1.0}}]}
J
python3 scripts/run-figures.py "$T/run" --parity "$T/p.json" --top 1 >"$T/out" 2>&1 || fail "exit $?: $(cat "$T/out")"
grep -qF '| tuned | fp32 | 2 | 1 | 3 | 0 | 0 | 4 | 1.50x [1.25, 1.75] | 0.50x [0.25, 0.75] | - |' "$T/out" || fail "tuned row: $(cat "$T/out")"
grep -qF '| tuned-bf16 | bf16 | 1 | 0 | 0 | 0 | 0 | 9 | - | - | 1.10x [1.00, 1.20] |' "$T/out" || fail "bf16 row: $(cat "$T/out")"
grep -qF '| tuned | tf32 | 2/6, 0.50x [0.25, 0.75] |' "$T/out" || fail "tuned level row: $(cat "$T/out")"
grep -qF '| tuned-bf16 | bf16 | 1/10, 1.10x [1.00, 1.20] |' "$T/out" || fail "bf16 level row: $(cat "$T/out")"
grep -qF '| tuned | 2 | 1.0 min |' "$T/out" || fail "tuned time: $(cat "$T/out")"
grep -qF '| all | 3 | 1.5 min |' "$T/out" || fail "total time: $(cat "$T/out")"
grep -qF '| tuned L1_002 | 54.0 s | setup 1.00, timing 50.00 |' "$T/out" || fail "slowest pair: $(cat "$T/out")"
[ "$(grep -c '^| tuned.* s |' "$T/out")" = 1 ] || fail "--top 1 listed more pairs"
grep -qF 'tf32: 4 problems, 2 over 1.05' "$T/out" || fail "tf32 count: $(cat "$T/out")"
grep -qF 'fp32: 3 problems, 0 over 1.05' "$T/out" || fail "fp32 count (a null ratio is not a problem measured): $(cat "$T/out")"
grep -qF 'same rounded inputs): 1 of 2 problems fail' "$T/out" || fail "bf16 tolerance count: $(cat "$T/out")"
grep -qF '| L1_003_c | 5 of 10 | 0.5 | 2 | 4 of 10 |' "$T/out" || fail "bf16 tolerance row: $(cat "$T/out")"
grep -A4 'tf32: 4 problems' "$T/out" | tail -1 | grep -qF '| L1_001_a | 1.200 | unexplained: slower than PyTorch: tf32 ratio 1.200 |' \
    || fail "tf32 worst first: $(cat "$T/out")"
mkdir -p "$T/bare"
python3 scripts/run-figures.py "$T/bare" >"$T/out" 2>&1 && fail "a run without analysis.json passed"
grep -q "run kbv analyze" "$T/out" || fail "the error does not say what to do: $(cat "$T/out")"
echo "run_figures: ok"

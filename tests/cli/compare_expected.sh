#!/bin/bash
# scripts/compare-expected.py on a small run: a class as expected passes, a
# class that differs fails (exit 1, marked !!) unless set.json lists the
# problem under known_gaps, which prints GAP with the reason and exits 0;
# a pair not collected yet is counted apart (exit 1); a set.json that is
# not JSON and a run without analysis.json exit 2.
set -u
T=$(mktemp -d /tmp/kbv-cli-expected.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "compare_expected: $*"; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
mkdir -p "$T/run" "$T/sets/s"
echo '{"sets": [{"name": "s", "dir": "'"$T"'/sets/s"}]}' >"$T/run/manifest.json"
cat >"$T/run/analysis.json" <<'J'
{"sets": [{"name": "s", "problems": [
 {"problem": "L1_001_a", "class": "correct", "evidence": []},
 {"problem": "L1_002_b", "class": "incorrect", "evidence": [{"kind": "class", "text": "D1 trial 0: 3 of 8 elements"}]}]}]}
J
echo '{"name": "s", "expected": {"L1_001_a": "correct", "L1_002_b": "correct"}}' >"$T/sets/s/set.json"
python3 scripts/compare-expected.py "$T/run" >"$T/out" 2>&1
[ $? -eq 1 ] || fail "a differing class did not exit 1: $(cat "$T/out")"
grep -q '^!! s .*L1_002_b .*expected correct .*found incorrect .*D1 trial 0: 3 of 8 elements' "$T/out" || fail "!! line: $(cat "$T/out")"
grep -q '^s: 1 of 2 expectations hold$' "$T/out" || fail "summary: $(cat "$T/out")"
grep -q 'L1_001_a' "$T/out" && fail "a holding expectation listed without --all"
echo '{"name": "s", "expected": {"L1_001_a": "correct", "L1_002_b": "correct"}, "known_gaps": {"L1_002_b": "the tolerance is tighter than the arithmetic"}}' >"$T/sets/s/set.json"
python3 scripts/compare-expected.py "$T/run" --all >"$T/out" 2>&1 || fail "a known gap exited $?: $(cat "$T/out")"
grep -q '^GAP s .*L1_002_b .*found incorrect' "$T/out" || fail "GAP line: $(cat "$T/out")"
grep -q '^    known gap: the tolerance is tighter than the arithmetic$' "$T/out" || fail "gap reason: $(cat "$T/out")"
grep -q '^   s .*L1_001_a .*found correct' "$T/out" || fail "--all line: $(cat "$T/out")"
grep -q '^s: 1 of 2 expectations hold, 1 known gaps$' "$T/out" || fail "gap summary: $(cat "$T/out")"
# A pair an interrupted collect has not run is counted as not collected,
# not listed as a mismatch, and the run does not pass.
cat >"$T/run/analysis.json" <<'J'
{"sets": [{"name": "s", "problems": [
 {"problem": "L1_001_a", "class": "correct", "evidence": []},
 {"problem": "L1_002_b", "class": "error", "evidence": [{"kind": "class", "text": "interrupted: the journal has no status for this pair (continue the run with --resume)"}]}]}]}
J
echo '{"name": "s", "expected": {"L1_001_a": "correct", "L1_002_b": "correct"}}' >"$T/sets/s/set.json"
python3 scripts/compare-expected.py "$T/run" --all >"$T/out" 2>&1
[ $? -eq 1 ] || fail "an uncollected pair did not exit 1: $(cat "$T/out")"
grep -q 'L1_002_b' "$T/out" && fail "an uncollected pair listed: $(cat "$T/out")"
grep -q '^s: 1 of 2 expectations hold, 1 not collected (the run is incomplete)$' "$T/out" ||
    fail "uncollected summary: $(cat "$T/out")"
echo '{"name": ' >"$T/sets/s/set.json"
python3 scripts/compare-expected.py "$T/run" >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q "sets/s/set.json" "$T/out" || fail "a broken set.json: $(cat "$T/out")"
rm "$T/run/analysis.json"
python3 scripts/compare-expected.py "$T/run" >"$T/out" 2>&1
[ $? -eq 2 ] || fail "a run without analysis.json did not exit 2"
echo "compare_expected: ok"

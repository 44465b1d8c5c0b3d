#!/usr/bin/env bash
# scripts/compare-runs.py on two synthetic collects of one problem whose
# baseline runs 5% slower on input set 1: run A drew set 0 in 40 of 60
# rounds, run B set 1 in 40.  With the records naming the set, each run's
# time is the mean of the sets' medians (runjournal.centre, as analyze's
# time_ms) and the runs agree within 0.5%; with the same times and no set
# named, the pooled medians land on different sets and differ by about 5%.
# A run folder without a journal exits 2.
# usage: tests/cli/compare_runs.sh
set -u
tmp=$(mktemp -d /tmp/kbv-compare-runs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "compare_runs: $*"; exit 1; }
python3 - "$tmp" <<'PY'
import json, os, random, sys
d = sys.argv[1]
for labelled in (True, False):
    for name, slow_rounds in (("a", 20), ("b", 40)):
        rng = random.Random(name)
        run = os.path.join(d, ("l" if labelled else "u") + name)
        os.makedirs(run)
        json.dump({"run_id": name}, open(os.path.join(run, "manifest.json"), "w"))
        ks = [1] * slow_rounds + [0] * (60 - slow_rounds)
        rng.shuffle(ks)
        with open(os.path.join(run, "samples.jsonl"), "w") as f:
            for r, k in enumerate(ks):
                rec = {"type": "time", "set": "s", "problem": "L1_039_l2norm", "variant": "fp32", "round": r,
                       "gpu_ms": 9.2 * (1.05 if k else 1.0) * (1 + rng.uniform(-0.001, 0.001))}
                if labelled:
                    rec["input_set"] = k
                f.write(json.dumps(rec) + "\n")
PY
python3 scripts/compare-runs.py "$tmp/la" "$tmp/lb" >"$tmp/out" || fail "labelled: exit $?: $(cat "$tmp/out")"
grep -q "^fp32: largest deviation 0\.[0-4][0-9]% over 1 problems" "$tmp/out" || fail "labelled: $(cat "$tmp/out")"
python3 scripts/compare-runs.py "$tmp/ua" "$tmp/ub" >"$tmp/out" || fail "unlabelled: exit $?: $(cat "$tmp/out")"
grep -q "^fp32: largest deviation [45]\.[0-9]*% over 1 problems" "$tmp/out" || fail "unlabelled: $(cat "$tmp/out")"
grep -q "1 differ by more than 2%" "$tmp/out" || fail "unlabelled summary: $(cat "$tmp/out")"
mkdir "$tmp/empty"
python3 scripts/compare-runs.py "$tmp/la" "$tmp/empty" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "a folder without a journal: not exit 2: $(cat "$tmp/err")"
echo "compare_runs: ok"

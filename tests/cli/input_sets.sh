#!/usr/bin/env bash
# scripts/input-sets.py on two synthetic journals: one whose time records
# name the round's input set, with a baseline 5% apart between the sets
# (listed, the sets' medians shown) and one alike on both (not listed);
# one without input sets whose candidate and baseline move together by
# round (listed by the same-side share) or independently (not listed).
# usage: tests/cli/input_sets.sh
set -u
tmp=$(mktemp -d /tmp/kbv-input-sets.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "input_sets: $*"; exit 1; }
mkdir -p "$tmp/a" "$tmp/b"
python3 - "$tmp" <<'PY'
import json, random, sys
d = sys.argv[1]
rng = random.Random(3)
def write(path, labelled):
    with open(path, "w") as f:
        for prob, gap in (("L1_039_split", 0.05), ("L1_019_alike", 0.0)):
            for r in range(60):
                k = rng.randrange(2)
                noise = lambda: 1 + rng.uniform(-0.002, 0.002)
                for var, base in (("candidate", 2.0), ("fp32", 1.0)):
                    rec = {"type": "time", "set": "s", "problem": prob, "variant": var, "round": r,
                           "gpu_ms": base * (1 + gap * k) * noise()}
                    if labelled:
                        rec["input_set"] = k
                    f.write(json.dumps(rec, separators=(",", ":")) + "\n")
write(d + "/a/samples.jsonl", True)
write(d + "/b/samples.jsonl", False)
PY
python3 scripts/input-sets.py "$tmp/a" >"$tmp/out" || fail "labelled: exit $?"
grep -q "^s .*L1_039_split .*fp32 .*sets 5\.[0-9]*% apart: baseline set 0 [01]\." "$tmp/out" || fail "labelled split: $(cat "$tmp/out")"
grep -q "L1_019_alike" "$tmp/out" && fail "labelled alike listed: $(cat "$tmp/out")"
grep -q "^1 of 2 (set, problem, baseline) over 1% (2 with input sets recorded)$" "$tmp/out" || fail "labelled count: $(cat "$tmp/out")"
python3 scripts/input-sets.py "$tmp/b" >"$tmp/out" || fail "unlabelled: exit $?"
grep -q "^s .*L1_039_split .*no input_set; interquartile .*same side in 0\.[89][0-9] of 60 rounds" "$tmp/out" ||
    fail "unlabelled split: $(cat "$tmp/out")"
grep -q "L1_019_alike" "$tmp/out" && fail "unlabelled alike listed: $(cat "$tmp/out")"
mkdir "$tmp/c"
python3 scripts/input-sets.py "$tmp/c" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "no samples.jsonl" "$tmp/err" || fail "no journal: $(cat "$tmp/err")"
echo "input_sets: ok"

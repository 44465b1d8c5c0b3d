#!/bin/bash
# scripts/predecessor.py on a made-up journal: tf32 is 20% slower after the
# candidate than at the start of a round or after fp32, fp32 is the same
# after anything; the spread per variant, the pair with the largest one,
# the pre-roll count, records marked same_as left out, a torn last line
# skipped, a gzip journal read; a journal with too few samples is an error.
set -u
T=$(mktemp -d /tmp/kbv-cli-pred.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "predecessor: $*"; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
mkdir -p "$T/run"
python3 - "$T/run/samples.jsonl" <<'PY'
import json, sys
orders = [["candidate", "tf32", "fp32"], ["tf32", "fp32", "candidate"], ["fp32", "tf32", "candidate"]]
with open(sys.argv[1], "w") as f:
    for rnd in range(30):
        order = orders[rnd % 3]
        for i, v in enumerate(order):
            ms = {"candidate": 5.0, "fp32": 2.0, "tf32": 0.5}[v]
            if v == "tf32" and i and order[i - 1] == "candidate":
                ms *= 1.2
            f.write(json.dumps({"type": "time", "set": "s", "problem": "L1_001_x", "variant": v, "round": rnd,
                                "gpu_ms": ms, "wall_ms": ms, "preroll": 2 if v == "tf32" else 0}, separators=(",", ":")) + "\n")
        f.write(json.dumps({"type": "time", "set": "s", "problem": "L1_001_x", "variant": "bf16", "round": rnd,
                            "gpu_ms": 9.0, "wall_ms": 9.0, "same_as": "fp32"}, separators=(",", ":")) + "\n")
    f.write('{"type":"time","set":"s","problem":"L1_0')
PY
python3 scripts/predecessor.py "$T/run" --top 3 >"$T/out" 2>&1 || fail "exit $?: $(cat "$T/out")"
grep -Eq '^tf32 +< 1 ms +1 +20\.00% +20\.00% +20\.00%  s/L1_001_x$' "$T/out" || fail "tf32 line: $(cat "$T/out")"
grep -Eq '^fp32 +< 3 ms +1 +0\.00% ' "$T/out" || fail "fp32 line: $(cat "$T/out")"
grep -q '^bf16' "$T/out" && fail "a same_as record was counted: $(cat "$T/out")"
grep -q '20.00%  s          tf32   L1_001_x (after candidate 0.6, after fp32 0.5, after start 0.5, preroll 2)' "$T/out" ||
    fail "largest spread line: $(cat "$T/out")"
python3 scripts/predecessor.py "$T/run" --json "$T/rows.json" >/dev/null || fail "--json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(len(r) != 3)' "$T/rows.json" || fail "--json rows"
gzip "$T/run/samples.jsonl"
python3 scripts/predecessor.py "$T/run" >/dev/null 2>&1 || fail "a gzip journal is not read"
python3 scripts/predecessor.py "$T/run" --min 20 >/dev/null 2>&1 && fail "groups under --min samples passed"
echo "predecessor: ok"

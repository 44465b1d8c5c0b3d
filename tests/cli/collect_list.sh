#!/usr/bin/env bash
# kbv list: text and JSON forms, --help, --version, bad usage (exit 2).
# usage: tests/cli/collect_list.sh BUILD_DIR
set -u
b=${1:-build}
fail() { echo "collect_list: $*"; exit 1; }
[ -x "$b/kbv-list" ] || fail "$b/kbv-list not built"
"$b/kbv-list" --help | grep -q "usage: kbv list" || fail "--help"
"$b/kbv-list" --version | grep -q "kbv" || fail "--version"
"$b/kbv-list" --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option should exit 2"
"$b/kbv-list" | grep -q "^L1_001_square_matrix_multiplication " || fail "text lists L1_001"
json=$("$b/kbv-list" --json) || fail "--json failed"
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ps = d["problems"]
assert len(ps) >= 100, len(ps)
ids = [p["id"] for p in ps]
assert len(set(ids)) == len(ids), "duplicate ids"
for p in ps:
    for k in ("id", "level", "name", "inputs", "outputs", "attrs", "flops", "min_bytes", "baselines"):
        assert k in p, (p["id"], k)
    assert p["baselines"] == ["fp32", "tf32"]
    assert p["bf16_baseline"] in ("native", "native-producer", "fallback"), p["id"]
    for t in p["inputs"]:
        assert set(("name", "shape", "dtype", "role")) <= set(t), p["id"]
        assert t["role"] in ("input", "parameter")
        assert t["dtype"] in ("float32", "int64")
    for t in p["outputs"]:
        assert set(("shape", "dtype")) <= set(t)
relu = next(p for p in ps if p["id"] == "L1_019_relu")
assert relu["inputs"][0]["shape"] == [4096, 393216]
assert relu["flops"] == 4096 * 393216
mm = next(p for p in ps if p["id"] == "L1_001_square_matrix_multiplication")
assert mm["flops"] == 2 * 4096 ** 3 and mm["min_bytes"] == 3 * 4096 * 4096 * 4
conv = next(p for p in ps if p["id"].startswith("L1_050_"))
assert [t["role"] for t in conv["inputs"]] == ["input", "parameter", "parameter"]
assert {"name": "stride", "value": 4} in conv["attrs"]
# level 1 complete, level 2 all but 66 (docs/DESIGN.md 5.1)
assert sum(p["level"] == 1 for p in ps) == 100
assert sum(p["level"] == 2 for p in ps) == 99
assert not any(p["id"].startswith("L2_066_") for p in ps)
' || fail "JSON content"
# The naive set is complete: a candidate and an expected class for every
# problem of the registry, and nothing else.
printf '%s' "$json" | python3 -c '
import json, os, sys
ps = [p["id"] for p in json.load(sys.stdin)["problems"]]
d = "data/candidates/naive"
files = sorted(f[:-3] for f in os.listdir(d) if f.endswith(".cu"))
exp = json.load(open(d + "/set.json"))["expected"]
assert files == sorted(ps), sorted(set(ps) ^ set(files))
assert sorted(exp) == sorted(ps), sorted(set(ps) ^ set(exp))
# plain code is expected correct, but for the ill-conditioned problems
# that the description of the set names and explains
desc = json.load(open(d + "/set.json"))["description"]
assert all(v == "correct" or (v == "incorrect" and k[:6] in desc) for k, v in exp.items())
' || fail "naive set not complete"
exit 0

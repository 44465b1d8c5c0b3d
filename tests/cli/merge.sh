#!/usr/bin/env bash
# kbv merge: shards of one run join into the whole run, pair for pair, and
# analyse to the whole run's numbers; shards of different runs, a pair in two
# shards and a pair in none are refused with exit 2 and nothing written.
set -u
build=$1
kbv=$build/kbv
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

python3 - "$t" <<'PY'
import json, os, random, sys
t = sys.argv[1]
sets = ["a", "b"]
problems = ["L1_001_square_matrix_multiplication", "L1_019_relu", "L1_023_softmax"]
def manifest(run_id, shard):
    return {"schema": "kbv-run/1", "run_id": run_id, "created_utc": "2026-11-29T00:00:00Z",
            "harness": {"version": "0.1.0", "git_commit": "abc"},
            "device": {"name": "NVIDIA H200", "driver": "580"},
            "config": {"seed": 7, "atol": 1e-3, "rtol": 1e-3, "shard": shard},
            "problems": problems,
            "sets": [{"name": s, "dir": "data/candidates/" + s, "files": {p: "0" * 64 for p in problems}} for s in sets]}
rng = random.Random(3)
pairs = [(s, p) for s in sets for p in problems]
records = []
for s, p in pairs:
    base = {"set": s, "problem": p}
    records.append(dict(base, type="build", ok=True, seconds=1.0, log=""))
    records.append(dict(base, type="check", dist="D1", trial=0, seed=7, **{"pass": True}, max_abs_err=0.0,
                        max_rel_err=0.0, mismatches=0, nonfinite=0, unwritten=0, tier="fp32"))
    for r in range(31):
        for v in ("fp32", "tf32", "candidate"):
            records.append(dict(base, type="time", variant=v, round=r, gpu_ms=rng.uniform(0.9, 1.1), wall_ms=1.2))
    for v in ("fp32", "tf32", "candidate"):
        records.append(dict(base, type="memory", variant=v, peak_bytes=1000, io_bytes=800, leaked_bytes=0))
    records.append(dict(base, type="status", status="ok", detail=""))
def write(d, recs, shard):
    os.makedirs(d)
    json.dump(manifest(os.path.basename(d), shard), open(d + "/manifest.json", "w"))
    with open(d + "/samples.jsonl", "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
write(t + "/whole", records, None)
for i in range(2):
    keep = {pairs[k] for k in range(len(pairs)) if k % 2 == i}
    write(t + "/shard%d" % i, [r for r in records if (r["set"], r["problem"]) in keep], "%d/2" % (i + 1))
    # Each shard's workers chose their own baseline kernels (collect lists
    # them in the manifest): shards differ there and are still one run.
    d = t + "/shard%d" % i
    m = json.load(open(d + "/manifest.json"))
    m["baseline_choices"] = [{"set": "a", "problem": "L1_001_square_matrix_multiplication", "variant": "tf32",
                              "choice": "choice of shard %d" % i}]
    json.dump(m, open(d + "/manifest.json", "w"))
# A shard of another run (other seed), and one that repeats a pair.
m = manifest("other", "2/2"); m["config"]["seed"] = 8
os.makedirs(t + "/other"); json.dump(m, open(t + "/other/manifest.json", "w"))
open(t + "/other/samples.jsonl", "w").close()
PY

"$kbv" merge "$t/merged" "$t/shard1" "$t/shard0" || fail "merge of two good shards failed"
[ -f "$t/merged/SHA256SUMS" ] || fail "no SHA256SUMS"
"$kbv" verify "$t/merged" >/dev/null || fail "merged run does not verify"
# Pair for pair, in the whole run's order.
python3 - "$t" <<'PY' || exit 1
import json, sys
t = sys.argv[1]
whole = [json.loads(l) for l in open(t + "/whole/samples.jsonl")]
merged = [json.loads(l) for l in open(t + "/merged/samples.jsonl")]
assert whole == merged, "merged journal differs from the whole run's"
m = json.load(open(t + "/merged/manifest.json"))
assert "shard" not in m["config"] and sorted(m["shards"]) == ["shard0", "shard1"], m
assert [c["choice"] for c in m["baseline_choices"]] == ["choice of shard 1", "choice of shard 0"], m["baseline_choices"]
PY
if [ -x "$build/kbv-analyze" ]; then
    "$build/kbv-analyze" "$t/whole" 2>/dev/null && "$build/kbv-analyze" "$t/merged" 2>/dev/null ||
        fail "analyze failed on the whole or merged run"
    python3 - "$t" <<'PY' || exit 1
import json, sys
t = sys.argv[1]
a = json.load(open(t + "/whole/analysis.json"))["sets"]
b = json.load(open(t + "/merged/analysis.json"))["sets"]
assert a == b, "merged run analyses differently from the whole run"
PY
fi

"$kbv" merge "$t/bad1" "$t/shard0" "$t/other" 2>"$t/err"; rc=$?
[ $rc -eq 2 ] || fail "shards of two runs: exit $rc, want 2"
grep -q 'config.seed' "$t/err" || fail "message does not name the difference: $(cat "$t/err")"
[ ! -e "$t/bad1" ] || fail "refused merge left $t/bad1"
"$kbv" merge "$t/bad2" "$t/shard0" "$t/shard0" "$t/shard1" 2>"$t/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'in two shards' "$t/err" || fail "duplicate pair not refused: $rc $(cat "$t/err")"
"$kbv" merge "$t/bad3" "$t/shard0" 2>"$t/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'in no shard' "$t/err" || fail "missing pair not refused: $rc $(cat "$t/err")"
"$kbv" merge "$t/merged" "$t/shard0" "$t/shard1" 2>/dev/null && fail "merge over an existing folder"
ls "$t" | grep -q '\.tmp\.' && fail "temporary folder left behind"
exit 0

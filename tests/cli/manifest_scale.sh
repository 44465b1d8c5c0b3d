#!/usr/bin/env bash
# Issue 19, case 9: readers of a manifest scale linearly.  A manifest of
# 100k problem ids: kbv-analyze --parity-only (a parity.json, which looks
# every problem up), kbv-render and kbv merge of two shards succeed and
# merge keeps every record.  Their times are printed; they are a limit only
# with KBV_SCALE_LIMIT_MS set (scripts/bench.sh sets 2000: each took well
# under 2 s on the 2-core machine, where a linear search per id took
# minutes), because a wall-clock limit in `make test` fails on a loaded
# machine rather than on a slow reader.
# KBV_SCALE_N sets another number of ids (1000000: about ten times the time
# of 100k, as linear readers take: render 7.6 s for a 22k-page PDF, merge 2.1 s
# and 640 MB, on the 2-core machine); KBV_KEEP_TEST=1 keeps the folder.
# usage: tests/cli/manifest_scale.sh BUILD_DIR
set -u
build=$(cd "${1:-build}" && pwd)
export KBV_TEMPLATES="$PWD/templates"
unset SOURCE_DATE_EPOCH
tmp=$(mktemp -d /tmp/kbv-manifest-scale.XXXXXX)
trap '[ "${KBV_KEEP_TEST:-0}" = 1 ] || rm -rf "$tmp"' EXIT
fail() { echo "manifest_scale: $*"; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
N=${KBV_SCALE_N:-100000}

python3 - "$tmp" "$N" tests/fixtures/render_run tests/fixtures/render_parity.json <<'PY'
import json, os, sys
d, n, fx, par = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
a = json.load(open(fx + "/analysis.json"))
m = json.load(open(fx + "/manifest.json"))
own = list(m["problems"])
probs = own + ["L9_%06d_filler" % i for i in range(n - len(own))]
m["problems"] = probs
os.makedirs(d + "/r")
json.dump(m, open(d + "/r/manifest.json", "w"))
json.dump(a, open(d + "/r/analysis.json", "w"))
p = json.load(open(par))
p["problems"] += [{"id": x, "fp32_ratio": 1.0, "tf32_ratio": 1.0, "exception": None} for x in probs[-2000:]]
json.dump(p, open(d + "/r/parity.json", "w"))
# two shards of one run: every pair once, as a status record
for k in (1, 2):
    s = dict(m, run_id="shard%d" % k, sets=[{"name": "only", "dir": "x", "files": {}}])
    os.makedirs(d + "/s%d" % k)
    json.dump(s, open(d + "/s%d/manifest.json" % k, "w"))
    with open(d + "/s%d/samples.jsonl" % k, "w") as f:
        for i, pid in enumerate(probs):
            if i % 2 == k - 1:
                f.write('{"type":"status","set":"only","problem":"%s","status":"missing","detail":""}\n' % pid)
PY

# timed CMD...: runs CMD, prints its time, and fails when it takes
# KBV_SCALE_LIMIT_MS or more (no limit when unset).
limit=${KBV_SCALE_LIMIT_MS:-0}
timed() {
    local t0 t1
    t0=$(date +%s%N)
    "$@" >"$tmp/out" 2>&1 || fail "$*: exit $?: $(tail -3 "$tmp/out")"
    t1=$(date +%s%N)
    local ms=$(( (t1 - t0) / 1000000 ))
    echo "manifest_scale: $(basename "$1") with $N problem ids: $ms ms"
    [ "$limit" -le 0 ] || [ "$ms" -lt "$limit" ] ||
        fail "$(basename "$1") with $N problem ids took $ms ms (limit $limit)"
}
timed "$build/kbv-analyze" --parity-only "$tmp/r"
timed "$build/kbv-render" "$tmp/r"
timed "$build/kbv-merge" "$tmp/m" "$tmp/s1" "$tmp/s2"
[ "$(wc -l <"$tmp/m/samples.jsonl")" -eq "$N" ] || fail "merge: $(wc -l <"$tmp/m/samples.jsonl") records, want $N"
exit 0

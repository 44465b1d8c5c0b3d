#!/bin/bash
# kbv-collect and kbv-worker end to end on a CPU stand-in for the GPU
# (tests/fakegpu: a fake CUDA runtime and GPU library on host memory, fake
# candidates built by a fake nvcc).  The worker's own code is compiled
# unchanged, so this runs the whole protocol without a GPU: one candidate per
# class, a crasher, a hanger, an out-of-memory and an illegal address, each
# classified by kbv-analyze as its set.json expects; then a kill -9 in the
# middle of a run and --resume, with every pair in the journal exactly once
# (the resume on "another GPU", whose UUID collect logs).
# Skipped (pass) without the CUDA headers.
set -u
B=${1:-build}
CUDA_INC=${CUDA_INC:-/usr/local/cuda/include}
[ -f "$CUDA_INC/cuda_runtime_api.h" ] || { echo "skip: no CUDA headers"; exit 0; }
command -v python3 >/dev/null || { echo "skip: no python3 for the checks"; exit 0; }
for l in libkbv_collecthost.a libkbv_suite.a libkbv_common.a; do
    [ -f "$B/$l" ] || { echo "collect_fake: no $B/$l"; exit 1; }
done
T=$(mktemp -d /tmp/kbv-cli-fake.XXXXXX)
trap '[ "${KBV_KEEP_TEST:-0}" = 1 ] && echo "kept $T" || rm -rf "$T"' EXIT
fail() { echo "collect_fake: $*"; exit 1; }
F=tests/fakegpu
# Machines without cJSON installed carry it unpacked (DEPS_ROOT, see Makefile).
tests/fakegpu/build.sh "$B" "$T" || fail "fake build: see above"

export NVCC="$PWD/$F/nvcc" KBV_INCLUDE="$PWD/include" KBV_CACHE="$T/cache" CUDA_INC
# 8 s a pair: the deferred-work stand-in's 500 rounds take about 4 s on
# an idle CPU, more on a loaded CI machine; f-hang waits the whole limit.
"$T/bin/kbv-collect" --suite smoke --problems L1_019_relu --candidates "$F/sets" --out "$T/run" \
    --timeout 8 2>"$T/log" || fail "collect exited $?: $(tail -5 "$T/log")"
if [ -x "$B/kbv-analyze" ]; then
    "$B/kbv-analyze" "$T/run" 2>"$T/alog" || fail "kbv-analyze: $(tail -3 "$T/alog")"
    python3 tests/gpu/check_run.py "$T/run" "$F/sets" >"$T/check" || { cat "$T/check"; fail "classes"; }
else
    python3 tests/gpu/check_run.py "$T/run" "$F/sets" --journal-only >"$T/check" || { cat "$T/check"; fail "journal"; }
fi
analyzed=0
[ -x "$B/kbv-analyze" ] && analyzed=1
python3 - "$T/run" "$analyzed" <<'PY' || exit 1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/samples.jsonl")]
def of(s, t): return [r for r in recs if r["set"] == s and r["type"] == t]
mem = {r["variant"]: r for r in of("f-stale", "memory")}
# The stale candidate's 6.4 GB scratch (cudaMalloc in kbv_setup) counts
# toward its peak: io 2 x 6442450944 bytes plus the scratch.
if mem["candidate"]["peak_bytes"] != 3 * 6442450944 or mem["candidate"]["leaked_bytes"] != 0:
    print("collect_fake: stale memory", mem["candidate"]); sys.exit(1)
if mem["fp32"]["peak_bytes"] != 2 * 6442450944 + (32 << 20):
    print("collect_fake: fp32 memory", mem["fp32"]); sys.exit(1)
checks = of("f-stale", "check")
if not checks or any(c["unwritten"] == 0 or c["unwritten"] != c["mismatches"] for c in checks):
    print("collect_fake: stale checks", checks[:1]); sys.exit(1)
# A workspace taken only in timed calls counts: the peak is the larger of
# the memory call's and the timed phase's.
tm = {r["variant"]: r for r in of("f-timedmem", "memory")}
if tm.get("candidate", {}).get("peak_bytes") != 2 * 6442450944 + (4 << 30):
    print("collect_fake: f-timedmem memory", tm.get("candidate")); sys.exit(1)
t = of("f-correct", "time")
n = {v: sum(1 for r in t if r["variant"] == v) for v in ("candidate", "fp32", "tf32")}
if min(n.values()) < 30 or max(n.values()) > 500:
    print("collect_fake: sample counts", n); sys.exit(1)
# The baseline names its kernel once per worker: ReLU has no product, so
# fp32 only, with the fake's text.
b = of("f-correct", "baseline")
if len(b) != 1 or b[0]["variant"] != "fp32" or b[0]["choice"] != "fake: host ReLU loop":
    print("collect_fake: baseline records", b); sys.exit(1)
m = json.load(open(sys.argv[1] + "/manifest.json"))
if m["device"]["name"] != "Fake GPU (CPU stand-in)" or m["config"]["arch"] != 90:
    print("collect_fake: manifest device", m["device"]); sys.exit(1)
# The manifest names each problem's D5 (issue 18), as kbv list does.
if m.get("d5_label", {}).get("L1_019_relu") != "x rows of alternating sign" or "L1_019_relu" not in m.get("d5", {}):
    print("collect_fake: manifest d5", m.get("d5"), m.get("d5_label")); sys.exit(1)
# The manifest records every baseline choice of the journal (issue 15).
want = [{k: r[k] for k in ("set", "problem", "variant", "choice")} for r in recs if r["type"] == "baseline"]
if not want or m.get("baseline_choices") != want:
    print("collect_fake: manifest baseline_choices", m.get("baseline_choices"), "journal", want); sys.exit(1)
# The timed phase's own probes and the second clock (issue 14).
tp = [r for r in recs if r["type"] == "probe" and r["set"] == "f-correct"]
names = {r["probe"]: r["pass"] for r in tp}
if names.get("timed-output") is not True or names.get("clock-agreement") is not True:
    print("collect_fake: timed probes of the correct candidate", names); sys.exit(1)
if not all("gt_ms" in r for r in of("f-correct", "time")):
    print("collect_fake: time records without gt_ms"); sys.exit(1)
# Every sample names its round's timed input set, one set for all the
# variants of a round, and both sets are drawn.
by_round = {}
for r in of("f-correct", "time"):
    by_round.setdefault(r["round"], set()).add(r.get("input_set"))
if any(len(v) != 1 or not v <= {0, 1} for v in by_round.values()) or \
        set().union(*by_round.values()) != {0, 1}:
    print("collect_fake: input_set by round", sorted(by_round.items())[:5]); sys.exit(1)
# The L2 policy a candidate leaves is put back before every flush and said
# in the environment probe, which passes.
# A candidate exact where checked and TF32-close where timed is a tf32
# candidate: the verified timed rounds' tier is in the timed-output probe,
# and analyze takes it.
to = [r for r in of("f-timedprec", "probe") if r["probe"] == "timed-output"]
if len(to) != 1 or to[0].get("tier") != "tf32" or not to[0]["pass"]:
    print("collect_fake: timed-output probe of f-timedprec", to); sys.exit(1)
if any(c["tier"] != "fp32" for c in of("f-timedprec", "check") if c.get("pass")):
    print("collect_fake: f-timedprec's checks should be fp32-exact"); sys.exit(1)
if sys.argv[2] == "1":
    a = json.load(open(sys.argv[1] + "/analysis.json"))
    pr = [q for st in a["sets"] if st["name"] == "f-timedprec" for q in st["problems"]]
    if len(pr) != 1 or pr[0]["tier"] != "tf32" or "precision-tf32" not in pr[0]["flags"]:
        print("collect_fake: analysis of f-timedprec", pr); sys.exit(1)
    ev = [x["text"] for x in pr[0]["evidence"] if x["name"] == "precision-tf32"]
    if not ev or "timed rounds" not in ev[0]:
        print("collect_fake: f-timedprec's flag does not say where", ev); sys.exit(1)
# A timed-round failure that an untimed call on a copy of the same inputs,
# in new buffers, reproduces is the candidate's numerics (incorrect,
# set.json), and the probe says so.
to = [r for r in of("f-timededge", "probe") if r["probe"] == "timed-output"]
if len(to) != 1 or to[0]["pass"] is not False or to[0].get("reproduced_untimed") is not True \
        or "was wrong too (1 mismatching, 0 unwritten" not in to[0]["detail"]:
    print("collect_fake: timed-output probe of f-timededge", to); sys.exit(1)
env = [r for r in of("f-l2persist", "probe") if r["probe"] == "environment"]
if len(env) != 1 or env[0]["pass"] is not True or "persisting-L2 limit left at 1048576 bytes" not in env[0]["detail"]:
    print("collect_fake: environment probe of f-l2persist", env); sys.exit(1)
PY

# collect sealed the raw files (issue 19): SHA256SUMS lists the manifest
# and the journal, and the run verifies.
grep -q '  manifest.json$' "$T/run/SHA256SUMS" && grep -q '  samples.jsonl$' "$T/run/SHA256SUMS" ||
    fail "collect did not seal manifest.json and samples.jsonl: $(cat "$T/run/SHA256SUMS" 2>/dev/null)"
if [ -x "$B/kbv" ]; then
    rm -f "$T/run/analysis.json"
    "$B/kbv" verify "$T/run" >"$T/vlog" 2>&1 || { cat "$T/vlog"; fail "a collected run does not verify"; }
fi

# kill -9 while the hanger runs (after at least one pair finished), then resume.
args=(--suite smoke --problems L1_019_relu --candidates "$F/sets/correct" --candidates "$F/sets/hang"
      --candidates "$F/sets/incorrect" --out "$T/run2" --timeout 5)
KBV_FAKE_GPU_UUID=1 "$T/bin/kbv-collect" "${args[@]}" 2>"$T/log2" &
pid=$!
for _ in $(seq 1 200); do
    grep -q '"set":"f-hang".*"type":"\|"type":"build","set":"f-hang"' "$T/run2/samples.jsonl" 2>/dev/null && break
    sleep 0.05
done
sleep 0.5
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
grep -q '"status","set":"f-hang"\|"set":"f-hang","problem":"L1_019_relu","status"' "$T/run2/samples.jsonl" && fail "the kill came too late"
KBV_FAKE_GPU_UUID=2 "$T/bin/kbv-collect" "${args[@]}" --resume 2>"$T/log3" || fail "--resume exited $?: $(tail -3 "$T/log3")"
grep -q "resume: 1 pairs done" "$T/log3" || fail "resume did not find the finished pair: $(grep resume "$T/log3")"
# The manifest keeps the first GPU's UUID; the share on another one is logged.
grep -q '"uuid":[[:space:]]*"GPU-01010101-0101-0101-0101-010101010101"' "$T/run2/manifest.json" ||
    fail "the manifest lacks the first GPU's UUID: $(grep uuid "$T/run2/manifest.json")"
grep -q "this share runs on GPU-02020202-0202-0202-0202-020202020202, another GPU than the run started on" "$T/log3" ||
    fail "a share on another GPU was not logged: $(grep -i gpu "$T/log3" | head -3)"
python3 tests/gpu/check_run.py "$T/run2" "$F/sets" --journal-only >"$T/check2" || { cat "$T/check2"; fail "journal after resume"; }
# The killed run was never sealed; the resume that completed it was.
if [ -x "$B/kbv" ]; then
    "$B/kbv" verify "$T/run2" >"$T/vlog" 2>&1 || { cat "$T/vlog"; fail "a resumed run does not verify"; }
fi
exit 0

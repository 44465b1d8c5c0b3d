#!/bin/bash
# The BF16 setting (issue 17) end to end on the CPU stand-in for the GPU
# (tests/fakegpu): bf16 sets (set.json "precision": "bf16") beside an FP32
# one, collected with --precision all, then bf16 and fp32 alone.  Checks
# that a bf16 pair times only the candidate and the bf16 baseline, with the
# BF16 tolerance max(1e-2 min(1, max|ref|), 2^-23) + 1e-2 |ref| (a candidate 0.4% off
# passes, one 5% off fails, at D1's scale and D3's), that
# bfloat16 poison shows as unwritten elements, and what the manifest says;
# and that the identity probe compares at bfloat16 precision: a correct
# tanh, a bitwise copy of its input on D3's small values, is not an
# identity hack there, and a copy of the input still is.
# Skipped (pass) without the CUDA headers.
set -u
B=${1:-build}
CUDA_INC=${CUDA_INC:-/usr/local/cuda/include}
[ -f "$CUDA_INC/cuda_runtime_api.h" ] || { echo "skip: no CUDA headers"; exit 0; }
command -v python3 >/dev/null || { echo "skip: no python3 for the checks"; exit 0; }
for l in libkbv_collecthost.a libkbv_suite.a libkbv_common.a; do
    [ -f "$B/$l" ] || { echo "collect_fake_bf16: no $B/$l"; exit 1; }
done
T=$(mktemp -d /tmp/kbv-cli-fakebf16.XXXXXX)
trap '[ "${KBV_KEEP_TEST:-0}" = 1 ] && echo "kept $T" || rm -rf "$T"' EXIT
fail() { echo "collect_fake_bf16: $*"; exit 1; }
F=tests/fakegpu
tests/fakegpu/build.sh "$B" "$T" || fail "fake build: see above"
export NVCC="$PWD/$F/nvcc" KBV_INCLUDE="$PWD/include" KBV_CACHE="$T/cache" CUDA_INC
C=(--suite smoke --problems L1_019_relu --timeout 10 --max-time 0.3 --candidates "$F/sets-bf16" --candidates "$F/sets/correct")

"$T/bin/kbv-collect" "${C[@]}" --out "$T/all" 2>"$T/log" || fail "collect exited $?: $(tail -5 "$T/log")"
python3 tests/gpu/check_run.py "$T/all" "$F/sets-bf16" --journal-only >"$T/check" || { cat "$T/check"; fail "journal"; }
python3 - "$T/all" <<'PY' || exit 1
import json, sys
run = sys.argv[1]
recs = [json.loads(l) for l in open(run + "/samples.jsonl")]
m = json.load(open(run + "/manifest.json"))
def bad(*a):
    print("collect_fake_bf16:", *a); sys.exit(1)
sets = {s["name"]: s for s in m["sets"]}
if sorted(sets) != ["f-correct", "fb-correct", "fb-incorrect", "fb-stale", "fb-tolerance"]:
    bad("manifest sets", sorted(sets))
if sets["f-correct"]["precision"] != "fp32" or "compare_with" in sets["f-correct"]:
    bad("fp32 set entry", sets["f-correct"])
if sets["fb-correct"]["precision"] != "bf16" or sets["fb-correct"].get("compare_with") != "f-correct":
    bad("bf16 set entry", sets["fb-correct"])
if "compare_with" in sets["fb-stale"]:
    bad("compare_with where set.json has none", sets["fb-stale"])
if m["config"]["timing"].get("max_s_scope") != "pair" or m["config"]["timing"].get("max_s") != 0.3:
    bad("config.timing: the time cap bounds the pair's rounds", m["config"]["timing"])
if m["config"].get("tolerance_bf16") != {"atol": 0.01, "rtol": 0.01, "atol_scale": "min(1, max|ref|)",
                                         "atol_min": 2.0 ** -23}:
    bad("config.tolerance_bf16", m["config"].get("tolerance_bf16"))
def of(s, t): return [r for r in recs if r["set"] == s and r["type"] == t]
tam = [r for r in recs if r["type"] == "tamper"]
if tam:
    bad("tamper records", tam[:1])
for s in ("fb-correct", "fb-tolerance", "fb-incorrect", "fb-stale"):
    st = of(s, "status")
    if len(st) != 1 or st[0]["status"] != "ok":
        bad(s, "status", st)
for s in ("fb-correct", "fb-tolerance", "fb-incorrect"):
    tv = {r["variant"] for r in of(s, "time")}
    if tv != {"candidate", "bf16"}:
        bad(s, "time variants", tv)
    n = {v: sum(1 for r in of(s, "time") if r["variant"] == v) for v in tv}
    if n["candidate"] != n["bf16"] or n["candidate"] < 3:
        bad(s, "rounds", n)
    mv = sorted(r["variant"] for r in of(s, "memory"))
    if mv != ["bf16", "candidate"]:
        bad(s, "memory variants", mv)
    b = of(s, "baseline")
    if len(b) != 1 or b[0]["variant"] != "bf16" or b[0]["choice"] != "fake: host ReLU loop on bf16":
        bad(s, "baseline records", b)
    # The io bytes are bfloat16: 2 bytes per element of input and output.
    if of(s, "memory")[0]["io_bytes"] != 2 * 2 * 4096 * 393216:
        bad(s, "io_bytes", of(s, "memory")[0]["io_bytes"])
def checks(s): return [r for r in of(s, "check") if not r.get("skipped")]
if not all(c["pass"] and c["tier"] == "fp32" for c in checks("fb-correct")):
    bad("fb-correct checks", [c for c in checks("fb-correct") if not c["pass"]][:1])
tol = checks("fb-tolerance")
if not all(c["pass"] for c in tol) or not any(c["tier"] == "half" for c in tol):
    bad("fb-tolerance checks (within 1e-2, beyond 1e-3)", tol[:2])
# 5% off fails on D1 (values up to 1), and on D3 (x0.01) too: the absolute
# term scales with the reference (1e-2 min(1, max |ref|) = 1e-4 there),
# where a fixed 1e-2 covered the whole error.
for dn in ("D1", "D3"):
    dc = [c for c in checks("fb-incorrect") if c["dist"] == dn]
    if not dc or not all(not c["pass"] and c["unwritten"] == 0 for c in dc):
        bad("fb-incorrect checks on", dn, dc[:1])
stale = checks("fb-stale")
if not stale or any(c["pass"] or c["unwritten"] == 0 or c["unwritten"] != c["mismatches"] for c in stale):
    bad("fb-stale checks", stale[:1])
probes = {r["probe"]: r["pass"] for r in of("fb-correct", "probe")}
want = ["input-independence", "identity", "input-mutation", "caching", "determinism", "timed-output",
        "clock-agreement", "deferred-work", "physical-floor"]
if any(probes.get(p) is not True for p in want):
    bad("fb-correct probes", probes)
fp = {r["variant"] for r in of("f-correct", "time")}
if fp != {"candidate", "fp32", "tf32"}:
    bad("the fp32 set's time variants", fp)
PY

"$T/bin/kbv-collect" "${C[@]}" --precision bf16 --out "$T/bf16" 2>"$T/log2" || fail "collect --precision bf16: $(tail -3 "$T/log2")"
"$T/bin/kbv-collect" "${C[@]}" --precision fp32 --out "$T/fp32" 2>"$T/log3" || fail "collect --precision fp32: $(tail -3 "$T/log3")"
python3 - "$T" <<'PY' || exit 1
import json, sys
t = sys.argv[1]
b = [s["name"] for s in json.load(open(t + "/bf16/manifest.json"))["sets"]]
f = [s["name"] for s in json.load(open(t + "/fp32/manifest.json"))["sets"]]
if b != ["fb-correct", "fb-incorrect", "fb-stale", "fb-tolerance"] or f != ["f-correct"]:
    print("collect_fake_bf16: --precision kept", b, f); sys.exit(1)
PY
"$T/bin/kbv-collect" --suite level1 --problems L1_022_tanh --timeout 10 --max-time 0.3 \
    --candidates "$F/sets-bf16-tanh" --out "$T/tanh" 2>"$T/log5" || fail "collect of the tanh sets: $(tail -3 "$T/log5")"
python3 - "$T/tanh" <<'PY' || exit 1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/samples.jsonl")]
def probe(s):
    p = [r for r in recs if r["set"] == s and r["type"] == "probe" and r["probe"] == "identity"]
    if len(p) != 1:
        print("collect_fake_bf16: identity probes of", s, p); sys.exit(1)
    return p[0]
ok, copy = probe("fb-tanh"), probe("fb-copy")
if ok["pass"] is not True:
    print("collect_fake_bf16: a correct bf16 tanh taken for an identity:", ok["detail"]); sys.exit(1)
if copy["pass"] is not False or "rounded to bfloat16" not in copy["detail"]:
    print("collect_fake_bf16: the copy of the input passed the identity probe:", copy); sys.exit(1)
d3 = [r for r in recs if r["set"] == "fb-tanh" and r["type"] == "check" and r["dist"] == "D3"]
if not d3 or not all(r["pass"] for r in d3):
    print("collect_fake_bf16: the bf16 tanh on D3", d3[:1]); sys.exit(1)
PY
"$B/kbv" analyze "$T/tanh" >/dev/null 2>"$T/log6" || fail "analyze of the tanh run: $(tail -3 "$T/log6")"
python3 tests/gpu/check_run.py "$T/tanh" "$F/sets-bf16-tanh" >"$T/check2" || { cat "$T/check2"; fail "tanh classes"; }
"$T/bin/kbv-collect" "${C[@]}" --precision half --out "$T/x" 2>"$T/log4"
[ $? -eq 2 ] && grep -q "fp32, bf16 or all" "$T/log4" || fail "--precision half: $(cat "$T/log4")"
echo "collect_fake_bf16: ok"

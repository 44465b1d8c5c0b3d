#!/bin/bash
# tests/gpu/run.sh BUILD_DIR - the end-to-end tests of collect on a CUDA GPU
# (make test-gpu).  Runs kbv-collect on the purpose-built candidates of
# tests/gpu/sets (a correct one and one for every class of DESIGN.md 7, a
# crasher, a hanger, an out-of-memory and an illegal address; t-bf16 and
# t-bf16-wrong in the BF16 setting), analyzes the
# run and checks every class against the sets' set.json; then kills a
# collect with SIGKILL mid-run, resumes it and checks that every pair is in
# the journal exactly once; then collects tests/gpu/sets-tanh (a correct
# bf16 tanh, whose D3 outputs copy its inputs, and a copy of the input) for
# the identity probe at bfloat16 precision; then checks that the recurrent
# baselines replayed as a CUDA graph compute what their direct launch does
# (tests/gpu/replay.py, with PyTorch).  Takes a few minutes on an H200.
set -u
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kbv-test-gpu.XXXXXX")
KEEP=${KBV_KEEP_TEST:-0}
cleanup() { [ "$KEEP" = 1 ] && echo "kept $TMP" || rm -rf "$TMP"; }
trap cleanup EXIT
export KBV_CACHE="$TMP/cache"     # every candidate really builds
fail=0
t_start=$(date +%s)
# KBV_GPU_STEPS (space-separated, default all of them: smoke resume tanh
# replay hostile interrupt pins) picks steps, so that a device call too
# short for the whole (about eight minutes on an H200 besides the build)
# can run it in two shares.
all_steps="smoke resume tanh replay hostile interrupt pins"
steps=${KBV_GPU_STEPS:-$all_steps}
for s in $steps; do
    case " $all_steps " in
        *" $s "*) ;;
        *) echo "test-gpu: KBV_GPU_STEPS: no step '$s' ($all_steps)"; exit 2 ;;
    esac
done
want() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }

command -v python3 >/dev/null || { echo "test-gpu: the checks need python3"; exit 1; }
if ! "$BUILD/kbv-worker" --device-info >/dev/null 2>"$TMP/devinfo.err"; then
    echo "test-gpu: no usable CUDA GPU: $(tail -c 300 "$TMP/devinfo.err")"
    exit 1
fi

if want smoke; then
echo "test-gpu: 1. collect on tests/gpu/sets (smoke suite)"
t0=$(date +%s)
"$BUILD/kbv-collect" --suite smoke --candidates tests/gpu/sets --out "$TMP/run" --timeout 45 \
    2>"$TMP/collect.log"
rc=$?
echo "test-gpu:    collect exit $rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then
    echo "FAIL: kbv-collect exited $rc"; tail -20 "$TMP/collect.log"; fail=1
fi
if [ -x "$BUILD/kbv-analyze" ]; then
    if ! "$BUILD/kbv-analyze" "$TMP/run" 2>"$TMP/analyze.log"; then
        echo "FAIL: kbv-analyze: $(tail -3 "$TMP/analyze.log")"; fail=1
        python3 "$HERE/check_run.py" "$TMP/run" tests/gpu/sets --journal-only || fail=1
    else
        python3 "$HERE/check_run.py" "$TMP/run" tests/gpu/sets || fail=1
    fi
else
    echo "test-gpu:    no $BUILD/kbv-analyze: checking the journal only"
    python3 "$HERE/check_run.py" "$TMP/run" tests/gpu/sets --journal-only || fail=1
fi
cp "$TMP/run/samples.jsonl" "$TMP/collect.log" "${KBV_TEST_GPU_OUT:-$TMP}/" 2>/dev/null

fi
if want resume; then
echo "test-gpu: 2. kill -9 in the middle of a run, then --resume"
t0=$(date +%s)
args=(--suite smoke --candidates tests/gpu/sets/correct --candidates tests/gpu/sets/incorrect
      --out "$TMP/run2" --timeout 45)
"$BUILD/kbv-collect" "${args[@]}" 2>"$TMP/collect2.log" &
pid=$!
# Wait until one pair is finished and the next has records, then kill.
killed=0
for _ in $(seq 1 600); do
    if [ -f "$TMP/run2/samples.jsonl" ] &&
       python3 - "$TMP/run2/samples.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
seen_status = False
for l in lines:
    try:
        r = json.loads(l)
    except ValueError:
        continue
    if r["type"] == "status":
        seen_status = True
    elif seen_status and r["type"] in ("check", "time"):
        sys.exit(0)
sys.exit(1)
PY
    then
        kill -9 $pid; killed=1; break
    fi
    kill -0 $pid 2>/dev/null || break
    sleep 0.2
done
wait $pid 2>/dev/null
if [ $killed -ne 1 ]; then
    echo "FAIL: the run ended before it could be killed"; fail=1
else
    n_before=$(wc -l <"$TMP/run2/samples.jsonl")
    sleep 1   # the orphaned worker dies on its next write (SIGPIPE)
    if ! "$BUILD/kbv-collect" "${args[@]}" --resume 2>"$TMP/resume.log"; then
        echo "FAIL: --resume: $(tail -3 "$TMP/resume.log")"; fail=1
    fi
    echo "test-gpu:    killed with $n_before journal lines; resumed: $(grep -m1 'resume:' "$TMP/resume.log")"
    python3 "$HERE/check_run.py" "$TMP/run2" tests/gpu/sets --journal-only || fail=1
    # A resume with other settings must refuse (exit 2).
    "$BUILD/kbv-collect" "${args[@]}" --resume --seed 8 2>/dev/null
    rc=$?
    if [ $rc -ne 2 ]; then echo "FAIL: --resume with another seed exited $rc, not 2"; fail=1; fi
fi
echo "test-gpu:    in $(( $(date +%s) - t0 )) s"

fi
if want tanh; then
echo "test-gpu: 3. the identity probe at bfloat16 precision (tests/gpu/sets-tanh)"
t0=$(date +%s)
if ! "$BUILD/kbv-collect" --suite level1 --problems L1_022_tanh --candidates tests/gpu/sets-tanh --out "$TMP/tanh" \
        --trials 1 --max-time 0.3 --timeout 60 2>"$TMP/tanh.log"; then
    echo "FAIL: kbv-collect on sets-tanh: $(tail -3 "$TMP/tanh.log")"; fail=1
elif ! "$BUILD/kbv-analyze" "$TMP/tanh" >/dev/null 2>>"$TMP/tanh.log"; then
    echo "FAIL: kbv analyze on sets-tanh: $(tail -3 "$TMP/tanh.log")"; fail=1
else
    python3 "$HERE/check_run.py" "$TMP/tanh" tests/gpu/sets-tanh || fail=1
    python3 - "$TMP/tanh" <<'PY' || fail=1
import json, sys
probes = {(r["set"], r["probe"]): r for r in map(json.loads, open(sys.argv[1] + "/samples.jsonl"))
          if r["type"] == "probe"}
ok, copy = probes.get(("t-tanh-bf16", "identity")), probes.get(("t-copy-bf16", "identity"))
if not ok or ok["pass"] is not True:
    print("FAIL: the correct bf16 tanh failed the identity probe:", ok); sys.exit(1)
if not copy or copy["pass"] is not False:
    print("FAIL: the bf16 copy passed the identity probe:", copy); sys.exit(1)
print("ok   identity probe: bf16 tanh passes, the copy of its input fails")
PY
fi
echo "test-gpu:    in $(( $(date +%s) - t0 )) s"

fi
if want replay; then
echo "test-gpu: 4. the recurrent baselines replayed as a CUDA graph (tests/gpu/replay.py)"
t0=$(date +%s)
if python3 -c 'import torch' 2>/dev/null; then
    python3 "$HERE/replay.py" "$BUILD" >"$TMP/replay.log" 2>&1 || { fail=1; grep -v '^ok' "$TMP/replay.log" | tail -20; }
    tail -1 "$TMP/replay.log"
else
    echo "test-gpu:    skipped: replay.py needs PyTorch for its tensors"
fi
echo "test-gpu:    in $(( $(date +%s) - t0 )) s"

fi
for t in hostile interrupt pins; do
    want $t || continue
    echo "test-gpu: $t"; bash "$HERE/$t.sh" "$BUILD" || fail=1
done  # issues 9 and 15
echo "test-gpu: $([ $fail -eq 0 ] && echo PASS || echo FAIL) ($steps) in $(( $(date +%s) - t_start )) s"
exit $fail

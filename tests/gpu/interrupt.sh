#!/bin/bash
# tests/gpu/interrupt.sh BUILD_DIR - kill -9 of kbv-collect at five random
# points of a run (issue 9), each followed by --resume, then checks that the
# final journal holds every (set, problem) pair exactly once with a status,
# no check or time record twice and no torn line, and that kbv-analyze
# accepts the result.  A kill that lands before the manifest is written
# (builds, calibration) leaves nothing to resume: the run is then started
# again without --resume, which must also work.
# Environment: KBV_INTERRUPT_SEED (the random points; default: random),
# KBV_INTERRUPT_MAX_SLEEP (default 4 s; the points are 2..max s after each
# start), KBV_KEEP_TEST=1 keeps the temporary folder; for trying the script
# on other candidates (e.g. the CPU stand-in of tests/fakegpu):
# KBV_INTERRUPT_SETS (set folders, default tests/gpu/sets/correct,
# incorrect, identity and stale: long enough a run that all five kills
# land), KBV_INTERRUPT_EXPECT (the folder of their
# set.json files, default tests/gpu/sets), KBV_INTERRUPT_ARGS (more
# kbv-collect options).
set -u
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 1
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "FAIL interrupt: no build folder ${1:-build}"; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kbv-interrupt.XXXXXX") || exit 1
KEEP=${KBV_KEEP_TEST:-0}
cleanup() { if [ "$KEEP" = 1 ]; then echo "interrupt: kept $TMP"; else rm -rf "$TMP"; fi; }
trap cleanup EXIT
export KBV_CACHE=${KBV_CACHE:-$TMP/cache}
# A killed collect leaves its scratch folder behind: inside $TMP, removed
# with it.
mkdir -p "$TMP/scratch"
export TMPDIR=$TMP/scratch
SEED=${KBV_INTERRUPT_SEED:-$(( (RANDOM << 15) | RANDOM ))}
RANDOM=$SEED
MAX=${KBV_INTERRUPT_MAX_SLEEP:-4}
[ "$MAX" -ge 3 ] 2>/dev/null || MAX=3
RUN=$TMP/run
EXPECT=${KBV_INTERRUPT_EXPECT:-tests/gpu/sets}
args=(--suite smoke --out "$RUN" --timeout 45 --trials 1 --max-time 0.3)
for d in ${KBV_INTERRUPT_SETS:-tests/gpu/sets/correct tests/gpu/sets/incorrect tests/gpu/sets/identity tests/gpu/sets/stale}; do args+=(--candidates "$d"); done
# shellcheck disable=SC2206
args+=(${KBV_INTERRUPT_ARGS:-})
fail=0
t0=$(date +%s)
echo "interrupt: 5 x kill -9 of kbv-collect at random points (seed $SEED, 2-$MAX s after each start)"

kills=0
finished=0
for k in 1 2 3 4 5; do
    resume=()
    [ -f "$RUN/manifest.json" ] && resume=(--resume)
    "$BUILD/kbv-collect" "${args[@]}" "${resume[@]}" 2>>"$TMP/collect.log" &
    pid=$!
    # A random point, in tenths of a second.
    wait_ds=$(( 20 + RANDOM % ((MAX - 2) * 10 + 1) ))
    for _ in $(seq 1 "$wait_ds"); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid"
        wait "$pid" 2>/dev/null
        kills=$((kills + 1))
        lines=$( [ -f "$RUN/samples.jsonl" ] && wc -l <"$RUN/samples.jsonl" || echo 0)
        echo "interrupt:   kill $k after $(awk "BEGIN{print $wait_ds/10}") s${resume:+ (a --resume)}:" \
             "$lines journal lines, manifest $([ -f "$RUN/manifest.json" ] && echo present || echo absent)"
    else
        wait "$pid"
        rc=$?
        echo "interrupt:   the run finished (exit $rc) before kill $k"
        [ $rc -eq 0 ] || { echo "FAIL interrupt: kbv-collect exited $rc: $(tail -2 "$TMP/collect.log" | tr '\n' ' ')"; fail=1; }
        finished=1
        break
    fi
done
# The workers of a killed collect die with it (or on their next write).
sleep 1

if [ $finished -eq 0 ]; then
    resume=()
    [ -f "$RUN/manifest.json" ] && resume=(--resume)
    "$BUILD/kbv-collect" "${args[@]}" "${resume[@]}" 2>>"$TMP/collect.log"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL interrupt: the final ${resume:-run} exited $rc: $(tail -3 "$TMP/collect.log" | tr '\n' ' ')"
        fail=1
    else
        echo "ok   interrupt: the final ${resume:-run} finished (exit 0)"
    fi
fi
if [ $kills -lt 5 ]; then
    echo "FAIL interrupt: only $kills kill(s) landed before the run ended (give it more sets or lower KBV_INTERRUPT_MAX_SLEEP)"
    fail=1
else
    echo "ok   interrupt: all 5 kills landed"
fi
grep -h 'resume:' "$TMP/collect.log" | sed 's/^/       /' | head -6

if [ -f "$RUN/samples.jsonl" ]; then
    if python3 "$HERE/check_run.py" "$RUN" "$EXPECT" --journal-only >"$TMP/check.txt"; then
        echo "ok   interrupt: every pair exactly once with a status, no record twice, no torn line"
    else
        echo "FAIL interrupt: the journal after $kills kills:"
        sed 's/^/       /' "$TMP/check.txt" | head -10
        fail=1
    fi
    if "$BUILD/kbv-analyze" "$RUN" 2>"$TMP/analyze.log"; then
        echo "ok   interrupt: kbv-analyze accepts the resumed run"
        if python3 "$HERE/check_run.py" "$RUN" "$EXPECT" >"$TMP/classes.txt"; then
            echo "ok   interrupt: every pair has its expected class"
        else
            echo "FAIL interrupt: classes after resuming:"
            grep -v '^  ok' "$TMP/classes.txt" | sed 's/^/       /' | head -10
            fail=1
        fi
    else
        echo "FAIL interrupt: kbv-analyze: $(tail -3 "$TMP/analyze.log" | tr '\n' ' ')"
        fail=1
    fi
else
    echo "FAIL interrupt: no journal in $RUN"
    fail=1
fi
if [ -n "${KBV_TEST_GPU_OUT:-}" ]; then
    cp "$RUN/samples.jsonl" "$KBV_TEST_GPU_OUT/interrupt-samples.jsonl" 2>/dev/null
    cp "$TMP/collect.log" "$KBV_TEST_GPU_OUT/interrupt-collect.log" 2>/dev/null
fi
left=$(pgrep -f -- "--so $KBV_CACHE" 2>/dev/null)
if ! command -v pgrep >/dev/null; then
    echo "note interrupt: no pgrep (procps): the check for workers of killed collects is skipped"
elif [ -n "$left" ]; then
    echo "FAIL interrupt: workers of killed collects still run: $left"
    for p in $left; do kill -9 "$p" 2>/dev/null; done
    fail=1
else
    echo "ok   interrupt: no worker of a killed collect is left"
fi
echo "interrupt: $([ $fail -eq 0 ] && echo PASS || echo FAIL) in $(( $(date +%s) - t0 )) s"
exit $fail

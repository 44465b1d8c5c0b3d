#!/bin/bash
# tests/gpu/hostile.sh BUILD_DIR - hostile candidates (issue 9): one set per
# behaviour in tests/gpu/hostile/ (forks, execs, exit(0), output flood,
# sleep, spin, device memory leak, all of the GPU memory, heap corruption,
# interposed CUDA and timing symbols, searching device memory for the
# expected output, many open files, files written outside the scratch
# folder).  Runs kbv-collect on them and then on an ordinary correct set with
# a short --timeout, analyzes the run and checks, one line per check:
#   - each hostile pair's status, status detail, class, flags and static
#     scan flags (tests/gpu/hostile_check.py, from each set.json);
#   - the ordinary pairs that ran after them are still correct;
#   - no process a candidate started outlives the run;
#   - the worker's scratch folders are gone and nothing a candidate wrote in
#     its working folder is left; where the workers held a Landlock sandbox,
#     it wrote nothing outside it (else what it wrote to /tmp is reported).
# Environment: KBV_HOSTILE_TIMEOUT (default 12 s), KBV_KEEP_TEST=1 keeps
# the temporary folder; for trying the script on other candidates (e.g. the
# CPU stand-in of tests/fakegpu): KBV_HOSTILE_SETS (default
# tests/gpu/hostile), KBV_HOSTILE_OTHER (default tests/gpu/sets/correct),
# KBV_HOSTILE_ARGS (more kbv-collect options).  Exit 0 when every check
# passes.
set -u
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 1
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "FAIL hostile: no build folder ${1:-build}"; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kbv-hostile.XXXXXX") || exit 1
KEEP=${KBV_KEEP_TEST:-0}
cleanup() { if [ "$KEEP" = 1 ]; then echo "hostile: kept $TMP"; else rm -rf "$TMP"; fi; }
trap cleanup EXIT
TIMEOUT=${KBV_HOSTILE_TIMEOUT:-12}
SETS=${KBV_HOSTILE_SETS:-tests/gpu/hostile}
OTHER=${KBV_HOSTILE_OTHER:-tests/gpu/sets/correct}
# A marker that the file-writing candidate puts in the name of its /tmp file.
MARKER="m$$-$RANDOM$RANDOM"
export KBV_HOSTILE_MARKER=$MARKER
# Builds cached with run.sh's when it set a cache, else in a cache of our own.
export KBV_CACHE=${KBV_CACHE:-$TMP/cache}
# kbv-collect's scratch folders (the workers' working folders) go under
# $TMP/scratch, so that what is left there afterwards can be checked.
mkdir -p "$TMP/scratch"
fail=0
t0=$(date +%s)
touch "$TMP/stamp"

echo "hostile: collect on $SETS and then $OTHER (--timeout $TIMEOUT)"
# shellcheck disable=SC2086
TMPDIR="$TMP/scratch" "$BUILD/kbv-collect" --suite smoke --candidates "$SETS" --candidates "$OTHER" \
    --out "$TMP/run" --timeout "$TIMEOUT" --trials 1 --max-time 0.3 ${KBV_HOSTILE_ARGS:-} \
    2>"$TMP/collect.log"
rc=$?
echo "hostile: collect exit $rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then
    echo "FAIL hostile: kbv-collect exited $rc: $(tail -3 "$TMP/collect.log" | tr '\n' ' ')"
    fail=1
else
    echo "ok   hostile: kbv-collect finished the run (exit 0)"
fi

if [ -f "$TMP/run/samples.jsonl" ] && [ -f "$TMP/run/manifest.json" ]; then
    only=""
    if ! "$BUILD/kbv-analyze" "$TMP/run" 2>"$TMP/analyze.log"; then
        echo "FAIL hostile: kbv-analyze: $(tail -3 "$TMP/analyze.log" | tr '\n' ' ')"
        fail=1
        only=--journal-only
    else
        echo "ok   hostile: kbv-analyze accepts the run"
    fi
    python3 "$HERE/hostile_check.py" "$TMP/run" "$SETS" --other "$OTHER" $only ||
        fail=1
else
    echo "FAIL hostile: no journal or manifest in $TMP/run"
    fail=1
fi

# For the lead's device runs: the journal, analysis and log next to run.sh's.
if [ -n "${KBV_TEST_GPU_OUT:-}" ]; then
    for f in samples.jsonl analysis.json; do cp "$TMP/run/$f" "$KBV_TEST_GPU_OUT/hostile-$f" 2>/dev/null; done
    cp "$TMP/collect.log" "$KBV_TEST_GPU_OUT/hostile-collect.log" 2>/dev/null
fi

# Processes: the forking and exec'ing candidates name their children
# kbvhst-* (process name or command line); a worker's forked children keep
# the worker's command line, which holds the candidate's path in the cache.
sleep 1
left=$( { pgrep kbvhst; pgrep -f kbvhst; pgrep -f -- "--so $KBV_CACHE"; } 2>/dev/null | sort -u)
if ! command -v pgrep >/dev/null; then
    echo "FAIL hostile: no pgrep (procps): cannot look for processes that outlived the run"
    fail=1
elif [ -n "$left" ]; then
    echo "FAIL hostile: processes started by candidates outlived the run:"
    for p in $left; do echo "       $(ps -o pid=,pgid=,sid=,ppid=,comm=,args= -p "$p" 2>/dev/null | cut -c1-150)"; done
    # They are this test's own descendants: ended by their ids.
    for p in $left; do kill -9 "$p" 2>/dev/null; done
    fail=1
else
    echo "ok   hostile: no process started by a candidate outlived the run"
fi

# Files: the scratch folders are removed at the end of the run, with what
# the candidates wrote into them.
leftover=$(find "$TMP/scratch" -mindepth 1 2>/dev/null | head -5)
if [ -n "$leftover" ]; then
    echo "FAIL hostile: scratch folders left behind: $(echo "$leftover" | tr '\n' ' ')"
    fail=1
else
    echo "ok   hostile: the workers' scratch folders were removed"
fi
pwned=$(find "$ROOT" "$TMP" -name 'kbv-pwned*' -newer "$TMP/stamp" 2>/dev/null | head -5)
if [ -n "$pwned" ]; then
    echo "FAIL hostile: a file written in a worker's working folder landed elsewhere: $(echo "$pwned" | tr '\n' ' ')"
    fail=1
else
    echo "ok   hostile: ./kbv-pwned (the candidate's working folder) is gone with its scratch folder"
fi
# Outside its working folder: where the run's workers held a Landlock
# sandbox (the manifest's config.sandbox.applied), the candidate must have
# written nothing, the journal through /proc/<collect>/fd included; on a
# kernel without one it writes wherever the user can, which is reported.
note=/tmp/kbv-pwned-$MARKER
held=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"].get("sandbox",{}).get("applied","none"))' \
       "$TMP/run/manifest.json" 2>/dev/null) || held=unknown
case $held in
landlock*)
    if [ -f "$note" ]; then
        echo "FAIL hostile: the workers held a sandbox ($held), yet the candidate wrote $note:"
        sed 's/^/       /' "$note" | head -10
        fail=1
    else
        echo "ok   hostile: the candidate could not write $note (the workers' sandbox: $held)"
    fi
    ;;
*)
    if [ -f "$note" ]; then
        echo "note hostile: no worker sandbox on this kernel ($held): the candidate wrote $note; it says:"
        sed 's/^/       /' "$note" | head -10
        if grep -q '^journal-writable: yes' "$note"; then
            echo "note hostile: the candidate could open kbv-collect's journal for writing through /proc/<collect>/fd"
        fi
    else
        echo "note hostile: the candidate could not write $note (sandbox: $held)"
    fi
    ;;
esac
rm -f "$note"

if [ $fail -ne 0 ]; then
    echo "hostile: collect log tail:"
    tail -25 "$TMP/collect.log" | cut -c1-300 | sed 's/^/       /'
fi
echo "hostile: $([ $fail -eq 0 ] && echo PASS || echo FAIL) in $(( $(date +%s) - t0 )) s"
exit $fail

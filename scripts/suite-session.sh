#!/usr/bin/env bash
# scripts/suite-session.sh OUT_DIR SECONDS [collect arguments...]
#
# One device call's share of a collect that outlasts a call (the whole
# suite with every bundled set takes longer than one call, and may take
# longer than one session's device time).  The run lives in runs/suite
# (KBV_SUITE_RUN names another folder):
#
#   - If KBV_SUITE_CARRY (default .deps/suite-run.tar.gz, a path that
#     .git/info/exclude ignores and the device call carries) exists, it is
#     the run so far: it is unpacked into runs/suite and continued with
#     --resume.  It carries the harness digest of the checkout that started
#     it (runs/suite.harness, scripts/harness-digest.sh: the collector,
#     worker, baselines, candidate sets and kernel choices), and this
#     checkout's must be the same: a snapshot is collected by one harness,
#     so a run is never continued by changed collect code, while commits
#     to analyze, render or the documentation do not stop it.  Each share
#     appends its commit to runs/suite.commits.
#   - Otherwise a new run starts with the given collect arguments (a resumed
#     run takes its settings from its manifest; collect checks that the
#     arguments agree).
#   - collect gets SECONDS, then SIGINT: it stops its workers, keeps every
#     finished pair in the journal and exits 1; the next call resumes.
#   - OUT_DIR/suite-run.tar.gz is the run afterwards (manifest, journal,
#     SHA256SUMS once whole), to be copied to
#     KBV_SUITE_CARRY for the next call; OUT_DIR/suite-progress.txt says how
#     many pairs are done and whether the run is whole.
#
# The GEMM kernel choices of data/baselines/<gpu>.json are passed as
# `make report` passes them.  Needs `make all` done (DEPS_ROOT set);
# KBV_BUILD names another folder of the programs (default build).
set -uo pipefail
out=${1:?usage: scripts/suite-session.sh OUT_DIR SECONDS [collect arguments...]}
secs=${2:?usage: scripts/suite-session.sh OUT_DIR SECONDS [collect arguments...]}
shift 2
cd "$(dirname "$0")/.." || exit 2
carry=${KBV_SUITE_CARRY:-.deps/suite-run.tar.gz}
bin=${KBV_BUILD:-build}
commit=$("$bin/kbv-collect" --version 2>/dev/null | sed -n 's/.*, commit //p')
[ -n "$commit" ] || { echo "suite-session: $bin/kbv-collect --version names no commit (make all first)" >&2; exit 2; }
run=${KBV_SUITE_RUN:-runs/suite}
parent=$(dirname "$run") name=$(basename "$run")
mkdir -p "$out" "$parent"
digest=$(scripts/harness-digest.sh) || { echo "suite-session: no harness digest" >&2; exit 2; }

args=()
rm -rf "$run" "$run.harness" "$run.commits"
if [ -f "$carry" ]; then
    tar -C "$parent" -xzf "$carry" || { echo "suite-session: $carry does not unpack" >&2; exit 2; }
fi
if [ -f "$run/manifest.json" ]; then
    made_by=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["harness"]["git_commit"])' \
              "$run/manifest.json") || { echo "suite-session: $run/manifest.json unreadable" >&2; exit 2; }
    carried=$(cat "$run.harness" 2>/dev/null) || carried="(none: $carry has no $name.harness)"
    if [ "$carried" != "$digest" ]; then
        echo "suite-session: the run was started at $made_by by harness $carried; this checkout ($commit) builds harness $digest: not continued" >&2
        exit 2
    fi
    args=(--resume)
else
    rm -rf "$run" "$run.commits"   # nothing carried, or a call that ended before the manifest: a new run
fi
echo "$digest" >"$run.harness"
echo "$commit $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$run.commits"

slug=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | scripts/gpu-slug.sh) || slug=
[ -n "$slug" ] && [ -f "data/baselines/$slug.json" ] && args+=(--pins "data/baselines/$slug.json")
# Every GPU of the host, one worker each (a host lent with several GPUs
# finishes its share sooner; --gpus may change between a run and its resume).
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ') || ngpu=0
if [ "$ngpu" -gt 1 ]; then
    args+=(--gpus "$(seq -s, 0 $((ngpu - 1)))")
fi

echo "== $(date -u +%H:%M:%S) suite-session: ${args[*]:-a new run} for $secs s"
timeout -s INT -k 30 "$secs" "$bin/kbv-collect" --out "$run" "${args[@]}" "$@" \
    2>"$out/suite-collect.log"
rc=$?
echo "collect exit $rc"; tail -3 "$out/suite-collect.log"

if [ ! -f "$run/manifest.json" ]; then
    echo "no manifest yet: the next call starts the run afresh" | tee "$out/suite-progress.txt"
    exit 0
fi
# The progress, from the journal: pairs with a status against the plan.
python3 - "$run" "$rc" "$PWD/scripts" >"$out/suite-progress.txt" <<'PY'
import json, os, sys
run, rc = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from runjournal import pairs_left
m = json.load(open(os.path.join(run, "manifest.json")))
left, total = pairs_left(run, "suite-session")
whole = rc == 0 and os.path.exists(os.path.join(run, "SHA256SUMS"))
print("run %s at %s: %d of %d pairs done; %s" % (m["run_id"], m["harness"]["git_commit"], total - len(left), total,
                                                   "whole (sealed)" if whole else "to be continued with --resume"))
PY
cat "$out/suite-progress.txt"
tar -C "$parent" -czf "$out/suite-run.tar.gz" "$name" "$name.harness" "$name.commits"
exit 0

#!/usr/bin/env bash
# Archives a run directory as the current snapshot: data/snapshots/<run_id>/
# with manifest.json, the journal gzip-compressed, parity.json when the run
# has one, and SHA256SUMS.  Older snapshots are removed (the snapshot folder
# keeps the current run only).
# usage: scripts/snapshot.sh RUN_DIR [BUILD_DIR]
set -euo pipefail
run=${1:?usage: scripts/snapshot.sh RUN_DIR [BUILD_DIR]}
build=${2:-build}
[ -f "$run/manifest.json" ] || { echo "kbv: snapshot: $run/manifest.json not found" >&2; exit 2; }
# The run must be what collect sealed: an archive of a changed journal would
# carry the change on, with new sums that hide it.
if [ -f "$run/SHA256SUMS" ] && [ -x "$build/kbv" ]; then
    "$build/kbv" verify "$run" >/dev/null || { echo "kbv: snapshot: $run fails kbv verify; not archived" >&2; exit 1; }
fi
# Only a whole run is archived: a snapshot replaces the current one, and
# a report of an interrupted collect counts its unfinished pairs as errors.
here=$(cd "$(dirname "$0")" && pwd)
python3 -c 'import sys; sys.path.insert(0, sys.argv[2]); from runjournal import require_whole
require_whole(sys.argv[1], "kbv: snapshot", "not archived")' "$run" "$here" || exit 1
run_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$run/manifest.json")
dest="data/snapshots/$run_id"
tmp="data/snapshots/.$run_id.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
cp -p "$run/manifest.json" "$tmp/"
if [ -f "$run/samples.jsonl" ]; then
    gzip -9 -n -c "$run/samples.jsonl" >"$tmp/samples.jsonl.gz"
else
    cp -p "$run/samples.jsonl.gz" "$tmp/"
fi
# The baselines' parity with PyTorch that the report shows, when the run has it.
extra=()
if [ -f "$run/parity.json" ]; then
    cp -p "$run/parity.json" "$tmp/"
    extra=(parity.json)
fi
(cd "$tmp" && sha256sum manifest.json ${extra[@]+"${extra[@]}"} samples.jsonl.gz >SHA256SUMS)
for old in data/snapshots/*/; do
    [ -d "$old" ] && [ "$(basename "$old")" != "$run_id" ] && rm -rf "$old"
done
rm -rf "$dest" && mv "$tmp" "$dest"
echo "kbv: snapshot: $dest ($(du -sh "$dest" | cut -f1))"

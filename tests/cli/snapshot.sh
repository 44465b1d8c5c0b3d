#!/usr/bin/env bash
# scripts/snapshot.sh (make snapshot): a whole run is archived as
# data/snapshots/<run_id>/ with its journal compressed and sums that
# check, replacing the snapshot before it; a run an interrupted collect
# left without a status for some pair is refused (exit 1) and nothing
# is written; a folder without a manifest is bad usage (exit 2).
# usage: tests/cli/snapshot.sh BUILD_DIR
set -u
build=$(cd "${1:-build}" && pwd)
repo=$PWD
tmp=$(mktemp -d /tmp/kbv-snapshot.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "snapshot: $*"; exit 1; }
cd "$tmp" || exit 1
mkdir -p data/snapshots/older-run
echo old >data/snapshots/older-run/manifest.json

# run_small has one pair without any record: an interrupted run.
cp -R "$repo/tests/fixtures/run_small" part
"$repo/scripts/snapshot.sh" part "$build" >out 2>err
rc=$?
[ $rc -eq 1 ] || fail "an incomplete run: exit $rc, expected 1"
grep -q "is incomplete: 1 of 21 pairs have no status (first: mixed/L2_012" err || fail "incomplete: $(cat err)"
[ "$(ls -A data/snapshots)" = older-run ] || fail "an incomplete run left files: $(ls -A data/snapshots)"

mkdir empty
"$repo/scripts/snapshot.sh" empty "$build" >out 2>err
rc=$?
[ $rc -eq 2 ] && grep -q "manifest.json not found" err || fail "no manifest: exit $rc: $(cat err)"

# The same run whole once its last pair has a status.
cp -R "$repo/tests/fixtures/run_small" whole
echo '{"type":"status","set":"mixed","problem":"L2_012_gemm_multiply_leakyrelu","status":"crash","detail":"test"}' \
    >>whole/samples.jsonl
"$repo/scripts/snapshot.sh" whole "$build" >out 2>err || fail "a whole run: exit $?: $(cat err)"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' whole/manifest.json)
[ "$(ls -A data/snapshots)" = "$id" ] || fail "snapshots after archiving: $(ls -A data/snapshots), expected $id alone"
(cd "data/snapshots/$id" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not check"
cmp <(gzip -dc "data/snapshots/$id/samples.jsonl.gz") whole/samples.jsonl || fail "the archived journal differs"
cmp "data/snapshots/$id/manifest.json" whole/manifest.json || fail "the archived manifest differs"
echo "snapshot: ok"

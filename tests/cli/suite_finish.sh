#!/usr/bin/env bash
# scripts/suite-finish.sh, the step after a whole-suite collect, end to end
# in a scratch tree (it writes data/parity, data/snapshots and docs/ of the
# tree it runs in): an interrupted run is refused with nothing written; a
# pair without its set's expected class stops it before the parity file,
# unless KBV_FINISH_ACCEPT_UNEXPECTED=1, which archives the run with the
# pair listed in its figures; a whole run from a suite-session tarball is
# archived with its parity sealed into it, replacing the older snapshot,
# and the README's figures are copied to docs/.
# usage: tests/cli/suite_finish.sh BUILD_DIR
set -u
build=$(cd "${1:-build}" && pwd)
repo=$PWD
fail() { echo "suite_finish: $*"; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
[ -x "$build/kbv" ] || { echo "skip: no $build/kbv"; exit 0; }
tmp=$(mktemp -d /tmp/kbv-suite-finish.XXXXXX)
trap '[ "${KBV_KEEP_TEST:-0}" = 1 ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
r=$tmp/tree
mkdir -p "$r/tests" "$r/data/parity" "$r/data/snapshots/older-run" "$r/docs" "$r/runs"
cp -R "$repo/scripts" "$r/scripts"
cp -R "$repo/tests/parity" "$r/tests/parity"
[ -f "$repo/data/parity/known.json" ] && cp "$repo/data/parity/known.json" "$r/data/parity/"
echo old >"$r/data/snapshots/older-run/manifest.json"
cd "$r" || exit 1
export KBV_BUILD="$build"

# The run: tests/fixtures/run_small (synthetic, 3 sets x 7 problems), whose
# last pair has no status yet, its sets pointed at set folders of this tree
# and sealed as collect seals a run.
run=runs/small
cp -R "$repo/tests/fixtures/run_small" "$run"
rm -f "$run/synth_truth.json"
python3 - "$run/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for s in m["sets"]:
    s["dir"] = "cands/" + s["name"]
json.dump(m, open(sys.argv[1], "w"))
PY
seal() { (cd "$1" && sha256sum manifest.json samples.jsonl >SHA256SUMS); }
seal "$run"
"$build/kbv" verify "$run" >/dev/null 2>&1 || fail "the fixture does not verify once sealed"
only=$(python3 -c 'import sys; sys.path.insert(0, "tests/parity"); from combine import TORCH_ONLY; print(TORCH_ONLY)')
cat >"$tmp/torch.json" <<J
{"schema": "kbv-parity/1", "gpu": "Synthetic H200", "torch": "t", "cuda": "c", "samples": 9,
 "method": {"kbv": "$only", "torch": "alone, warm"}, "problems": [
 {"id": "L1_019_relu", "fp32_ratio": null, "tf32_ratio": null, "exception": null, "checks": [], "fp32_torch_ms": 1.0, "tf32_torch_ms": 1.0}]}
J
nothing_written() {
    [ "$(ls -A data/snapshots)" = older-run ] || fail "$1: snapshots: $(ls -A data/snapshots)"
    [ -z "$(ls -A data/parity | grep -v '^known.json$')" ] || fail "$1: a parity file was written: $(ls data/parity)"
    [ ! -f "$run/parity.json" ] || fail "$1: parity.json was put into the run"
    [ -z "$(ls -A docs)" ] || fail "$1: docs/ changed: $(ls docs)"
}

scripts/suite-finish.sh "$run" "$tmp/torch.json" >out 2>err
rc=$?
[ $rc -eq 1 ] || fail "an interrupted run: exit $rc, expected 1: $(cat err)"
grep -q "is incomplete: 1 of 21 pairs have no status (first: mixed/L2_012" err || fail "interrupted: $(cat err)"
nothing_written "an interrupted run"

# The last status, then expectations from the classes analyze finds, one
# of them wrong on purpose.
echo '{"type":"status","set":"mixed","problem":"L2_012_gemm_multiply_leakyrelu","status":"crash","detail":"test"}' \
    >>"$run/samples.jsonl"
"$build/kbv" analyze "$run" >/dev/null 2>&1 || fail "analyze of the whole fixture"
python3 - "$run/analysis.json" <<'PY' || exit 1
import json, os, sys
a = json.load(open(sys.argv[1]))
for s in a["sets"]:
    exp = {p["problem"]: p["class"] for p in s["problems"]}
    if s["name"] == "tuned":
        exp["L1_019_relu"] = "caching" if exp["L1_019_relu"] != "caching" else "correct"
    os.makedirs("cands/" + s["name"], exist_ok=True)
    json.dump({"name": s["name"], "expected": exp}, open("cands/%s/set.json" % s["name"], "w"))
PY
rm -f "$run/analysis.json"
seal "$run"
scripts/suite-finish.sh "$run" "$tmp/torch.json" >out 2>err
rc=$?
[ $rc -eq 1 ] || fail "an unexpected class: exit $rc, expected 1: $(cat err)"
grep -q '^!! tuned .*L1_019_relu' out || fail "the unexpected pair is not listed: $(cat out)"
grep -q "KBV_FINISH_ACCEPT_UNEXPECTED=1" err || fail "no way out named: $(cat err)"
nothing_written "an unexpected class"

KBV_FINISH_ACCEPT_UNEXPECTED=1 scripts/suite-finish.sh "$run" "$tmp/torch.json" >out 2>err ||
    fail "accepting the unexpected class: exit $?: $(tail -5 err)"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$run/manifest.json")
[ "$(ls -A data/snapshots)" = "$id" ] || fail "snapshots: $(ls -A data/snapshots), expected $id alone"
(cd "data/snapshots/$id" && sha256sum -c --quiet SHA256SUMS) || fail "the snapshot's sums do not check"
[ -f "data/snapshots/$id/parity.json" ] || fail "the snapshot has no parity.json"
slug=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"]["name"])' "$run/manifest.json" |
       scripts/gpu-slug.sh)
[ -f "data/parity/$slug.json" ] || fail "no data/parity/$slug.json: $(ls data/parity)"
cmp -s "data/parity/$slug.json" "$run/parity.json" || fail "the run's parity.json is not data/parity/$slug.json"
grep -q parity.json "$run/SHA256SUMS" || fail "parity.json is not sealed into the run"
"$build/kbv" verify "$run" >/dev/null 2>&1 || fail "the run with its parity does not verify"
figs=runs/small.figures.md
grep -q "Pairs without their set's expected class" "$figs" || fail "the figures do not list the unexpected pair"
grep -q "L1_019_relu" "$figs" || fail "the figures do not name L1_019_relu"
grep -q '^| set | precision | correct' "$figs" || fail "no headline table in the figures"
for f in inflation fast_p; do
    [ -s "docs/$f.png" ] || fail "docs/$f.png was not made"
done

# As suite-session.sh packs a run (one folder in a tarball), with the
# expectation put right: archived again without the escape hatch, its
# parity made afresh (the tarball's run has none).
python3 - cands/tuned/set.json "$run/analysis.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2]))
d["expected"] = {p["problem"]: p["class"] for s in a["sets"] if s["name"] == "tuned" for p in s["problems"]}
json.dump(d, open(sys.argv[1], "w"))
PY
rm -rf "$tmp/pack" && mkdir -p "$tmp/pack/suite"
cp "$run/manifest.json" "$run/samples.jsonl" "$tmp/pack/suite/"
seal "$tmp/pack/suite"
tar -C "$tmp/pack" -czf "$tmp/suite-run.tar.gz" suite
rm -rf runs   # as in a fresh clone, where no collect has made runs/ yet
scripts/suite-finish.sh "$tmp/suite-run.tar.gz" "$tmp/torch.json" >out 2>err ||
    fail "a whole run from a tarball: exit $?: $(tail -5 err)"
grep -q "^suite-finish: run runs/$id$" out || fail "the tarball's run is not runs/$id: $(head -3 out)"
grep -q "Pairs without their set's expected class" "runs/$id.figures.md" && fail "a pair is still listed as unexpected"
[ "$(ls -A data/snapshots)" = "$id" ] || fail "snapshots after the tarball: $(ls -A data/snapshots)"
echo "suite_finish: ok"

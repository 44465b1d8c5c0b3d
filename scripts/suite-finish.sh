#!/usr/bin/env bash
# scripts/suite-finish.sh RUN [TORCH_FP32 [TORCH_BF16]] - what follows a
# whole-suite collect, on any machine (no GPU): the run archived as the
# snapshot with its parity, and the figures the README and the notes quote.
#
#   RUN          the whole run: a folder, or the suite-run.tar.gz of
#                scripts/suite-session.sh (unpacked into runs/<run id>)
#   TORCH_FP32   PyTorch's side of parity (tests/parity/parity.py
#                --torch-only), TORCH_BF16 its BF16 twin (--precision bf16)
#
# Steps, each stopping the script on failure:
#   1. kbv verify: the run is as collect sealed it, and every pair of its
#      plan has a status (an interrupted run is refused, nothing written);
#   2. kbv analyze, scripts/compare-expected.py --all: every pair has its
#      set's class (with KBV_FINISH_ACCEPT_UNEXPECTED=1, a pair that has not
#      is listed in the figures instead of stopping the script: a hostile
#      candidate the harness missed is a finding to archive, not to hide;
#      a pair that set.json lists under known_gaps never stops it, and is
#      listed there with its reason);
#   3. with TORCH_FP32: tests/parity/combine.py writes data/parity/<gpu>.json
#      from the run's medians (bf16 too with TORCH_BF16), copied into the
#      run as parity.json and sealed beside collect's lines;
#   4. kbv analyze again (with parity), scripts/run-figures.py into RUN.figures.md (the
#      headline per set and level, collect time, parity worst ten);
#   5. make snapshot: the run becomes data/snapshots/<run id>, replacing
#      the old one; kbv report renders it, and its inflation and fast_p
#      figures are copied to docs/ for the README.
# The bf16 kernel choices of the run can then be added to the committed
# table (scripts/pins.py RUN --merge data/baselines/<gpu>.json --out ...);
# that changes the harness digest, so it is left to the caller.
set -euo pipefail
src=${1:?usage: scripts/suite-finish.sh RUN [TORCH_FP32 [TORCH_BF16]]}
torch=${2:-}
torch_bf16=${3:-}
build=${KBV_BUILD:-build}
cd "$(dirname "$0")/.."
say() { echo "suite-finish: $*"; }
[ -x "$build/kbv" ] || { say "$build/kbv not built (make all)" >&2; exit 2; }

if [ -f "$src" ]; then
    mkdir -p runs   # a fresh clone has no runs/ until the first collect
    tmp=$(mktemp -d runs/.finish.XXXXXX)
    tar -C "$tmp" -xzf "$src" || { say "$src does not unpack" >&2; exit 2; }
    man=$(find "$tmp" -name manifest.json | head -n 1)
    [ -n "$man" ] || { say "$src holds no manifest.json" >&2; exit 2; }
    id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$man")
    rm -rf "runs/$id" && mv "$(dirname "$man")" "runs/$id" && rm -rf "$tmp"
    run="runs/$id"
else
    run=$src
fi
[ -f "$run/manifest.json" ] || { say "$run/manifest.json not found" >&2; exit 2; }
say "run $run"

"$build/kbv" verify "$run" || { say "$run fails kbv verify: not whole, or changed since collect sealed it" >&2; exit 1; }
# A run that collect has not finished is refused before anything is
# written: the parity file and the run's own parity.json would otherwise be
# made from part of the suite before the archive refused it.
python3 -c 'import sys; sys.path.insert(0, "scripts"); from runjournal import require_whole
require_whole(sys.argv[1], "suite-finish", "nothing written")' "$run" || exit 1
"$build/kbv" analyze "$run"
expected=$(python3 scripts/compare-expected.py "$run" --all) || true
echo "$expected" | grep -E '^!!|^GAP|known gap:|expectations' || true
unexpected=$(echo "$expected" | grep '^!!' || true)
gaps=$(echo "$expected" | grep -E '^GAP|known gap:' || true)
if [ -n "$unexpected" ] && [ "${KBV_FINISH_ACCEPT_UNEXPECTED:-0}" != 1 ]; then
    say "some pairs do not have their set's expected class (above): look before archiving;" \
        "KBV_FINISH_ACCEPT_UNEXPECTED=1 archives the run with them listed in its figures" >&2
    exit 1
fi

if [ -n "$torch" ]; then
    gpu=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"]["name"])' "$run/manifest.json" |
          scripts/gpu-slug.sh)
    bf=()
    [ -n "$torch_bf16" ] && bf=(--torch-bf16 "$torch_bf16")
    python3 tests/parity/combine.py --from-run "$run" --torch "$torch" "${bf[@]}" --out "data/parity/$gpu.json"
    if [ -f "$run/parity.json" ]; then
        say "$run already has a parity.json: kept (a sealed run's file is not replaced)"
    else
        cp "data/parity/$gpu.json" "$run/parity.json"
        (cd "$run" && sha256sum parity.json >>SHA256SUMS)
    fi
fi

"$build/kbv" analyze "$run"
par=()
[ -f "$run/parity.json" ] && par=(--parity "$run/parity.json")
figs="$(dirname "$run")/$(basename "$run").figures.md"   # beside the run: kbv verify wants nothing unlisted in it
python3 scripts/run-figures.py "$run" "${par[@]}" >"$figs"
if [ -n "$unexpected" ]; then
    { echo; echo "## Pairs without their set's expected class (scripts/compare-expected.py --all)"; echo
      echo '```'; echo "$unexpected"; echo '```'; } >>"$figs"
fi
if [ -n "$gaps" ]; then
    { echo; echo "## Known gaps: pairs whose class differs for a reason their set.json gives (kbv's own open defects)"; echo
      echo '```'; echo "$gaps"; echo '```'; } >>"$figs"
fi
say "figures: $figs"

scripts/snapshot.sh "$run" "$build"
"$build/kbv" report "$run" >/dev/null
for f in inflation fast_p_tf32; do
    [ -f "$run/report/figures/$f.png" ] && cp "$run/report/figures/$f.png" "docs/${f%_tf32}.png"
done
say "done: data/snapshots/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$run/manifest.json"), docs/inflation.png, docs/fast_p.png, $figs"

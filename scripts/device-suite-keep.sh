#!/usr/bin/env bash
# scripts/device-suite-keep.sh DIR - after a call of scripts/device-suite.sh,
# copies the work in progress that came back (DIR: the call's $OUT files on
# this machine) into the partial folder (KBV_PARTIAL, default
# data/suite-partial), to be committed (test-gpu.txt into KBV_TESTED,
# default data/suite-partial, whatever the partial folder): the suite run, PyTorch's parity
# files, the second collect and its comparison; the call's GPU is appended
# to devices.txt.  Each file is written under
# a temporary name and renamed, so that a failed copy leaves the old one.
# Prints what it kept and the suite's progress; exits 1 when DIR holds none
# of them, 2 on bad arguments.
set -uo pipefail
from=${1:?usage: scripts/device-suite-keep.sh DIR}
[ -d "$from" ] || { echo "device-suite-keep: $from is not a folder" >&2; exit 2; }
cd "$(dirname "$0")/.." || exit 2
partial=${KBV_PARTIAL:-data/suite-partial}
[ -d "$partial" ] || { echo "device-suite-keep: no folder $partial" >&2; exit 2; }
tested=${KBV_TESTED:-data/suite-partial}
[ -d "$tested" ] || { echo "device-suite-keep: no folder $tested (KBV_TESTED)" >&2; exit 2; }
kept=0
for f in suite-run.tar.gz torch-fp32.json torch-bf16.json r2r-run.tar.gz r2r-compare.json r2r-compare.txt test-gpu.txt \
    r2ra-run.tar.gz r2rb-run.tar.gz r2r-main-compare.json r2r-main-compare.txt parity-spot-fp32.json parity-spot-bf16.json \
    kernels-fp32.txt kernels-bf16.txt \
    speed-run.tar.gz speed-time.txt repin-bench.jsonl pinbench.jsonl $(cd "$from" && ls pins-*.json 2>/dev/null); do
    [ -f "$from/$f" ] || continue
    case "$f" in
        *.tar.gz) gzip -t "$from/$f" 2>/dev/null || { echo "device-suite-keep: $from/$f is not a whole gzip file: not kept" >&2; continue; } ;;
        *.json) python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$from/$f" 2>/dev/null ||
                    { echo "device-suite-keep: $from/$f is not JSON: not kept" >&2; continue; } ;;
    esac
    # test-gpu's verdicts are about the checkout's sources, not about a
    # run: one file for every GPU (scripts/device-call.sh), in KBV_TESTED.
    to=$partial
    [ "$f" = test-gpu.txt ] && to=$tested
    cp "$from/$f" "$to/.$f.tmp" && chmod 644 "$to/.$f.tmp" && mv "$to/.$f.tmp" "$to/$f" ||
        { echo "device-suite-keep: could not copy $f" >&2; rm -f "$to/.$f.tmp"; exit 1; }
    echo "kept $to/$f"
    kept=$((kept + 1))
done
# The call's GPU, one line per call, with the commit it ran (devices.txt
# grows; it says which calls shared a GPU).
if [ -f "$from/device.txt" ]; then
    commit=$(cut -c1-12 .deps/commit 2>/dev/null || echo unknown)
    while IFS= read -r line; do
        echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $commit $line"
    done <"$from/device.txt" >>"$partial/devices.txt"
    echo "kept $partial/devices.txt: $(head -1 "$from/device.txt")"
fi
[ -f "$from/suite-progress.txt" ] && cat "$from/suite-progress.txt"
[ "$kept" -gt 0 ] || { echo "device-suite-keep: nothing to keep in $from" >&2; exit 1; }

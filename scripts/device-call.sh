#!/usr/bin/env bash
# scripts/device-call.sh SECONDS - the one command of every device call for
# the whole-suite work, whichever GPU the lent host turns out to have.
#
# Why.  A run is only continued on the GPU model it started on, and the
# hosts lent change from call to call (an H200 some days, an H100 on
# others).  Run 20261206T024921Z-c59b3bb7 started on an H200 and lives in
# data/suite-partial/; a second whole-suite run, by a later harness, lives
# in data/suite-h100/ for the H100 80GB HBM3.  Each call advances the run of
# the GPU it got, so that no call is spent waiting for the other model:
#
#   H200             scripts/device-suite.sh auto (data/suite-partial)
#   H100 80GB HBM3   with KBV_PARTIAL=data/suite-h100: pinbench until
#                    data/baselines/nvidia-h100-80gb-hbm3.json is committed,
#                    then auto (the frozen harness starts the run, then
#                    continues it, then PyTorch's parity and r2r)
#   anything else    nothing but the GPU's name in OUT/device.txt
#
# Before any of that, on every GPU, come the steps of `make test-gpu` that
# this checkout's sources still owe (device-suite.sh tested: nothing, not
# even a build, when every step passed for them), since collect is to be
# tested on a GPU whenever it changes; their verdicts live in
# data/suite-partial/test-gpu.txt whichever GPU gave them.
#
# After the call, `KBV_PARTIAL=<that folder> scripts/device-suite-keep.sh
# FILES_AT` keeps what came back (OUT/partial.txt names the folder;
# test-gpu.txt goes to data/suite-partial in any case).
set -uo pipefail
secs=${1:?usage: scripts/device-call.sh SECONDS}
cd "$(dirname "$0")/.." || exit 2
out=${OUT:?device-call: OUT names no folder}
mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
echo "device-call: $gpu"
start=$(date +%s)
KBV_PARTIAL=${KBV_TESTED:-data/suite-partial} bash scripts/device-suite.sh tested "$secs"
secs=$((secs - ($(date +%s) - start)))
[ "$secs" -gt 90 ] || { echo "device-call: no time left after test-gpu"; exit 0; }
case "$gpu" in
*H200*)
    echo data/suite-partial >"$out/partial.txt"
    exec bash scripts/device-suite.sh auto "$secs"
    ;;
*"H100 80GB HBM3"*)
    echo data/suite-h100 >"$out/partial.txt"
    export KBV_PARTIAL=data/suite-h100
    if [ -f data/baselines/nvidia-h100-80gb-hbm3.json ]; then
        exec bash scripts/device-suite.sh auto "$secs"
    fi
    exec bash scripts/device-suite.sh pinbench "$secs"
    ;;
*)
    echo "${gpu:-no GPU}" >"$out/device.txt"
    echo "device-call: no whole-suite run for this GPU"
    exit 0
    ;;
esac

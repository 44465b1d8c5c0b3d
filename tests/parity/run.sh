#!/usr/bin/env bash
# tests/parity/run.sh - builds kbv (if needed) and runs the PyTorch parity
# check on this GPU host: kbv's baselines against PyTorch eager, written to
# data/parity/<gpu>.json.  Needs a CUDA GPU and a Python with torch.
# usage: tests/parity/run.sh [BUILD_DIR] [parity.py options, e.g. --problems 'L1_0*']
set -eu
cd "$(dirname "$0")/../.."
build=build
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build=$1; shift; fi
if [ ! -x "$build/kbv-list" ] || [ ! -f "$build/libkbv_baseline.so" ]; then
    make --no-print-directory BUILD="$build" "$build/kbv-list" "$build/libkbv_baseline.so"
fi
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
    || { echo "parity: needs PyTorch with a CUDA GPU" >&2; exit 1; }
exec python3 tests/parity/parity.py --build "$build" "$@"

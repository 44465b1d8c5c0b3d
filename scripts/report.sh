#!/usr/bin/env bash
# `make report`: collect a new run when a CUDA GPU is visible, otherwise
# re-render the newest archived snapshot; then analyze and render, point
# runs/latest at the run directory and print the report's path.
#   KBV_COLLECT_ARGS   extra arguments for `kbv collect` (e.g. "--suite smoke")
#   KBV_NO_GPU=1       re-render the snapshot even where a GPU is visible
set -euo pipefail
build=${1:-build}
kbv="$build/kbv"
mkdir -p runs

# A GPU's name as the file name of its data/parity/ and data/baselines/
# tables (scripts/gpu-slug.sh).
gpu_slug() { "$(dirname "$0")/gpu-slug.sh"; }

gpu_visible() {
    [ "${KBV_NO_GPU:-0}" != 1 ] && [ -x "$build/kbv-collect" ] &&
        command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}

if gpu_visible; then
    run_id=$(date -u +%Y%m%dT%H%M%SZ)-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
    run="runs/$run_id"
    echo "kbv: report: a CUDA GPU is visible: collecting into $run"
    # The committed GEMM kernel choices of this GPU model (data/baselines/
    # <gpu>.json, scripts/pins.py), so that every run times the same
    # baseline kernels; collect ignores a table made for another cuBLAS.
    pins=()
    slug=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | gpu_slug) || slug=
    if [ -n "$slug" ] && [ -f "data/baselines/$slug.json" ]; then
        pins=(--pins "data/baselines/$slug.json")
        echo "kbv: report: baseline kernel choices from data/baselines/$slug.json"
    fi
    # shellcheck disable=SC2086
    "$kbv" collect --out "$run" "${pins[@]}" ${KBV_COLLECT_ARGS:-}
else
    snap=$(find data/snapshots -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort | tail -n 1)
    if [ -z "$snap" ]; then
        echo "kbv: report: no GPU visible and no snapshot under data/snapshots/" >&2
        exit 1
    fi
    run_id=$(basename "$snap")
    run="runs/$run_id"
    echo "kbv: report: no GPU visible: re-rendering the snapshot $snap"
    # A fresh copy each time, so that an earlier report never leaks in.
    rm -rf "$run.tmp" && mkdir -p "$run.tmp"
    cp -p "$snap"/manifest.json "$run.tmp"/
    cp -p "$snap"/samples.jsonl* "$run.tmp"/
    [ -f "$snap/parity.json" ] && cp -p "$snap/parity.json" "$run.tmp"/
    [ -f "$snap/SHA256SUMS" ] && cp -p "$snap/SHA256SUMS" "$run.tmp"/
    if [ -f "$run.tmp/SHA256SUMS" ]; then
        "$kbv" verify "$run.tmp" >/dev/null || { echo "kbv: report: snapshot $snap fails its SHA256SUMS" >&2; exit 1; }
    fi
    rm -rf "$run" && mv "$run.tmp" "$run"
fi

# The baselines' parity with PyTorch on this GPU (tests/parity/, data/parity/
# <gpu>.json), for the report's parity section, unless the run has its own.
# Its line is added to SHA256SUMS here, beside the raw files' lines that
# collect sealed (kbv report adds only its own outputs' lines).
if [ ! -f "$run/parity.json" ] && [ -f "$run/manifest.json" ]; then
    slug=$(python3 -c 'import json, sys
print((json.load(open(sys.argv[1])).get("device") or {}).get("name") or "")' "$run/manifest.json" | gpu_slug) || slug=
    if [ -n "$slug" ] && [ -f "data/parity/$slug.json" ]; then
        cp "data/parity/$slug.json" "$run/parity.json"
        if [ -f "$run/SHA256SUMS" ]; then
            (cd "$run" && sha256sum parity.json >>SHA256SUMS)
        fi
        echo "kbv: report: baseline parity from data/parity/$slug.json"
    else
        echo "kbv: report: no data/parity/${slug:-<gpu>}.json: the report says that no parity file was found"
    fi
fi

"$kbv" report "$run"
ln -sfn "$run_id" runs/latest
echo "kbv: report: $run/report/report.pdf"
echo "kbv: report: figures in $run/report/figures/, tables in $run/report/tables/ (runs/latest points here)"

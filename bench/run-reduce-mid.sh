#!/bin/bash
# run-reduce-mid.sh - builds bench/reduce_mid.cu into build/bench/ with nvcc
# (sm_90, the Makefile's flags) and runs it on the GPU: verification of
# every variant, then the interleaved cold-L2 timing (about 20 s on an
# H200, most of it the 8.6 GB fills and float64 references).  With OUT set,
# the CSV, the full output and ptxas's register report go to $OUT.  Extra
# arguments go to the program (--samples=N, --only=S, --skip=S, --shape=O,R,I,
# --verify-only).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
NVCC=${NVCC:-nvcc}
dir=build/bench
mkdir -p "$dir"
if ! "$NVCC" -O3 -std=c++17 -lineinfo -gencode arch=compute_90,code=sm_90 \
        -gencode arch=compute_90,code=compute_90 -Xcompiler -Wall,-Wextra -Xptxas -v \
        -o "$dir/reduce_mid" bench/reduce_mid.cu 2> "$dir/reduce_mid.ptxas.txt"; then
    cat "$dir/reduce_mid.ptxas.txt" >&2
    exit 1
fi
args=()
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp "$dir/reduce_mid.ptxas.txt" "$OUT/"
    args+=("$OUT/reduce_mid.csv")
fi
# a hung kernel must not eat the whole device call
if [ -n "${OUT:-}" ]; then
    timeout 300 "$dir/reduce_mid" "${args[@]}" "$@" 2>&1 | tee "$OUT/reduce_mid.txt"
else
    timeout 300 "$dir/reduce_mid" "$@" 2>&1
fi

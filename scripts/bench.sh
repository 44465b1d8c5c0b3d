#!/bin/sh
# scripts/bench.sh [BUILD_DIR] - `make bench`: the speed figures of the
# stages.  analyze and render are timed everywhere (scripts/bench-analyze.sh,
# scripts/bench-render.sh: synthetic runs of 100 problems x 8 sets, no GPU)
# and the manifest readers at 100k problem ids (tests/cli/manifest_scale.sh);
# collect (scripts/bench-collect.sh) only where a CUDA GPU is visible and
# kbv-collect is built, and otherwise the line says it was skipped.  The
# kernel studies under bench/ are separate (bench/README.md).
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/bench-analyze.sh" "$build"
sh "$here/bench-render.sh" "$build"
# Readers of a manifest of 100k problem ids, each under 2 s (linear, not a
# search per id): tests/cli/manifest_scale.sh with its limit on.
KBV_SCALE_LIMIT_MS=2000 bash "$here/../tests/cli/manifest_scale.sh" "$build"
if [ -x "$build/kbv-collect" ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    bash "$here/bench-collect.sh" "$build"
else
    echo "bench: collect skipped (no CUDA GPU visible or kbv-collect not built)"
fi

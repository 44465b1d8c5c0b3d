#!/usr/bin/env bash
# The libFuzzer harnesses of tests/fuzz/ (built with clang, ASan and UBSan),
# each run for its share of 100 seconds from the committed seed corpora:
# `make fuzz-ci`.  Fails on a crash, a leak, undefined behaviour or a hang.
# Skips, and passes, only when clang is not installed.
# usage: tests/cli/fuzz.sh BUILD_DIR
set -u
build=${1:-build}
if ! command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1; then
    echo "skipped: clang not found"
    exit 0
fi
if ! make --no-print-directory BUILD="$build" fuzz-ci; then
    echo "fuzz: make fuzz-ci failed (crashing inputs in $build/fuzz/artifacts/)"
    exit 1
fi

#!/usr/bin/env bash
# kbv-baseline-bench without a GPU: --help, --version, bad usage (exit 2).
# Skipped (pass) where it is not built (no nvcc).
# usage: tests/cli/collect_bench.sh BUILD_DIR
set -u
b=${1:-build}
fail() { echo "collect_bench: $*"; exit 1; }
[ -x "$b/kbv-baseline-bench" ] || exit 0
"$b/kbv-baseline-bench" --help | grep -q "usage: kbv-baseline-bench" || fail "--help"
"$b/kbv-baseline-bench" --version | grep -q "kbv" || fail "--version"
"$b/kbv-baseline-bench" --samples 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--samples 0 should exit 2"
"$b/kbv-baseline-bench" --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option should exit 2"
exit 0

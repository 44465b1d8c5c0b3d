#!/usr/bin/env bash
# kbv-baseline-bench without a GPU: --help, --version, bad usage (exit 2);
# and libkbv_baseline.so, which tests/parity/parity.py loads with ctypes,
# loads: every symbol it needs is defined (a missing common/sbuf.c left
# sb_printf undefined, and parity failed on the GPU host at its first line).
# Skipped (pass) where it is not built (no nvcc).
# usage: tests/cli/collect_bench.sh BUILD_DIR
set -u
b=${1:-build}
fail() { echo "collect_bench: $*"; exit 1; }
[ -x "$b/kbv-baseline-bench" ] || if [ -f "$b/libkbv_baseline.so" ] && command -v python3 >/dev/null; then
    python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$b/libkbv_baseline.so" 2>"$b/.bench_so.err" ||
        fail "libkbv_baseline.so does not load: $(tail -1 "$b/.bench_so.err")"
fi
exit 0
"$b/kbv-baseline-bench" --help | grep -q "usage: kbv-baseline-bench" || fail "--help"
"$b/kbv-baseline-bench" --version | grep -q "kbv" || fail "--version"
"$b/kbv-baseline-bench" --samples 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--samples 0 should exit 2"
"$b/kbv-baseline-bench" --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option should exit 2"
if [ -f "$b/libkbv_baseline.so" ] && command -v python3 >/dev/null; then
    python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$b/libkbv_baseline.so" 2>"$b/.bench_so.err" ||
        fail "libkbv_baseline.so does not load: $(tail -1 "$b/.bench_so.err")"
fi
exit 0

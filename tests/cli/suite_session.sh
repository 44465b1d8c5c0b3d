#!/bin/bash
# scripts/suite-session.sh on the CPU stand-in for the GPU (tests/fakegpu):
# a collect cut off by its time share and carried to the next call as an
# archive is continued with --resume until it is whole, every pair once;
# a carried run started by another harness (scripts/harness-digest.sh) is
# refused.  Skipped (pass) without
# the CUDA headers.
set -u
B=${1:-build}
CUDA_INC=${CUDA_INC:-/usr/local/cuda/include}
[ -f "$CUDA_INC/cuda_runtime_api.h" ] || { echo "skip: no CUDA headers"; exit 0; }
command -v python3 >/dev/null || { echo "skip: no python3 for the checks"; exit 0; }
T=$(mktemp -d /tmp/kbv-cli-suite.XXXXXX)
trap '[ "${KBV_KEEP_TEST:-0}" = 1 ] && echo "kept $T" || rm -rf "$T"' EXIT
fail() { echo "suite_session: $*"; exit 1; }
F=tests/fakegpu
tests/fakegpu/build.sh "$B" "$T" || fail "fake build: see above"
export NVCC="$PWD/$F/nvcc" KBV_INCLUDE="$PWD/include" KBV_CACHE="$T/cache" CUDA_INC
export KBV_BUILD="$T/bin" KBV_SUITE_RUN="$T/runs/suite" KBV_SUITE_CARRY="$T/carry.tar.gz"
# The hanger takes its 5 s timeout: a 3 s share ends inside it.
args=(--suite smoke --problems L1_019_relu --candidates "$F/sets/correct" --candidates "$F/sets/hang"
      --candidates "$F/sets/incorrect" --timeout 5)

scripts/suite-session.sh "$T/out1" 3 "${args[@]}" >"$T/log1" 2>&1 || fail "first share exited $?: $(tail -3 "$T/log1")"
grep -q "to be continued" "$T/out1/suite-progress.txt" || fail "first share: $(cat "$T/out1/suite-progress.txt")"
[ -f "$T/out1/suite-run.tar.gz" ] || fail "first share left no archive"

# A run carried from another harness is not continued.
mkdir -p "$T/other" && tar -C "$T/other" -xzf "$T/out1/suite-run.tar.gz"
[ "$(cat "$T/other/suite.harness")" = "$(scripts/harness-digest.sh)" ] || fail "the archive lacks this harness's digest"
echo 0000000 >"$T/other/suite.harness"
tar -C "$T/other" -czf "$KBV_SUITE_CARRY" suite suite.harness suite.commits
scripts/suite-session.sh "$T/out2" 30 "${args[@]}" >"$T/log2" 2>&1 && fail "a run of another harness was continued"
grep -q "by harness 0000000" "$T/log2" || fail "the refusal does not say why: $(tail -2 "$T/log2")"

# The real carry: the second share finishes the run.
cp "$T/out1/suite-run.tar.gz" "$KBV_SUITE_CARRY"
scripts/suite-session.sh "$T/out3" 60 "${args[@]}" >"$T/log3" 2>&1 || fail "second share exited $?: $(tail -3 "$T/log3")"
grep -q "resume:" "$T/out3/suite-collect.log" || fail "the second share did not resume: $(tail -3 "$T/out3/suite-collect.log")"
grep -q "3 of 3 pairs done; whole (sealed)" "$T/out3/suite-progress.txt" ||
    fail "second share: $(cat "$T/out3/suite-progress.txt")"
mkdir -p "$T/final" && tar -C "$T/final" -xzf "$T/out3/suite-run.tar.gz"
[ "$(wc -l <"$T/final/suite.commits")" = 2 ] || fail "suite.commits should name both shares: $(cat "$T/final/suite.commits")"
python3 tests/gpu/check_run.py "$T/final/suite" "$F/sets" --journal-only >"$T/check" || { cat "$T/check"; fail "journal"; }
if [ -x "$B/kbv" ]; then
    "$B/kbv" verify "$T/final/suite" >"$T/vlog" 2>&1 || { cat "$T/vlog"; fail "the finished run does not verify"; }
fi
echo "suite_session: ok"

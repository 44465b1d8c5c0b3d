#!/bin/bash
# The worker limits against hostile candidates (issue 9) without a GPU:
# tests/gpu/hostile.sh run on CPU stand-ins of its candidates
# (tests/fakegpu/hostile: forks, execs, exit(0), output flood, sleep, spin,
# heap corruption, leak, many open files, files outside the scratch folder,
# interposed cudaEventElapsedTime, cudaMalloc, clock_gettime,
# cudaEventRecord and cudaStreamSynchronize) with the worker linked against
# the fake CUDA runtime of tests/fakegpu, as tests/cli/collect_fake.sh does.
# Each pair must end in its expected, recorded result, the ordinary set
# after them must be unaffected, and no process a candidate started may
# outlive the run.  Skipped (pass) without the CUDA headers or python3.
set -u
B=${1:-build}
CUDA_INC=${CUDA_INC:-/usr/local/cuda/include}
[ -f "$CUDA_INC/cuda_runtime_api.h" ] || { echo "skip: no CUDA headers"; exit 0; }
command -v python3 >/dev/null || { echo "skip: no python3 for the checks"; exit 0; }
[ -x "$B/kbv-analyze" ] || { echo "collect_hostile: no $B/kbv-analyze"; exit 1; }
for l in libkbv_collecthost.a libkbv_suite.a libkbv_common.a; do
    [ -f "$B/$l" ] || { echo "collect_hostile: no $B/$l"; exit 1; }
done
T=$(mktemp -d /tmp/kbv-cli-hostile.XXXXXX)
trap '[ "${KBV_KEEP_TEST:-0}" = 1 ] && echo "kept $T" || rm -rf "$T"' EXIT
fail() { echo "collect_hostile: $*"; exit 1; }
F=tests/fakegpu
tests/fakegpu/build.sh "$B" "$T" || fail "fake build: see above"
ln -s "$(cd "$B" && pwd)/kbv-analyze" "$T/bin/kbv-analyze"

NVCC="$PWD/$F/nvcc" KBV_INCLUDE="$PWD/include" KBV_CACHE="$T/cache" CUDA_INC="$CUDA_INC" \
    KBV_HOSTILE_SETS=$F/hostile KBV_HOSTILE_OTHER=$F/sets/correct \
    KBV_HOSTILE_ARGS="--problems L1_019_relu" KBV_HOSTILE_TIMEOUT=4 KBV_KEEP_TEST=0 \
    bash tests/gpu/hostile.sh "$T/bin" >"$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    grep -av '^ok' "$T/out" | head -30
    fail "tests/gpu/hostile.sh on the CPU stand-ins exited $rc"
fi
exit 0

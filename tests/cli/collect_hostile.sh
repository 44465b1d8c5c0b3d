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
DEPS_I= DEPS_L=
if [ -n "${DEPS_ROOT:-}" ]; then
    DEPS_I="-I$DEPS_ROOT/usr/include"
    DEPS_L="-L$DEPS_ROOT/usr/lib/x86_64-linux-gnu -Wl,-rpath,$(cd "$DEPS_ROOT" && pwd)/usr/lib/x86_64-linux-gnu"
fi
CF="$DEPS_I -std=c11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2 -Wno-format-truncation -D_GNU_SOURCE -Iinclude -Icommon -Icollect -I$F -isystem $CUDA_INC"
mkdir -p "$T/lib" "$T/bin" "$T/obj"
gcc $CF -shared -fPIC "$F/fake_cudart.c" -o "$T/lib/libfakecudart.so" || fail "fake runtime does not build"
for s in collect/worker_main.c collect/memtrack.c collect/nvmlx.c "$F/fake_gpu.c" collect/collect_main.c; do
    gcc $CF -c "$s" -o "$T/obj/$(basename "$s" .c).o" || fail "$s does not build"
done
LIBS="$B/libkbv_collecthost.a $B/libkbv_suite.a $B/libkbv_common.a $DEPS_L -lcjson -lcrypto -lz -lm"
gcc -rdynamic -o "$T/bin/kbv-worker" "$T/obj/worker_main.o" "$T/obj/memtrack.o" "$T/obj/nvmlx.o" \
    "$T/obj/fake_gpu.o" $LIBS -L"$T/lib" -lfakecudart -Wl,-rpath,"$T/lib" -ldl -lpthread || fail "worker link"
gcc -o "$T/bin/kbv-collect" "$T/obj/collect_main.o" $LIBS || fail "collect link"
ln -s "$(cd "$B" && pwd)/kbv-analyze" "$T/bin/kbv-analyze"

NVCC="$PWD/$F/nvcc" KBV_INCLUDE="$PWD/include" KBV_CACHE="$T/cache" CUDA_INC="$CUDA_INC" \
    KBV_HOSTILE_SETS=$F/hostile KBV_HOSTILE_OTHER=$F/sets/correct \
    KBV_HOSTILE_ARGS="--problems L1_019_relu" KBV_HOSTILE_TIMEOUT=4 KBV_KEEP_TEST=0 \
    bash tests/gpu/hostile.sh "$T/bin" >"$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    grep -v '^ok' "$T/out" | head -30
    fail "tests/gpu/hostile.sh on the CPU stand-ins exited $rc"
fi
exit 0

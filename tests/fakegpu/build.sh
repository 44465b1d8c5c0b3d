#!/bin/bash
# tests/fakegpu/build.sh BUILD_DIR OUT_DIR - builds kbv-worker and
# kbv-collect against the CPU stand-in for the GPU (fake_cudart.c,
# fake_gpu.c) into OUT_DIR/bin, for the CLI tests that run the protocol
# without a GPU.  The worker is linked as the Makefile links it (full
# RELRO, only the allocation interposers exported), from every source of collect/worker/ except the CUDA
# one.  Exits non-zero, naming the step, when a step fails.
set -u
B=$1
T=$2
F=tests/fakegpu
CUDA_INC=${CUDA_INC:-/usr/local/cuda/include}
DEPS_I= DEPS_L=
if [ -n "${DEPS_ROOT:-}" ]; then
    DEPS_I="-I$DEPS_ROOT/usr/include"
    DEPS_L="-L$DEPS_ROOT/usr/lib/x86_64-linux-gnu -Wl,-rpath,$(cd "$DEPS_ROOT" && pwd)/usr/lib/x86_64-linux-gnu"
fi
CF="$DEPS_I -std=c11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2 -Wno-format-truncation -D_GNU_SOURCE -Iinclude -Icommon -Icollect/supervise -Icollect/suite -Icollect/baselines -Icollect/worker -I$F -isystem $CUDA_INC"
mkdir -p "$T/lib" "$T/bin" "$T/obj"
gcc $CF -shared -fPIC "$F/fake_cudart.c" -o "$T/lib/libfakecudart.so" || { echo "fake runtime does not build"; exit 1; }
objs=()
for s in collect/worker/*.c "$F/fake_gpu.c"; do
    o="$T/obj/$(basename "$s" .c).o"
    gcc $CF -c "$s" -o "$o" || { echo "$s does not build"; exit 1; }
    objs+=("$o")
done
gcc $CF -c collect/supervise/collect_main.c -o "$T/obj/collect_main.o" || { echo "collect_main.c does not build"; exit 1; }
LIBS="$B/libkbv_collecthost.a $B/libkbv_suite.a $B/libkbv_common.a $DEPS_L -lcjson -lcrypto -lz -lm"
gcc -Wl,--dynamic-list=collect/worker/exports.list -Wl,-z,relro,-z,now,-z,noexecstack -o "$T/bin/kbv-worker" "${objs[@]}" $LIBS -L"$T/lib" \
    -lfakecudart -Wl,-rpath,"$T/lib" -ldl -lpthread || { echo "worker link"; exit 1; }
gcc -o "$T/bin/kbv-collect" "$T/obj/collect_main.o" $LIBS || { echo "collect link"; exit 1; }

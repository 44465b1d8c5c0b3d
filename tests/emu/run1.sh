#!/bin/bash
# run1.sh CANDIDATE.cu SPEC: compiles the candidate for the CPU emulation
# (cached by content and EMU_CLUSTER) and runs it on the call in SPEC.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
src=$1
spec=$2
cl=${EMU_CLUSTER:-1}
cache=${KBV_EMU_CACHE:-${TMPDIR:-/tmp}/kbv-emu}
mkdir -p "$cache"
if [ ! -f "$cache/emu$cl.o" ] || [ "$here/emu.cpp" -nt "$cache/emu$cl.o" ] || [ "$here/emu.h" -nt "$cache/emu$cl.o" ]; then
    g++ -std=c++17 -O1 -DEMU_CLUSTER="$cl" -I"$here" -I"$root/include" -c "$here/emu.cpp" -o "$cache/emu$cl.o"
    g++ -std=c++17 -O1 -I"$here" -I"$root/include" -c "$here/driver.cpp" -o "$cache/driver.o"
fi
key=$(cat "$src" "$here/emu.h" "$here/xform.py" | sha256sum | cut -c1-16)c$cl
exe=$cache/$key
if [ ! -x "$exe" ]; then
    EMU_CLUSTER=$cl python3 "$here/xform.py" "$src" "$cache/$key.cpp"
    g++ -std=c++17 -O1 -w -I"$here" -I"$root/include" -o "$exe" "$cache/$key.cpp" "$cache/emu$cl.o" "$cache/driver.o" -lm \
        2> "$cache/$key.log" || { head -20 "$cache/$key.log" >&2; exit 9; }
fi
exec "$exe" "$spec"

#!/usr/bin/env bash
# The level-2 chains' elementwise passes and group statistics, the kernels
# of collect/baselines/problems/chain*.cu as they are, run on the CPU under
# tests/emu's emulator and compared with chain_ew.h's scalar apply() bit
# for bit (tests/emu/test_chain_ew.py says what it covers).  The other
# tests/emu scripts take minutes and are run by hand; this one takes
# seconds, so that a change to these baselines' indexing is caught here.
# usage: tests/cli/emu_chain_ew.sh BUILD_DIR (the build folder is unused)
set -u
tmp=$(mktemp -d /tmp/kbv-emu-chain.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
KBV_EMU_CACHE=$tmp python3 tests/emu/test_chain_ew.py >"$tmp/out" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q "^chain_ew: 0 failed$" "$tmp/out"; then
    echo "emu_chain_ew: exit $rc"
    grep -v "^ok " "$tmp/out" | tail -30
    exit 1
fi
n=$(grep -c "^ok " "$tmp/out")
[ "$n" -ge 16 ] || { echo "emu_chain_ew: only $n cases ran"; exit 1; }
exit 0

#!/usr/bin/env bash
# kbv's own baseline kernels, from collect/baselines/problems/ as they are,
# run on the CPU under tests/emu's emulator (their library calls replaced
# by loops) and checked, each script saying how: test_chain_ew.py (the
# level-2 chains' elementwise passes and group statistics against their
# scalar form, bit for bit, and chain_run_rest's middle-stage paths in
# fp32 and bf16 against double), test_l3_net.py (the level-3 interpreter in
# fp32 and bf16 on every program of test_l3.py, against numpy),
# test_l3_baseline.py (its transformer layers, against numpy),
# test_vlad_baseline.py (NetVLAD in fp32 and bf16, against numpy) and
# test_reduce_baseline.py (the reductions over a dimension on each of
# their three paths, ties and NaN included, against numpy).  The
# candidate checks of tests/emu take minutes and are run by hand; these
# take under a minute and catch a slip in the baselines' indexing without
# a GPU.
# usage: tests/cli/emu_baselines.sh BUILD_DIR (the build folder is unused)
set -u
tmp=$(mktemp -d /tmp/kbv-emu-base.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
# script | the summary line it must print | the least "ok" lines
while IFS='|' read -r script summary least; do
    KBV_EMU_CACHE=$tmp python3 "tests/emu/$script" >"$tmp/out" 2>&1
    rc=$?
    n=$(grep -c "^ok " "$tmp/out")
    if [ $rc -ne 0 ] || ! grep -Eq "$summary" "$tmp/out" || [ "$n" -lt "$least" ]; then
        echo "emu_baselines: $script: exit $rc, $n ok"
        grep -v "^ok " "$tmp/out" | tail -30
        fail=1
    fi
done <<'LIST'
test_chain_ew.py|^chain_ew: 0 failed$|30
test_l3_net.py|^l3_net: [0-9]+ programs, 0 failed$|27
test_l3_baseline.py|^emu: [0-9]+ checks, 0 not ok$|16
test_vlad_baseline.py|^vlad: [0-9]+ models, 0 failed$|2
test_reduce_baseline.py|^reduce: [0-9]+ cases, 0 failed$|80
LIST
exit $fail

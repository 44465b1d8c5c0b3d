#!/bin/bash
# emu-check.sh - checks every reduce_mid variant's indexing on the CPU with
# tests/emu's emulator (no GPU needed): small shapes that exercise the
# tails (rows per chunk not a multiple of the unroll, partial column tiles,
# one chunk, inner of every residue mod 4), --verify-only, so each variant
# is run on integer data (exact) and U(-1,1) data against float64.  The
# inline PTX loads become plain loads here; the hints change no result.
# Takes a few minutes.  Exit 0 when every variant passes on every shape.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$here/reduce_mid.cu" "$tmp/src.cu" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
# ld.global...PTX -> a plain load (scalar or float4 alike)
src, n = re.subn(r'asm\("ld\.global.*?\)\);', 'v = *p;', src, flags=re.S)
assert n == 6, n
open(sys.argv[2], 'w').write('#include "kbv.h"\n#include "emu_stubs.h"\n' + src)
PY
python3 "$root/tests/emu/xform.py" "$tmp/src.cu" "$tmp/src.cpp"
g++ -std=c++17 -O2 -w -DEMU_CLUSTER=1 -I"$root/tests/emu" -I"$root/include" -I"$here" \
    -o "$tmp/reduce_mid_emu" "$tmp/src.cpp" "$root/tests/emu/emu.cpp" -lm
rc=0
for shape in 2,68,4095 2,64,1999 3,36,4097 2,40,3070; do
    echo "== shape $shape"
    if ! "$tmp/reduce_mid_emu" --verify-only --shape=$shape > "$tmp/out.txt"; then rc=1; fi
    grep -v "^verify  ok" "$tmp/out.txt" || true
done
if [ -n "${EMU_KEEP:-}" ]; then cp "$tmp/reduce_mid_emu" "$EMU_KEEP"; fi
exit $rc

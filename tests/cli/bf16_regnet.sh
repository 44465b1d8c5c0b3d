#!/bin/bash
# scripts/bf16-regnet.py: its bfloat16 rounding is round-to-nearest-even
# (ties to the even neighbour, carries into the exponent, infinities and
# NaN kept), and on a small RegNet (two images of 16x16) every mode's line
# is printed for each distribution asked; an unknown one exits 2.
set -u
fail() { echo "bf16_regnet: $*"; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
python3 -c 'import numpy' 2>/dev/null || { echo "skip: no numpy"; exit 0; }
python3 - <<'PY' || fail "rounding"
import importlib.util, numpy as np
spec = importlib.util.spec_from_file_location("b", "scripts/bf16-regnet.py")
b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, 2 - 2**-9, -(1 + 3 * 2**-8), np.inf, 0.0],
             dtype=np.float32)
want = np.array([1.0, 1 + 2**-6, 1 + 2**-7, 2.0, -(1 + 2**-6), np.inf, 0.0], dtype=np.float32)
got = b.bf16(x)
assert np.array_equal(got, want), (got, want)
assert np.isnan(b.bf16(np.array([np.nan], dtype=np.float32)))[0]
PY
out=$(python3 scripts/bf16-regnet.py --size 16 --batch 2 --dists D1,D3 2>&1) || fail "exit $?: $out"
[ "$(grep -c 'elements beyond the BF16 tolerance' <<<"$out")" = 4 ] || fail "want four lines: $out"
grep -q '^D3 eager: [0-9]* of 20 ' <<<"$out" || fail "D3 eager: $out"
python3 scripts/bf16-regnet.py --size 16 --batch 2 --dists D9 >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown distribution did not exit 2"
echo "bf16_regnet: ok"

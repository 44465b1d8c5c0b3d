#!/bin/bash
# tests/gpu/pins.sh BUILD_DIR - the round trip of baseline kernel choices
# (issue 15, DESIGN.md 5 "Pins") on a GPU: a collect of the naive and
# naive-bf16 candidates of a plain product (L1_010, whose family chooses its
# GEMM kernels at create), a GEMM chain (L2_012, whose bf16 baseline is a
# cuBLASLt linear layer with a contest) and a convolution (L1_063: fp32,
# tf32, the reference and bf16 choices) journals every baseline's choice as
# pin text; scripts/pins.py makes a table of
# them; a second collect with --pins must name every choice "(pinned)" and
# journal the same pin text, variant by variant.  A choice the library
# refused would be searched again and show up here as a difference.
set -u
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kbv-pins.XXXXXX") || exit 1
trap '[ "${KBV_KEEP_TEST:-0}" = 1 ] && echo "pins: kept $TMP" || rm -rf "$TMP"' EXIT
export KBV_CACHE=${KBV_CACHE:-$TMP/cache}
args=(--candidates data/candidates/naive --candidates data/candidates/naive-bf16
      --problems 'L1_010_*,L2_012_*,L1_063_*' --trials 1 --max-time 0.3 --timeout 60)
fail=0
if ! "$BUILD/kbv-collect" "${args[@]}" --out "$TMP/a" 2>"$TMP/a.log"; then
    echo "FAIL pins: the first collect: $(tail -3 "$TMP/a.log")"; exit 1
fi
if ! python3 scripts/pins.py "$TMP/a" --out "$TMP/pins.json" 2>"$TMP/pins.log"; then
    echo "FAIL pins: scripts/pins.py: $(cat "$TMP/pins.log")"; exit 1
fi
if ! "$BUILD/kbv-collect" "${args[@]}" --pins "$TMP/pins.json" --out "$TMP/b" 2>"$TMP/b.log"; then
    echo "FAIL pins: the pinned collect: $(tail -3 "$TMP/b.log")"; exit 1
fi
python3 - "$TMP/a" "$TMP/b" <<'PY' || fail=1
import json, sys

def choices(run):
    out = {}
    for line in open(run + "/samples.jsonl"):
        r = json.loads(line)
        if r["type"] == "baseline":
            out[(r["set"], r["problem"], r["variant"])] = (r["choice"], r.get("pins", ""))
    return out

a, b = choices(sys.argv[1]), choices(sys.argv[2])
bad = 0
for key in sorted(a):
    ca, pa = a[key]
    cb, pb = b.get(key, ("(none)", ""))
    if not pa:
        continue   # a choice without pin text (a fixed kernel) has nothing to pin
    ok = pa == pb and "(pinned)" in cb
    print("%s pins %s/%s %s: %s" % ("ok  " if ok else "FAIL", key[0], key[1], key[2], cb[:140]))
    bad += not ok
# The strict fp32 baseline never runs tensor cores: its convolutions' graph
# plans leave out every engine with cuDNN's tensor-core note.
for key in sorted(a):
    if key[2] == "fp32" and "tensor cores" in a[key][0]:
        print("FAIL pins %s/%s fp32 chose a tensor-core kernel: %s" % (key[0], key[1], a[key][0][:140])); bad += 1
if not any(k[2] == "bf16" and a[k][1] for k in a):
    print("FAIL pins: no bf16 baseline journaled pin text"); bad += 1
sys.exit(1 if bad else 0)
PY
exit $fail

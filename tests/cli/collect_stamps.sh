#!/bin/bash
# The clock-agreement probe (DESIGN.md 5a step 7a) on a CPU stand-in for
# the GPU (tests/fakegpu, as tests/cli/collect_fake.sh runs it): with every
# release stamp put after the call's end stamp (KBV_FAKE_STAMPS=spoil, what
# a call that writes over the stamps leaves), the probe must fail and the
# pair be classed tampering.  Skipping the samples whose stamps are out of
# order passed such a call with nothing compared.  Skipped (pass) without
# the CUDA headers or python3.
set -u
B=${1:-build}
CUDA_INC=${CUDA_INC:-/usr/local/cuda/include}
[ -f "$CUDA_INC/cuda_runtime_api.h" ] || { echo "skip: no CUDA headers"; exit 0; }
command -v python3 >/dev/null || { echo "skip: no python3 for the checks"; exit 0; }
[ -x "$B/kbv-analyze" ] || { echo "collect_stamps: no $B/kbv-analyze"; exit 1; }
for l in libkbv_collecthost.a libkbv_suite.a libkbv_common.a; do
    [ -f "$B/$l" ] || { echo "collect_stamps: no $B/$l"; exit 1; }
done
T=$(mktemp -d /tmp/kbv-cli-stamps.XXXXXX)
trap '[ "${KBV_KEEP_TEST:-0}" = 1 ] && echo "kept $T" || rm -rf "$T"' EXIT
fail() { echo "collect_stamps: $*"; exit 1; }
F=tests/fakegpu
tests/fakegpu/build.sh "$B" "$T" || fail "fake build: see above"
mkdir -p "$T/sets"
cp -r "$F/sets/correct" "$T/sets/correct"
export NVCC="$PWD/$F/nvcc" KBV_INCLUDE="$PWD/include" KBV_CACHE="$T/cache" CUDA_INC
KBV_FAKE_STAMPS=spoil "$T/bin/kbv-collect" --suite smoke --problems L1_019_relu --candidates "$T/sets" \
    --out "$T/run" --timeout 8 2>"$T/log" || fail "collect exited $?: $(tail -5 "$T/log")"
"$B/kbv-analyze" "$T/run" 2>"$T/alog" || fail "kbv-analyze: $(tail -3 "$T/alog")"
python3 - "$T/run" <<'PY' || exit 1
import json, sys
run = sys.argv[1]
recs = [json.loads(l) for l in open(run + "/samples.jsonl")]
probe = [r for r in recs if r.get("type") == "probe" and r.get("probe") == "clock-agreement"]
if len(probe) != 1 or probe[0]["pass"] or "out of order" not in probe[0].get("detail", ""):
    print("collect_stamps: clock-agreement", probe)
    sys.exit(1)
a = json.load(open(run + "/analysis.json"))
got = [p for s in a["sets"] for p in s["problems"] if s["name"] == "f-correct"]
if len(got) != 1 or got[0]["class"] != "tampering":
    print("collect_stamps: class", [(p["problem"], p["class"]) for p in got])
    sys.exit(1)
PY
exit 0

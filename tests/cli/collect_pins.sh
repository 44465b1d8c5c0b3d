#!/bin/bash
# kbv collect --pins (issue 15: baseline kernel choices made once): a table
# that is not kbv-pins/1 is refused with exit 2 before any GPU work; on the
# CPU stand-in of the GPU a table for this device is recorded as applying in
# the manifest's config (with its SHA-256) and one for another GPU as not;
# scripts/pins.py turns a journal's baseline pins into a table, keeping the
# first set's choice and counting the problems another set chose otherwise,
# and --merge adds them to an existing table (bf16 pins beside the bench's).
# Skipped (pass) without the CUDA headers.
set -u
B=${1:-build}
CUDA_INC=${CUDA_INC:-/usr/local/cuda/include}
[ -f "$CUDA_INC/cuda_runtime_api.h" ] || { echo "skip: no CUDA headers"; exit 0; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
T=$(mktemp -d /tmp/kbv-cli-pins.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "collect_pins: $*"; exit 1; }
F=tests/fakegpu
tests/fakegpu/build.sh "$B" "$T" || fail "fake build"
export NVCC="$PWD/$F/nvcc" KBV_INCLUDE="$PWD/include" KBV_CACHE="$T/cache" CUDA_INC
run() { "$T/bin/kbv-collect" --suite smoke --problems L1_019_relu --candidates "$F/sets/correct" --timeout 5 "$@"; }

# 1. malformed tables: exit 2, naming the file, no run folder
echo '[1,2]' >"$T/bad1.json"
echo '{"schema":"kbv-pins/1","gpu":"x","cublas":"1","problems":{"L1_019_relu":7}}' >"$T/bad2.json"
echo '{"schema":"kbv-pins/0","gpu":"x","cublas":"1","problems":{}}' >"$T/bad3.json"
for b in bad1 bad2 bad3; do
    run --out "$T/r-$b" --pins "$T/$b.json" 2>"$T/log-$b"
    rc=$?
    [ $rc -eq 2 ] || fail "$b.json: exit $rc, expected 2: $(tail -2 "$T/log-$b")"
    grep -q "$b.json" "$T/log-$b" || fail "$b.json: the message does not name the file: $(cat "$T/log-$b")"
    [ ! -e "$T/r-$b/samples.jsonl" ] || fail "$b.json: a journal was started"
done
run --out "$T/r-none" --pins "$T/none.json" 2>"$T/log-none" && fail "a missing table was accepted"

# 2. a table for this device applies; one for another GPU does not
cat >"$T/this.json" <<'J'
{"schema": "kbv-pins/1", "gpu": "Fake GPU (CPU stand-in)", "cublas": "13.0.0",
 "problems": {"L1_019_relu": "0,0,0,1,8,8,8,8,8,8,0,0,0,1,256,256,256=default"}}
J
sed 's/Fake GPU (CPU stand-in)/NVIDIA H200/' "$T/this.json" >"$T/other.json"
for k in this other; do
    run --out "$T/r-$k" --pins "$T/$k.json" 2>"$T/log-$k" || fail "--pins $k.json: $(tail -3 "$T/log-$k")"
done
python3 - "$T" <<'PY' || exit 1
import hashlib, json, sys
t = sys.argv[1]
for k, want in (("this", True), ("other", False)):
    m = json.load(open(f"{t}/r-{k}/manifest.json"))
    p = m["config"].get("pins")
    sha = hashlib.sha256(open(f"{t}/{k}.json", "rb").read()).hexdigest()
    if not p or p.get("applies") is not want or p.get("sha256") != sha:
        print(f"collect_pins: {k}.json: config pins {p}, expected applies {want} and sha256 {sha}"); sys.exit(1)
PY

# 3. scripts/pins.py from a journal with pins
mkdir -p "$T/j"
cat >"$T/j/manifest.json" <<'J'
{"schema": "kbv-run/1", "device": {"name": "NVIDIA H200", "cublas": "13.1.0"}}
J
cat >"$T/j/samples.jsonl" <<'J'
{"type":"baseline","set":"a","problem":"P1","variant":"fp32","choice":"x","pins":"K1=default"}
{"type":"baseline","set":"a","problem":"P1","variant":"tf32","choice":"y","pins":"K2=lt:00"}
{"type":"baseline","set":"b","problem":"P1","variant":"tf32","choice":"z","pins":"K2=default"}
{"type":"baseline","set":"b","problem":"P2","variant":"fp32","choice":"w","pins":"K3=default"}
{"type":"baseline","set":"b","problem":"P3","variant":"fp32","choice":"conv"}
{"type":"baseline","set":"c16","problem":"P1","variant":"bf16","choice":"v","pins":"bf16.lin:8,8,8,1,256,256,256=lt:00"}
{"type":"baseline","set":"d16","problem":"P1","variant":"bf16","choice":"v","pins":"bf16.lin:8,8,8,1,256,256,256=lt:00"}
J
python3 scripts/pins.py "$T/j" --out "$T/table.json" 2>"$T/pins.log" || fail "pins.py: $(cat "$T/pins.log")"
python3 - "$T/table.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
want = {"schema": "kbv-pins/1", "gpu": "NVIDIA H200", "cublas": "13.1.0",
        "problems": {"P1": "K1=default;K2=lt:00;bf16.lin:8,8,8,1,256,256,256=lt:00", "P2": "K3=default"}}
if d != want:
    print("collect_pins: pins.py wrote", d); sys.exit(1)
PY
grep -q "1 chose differently in another set: P1" "$T/pins.log" || fail "pins.py summary: $(cat "$T/pins.log")"

# 4. scripts/pins.py --bench: kbv-baseline-bench's lines, convolution pins
# included, the device from the run's manifest; a problem without pins and
# an error line are left out
cat >"$T/bench.jsonl" <<'J'
{"id": "P1", "fp32_ms": 1.0, "tf32_ms": 0.5, "workspace_bytes": 0, "fp32_pins": "conv.f:0,2,1,3,8,1,9,9,3,1,1,1,9,9,3,1,1,1=a1m3;conv.r:0,2,1,3,8,1,9,9,3,1,1,1,9,9,3,1,1,1=a0m3", "tf32_pins": "conv.t:0,2,1,3,8,1,9,9,3,1,1,1,9,9,3,1,1,1=g2e58/a1m0"}
{"id": "P2", "fp32_ms": 1.0, "tf32_ms": 1.0, "workspace_bytes": 0, "fp32_pins": "", "tf32_pins": ""}
{"id": "P3", "error": "baseline P3: cannot run here"}
J
python3 scripts/pins.py "$T/j" --bench "$T/bench.jsonl" --out "$T/btable.json" 2>"$T/bpins.log" || fail "pins.py --bench: $(cat "$T/bpins.log")"
python3 - "$T/btable.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
want = {"P1": "conv.f:0,2,1,3,8,1,9,9,3,1,1,1,9,9,3,1,1,1=a1m3;conv.r:0,2,1,3,8,1,9,9,3,1,1,1,9,9,3,1,1,1=a0m3;"
              "conv.t:0,2,1,3,8,1,9,9,3,1,1,1,9,9,3,1,1,1=g2e58/a1m0"}
if d.get("problems") != want or d.get("gpu") != "NVIDIA H200":
    print("collect_pins: pins.py --bench wrote", d); sys.exit(1)
PY
# 5. --merge: the bench table keeps its fp32/tf32 choices, a run's journal
# adds bf16 linear-layer pins and replaces what it chose itself; a table for
# another GPU is refused
mkdir -p "$T/j16"
cp "$T/j/manifest.json" "$T/j16/"
cat >"$T/j16/samples.jsonl" <<'J'
{"type":"baseline","set":"n16","problem":"P1","variant":"bf16","choice":"GEMM","pins":"bf16.lin:8,8,8,1,256,256,256=lt:00ff"}
{"type":"baseline","set":"n16","problem":"P4","variant":"fp32","choice":"GEMM","pins":"0,0,0,1,8,8,8,8,8,8,0,0,0,1,256,256,256=default"}
J
python3 scripts/pins.py "$T/j16" --merge "$T/btable.json" --out "$T/mtable.json" 2>"$T/mlog" || fail "pins.py --merge: $(cat "$T/mlog")"
python3 - "$T/mtable.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))["problems"]
want = {"P1": "conv.f:0,2,1,3,8,1,9,9,3,1,1,1,9,9,3,1,1,1=a1m3;conv.r:0,2,1,3,8,1,9,9,3,1,1,1,9,9,3,1,1,1=a0m3;"
              "conv.t:0,2,1,3,8,1,9,9,3,1,1,1,9,9,3,1,1,1=g2e58/a1m0;bf16.lin:8,8,8,1,256,256,256=lt:00ff",
        "P4": "0,0,0,1,8,8,8,8,8,8,0,0,0,1,256,256,256=default"}
if d != want:
    print("collect_pins: pins.py --merge wrote", d); sys.exit(1)
PY
sed 's/NVIDIA H200/NVIDIA H100/' "$T/btable.json" >"$T/h100.json"
python3 scripts/pins.py "$T/j16" --merge "$T/h100.json" --out "$T/m2.json" 2>"$T/m2log" && fail "--merge took another GPU's table"
grep -q "h100.json" "$T/m2log" || fail "the --merge error does not name the file: $(cat "$T/m2log")"
echo '{"id": "P1", "fp32_pins": ' >"$T/broken.jsonl"
python3 scripts/pins.py "$T/j" --bench "$T/broken.jsonl" --out "$T/x.json" 2>"$T/xlog" && fail "a broken bench file was taken"
grep -q "broken.jsonl" "$T/xlog" || fail "the error does not name the file: $(cat "$T/xlog")"
[ ! -e "$T/x.json" ] || fail "a table was written from a broken file"
echo "collect_pins: ok"

#!/bin/bash
# kbv-collect without a GPU: usage errors exit 2; --build-only builds the
# candidates with nvcc (in parallel, cached), writes build and static
# records, a compile-error status with the log for a broken candidate and a
# missing status for an absent one; a second run takes the objects from the
# cache; --resume refuses a changed configuration (seed, pre-roll);
# --problems takes comma-separated patterns; a bad --preroll exits 2.  Skipped (pass) where
# kbv-collect was not built (no nvcc).
set -u
B=${1:-build}
C="$B/kbv-collect"
[ -x "$C" ] || { echo "skip: no $C"; exit 0; }
T=$(mktemp -d /tmp/kbv-cli-collect.XXXXXX)
trap 'rm -rf "$T"' EXIT
export KBV_CACHE="$T/cache"
fail() { echo "collect_build: $*"; exit 1; }

"$C" --help >/dev/null || fail "--help did not exit 0"
"$C" --version | grep -q kbv-collect || fail "--version"
"$C" --bogus 2>/dev/null; [ $? -eq 2 ] || fail "an unknown option must exit 2"
"$C" --shard 0/3 --build-only 2>/dev/null; [ $? -eq 2 ] || fail "--shard 0/3 must exit 2 (shards count from 1)"
"$C" --shard 4/3 --build-only 2>/dev/null; [ $? -eq 2 ] || fail "--shard 4/3 must exit 2"
"$C" --suite nonsense --build-only 2>/dev/null; [ $? -eq 2 ] || fail "an unknown suite must exit 2"
"$C" --resume --build-only 2>/dev/null; [ $? -eq 2 ] || fail "--resume without --out must exit 2"
CUDA_VISIBLE_DEVICES=5 "$C" --gpus 1 --build-only 2>/dev/null
[ $? -eq 2 ] || fail "--gpus 1 with CUDA_VISIBLE_DEVICES=5 (one GPU) must exit 2"

mkdir -p "$T/set"
cat >"$T/set/set.json" <<'J'
{"name": "cli-set"}
J
cp tests/gpu/sets/correct/L1_019_relu.cu "$T/set/"
printf '#include "kbv.h"\nextern "C" int kbv_forward(const kbv_call *c) { return syntax error; }\n' \
    >"$T/set/L1_023_softmax.cu"
cat >"$T/set/L1_001_square_matrix_multiplication.cu" <<'CU'
#include <cublas_v2.h>
#include "kbv.h"
static cublasHandle_t h;
extern "C" int kbv_setup(const kbv_call *c) { (void)c; return cublasCreate(&h) != CUBLAS_STATUS_SUCCESS; }
extern "C" int kbv_forward(const kbv_call *c)
{
    int n = (int)c->inputs[0].shape[0];
    const float one = 1.f, zero = 0.f;
    cublasSetStream(h, c->stream);
    return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, (const float *)c->inputs[1].data, n,
                       (const float *)c->inputs[0].data, n, &zero, (float *)c->outputs[0].data, n) != 0;
}
CU
"$C" --build-only --suite smoke --candidates "$T/set" --out "$T/run" 2>"$T/log" || fail "--build-only failed: $(tail -3 "$T/log")"
[ -f "$T/run/manifest.json" ] || fail "no manifest"
python3 - "$T/run" <<'PY' || exit 1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/samples.jsonl")]
by = {}
for r in recs:
    assert r["set"] == "cli-set", r
    by.setdefault((r["problem"], r["type"]), []).append(r)
def one(p, t):
    v = by.get((p, t), [])
    if len(v) != 1:
        print(f"collect_build: {p} has {len(v)} {t} records"); sys.exit(1)
    return v[0]
relu, sm, mm = "L1_019_relu", "L1_023_softmax", "L1_001_square_matrix_multiplication"
if not one(relu, "build")["ok"]: print("collect_build: relu did not build"); sys.exit(1)
if one(sm, "build")["ok"]: print("collect_build: the broken candidate built"); sys.exit(1)
st = one(sm, "status")
if st["status"] != "compile-error" or "error" not in st["detail"]:
    print("collect_build: broken candidate:", st); sys.exit(1)
if "library:cublas" not in one(mm, "static")["flags"] or "cublasSgemm_v2" not in one(mm, "static")["imports"]:
    print("collect_build: the cuBLAS candidate's static record:", one(mm, "static")); sys.exit(1)
m = json.load(open(sys.argv[1] + "/manifest.json"))
if m["schema"] != "kbv-run/1" or m["problems"] != [mm, relu, sm] or m["sets"][0]["name"] != "cli-set":
    print("collect_build: manifest", m); sys.exit(1)
PY
ls "$KBV_CACHE"/*.so >/dev/null 2>&1 || fail "nothing in the cache"
"$C" --build-only --suite smoke --candidates "$T/set" --out "$T/run" 2>/dev/null
[ $? -eq 2 ] || fail "a second run into the same folder without --resume must exit 2"
"$C" --build-only --suite smoke --candidates "$T/set" --out "$T/run2" 2>/dev/null || fail "second run"
grep -q '"problem":"L1_019_relu","ok":true,"seconds":0,"cached":true' "$T/run2/samples.jsonl" || fail "the second build was not a cache hit"
"$C" --build-only --suite smoke --candidates "$T/set" --out "$T/run2" --resume --seed 9 2>/dev/null
[ $? -eq 2 ] || fail "--resume with another seed must exit 2"
"$C" --build-only --suite smoke --candidates "$T/set" --out "$T/run2" --resume 2>/dev/null || fail "--resume of a finished run"
n=$(grep -c '"type":"status"' "$T/run2/samples.jsonl")
[ "$n" -eq 1 ] || fail "resume doubled records ($n status records)"
# --problems takes several patterns separated by commas; --preroll checks its text
"$C" --build-only --suite smoke --candidates "$T/set" --problems 'L1_019*,L1_00[1-2]_*' --out "$T/run3" 2>/dev/null ||
    fail "--problems with two patterns"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["problems"]; sys.exit(p != ["L1_001_square_matrix_multiplication", "L1_019_relu"])' \
    "$T/run3/manifest.json" || fail "--problems 'L1_019*,L1_00[1-2]_*' did not plan exactly L1_001 and L1_019"
"$C" --build-only --suite smoke --problems 'L9*,L8*' --candidates "$T/set" --out "$T/run4" 2>/dev/null
[ $? -eq 2 ] || fail "--problems matching nothing must exit 2"
for bad in x 1:2 1:3:2 -1 1:0:2000; do
    "$C" --build-only --preroll "$bad" --candidates "$T/set" --out "$T/run5" 2>/dev/null
    [ $? -eq 2 ] || fail "--preroll $bad must exit 2"
done
"$C" --build-only --suite smoke --preroll 2:1:8 --candidates "$T/set" --out "$T/run5" 2>/dev/null || fail "--preroll 2:1:8"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["config"]["timing"]; sys.exit((t["preroll_ms"], t["preroll_min_calls"], t["preroll_max_calls"]) != (2, 1, 8))' \
    "$T/run5/manifest.json" || fail "the manifest does not record --preroll 2:1:8"
"$C" --build-only --suite smoke --candidates "$T/set" --out "$T/run5" --resume 2>/dev/null
[ $? -eq 2 ] || fail "--resume with another pre-roll must exit 2"
exit 0

#!/usr/bin/env bash
# tests/parity/combine.py: a parity file from a run's in-run medians and a
# --torch-only file, without a GPU.  The ratio is the median of the run's
# samples of the variant over every set divided by PyTorch's time; the
# choice is the run's baseline record's; the exception is recomputed from
# the output checks and the ratios over 1.05 (with known.json's reasons); a
# problem without in-run samples is left out and counted; the samples of
# pairs classed as hacks are left out; a record that
# never reached PyTorch keeps its exception; a variant the run lacks is
# named; bf16 files give bf16 ratios only.  A file that --torch-only did
# not make, or a run without a journal, exits 2 naming it and writes
# nothing.
# usage: tests/cli/parity_combine.sh BUILD_DIR (the build folder is unused)
set -u
fail() { echo "parity_combine: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-parity-combine.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
only=$(python3 -c 'import sys; sys.path.insert(0, "tests/parity"); from combine import TORCH_ONLY; print(TORCH_ONLY)')
mkdir -p "$tmp/run"
# Two sets time L1_001 (fp32 medians 2.0 over both sets, tf32 1.1 -> 1.1 / 1.0 over the limit);
# L1_019 has fp32 only; L1_097 (a known reason) is slow in fp32; L1_050 has a bf16 baseline.
python3 - "$tmp/run/samples.jsonl" <<'P'
import json, sys
recs = []
def t(s, pid, v, ms):
    for x in ms:
        recs.append({"type": "time", "set": s, "problem": pid, "variant": v, "round": 0, "gpu_ms": x})
t("a", "L1_001_square_matrix_multiplication", "fp32", [1.9, 2.0, 2.1])
t("b", "L1_001_square_matrix_multiplication", "fp32", [2.0, 5.0])
t("a", "L1_001_square_matrix_multiplication", "tf32", [1.1, 1.1, 1.2])
t("a", "L1_001_square_matrix_multiplication", "candidate", [0.1])
t("a", "L1_019_relu", "fp32", [0.5])
t("a", "L1_097_scaleddotproductattention", "fp32", [3.0])
t("a", "L1_097_scaleddotproductattention", "tf32", [1.0])
t("c", "L1_050_conv", "bf16", [0.2, 0.4, 0.3])
recs.append({"type": "baseline", "set": "a", "problem": "L1_001_square_matrix_multiplication", "variant": "tf32", "choice": "GEMM algo 7 (pinned)"})
recs.append({"type": "baseline", "set": "b", "problem": "L1_001_square_matrix_multiplication", "variant": "tf32", "choice": "a later record"})
with open(sys.argv[1], "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
    f.write('{"type": "time", "torn')   # a torn last line is skipped
P
cat >"$tmp/t.json" <<J
{"schema": "kbv-parity/1", "gpu": "G", "torch": "t", "cuda": "c", "samples": 9,
 "method": {"kbv": "$only", "torch": "alone, warm"}, "problems": [
 {"id": "L1_001_square_matrix_multiplication", "fp32_ratio": null, "tf32_ratio": null, "exception": null, "checks": [], "fp32_torch_ms": 2.0, "tf32_torch_ms": 1.0},
 {"id": "L1_019_relu", "fp32_ratio": null, "tf32_ratio": null, "exception": null, "checks": [], "fp32_torch_ms": 0.5, "tf32_torch_ms": 0.5},
 {"id": "L1_097_scaleddotproductattention", "fp32_ratio": null, "tf32_ratio": null, "exception": "unexplained: tf32 output: max |d| 1", "checks": ["tf32 output: max |d| 1"], "fp32_torch_ms": 2.0, "tf32_torch_ms": 1.0},
 {"id": "L1_099_absent_from_the_run", "fp32_ratio": null, "tf32_ratio": null, "exception": null, "checks": [], "fp32_torch_ms": 1.0, "tf32_torch_ms": 1.0}]}
J
python3 tests/parity/combine.py --from-run "$tmp/run" --torch "$tmp/t.json" --out "$tmp/p.json" >"$tmp/out" 2>&1 \
    || fail "exit $? on good input: $(cat "$tmp/out")"
grep -q "3 problems, 3 with exceptions, 1 without in-run samples left out" "$tmp/out" || fail "summary: $(cat "$tmp/out")"
python3 - "$tmp/p.json" <<'P' || exit 1
import json, sys
sys.path.insert(0, "tests/parity")
from known import KNOWN
d = json.load(open(sys.argv[1]))
by = {r["id"]: r for r in d["problems"]}
def need(cond, what):
    if not cond:
        print("parity_combine: " + what)
        sys.exit(1)
need(d["method"]["kbv"].startswith("in-run medians") and d["method"]["torch"] == "alone, warm", "method: %r" % d["method"])
need(set(by) == {"L1_001_square_matrix_multiplication", "L1_019_relu", "L1_097_scaleddotproductattention"}, "ids: %s" % sorted(by))
a = by["L1_001_square_matrix_multiplication"]
need(a["fp32_kbv_ms"] == 2.0 and a["fp32_kbv_samples"] == 5 and a["fp32_ratio"] == 1.0, "L1_001 fp32: %r" % a)
need(abs(a["tf32_ratio"] - 1.1) < 1e-12 and a["tf32_choice"] == "GEMM algo 7 (pinned)", "L1_001 tf32: %r" % a)
need("L1_001_square_matrix_multiplication" not in KNOWN, "the test needs L1_001 without a reason")
need(a["exception"] == "unexplained: slower than PyTorch: tf32 ratio 1.100", "L1_001 exception: %r" % a["exception"])
r = by["L1_019_relu"]
need(r["fp32_ratio"] == 1.0 and r["tf32_ratio"] is None, "L1_019 ratios: %r" % r)
need(r["exception"] == "unexplained: tf32: no in-run samples", "L1_019 exception: %r" % r["exception"])
s = by["L1_097_scaleddotproductattention"]
need(s["exception"] == "known: " + KNOWN["L1_097_scaleddotproductattention"] +
     "; tf32 output: max |d| 1; slower than PyTorch: fp32 ratio 1.500", "L1_097 exception: %r" % s["exception"])
P
# bf16: only the bf16 ratio; a record that never reached PyTorch keeps its exception.
cat >"$tmp/b.json" <<J
{"schema": "kbv-parity/1", "gpu": "G", "precision": "bf16", "samples": 9,
 "method": {"kbv": "$only", "torch": "alone"}, "problems": [
 {"id": "L1_050_conv", "fp32_ratio": null, "tf32_ratio": null, "bf16_ratio": null, "exception": null, "checks": [], "bf16_torch_ms": 0.3},
 {"id": "L1_001_square_matrix_multiplication", "fp32_ratio": null, "tf32_ratio": null, "bf16_ratio": null, "exception": "kbv baseline unavailable here: no"}]}
J
python3 tests/parity/combine.py --from-run "$tmp/run" --torch "$tmp/b.json" --out "$tmp/pb.json" >"$tmp/out" 2>&1 \
    || fail "bf16: exit $?: $(cat "$tmp/out")"
python3 - "$tmp/pb.json" <<'P' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
by = {r["id"]: r for r in d["problems"]}
c = by["L1_050_conv"]
if not (d["precision"] == "bf16" and c["bf16_ratio"] == 1.0 and c["exception"] is None and "fp32_kbv_ms" not in c):
    print("parity_combine: bf16 record %r" % c); sys.exit(1)
if by["L1_001_square_matrix_multiplication"]["exception"] != "kbv baseline unavailable here: no":
    print("parity_combine: a record without checks lost its exception"); sys.exit(1)
P
# --torch-bf16 adds the bf16 keys to the fp32/tf32 record, one exception for both.
cat >"$tmp/b2.json" <<J
{"schema": "kbv-parity/1", "gpu": "G", "precision": "bf16", "samples": 9,
 "method": {"kbv": "$only", "torch": "alone"}, "problems": [
 {"id": "L1_001_square_matrix_multiplication", "fp32_ratio": null, "tf32_ratio": null, "bf16_ratio": null, "exception": null, "checks": ["bf16 output: max |d| 2"], "bf16_torch_ms": 0.5,
  "bf16_torch_collect_check": {"pass": false, "mismatches": 3, "count": 8, "max_abs_err": 0.2, "ref_absmax": 1.5}}]}
J
printf '{"type": "time", "set": "t", "problem": "L1_001_square_matrix_multiplication", "variant": "bf16", "round": 0, "gpu_ms": 0.6}\n' >>"$tmp/run/samples.jsonl.new"
{ head -n -1 "$tmp/run/samples.jsonl"; cat "$tmp/run/samples.jsonl.new"; } >"$tmp/run/s" && mv "$tmp/run/s" "$tmp/run/samples.jsonl"
python3 tests/parity/combine.py --from-run "$tmp/run" --torch "$tmp/t.json" --torch-bf16 "$tmp/b2.json" --out "$tmp/pm.json" \
    >"$tmp/out" 2>&1 || fail "--torch-bf16: exit $?: $(cat "$tmp/out")"
python3 - "$tmp/pm.json" <<'P' || exit 1
import json, sys
by = {r["id"]: r for r in json.load(open(sys.argv[1]))["problems"]}
a = by["L1_001_square_matrix_multiplication"]
want = "unexplained: slower than PyTorch: tf32 ratio 1.100; bf16 output: max |d| 2; slower than PyTorch: bf16 ratio 1.200"
if a.get("bf16_torch_collect_check", {}).get("mismatches") != 3:
    print("parity_combine: the bf16 collect check of PyTorch was not carried: %r" % a); sys.exit(1)
if abs(a["bf16_ratio"] - 1.2) > 1e-12 or a["fp32_ratio"] != 1.0 or a["exception"] != want or "checks" in a:
    print("parity_combine: merged record %r" % a); sys.exit(1)
if "bf16_ratio" in by["L1_019_relu"]:
    print("parity_combine: a problem without a bf16 record got bf16 keys"); sys.exit(1)
P
python3 tests/parity/combine.py --from-run "$tmp/run" --torch "$tmp/t.json" --torch-bf16 "$tmp/t.json" --out "$tmp/x.json" >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "not a file of the BF16 setting" "$tmp/out" || fail "an fp32 file as --torch-bf16: $(cat "$tmp/out")"
# The baseline samples of a pair analysis.json classes as a hack are left out (its candidate may have
# disturbed them); without an analysis they count, and the method says so.
mkdir -p "$tmp/run3"
python3 - "$tmp/run3/samples.jsonl" <<'P'
import json, sys
with open(sys.argv[1], "w") as f:
    for s, ms in (("a", [1.0, 1.0, 1.0]), ("h", [9.0, 9.0, 9.0, 9.0])):
        for x in ms:
            f.write(json.dumps({"type": "time", "set": s, "problem": "L1_019_relu", "variant": "fp32", "round": 0, "gpu_ms": x}) + "\n")
P
python3 tests/parity/combine.py --from-run "$tmp/run3" --torch "$tmp/t.json" --out "$tmp/h1.json" >/dev/null 2>&1 || fail "run3 without analysis"
echo '{"sets": [{"name": "h", "problems": [{"problem": "L1_019_relu", "class": "deferred-work"}]},
                {"name": "a", "problems": [{"problem": "L1_019_relu", "class": "correct"}]}]}' >"$tmp/run3/analysis.json"
python3 tests/parity/combine.py --from-run "$tmp/run3" --torch "$tmp/t.json" --out "$tmp/h2.json" >/dev/null 2>&1 || fail "run3 with analysis"
python3 - "$tmp/h1.json" "$tmp/h2.json" <<'P' || exit 1
import json, sys
h1, h2 = (json.load(open(p)) for p in sys.argv[1:3])
r1 = {r["id"]: r for r in h1["problems"]}["L1_019_relu"]
r2 = {r["id"]: r for r in h2["problems"]}["L1_019_relu"]
if r1["fp32_kbv_ms"] != 9.0 or "hacks included" not in h1["method"]["kbv"]:
    print("parity_combine: without analysis.json: %r, %r" % (r1["fp32_kbv_ms"], h1["method"])); sys.exit(1)
if r2["fp32_kbv_ms"] != 1.0 or r2["fp32_kbv_samples"] != 3 or "without the 1 pairs classed as hacks" not in h2["method"]["kbv"]:
    print("parity_combine: a hack's samples were not left out: %r, %r" % (r2, h2["method"])); sys.exit(1)
P
echo '{"sets": 3}' >"$tmp/run3/analysis.json"
python3 tests/parity/combine.py --from-run "$tmp/run3" --torch "$tmp/t.json" --out "$tmp/x.json" >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "$tmp/run3/analysis.json" "$tmp/out" || fail "a malformed analysis.json: $(cat "$tmp/out")"
# Bad input: not a --torch-only file (a combined one), a run without a journal.
python3 tests/parity/combine.py --from-run "$tmp/run" --torch "$tmp/p.json" --out "$tmp/x.json" >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "a combined file as --torch did not exit 2"
grep -q "$tmp/p.json: not made by parity.py --torch-only" "$tmp/out" || fail "error: $(cat "$tmp/out")"
mkdir -p "$tmp/empty"
python3 tests/parity/combine.py --from-run "$tmp/empty" --torch "$tmp/t.json" --out "$tmp/x.json" >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "a run without a journal did not exit 2"
grep -q "$tmp/empty: no samples.jsonl" "$tmp/out" || fail "error: $(cat "$tmp/out")"
[ ! -e "$tmp/x.json" ] && [ ! -e "$tmp/x.json.tmp" ] || fail "bad input left an output"
exit 0

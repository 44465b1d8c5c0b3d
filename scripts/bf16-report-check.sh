#!/usr/bin/env bash
# GPU validation of the BF16 report side (issue 17): collects the bundled
# sets naive and naive-bf16 on two problems (L1_001 square matmul, L1_019
# ReLU) with a short time cap, runs kbv report, and checks that
#   - the journal times naive-bf16's pairs as {candidate, bf16} only and
#     naive's as {candidate, fp32, tf32};
#   - analysis.json lists naive-bf16 with precision bf16, compare_with
#     naive, its speedups, times and baselines under bf16 alone;
#   - the report holds headline_bf16, fast_p_bf16 and
#     bf16_vs_fp32_naive-bf16 (SVG and PNG) and the PDF section.
# It prints (and writes to OUT_DIR/summary.txt) each problem's FP32 speedup
# against fp32 and BF16 speedup against bf16 with both classes, and ends
# with "bf16-report-check: PASS" or "... FAIL: <reasons>".  About 30-60 s
# of GPU time.  Run after `make all tests` (DEPS_ROOT set where needed).
# usage: scripts/bf16-report-check.sh OUT_DIR [BUILD_DIR]
set -u
out=${1:?usage: scripts/bf16-report-check.sh OUT_DIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/check.log
: >"$log"
say() { echo "bf16-report-check: $*" | tee -a "$out/summary.txt"; }
[ -x "$build/kbv" ] || { say "FAIL: no $build/kbv (run make all tests first)"; exit 1; }
for s in naive naive-bf16; do
    [ -f "data/candidates/$s/set.json" ] || { say "FAIL: no data/candidates/$s/set.json"; exit 1; }
done
glob='L1_0[01][19]_[rs]*'   # L1_001_square_matrix_multiplication, L1_019_relu
run=$out/run
rm -rf "$run"
start=$(date +%s)
"$build/kbv" collect --candidates data/candidates/naive --candidates data/candidates/naive-bf16 \
    --problems "$glob" --precision all --max-time 2 --out "$run" >>"$log" 2>&1
rc=$?
say "collect exit $rc in $(( $(date +%s) - start )) s (log: $log)"
[ -f "$run/manifest.json" ] || { say "FAIL: collect wrote no manifest"; tail -20 "$log"; exit 1; }
"$build/kbv" report "$run" >>"$log" 2>&1 || { say "FAIL: kbv report failed"; tail -20 "$log"; exit 1; }

python3 - "$run" <<'PY' 2>&1 | tee -a "$out/summary.txt"
import csv, gzip, json, os, subprocess, sys
run = sys.argv[1]
bad = []
def check(ok, what):
    if not ok:
        bad.append(what)
man = json.load(open(os.path.join(run, "manifest.json")))
ms = {s["name"]: s for s in man["sets"]}
check(ms.get("naive-bf16", {}).get("precision") == "bf16", "manifest: naive-bf16 precision %r" % ms.get("naive-bf16", {}).get("precision"))
check(ms.get("naive-bf16", {}).get("compare_with") == "naive", "manifest: naive-bf16 compare_with")
jp = os.path.join(run, "samples.jsonl")
lines = (gzip.open(jp + ".gz", "rt") if not os.path.exists(jp) else open(jp)).read().splitlines()
variants = {}
for ln in lines:
    r = json.loads(ln)
    if r.get("type") in ("time", "memory", "baseline"):
        variants.setdefault(r["set"], set()).add(r["variant"])
check(variants.get("naive-bf16", set()) <= {"candidate", "bf16"} and "bf16" in variants.get("naive-bf16", set()),
      "journal: naive-bf16 variants %s" % sorted(variants.get("naive-bf16", [])))
check(variants.get("naive", set()) <= {"candidate", "fp32", "tf32"}, "journal: naive variants %s" % sorted(variants.get("naive", [])))
a = json.load(open(os.path.join(run, "analysis.json")))
sets = {s["name"]: s for s in a["sets"]}
b, f = sets.get("naive-bf16"), sets.get("naive")
check(b is not None and f is not None, "analysis: sets %s" % list(sets))
if b and f:
    check(b.get("precision") == "bf16" and b.get("compare_with") == "naive", "analysis: naive-bf16 summary")
    check(list(b["baselines"]) == ["bf16"], "analysis: naive-bf16 baselines %s" % list(b["baselines"]))
    fp = {p["problem"]: p for p in f["problems"]}
    print("problem                                   naive class    FP32 vs fp32   naive-bf16 class  BF16 vs bf16   bf16 ms  cand ms")
    for p in b["problems"]:
        q = fp.get(p["problem"], {})
        check(set(p["speedup"]) == {"bf16"}, "%s: speedup keys %s" % (p["problem"], list(p["speedup"])))
        check(set(p["time_ms"]) == {"candidate", "bf16"}, "%s: time_ms keys %s" % (p["problem"], list(p["time_ms"])))
        sb = p["speedup"]["bf16"]
        sf = (q.get("speedup") or {}).get("fp32")
        if p["class"] == "correct":
            check(sb is not None and sb["estimate"] > 0, "%s: correct without a bf16 speedup" % p["problem"])
        fmt = lambda s: "%.3f [%.3f, %.3f]" % (s["estimate"], s["ci_low"], s["ci_high"]) if s else "null"
        print("%-40s  %-13s  %-13s  %-16s  %-13s  %s  %s" % (p["problem"], q.get("class"), fmt(sf), p["class"], fmt(sb),
              p["time_ms"].get("bf16"), p["time_ms"].get("candidate")))
rep = os.path.join(run, "report")
for fn in ("tables/headline_bf16.csv", "tables/fast_p_bf16.csv", "figures/fast_p_bf16.svg", "figures/fast_p_bf16.png",
           "figures/bf16_vs_fp32_naive-bf16.svg", "figures/bf16_vs_fp32_naive-bf16.png"):
    check(os.path.getsize(os.path.join(rep, fn)) > 0 if os.path.exists(os.path.join(rep, fn)) else False, "report: no " + fn)
if os.path.exists(os.path.join(rep, "tables/headline_bf16.csv")):
    for row in csv.DictReader(open(os.path.join(rep, "tables/headline_bf16.csv"))):
        print("headline_bf16: %s vs bf16 geomean %s [%s, %s] n=%s, fast_1 %s; %s vs fp32 geomean %s" % (
            row["set"], row["geomean_bf16"], row["geomean_bf16_ci_low"], row["geomean_bf16_ci_high"],
            row["geomean_bf16_n"], row["fast_1_bf16"], row["compare_with"], row["fp32_set_geomean_fp32"]))
try:
    txt = subprocess.run(["pdftotext", os.path.join(rep, "report.pdf"), "-"], capture_output=True, text=True).stdout
    check("The BF16 setting" in txt, "report.pdf: no BF16 section")
except FileNotFoundError:
    print("(pdftotext not found: the PDF is not searched)")
if bad:
    print("bf16-report-check: FAIL: " + "; ".join(bad))
    sys.exit(1)
print("bf16-report-check: PASS")
PY
exit "${PIPESTATUS[0]}"

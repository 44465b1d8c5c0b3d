#!/usr/bin/env bash
# The report of the newest archived snapshot as a paper's appendix (issue
# 18): pairs without a candidate are a class of their own (one line per set,
# never an error, not among the findings or the forests), the per-level,
# failure and tolerance sections and their figures exist, the methods
# section defines the protocol and geomean_all, forest figures are no
# taller than a page, fast_p's figures name their baseline, log axes have
# decimal ticks, and no speedup prints as 0.00.  The report is rendered
# twice and must be byte-identical.  Skipped without a snapshot.
# usage: tests/cli/render_appendix.sh BUILD_DIR
set -u
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
fail() { echo "render_appendix: $*"; exit 1; }
snap=$(ls -d data/snapshots/*/ 2>/dev/null | LC_ALL=C sort | tail -1)
[ -n "$snap" ] || { echo "render_appendix: skipped: no snapshot"; exit 0; }
tmp=$(mktemp -d /tmp/kbv-render-appendix.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
run="$tmp/run"
cp -r "$snap" "$run"
"$build/kbv" report "$run" 2>"$tmp/log" || fail "kbv report failed: $(cat "$tmp/log")"
rep="$run/report"
pdftotext "$rep/report.pdf" - | tr '\n' ' ' | tr -s ' ' >"$tmp/flat.txt" || fail "pdftotext failed"

for f in levels_fast_p_fp32 levels_fast_p_tf32 failures tolerance scatter fast_p_fp32 fast_p_tf32; do
    [ -s "$rep/figures/$f.svg" ] && [ -s "$rep/figures/$f.png" ] || fail "figure $f missing"
done
for t in levels failures tolerance; do
    [ -s "$rep/tables/$t.csv" ] && [ -s "$rep/tables/$t.tex" ] || fail "table $t missing"
done
for s in "Methods and definitions" "Results per level" "Failures by distribution and probe" \
    "Correctness against the tolerance" "without a candidate" "cannot fall below 1" "Stopping rule" \
    "Probes and what they catch" "Precision tiers"; do
    grep -q "$s" "$tmp/flat.txt" || fail "the PDF lacks \"$s\""
done
grep -q "missing: no " "$tmp/flat.txt" && fail "a pair without a candidate is still among the findings"
grep -q "1/16\|1/32\|1/64" "$tmp/flat.txt" && fail "a log axis still has a fraction tick label"
grep -q "fast_p vs strict fp32" "$rep/figures/fast_p_fp32.svg" 2>/dev/null ||
    python3 - "$rep/figures/fast_p_fp32.svg" "$rep/figures/fast_p_tf32.svg" <<'PY' || exit 1
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
if a == b:
    print("render_appendix: fast_p_fp32.svg and fast_p_tf32.svg are the same")
    sys.exit(1)
PY

python3 - "$run/analysis.json" "$rep" <<'PY' || exit 1
import csv, json, os, struct, sys
a = json.load(open(sys.argv[1]))
rep = sys.argv[2]
def bad(msg):
    print("render_appendix: " + msg)
    sys.exit(1)
def missing(p):
    return p["class"] == "missing" or (p["class"] == "error" and any(
        e["text"].startswith("missing: no ") for e in p.get("evidence", [])))
# The fp32 sets have their row in headline.csv and the bf16 sets theirs in
# headline_bf16.csv; every set has exactly one row.
head = {}
for t in ("headline.csv", "headline_bf16.csv"):
    fn = os.path.join(rep, "tables", t)
    if os.path.exists(fn):
        for h in csv.DictReader(open(fn)):
            if h["set"] in head:
                bad("set %s has rows in two headline tables" % h["set"])
            head[h["set"]] = h
for s in a["sets"]:
    h = head.get(s["name"])
    if h is None:
        bad("no headline row for set %s" % s["name"])
    nm = sum(missing(p) for p in s["problems"])
    errors = sum(p["class"] == "error" for p in s["problems"]) - sum(
        p["class"] == "error" and missing(p) for p in s["problems"])
    if int(h["missing"]) != nm or int(h["error"]) != errors:
        bad("headline.csv %s: missing %s error %s, expected %d and %d" % (s["name"], h["missing"], h["error"], nm, errors))
    for key in ("levels", "failures", "tolerance_sweep", "fast_p_share_ci"):
        if key not in s:
            bad("analysis.json set %s has no %s" % (s["name"], key))
hacks = list(csv.DictReader(open(os.path.join(rep, "tables", "hacks.csv"))))
if any(r["class"] == "missing" or r["text"].startswith("missing:") for r in hacks):
    bad("hacks.csv lists pairs without a candidate")
# problems.csv lists the pairs of the FP32 sets and problems_bf16.csv those
# of the BF16 sets: together, every pair once.
rows = []
for t in ("problems.csv", "problems_bf16.csv"):
    fn = os.path.join(rep, "tables", t)
    if os.path.exists(fn):
        rows += [(p["set"], p["problem"], p["class"]) for p in csv.DictReader(open(fn))]
want = sorted((s["name"], p["problem"], p["class"]) for s in a["sets"] for p in s["problems"])
if sorted(rows) != want:
    bad("problems.csv and problems_bf16.csv do not list every pair once with its class")
# Every forest figure fits a page (A4 at the PNG scale of 2: 1684 px).
for f in os.listdir(os.path.join(rep, "figures")):
    if f.startswith("forest_") and f.endswith(".png"):
        with open(os.path.join(rep, "figures", f), "rb") as fh:
            w, h = struct.unpack(">II", fh.read(24)[16:24])
        if h > 1684:
            bad("%s is %d px tall, more than a page" % (f, h))
PY
# No speedup or share printed as 0.00 where it is not zero: every "0.00"
# of the per-problem tables is a real zero.
if grep -q "0.00x" "$tmp/flat.txt"; then fail "a speedup prints as 0.00x"; fi
# Byte for byte the same a second time.
cp -r "$rep" "$tmp/first"
"$build/kbv-render" "$run" 2>/dev/null || fail "second render failed"
diff -r "$tmp/first" "$rep" >/dev/null || fail "two renders differ"
exit 0

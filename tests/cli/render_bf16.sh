#!/usr/bin/env bash
# The BF16 setting from journal to report (issue 17): a synthetic run with
# two FP32 sets and a BF16 mirror of the first (scripts/synth_run.py
# --bf16-sets 1) is analysed and rendered.  analysis.json lists the BF16
# set's speedups under bf16 alone, near the speedups it was drawn from;
# the report holds headline_bf16 and fast_p_bf16 with analysis.json's
# numbers, the figures fast_p_bf16 and bf16_vs_fp32_set0-bf16 (SVG and
# PNG) and the section in the PDF; the FP32 sets' tables are byte for byte
# those of the same run without the BF16 set; a BF16 set whose FP32 set
# the run lacks gets a sentence instead of a comparison; an analysis with
# another precision and a misplaced compare_caption are refused.
# usage: tests/cli/render_bf16.sh BUILD_DIR
set -u
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
fail() { echo "render_bf16: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-render-bf16.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for k in 0 1; do
    python3 scripts/synth_run.py --out "$tmp/run$k" --problems 12 --sets 2 --bf16-sets $k --samples 41 --seed 9 \
        2>/dev/null || fail "synth_run.py --bf16-sets $k"
    "$build/kbv-analyze" "$tmp/run$k" 2>"$tmp/log" || fail "analyze (bf16 sets: $k): $(cat "$tmp/log")"
    "$build/kbv-render" "$tmp/run$k" 2>"$tmp/log" || fail "render (bf16 sets: $k): $(cat "$tmp/log")"
done
r=$tmp/run1

python3 - "$r" <<'PY' || fail "analysis.json or the BF16 tables disagree (above)"
import csv, json, math, sys
run = sys.argv[1]
a = json.load(open(run + "/analysis.json"))
truth = json.load(open(run + "/synth_truth.json"))
sets = {s["name"]: s for s in a["sets"]}
b, f = sets["set0-bf16"], sets["set0"]
def check(ok, what):
    if not ok:
        print("render_bf16:", what)
        sys.exit(1)
check(b["precision"] == "bf16" and b.get("compare_with") == "set0", "BF16 set summary: %s %s" % (b["precision"], b.get("compare_with")))
check(f["precision"] == "fp32" and "compare_with" not in f, "FP32 set summary")
check(list(b["baselines"]) == ["bf16"], "BF16 baselines %s" % list(b["baselines"]))
check(list(f["baselines"]) == ["fp32", "tf32"], "FP32 baselines %s" % list(f["baselines"]))
check([s["step"] for s in b["inflation"]] == ["original", "hidden", "probes"], "BF16 inflation steps")
check(b["memory"]["baseline"] == "bf16", "BF16 memory baseline")
n = 0
for p in b["problems"]:
    check(set(p["time_ms"]) == {"candidate", "bf16"}, "%s time_ms keys %s" % (p["problem"], list(p["time_ms"])))
    check(set(p["speedup"]) == {"bf16"}, "%s speedup keys" % p["problem"])
    t = truth["sets"]["set0-bf16"][p["problem"]]
    if p["speedup"]["bf16"] and t.get("speedup"):
        s, want = p["speedup"]["bf16"]["estimate"], t["speedup"]["bf16"]
        check(abs(math.log(s / want)) < 0.05, "%s: speedup %g, drawn around %g" % (p["problem"], s, want))
        n += 1
    check(p["class"] == t["class"], "%s: class %s, planned %s" % (p["problem"], p["class"], t["class"]))
    check("precision-half" not in p["flags"], "%s: the bf16 tier flagged" % p["problem"])
check(n >= 8, "only %d BF16 speedups compared" % n)
for lv in b["levels"]:
    check(list(lv["baselines"]) == ["bf16"], "level %s baselines" % lv["level"])

rows = list(csv.DictReader(open(run + "/report/tables/headline_bf16.csv")))
check(len(rows) == 1 and rows[0]["set"] == "set0-bf16" and rows[0]["compare_with"] == "set0", "headline_bf16 rows")
row = rows[0]
def same(x, y):
    return abs(float(x) - y) <= 1e-12 * abs(y)
g = b["baselines"]["bf16"]["geomean_speedup_correct"]
check(same(row["geomean_bf16"], g["estimate"]) and same(row["geomean_bf16_ci_low"], g["ci_low"]), "headline_bf16 geomean")
check(int(row["geomean_bf16_n"]) == g["n"], "headline_bf16 n")
fp1 = [x for x in b["baselines"]["bf16"]["fast_p"] if x["p"] == 1][0]
check(same(row["fast_1_bf16"], fp1["estimate"]), "headline_bf16 fast_1")
gf = f["baselines"]["fp32"]["geomean_speedup_correct"]
check(same(row["fp32_set_geomean_fp32"], gf["estimate"]), "headline_bf16: the FP32 set's geomean")
counts = {"correct": b["counts"]["correct"], "hidden_fail": b["counts"]["hidden-fail"]}
for k, v in counts.items():
    check(int(row[k]) == v, "headline_bf16 %s: %s, analysis %d" % (k, row[k], v))
fp = list(csv.DictReader(open(run + "/report/tables/fast_p_bf16.csv")))
want = b["baselines"]["bf16"]["fast_p"]
check(len(fp) == len(want), "fast_p_bf16 rows")
for x, y in zip(fp, want):
    check(x["baseline"] == "bf16" and same(x["p"], y["p"]) and same(x["fast_p"], y["estimate"]), "fast_p_bf16 at p = %s" % x["p"])
PY

for fig in fast_p_bf16 bf16_vs_fp32_set0-bf16; do
    [ -s "$r/report/figures/$fig.svg" ] && [ -s "$r/report/figures/$fig.png" ] || fail "no figure $fig (SVG and PNG)"
done
grep -q '<svg' "$r/report/figures/bf16_vs_fp32_set0-bf16.svg" || fail "bf16_vs_fp32 is not an SVG"
if command -v pdftotext >/dev/null; then
    pdftotext "$r/report/report.pdf" "$tmp/pdf.txt"
    grep -q '^The BF16 setting' "$tmp/pdf.txt" || fail "the PDF has no BF16 section"
    grep -q 'set0-bf16 against set0 (n = 12' "$tmp/pdf.txt" || fail "the PDF has no comparison figure of set0-bf16"
    grep -q 'fast_p vs the bf16 baseline' "$tmp/pdf.txt" || fail "the PDF has no BF16 fast_p caption"
    pdftotext "$tmp/run0/report/report.pdf" "$tmp/pdf0.txt"
    grep -q 'BF16' "$tmp/pdf0.txt" && fail "a run without BF16 sets mentions BF16 in its PDF"
fi
[ -z "$(find "$tmp/run0/report" -name '*bf16*')" ] || fail "a run without BF16 sets has BF16 files"

# The FP32 sets' numbers do not depend on a BF16 set beside them.
for t in headline fast_p inflation levels hacks tolerance failures; do
    cmp -s "$tmp/run0/report/tables/$t.csv" "$r/report/tables/$t.csv" || fail "tables/$t.csv changed by the BF16 set"
done

# An analysis whose set names another precision is refused, naming it;
# so is a template that gives 'compare_caption' to a section but bf16.
cp -r "$r" "$tmp/bad"
python3 - "$tmp/bad/analysis.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["sets"][-1]["precision"] = "fp16"
json.dump(d, open(sys.argv[1], "w"))
PY
"$build/kbv-render" "$tmp/bad" 2>"$tmp/log"; rc=$?
[ $rc -eq 2 ] || fail "precision fp16 in analysis.json: exit $rc, want 2"
grep -q "set 'set0-bf16': precision must be" "$tmp/log" || fail "precision fp16 message: $(cat "$tmp/log")"
python3 - templates/report.json "$tmp/tmpl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
[s for s in d["sections"] if s["id"] == "headline"][0]["compare_caption"] = "{{set}}"
json.dump(d, open(sys.argv[2], "w"))
PY
"$build/kbv-render" "$r" --template "$tmp/tmpl.json" 2>"$tmp/log"; rc=$?
[ $rc -eq 2 ] || fail "compare_caption in the headline: exit $rc, want 2"
grep -q "'compare_caption' is a field of the bf16 section only" "$tmp/log" || fail "compare_caption message: $(cat "$tmp/log")"

# A BF16 set whose FP32 set this run did not time: a sentence, no figure.
python3 - "$r/manifest.json" "$r/analysis.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    for s in d["sets"]:
        if s.get("compare_with"):
            s["compare_with"] = "tuned"
    json.dump(d, open(path, "w"))
PY
"$build/kbv-render" "$r" 2>"$tmp/log" || fail "render (compare_with absent): $(cat "$tmp/log")"
grep -q 'compares with tuned, which is not an FP32 set' "$tmp/log" || fail "no warning for a missing FP32 set: $(cat "$tmp/log")"
[ -z "$(find "$r/report" -name 'bf16_vs_fp32*')" ] || fail "a comparison figure without the FP32 set"
[ -s "$r/report/figures/fast_p_bf16.svg" ] || fail "fast_p_bf16 missing without the FP32 set"
if command -v pdftotext >/dev/null; then
    pdftotext "$r/report/report.pdf" - | tr '\n' ' ' | grep -q 'mirrors the FP32 set tuned, which this run did not time' ||
        fail "the PDF does not say why set0-bf16 has no comparison"
fi
exit 0

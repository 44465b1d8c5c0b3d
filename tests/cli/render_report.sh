#!/usr/bin/env bash
# kbv-render on the hand-made fixture tests/fixtures/render_run: every file
# is there; qpdf accepts the PDF; pdftotext finds the headline numbers of
# analysis.json printed by the report's rule (two decimals); xmllint accepts
# and rsvg-convert renders every SVG; fonts are embedded; bookmarks, page
# numbers and the run's date are in the PDF; the tables are booktabs; two
# renders (another folder, another working directory, a second later) are
# byte-identical.
# usage: tests/cli/render_report.sh BUILD_DIR
set -u
# The environment must not steer the date; the templates are this
# checkout's, wherever the build folder is.
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
render="$build/kbv-render"
fail() { echo "render_report: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-render-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cp -r tests/fixtures/render_run "$tmp/a"
cp -r tests/fixtures/render_run "$tmp/b"
"$render" "$tmp/a" 2>"$tmp/log" || fail "render failed (exit $?): $(cat "$tmp/log")"
sleep 1
(cd "$tmp" && "$render" b 2>"$tmp/log2") || fail "second render failed: $(cat "$tmp/log2")"

r="$tmp/a/report"
for f in report.pdf; do [ -s "$r/$f" ] || fail "$f missing"; done
for n in inflation fast_p_fp32 fast_p_tf32 scatter classes forest_tuned forest_model-a forest_model-b; do
    for x in svg png; do [ -s "$r/figures/$n.$x" ] || fail "figures/$n.$x missing"; done
done
for n in headline inflation problems hacks fast_p; do
    for x in csv tex; do [ -s "$r/tables/$n.$x" ] || fail "tables/$n.$x missing"; done
    grep -q '\\toprule' "$r/tables/$n.tex" && grep -q '\\midrule' "$r/tables/$n.tex" &&
        grep -q '\\bottomrule' "$r/tables/$n.tex" || fail "tables/$n.tex is not booktabs"
done
# Nothing but the report is left in the run directory (no temporaries).
left=$(cd "$tmp/a" && ls -A | sort | tr '\n' ' ')
[ "$left" = "analysis.json manifest.json report " ] || fail "run directory holds: $left"

qpdf --check "$r/report.pdf" >"$tmp/qpdf" 2>&1 || fail "qpdf --check: $(tail -3 "$tmp/qpdf")"
pdftotext "$r/report.pdf" "$tmp/text.txt" || fail "pdftotext failed"

# Headline numbers, formatted from analysis.json by the documented rule.
python3 tests/fixtures/render_tools/check_numbers.py "$tmp/a/analysis.json" "$tmp/text.txt" >"$tmp/num" ||
    fail "$(cat "$tmp/num")"

grep -q "page 1 of" "$tmp/text.txt" || fail "no page numbers"
# The time cap says what it bounds: one variant's time where the manifest
# does not say (runs before max_s_scope), the pair's where it says "pair".
tr '\n' ' ' <"$tmp/text.txt" | grep -q "or at 500 rounds or 10 s of one variant's timed calls" ||
    fail "the time cap of a manifest without max_s_scope"
# The interval the rule judged: pooled where the manifest does not name
# stop_input_set_min, by input set where it does.
tr '\n' ' ' <"$tmp/text.txt" | grep -q "paired speedup (pooled over the rounds) is below 1%" ||
    fail "the stopping rule of a manifest without stop_input_set_min"
cp -r tests/fixtures/render_run "$tmp/c"
python3 - "$tmp/c/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["config"]["timing"]["max_s_scope"] = "pair"
m["config"]["timing"]["stop_input_set_min"] = 5
json.dump(m, open(sys.argv[1], "w"))
PY
"$render" "$tmp/c" >/dev/null 2>&1 && pdftotext "$tmp/c/report/report.pdf" "$tmp/c.txt" ||
    fail "render of the pair-scope manifest"
tr '\n' ' ' <"$tmp/c.txt" | grep -q "or at 500 rounds or 10 s of the pair's timed calls" ||
    fail "the time cap of a manifest with max_s_scope pair"
tr '\n' ' ' <"$tmp/c.txt" | grep -q "by timed input set where two sets hold 5 rounds each) is below 1%" ||
    fail "the stopping rule of a manifest with stop_input_set_min"
grep -q "2026-11-29 23:00 UTC" "$tmp/text.txt" || fail "the run's date is not printed"
TZ=UTC pdfinfo "$r/report.pdf" | grep -q "CreationDate: *Sun Nov 29 23:00:00 2026" || fail "CreationDate is not created_utc: $(TZ=UTC pdfinfo "$r/report.pdf" | grep Creation)"
pdffonts "$r/report.pdf" | awk 'NR > 2 && $0 ~ /DejaVuSans/ { n++; if ($(NF-4) != "yes") bad = 1 } END { exit !(n >= 2 && !bad) }' ||
    fail "DejaVu Sans is not embedded: $(pdffonts "$r/report.pdf")"
qpdf --json "$r/report.pdf" >"$tmp/pdf.json" 2>/dev/null
python3 - "$tmp/pdf.json" <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
titles = []
def walk(os):
    for o in os:
        titles.append(o["title"])
        walk(o.get("kids", []))
walk(j.get("outlines", []))
need = ["Run summary", "Headline", "fast_p curves", "Per-problem speedups", "Hack findings and their evidence",
        "Per-problem results", "tuned"]
miss = [t for t in need if t not in titles]
if miss:
    print("render_report: bookmarks missing: %s (have %s)" % (miss, titles))
    sys.exit(1)
PY

for s in "$r"/figures/*.svg; do
    xmllint --noout "$s" 2>"$tmp/xml" || fail "xmllint rejects $(basename "$s"): $(head -3 "$tmp/xml")"
    rsvg-convert "$s" -o "$tmp/svg.png" 2>"$tmp/rsvg" || fail "rsvg-convert fails on $(basename "$s"): $(cat "$tmp/rsvg")"
    [ -s "$tmp/svg.png" ] || fail "rsvg-convert gave nothing for $(basename "$s")"
done
# The PNGs are PNGs.
for p in "$r"/figures/*.png; do
    head -c 8 "$p" | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' || fail "$(basename "$p") is not a PNG"
done

diff -r "$tmp/a/report" "$tmp/b/report" >"$tmp/diff" 2>&1 || fail "two renders differ: $(head -3 "$tmp/diff")"
exit 0

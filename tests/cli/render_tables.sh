#!/usr/bin/env bash
# The report's tables are ready for a paper: every CSV starts with its
# header row (no comment line, the expected first column name), and every
# .tex compiles in a plain article with booktabs, longtable, tabularx and
# array and fits the text width (no overfull line over 1 pt), for the
# fixture run (with a parity file), a synthetic run with a BF16 set and,
# where present, the newest archived
# snapshot (long tables: hundreds of rows, long evidence).  Without pdflatex
# the .tex files are checked for their structure only.
# usage: tests/cli/render_tables.sh BUILD_DIR
set -u
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
fail() { echo "render_tables: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-render-tables.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The first column of each CSV.
first_col() {
    case "$1" in
    baseline_parity) echo id ;;
    baseline_drift) echo problem ;;
    *) echo set ;;
    esac
}

check_run() {
    local run=$1 t=$1/report/tables n f
    [ -d "$t" ] || fail "$run: no tables"
    for f in "$t"/*.csv; do
        n=$(basename "$f" .csv)
        head -c1 "$f" | grep -q '#' && fail "$f starts with a comment line"
        [ "$(head -1 "$f" | cut -d, -f1)" = "$(first_col "$n")" ] ||
            fail "$f: the first line is not its header row: $(head -1 "$f")"
        [ -s "$t/$n.tex" ] || fail "$n.csv has no $n.tex"
    done
    for f in "$t"/*.tex; do
        n=$(basename "$f" .tex)
        grep -q '\\toprule' "$f" && grep -q '\\bottomrule' "$f" || fail "$f is not booktabs"
        grep -q '\\begin{tabular}{l' "$f" && fail "$f has a tabular without p{} columns (it cannot wrap)"
        # A table of many rows must break across pages.
        rows=$(grep -c '\\\\$' "$f")
        if [ "$rows" -gt 30 ]; then
            grep -q '\\begin{longtable}' "$f" || fail "$f: $rows rows in a tabular that cannot break across pages"
        fi
        command -v pdflatex >/dev/null || continue
        mkdir -p "$tmp/tex"
        printf '\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs,longtable,tabularx,array}\n\\begin{document}\n\\input{%s}\n\\end{document}\n' \
            "$f" >"$tmp/tex/$n.tex"
        (cd "$tmp/tex" && pdflatex -interaction=nonstopmode -halt-on-error "$n.tex" >/dev/null 2>&1) ||
            fail "$f does not compile: $(grep -m1 -A2 '^!' "$tmp/tex/$n.log")"
        # Overfull lines by more than 1 pt: the table runs past the text width.
        over=$(grep -o 'Overfull \\hbox ([0-9.]*pt' "$tmp/tex/$n.log" | grep -o '[0-9.]*' |
               awk '$1 > 1 {n++} END {print n + 0}')
        [ "$over" -eq 0 ] || fail "$f: $over lines wider than the text: $(grep -m1 -A1 'Overfull' "$tmp/tex/$n.log")"
    done
}

run="$tmp/run"
cp -r tests/fixtures/render_run "$run"
python3 - "$run/parity.json" <<'PY'
import json, sys
probs = [{"id": "L1_003_softmax", "fp32_ratio": 1.2, "tf32_ratio": 1.01,
          "exception": "known: softmax reads its row twice, once for the maximum and once for the sum of "
                       "exponentials, where PyTorch's kernel reads it once; slower than PyTorch: fp32 ratio 1.200"}]
json.dump({"gpu": "NVIDIA H200", "torch": "2.11.0", "cuda": "13.0", "samples": 20, "problems": probs},
          open(sys.argv[1], "w"))
PY
"$build/kbv-analyze" --parity-only "$run" 2>"$tmp/log" || fail "analyze --parity-only failed: $(cat "$tmp/log")"
"$build/kbv-render" "$run" 2>"$tmp/log" || fail "render failed: $(cat "$tmp/log")"
check_run "$run"

# A run with a BF16 set: its tables (headline_bf16, fast_p_bf16) too.
python3 scripts/synth_run.py --out "$tmp/bf16" --problems 8 --sets 1 --bf16-sets 1 --samples 31 2>/dev/null ||
    fail "synth_run.py --bf16-sets 1"
"$build/kbv-analyze" "$tmp/bf16" 2>"$tmp/log" && "$build/kbv-render" "$tmp/bf16" 2>"$tmp/log" ||
    fail "report of a run with a BF16 set failed: $(cat "$tmp/log")"
[ -s "$tmp/bf16/report/tables/headline_bf16.tex" ] || fail "no headline_bf16.tex"
check_run "$tmp/bf16"

snap=$(ls -d data/snapshots/*/ 2>/dev/null | LC_ALL=C sort | tail -1)
if [ -n "$snap" ]; then
    cp -r "$snap" "$tmp/snap"
    "$build/kbv" report "$tmp/snap" 2>"$tmp/log" || fail "report of $snap failed: $(cat "$tmp/log")"
    check_run "$tmp/snap"
fi
command -v pdflatex >/dev/null || echo "render_tables: pdflatex not found: .tex files checked for structure only"
exit 0

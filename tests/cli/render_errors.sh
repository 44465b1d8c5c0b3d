#!/usr/bin/env bash
# kbv-render's errors: an unknown placeholder, malformed JSON in a template
# or the style, a missing analysis.json and bad usage exit 2 with a message
# "kbv: render: ..." naming the file (and the placeholder), write nothing,
# and leave an earlier report untouched.  --help and --version exit 0.
# usage: tests/cli/render_errors.sh BUILD_DIR
set -u
# The environment must not steer the date; the templates are this
# checkout's, wherever the build folder is.
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
render="$build/kbv-render"
fail() { echo "render_errors: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-render-err.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# expect STATUS NEEDLE... -- ARGS: runs kbv-render ARGS, checks the exit
# status and that stderr holds every needle.
expect() {
    local want=$1; shift
    local needles=()
    while [ "$1" != "--" ]; do needles+=("$1"); shift; done
    shift
    "$render" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || fail "kbv-render $* exited $rc, not $want: $(cat "$tmp/err")"
    for n in "${needles[@]}"; do
        grep -qF -- "$n" "$tmp/err" || fail "kbv-render $*: stderr lacks '$n': $(cat "$tmp/err")"
    done
}

run="$tmp/run"
cp -r tests/fixtures/render_run "$run"

# Unknown placeholder in a caption: exit 2, named with its file; nothing written.
sed 's/{{n_findings}} findings/{{n_findingz}} findings/' templates/report.json >"$tmp/bad_placeholder.json"
grep -q n_findingz "$tmp/bad_placeholder.json" || fail "could not make the bad template"
expect 2 "kbv: render:" "{{n_findingz}}" "$tmp/bad_placeholder.json" "sections[hacks].caption" -- "$run" --template "$tmp/bad_placeholder.json"
[ "$(cd "$run" && ls -A | sort | tr '\n' ' ')" = "analysis.json manifest.json " ] || fail "a failed render wrote files: $(ls -A "$run")"

# Malformed JSON: the file is named.
head -c 200 templates/report.json >"$tmp/truncated.json"
expect 2 "kbv: render:" "$tmp/truncated.json" -- "$run" --template "$tmp/truncated.json"
sed 's/"small": 7,/"small": 7/' templates/style.json >"$tmp/bad_style.json"
expect 2 "$tmp/bad_style.json" -- "$run" --style "$tmp/bad_style.json"
expect 2 "/nonexistent/report.json" -- "$run" --template /nonexistent/report.json

# An earlier report survives a failed render unchanged.
"$render" "$run" 2>/dev/null || fail "the good render failed"
cp "$run/report/report.pdf" "$tmp/before.pdf"
expect 2 "{{n_findingz}}" -- "$run" --template "$tmp/bad_placeholder.json"
cmp -s "$run/report/report.pdf" "$tmp/before.pdf" || fail "a failed render changed the old report"
[ "$(cd "$run" && ls -A | sort | tr '\n' ' ')" = "analysis.json manifest.json report " ] || fail "temporaries left: $(ls -A "$run")"

# Input and usage errors.
mkdir -p "$tmp/empty"
expect 2 "analysis.json" -- "$tmp/empty"
echo '{"schema": "kbv-analysis/1", "run_id": "x"' >"$tmp/empty/analysis.json"
expect 2 "analysis.json" -- "$tmp/empty"
expect 2 "RUN_DIR" --
expect 2 "--frobnicate" -- "$run" --frobnicate
expect 2 "extra" -- "$run" "$run"
expect 2 "--template" -- "$run" --template
SOURCE_DATE_EPOCH=yesterday "$render" "$run" >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] && grep -q SOURCE_DATE_EPOCH "$tmp/err" ||
    fail "a bad SOURCE_DATE_EPOCH is not a usage error: $(cat "$tmp/err")"
# Default templates: $KBV_TEMPLATES wins; without it and with no templates
# beside the program, the message says where it looked.
mkdir -p "$tmp/tpl"
sed 's/"title": "Do the candidate kernels beat the fast baseline?"/"title": "Templates from KBV_TEMPLATES"/' \
    templates/report.json >"$tmp/tpl/report.json"
cp templates/style.json "$tmp/tpl/"
KBV_TEMPLATES="$tmp/tpl" "$render" "$run" 2>"$tmp/err" || fail "KBV_TEMPLATES render: $(cat "$tmp/err")"
pdftotext "$run/report/report.pdf" - | grep -q "Templates from KBV_TEMPLATES" || fail "KBV_TEMPLATES was not used"
mkdir -p "$tmp/elsewhere/bin"
cp "$render" "$tmp/elsewhere/bin/kbv-render"
KBV_TEMPLATES= "$tmp/elsewhere/bin/kbv-render" "$run" >/dev/null 2>"$tmp/err"; rc=$?
if [ ! -f /usr/local/share/kbv/templates/report.json ]; then
    [ $rc -eq 2 ] && grep -q "report.json template not found in $tmp/elsewhere/bin/../templates" "$tmp/err" ||
        fail "a missing template is not named (exit $rc): $(cat "$tmp/err")"
fi

"$render" --help >"$tmp/out" 2>&1 || fail "--help exited $?"
grep -q "usage: kbv-render RUN_DIR" "$tmp/out" || fail "--help does not show usage"
"$render" --version >"$tmp/out" 2>&1 || fail "--version exited $?"
grep -q "kbv-render (kbv)" "$tmp/out" || fail "--version: $(cat "$tmp/out")"
exit 0

#!/usr/bin/env bash
# The reports of tests/fixtures/render_run and render_run_bf16 are byte for
# byte the golden ones (tests/fixtures/render_golden/SHA256SUMS and
# SHA256SUMS.bf16), so that an archived run renders
# the same years later.  The bytes also depend on Cairo, libharu, FreeType,
# zlib and the fonts; where their versions differ from the recorded ones the
# comparison is skipped (and said so), the other tests still run.  After a
# deliberate change: tests/fixtures/render_golden/update.sh build
# usage: tests/cli/render_golden.sh BUILD_DIR
set -u
# The environment must not steer the date; the templates are this
# checkout's, wherever the build folder is.
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
here=tests/fixtures/render_golden
fail() { echo "render_golden: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-render-golden.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if ! sh "$here/versions.sh" 2>/dev/null | cmp -s - "$here/versions.txt"; then
    echo "render_golden: skipped: libraries or fonts differ from $here/versions.txt"
    exit 0
fi
# The FP32 fixture, and one with a BF16 set beside FP32 sets (issue 17).
for fx in render_run:SHA256SUMS render_run_bf16:SHA256SUMS.bf16; do
    run=${fx%%:*} sums=${fx#*:}
    cp -r "tests/fixtures/$run" "$tmp/$run"
    "$build/kbv-render" "$tmp/$run" 2>"$tmp/err" || fail "$run: render failed: $(cat "$tmp/err")"
    (cd "$tmp/$run/report" && sha256sum --quiet -c "$OLDPWD/$here/$sums") >"$tmp/sums" 2>&1 ||
        fail "$run: report differs from the golden one: $(head -5 "$tmp/sums" | tr '\n' ' ') (after a deliberate change run $here/update.sh)"
    n=$(cd "$tmp/$run/report" && find . -type f | wc -l)
    [ "$n" -eq "$(wc -l <"$here/$sums")" ] || fail "$run: report has $n files, the golden one $(wc -l <"$here/$sums")"
done
exit 0
